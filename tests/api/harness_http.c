/*
 * harness_http.c - HTTP to a server: requests and uploads through libcurl, raw bytes
 * over a socket, and loopback listeners that never answer (see harness.h).
 */
#define _GNU_SOURCE
#include "harness_internal.h"
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    signal(SIGPIPE, SIG_IGN);
}

void harness_curl_once(void)
{
    pthread_once(&curl_once, curl_init);
}

/* --- HTTP ------------------------------------------------------------------------------ */

struct sink {
    char *p;
    size_t n, cap;
};

/* Appends a chunk, the room doubling as it grows: a realloc per chunk
 * copies a large answer over and over (quadratic; under AddressSanitizer,
 * whose realloc always moves, a 20 MB listing took minutes). */
static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct sink *s = ud;
    size_t k = size * nmemb;
    if (s->n + k + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->n + k + 1)
            cap *= 2;
        char *p = realloc(s->p, cap);
        if (!p) return 0;
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->n, ptr, k);
    s->n += k;
    s->p[s->n] = '\0';
    return k;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct sink *s = ud;
    size_t k = size * nmemb;
    /* a new status line starts a new header block (after 100 Continue) */
    if (k > 5 && !strncmp(ptr, "HTTP/", 5)) s->n = 0;
    return on_data(ptr, size, nmemb, ud);
}

void resp_free(struct resp *r)
{
    free(r->body);
    free(r->headers);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

const char *resp_header(const struct resp *r, const char *name, char *buf, size_t n)
{
    const char *found = NULL;
    size_t nl = strlen(name);
    for (const char *line = r->headers; line && *line;) {
        const char *end = strstr(line, "\r\n");
        if (!end) end = line + strlen(line);
        if ((size_t)(end - line) > nl && !strncasecmp(line, name, nl) && line[nl] == ':')
            found = line;
        line = *end ? end + 2 : end;
    }
    if (!found) return NULL;
    const char *v = found + nl + 1;
    while (*v == ' ')
        v++;
    size_t len = strcspn(v, "\r\n");
    if (len >= n) len = n - 1;
    memcpy(buf, v, len);
    buf[len] = '\0';
    return buf;
}

/* Runs the transfer and fills r; never asserts (any thread may call it).
 * Takes c and hdrs. A transport failure leaves r->status 0 and r->body
 * "curl: <reason>". */
static CURLcode perform_try(CURL *c, struct resp *r, struct curl_slist *hdrs)
{
    struct sink body = {0}, head = {0};
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &head);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    CURLcode cc = curl_easy_perform(c);
    memset(r, 0, sizeof *r);
    if (cc != CURLE_OK) {
        free(body.p);
        free(head.p);
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(c);
        if (asprintf(&r->body, "curl: %s", curl_easy_strerror(cc)) < 0) r->body = NULL;
        r->len = r->body ? strlen(r->body) : 0;
        r->headers = strdup("");
        return cc;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    r->body = body.p ? body.p : strdup("");
    r->len = body.n;
    r->headers = head.p ? head.p : strdup("");
    r->json = json_loadb(r->body, r->len, 0, NULL);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    return CURLE_OK;
}

/* perform_try for the test's own thread: a transport failure fails the test. */
static void perform(CURL *c, struct resp *r, struct curl_slist *hdrs)
{
    if (perform_try(c, r, hdrs) != CURLE_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", r->body ? r->body : "curl: ?");
        resp_free(r);
        fail_msg("HTTP request failed: %s", why);
    }
}

/* The handle and header list of a request (both taken by perform*). */
static CURL *req_prepare(const struct srv *s, const char *method, const char *path,
                         const struct req_opts *o, struct curl_slist **hdrs)
{
    pthread_once(&curl_once, curl_init);
    CURL *c = curl_easy_init();
    char url[2048];
    snprintf(url, sizeof url, "%s%s", s->base, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (!strcmp(method, "HEAD")) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    struct curl_slist *h = NULL;
    char line[512];
    if (o && o->token) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", o->token);
        h = curl_slist_append(h, line);
    }
    if (o && o->cookie) {
        snprintf(line, sizeof line, "Cookie: %s", o->cookie);
        h = curl_slist_append(h, line);
    }
    if (o && o->body) {
        snprintf(line, sizeof line, "Content-Type: %s",
                 o->content_type ? o->content_type : "application/json");
        h = curl_slist_append(h, line);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, o->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)(o->len ? o->len : strlen(o->body)));
    }
    for (const char *const *x = o ? o->headers : NULL; x && *x; x++)
        h = curl_slist_append(h, *x);
    *hdrs = h;
    return c;
}

void http_req(const struct srv *s, const char *method, const char *path, const struct req_opts *o,
              struct resp *r)
{
    struct curl_slist *h = NULL;
    CURL *c = req_prepare(s, method, path, o, &h);
    perform(c, r, h);
}

long http_try(const struct srv *s, const char *method, const char *path, const struct req_opts *o,
              struct resp *r)
{
    struct curl_slist *h = NULL;
    CURL *c = req_prepare(s, method, path, o, &h);
    perform_try(c, r, h);
    return r->status;
}

void http_get(const struct srv *s, const char *path, const char *token, struct resp *r)
{
    struct req_opts o = {.token = token};
    http_req(s, "GET", path, &o, r);
}

void http_json(const struct srv *s, const char *method, const char *path, const char *token,
               const char *json, struct resp *r)
{
    struct req_opts o = {.token = token, .body = json};
    http_req(s, method, path, &o, r);
}

/* The handle and MIME body of an upload (see http_multipart). */
static CURL *multipart_prepare(const struct srv *s, const char *path, const char *token,
                               const struct part *parts, size_t n, curl_mime **out,
                               struct curl_slist **hdrs)
{
    pthread_once(&curl_once, curl_init);
    CURL *c = curl_easy_init();
    char url[2048];
    snprintf(url, sizeof url, "%s%s", s->base, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_mime *mime = curl_mime_init(c);
    for (size_t i = 0; i < n; i++) {
        curl_mimepart *p = curl_mime_addpart(mime);
        curl_mime_name(p, parts[i].name);
        size_t len = parts[i].len ? parts[i].len : strlen(parts[i].data);
        curl_mime_data(p, parts[i].data, len);
        if (parts[i].filename) curl_mime_filename(p, parts[i].filename);
        if (parts[i].type) curl_mime_type(p, parts[i].type);
    }
    curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
    struct curl_slist *h = NULL;
    char line[512];
    if (token) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, line);
    }
    *out = mime;
    *hdrs = h;
    return c;
}

void http_multipart(const struct srv *s, const char *path, const char *token,
                    const struct part *parts, size_t n, struct resp *r)
{
    curl_mime *mime = NULL;
    struct curl_slist *h = NULL;
    CURL *c = multipart_prepare(s, path, token, parts, n, &mime, &h);
    CURLcode cc = perform_try(c, r, h);
    curl_mime_free(mime);
    if (cc != CURLE_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", r->body ? r->body : "curl: ?");
        resp_free(r);
        fail_msg("HTTP request failed: %s", why);
    }
}

long http_multipart_try(const struct srv *s, const char *path, const char *token,
                        const struct part *parts, size_t n, struct resp *r)
{
    curl_mime *mime = NULL;
    struct curl_slist *h = NULL;
    CURL *c = multipart_prepare(s, path, token, parts, n, &mime, &h);
    perform_try(c, r, h);
    curl_mime_free(mime);
    return r->status;
}

void expect_healthy(const struct srv *s)
{
    struct resp r;
    http_get(s, "/healthz", NULL, &r);
    if (r.status != 200) fail_msg("/healthz answered %ld: %s", r.status, r.body);
    resp_free(&r);
}

void expect_header(const struct resp *r, const char *name, const char *value)
{
    char h[512];
    const char *got = resp_header(r, name, h, sizeof h);
    if (!got || strcmp(got, value) != 0)
        fail_msg("header %s: expected \"%s\", got %s%s%s", name, value, got ? "\"" : "",
                 got ? got : "none", got ? "\"" : "");
}

void expect_error(const struct resp *r, long status, const char *msg)
{
    if (r->status != status)
        fail_msg("expected status %ld, got %ld: %s", status, r->status, r->body);
    if (!msg) return;
    if (!r->json) fail_msg("expected a JSON error body, got: %s", r->body);
    const char *got = jstr(r->json, "error");
    if (!got || strcmp(got, msg) != 0) fail_msg("expected error \"%s\", got: %s", msg, r->body);
    if (json_object_size(r->json) != 1) fail_msg("error body has extra members: %s", r->body);
}

/* --- raw HTTP ---------------------------------------------------------------------------- */

int raw_open(const struct srv *s, int timeout_ms)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail_msg("socket: %s", strerror(errno));
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)s->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        fail_msg("connect to port %d: %s", s->port, strerror(e));
    }
    struct timeval tv = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

void raw_send(int fd, const void *bytes, size_t len)
{
    const char *p = bytes;
    while (len) {
        ssize_t k = send(fd, p, len, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break; /* the server hung up (or stopped reading): read its answer */
        p += k;
        len -= (size_t)k;
    }
}

long raw_reply(int fd, char **reply)
{
    if (reply) *reply = NULL;
    struct sink in = {0};
    char chunk[16384];
    for (;;) {
        ssize_t k = recv(fd, chunk, sizeof chunk, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        on_data(chunk, 1, (size_t)k, &in);
    }
    close(fd);
    char *text = in.p ? in.p : strdup("");
    long status = 0;
    if (!strncmp(text, "HTTP/1.", 7) && strlen(text) > 12) status = strtol(text + 9, NULL, 10);
    if (reply)
        *reply = text;
    else
        free(text);
    return status;
}

long raw_http(const struct srv *s, const void *req, size_t len, int timeout_ms, char **reply)
{
    int fd = raw_open(s, timeout_ms);
    raw_send(fd, req, len);
    return raw_reply(fd, reply);
}

const char *raw_body(const char *reply)
{
    const char *b = reply ? strstr(reply, "\r\n\r\n") : NULL;
    return b ? b + 4 : "";
}

/* --- loopback listeners ---------------------------------------------------------------------- */

/* A bound loopback TCP socket on an ephemeral port. OUT: *port. */
static int loopback_socket(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        fail_msg("cannot bind a loopback port: %s", strerror(errno));
    *port = ntohs(a.sin_port);
    return fd;
}

int free_port(void)
{
    int port = 0;
    close(loopback_socket(&port));
    return port;
}

int silent_listener(int *port)
{
    int fd = loopback_socket(port);
    /* a deep backlog: every connection made to it is kept, never accepted */
    if (listen(fd, 512) != 0) fail_msg("listen: %s", strerror(errno));
    return fd;
}
