/*
 * wa_double.c - a local stand-in for the WhatsApp Business Cloud API
 * (Meta's Graph API: POST /v21.0/{phone-number-id}/messages) and for the
 * webhook deliveries Meta makes, for tests/api/test_whatsapp_envio.c and
 * test_whatsapp_avisos.c.
 *
 * It is as strict as the Graph API about what it is sent, and stricter
 * where the service's contract fixes more: the Authorization header must
 * be "Bearer <the token given>" (else 401, OAuthException code 190, as for
 * an expired or wrong token); the phone-number id in the path must be the
 * one given (else 400, code 100, subcode 33); the body must be JSON of
 * exactly a template message - messaging_product "whatsapp", "to" of 8 to
 * 15 digits only, type "template", template {name, language {code},
 * components [{type "body", parameters [{type "text", text}...]}]} - and
 * nothing else (400, code 100 "Invalid parameter"); the template must be
 * one registered with --template NAME:PARAMS[:CHARS] in the language given
 * (404, code 132001), with that many non-empty parameters that hold no
 * line break or tab and no run of more than four spaces (400, code 132000
 * / 131008), and whose text with them - CHARS characters of its own,
 * default 130, as the suggested bodies of docs/operations.md, plus the
 * parameters' - is at most 1,024 characters (400, code 132005). More than
 * --rate messages in one second get 429, code 130429.
 * A good message gets 200 {"messaging_product", "contacts", "messages":
 * [{"id": "wamid...."}]}. Every request is appended to the log file as one
 * JSON line (method, uri, authorization, body, verdict, status, wamid), so
 * a test asserts on exactly what went over the wire.
 *
 *   POST /control?fail=N&status=S&code=C[&quote=1]   the next N messages
 *        get HTTP S with the Graph API's error object of code C (e.g. 500 /
 *        131000, 429 / 130429, 400 / 131026); with quote=1 its message
 *        quotes the last parameter the message was sent ("Invalid
 *        parameter: <text>"), as an error about a parameter may
 *   POST /control?reset=1                  no failures pending, no hold
 *   POST /control?hold=MS                  every message is answered MS
 *        milliseconds after it was judged and logged (0: at once), as a slow
 *        network leaves a sent message unanswered for a while
 *   POST /control?deliver=WAMID&status=ST&url=U[&secret=wrong][&code=C]
 *        posts to U the webhook delivery Meta would for that message's
 *        status ST (sent, delivered, read, failed with error code C),
 *        signed in X-Hub-Signature-256 with the app secret (or with another
 *        secret when secret=wrong), and answers {"status": U's HTTP status}
 *
 * Usage: wa_double --token T --phone-id ID --app-secret S --log FILE
 *                  --template NAME:PARAMS[:CHARS]... [--language es] [--rate N]
 * It listens on 127.0.0.1 on an ephemeral port, prints "port N" on stdout,
 * and stops promptly on SIGTERM or SIGINT.
 */
#define _GNU_SOURCE
#include "util/buf.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define BODY_MAX      (1024 * 1024)
#define VERSION       "/v21.0/"
#define TEMPLATES_MAX 16
#define SENT_MAX      4096

struct tpl {
    const char *name;
    int params;
    long chars; /* the body's own text, without its parameters */
};

struct sent {
    char wamid[64];
    char to[32];
};

struct state {
    pthread_mutex_t lock;
    const char *token, *phone_id, *secret, *language;
    struct tpl tpl[TEMPLATES_MAX];
    int ntpl;
    int rate;
    FILE *log;
    unsigned long seq;
    int fail_left, fail_status;
    long long fail_code;
    bool fail_quote;
    long hold_ms; /* each message's answer waits this long after its log line */
    time_t window;
    int in_window;
    struct sent sent[SENT_MAX];
    int nsent;
};

struct req {
    char *raw_uri;
    bool started;
    struct buf body;
    bool too_large;
};

struct reply {
    unsigned status;
    char *body;
    char *verdict;
    json_t *extra;
};

static struct state S;

static void reply_set(struct reply *r, unsigned status, json_t *body, const char *verdict)
{
    r->status = status;
    free(r->body);
    r->body = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    free(r->verdict);
    r->verdict = xstrdup(verdict);
}

/* The Graph API's error object. */
static json_t *graph_error(const char *message, const char *type, long long code, long long sub)
{
    char trace[24];
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for (int i = 0; i < 23; i++)
        trace[i] = alphabet[randombytes_uniform(sizeof alphabet - 1)];
    trace[23] = '\0';
    json_t *e = json_pack("{s:s, s:s, s:I, s:s}", "message", message, "type", type, "code",
                          (json_int_t)code, "fbtrace_id", trace);
    if (sub) json_object_set_new(e, "error_subcode", json_integer(sub));
    return json_pack("{s:o}", "error", e);
}

static bool exact_members(const json_t *o, const char *const *names, size_t n)
{
    if (!json_is_object(o) || json_object_size(o) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!json_object_get(o, names[i])) return false;
    return true;
}

/* Meta's rules on a body parameter's text. */
static bool param_text_ok(const char *t)
{
    if (!t || !*t || strlen(t) > 1024) return false;
    int spaces = 0;
    for (; *t; t++) {
        if (*t == '\n' || *t == '\t' || *t == '\r') return false;
        spaces = *t == ' ' ? spaces + 1 : 0;
        if (spaces > 4) return false;
    }
    return true;
}

/* Checks a message; NULL when good, else the refusal (status, error). */
static const char *check_message(const json_t *m, unsigned *status, json_t **err)
{
    *status = 400;
    static const char *const top[] = {"messaging_product", "to", "type", "template"};
    static const char *const top_rt[] = {"messaging_product", "recipient_type", "to", "type",
                                         "template"};
    const char *bad = "(#100) Invalid parameter";
    if (!exact_members(m, top, 4) && !exact_members(m, top_rt, 5)) {
        *err = graph_error(bad, "OAuthException", 100, 0);
        return "members of the message";
    }
    const char *mp = json_string_value(json_object_get(m, "messaging_product"));
    const char *to = json_string_value(json_object_get(m, "to"));
    const char *type = json_string_value(json_object_get(m, "type"));
    const char *rt = json_string_value(json_object_get(m, "recipient_type"));
    if (!mp || strcmp(mp, "whatsapp") || !type || strcmp(type, "template") ||
        (json_object_get(m, "recipient_type") && (!rt || strcmp(rt, "individual")))) {
        *err = graph_error(bad, "OAuthException", 100, 0);
        return "messaging_product, type or recipient_type";
    }
    size_t nd = to ? strlen(to) : 0;
    bool digits = nd >= 8 && nd <= 15 && to[0] != '0';
    for (size_t i = 0; digits && i < nd; i++)
        digits = to[i] >= '0' && to[i] <= '9';
    if (!digits) {
        *err = graph_error("(#100) Invalid parameter: to", "OAuthException", 100, 0);
        return "to is not E.164 digits";
    }
    const json_t *t = json_object_get(m, "template");
    static const char *const tm[] = {"name", "language", "components"};
    static const char *const lm[] = {"code"};
    static const char *const cm[] = {"type", "parameters"};
    static const char *const pm[] = {"type", "text"};
    const json_t *lang = json_object_get(t, "language");
    const json_t *comps = json_object_get(t, "components");
    if (!exact_members(t, tm, 3) || !exact_members(lang, lm, 1) || !json_is_array(comps) ||
        json_array_size(comps) != 1 || !exact_members(json_array_get(comps, 0), cm, 2)) {
        *err = graph_error(bad, "OAuthException", 100, 0);
        return "shape of the template";
    }
    const json_t *comp = json_array_get(comps, 0);
    const char *ctype = json_string_value(json_object_get(comp, "type"));
    const json_t *params = json_object_get(comp, "parameters");
    if (!ctype || strcmp(ctype, "body") || !json_is_array(params)) {
        *err = graph_error(bad, "OAuthException", 100, 0);
        return "component is not a body with parameters";
    }
    const char *name = json_string_value(json_object_get(t, "name"));
    const char *code = json_string_value(json_object_get(lang, "code"));
    const struct tpl *found = NULL;
    for (int i = 0; name && i < S.ntpl; i++)
        if (!strcmp(S.tpl[i].name, name)) found = &S.tpl[i];
    if (!found || !code || strcmp(code, S.language)) {
        *status = 404;
        *err = graph_error("(#132001) Template name does not exist in the translation",
                           "OAuthException", 132001, 2494073);
        return "unknown template or language";
    }
    if ((int)json_array_size(params) != found->params) {
        *err = graph_error("(#132000) Number of parameters does not match the expected number of "
                           "params",
                           "OAuthException", 132000, 2494002);
        return "number of parameters";
    }
    size_t i;
    const json_t *p;
    long chars = found->chars;
    json_array_foreach(params, i, p)
    {
        const char *pt = json_string_value(json_object_get(p, "type"));
        const char *text = json_string_value(json_object_get(p, "text"));
        if (!exact_members(p, pm, 2) || !pt || strcmp(pt, "text") || !param_text_ok(text)) {
            *err = graph_error("(#131008) Required parameter is missing or invalid",
                               "OAuthException", 131008, 0);
            return "a parameter";
        }
        for (; *text; text++)
            chars += ((unsigned char)*text & 0xC0) != 0x80;
    }
    if (chars > 1024) {
        *err = graph_error("(#132005) Translated text too long", "OAuthException", 132005, 0);
        return "text too long";
    }
    return NULL;
}

static void on_messages(struct MHD_Connection *conn, const char *method, const char *path,
                        struct req *q, struct reply *r)
{
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    char want[600];
    snprintf(want, sizeof want, "Bearer %s", S.token);
    if (!auth || strcmp(auth, want)) {
        reply_set(r, 401,
                  graph_error("Error validating access token: Session has expired.",
                              "OAuthException", 190, 463),
                  "bad token");
        return;
    }
    /* /v21.0/{phone-number-id}/messages */
    const char *id = path + strlen(VERSION);
    const char *slash = strchr(id, '/');
    if (strcmp(method, "POST") || !slash || strcmp(slash, "/messages") ||
        strlen(S.phone_id) != (size_t)(slash - id) ||
        strncmp(id, S.phone_id, (size_t)(slash - id))) {
        reply_set(r, 400,
                  graph_error("Unsupported post request. Object with ID does not exist, cannot be "
                              "loaded due to missing permissions, or does not support this "
                              "operation.",
                              "GraphMethodException", 100, 33),
                  "wrong phone-number id or path");
        return;
    }
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    json_t *m = json_loadb(q->body.p ? q->body.p : "", q->body.len, JSON_REJECT_DUPLICATES, NULL);
    if (!ct || strncasecmp(ct, "application/json", 16) || !m) {
        json_decref(m);
        reply_set(r, 400, graph_error("(#100) Invalid parameter", "OAuthException", 100, 0),
                  "not JSON");
        return;
    }
    unsigned status;
    json_t *err = NULL;
    const char *why = check_message(m, &status, &err);
    if (why) {
        json_decref(m);
        reply_set(r, status, err, why);
        return;
    }
    pthread_mutex_lock(&S.lock);
    time_t now = time(NULL);
    if (now != S.window) {
        S.window = now;
        S.in_window = 0;
    }
    bool limited = S.rate > 0 && ++S.in_window > S.rate;
    bool inject = !limited && S.fail_left > 0;
    int fstatus = S.fail_status;
    long long fcode = S.fail_code;
    bool quote = S.fail_quote;
    if (inject) S.fail_left--;
    pthread_mutex_unlock(&S.lock);
    if (limited) {
        json_decref(m);
        reply_set(r, 429,
                  graph_error("(#130429) Rate limit hit", "OAuthException", 130429, 2494055),
                  "rate limit");
        return;
    }
    if (inject) {
        char said[1200] = "Injected failure";
        if (quote) {
            json_t *ps = json_object_get(
                json_array_get(json_object_get(json_object_get(m, "template"), "components"), 0),
                "parameters");
            const char *last = json_string_value(
                json_object_get(json_array_get(ps, json_array_size(ps) - 1), "text"));
            snprintf(said, sizeof said, "Invalid parameter: %s", last ? last : "");
        }
        json_decref(m);
        reply_set(r, (unsigned)fstatus, graph_error(said, "OAuthException", fcode, 0), "injected");
        return;
    }
    const char *to = json_string_value(json_object_get(m, "to"));
    char wamid[64];
    unsigned char raw[16];
    randombytes_buf(raw, sizeof raw);
    char hex[33];
    sodium_bin2hex(hex, sizeof hex, raw, sizeof raw);
    snprintf(wamid, sizeof wamid, "wamid.%s", hex);
    pthread_mutex_lock(&S.lock);
    if (S.nsent < SENT_MAX) {
        snprintf(S.sent[S.nsent].wamid, sizeof S.sent[0].wamid, "%s", wamid);
        snprintf(S.sent[S.nsent].to, sizeof S.sent[0].to, "%s", to);
        S.nsent++;
    }
    pthread_mutex_unlock(&S.lock);
    reply_set(r, 200,
              json_pack("{s:s, s:[{s:s, s:s}], s:[{s:s}]}", "messaging_product", "whatsapp",
                        "contacts", "input", to, "wa_id", to, "messages", "id", wamid),
              "ok");
    json_object_set_new(r->extra, "wamid", json_string(wamid));
    json_decref(m);
}

/* --- webhook deliveries ---------------------------------------------------------------- */

static size_t sink(char *p, size_t s, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return s * n;
}

static void on_deliver(struct MHD_Connection *conn, struct reply *r)
{
    const char *wamid = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "deliver");
    const char *status = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "status");
    const char *url = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "url");
    const char *secret = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "secret");
    const char *code = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "code");
    if (!status || !url) {
        reply_set(r, 400, json_pack("{s:s}", "error", "deliver needs status and url"), "bad");
        return;
    }
    char to[32] = "0";
    pthread_mutex_lock(&S.lock);
    for (int i = 0; i < S.nsent; i++)
        if (!strcmp(S.sent[i].wamid, wamid)) snprintf(to, sizeof to, "%s", S.sent[i].to);
    pthread_mutex_unlock(&S.lock);
    char ts[24];
    snprintf(ts, sizeof ts, "%lld", (long long)time(NULL));
    json_t *st = json_pack("{s:s, s:s, s:s, s:s}", "id", wamid, "status", status, "timestamp", ts,
                           "recipient_id", to);
    if (strcmp(status, "failed") && strcmp(status, "read"))
        json_object_set_new(
            st, "conversation",
            json_pack("{s:s, s:{s:s}}", "id", "c0ffee", "origin", "type", "utility"));
    if (code)
        json_object_set_new(st, "errors",
                            json_pack("[{s:I, s:s, s:s}]", "code",
                                      (json_int_t)strtoll(code, NULL, 10), "title",
                                      "Message undeliverable", "message", "Message undeliverable"));
    json_t *body = json_pack("{s:s, s:[{s:s, s:[{s:{s:s, s:{s:s, s:s}, s:[o]}, s:s}]}]}", "object",
                             "whatsapp_business_account", "entry", "id", "102290129340398",
                             "changes", "value", "messaging_product", "whatsapp", "metadata",
                             "display_phone_number", "15550783881", "phone_number_id", S.phone_id,
                             "statuses", st, "field", "messages");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    const char *key = secret && !strcmp(secret, "wrong") ? "not-the-app-secret" : S.secret;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)text, strlen(text), mac, &n);
    char hex[2 * EVP_MAX_MD_SIZE + 1], sig[2 * EVP_MAX_MD_SIZE + 32];
    sodium_bin2hex(hex, sizeof hex, mac, n);
    snprintf(sig, sizeof sig, "X-Hub-Signature-256: sha256=%s", hex);
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = curl_slist_append(h, sig);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
    long got = 0;
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &got);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(text);
    reply_set(r, 200, json_pack("{s:i}", "status", (int)got), "ok");
}

static void on_control(struct MHD_Connection *conn, struct reply *r)
{
    if (MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "deliver")) {
        on_deliver(conn, r);
        return;
    }
    const char *fail = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "fail");
    const char *status = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "status");
    const char *code = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "code");
    const char *reset = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "reset");
    const char *quote = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "quote");
    const char *hold = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "hold");
    pthread_mutex_lock(&S.lock);
    if (reset) {
        S.fail_left = 0;
        S.hold_ms = 0;
    }
    if (hold) S.hold_ms = strtol(hold, NULL, 10);
    if (fail) {
        S.fail_left = (int)strtol(fail, NULL, 10);
        S.fail_status = status ? (int)strtol(status, NULL, 10) : 500;
        S.fail_code = code ? strtoll(code, NULL, 10) : 131000;
        S.fail_quote = quote != NULL;
    }
    pthread_mutex_unlock(&S.lock);
    reply_set(r, 200, json_pack("{s:b}", "ok", 1), "ok");
}

/* --- MHD plumbing ------------------------------------------------------------------------ */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    struct req *q = xcalloc(1, sizeof *q);
    q->raw_uri = xstrdup(uri);
    buf_init(&q->body, BODY_MAX);
    return q;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct req *q = *req_cls;
    if (!q) return;
    free(q->raw_uri);
    buf_free(&q->body);
    free(q);
    *req_cls = NULL;
}

static void log_request(struct MHD_Connection *conn, const char *method, const struct req *q,
                        struct reply *r)
{
    json_t *line = r->extra;
    r->extra = NULL;
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    json_object_set_new(line, "authorization", auth ? json_string(auth) : json_null());
    json_object_set_new(line, "content_type", ct ? json_string(ct) : json_null());
    json_object_set_new(line, "method", json_string(method));
    json_object_set_new(line, "uri", json_string(q->raw_uri));
    json_t *body = json_stringn(q->body.p ? q->body.p : "", q->body.len);
    json_object_set_new(line, "body", body ? body : json_string("(not UTF-8)"));
    json_object_set_new(line, "verdict", json_string(r->verdict ? r->verdict : "?"));
    json_object_set_new(line, "status", json_integer(r->status));
    pthread_mutex_lock(&S.lock);
    json_object_set_new(line, "seq", json_integer((json_int_t)++S.seq));
    char *text = json_dumps(line, JSON_COMPACT);
    if (text) {
        fputs(text, S.log);
        fputc('\n', S.log);
        fflush(S.log);
    }
    pthread_mutex_unlock(&S.lock);
    free(text);
    json_decref(line);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **req_cls)
{
    (void)cls;
    (void)version;
    struct req *q = *req_cls;
    if (!q) return MHD_NO;
    if (!q->started) {
        q->started = true;
        return MHD_YES;
    }
    if (*upload_size) {
        if (buf_append(&q->body, upload_data, *upload_size) != BR_OK) q->too_large = true;
        *upload_size = 0;
        return MHD_YES;
    }
    struct reply r = {.extra = json_object()};
    bool control = !strcmp(url, "/control");
    if (q->too_large)
        reply_set(&r, 413, graph_error("Request too large", "OAuthException", 100, 0), "too large");
    else if (control)
        on_control(conn, &r);
    else if (!strncmp(url, VERSION, strlen(VERSION)))
        on_messages(conn, method, url, q, &r);
    else
        reply_set(&r, 400, graph_error("Unknown path components", "OAuthException", 2500, 0),
                  "unknown path");
    if (control) {
        json_decref(r.extra);
        r.extra = NULL;
    } else {
        log_request(conn, method, q, &r);
        pthread_mutex_lock(&S.lock);
        long hold_ms = S.hold_ms;
        pthread_mutex_unlock(&S.lock);
        if (hold_ms > 0) {
            struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
        }
    }
    const char *text = r.body ? r.body : "";
    enum MHD_Result ret = MHD_NO;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    if (resp) {
        MHD_add_response_header(resp, "Content-Type", "application/json; charset=UTF-8");
        ret = MHD_queue_response(conn, r.status, resp);
        MHD_destroy_response(resp);
    }
    free(r.body);
    free(r.verdict);
    json_decref(r.extra);
    return ret;
}

static int usage(void)
{
    fputs("usage: wa_double --token T --phone-id ID --app-secret S --log FILE\n"
          "                 --template NAME:PARAMS[:CHARS]... [--language es] [--rate N]\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *log_path = NULL;
    S.language = "es";
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        const char *a = argv[i], *v = argv[++i];
        if (!strcmp(a, "--token"))
            S.token = v;
        else if (!strcmp(a, "--phone-id"))
            S.phone_id = v;
        else if (!strcmp(a, "--app-secret"))
            S.secret = v;
        else if (!strcmp(a, "--log"))
            log_path = v;
        else if (!strcmp(a, "--language"))
            S.language = v;
        else if (!strcmp(a, "--rate"))
            S.rate = (int)strtol(v, NULL, 10);
        else if (!strcmp(a, "--template") && S.ntpl < TEMPLATES_MAX) {
            char *colon = strchr(v, ':');
            if (!colon) return usage();
            *colon = '\0';
            S.tpl[S.ntpl].name = v;
            char *end;
            S.tpl[S.ntpl].params = (int)strtol(colon + 1, &end, 10);
            S.tpl[S.ntpl].chars = *end == ':' ? strtol(end + 1, NULL, 10) : 130;
            S.ntpl++;
        } else
            return usage();
    }
    if (!S.token || !S.phone_id || !S.secret || !log_path) return usage();
    if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
    S.log = fopen(log_path, "a");
    if (!S.log) {
        fprintf(stderr, "wa_double: cannot open %s: %s\n", log_path, strerror(errno));
        return 1;
    }
    pthread_mutex_init(&S.lock, NULL);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ITC | MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    int rc = 0;
    if (!info || !info->port) {
        fputs("wa_double: cannot listen on 127.0.0.1\n", stderr);
        rc = 1;
    } else {
        printf("port %u\n", (unsigned)info->port);
        fflush(stdout);
        int sig = 0;
        sigwait(&stop, &sig);
    }
    if (d) MHD_stop_daemon(d);
    fclose(S.log);
    pthread_mutex_destroy(&S.lock);
    curl_global_cleanup();
    return rc;
}
