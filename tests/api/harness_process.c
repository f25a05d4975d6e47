/*
 * harness_process.c - the server process and the other programs a test runs: time and
 * files, the environment of a child, starting and stopping `barberia
 * serve`, CLI commands, folders and /proc readings (see harness.h).
 */
#define _GNU_SOURCE
#include "harness_internal.h"
#include "util/iso8601.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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

/* --- the environment of a child ------------------------------------------------------ */

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

void envp_free(struct child_envp *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
    memset(e, 0, sizeof *e);
}

/* This process's environment with env's entries put on it. */
void envp_with(struct child_envp *out, const char *const *env)
{
    memset(out, 0, sizeof *out);
    for (char **e = environ; e && *e; e++)
        envp_put(out, *e);
    for (; env && *env; env++)
        envp_put(out, *env);
}

/* --- the server ------------------------------------------------------------------- */

void srv_init(struct srv *s)
{
    if (s->dir[0]) return;
    harness_curl_once();
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
void child_env(struct child_envp *out, const struct srv *s, const char *const *env)
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
void die_with(pid_t parent)
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
    /* a flag may be given once: args' own --listen or --data replaces ours */
    bool listen = false, data = false;
    for (const char *const *a = args; a && *a; a++) {
        listen = listen || !strcmp(*a, "--listen") || !strncmp(*a, "--listen=", 9);
        data = data || !strcmp(*a, "--data") || !strncmp(*a, "--data=", 7);
    }
    if (!listen) {
        argv[n++] = "--listen";
        argv[n++] = "127.0.0.1:0";
    }
    if (!data) {
        argv[n++] = "--data";
        argv[n++] = s->data;
    }
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
int wait_child(pid_t pid, int timeout_ms)
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

/* --- other programs -------------------------------------------------------------------- */

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

/* --- folders --------------------------------------------------------------------------- */

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

bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void rm_tree(const char *dir)
{
    if (dir && dir[0]) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* --- /proc ----------------------------------------------------------------------------- */

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
