/*
 * fz_server.c - the in-process server and the loopback client of the HTTP
 * fuzz targets (see fz.h).
 */
#define _GNU_SOURCE
#include "fz.h"
#include "api/api.h"
#include "core/photos.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/uuid.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ANSWER_WITHIN_MS 20000 /* a request not answered by then is a hang */
#define SETTLE_MS        2000  /* waiting for the server to read one piece */

extern char **environ;

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static void must(br_err rc, const char *what)
{
    if (rc) fz_fail("%s: %s", what, err_msg());
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* --- the server -------------------------------------------------------------------- */

static struct fz_fixture fx;
static bool started;
static char root[256];
static struct config cfg;
static struct app app;
static struct http_server *srv;
static char *spool, *public_url;
static uint16_t srv_port;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

static void stop_server(void)
{
    http_stop(srv);
    app_close(&app);
    config_free(&cfg);
    free(spool);
    free(public_url);
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Settings come from flags only: BARBERIA_* variables of the caller's
 * environment (a mail server, a calendar) must not reach the target. */
static void clear_settings_env(void)
{
    for (;;) {
        char *name = NULL;
        for (char **e = environ; *e; e++) {
            if (!strncmp(*e, "BARBERIA_", 9)) {
                name = xstrndup(*e, strcspn(*e, "="));
                break;
            }
        }
        if (!name) return;
        unsetenv(name);
        free(name);
    }
}

static void make_user(const char *email, const char *rol, bool session, char *id, char *token)
{
    struct ident_signup in = {email, "secreto-fuzz", "Fuzz", NULL, rol};
    struct ident_session s;
    must(ident_signup(app.ident, &in, session, &s), "fixture signup");
    snprintf(id, 40, "%s", s.user_id);
    if (token) snprintf(token, 64, "%s", s.token);
    ident_session_clear(&s);
}

static void make_fixture(void)
{
    struct barbero b = {.nombre = "Barbero Fuzz"};
    uuid_v4(b.id);
    must(store_barbero_add(app.store, &b), "fixture barbero");
    snprintf(fx.barbero_id, sizeof fx.barbero_id, "%s", b.id);
    struct servicio sv = {.nombre = "Corte Fuzz", .duracion_min = 30, .precio = 15.0};
    uuid_v4(sv.id);
    must(store_servicio_add(app.store, &sv), "fixture servicio");
    snprintf(fx.servicio_id, sizeof fx.servicio_id, "%s", sv.id);

    snprintf(fx.email, sizeof fx.email, "fz-client@fuzz.example");
    snprintf(fx.password, sizeof fx.password, "secreto-fuzz");
    make_user(fx.email, NULL, true, fx.client_id, fx.token);
    char admin_id[40];
    make_user("fz-admin@fuzz.example", "admin", true, admin_id, fx.admin_token);
    make_user("fz-victim@fuzz.example", NULL, false, fx.victim_id, NULL);

    /* the booking goes through the API, as a client makes it */
    char body[256], auth[128];
    snprintf(
        body, sizeof body,
        "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"2031-05-04T10:30:00Z\"}",
        fx.barbero_id, fx.servicio_id);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", fx.token);
    const char *hdr[] = {auth, "Content-Type: application/json", NULL};
    struct fz_req q = {"POST", "/api/citas", hdr, body, strlen(body), NULL, 0};
    struct fz_resp r;
    if (!fz_http(&q, true, &r) || r.status != 201)
        fz_fail("fixture booking: %d %s", r.status, r.body ? r.body : "");
    const char *id = json_string_value(json_object_get(json_object_get(r.json, "cita"), "id"));
    if (!id) fz_fail("fixture booking: no id in %s", r.body);
    snprintf(fx.cita_id, sizeof fx.cita_id, "%s", id);
    fz_resp_free(&r);
}

const struct fz_fixture *fz_start(void)
{
    if (started) return &fx;
    started = true;
    signal(SIGPIPE, SIG_IGN);
    log_set_quiet(true); /* no access-log line per input */
    clear_settings_env();
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/barberia-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) fz_fail("mkdtemp %s: %s", root, strerror(errno));
    char data[320];
    snprintf(data, sizeof data, "%s/data", root);

    /* sign-in throttling stays out of the way: inputs are not attackers */
    char *argv[] = {"--data",
                    data,
                    "--listen",
                    "127.0.0.1:0",
                    "--login-max-failures",
                    "100000",
                    "--login-addr-max-failures",
                    "1000000",
                    NULL};
    int idx = 0;
    must(config_load(&cfg, CONFIG_DATA | CONFIG_SERVE, 8, argv, &idx), "config");

    /* as src/cli/serve.c wires `barberia serve` */
    spool = xasprintf("%s/tmp", cfg.data_dir);
    struct http_options ho = {
        .listen = cfg.listen,
        .max_connections = cfg.max_connections,
        .shutdown_grace_ms = cfg.shutdown_grace_ms,
        .spool_dir = spool,
        .json_max = 64 * 1024,
        .file_max = PHOTO_MAX_BYTES,
        .multipart_max = 256ull * 1024 * 1024,
        .too_large_msg = "Máximo 5MB por imagen",
        .file_field = "file",
        .form_fields = api_form_fields,
        .routes = api_routes,
        .nroutes = api_nroutes,
        .authorize = api_authorize,
        .app = &app,
    };
    must(http_bind(&ho, &srv), "bind");
    must(app_open(&app, &cfg, config_db_pool(&cfg)), "app");
    if (mkdir(spool, 0700) != 0 && errno != EEXIST) fz_fail("mkdir %s", spool);
    public_url = xstrdup(http_bound_url(srv));
    app.public_url = public_url;
    must(http_serve(srv), "serve");
    srv_port = (uint16_t)strtoul(strrchr(public_url, ':') + 1, NULL, 10);
    snprintf(fx.base, sizeof fx.base, "%s", public_url);
    atexit(stop_server);
    make_fixture();
    return &fx;
}

struct app *fz_app(void)
{
    return &app;
}

/* --- inputs -------------------------------------------------------------------------- */

static const char *placeholder(const char *p, size_t n, size_t *used)
{
    static const struct {
        const char *name;
        size_t off;
    } names[] = {
        {"@TOKEN@", offsetof(struct fz_fixture, token)},
        {"@CLIENT@", offsetof(struct fz_fixture, client_id)},
        {"@EMAIL@", offsetof(struct fz_fixture, email)},
        {"@PASSWORD@", offsetof(struct fz_fixture, password)},
        {"@VICTIM@", offsetof(struct fz_fixture, victim_id)},
        {"@BARBERO@", offsetof(struct fz_fixture, barbero_id)},
        {"@SERVICIO@", offsetof(struct fz_fixture, servicio_id)},
        {"@CITA@", offsetof(struct fz_fixture, cita_id)},
    };
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        size_t k = strlen(names[i].name);
        if (n >= k && !memcmp(p, names[i].name, k)) {
            *used = k;
            return (const char *)&fx + names[i].off;
        }
    }
    return NULL;
}

static void append(struct buf *b, const void *p, size_t n)
{
    if (buf_append(b, p, n) != BR_OK) fz_fail("request too large");
}

void fz_input_parse(const uint8_t *data, size_t size, struct fz_input *in)
{
    memset(in, 0, sizeof *in);
    const char *s = (const char *)data;
    const char *nl = memchr(s, '\n', size);
    size_t body_at = 0;
    if (nl) {
        for (const char *p = s; p < nl && in->ncuts < FZ_MAX_CUTS;) {
            if (*p < '0' || *p > '9') {
                p++;
                continue;
            }
            size_t v = 0;
            while (p < nl && *p >= '0' && *p <= '9') {
                if (v < 100000000) v = v * 10 + (size_t)(*p - '0');
                p++;
            }
            in->cuts[in->ncuts++] = v;
        }
        body_at = (size_t)(nl - s) + 1;
    }
    struct buf b;
    buf_init(&b, 64u * 1024 * 1024);
    append(&b, "", 0);
    for (size_t i = body_at; i < size;) {
        size_t used = 0;
        const char *v = s[i] == '@' ? placeholder(s + i, size - i, &used) : NULL;
        if (v) {
            append(&b, v, strlen(v));
            i += used;
        } else {
            append(&b, s + i, 1);
            i++;
        }
    }
    in->payload = buf_steal(&b, &in->len);
}

void fz_input_free(struct fz_input *in)
{
    free(in->payload);
    in->payload = NULL;
}

char *fz_header_value(const char *s, size_t n)
{
    char *out = xmalloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\t' || (c >= 0x20 && c != 0x7f)) out[o++] = (char)c;
    }
    out[o] = '\0';
    return out;
}

char *fz_target(const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = xmalloc(n * 3 + 2);
    size_t o = 0;
    if (!n || s[0] != '/') out[o++] = '/';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c > 0x20 && c < 0x7f) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

char *fz_unescape(const char *s, size_t n, bool plus_space, size_t *len)
{
    char *out = xmalloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        /* %00 stays as it is: the server never decodes a NUL */
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0 &&
            (hexval(s[i + 1]) | hexval(s[i + 2]))) {
            out[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else if (plus_space && s[i] == '+') {
            out[o++] = ' ';
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    *len = o;
    return out;
}

/* --- the client -------------------------------------------------------------------------- */

/* Whether fd is the server's end of the connection whose client end has
 * local port lport. */
static bool server_end(int fd, uint16_t lport)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    if (getpeername(fd, (struct sockaddr *)&a, &l) != 0 || a.sin_family != AF_INET ||
        ntohs(a.sin_port) != lport)
        return false;
    l = sizeof a;
    return getsockname(fd, (struct sockaddr *)&a, &l) == 0 && ntohs(a.sin_port) == srv_port;
}

/* The server's end of the connection whose client end has local port
 * lport, or -1 (not accepted yet, or closed already). */
static int find_server_end(int cfd, uint16_t lport)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) fz_fail("/proc/self/fd: %s", strerror(errno));
    int found = -1;
    for (struct dirent *e; found < 0 && (e = readdir(d));) {
        int fd = (int)strtol(e->d_name, NULL, 10);
        if (fd > 2 && fd != cfd && fd != dirfd(d) && server_end(fd, lport)) found = fd;
    }
    closedir(d);
    return found;
}

/* Waits (bounded) until everything sent on cfd is in the server's hands:
 * acknowledged, then read from the server's socket (*sfd, found on first
 * use), or answered. The server is in this process, so its socket can be
 * asked. */
static void settle(int cfd, uint16_t lport, int *sfd)
{
    int64_t deadline = clock_mono_ms() + SETTLE_MS;
    for (;;) {
        int q = 0;
        if (ioctl(cfd, SIOCOUTQ, &q) != 0 || q == 0) break;
        if (clock_mono_ms() > deadline) return;
        sleep_us(20);
    }
    for (;;) {
        if (*sfd < 0) {
            *sfd = find_server_end(cfd, lport);
        } else if (!server_end(*sfd, lport)) {
            return; /* the server closed it */
        }
        if (*sfd >= 0) {
            int n = 0;
            if (ioctl(*sfd, FIONREAD, &n) != 0 || n == 0) return;
        }
        struct pollfd p = {cfd, POLLIN | POLLRDHUP, 0};
        if (poll(&p, 1, 0) > 0) return;         /* answered (or closed) already */
        if (clock_mono_ms() > deadline) return; /* busy: the pieces may merge */
        sleep_us(20);
    }
}

static bool send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

const char *fz_resp_header(const struct fz_resp *r, const char *name, char *buf, size_t n)
{
    size_t k = strlen(name);
    const char *line = r->head ? strstr(r->head, "\r\n") : NULL;
    while (line && line[2]) {
        line += 2;
        const char *end = strstr(line, "\r\n");
        if (!end) break;
        if (!strncasecmp(line, name, k) && line[k] == ':') {
            const char *v = line + k + 1;
            while (*v == ' ')
                v++;
            snprintf(buf, n, "%.*s", (int)(end - v), v);
            return buf;
        }
        line = end;
    }
    return NULL;
}

const char *fz_resp_error(const struct fz_resp *r)
{
    const char *e = json_string_value(json_object_get(r->json, "error"));
    return e ? e : "";
}

void fz_resp_free(struct fz_resp *r)
{
    free(r->head);
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

/* Checks the shape of a whole answer and fills r. */
static void parse_answer(const struct fz_req *q, bool json, const char *a, size_t n,
                         struct fz_resp *r)
{
    const char *eoh = memmem(a, n, "\r\n\r\n", 4);
    if (!eoh) fz_fail("%s %s: answer without a header block (%zu bytes)", q->method, q->target, n);
    if (n < 13 || memcmp(a, "HTTP/1.1 ", 9) || a[12] != ' ' || a[9] < '1' || a[9] > '5' ||
        a[10] < '0' || a[10] > '9' || a[11] < '0' || a[11] > '9')
        fz_fail("%s %s: malformed status line: %.40s", q->method, q->target, a);
    r->status = (a[9] - '0') * 100 + (a[10] - '0') * 10 + (a[11] - '0');
    size_t hl = (size_t)(eoh - a) + 2;
    r->head = xstrndup(a, hl);
    if (memchr(a, '\0', hl)) fz_fail("%s %s: NUL in the header block", q->method, q->target);
    for (const char *line = strstr(r->head, "\r\n") + 2; *line;) {
        const char *end = strstr(line, "\r\n");
        const char *colon = memchr(line, ':', (size_t)(end - line));
        if (!colon || colon == line)
            fz_fail("%s %s: malformed header line: %.*s", q->method, q->target, (int)(end - line),
                    line);
        line = end + 2;
    }
    /* libmicrohttpd 0.9.75 answers a Cookie header it cannot parse (an
     * unterminated quoted value: `Cookie: x="`) with its own 431 whose
     * header block it sends twice, then closes; none of our code runs. A
     * bug of the library (docs/testing.md), tolerated here and only here. */
    if (r->status == 431 && (size_t)(n - hl - 2) > hl && !memcmp(eoh + 4, a, hl + 2)) {
        r->library_431 = true;
        r->body = xstrndup(eoh + 4 + hl + 2, n - 2 * (hl + 2));
        r->len = n - 2 * (hl + 2);
        return;
    }
    r->body = xstrndup(eoh + 4, n - hl - 2);
    r->len = n - hl - 2;
    char v[128];
    if (!fz_resp_header(r, "Content-Length", v, sizeof v))
        fz_fail("%s %s: %d without Content-Length", q->method, q->target, r->status);
    char *endp;
    unsigned long long cl = strtoull(v, &endp, 10);
    bool head = !strcmp(q->method, "HEAD");
    if (*endp || (!head && cl != r->len) || (head && r->len))
        fz_fail("%s %s: Content-Length %s but %zu body bytes; the answer:\n%.*s", q->method,
                q->target, v, r->len, (int)(n < 1200 ? n : 1200), a);
    if (!json) return;
    if (!fz_resp_header(r, "Content-Type", v, sizeof v) ||
        strcmp(v, "application/json; charset=utf-8"))
        fz_fail("%s %s: %d with Content-Type %s", q->method, q->target, r->status,
                fz_resp_header(r, "Content-Type", v, sizeof v) ? v : "(none)");
    if (head) return;
    json_error_t je;
    r->json = json_loadb(r->body, r->len, 0, &je);
    if (!json_is_object(r->json))
        fz_fail("%s %s: %d with a body that is not a JSON object: %.200s", q->method, q->target,
                r->status, r->body);
    if (r->status >= 400) {
        const char *e = json_string_value(json_object_get(r->json, "error"));
        if (json_object_size(r->json) != 1 || !e || !*e)
            fz_fail("%s %s: error %d not shaped {\"error\": text}: %.200s", q->method, q->target,
                    r->status, r->body);
    }
}

bool fz_http(const struct fz_req *q, bool json, struct fz_resp *r)
{
    memset(r, 0, sizeof *r);
    struct buf req;
    buf_init(&req, 64u * 1024 * 1024);
    char line[256];
    snprintf(line, sizeof line, "Host: 127.0.0.1:%u\r\nConnection: close\r\n", srv_port);
    append(&req, q->method, strlen(q->method));
    append(&req, " ", 1);
    append(&req, q->target, strlen(q->target));
    append(&req, " HTTP/1.1\r\n", 11);
    append(&req, line, strlen(line));
    for (const char *const *h = q->headers; h && *h; h++) {
        append(&req, *h, strlen(*h));
        append(&req, "\r\n", 2);
    }
    if (q->body) {
        snprintf(line, sizeof line, "Content-Length: %zu\r\n", q->len);
        append(&req, line, strlen(line));
    }
    append(&req, "\r\n", 2);
    size_t head_len = req.len;
    if (q->body) append(&req, q->body, q->len);

    /* the cuts, as absolute offsets: into the body, or into the whole
     * request when there is none */
    size_t cuts[FZ_MAX_CUTS + 1], nc = 0;
    for (size_t i = 0; i < q->ncuts && i < FZ_MAX_CUTS; i++) {
        size_t at = q->body ? head_len + (q->len ? q->cuts[i] % (q->len + 1) : 0)
                            : q->cuts[i] % (req.len + 1);
        if (at > 0 && at < req.len) cuts[nc++] = at;
    }
    qsort(cuts, nc, sizeof cuts[0], cmp_size);
    cuts[nc] = req.len;

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fz_fail("socket: %s", strerror(errno));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(srv_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        fz_fail("the server is gone: connect: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    uint16_t lport = ntohs(sa.sin_port);

    int sfd = -1;
    bool hung_up = false;
    size_t at = 0;
    for (size_t i = 0; i <= nc && !hung_up; i++) {
        if (cuts[i] <= at) continue;
        hung_up = !send_all(fd, req.p + at, cuts[i] - at);
        at = cuts[i];
        if (!hung_up) settle(fd, lport, &sfd);
    }
    buf_free(&req);

    struct buf ans;
    buf_init(&ans, 512u * 1024 * 1024);
    int64_t deadline = clock_mono_ms() + ANSWER_WITHIN_MS;
    bool reset = false;
    for (;;) {
        int64_t left = deadline - clock_mono_ms();
        if (left <= 0)
            fz_fail("%s %s: no answer within %d ms (%zu bytes so far)", q->method, q->target,
                    ANSWER_WITHIN_MS, ans.len);
        struct pollfd p = {fd, POLLIN, 0};
        int pr = poll(&p, 1, (int)left);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        char chunk[16384];
        ssize_t k = recv(fd, chunk, sizeof chunk, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            reset = true;
            break;
        }
        if (k == 0) break;
        append(&ans, chunk, (size_t)k);
    }
    close(fd);
    if (ans.len == 0 && hung_up) {
        buf_free(&ans);
        return false;
    }
    if (ans.len == 0)
        fz_fail("%s %s: the server closed the connection without an answer%s", q->method, q->target,
                reset ? " (reset)" : "");
    if (reset) fz_fail("%s %s: connection reset in the middle of the answer", q->method, q->target);
    parse_answer(q, json, ans.p, ans.len, r);
    buf_free(&ans);
    return true;
}
