/*
 * test_ops.c - what an operator sees of `barberia serve`: the first start
 * on an empty folder migrates by itself, a restart keeps the data, SIGTERM
 * lets a request in flight finish with its real answer and refuses new
 * connections, SIGINT stops too, bad configuration is one clear line on
 * stderr and a non-zero exit, `serve --demo` seeds an empty folder once
 * (and plain `serve` never does), and the start line names the port.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEMO_ADMIN "admin@barberia.local"

static struct srv S;

static int reset(void **state)
{
    (void)state;
    memset(&S, 0, sizeof S);
    return 0;
}

static int cleanup(void **state)
{
    (void)state;
    srv_cleanup(&S);
    return 0;
}

/* Whether a TCP connection to 127.0.0.1:port is accepted. */
static bool port_accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    int e = errno;
    close(fd);
    if (!ok && e != ECONNREFUSED) fail_msg("connect: unexpected %s", strerror(e));
    return ok;
}

static long json_array_len(const struct srv *s, const char *path, const char *member,
                           const char *token)
{
    struct resp r;
    http_get(s, path, token, &r);
    if (r.status != 200) fail_msg("GET %s: %ld %s", path, r.status, r.body);
    json_t *a = json_object_get(r.json, member);
    if (!json_is_array(a)) fail_msg("GET %s: no %s array: %s", path, member, r.body);
    long n = (long)json_array_size(a);
    resp_free(&r);
    return n;
}

static long login(const struct srv *s, const char *email, const char *password, char *token,
                  size_t n)
{
    json_t *b = json_pack("{s:s, s:s}", "email", email, "password", password);
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(s, "POST", "/api/auth/login", NULL, text, &r);
    free(text);
    long st = r.status;
    if (token && st == 200) snprintf(token, n, "%s", jstr(r.json, "token"));
    resp_free(&r);
    return st;
}

/* stderr of a refused start: exactly one error line (which holds needle,
 * when given), otherwise only info log lines, no sanitizer report; stdout
 * empty. */
static void expect_one_error_line(const char *out, const char *err, const char *needle)
{
    if (strstr(err, "Sanitizer") || strstr(err, "runtime error:"))
        fail_msg("sanitizer report:\n%s", err);
    if (out && *out) fail_msg("a refused start printed on stdout: %s", out);
    int errors = 0;
    const char *line = err;
    while (*line) {
        size_t n = strcspn(line, "\n");
        if (!strncmp(line, "barberia: ", 10)) {
            errors++;
            if (needle && !memmem(line, n, needle, strlen(needle)))
                fail_msg("the error line does not mention \"%s\": %.*s", needle, (int)n, line);
        } else if (!memmem(line, n, " info ", 6)) {
            fail_msg("unexpected stderr line: %.*s", (int)n, line);
        }
        line += n;
        if (*line == '\n') line++;
    }
    if (errors != 1) fail_msg("expected one error line on stderr, got %d:\n%s", errors, err);
}

/* Runs `barberia serve args...` (no --data added) with env; asserts a refused
 * start: a non-zero exit within the limit, one error line holding needle. */
/* Returns the exit status (1 refused, 2 bad arguments). */
static int expect_refused_start(const char *const *env, const char *const *args, const char *needle)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = "serve";
    for (; *args && n < 31; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    char *out = NULL, *err = NULL;
    int st = run_cli_within(&S, env, argv, false, 60000, &out, &err);
    if (st == -1)
        fail_msg("serve kept running: it should have refused to start:\n%s", err ? err : "");
    if (st == 0) fail_msg("serve exited 0 on a bad configuration:\n%s", err ? err : "");
    expect_one_error_line(out ? out : "", err ? err : "", needle);
    free(out);
    free(err);
    return st;
}

/* Nothing was written: the data folder was not even created. */
static void expect_no_data_folder(void)
{
    struct stat sb;
    if (stat(S.data, &sb) == 0) fail_msg("%s was created by a refused start", S.data);
}

/* --- start and restart ------------------------------------------------------------------ */

static void first_start_on_a_missing_data_folder_migrates_the_schema(void **state)
{
    (void)state;
    srv_init(&S);
    struct stat sb;
    assert_int_not_equal(stat(S.data, &sb), 0); /* the folder does not exist yet */
    srv_start(&S, NULL, NULL);
    struct resp r;
    http_get(&S, "/healthz", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "ok")));
    resp_free(&r);
    static const char *const tables[] = {"perfiles", "citas",      "servicios",
                                         "barberos", "fotos_cita", "historial_cortes"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        assert_int_equal(db_count(&S,
                                  test_pg() ? "SELECT count(*) FROM information_schema.tables "
                                              "WHERE table_schema = 'public' AND table_name = '%s'"
                                            : "SELECT count(*) FROM sqlite_master WHERE type = "
                                              "'table' AND name = '%s'",
                                  tables[i]),
                         1);
    /* and the schema works end to end */
    struct user u;
    signup_user(&S, &u, "Primera");
    assert_int_equal(db_count(&S, "SELECT count(*) FROM perfiles WHERE id = '%s'", u.id), 1);
}

static void restart_on_the_same_folder_keeps_the_data(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    struct user u;
    signup_user(&S, &u, "Constante");
    char *barbero = make_barbero(&S, "Barbero Persistente");
    char *servicio = make_servicio(&S, "Corte Persistente", 45, 20);
    char *cita = book(&S, &u, barbero, servicio, "2033-01-10T09:00:00Z", "volveré");
    struct part parts[3] = {
        {"file", "persistent-bytes", 0, "p.png", "image/png"},
        {"cita_id", cita, 0, NULL, NULL},
        {"tipo", "antes", 0, NULL, NULL},
    };
    struct resp r;
    http_multipart(&S, "/api/fotos", u.token, parts, 3, &r);
    assert_int_equal(r.status, 201);
    char *storage_path = strdup(jstr(json_object_get(r.json, "foto"), "storage_path"));
    resp_free(&r);
    assert_int_equal(srv_stop(&S), 0);

    srv_start(&S, NULL, NULL);
    /* the old session, the password, the catalog, the cita and the photo */
    http_get(&S, "/api/auth/me", u.token, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char token[128];
    assert_int_equal(login(&S, u.email, u.password, token, sizeof token), 200);
    assert_int_equal(json_array_len(&S, "/api/barberos", "barberos", NULL), 1);
    assert_int_equal(json_array_len(&S, "/api/servicios", "servicios", NULL), 1);
    http_get(&S, "/api/citas", token, &r);
    assert_int_equal(r.status, 200);
    json_t *citas = json_object_get(r.json, "citas");
    assert_int_equal(json_array_size(citas), 1);
    assert_string_equal(jstr(json_array_get(citas, 0), "id"), cita);
    assert_string_equal(jstr(json_array_get(citas, 0), "notas"), "volveré");
    resp_free(&r);
    char path[512];
    snprintf(path, sizeof path, "/api/fotos?cita_id=%s", cita);
    assert_int_equal(json_array_len(&S, path, "fotos", token), 1);
    snprintf(path, sizeof path, "/storage/v1/object/public/fotos-citas/%s", storage_path);
    http_get(&S, path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "persistent-bytes");
    resp_free(&r);

    /* a restart on a migrated folder: the first log line is the start line
     * (after the S3 store's own line, when photos are there) */
    char *log = srv_log(&S);
    char want[96];
    snprintf(want, sizeof want, "listening on http://127.0.0.1:%d ", S.port);
    const char *line = log;
    if (S.s3 && strstr(line, "storage: S3 at") < line + strcspn(line, "\n"))
        line += strcspn(line, "\n") + 1;
    size_t first = strcspn(line, "\n");
    if (!memmem(line, first, want, strlen(want)))
        fail_msg("the first log line does not name the port %d: %.*s", S.port, (int)first, line);
    free(log);
    free(storage_path);
    free(barbero);
    free(servicio);
    free(cita);
}

static void start_line_names_the_chosen_port(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL); /* --listen 127.0.0.1:0 */
    char *log = srv_log(&S);
    const char *p = strstr(log, "listening on http://127.0.0.1:");
    assert_non_null(p);
    /* only the schema's creation comes before it */
    for (const char *line = log; line < p;) {
        size_t n = strcspn(line, "\n");
        if (line + n >= p) break;
        if (!memmem(line, n, "schema migrated", 15) &&
            !(S.s3 && memmem(line, n, "storage: S3 at", 14)))
            fail_msg("a log line before the start line: %.*s", (int)n, line);
        line += n + 1;
    }
    long port = strtol(p + strlen("listening on http://127.0.0.1:"), NULL, 10);
    free(log);
    assert_true(port > 0 && port < 65536);
    /* the logged port is the one that answers */
    struct srv probe = S;
    probe.port = (int)port;
    snprintf(probe.base, sizeof probe.base, "http://127.0.0.1:%ld", port);
    struct resp r;
    http_get(&probe, "/healthz", NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_false(srv_wait_log(&S, "BARBERIA_PUBLIC_URL", 0));
    /* on every address, with no public URL to put in links and photo
     * URLs, the loopback it falls back to is pointed out */
    assert_int_equal(srv_stop(&S), 0);
    const char *everywhere[] = {"--listen", ":0", NULL};
    /* and a variable that names no setting (a typo) is said, not ignored
     * in silence */
    const char *typo[] = {"BARBERIA_PUBLIC_ULR=https://citas.example", NULL};
    srv_start(&S, typo, everywhere);
    assert_true(srv_wait_log(&S, "set BARBERIA_PUBLIC_URL to the address clients use", 0));
    assert_true(srv_wait_log(&S, "BARBERIA_PUBLIC_ULR is not a setting of barberia: ignored", 0));
}

/* --- stopping ------------------------------------------------------------------------------- */

struct slow {
    const char *base, *token, *cita;
    atomic_int started, release;
    size_t sent, total;
    long status;
    char body[1024], headers[2048];
};

/* The file's bytes: one piece, then nothing until released, then the rest
 * in pieces. */
static size_t slow_read(char *buf, size_t size, size_t nitems, void *arg)
{
    struct slow *x = arg;
    if (x->sent > 0 && !atomic_load(&x->started)) atomic_store(&x->started, 1);
    if (x->sent > 0) {
        for (int i = 0; i < 6000 && !atomic_load(&x->release); i++)
            sleep_ms(10);
        sleep_ms(50);
    }
    size_t want = size * nitems;
    if (want > 16384) want = 16384;
    if (want > x->total - x->sent) want = x->total - x->sent;
    memset(buf, 'S', want);
    x->sent += want;
    return want;
}

static size_t slow_sink(char *p, size_t size, size_t nmemb, void *ud)
{
    char *dst = ud;
    size_t k = size * nmemb, have = strlen(dst), room = 1023 - have;
    memcpy(dst + have, p, k < room ? k : room);
    dst[have + (k < room ? k : room)] = '\0';
    return k;
}

static size_t slow_head(char *p, size_t size, size_t nmemb, void *ud)
{
    char *dst = ud;
    size_t k = size * nmemb, have = strlen(dst), room = 2047 - have;
    memcpy(dst + have, p, k < room ? k : room);
    dst[have + (k < room ? k : room)] = '\0';
    return k;
}

static void *slow_upload(void *arg)
{
    struct slow *x = arg;
    char url[128], auth[256];
    snprintf(url, sizeof url, "%s/api/fotos", x->base);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", x->token);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 180L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, slow_sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, slow_head);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, x->headers);
    struct curl_slist *h = curl_slist_append(NULL, auth);
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_mime *m = curl_mime_init(c);
    curl_mimepart *p = curl_mime_addpart(m);
    curl_mime_name(p, "cita_id");
    curl_mime_data(p, x->cita, CURL_ZERO_TERMINATED);
    p = curl_mime_addpart(m);
    curl_mime_name(p, "tipo");
    curl_mime_data(p, "despues", CURL_ZERO_TERMINATED);
    p = curl_mime_addpart(m);
    curl_mime_name(p, "file");
    curl_mime_filename(p, "lento.png");
    curl_mime_type(p, "image/png");
    curl_mime_data_cb(p, (curl_off_t)x->total, slow_read, NULL, NULL, x);
    curl_easy_setopt(c, CURLOPT_MIMEPOST, m);
    CURLcode cc = curl_easy_perform(c);
    x->status = -1;
    if (cc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->status);
    else
        snprintf(x->body, sizeof x->body, "curl: %s", curl_easy_strerror(cc));
    atomic_store(&x->started, 1); /* never leave the main thread waiting */
    curl_mime_free(m);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return NULL;
}

/* Whether the server counts a request in flight besides the GET /metrics
 * that asks. */
static bool upload_in_flight(void *ud)
{
    (void)ud;
    struct resp r;
    http_get(&S, "/metrics", NULL, &r);
    const char *key = "\nbarberia_http_requests_in_flight ";
    const char *at = r.status == 200 ? strstr(r.body, key) : NULL;
    long n = at ? strtol(at + strlen(key), NULL, 10) : 0;
    resp_free(&r);
    return n >= 2;
}

static void sigterm_lets_an_upload_in_flight_finish_then_exits_0(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    struct user u;
    signup_user(&S, &u, "Paciente");
    char *barbero = make_barbero(&S, "Barbero Lento");
    char *servicio = make_servicio(&S, "Corte Lento", 30, 10);
    char *cita = book(&S, &u, barbero, servicio, "2033-02-01T09:00:00Z", NULL);

    struct slow x = {.base = S.base, .token = u.token, .cita = cita, .total = 8 * 16384};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, slow_upload, &x), 0);
    for (int i = 0; i < 6000 && !atomic_load(&x.started); i++)
        sleep_ms(10);
    assert_true(atomic_load(&x.started));
    assert_int_equal(x.status, 0); /* still sending */
    /* and the server has it: its first bytes can still sit in the socket
     * on a loaded machine, and a SIGTERM then finds nothing in flight */
    assert_true(wait_until(upload_in_flight, NULL, 60000));

    kill(S.pid, SIGTERM);
    /* the listener is closed before the wait for requests in flight */
    bool waiting = srv_wait_log(&S, "in-flight request(s)", 60000);
    bool refused = waiting && !port_accepts(S.port);
    int st = 0;
    pid_t w = waitpid(S.pid, &st, WNOHANG);
    bool alive = w == 0;
    if (w == S.pid) S.pid = 0; /* reaped: it stopped too early */
    atomic_store(&x.release, 1);
    pthread_join(t, NULL);
    assert_true(waiting);
    assert_true(alive);
    assert_true(refused);

    /* the upload got its real answer */
    if (x.status != 201) fail_msg("the upload in flight got %ld: %s", x.status, x.body);
    assert_true(x.sent == x.total);
    assert_non_null(strcasestr(x.headers, "Connection: close"));
    json_t *j = json_loads(x.body, 0, NULL);
    const char *sp = jstr(json_object_get(j, "foto"), "storage_path");
    assert_non_null(sp);
    size_t len = 0;
    char *stored = obj_read(&S, sp, &len);
    assert_non_null(stored);
    assert_int_equal(len, x.total);
    free(stored);
    json_decref(j);

    assert_int_equal(srv_wait_exit(&S, 60000), 0);
    assert_false(port_accepts(S.port));
    assert_true(srv_wait_log(&S, "received SIGTERM", 0));
    assert_true(srv_wait_log(&S, "info stopped", 0));
    assert_int_equal(db_count(&S, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita), 1);
    free(barbero);
    free(servicio);
    free(cita);
}

static void sigint_also_stops_with_exit_0(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    int port = S.port;
    kill(S.pid, SIGINT);
    assert_int_equal(srv_wait_exit(&S, 60000), 0);
    assert_true(srv_wait_log(&S, "received SIGINT", 0));
    assert_true(srv_wait_log(&S, "info stopped", 0));
    assert_false(port_accepts(port));
}

/* --- bad configuration ------------------------------------------------------------------------ */

static void a_file_in_place_of_the_data_folder_is_refused(void **state)
{
    (void)state;
    srv_init(&S);
    FILE *f = fopen(S.data, "w");
    assert_non_null(f);
    fputs("not a folder\n", f);
    fclose(f);
    const char *args[] = {"--listen", "127.0.0.1:0", "--data", S.data, NULL};
    expect_refused_start(NULL, args, S.data);
    /* the file is left as it was */
    char *text = read_file(S.data, NULL);
    assert_string_equal(text, "not a folder\n");
    free(text);
}

static void a_data_folder_that_cannot_be_created_is_refused(void **state)
{
    (void)state;
    srv_init(&S);
    const char *args[] = {"--listen", "127.0.0.1:0", "--data", "/proc/barberia-no/data", NULL};
    expect_refused_start(NULL, args, "/proc/barberia-no/data");
    char sub[400];
    snprintf(sub, sizeof sub, "%s/sub", S.data);
    FILE *f = fopen(S.data, "w"); /* a file where a parent folder should be */
    assert_non_null(f);
    fclose(f);
    const char *args2[] = {"--listen", "127.0.0.1:0", "--data", sub, NULL};
    expect_refused_start(NULL, args2, sub);
}

static void a_file_in_place_of_a_folder_inside_the_data_folder_is_refused(void **state)
{
    (void)state;
    static const char *const subs[] = {"tmp", "storage", "storage/.tmp", "storage/.meta",
                                       "storage/.buckets"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        srv_init(&S);
        if (S.s3 && !strncmp(subs[i], "storage", 7)) { /* the folder store's own folders */
            srv_cleanup(&S);
            memset(&S, 0, sizeof S);
            continue;
        }
        char path[512];
        snprintf(path, sizeof path, "%s/%s", S.data, subs[i]);
        char *parent = strdup(path);
        *strrchr(parent, '/') = '\0';
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s' && printf x > '%s'", parent, path);
        assert_int_equal(system(cmd), 0);
        free(parent);
        const char *args[] = {"--listen", "127.0.0.1:0", "--data", S.data, NULL};
        expect_refused_start(NULL, args, path);
        srv_cleanup(&S);
        memset(&S, 0, sizeof S);
    }
    /* and a folder where the database file should be */
    if (test_pg()) return;
    srv_init(&S);
    char db[512];
    snprintf(db, sizeof db, "%s/barberia.db", S.data);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", db);
    assert_int_equal(system(cmd), 0);
    const char *args[] = {"--listen", "127.0.0.1:0", "--data", S.data, NULL};
    expect_refused_start(NULL, args, db);
}

static void a_port_already_in_use_is_refused(void **state)
{
    (void)state;
    srv_init(&S);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0);
    socklen_t sl = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &sl);
    char listen_at[64];
    snprintf(listen_at, sizeof listen_at, "127.0.0.1:%d", ntohs(a.sin_port));
    const char *args[] = {"--listen", listen_at, "--data", S.data, NULL};
    assert_int_equal(expect_refused_start(NULL, args, listen_at), 1);
    expect_no_data_folder();
    /* the same through the environment */
    char env_listen[96];
    snprintf(env_listen, sizeof env_listen, "BARBERIA_LISTEN=%s", listen_at);
    const char *env[] = {env_listen, NULL};
    const char *args2[] = {"--data", S.data, NULL};
    assert_int_equal(expect_refused_start(env, args2, listen_at), 1);
    expect_no_data_folder();
    close(fd);
}

static void a_malformed_listen_address_is_refused(void **state)
{
    (void)state;
    srv_init(&S);
    static const char *const bad[] = {
        "abc",           "127.0.0.1", "127.0.0.1:",   "127.0.0.1:99999",
        "127.0.0.1:80x", "[::1",      "127.0.0.1:-5", "999.1.1.1:80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[] = {"--listen", bad[i], "--data", S.data, NULL};
        int st = expect_refused_start(NULL, args, bad[i]);
        /* malformed is a bad argument (2); a well-formed address that cannot
         * be resolved is a refusal (1) */
        if (st != 2 && !(st == 1 && !strcmp(bad[i], "999.1.1.1:80")))
            fail_msg("--listen %s: exit status %d", bad[i], st);
        expect_no_data_folder();
    }
}

static void a_trusted_proxy_that_is_no_address_is_refused(void **state)
{
    (void)state;
    srv_init(&S);
    const char *args[] = {"--listen", "127.0.0.1:0", "--data", S.data, NULL};
    static const char *const bad[] = {"BARBERIA_TRUSTED_PROXIES=127.0.0.1:8080",
                                      "BARBERIA_TRUSTED_PROXIES=10.0.0.0/8",
                                      "BARBERIA_TRUSTED_PROXIES=127.0.0.1, proxy.example"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *env[] = {bad[i], NULL};
        expect_refused_start(env, args, "BARBERIA_TRUSTED_PROXIES");
        expect_no_data_folder();
    }
}

static void an_unusable_database_or_storage_url_is_refused(void **state)
{
    (void)state;
    srv_init(&S);
    const char *args[] = {"--listen", "127.0.0.1:0", "--data", S.data, NULL};
    const char *kind[] = {"BARBERIA_DATABASE_URL=mysql://u:p@127.0.0.1:3306/barberia", NULL};
    expect_refused_start(kind, args, "BARBERIA_DATABASE_URL");
    /* a PostgreSQL nobody answers at: one line that says so, without the
     * URL's password */
    int port = free_port();
    char url[128];
    snprintf(url, sizeof url, "BARBERIA_DATABASE_URL=postgresql://u:secreto99@127.0.0.1:%d/b",
             port);
    const char *db[] = {url, NULL};
    char *out = NULL, *err = NULL;
    const char *argv[] = {"serve", "--listen", "127.0.0.1:0", "--data", S.data, NULL};
    int st = run_cli_within(&S, db, argv, false, 60000, &out, &err);
    assert_int_not_equal(st, 0);
    assert_int_not_equal(st, -1);
    expect_one_error_line(out ? out : "", err ? err : "", "PostgreSQL");
    assert_null(strstr(err ? err : "", "secreto99"));
    free(out);
    free(err);
    /* nor one libpq cannot parse or refuses, whose message quotes the URL or
     * a value of it; nor a password given as a parameter */
    static const char *const malformed[] = {
        "BARBERIA_DATABASE_URL=postgresql://u:secreto99@[::1",
        "BARBERIA_DATABASE_URL=postgresql://u:secreto99@127.0.0.1:1/b?sslmode=secreto99",
        "BARBERIA_DATABASE_URL=postgresql://u:secreto99@127.0.0.1:1/b?nada=1",
        "BARBERIA_DATABASE_URL=postgresql://u@127.0.0.1:1/b?password=secreto99&sslmode=nada"};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        const char *env[] = {malformed[i], NULL};
        out = err = NULL;
        st = run_cli_within(&S, env, argv, false, 60000, &out, &err);
        assert_int_not_equal(st, 0);
        assert_int_not_equal(st, -1);
        expect_one_error_line(out ? out : "", err ? err : "", "PostgreSQL");
        if (strstr(err ? err : "", "secreto99")) fail_msg("the password is in the error: %s", err);
        free(out);
        free(err);
    }
    const char *both[] = {"BARBERIA_DATABASE_URL=postgresql://x", "BARBERIA_STORAGE_URL=http://y",
                          NULL};
    expect_refused_start(both, args, NULL);
    expect_no_data_folder();
}

static void storage_url_without_credentials_or_with_an_unknown_scheme_is_refused(void **state)
{
    (void)state;
    srv_init(&S);
    const char *args[] = {"--listen", "127.0.0.1:0", "--data", S.data, NULL};
    const char *bare[] = {"BARBERIA_STORAGE_URL=http://127.0.0.1:9000", NULL};
    expect_refused_start(bare, args, "BARBERIA_STORAGE_ACCESS_KEY");
    const char *scheme[] = {"BARBERIA_STORAGE_URL=ftp://127.0.0.1:9000",
                            "BARBERIA_STORAGE_ACCESS_KEY=k", "BARBERIA_STORAGE_SECRET_KEY=s", NULL};
    expect_refused_start(scheme, args, "BARBERIA_STORAGE_URL");
    const char *userinfo[] = {"BARBERIA_STORAGE_URL=http://k:s@127.0.0.1:9000",
                              "BARBERIA_STORAGE_ACCESS_KEY=k", "BARBERIA_STORAGE_SECRET_KEY=s",
                              NULL};
    expect_refused_start(userinfo, args, "credentials do not belong in the URL");
    const char *pub[] = {"BARBERIA_STORAGE_PUBLIC_URL=http://127.0.0.1:9000/fotos-citas", NULL};
    expect_refused_start(pub, args, "BARBERIA_STORAGE_PUBLIC_URL");
    /* a base that keys follow: with a query or a fragment every photo URL
     * stored would be "<base>?v=1/<key>", for good */
    static const char *const bases[] = {"BARBERIA_STORAGE_PUBLIC_URL=https://cdn.example/f?v=1",
                                        "BARBERIA_STORAGE_PUBLIC_URL=https://cdn.example/f#x"};
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        const char *query[] = {"BARBERIA_STORAGE_URL=http://127.0.0.1:9000",
                               "BARBERIA_STORAGE_ACCESS_KEY=k", "BARBERIA_STORAGE_SECRET_KEY=s",
                               bases[i], NULL};
        expect_refused_start(query, args, "BARBERIA_STORAGE_PUBLIC_URL");
    }
    const char *ca[] = {"BARBERIA_STORAGE_URL=https://127.0.0.1:9000",
                        "BARBERIA_STORAGE_ACCESS_KEY=k", "BARBERIA_STORAGE_SECRET_KEY=s",
                        "BARBERIA_STORAGE_CA_FILE=/nonexistent/barberia-ca.pem", NULL};
    expect_refused_start(ca, args, "BARBERIA_STORAGE_CA_FILE");
    expect_no_data_folder();
}

/* --- demo data --------------------------------------------------------------------------- */

static void serve_demo_seeds_an_empty_folder_once(void **state)
{
    (void)state;
    const char *demo[] = {"--demo", NULL};
    srv_start(&S, NULL, demo);
    char *out = read_file(S.out, NULL);
    assert_non_null(out);
    assert_non_null(strstr(out, DEMO_ADMIN));
    const char *p = strstr(out, "password:");
    if (!p) fail_msg("no password on stdout: %s", out);
    p += strlen("password:");
    while (*p == ' ')
        p++;
    char password[64];
    size_t n = strcspn(p, " \r\n");
    assert_true(n >= 8 && n < sizeof password);
    memcpy(password, p, n);
    password[n] = '\0';
    assert_null(strstr(p + n, password)); /* printed once */
    free(out);
    assert_false(srv_wait_log(&S, password, 0)); /* and never logged */

    long barberos = json_array_len(&S, "/api/barberos", "barberos", NULL);
    long servicios = json_array_len(&S, "/api/servicios", "servicios", NULL);
    assert_true(barberos >= 1);
    assert_true(servicios >= 1);
    char token[128];
    assert_int_equal(login(&S, DEMO_ADMIN, password, token, sizeof token), 200);
    struct resp r;
    http_get(&S, "/api/admin/usuarios", token, &r);
    assert_int_equal(r.status, 200);
    json_t *us = json_object_get(r.json, "usuarios");
    assert_int_equal(json_array_size(us), 1);
    assert_string_equal(jstr(json_array_get(us, 0), "email"), DEMO_ADMIN);
    assert_string_equal(jstr(json_array_get(us, 0), "rol"), "admin");
    resp_free(&r);
    assert_int_equal(srv_stop(&S), 0);

    /* a second --demo on the same folder adds nothing and shows no password */
    srv_start(&S, NULL, demo);
    out = read_file(S.out, NULL);
    assert_non_null(out);
    assert_null(strstr(out, "password"));
    assert_null(strstr(out, password));
    free(out);
    assert_int_equal(json_array_len(&S, "/api/barberos", "barberos", NULL), barberos);
    assert_int_equal(json_array_len(&S, "/api/servicios", "servicios", NULL), servicios);
    assert_int_equal(login(&S, DEMO_ADMIN, password, token, sizeof token), 200);
    assert_int_equal(json_array_len(&S, "/api/admin/usuarios", "usuarios", token), 1);
}

static void serve_demo_leaves_a_folder_with_data_alone(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    char *b = make_barbero(&S, "Ya Existente");
    free(b);
    assert_int_equal(srv_stop(&S), 0);
    const char *demo[] = {"--demo", NULL};
    srv_start(&S, NULL, demo);
    char *out = read_file(S.out, NULL);
    assert_non_null(out);
    assert_null(strstr(out, "password"));
    free(out);
    assert_int_equal(json_array_len(&S, "/api/barberos", "barberos", NULL), 1);
    assert_int_equal(json_array_len(&S, "/api/servicios", "servicios", NULL), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM perfiles"), 0);
}

static void plain_serve_never_creates_demo_data(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    char *out = read_file(S.out, NULL);
    assert_non_null(out);
    assert_string_equal(out, "");
    free(out);
    assert_int_equal(json_array_len(&S, "/api/barberos", "barberos", NULL), 0);
    assert_int_equal(json_array_len(&S, "/api/servicios", "servicios", NULL), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM perfiles"), 0);
    assert_int_equal(login(&S, DEMO_ADMIN, "whatever-password", NULL, 0), 401);
    /* nor on a restart */
    assert_int_equal(srv_stop(&S), 0);
    srv_start(&S, NULL, NULL);
    assert_int_equal(json_array_len(&S, "/api/barberos", "barberos", NULL), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM perfiles"), 0);
}

/* A setting only serve reads, with a value serve refuses, in the
 * environment the commands share (one env file): serve stops on it, and
 * the data commands, which take only the data settings, run. */
static void a_bad_serve_setting_stops_serve_but_not_a_data_command(void **state)
{
    (void)state;
    srv_init(&S);
    const char *env[] = {"BARBERIA_WORKERS=abc", NULL};
    const char *args[] = {"--listen", "127.0.0.1:0", "--data", S.data, NULL};
    expect_refused_start(env, args, "BARBERIA_WORKERS");
    const char *migrate[] = {"migrate", "--data", S.data, NULL};
    const char *list[] = {"user", "list", "--data", S.data, NULL};
    const char *const *cmds[] = {migrate, list};
    for (size_t i = 0; i < 2; i++) {
        char *out = NULL, *err = NULL;
        int st = run_cli_within(&S, env, cmds[i], false, 60000, &out, &err);
        if (st != 0) fail_msg("%s: exit %d: %s", cmds[i][0], st, err ? err : "");
        free(out);
        free(err);
    }
}

#define T(f) cmocka_unit_test_setup_teardown(f, reset, cleanup)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(first_start_on_a_missing_data_folder_migrates_the_schema),
        T(restart_on_the_same_folder_keeps_the_data),
        T(start_line_names_the_chosen_port),
        T(sigterm_lets_an_upload_in_flight_finish_then_exits_0),
        T(sigint_also_stops_with_exit_0),
        T(a_file_in_place_of_the_data_folder_is_refused),
        T(a_data_folder_that_cannot_be_created_is_refused),
        T(a_file_in_place_of_a_folder_inside_the_data_folder_is_refused),
        T(a_port_already_in_use_is_refused),
        T(a_malformed_listen_address_is_refused),
        T(a_trusted_proxy_that_is_no_address_is_refused),
        T(an_unusable_database_or_storage_url_is_refused),
        T(storage_url_without_credentials_or_with_an_unknown_scheme_is_refused),
        T(serve_demo_seeds_an_empty_folder_once),
        T(serve_demo_leaves_a_folder_with_data_alone),
        T(plain_serve_never_creates_demo_data),
        T(a_bad_serve_setting_stops_serve_but_not_a_data_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
