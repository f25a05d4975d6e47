/*
 * harness.c - the HTTP-level test harness (see harness.h).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    signal(SIGPIPE, SIG_IGN);
}

/* --- the backend ------------------------------------------------------------------------ */

bool test_pg(void)
{
    const char *b = getenv("BARBERIA_TEST_BACKEND");
    return b && !strcmp(b, "postgresql");
}

bool test_s3_env(const char **env, size_t *n)
{
    static char url[300], ak[160], sk[160];
    const char *s3 = getenv("BARBERIA_TEST_S3_URL");
    if (!s3 || !*s3) return false;
    const char *a = getenv("BARBERIA_TEST_S3_ACCESS_KEY");
    const char *k = getenv("BARBERIA_TEST_S3_SECRET_KEY");
    snprintf(url, sizeof url, "BARBERIA_STORAGE_URL=%s", s3);
    snprintf(ak, sizeof ak, "BARBERIA_STORAGE_ACCESS_KEY=%s", a && *a ? a : "barberia-test");
    snprintf(sk, sizeof sk, "BARBERIA_STORAGE_SECRET_KEY=%s", k && *k ? k : "barberia-test-secret");
    env[(*n)++] = url;
    env[(*n)++] = ak;
    env[(*n)++] = sk;
    return true;
}

static bool folder_only;

void test_folder_store(void)
{
    folder_only = true;
}

bool test_s3_all(void)
{
    const char *st = getenv("BARBERIA_TEST_STORAGE");
    const char *url = getenv("BARBERIA_TEST_S3_URL");
    return !folder_only && st && !strcmp(st, "s3") && url && *url;
}

__attribute__((constructor)) static void backend_check(void)
{
    const char *url = getenv("BARBERIA_TEST_PG");
    if (test_pg() && (!url || !*url)) {
        fprintf(stderr, "skipped: a PostgreSQL run needs BARBERIA_TEST_PG (scripts/pg-server)\n");
        exit(77);
    }
}

/* An environment for a child, built before the fork: a child of a
 * threaded test may run only what is safe after fork (no setenv, no
 * malloc: another thread may have held the allocator's lock), so it gets
 * this array ready for execve. */
struct child_envp {
    char **v; /* NULL-terminated, each entry owned */
    size_t n, cap;
};

/* Sets entry "NAME=value" (replacing NAME), or, without '=', removes NAME:
 * putenv's meaning. */
static void envp_put(struct child_envp *e, const char *entry)
{
    size_t k = strcspn(entry, "=");
    for (size_t i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], entry, k) && e->v[i][k] == '=') {
            free(e->v[i]);
            e->v[i] = e->v[--e->n];
            e->v[e->n] = NULL;
            break;
        }
    if (!entry[k]) return;
    if (e->n + 2 > e->cap) {
        e->cap = e->cap ? e->cap * 2 : 64;
        e->v = realloc(e->v, e->cap * sizeof *e->v);
        if (!e->v) fail_msg("out of memory");
    }
    e->v[e->n] = strdup(entry);
    if (!e->v[e->n]) fail_msg("out of memory");
    e->v[++e->n] = NULL;
}

static void envp_free(struct child_envp *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
    memset(e, 0, sizeof *e);
}

/* This process's environment with env's entries put on it. */
static void envp_with(struct child_envp *out, const char *const *env)
{
    memset(out, 0, sizeof *out);
    for (char **e = environ; e && *e; e++)
        envp_put(out, *e);
    for (; env && *env; env++)
        envp_put(out, *env);
}

/* Runs psql on the database at url: -c sql, unaligned, tuples only,
 * tab-separated (as db_exec's sqlite3), stopping at the first error; with
 * tags, command tags ("UPDATE 1") are printed too. Foreign keys are not
 * checked, as in the sqlite3 tool (session_replication_role). */
static int psql(const char *url, const char *sql, bool tags, const char *opath, const char *epath)
{
    static const char *const pg[] = {
        "PGOPTIONS=-c TimeZone=UTC -c DateStyle=ISO -c session_replication_role=replica", NULL};
    struct child_envp ce;
    envp_with(&ce, pg);
    const char *argv[] = {"psql", "-X", tags ? "-A" : "-q", "-A", "-t", "-F",
                          "\t",   "-v", "ON_ERROR_STOP=1",  "-d", url,  "-c",
                          sql,    NULL};
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execvpe("psql", (char *const *)argv, ce.v);
        _exit(127);
    }
    envp_free(&ce);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* psql's output o in the sqlite3 tool's form: timestamps as the API
 * writes them ("2031-03-10 10:00:00+00" -> "2031-03-10T10:00:00.000Z"),
 * booleans as 1 and 0; with tag, only the count of the last command tag.
 * Frees o; the caller frees the result. */
static char *psql_output_as_sqlite(char *o, bool tag)
{
    if (tag) {
        char *last = NULL;
        char *save = NULL;
        for (char *line = strtok_r(o, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
            last = line;
        const char *num = last ? strrchr(last, ' ') : NULL;
        char *r = NULL;
        if (asprintf(&r, "%s\n", num ? num + 1 : "0") < 0) fail_msg("out of memory");
        free(o);
        return r;
    }
    char *res = malloc(strlen(o) * 2 + 1), *out = res;
    for (const char *f = o; *f;) {
        size_t len = strcspn(f, "\t\n");
        bool ts = len >= 22 && f[4] == '-' && f[10] == ' ' && f[13] == ':' &&
                  !strncmp(f + len - 3, "+00", 3);
        if (ts) {
            memmove(out, f, 10);
            out[10] = 'T';
            memmove(out + 11, f + 11, 8);
            char ms[4] = "000";
            if (f[19] == '.')
                for (int i = 0; i < 3 && f[20 + i] >= '0' && f[20 + i] <= '9'; i++)
                    ms[i] = f[20 + i];
            out[19] = '.';
            memcpy(out + 20, ms, 3);
            out[23] = 'Z';
            out += 24;
        } else if (len == 1 && (*f == 't' || *f == 'f')) {
            *out++ = *f == 't' ? '1' : '0';
        } else {
            memmove(out, f, len);
            out += len;
        }
        f += len;
        if (*f) *out++ = *f++;
    }
    *out = '\0';
    free(o);
    return res;
}

/* Creates (or drops) the database of a server on a PostgreSQL run. */
static void pg_database(const struct srv *s, bool create)
{
    const char *name = strrchr(s->dburl, '/') + 1;
    char sql[256], opath[400], epath[400];
    snprintf(sql, sizeof sql, create ? "CREATE DATABASE %s" : "DROP DATABASE %s WITH (FORCE)",
             name);
    snprintf(opath, sizeof opath, "%s/pg.out", s->dir);
    snprintf(epath, sizeof epath, "%s/pg.err", s->dir);
    char url[512];
    snprintf(url, sizeof url, "%spostgres", getenv("BARBERIA_TEST_PG"));
    int rc = psql(url, sql, false, opath, epath);
    if (rc != 0) {
        char *e = read_file(epath, NULL);
        fprintf(stderr, "%s failed (%d): %s\n", sql, rc, e ? e : "");
        free(e);
        if (create) fail_msg("cannot create the test database");
    }
}

/* --- time ------------------------------------------------------------------------------ */

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        continue;
}

void weekday_utc(int n, char out[11])
{
    int64_t days = clock_now_ms() / 86400000LL + 3;
    for (;;) {
        int wd = (int)((days + 3) % 7); /* 0 Monday: 1970-01-01 was a Thursday */
        if (wd < 5 && n-- == 0) break;
        days++;
    }
    char ts[ISO8601_LEN + 1];
    iso8601_format(days * 86400000LL, ts);
    memcpy(out, ts, 10);
    out[10] = '\0';
}

bool wait_until(bool (*cond)(void *ud), void *ud, int timeout_ms)
{
    for (int64_t end = clock_mono_ms() + timeout_ms; clock_mono_ms() < end; sleep_ms(WAIT_POLL_MS))
        if (cond(ud)) return true;
    return cond(ud); /* once more at the deadline: a slow poll is not a miss */
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t k = fread(buf + n, 1, 4096, f);
        n += k;
        if (k == 0) break;
    }
    fclose(f);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

/* --- the server ------------------------------------------------------------------- */

void srv_init(struct srv *s)
{
    if (s->dir[0]) return;
    pthread_once(&curl_once, curl_init);
    snprintf(s->dir, sizeof s->dir, "/tmp/barberia-test-XXXXXX");
    if (!mkdtemp(s->dir)) fail_msg("mkdtemp: %s", strerror(errno));
    snprintf(s->data, sizeof s->data, "%s/data", s->dir);
    snprintf(s->log, sizeof s->log, "%s/server.log", s->dir);
    snprintf(s->out, sizeof s->out, "%s/server.out", s->dir);
    s->s3 = test_s3_all();
    if (test_pg()) {
        /* one database per server folder */
        static int counter;
        snprintf(s->dburl, sizeof s->dburl, "%st_%d_%d", getenv("BARBERIA_TEST_PG"), (int)getpid(),
                 __atomic_add_fetch(&counter, 1, 0));
        pg_database(s, true);
    }
}

void srv_init_peer(struct srv *s, const struct srv *first)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/barberia-test-XXXXXX");
    if (!mkdtemp(s->dir)) fail_msg("mkdtemp: %s", strerror(errno));
    snprintf(s->data, sizeof s->data, "%s", first->data);
    snprintf(s->dburl, sizeof s->dburl, "%s", first->dburl);
    snprintf(s->log, sizeof s->log, "%s/server.log", s->dir);
    snprintf(s->out, sizeof s->out, "%s/server.out", s->dir);
    s->peer = true;
    s->s3 = first->s3;
}

/* For a child that runs barberia: a clean BARBERIA_* environment plus the
 * server's database on a PostgreSQL run, plus env. */
static void child_env(struct child_envp *out, const struct srv *s, const char *const *env)
{
    const char *s3[4];
    size_t ns3 = 0;
    bool own_store = false; /* env says where photos go (or what is wrong with it) */
    for (const char *const *e = env; e && *e; e++)
        own_store |= !strncmp(*e, "BARBERIA_STORAGE_", 17);
    if (s && s->s3 && !own_store) (void)test_s3_env(s3, &ns3);
    memset(out, 0, sizeof *out);
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "BARBERIA_", 9) != 0) envp_put(out, *e);
    /* the service's own outbound calls in tests go to loopback doubles:
     * never through a proxy the machine may have configured */
    envp_put(out, "no_proxy=127.0.0.1,localhost,::1");
    envp_put(out, "NO_PROXY=127.0.0.1,localhost,::1");
    if (s && s->dburl[0]) {
        char db[sizeof s->dburl + 32];
        snprintf(db, sizeof db, "BARBERIA_DATABASE_URL=%s", s->dburl);
        envp_put(out, db);
    }
    /* the tests' shop is in Madrid (their local times, DST days and texts
     * are Madrid's) unless env says otherwise; an entry "BARBERIA_TZ"
     * without a value removes it, for the default */
    envp_put(out, "BARBERIA_TZ=Europe/Madrid");
    for (size_t i = 0; i < ns3; i++)
        envp_put(out, s3[i]);
    for (; env && *env; env++)
        envp_put(out, *env);
}

/* In a child that will run a server: it dies with the test process. A
 * failing test leaves through cmocka's longjmp, past its cleanup, and a
 * server left behind would run (and hold its port and CPU) for ever. */
static void die_with(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the test died before the prctl */
}

void srv_start(struct srv *s, const char *const *env, const char *const *args)
{
    srv_init(s);
    /* photos in the S3 test server on such a run, unless env names a store */
    for (const char *const *e = env; e && *e; e++)
        if (!strncmp(*e, "BARBERIA_STORAGE_URL=", 21)) {
            const char *test = getenv("BARBERIA_TEST_S3_URL");
            s->s3 = (*e)[21] && test && !strcmp(*e + 21, test);
        }
    const char *argv[64];
    int n = 0;
    argv[n++] = "barberia";
    argv[n++] = "serve";
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--data";
    argv[n++] = s->data;
    for (; args && *args && n < 62; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    /* a fresh log for each start, so the "listening" line is this run's;
     * the previous run's log is kept aside for srv_cleanup's checks */
    size_t oldlen = 0;
    char *old = read_file(s->log, &oldlen);
    if (old && oldlen) {
        char prev[400];
        snprintf(prev, sizeof prev, "%s/server.log.previous", s->dir);
        FILE *f = fopen(prev, "ab");
        if (f) {
            fwrite(old, 1, oldlen, f);
            fclose(f);
        }
    }
    free(old);
    int logfd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    int outfd = open(s->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (logfd < 0 || outfd < 0) fail_msg("cannot create the server's log files");
    struct child_envp ce;
    child_env(&ce, s, env);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        die_with(parent);
        dup2(outfd, 1);
        dup2(logfd, 2);
        execve(BARBERIA_BIN, (char *const *)argv, ce.v);
        _exit(127);
    }
    envp_free(&ce);
    close(logfd);
    close(outfd);
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    s->pid = pid;
    for (int waited = 0; waited < 60000; waited += 20) {
        char *log = read_file(s->log, NULL);
        char *p = log ? strstr(log, "listening on http://127.0.0.1:") : NULL;
        /* the whole line: a read may catch it half written, port and all */
        if (p && strchr(p, '\n')) {
            s->port = (int)strtol(p + strlen("listening on http://127.0.0.1:"), NULL, 10);
            snprintf(s->base, sizeof s->base, "http://127.0.0.1:%d", s->port);
            free(log);
            return;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            fail_msg("barberia serve exited before listening (status %d):\n%s",
                     WIFEXITED(st) ? WEXITSTATUS(st) : -1, log ? log : "");
        }
        free(log);
        sleep_ms(20);
    }
    fail_msg("barberia serve did not start listening within 60 s");
}

/* Waits (at most timeout_ms) for a child to exit. Returns its exit status
 * (128 + signal when a signal ended it), or -1 on timeout, after which the
 * child has been SIGKILLed and reaped. */
static int wait_child(pid_t pid, int timeout_ms)
{
    int st = 0;
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            if (WIFEXITED(st)) return WEXITSTATUS(st);
            if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
            return -1;
        }
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

int srv_stop_within(struct srv *s, int timeout_ms)
{
    if (s->pid <= 0) return -1;
    kill(s->pid, SIGTERM);
    int rc = wait_child(s->pid, timeout_ms);
    s->pid = 0;
    return rc;
}

int srv_stop(struct srv *s)
{
    return srv_stop_within(s, 60000);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void srv_cleanup(struct srv *s)
{
    int status = s->pid > 0 ? srv_stop(s) : 0;
    char *log = s->dir[0] ? srv_log(s) : strdup("");
    if (s->dir[0]) {
        /* earlier runs of the same server count too */
        char prev[400];
        snprintf(prev, sizeof prev, "%s/server.log.previous", s->dir);
        char *p = read_file(prev, NULL);
        if (p) {
            size_t n = strlen(p) + strlen(log) + 1;
            char *both = malloc(n);
            snprintf(both, n, "%s%s", p, log);
            free(p);
            free(log);
            log = both;
        }
    }
    bool sanitizer = strstr(log, "Sanitizer") || strstr(log, "runtime error:");
    if (s->dburl[0] && !s->peer) pg_database(s, false);
    s->dburl[0] = '\0';
    if (s->dir[0]) nftw(s->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    s->dir[0] = '\0';
    /* a server that crashed, failed to stop cleanly or tripped a sanitizer
     * fails the test group that ran it */
    if (status != 0 || sanitizer) {
        fprintf(stderr, "server log:\n%s\n", log);
        free(log);
        fail_msg("the server exited with status %d%s", status,
                 sanitizer ? " and a sanitizer report" : "");
    }
    free(log);
}

char *srv_log(const struct srv *s)
{
    char *log = read_file(s->log, NULL);
    return log ? log : strdup("");
}

bool srv_wait_log(const struct srv *s, const char *needle, int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 20) {
        char *log = srv_log(s);
        bool found = strstr(log, needle) != NULL;
        free(log);
        if (found) return true;
        sleep_ms(20);
    }
    return false;
}

int run_cli(const struct srv *s, const char *const *env, const char *const *args, bool data_flag,
            char **out, char **err)
{
    /* a CLI command that hangs fails its test rather than the whole run */
    return run_cli_within(s, env, args, data_flag, 600000, out, err);
}

int srv_cli(const struct srv *s, char **out, char **err, ...)
{
    const char *args[48];
    int n = 0;
    va_list ap;
    va_start(ap, err);
    const char *a;
    while ((a = va_arg(ap, const char *)) && n < 47)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return run_cli(s, NULL, args, true, out, err);
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

/* --- fixtures ----------------------------------------------------------------------------- */

void unique_email(char *buf, size_t n, const char *prefix)
{
    static int counter;
    snprintf(buf, n, "%s-%d-%d@test.example", prefix, __atomic_add_fetch(&counter, 1, 0),
             (int)getpid());
}

static void take_session(struct user *u, const struct resp *r)
{
    const json_t *user = json_object_get(r->json, "user");
    const char *id = jstr(user, "id"), *tok = jstr(r->json, "token");
    if (!id || !tok) fail_msg("no user/token in: %s", r->body);
    snprintf(u->id, sizeof u->id, "%s", id);
    snprintf(u->token, sizeof u->token, "%s", tok);
}

void signup_user(const struct srv *s, struct user *u, const char *nombre)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, "cliente");
    snprintf(u->password, sizeof u->password, "secreto-%d", rand() % 100000);
    json_t *b = json_pack("{s:s, s:s}", "email", u->email, "password", u->password);
    if (nombre) json_object_set_new(b, "nombre", json_string(nombre));
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(s, "POST", "/api/auth/signup", NULL, text, &r);
    free(text);
    if (r.status != 201) fail_msg("signup failed: %ld %s", r.status, r.body);
    take_session(u, &r);
    resp_free(&r);
}

void deleted_user(const struct srv *s, struct user *u, const char *nombre)
{
    signup_user(s, u, nombre);
    json_t *b = json_pack("{s:s}", "password", u->password);
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(s, "DELETE", "/api/auth/me", u->token, text, &r);
    free(text);
    if (r.status != 200) fail_msg("account deletion failed: %ld %s", r.status, r.body);
    resp_free(&r);
}

void make_user(const struct srv *s, struct user *u, const char *nombre, const char *rol)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, rol ? rol : "user");
    snprintf(u->password, sizeof u->password, "clave-%d", rand() % 100000);
    const char *args[16];
    int n = 0;
    args[n++] = "user";
    args[n++] = "add";
    args[n++] = "--email";
    args[n++] = u->email;
    args[n++] = "--password";
    args[n++] = u->password;
    if (nombre) {
        args[n++] = "--nombre";
        args[n++] = nombre;
    }
    if (rol) {
        args[n++] = "--rol";
        args[n++] = rol;
    }
    args[n] = NULL;
    char *out = NULL, *err = NULL;
    int st = run_cli(s, NULL, args, true, &out, &err);
    if (st != 0) fail_msg("user add failed (%d): %s", st, err ? err : "");
    free(out);
    free(err);
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", u->email, u->password);
    struct resp r;
    http_json(s, "POST", "/api/auth/login", NULL, body, &r);
    if (r.status != 200) fail_msg("login failed: %ld %s", r.status, r.body);
    take_session(u, &r);
    resp_free(&r);
}

static char *first_line(char *out)
{
    if (!out) return NULL;
    out[strcspn(out, "\n")] = '\0';
    return out;
}

char *make_barbero(const struct srv *s, const char *nombre)
{
    char *out = NULL, *err = NULL;
    int st = srv_cli(s, &out, &err, "barbero", "add", "--nombre", nombre, NULL);
    if (st != 0) fail_msg("barbero add failed (%d): %s", st, err ? err : "");
    free(err);
    return first_line(out);
}

char *make_servicio(const struct srv *s, const char *nombre, int duracion_min, double precio)
{
    char dur[32], pr[64];
    snprintf(dur, sizeof dur, "%d", duracion_min);
    snprintf(pr, sizeof pr, "%.2f", precio);
    char *out = NULL, *err = NULL;
    int st = srv_cli(s, &out, &err, "servicio", "add", "--nombre", nombre, "--duracion-min", dur,
                     "--precio", pr, NULL);
    if (st != 0) fail_msg("servicio add failed (%d): %s", st, err ? err : "");
    free(err);
    return first_line(out);
}

char *book(const struct srv *s, const struct user *u, const char *barbero, const char *servicio,
           const char *fecha_inicio, const char *notas)
{
    json_t *b = json_pack("{s:s, s:s, s:s}", "barbero_id", barbero, "servicio_id", servicio,
                          "fecha_inicio", fecha_inicio);
    if (notas) json_object_set_new(b, "notas", json_string(notas));
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(s, "POST", "/api/citas", u->token, text, &r);
    free(text);
    if (r.status != 201) fail_msg("booking failed: %ld %s", r.status, r.body);
    const char *id = jstr(json_object_get(r.json, "cita"), "id");
    if (!id) fail_msg("no cita id in: %s", r.body);
    char *copy = strdup(id);
    resp_free(&r);
    return copy;
}

json_t *upload_photo(const struct srv *s, const struct user *u, const char *cita, const char *tipo,
                     const void *bytes, size_t len)
{
    struct part parts[] = {{"file", bytes, len, "foto.png", "image/png"},
                           {"cita_id", cita, 0, NULL, NULL},
                           {"tipo", tipo, 0, NULL, NULL}};
    struct resp r;
    http_multipart(s, "/api/fotos", u->token, parts, 3, &r);
    if (r.status != 201) fail_msg("upload expected 201, got %ld: %s", r.status, r.body);
    json_t *foto = json_incref(json_object_get(r.json, "foto"));
    resp_free(&r);
    return foto;
}

char *photo_path(const json_t *foto)
{
    const char *url = jstr(foto, "url");
    const char *p = url ? strstr(url, "/storage/") : NULL;
    if (!p) fail_msg("a photo url without /storage/: %s", url ? url : "(none)");
    return strdup(p);
}

const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* A "Name:   123 kB" line of /proc/<pid>/status. */
static long proc_status_kib(pid_t pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *st = read_file(path, NULL);
    if (!st) return -1;
    const char *p = strstr(st, name);
    long v = p ? strtol(p + strlen(name), NULL, 10) : -1;
    free(st);
    return v;
}

long proc_rss_kib(pid_t pid)
{
    return proc_status_kib(pid, "VmRSS:");
}

long proc_peak_rss_kib(pid_t pid)
{
    return proc_status_kib(pid, "VmHWM:");
}

bool built_with_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#else
    return false;
#endif
}

/* --- the database through the sqlite3 tool, and shape checks --------------------------- */

int db_exec(const struct srv *s, const char *sql, char **out)
{
    static int counter;
    int k = __atomic_add_fetch(&counter, 1, 0);
    char db[400], opath[400], epath[400];
    snprintf(db, sizeof db, "%s/barberia.db", s->data);
    snprintf(opath, sizeof opath, "%s/sql-%d.out", s->dir, k);
    snprintf(epath, sizeof epath, "%s/sql-%d.err", s->dir, k);
    if (s->dburl[0]) {
        /* "...; SELECT changes();" (SQLite's count of the rows the last
         * statement touched): psql prints that as the command's tag */
        static const char changes[] = "SELECT changes();";
        char *text = strdup(sql);
        size_t n = strlen(text);
        bool tag = n >= strlen(changes) && !strcmp(text + n - strlen(changes), changes);
        if (tag) text[n - strlen(changes)] = '\0';
        int rc = psql(s->dburl, text, tag, opath, epath);
        free(text);
        char *o = read_file(opath, NULL), *e = read_file(epath, NULL);
        if (o) o = psql_output_as_sqlite(o, tag);
        remove(opath);
        remove(epath);
        if (rc != 0) fprintf(stderr, "psql failed (%d) on: %s\n%s\n", rc, sql, e ? e : "");
        free(e);
        if (out)
            *out = o ? o : strdup("");
        else
            free(o);
        return rc;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execlp("sqlite3", "sqlite3", "-batch", "-bail", "-noheader", "-separator", "\t", "-cmd",
               ".timeout 30000", db, sql, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char *o = read_file(opath, NULL);
    char *e = read_file(epath, NULL);
    remove(opath);
    remove(epath);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (rc != 0) fprintf(stderr, "sqlite3 failed (%d) on: %s\n%s\n", rc, sql, e ? e : "");
    free(e);
    if (out)
        *out = o ? o : strdup("");
    else
        free(o);
    return rc;
}

int db_forced_failure(const struct srv *s, const char *table, bool on)
{
    char sql[600];
    if (!on)
        snprintf(sql, sizeof sql, "DROP TRIGGER IF EXISTS %s_fallo_forzado%s%s;", table,
                 s->dburl[0] ? " ON " : "", s->dburl[0] ? table : "");
    else if (s->dburl[0])
        snprintf(sql, sizeof sql,
                 "CREATE OR REPLACE FUNCTION fallo_forzado() RETURNS trigger LANGUAGE plpgsql "
                 "AS $$BEGIN RAISE EXCEPTION 'fallo forzado'; END$$; "
                 "CREATE TRIGGER %s_fallo_forzado BEFORE INSERT ON %s FOR EACH ROW "
                 "EXECUTE FUNCTION fallo_forzado();",
                 table, table);
    else
        snprintf(sql, sizeof sql,
                 "CREATE TRIGGER %s_fallo_forzado BEFORE INSERT ON %s "
                 "BEGIN SELECT RAISE(ABORT, 'fallo forzado'); END;",
                 table, table);
    char *out = NULL;
    int rc = db_exec(s, sql, &out);
    free(out);
    return rc;
}

static char *db_vquery(const struct srv *s, const char *fmt, va_list ap)
{
    char *sql = NULL;
    if (vasprintf(&sql, fmt, ap) < 0) fail_msg("out of memory");
    char *out = NULL;
    int rc = db_exec(s, sql, &out);
    if (rc != 0) {
        free(out);
        fail_msg("sqlite3 exited with %d on: %s", rc, sql);
    }
    free(sql);
    size_t n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
        out[--n] = '\0';
    return out;
}

char *db_query(const struct srv *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = db_vquery(s, fmt, ap);
    va_end(ap);
    return out;
}

long db_count(const struct srv *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = db_vquery(s, fmt, ap);
    va_end(ap);
    char *end;
    long v = strtol(out, &end, 10);
    bool ok = end != out && *end == '\0';
    if (!ok) {
        fprintf(stderr, "not a number: '%s'\n", out);
        free(out);
        fail_msg("a count query did not answer one integer");
    }
    free(out);
    return v;
}

bool is_lower_uuid(const char *s)
{
    if (!s || strlen(s) != 36) return false;
    for (int i = 0; i < 36; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-') return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

void expect_keys(const json_t *o, ...)
{
    if (!json_is_object(o)) fail_msg("expected a JSON object");
    va_list ap;
    va_start(ap, o);
    size_t n = 0;
    const char *k;
    while ((k = va_arg(ap, const char *))) {
        n++;
        if (!json_object_get(o, k)) {
            va_end(ap);
            char *text = json_dumps(o, JSON_COMPACT);
            fprintf(stderr, "object: %s\n", text ? text : "?");
            free(text);
            fail_msg("member \"%s\" missing", k);
        }
    }
    va_end(ap);
    if (json_object_size(o) != n) {
        char *text = json_dumps(o, JSON_COMPACT);
        fprintf(stderr, "object: %s\n", text ? text : "?");
        free(text);
        fail_msg("expected exactly %zu members, got %zu", n, json_object_size(o));
    }
}

/* --- processes, raw HTTP and folders (operator-facing tests) ----------------------------- */

#include <sys/time.h>

static int run_program_for(const struct srv *s, const char *const *argv, const char *const *env,
                           int timeout_ms, char **out, char **err)
{
    char opath[] = "/tmp/barberia-run-out-XXXXXX", epath[] = "/tmp/barberia-run-err-XXXXXX";
    int o = mkstemp(opath), e = mkstemp(epath);
    if (o < 0 || e < 0) fail_msg("mkstemp: %s", strerror(errno));
    struct child_envp ce;
    child_env(&ce, s, env);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(o, 1);
        dup2(e, 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        execve(argv[0], (char *const *)argv, ce.v);
        _exit(127);
    }
    envp_free(&ce);
    close(o);
    close(e);
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    int rc = wait_child(pid, timeout_ms);
    if (out) *out = read_file(opath, NULL);
    if (err) *err = read_file(epath, NULL);
    unlink(opath);
    unlink(epath);
    return rc;
}

int run_program(const char *const *argv, const char *const *env, int timeout_ms, char **out,
                char **err)
{
    return run_program_for(NULL, argv, env, timeout_ms, out, err);
}

int run_program_as(const struct srv *s, const char *const *argv, int timeout_ms, char **out,
                   char **err)
{
    return run_program_for(s, argv, NULL, timeout_ms, out, err);
}

void make_cert(const char *dir, char *cert, char *key, size_t n)
{
    snprintf(cert, n, "%s/cert.pem", dir);
    snprintf(key, n, "%s/key.pem", dir);
    const char *argv[] = {"/usr/bin/openssl",
                          "req",
                          "-x509",
                          "-newkey",
                          "rsa:2048",
                          "-nodes",
                          "-keyout",
                          key,
                          "-out",
                          cert,
                          "-days",
                          "2",
                          "-subj",
                          "/CN=127.0.0.1",
                          "-addext",
                          "subjectAltName=IP:127.0.0.1,DNS:localhost",
                          NULL};
    char *err = NULL;
    int st = run_program(argv, NULL, 120000, NULL, &err);
    if (st != 0) fail_msg("openssl req failed (%d): %s", st, err ? err : "");
    free(err);
}

int run_cli_within(const struct srv *s, const char *const *env, const char *const *args,
                   bool data_flag, int timeout_ms, char **out, char **err)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = BARBERIA_BIN;
    for (; args && *args && n < 60; args++)
        argv[n++] = *args;
    if (data_flag) {
        argv[n++] = "--data";
        argv[n++] = s->data;
    }
    argv[n] = NULL;
    return run_program_for(s, argv, env, timeout_ms, out, err);
}

int srv_wait_exit(struct srv *s, int timeout_ms)
{
    if (s->pid <= 0) return -1;
    int rc = wait_child(s->pid, timeout_ms);
    s->pid = 0;
    return rc;
}

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

static __thread size_t counted_files;

static int count_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)path;
    (void)ftw;
    if (flag == FTW_F && S_ISREG(sb->st_mode)) counted_files++;
    return 0;
}

size_t count_files(const char *dir)
{
    counted_files = 0;
    if (nftw(dir, count_entry, 16, FTW_PHYS) != 0) return 0;
    return counted_files;
}

void photo_aside(const struct srv *s, bool aside)
{
    char *key = db_query(s, "SELECT storage_path FROM fotos_cita ORDER BY id LIMIT 1");
    char obj[700], moved[720];
    snprintf(obj, sizeof obj, "%s/storage/fotos-citas/%s", s->data, key);
    snprintf(moved, sizeof moved, "%s.aside", obj);
    if (aside ? rename(obj, moved) : rename(moved, obj))
        fail_msg("photo %s: %s", key, strerror(errno));
    free(key);
}

bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void rm_tree(const char *dir)
{
    if (dir && dir[0]) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* --- the photo bucket ---------------------------------------------------------------------- */

#define PHOTO_BUCKET "fotos-citas"

/* The room keep_body gives a body of len bytes (and its NUL): doubling, so
 * that a 5 MiB object is not copied again at every 16 KiB chunk (under ASan,
 * on a busy machine, that alone took longer than the call's 10 s bound). */
static size_t body_room(size_t len)
{
    size_t room = 4096;
    while (room < len + 1)
        room *= 2;
    return room;
}

static size_t keep_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct resp *r = ud;
    size_t n = size * nmemb;
    char *b = r->body;
    if (!b || body_room(r->len + n) > body_room(r->len)) b = realloc(b, body_room(r->len + n));
    if (!b) return 0;
    memcpy(b + r->len, data, n);
    r->body = b;
    r->len += n;
    b[r->len] = '\0';
    return n;
}

/* One anonymous call to the S3 test server (it serves unsigned requests,
 * docs/testing.md): the bucket's path plus rest. OUT: *r. Its bound is
 * generous: a loaded machine makes s3rver slow, never wrong (a 5 MiB read
 * took over 10 s in a sanitizer run beside other builds). */
static void s3_call(const char *method, const char *rest, struct resp *r)
{
    memset(r, 0, sizeof *r);
    const char *base = getenv("BARBERIA_TEST_S3_URL");
    if (!base || !*base) fail_msg("no S3 test server (BARBERIA_TEST_S3_URL)");
    pthread_once(&curl_once, curl_init);
    char *url = NULL;
    if (asprintf(&url, "%s/%s/%s", base, PHOTO_BUCKET, rest) < 0) fail_msg("out of memory");
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
    if (!strcmp(method, "HEAD")) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    CURLcode cc = curl_easy_perform(c);
    if (cc != CURLE_OK) fail_msg("S3 %s %s: %s", method, url, curl_easy_strerror(cc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    free(url);
}

/* key with each byte outside [A-Za-z0-9/._~-] percent-encoded. */
static char *key_escaped(const char *key)
{
    size_t n = strlen(key);
    char *out = malloc(n * 3 + 1), *w = out;
    for (const unsigned char *k = (const unsigned char *)key; *k; k++) {
        if ((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ||
            strchr("/._~-", *k))
            *w++ = (char)*k;
        else
            w += snprintf(w, 4, "%%%02X", *k);
    }
    *w = '\0';
    return out;
}

static void folder_object(const struct srv *s, const char *key, char *out, size_t n)
{
    if (snprintf(out, n, "%s/storage/" PHOTO_BUCKET "/%s", s->data, key) >= (int)n)
        fail_msg("path too long");
}

bool obj_exists(const struct srv *s, const char *key)
{
    if (!s->s3) {
        char path[1024];
        folder_object(s, key, path, sizeof path);
        return file_exists(path);
    }
    char *k = key_escaped(key);
    struct resp r;
    s3_call("HEAD", k, &r);
    free(k);
    long st = r.status;
    resp_free(&r);
    if (st != 200 && st != 404) fail_msg("S3 HEAD %s: HTTP %ld", key, st);
    return st == 200;
}

char *obj_read(const struct srv *s, const char *key, size_t *len)
{
    if (!s->s3) {
        char path[1024];
        folder_object(s, key, path, sizeof path);
        return read_file(path, len);
    }
    char *k = key_escaped(key);
    struct resp r;
    s3_call("GET", k, &r);
    free(k);
    if (r.status == 404) {
        resp_free(&r);
        return NULL;
    }
    if (r.status != 200) fail_msg("S3 GET %s: HTTP %ld", key, r.status);
    char *body = r.body ? r.body : strdup("");
    if (len) *len = r.len;
    r.body = NULL;
    resp_free(&r);
    return body;
}

size_t obj_count(const struct srv *s, const char *prefix)
{
    if (!s->s3) {
        char path[1024];
        folder_object(s, prefix, path, sizeof path);
        return count_files(path);
    }
    /* ListObjectsV2 of up to 1000 keys under the prefix: enough here */
    char *p = key_escaped(prefix);
    char *rest = NULL;
    if (asprintf(&rest, "?list-type=2&max-keys=1000&prefix=%s%%2F", p) < 0)
        fail_msg("out of memory");
    free(p);
    struct resp r;
    s3_call("GET", rest, &r);
    free(rest);
    if (r.status == 404) { /* no bucket yet: nothing in it */
        resp_free(&r);
        return 0;
    }
    if (r.status != 200) fail_msg("S3 list %s: HTTP %ld", prefix, r.status);
    size_t n = 0;
    for (const char *k = r.body; (k = strstr(k, "<Key>")) != NULL; k += 5)
        n++;
    resp_free(&r);
    return n;
}

void obj_set_raw_type(const struct srv *s, const char *key, const char *content_type)
{
    if (!s->s3) {
        /* the folder store keeps an object's type in <storage>/.meta/<bucket>/<key> */
        char path[1024];
        if (snprintf(path, sizeof path, "%s/storage/.meta/" PHOTO_BUCKET "/%s", s->data, key) >=
            (int)sizeof path)
            fail_msg("path too long");
        FILE *f = fopen(path, "w");
        if (!f) fail_msg("cannot write %s: %s", path, strerror(errno));
        bool ok = fputs(content_type, f) >= 0;
        if (fclose(f) != 0 || !ok) fail_msg("cannot write %s", path);
        return;
    }
    /* the same bytes put again, anonymously, with exactly that header */
    size_t len = 0;
    char *bytes = obj_read(s, key, &len);
    if (!bytes) fail_msg("no object %s to retype", key);
    const char *base = getenv("BARBERIA_TEST_S3_URL");
    char *k = key_escaped(key), *url = NULL, *header = NULL;
    if (asprintf(&url, "%s/%s/%s", base, PHOTO_BUCKET, k) < 0 ||
        asprintf(&header, "Content-Type: %s", content_type) < 0)
        fail_msg("out of memory");
    struct curl_slist *hs = curl_slist_append(NULL, header);
    struct resp r;
    memset(&r, 0, sizeof r);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, bytes);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    CURLcode cc = curl_easy_perform(c);
    if (cc != CURLE_OK) fail_msg("S3 PUT %s: %s", url, curl_easy_strerror(cc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    if (r.status != 200) fail_msg("S3 PUT %s: HTTP %ld %s", url, r.status, r.body ? r.body : "");
    curl_easy_cleanup(c);
    curl_slist_free_all(hs);
    resp_free(&r);
    free(header);
    free(url);
    free(k);
    free(bytes);
}

/* --- racers ------------------------------------------------------------------------------- */

struct racer_slot {
    pthread_barrier_t *go;
    void (*fn)(void *item);
    void *item;
};

static void *racer_main(void *arg)
{
    struct racer_slot *x = arg;
    pthread_barrier_wait(x->go);
    x->fn(x->item);
    return NULL;
}

void race_threads(size_t n, void (*fn)(void *item), void *items, size_t size)
{
    if (n == 0) return;
    if (n > RACE_MAX) fail_msg("race_threads: at most %d racers", RACE_MAX);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)n);
    pthread_t th[RACE_MAX];
    struct racer_slot slot[RACE_MAX];
    for (size_t i = 0; i < n; i++) {
        slot[i] = (struct racer_slot){&go, fn, (char *)items + i * size};
        if (pthread_create(&th[i], NULL, racer_main, &slot[i]) != 0)
            fail_msg("pthread_create: %s", strerror(errno));
    }
    for (size_t i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
}

/* --- a server with fixtures ------------------------------------------------------------------ */

void fixture_start(struct fixture *f, const char *const *env, const char *barbero_nombre,
                   const char *servicio_nombre, int duracion_min, double precio)
{
    srv_start(&f->s, env, NULL);
    f->barbero = make_barbero(&f->s, barbero_nombre);
    f->servicio = make_servicio(&f->s, servicio_nombre, duracion_min, precio);
}

void fixture_stop(struct fixture *f)
{
    free(f->barbero);
    free(f->servicio);
    f->barbero = f->servicio = NULL;
    if (f->s.dir[0]) srv_cleanup(&f->s);
    memset(&f->s, 0, sizeof f->s);
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

/* --- the SMTP sink --------------------------------------------------------------------------- */

#define PYTHON  "/usr/bin/python3"
#define SINK_PY BARBERIA_TESTS_DIR "/tools/smtp_sink.py"

void smtp_sink_start(struct smtp_sink *k, const char *root, int port, const char *const *extra)
{
    snprintf(k->dir, sizeof k->dir, "%s/mail", root);
    snprintf(k->log, sizeof k->log, "%s/sink.log", root);
    char portarg[16];
    snprintf(portarg, sizeof portarg, "%d", port);
    const char *argv[32] = {PYTHON, SINK_PY, "--dir", k->dir, "--port", portarg};
    int n = 6;
    for (; extra && *extra && n < 30; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    int pfd[2];
    if (pipe(pfd) != 0) fail_msg("pipe: %s", strerror(errno));
    int logfd = open(k->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (logfd < 0) fail_msg("cannot create %s", k->log);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        die_with(parent);
        dup2(pfd[1], 1);
        dup2(logfd, 2);
        close(pfd[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    close(logfd);
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    k->pid = pid;
    /* the first line of its stdout is the port it listens on */
    char line[32] = "";
    size_t got = 0;
    int64_t deadline = clock_mono_ms() + 60000;
    while (!memchr(line, '\n', got) && got < sizeof line - 1) {
        struct pollfd p = {pfd[0], POLLIN, 0};
        int left = (int)(deadline - clock_mono_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0) break;
        ssize_t r = read(pfd[0], line + got, sizeof line - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    line[got] = '\0';
    close(pfd[0]);
    k->port = (int)strtol(line, NULL, 10);
    if (k->port <= 0) {
        char *log = read_file(k->log, NULL);
        fail_msg("smtp_sink.py did not start: %s", log ? log : "");
    }
    if (port && k->port != port) fail_msg("smtp_sink.py listens on %d, not %d", k->port, port);
}

int smtp_sink_stop(struct smtp_sink *k)
{
    if (k->pid <= 0) return 0;
    kill(k->pid, SIGTERM);
    int rc = wait_child(k->pid, 20000);
    k->pid = 0;
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t smtp_sink_files(const struct smtp_sink *k, char ***paths)
{
    *paths = NULL;
    DIR *d = opendir(k->dir);
    if (!d) return 0;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < 6 || strcmp(e->d_name + l - 5, ".json")) continue;
        *paths = realloc(*paths, (n + 1) * sizeof **paths);
        size_t need = strlen(k->dir) + l + 2;
        (*paths)[n] = malloc(need);
        snprintf((*paths)[n], need, "%s/%s", k->dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n) qsort(*paths, n, sizeof **paths, cmp_names);
    return n;
}

void smtp_sink_free_paths(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

size_t smtp_sink_count(const struct smtp_sink *k)
{
    char **paths;
    size_t n = smtp_sink_files(k, &paths);
    smtp_sink_free_paths(paths, n);
    return n;
}

struct sink_goal {
    const struct smtp_sink *k;
    size_t n;
};

static bool sink_holds(void *ud)
{
    const struct sink_goal *g = ud;
    return smtp_sink_count(g->k) >= g->n;
}

bool smtp_sink_wait(const struct smtp_sink *k, size_t n, int timeout_ms)
{
    struct sink_goal g = {k, n};
    return wait_until(sink_holds, &g, timeout_ms);
}

json_t *smtp_sink_message(const char *path)
{
    const char *argv[] = {PYTHON, BARBERIA_TESTS_DIR "/tools/mail_to_json.py", path, NULL};
    char *out = NULL, *err = NULL;
    int st = run_program(argv, NULL, 60000, &out, &err);
    if (st != 0) fail_msg("mail_to_json.py failed (%d): %s", st, err ? err : "");
    json_t *j = json_loads(out, 0, NULL);
    if (!j) fail_msg("mail_to_json.py printed no JSON: %s", out);
    free(out);
    free(err);
    return j;
}

/* --- another process holding the database's write lock ------------------------------------- */

static bool file_present(void *ud)
{
    return access((const char *)ud, F_OK) == 0;
}

static void write_all(int fd, const char *text)
{
    for (size_t len = strlen(text); len;) {
        ssize_t k = write(fd, text, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return; /* the tool is gone: its exit status tells */
        text += k;
        len -= (size_t)k;
    }
}

void db_lock_take(const struct srv *s, struct db_locker *l, const char *sql)
{
    if (s->dburl[0]) skip(); /* the sqlite3 tool's lock: nothing to take on PostgreSQL */
    static int counter;
    memset(l, 0, sizeof *l);
    snprintf(l->marker, sizeof l->marker, "%s/db-locked-%d", s->dir,
             __atomic_add_fetch(&counter, 1, 0));
    char db[400];
    snprintf(db, sizeof db, "%s/barberia.db", s->data);
    int pfd[2];
    if (pipe(pfd) != 0) fail_msg("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[0], 0);
        close(pfd[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        /* -bail: a failed BEGIN IMMEDIATE ends the tool before the marker */
        execlp("sqlite3", "sqlite3", "-batch", "-bail", "-cmd", ".timeout 30000", db, (char *)NULL);
        _exit(127);
    }
    close(pfd[0]);
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    l->pid = pid;
    l->in = pfd[1];
    char *script = NULL;
    if (asprintf(&script, "BEGIN IMMEDIATE;\n%s%s.system touch %s\n", sql ? sql : "",
                 sql ? "\n" : "", l->marker) < 0)
        fail_msg("out of memory");
    write_all(l->in, script);
    free(script);
    if (!wait_until(file_present, l->marker, 60000)) {
        db_lock_kill(l);
        fail_msg("the sqlite3 tool could not take the write lock within 60 s");
    }
}

int db_lock_release(struct db_locker *l, bool commit)
{
    if (l->pid <= 0) return -1;
    write_all(l->in, commit ? "COMMIT;\n.quit\n" : "ROLLBACK;\n.quit\n");
    close(l->in);
    l->in = -1;
    int rc = wait_child(l->pid, 60000);
    l->pid = 0;
    return rc;
}

void db_lock_kill(struct db_locker *l)
{
    if (l->pid <= 0) return;
    kill(l->pid, SIGKILL);
    int st;
    waitpid(l->pid, &st, 0);
    l->pid = 0;
    if (l->in >= 0) close(l->in);
    l->in = -1;
}

/* --- the doubles ------------------------------------------------------------------------- */

int double_spawn(const char *const *argv, const char *out, const char *err, pid_t *pid)
{
    *pid = 0;
    int outfd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int errfd = err ? open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    assert_true(outfd >= 0 && (!err || errfd >= 0));
    char path[512];
    snprintf(path, sizeof path, "%s/%s", BARBERIA_DOUBLES_DIR, argv[0]);
    pid_t p = fork();
    if (p == 0) {
        dup2(outfd, 1);
        if (errfd >= 0) dup2(errfd, 2);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    close(outfd);
    if (errfd >= 0) close(errfd);
    assert_true(p > 0);
    *pid = p;
    int port = 0;
    for (int waited = 0; waited < 60000 && !port; waited += 20) {
        char *text = read_file(out, NULL);
        const char *at = text ? strstr(text, "port ") : NULL;
        if (at && strchr(at, '\n')) port = (int)strtol(at + 5, NULL, 10);
        free(text);
        int st;
        if (!port && waitpid(p, &st, WNOHANG) == p) {
            *pid = 0;
            fail_msg("%s exited before listening", argv[0]);
        }
        if (!port) sleep_ms(20);
    }
    if (!port) fail_msg("%s did not print its port within 60 s", argv[0]);
    return port;
}

/* --- the Google Calendar double --------------------------------------------------------- */

#define GCAL_CLIENT_EMAIL "barberia-test@barberia-test.iam.gserviceaccount.com"
#define GCAL_CALENDAR_ID  "barberia@group.calendar.google.com"

static void gcal_keypair(const char *priv_path, const char *pub_path)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, NULL);
    EVP_PKEY *k = NULL;
    assert_non_null(ctx);
    assert_int_equal(EVP_PKEY_keygen_init(ctx), 1);
    assert_true(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048) > 0);
    assert_int_equal(EVP_PKEY_keygen(ctx, &k), 1);
    FILE *f = fopen(priv_path, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
    f = fopen(pub_path, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_PUBKEY(f, k), 1);
    fclose(f);
    EVP_PKEY_free(k);
    EVP_PKEY_CTX_free(ctx);
}

void gcal_dbl_start(struct gcal_dbl *d, const char *root)
{
    memset(d, 0, sizeof *d);
    snprintf(d->root, sizeof d->root, "%s", root);
    char key[320], pub[320];
    snprintf(key, sizeof key, "%s/gcal-key.pem", root);
    snprintf(pub, sizeof pub, "%s/gcal-pub.pem", root);
    gcal_keypair(key, pub);
    snprintf(d->log, sizeof d->log, "%s/gcal.jsonl", root);
    snprintf(d->out, sizeof d->out, "%s/gcal.out", root);
    snprintf(d->err, sizeof d->err, "%s/gcal.err", root);
    const char *argv[] = {"gcal_double",     "--public-key", pub,    "--client-email",
                          GCAL_CLIENT_EMAIL, "--log",        d->log, NULL};
    int port = double_spawn(argv, d->out, d->err, &d->pid);
    snprintf(d->http.base, sizeof d->http.base, "http://127.0.0.1:%d", port);
    snprintf(d->token_url, sizeof d->token_url, "http://127.0.0.1:%d/token", port);
    /* a service-account key file as Google hands them out */
    snprintf(d->creds, sizeof d->creds, "%s/gcal-service-account.json", root);
    char *pem = read_file(key, NULL);
    assert_non_null(pem);
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type", "service_account",
                          "project_id", "barberia-test", "private_key_id", "0123456789abcdef",
                          "private_key", pem, "client_email", GCAL_CLIENT_EMAIL, "client_id",
                          "123456789012345678901", "auth_uri",
                          "https://accounts.google.com/o/oauth2/auth", "token_uri", d->token_url);
    free(pem);
    assert_int_equal(json_dump_file(j, d->creds, JSON_INDENT(2)), 0);
    json_decref(j);
    snprintf(d->env[0], sizeof d->env[0], "BARBERIA_GOOGLE_CREDENTIALS=%s", d->creds);
    snprintf(d->env[1], sizeof d->env[1], "BARBERIA_GOOGLE_API_URL=%s/calendar/v3", d->http.base);
    snprintf(d->env[2], sizeof d->env[2], "BARBERIA_GOOGLE_CALENDAR_ID=%s", GCAL_CALENDAR_ID);
    snprintf(d->env[3], sizeof d->env[3], "BARBERIA_CALENDAR_TIMEOUT_MS=30000");
}

void gcal_dbl_stop(struct gcal_dbl *d)
{
    if (d->pid <= 0) return;
    kill(d->pid, SIGTERM);
    int st = 0;
    bool gone = false;
    for (int waited = 0; waited < 20000 && !gone; waited += 10) {
        gone = waitpid(d->pid, &st, WNOHANG) == d->pid;
        if (!gone) sleep_ms(10);
    }
    if (!gone) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &st, 0);
    }
    d->pid = 0;
    if (!gone || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("gcal_double did not stop promptly and cleanly on SIGTERM");
}

void gcal_dbl_control(struct gcal_dbl *d, const char *query)
{
    char path[256];
    snprintf(path, sizeof path, "/control?%s", query);
    struct resp r;
    http_req(&d->http, "POST", path, NULL, &r);
    if (r.status != 200) fail_msg("double control %s: %ld %s", query, r.status, r.body);
    resp_free(&r);
}

size_t gcal_dbl_mark(const struct gcal_dbl *d)
{
    struct stat st;
    return stat(d->log, &st) == 0 ? (size_t)st.st_size : 0;
}

json_t *gcal_dbl_since(const struct gcal_dbl *d, size_t mark)
{
    size_t len = 0;
    char *text = read_file(d->log, &len);
    json_t *all = json_array();
    for (char *line = text && mark <= len ? text + mark : NULL; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break;
        json_t *e = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (!e) fail_msg("double log line is not JSON: %.*s", (int)(nl - line), line);
        json_array_append_new(all, e);
        line = nl + 1;
    }
    free(text);
    return all;
}
