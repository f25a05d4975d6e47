/*
 * test_limits.c - every resource bounded, with a clear answer when full,
 * against the real server: password hashes never run more at once than
 * BARBERIA_HASH_MAX and a caller that waits past BARBERIA_HASH_WAIT_MS gets
 * 503 `Servicio ocupado` with Retry-After (sign-up, login and an admin's
 * password change alike); the database pool's checkout and another
 * writer's lock have deadlines (503, then recovery, nothing half-done);
 * /healthz answers within its own bound however busy the pool is; failed
 * sign-ins are throttled per account and per client address (429
 * `Demasiados intentos` with Retry-After), the lock expires, doubles, and
 * never touches another account.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <curl/curl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------------------ */

static char *creds(const char *email, const char *password)
{
    json_t *b = json_pack("{s:s, s:s}", "email", email, "password", password);
    char *text = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return text;
}

static void login(const struct srv *s, const char *email, const char *password, struct resp *r)
{
    char *body = creds(email, password);
    http_json(s, "POST", "/api/auth/login", NULL, body, r);
    free(body);
}

/* The Retry-After of r as seconds; -1 when absent or not a number. */
static long retry_after(const struct resp *r)
{
    char buf[32];
    const char *v = resp_header(r, "Retry-After", buf, sizeof buf);
    if (!v || !*v) return -1;
    char *end;
    long n = strtol(v, &end, 10);
    return *end ? -1 : n;
}

/* A 503 {"error":"Servicio ocupado"} with a Retry-After of at least 1 s. */
static void expect_busy(const struct resp *r)
{
    expect_error(r, 503, "Servicio ocupado");
    assert_true(retry_after(r) >= 1);
}

/* A 429 {"error":"Demasiados intentos"} with a Retry-After of 1..max s. */
static void expect_throttled(const struct resp *r, long max)
{
    if (r->status != 429) fail_msg("expected 429, got %ld: %s", r->status, r->body);
    expect_error(r, 429, "Demasiados intentos");
    long ra = retry_after(r);
    if (ra < 1 || ra > max) fail_msg("Retry-After %ld, expected 1..%ld", ra, max);
}

/* --- concurrent requests ------------------------------------------------------------- */

struct call {
    const struct srv *s;
    const char *method, *path, *token, *body;
    int delay_ms; /* before sending */
    struct resp r;
    int64_t took_ms;
};

static void *call_run(void *p)
{
    struct call *c = p;
    if (c->delay_ms) sleep_ms(c->delay_ms);
    int64_t t0 = clock_mono_ms();
    struct req_opts o = {.token = c->token, .body = c->body};
    http_try(c->s, c->method, c->path, &o, &c->r);
    c->took_ms = clock_mono_ms() - t0;
    return NULL;
}

static void run_calls(struct call *calls, size_t n)
{
    pthread_t th[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pthread_create(&th[i], NULL, call_run, &calls[i]), 0);
    for (size_t i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

/* Lists every appointment as an administrator again and again until told
 * to stop; a listing is either whole (200) or refused as busy (503). */
struct lister {
    const struct srv *s;
    const char *token;
    volatile bool stop;
    int ok, cut, busy;
    long bad; /* the first other answer */
    char why[64];
};

/* Lists everything again and again. A page that finds the pool full past
 * its wait ends a streamed listing early (the status is sent by then): a
 * cut transfer, counted apart. */
static void *lister_run(void *p)
{
    struct lister *l = p;
    while (!l->stop) {
        struct resp r;
        struct req_opts o = {.token = l->token};
        long st = http_try(l->s, "GET", "/api/citas", &o, &r);
        if (st == 200 && r.body && !strncmp(r.body, "{\"citas\":[", 10))
            l->ok++;
        else if (st == 0)
            l->cut++;
        else if (st == 503)
            l->busy++;
        else if (!l->bad)
            l->bad = st, snprintf(l->why, sizeof l->why, "%.60s", r.body ? r.body : "");
        resp_free(&r);
    }
    return NULL;
}

/* Keeps the hashing slots busy: logs in again and again until told to stop. */
struct hammer {
    const struct srv *s;
    const struct user *u;
    volatile bool stop;
    int done;
};

static void *hammer_run(void *p)
{
    struct hammer *h = p;
    char *body = creds(h->u->email, h->u->password);
    while (!h->stop) {
        struct resp r;
        http_json(h->s, "POST", "/api/auth/login", NULL, body, &r);
        resp_free(&r);
        h->done++;
    }
    free(body);
    return NULL;
}

/* --- password hashing -------------------------------------------------------------- */

/* Signs up new accounts again and again until told to stop. */
struct signer {
    const struct srv *s;
    int n; /* this signer's number, in its addresses */
    volatile bool stop;
    int created, busy;
};

static void *signer_run(void *p)
{
    struct signer *g = p;
    for (int i = 0; !g->stop; i++) {
        char body[160];
        snprintf(body, sizeof body,
                 "{\"email\":\"flood-%d-%d-%d@test.example\",\"password\":\"secreto-1\"}",
                 (int)getpid(), g->n, i);
        struct resp r;
        http_json(g->s, "POST", "/api/auth/signup", NULL, body, &r);
        if (r.status == 201) g->created++;
        if (r.status == 503) g->busy++;
        resp_free(&r);
    }
    return NULL;
}

/* A burst of concurrent logins with one hashing slot: every login is
 * answered (the wait bound is generous), and the server's peak memory grows
 * by about one hash (64 MiB), not one per login. (Each login counts against
 * its account until its password proves right, so the account's limit is
 * set above the burst.) */
static void test_hash_burst_never_exceeds_the_limit(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_HASH_MAX=1", "BARBERIA_HASH_WAIT_MS=120000",
                         "BARBERIA_LOGIN_MAX_FAILURES=100", NULL};
    srv_start(&s, env, NULL);
    struct user u;
    signup_user(&s, &u, "Ana");
    struct resp r;
    login(&s, u.email, u.password, &r); /* the peak of one hash */
    assert_int_equal(r.status, 200);
    resp_free(&r);
    long before = proc_peak_rss_kib(s.pid);

    enum { N = 6 };
    char *body = creds(u.email, u.password);
    struct call calls[N];
    for (int i = 0; i < N; i++)
        calls[i] =
            (struct call){.s = &s, .method = "POST", .path = "/api/auth/login", .body = body};
    run_calls(calls, N);
    for (int i = 0; i < N; i++) {
        if (calls[i].r.status != 200)
            fail_msg("login %d: %ld %s", i, calls[i].r.status, calls[i].r.body);
        resp_free(&calls[i].r);
    }
    free(body);
    long after = proc_peak_rss_kib(s.pid);
    if (!built_with_asan()) {
        /* six hashes at once would add 5 x 64 MiB */
        if (before < 0 || after - before > 96 * 1024)
            fail_msg("peak memory grew from %ld to %ld KiB during the burst", before, after);
    }
    srv_cleanup(&s);
}

/* A flood of sign-ups (anyone's to send) never takes the last hashing
 * slot: with two slots and a short wait bound, a sign-in beside four
 * clients signing up without pause is answered every time. */
static void test_sign_ups_leave_a_slot_for_sign_ins(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_HASH_MAX=2", "BARBERIA_HASH_WAIT_MS=200", NULL};
    srv_start(&s, env, NULL);
    struct user u;
    signup_user(&s, &u, "Ana");
    enum { N = 4 };
    struct signer g[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        g[i] = (struct signer){.s = &s, .n = i};
        assert_int_equal(pthread_create(&th[i], NULL, signer_run, &g[i]), 0);
    }
    sleep_ms(300);
    for (int i = 0; i < 8; i++) {
        struct resp r;
        login(&s, u.email, u.password, &r);
        if (r.status != 200)
            fail_msg("sign-in %d beside the sign-ups: %ld %s", i, r.status, r.body);
        resp_free(&r);
    }
    int created = 0;
    for (int i = 0; i < N; i++) {
        g[i].stop = true;
        pthread_join(th[i], NULL);
        created += g[i].created;
    }
    assert_true(created > 0); /* the sign-ups went on meanwhile */
    srv_cleanup(&s);
}

/* With one slot kept busy and a 1 ms wait bound, sign-up, login and an
 * administrator's password change each get 503 `Servicio ocupado` with
 * Retry-After, and change nothing; once the burst is over each works. */
static void test_hash_wait_past_its_bound_answers_503(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_HASH_MAX=1", "BARBERIA_HASH_WAIT_MS=1", NULL};
    srv_start(&s, env, NULL);
    struct user busy_u, target, admin;
    signup_user(&s, &busy_u, "Carga");
    signup_user(&s, &target, "Objetivo");
    make_user(&s, &admin, "Admin", "admin");

    struct hammer hs[2] = {{.s = &s, .u = &busy_u}, {.s = &s, .u = &busy_u}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hammer_run, &hs[i]), 0);
    sleep_ms(200);

    bool signup_busy = false, login_busy = false, patch_busy = false;
    char email[128];
    for (int i = 0; i < 200 && !(signup_busy && login_busy && patch_busy); i++) {
        struct resp r;
        if (!signup_busy) {
            unique_email(email, sizeof email, "busy");
            char *b = creds(email, "secreto-1");
            http_json(&s, "POST", "/api/auth/signup", NULL, b, &r);
            free(b);
            if (r.status == 503) {
                expect_busy(&r);
                signup_busy = true;
                /* nothing was created */
                assert_int_equal(
                    db_count(&s, "SELECT count(*) FROM auth_users WHERE email = '%s'", email), 0);
            } else {
                assert_int_equal(r.status, 201);
            }
            resp_free(&r);
        }
        if (!login_busy) {
            login(&s, target.email, target.password, &r);
            if (r.status == 503) {
                expect_busy(&r);
                login_busy = true;
            } else {
                assert_int_equal(r.status, 200);
            }
            resp_free(&r);
        }
        if (!patch_busy) {
            char b[256];
            snprintf(b, sizeof b, "{\"userId\":\"%s\",\"password\":\"nueva-clave-1\"}", target.id);
            http_json(&s, "PATCH", "/api/admin/usuarios", admin.token, b, &r);
            if (r.status == 503) {
                expect_busy(&r);
                patch_busy = true;
            } else {
                assert_int_equal(r.status, 200);
                snprintf(target.password, sizeof target.password, "%s", "nueva-clave-1");
            }
            resp_free(&r);
        }
    }
    for (int i = 0; i < 2; i++) {
        hs[i].stop = true;
        pthread_join(th[i], NULL);
    }
    assert_true(signup_busy);
    assert_true(login_busy);
    assert_true(patch_busy);
    assert_true(srv_wait_log(&s, "BARBERIA_HASH_WAIT_MS", 1000));

    /* calm again: everything works */
    struct resp r;
    login(&s, target.email, target.password, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    srv_cleanup(&s);
}

/* --- the database ----------------------------------------------------------------- */

/* Holds the database's write lock from another connection (as the sqlite3
 * tool or another process would) until released. */
/* Another writer holding what a logout must write: SQLite's write lock,
 * or on PostgreSQL every session row (reads go on; the DELETE waits). */
struct writer {
    sqlite3 *h;
    PGconn *pg;
};

static void writer_lock(const struct srv *s, struct writer *w)
{
    if (s->dburl[0]) {
        w->pg = PQconnectdb(s->dburl);
        assert_int_equal(PQstatus(w->pg), CONNECTION_OK);
        PGresult *r = PQexec(w->pg, "BEGIN; SELECT 1 FROM auth_sessions FOR UPDATE");
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        PQclear(r);
        return;
    }
    char path[400];
    snprintf(path, sizeof path, "%s/barberia.db", s->data);
    assert_int_equal(sqlite3_open(path, &w->h), SQLITE_OK);
    sqlite3_busy_timeout(w->h, 10000);
    assert_int_equal(sqlite3_exec(w->h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
}

static void writer_release(struct writer *w)
{
    if (w->pg) {
        PGresult *r = PQexec(w->pg, "COMMIT");
        assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
        PQclear(r);
        PQfinish(w->pg);
        w->pg = NULL;
        return;
    }
    assert_int_equal(sqlite3_exec(w->h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(w->h);
    w->h = NULL;
}

/* The only pool connection is kept busy by administrators listing 60,000
 * appointments over and over, page after page (each page a short read of
 * its own): a read that cannot get the connection within
 * BARBERIA_DB_WAIT_MS answers 503 with Retry-After, never hangs; /healthz
 * has a connection of its own; everything works again once the pool is
 * free. (Writes never take a pool connection: they go to the writer.) */
static void test_pool_checkout_has_a_deadline(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_DB_POOL=1", "BARBERIA_DB_WAIT_MS=5", NULL};
    srv_start(&s, env, NULL);
    struct user u, admin;
    signup_user(&s, &u, "Ana");
    make_user(&s, &admin, "Admin", "admin");
    char *barbero = make_barbero(&s, "Barbero Pool");
    char *servicio = make_servicio(&s, "Corte Pool", 30, 10);
    char sql[1024];
    if (test_pg())
        snprintf(sql, sizeof sql,
                 "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, "
                 "fecha_fin, estado, created_at) SELECT ('00000000-0000-4000-8000-' || "
                 "lpad(k::text, 12, '0'))::uuid, '%s', '%s', '%s', timestamptz '2020-01-01 00:00Z' "
                 "+ (k * 30) * interval '1 minute', timestamptz '2020-01-01 00:00Z' + (k * 30 + "
                 "30) * interval '1 minute', 'confirmada', '2024-01-01T00:00:00.000Z' FROM "
                 "generate_series(0, 59999) k;",
                 u.id, barbero, servicio);
    else
        snprintf(
            sql, sizeof sql,
            "WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < 59999) "
            "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, fecha_fin, "
            "estado, created_at) SELECT printf('00000000-0000-4000-8000-%%012d', k), '%s', '%s', "
            "'%s', strftime('%%Y-%%m-%%dT%%H:%%M:%%S.000Z', '2020-01-01', '+' || (k * 30) || "
            "' minutes'), strftime('%%Y-%%m-%%dT%%H:%%M:%%S.000Z', '2020-01-01', '+' || (k * 30 + "
            "30) || ' minutes'), 'confirmada', '2024-01-01T00:00:00.000Z' FROM n;",
            u.id, barbero, servicio);
    assert_int_equal(db_exec(&s, sql, NULL), 0);

    /* listers keep the one connection busy until the probe is refused */
    enum { LISTERS = 8 };
    struct lister lists[LISTERS];
    pthread_t th[LISTERS];
    for (int i = 0; i < LISTERS; i++) {
        lists[i] = (struct lister){.s = &s, .token = admin.token};
        assert_int_equal(pthread_create(&th[i], NULL, lister_run, &lists[i]), 0);
    }
    /* while they read, another read waits its bound and is refused (one
     * that needs the database: the catalog's answer may be remembered,
     * test_memo_lecturas.c) */
    bool refused = false;
    int64_t end = clock_mono_ms() + 30000;
    while (!refused && clock_mono_ms() < end) {
        struct resp r;
        int64_t t0 = clock_mono_ms();
        http_get(&s, "/api/admin/barberos", admin.token, &r);
        int64_t took = clock_mono_ms() - t0;
        if (r.status == 503) {
            expect_busy(&r);
            if (took < 4 || took > 5000) fail_msg("the busy answer took %lld ms", (long long)took);
            refused = true;
        } else {
            assert_int_equal(r.status, 200);
        }
        resp_free(&r);
    }
    /* the health check has a connection of its own */
    int64_t t0 = clock_mono_ms();
    struct resp r;
    http_get(&s, "/healthz", NULL, &r);
    int64_t took = clock_mono_ms() - t0;
    assert_int_equal(r.status, 200);
    resp_free(&r);
    for (int i = 0; i < LISTERS; i++)
        lists[i].stop = true;
    int listed = 0;
    for (int i = 0; i < LISTERS; i++) {
        pthread_join(th[i], NULL);
        if (lists[i].bad) fail_msg("a listing answered %ld %s", lists[i].bad, lists[i].why);
        listed += lists[i].ok + lists[i].cut + lists[i].busy;
    }
    assert_true(refused);
    assert_true(listed > 0); /* the listers did run: whole, cut or refused */
    if (took > 1500) fail_msg("/healthz took %lld ms behind a busy pool", (long long)took);

    http_get(&s, "/api/barberos", NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_true(srv_wait_log(&s, "BARBERIA_DB_WAIT_MS", 1000));
    free(barbero);
    free(servicio);
    srv_cleanup(&s);
}

/* Another process keeps the write lock past BARBERIA_DB_LOCK_WAIT_MS: a
 * write answers 503 with Retry-After in about that time and changes
 * nothing; reads go on meanwhile (WAL); after the lock goes the same
 * request succeeds. */
static void test_write_lock_wait_has_a_deadline(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_DB_LOCK_WAIT_MS=500", NULL};
    srv_start(&s, env, NULL);
    struct user u;
    signup_user(&s, &u, "Ana");

    struct writer w = {0};
    writer_lock(&s, &w);
    int64_t t0 = clock_mono_ms();
    struct resp r;
    http_json(&s, "POST", "/api/auth/logout", u.token, NULL, &r);
    int64_t took = clock_mono_ms() - t0;
    expect_busy(&r);
    resp_free(&r);
    if (took < 450 || took > 5000) fail_msg("the busy answer took %lld ms", (long long)took);
    /* reads are not held up, and the session still works: nothing changed */
    http_get(&s, "/api/auth/me", u.token, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_get(&s, "/healthz", NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    writer_release(&w);

    http_json(&s, "POST", "/api/auth/logout", u.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    srv_cleanup(&s);
}

/* --- sign-in throttling ---------------------------------------------------------- */

/* Locks of 3 s (6 s at the most): long enough that a loaded machine still
 * makes its next attempts inside one, short enough to wait out. */
static const char *const throttle_env[] = {
    "BARBERIA_LOGIN_MAX_FAILURES=3", "BARBERIA_LOGIN_ADDR_MAX_FAILURES=1000",
    "BARBERIA_LOGIN_WINDOW_S=60",    "BARBERIA_LOGIN_LOCK_S=3",
    "BARBERIA_LOGIN_LOCK_MAX_S=6",   NULL};

static void fail_logins(const struct srv *s, const char *email, int n)
{
    for (int i = 0; i < n; i++) {
        struct resp r;
        login(s, email, "equivocada", &r);
        expect_error(&r, 401, "Credenciales inválidas");
        resp_free(&r);
    }
}

/* Three failures lock the account: every attempt, the right password
 * included, gets 429 with Retry-After; another account is unaffected; the
 * lock expires; the next lock lasts twice as long, capped; a success
 * clears the count. */
static void test_failed_logins_lock_the_account_for_a_while(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, throttle_env, NULL);
    struct user ana, beto;
    signup_user(&s, &ana, "Ana");
    signup_user(&s, &beto, "Beto");
    struct resp r;

    fail_logins(&s, ana.email, 3);
    login(&s, ana.email, ana.password, &r);
    expect_throttled(&r, 3);
    resp_free(&r);
    login(&s, ana.email, "equivocada", &r);
    expect_throttled(&r, 3);
    resp_free(&r);
    /* the account is the same however the e-mail is written */
    char shouted[160];
    snprintf(shouted, sizeof shouted, "  %s ", ana.email);
    for (char *p = shouted; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    login(&s, shouted, ana.password, &r);
    expect_throttled(&r, 3);
    resp_free(&r);
    /* someone else signs in as usual */
    login(&s, beto.email, beto.password, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* an existing session of the locked account keeps working */
    http_get(&s, "/api/auth/me", ana.token, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    /* the lock expires */
    sleep_ms(3100);
    login(&s, ana.email, ana.password, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    /* the success cleared the count: two more failures do not lock */
    fail_logins(&s, ana.email, 2);
    login(&s, ana.email, ana.password, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    /* consecutive locks double, up to the maximum */
    fail_logins(&s, ana.email, 3);
    login(&s, ana.email, ana.password, &r);
    expect_throttled(&r, 3);
    resp_free(&r);
    sleep_ms(3100);
    fail_logins(&s, ana.email, 3);
    login(&s, ana.email, ana.password, &r);
    expect_throttled(&r, 6);
    assert_true(retry_after(&r) > 3); /* longer than the first lock: doubled */
    resp_free(&r);
    sleep_ms(6100);
    fail_logins(&s, ana.email, 3);
    login(&s, ana.email, ana.password, &r);
    expect_throttled(&r, 6); /* capped at BARBERIA_LOGIN_LOCK_MAX_S */
    resp_free(&r);
    sleep_ms(6100);
    login(&s, ana.email, ana.password, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    /* the count lives in the data store, shared by every node */
    assert_int_equal(
        db_count(&s, "SELECT count(*) FROM auth_throttle WHERE key = 'email:%s'", ana.email), 0);
    fail_logins(&s, ana.email, 1);
    assert_int_equal(
        db_count(&s, "SELECT failures FROM auth_throttle WHERE key = 'email:%s'", ana.email), 1);
    assert_true(srv_wait_log(&s, "failed sign-ins for email:", 1000));
    srv_cleanup(&s);
}

/* An unknown e-mail is locked like a registered one, so the 429 does not
 * tell which e-mails exist; it survives a restart (it is in the store). */
static void test_unknown_emails_are_throttled_alike(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, throttle_env, NULL);
    char email[128];
    unique_email(email, sizeof email, "nadie");
    fail_logins(&s, email, 3);
    struct resp r;
    login(&s, email, "cualquiera", &r);
    expect_throttled(&r, 3);
    resp_free(&r);
    assert_int_equal(srv_stop(&s), 0);
    srv_start(&s, throttle_env, NULL);
    login(&s, email, "cualquiera", &r);
    if (r.status != 429) assert_int_equal(r.status, 401); /* unless the lock ran out meanwhile */
    resp_free(&r);
    srv_cleanup(&s);
}

/* A login from a chosen local source address (127.0.0.x). */
static size_t sink(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

static long login_from(const struct srv *s, const char *source, const char *email,
                       const char *password)
{
    CURL *c = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "%s/api/auth/login", s->base);
    char *body = creds(email, password);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_INTERFACE, source);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    long status = 0;
    CURLcode cc = curl_easy_perform(c);
    if (cc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(body);
    if (cc != CURLE_OK) fail_msg("login from %s: %s", source, curl_easy_strerror(cc));
    return status;
}

/* Failures spread over many accounts from one address lock that address
 * (for every account, the right password included); another address is
 * unaffected. */
static void test_failed_logins_lock_the_client_address(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_LOGIN_MAX_FAILURES=100", "BARBERIA_LOGIN_ADDR_MAX_FAILURES=4",
                         "BARBERIA_LOGIN_LOCK_S=3", "BARBERIA_LOGIN_LOCK_MAX_S=3", NULL};
    srv_start(&s, env, NULL);
    struct user ana;
    signup_user(&s, &ana, "Ana");
    for (int i = 0; i < 4; i++) {
        char email[128];
        unique_email(email, sizeof email, "barrido");
        assert_int_equal(login_from(&s, "127.0.0.1", email, "equivocada"), 401);
    }
    assert_int_equal(login_from(&s, "127.0.0.1", ana.email, ana.password), 429);
    struct resp r;
    login(&s, ana.email, ana.password, &r); /* the harness connects from 127.0.0.1 too */
    expect_throttled(&r, 3);
    resp_free(&r);
    /* from another address the same account signs in */
    assert_int_equal(login_from(&s, "127.0.0.2", ana.email, ana.password), 200);
    assert_int_equal(db_count(&s, "SELECT count(*) FROM auth_throttle WHERE key = 'addr:127.0.0.1' "
                                  "AND locked_until IS NOT NULL"),
                     1);
    sleep_ms(3100);
    assert_int_equal(login_from(&s, "127.0.0.1", ana.email, ana.password), 200);
    srv_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_burst_never_exceeds_the_limit),
        cmocka_unit_test(test_hash_wait_past_its_bound_answers_503),
        cmocka_unit_test(test_sign_ups_leave_a_slot_for_sign_ins),
        cmocka_unit_test(test_pool_checkout_has_a_deadline),
        cmocka_unit_test(test_write_lock_wait_has_a_deadline),
        cmocka_unit_test(test_failed_logins_lock_the_account_for_a_while),
        cmocka_unit_test(test_unknown_emails_are_throttled_alike),
        cmocka_unit_test(test_failed_logins_lock_the_client_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
