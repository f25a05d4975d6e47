/*
 * gcal_double.c - a local stand-in for Google's OAuth 2.0 token endpoint and
 * the Calendar API's events.insert, events.delete and events.patch,
 * for the tests of the Google Calendar adapter (tests/api/test_calendar_event.c,
 * test_calendar_failures.c, test_cambios.c).
 *
 * It is as strict as Google about what it is sent, and stricter where the
 * contract fixes more than Google does: the token request must be a
 * form-encoded JWT-bearer grant whose RS256 assertion verifies with the
 * public key given on the command line and carries exactly the expected
 * claims (with --subject, also "sub" naming that user; without, no "sub"
 * at all); an event must come with a token this double issued (and that
 * has not expired: expires_in is kept), as JSON with
 * exactly the members the contract names (or the same without attendees),
 * to a calendar id that is percent-encoded in the raw request line. Every
 * request is appended to the log file as one JSON line (method, raw URI,
 * decoded path, headers of interest, body, verdict, status), so a test
 * asserts on exactly what went over the wire. Failure modes are switched at
 * run time:
 *
 *   POST /control?mode=ok|500|garbage|truncated|hang|forbidden|noaccess|noid|huge
 *                      [&target=events|token]
 *        garbage: a 200 of HTML; truncated: a 200 "application/json" whose
 *          JSON stops half-way.
 *        forbidden (events): an ordinary service account without domain-wide
 *          delegation. An event with attendees gets Google's real 403
 *          (reason forbiddenForServiceAccounts) unless its token was issued
 *          for an assertion with "sub" (delegation); one without attendees
 *          is created as usual.
 *        noaccess (events): every request gets Google's 403 for a calendar
 *          shared read-only (reason requiredAccessLevel).
 *        forbidden or noaccess (token): 400 invalid_grant.
 *   POST /control?revoke=1        every token issued so far stops working
 *   POST /control?delay_ms=N      events are answered after N ms
 *   POST /control?token_delay_ms=N  tokens are answered after N ms
 *   POST /control?expires_in=N    lifetime of the tokens issued from now on
 *   POST /control?reset=1         modes ok, no delays, tokens last 3600 s
 *   POST /control?fail=N&status=S the next N event requests (once their token
 *                                 is checked) get S: 429 or 403 Google's rate
 *                                 limit (reason rateLimitExceeded), a 5xx its
 *                                 backendError; nothing is done
 *   POST /control?drop=ID         the event ID is deleted, as by someone in
 *                                 Google Calendar's own pages
 *
 * Usage: gcal_double --public-key PEM --client-email E --log FILE
 *                    [--calendar-id ID] [--subject USER] [--port N]
 * --subject: the account has domain-wide delegation and acts for USER;
 * every assertion must carry "sub": USER. Without it, an assertion with a
 * "sub" is refused as Google refuses it for an account without delegation.
 * It listens on 127.0.0.1 on --port (default: an ephemeral port; a test that
 * stops the double and starts it again on the same port plays a Google that
 * was down and came back), prints "port N" on stdout,
 * and stops promptly on SIGTERM or SIGINT, even with requests hanging.
 */
#define _GNU_SOURCE
#include "gcal_double/gcal_double.h"
#include "util/buf.h"
#include "util/iso8601.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct state S;

/* --- control --------------------------------------------------------------------------- */

static void on_control(struct MHD_Connection *conn, struct reply *r)
{
    const char *mode = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "mode");
    const char *target = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "target");
    const char *revoke = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "revoke");
    const char *delay = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "delay_ms");
    const char *ttl = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "expires_in");
    const char *tdelay = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token_delay_ms");
    const char *reset = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "reset");
    const char *drop = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "drop");
    const char *fail = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "fail");
    const char *fstatus = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "status");
    static const char *const modes[] = {"ok",        "500",      "garbage", "truncated", "hang",
                                        "forbidden", "noaccess", "noid",    "huge"};
    bool known = !mode;
    for (size_t i = 0; mode && i < ARRAY_LEN(modes); i++)
        known = known || !strcmp(mode, modes[i]);
    if (!known || (target && strcmp(target, "events") && strcmp(target, "token"))) {
        reply_set(r, 400, json_pack("{s:s}", "error", "unknown mode or target"), "bad control");
        return;
    }
    pthread_mutex_lock(&S.lock);
    if (reset) {
        snprintf(S.events_mode, sizeof S.events_mode, "ok");
        snprintf(S.token_mode, sizeof S.token_mode, "ok");
        S.delay_ms = S.token_delay_ms = 0;
        S.fail_left = 0;
        S.expires_in = 3600;
    }
    if (fail) {
        S.fail_left = (int)strtol(fail, NULL, 10);
        S.fail_status = fstatus ? (unsigned)strtoul(fstatus, NULL, 10) : 503;
    }
    if (mode)
        snprintf(target && !strcmp(target, "token") ? S.token_mode : S.events_mode,
                 sizeof S.token_mode, "%s", mode);
    if (revoke) {
        for (size_t i = 0; i < S.ntokens; i++)
            free(S.tokens[i].text);
        S.ntokens = 0;
    }
    if (delay) S.delay_ms = (int)strtol(delay, NULL, 10);
    if (tdelay) S.token_delay_ms = (int)strtol(tdelay, NULL, 10);
    if (ttl) S.expires_in = strtol(ttl, NULL, 10);
    for (size_t i = 0; drop && i < S.nevents; i++)
        if (!strcmp(S.events[i].id, drop)) S.events[i].deleted = true;
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

static void log_request(struct MHD_Connection *conn, const char *method, const char *path,
                        const struct req *q, struct reply *r)
{
    json_t *line = r->extra;
    r->extra = NULL;
    static const char *const headers[][2] = {{"content_type", "Content-Type"},
                                             {"authorization", "Authorization"},
                                             {"accept", "Accept"},
                                             {"expect", "Expect"},
                                             {"user_agent", "User-Agent"}};
    for (size_t i = 0; i < ARRAY_LEN(headers); i++) {
        const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, headers[i][1]);
        json_object_set_new(line, headers[i][0], v ? json_string(v) : json_null());
    }
    json_object_set_new(line, "method", json_string(method));
    json_object_set_new(line, "uri", json_string(q->raw_uri));
    json_object_set_new(line, "path", json_string(path));
    json_t *body = json_stringn(q->body.p ? q->body.p : "", q->body.len);
    json_object_set_new(line, "body", body ? body : json_string("(not UTF-8)"));
    json_object_set_new(line, "verdict", json_string(r->verdict ? r->verdict : "?"));
    json_object_set_new(line, "status", r->hang ? json_null() : json_integer(r->status));
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
        /* headers only: ask for the body */
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
        reply_set(&r, 413, json_pack("{s:s}", "error", "body too large"), "body too large");
    else if (control)
        on_control(conn, &r);
    else if (!strcmp(url, "/token"))
        on_token(conn, method, q, &r);
    else if (!strncmp(q->raw_uri, EVENTS_PREFIX, strlen(EVENTS_PREFIX)))
        on_events(conn, method, q, &r);
    else
        reply_set(&r, 404, api_error(404, "notFound", "Not Found", "NOT_FOUND"), "unknown path");
    if (control) {
        json_decref(r.extra);
        r.extra = NULL;
    } else {
        log_request(conn, method, url, q, &r);
    }
    enum MHD_Result ret = MHD_NO;
    if (r.hang) {
        /* never answer: the client's own bound must end the wait */
        pause_ms(HANG_MS);
    } else {
        const char *text = r.body ? r.body : "";
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
        if (resp) {
            if (r.status != 204)
                MHD_add_response_header(resp, "Content-Type",
                                        r.content_type ? r.content_type
                                                       : "application/json; charset=UTF-8");
            ret = MHD_queue_response(conn, r.status, resp);
            MHD_destroy_response(resp);
        }
    }
    free(r.body);
    free(r.verdict);
    json_decref(r.extra);
    return ret;
}

/* --- main ------------------------------------------------------------------------------- */

static int usage(void)
{
    fputs("usage: gcal_double --public-key PEM --client-email E --log FILE [--calendar-id ID]\n"
          "                   [--subject USER] [--port N]\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *pub_path = NULL, *log_path = NULL;
    uint16_t port = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        if (!strcmp(argv[i], "--public-key"))
            pub_path = argv[++i];
        else if (!strcmp(argv[i], "--client-email"))
            S.client_email = argv[++i];
        else if (!strcmp(argv[i], "--log"))
            log_path = argv[++i];
        else if (!strcmp(argv[i], "--calendar-id"))
            S.calendar_id = argv[++i];
        else if (!strcmp(argv[i], "--subject"))
            S.subject = argv[++i];
        else if (!strcmp(argv[i], "--port"))
            port = (uint16_t)strtoul(argv[++i], NULL, 10);
        else
            return usage();
    }
    if (!pub_path || !S.client_email || !log_path) return usage();
    if (sodium_init() < 0) {
        fputs("gcal_double: libsodium failed to initialise\n", stderr);
        return 1;
    }
    FILE *pf = fopen(pub_path, "r");
    S.pub = pf ? PEM_read_PUBKEY(pf, NULL, NULL, NULL) : NULL;
    if (pf) fclose(pf);
    if (!S.pub) {
        fprintf(stderr, "gcal_double: cannot read a public key from %s\n", pub_path);
        return 1;
    }
    S.log = fopen(log_path, "a");
    if (!S.log) {
        fprintf(stderr, "gcal_double: cannot open %s: %s\n", log_path, strerror(errno));
        EVP_PKEY_free(S.pub);
        return 1;
    }
    pthread_mutex_init(&S.lock, NULL);
    pthread_cond_init(&S.wake, NULL);
    snprintf(S.events_mode, sizeof S.events_mode, "ok");
    snprintf(S.token_mode, sizeof S.token_mode, "ok");
    S.expires_in = 3600;

    /* SIGTERM and SIGINT are taken by sigwait() below; MHD's threads
     * inherit the mask */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ITC | MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    int rc = 0;
    if (!info || !info->port) {
        fputs("gcal_double: cannot listen on 127.0.0.1\n", stderr);
        rc = 1;
    } else {
        snprintf(S.token_url, sizeof S.token_url, "http://127.0.0.1:%u/token",
                 (unsigned)info->port);
        printf("port %u\n", (unsigned)info->port);
        fflush(stdout);
        int sig = 0;
        sigwait(&stop, &sig);
    }
    pthread_mutex_lock(&S.lock);
    S.stopping = true;
    pthread_cond_broadcast(&S.wake);
    pthread_mutex_unlock(&S.lock);
    if (d) MHD_stop_daemon(d);
    for (size_t i = 0; i < S.ntokens; i++)
        free(S.tokens[i].text);
    free(S.tokens);
    for (size_t i = 0; i < S.nevents; i++)
        free(S.events[i].id);
    free(S.events);
    fclose(S.log);
    EVP_PKEY_free(S.pub);
    pthread_cond_destroy(&S.wake);
    pthread_mutex_destroy(&S.lock);
    return rc;
}
