/*
 * test_throttle.c - sign-in throttling under concurrent bursts, against the
 * real server. Each attempt is counted against its account and its client
 * address before its password is checked, in the same write transaction
 * as the check of the lock, so a burst of guesses gets at most the limit's
 * worth judged (401) and 429 `Demasiados intentos` for all the others: per
 * account and per address alike, through one node or two on one database.
 * The right password gets 429 like any other once the burst reached the
 * limit. What a right password or a busy answer (503) counted is given
 * back: successes never use up an address's budget and never start a lock.
 * (test_limits.c has the throttling rules one attempt at a time.)
 */
#include "harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small limits, long locks (a lock holds for the whole test) and waits
 * long enough that no attempt is refused as busy; a few database
 * connections, taken in turn (forty PostgreSQL connections opened at once
 * can take longer than the adapter waits for one on a busy machine). */
#define LIMIT 5
#define BURST 40

static const char *const account_env[] = {"BARBERIA_LOGIN_MAX_FAILURES=5",
                                          "BARBERIA_LOGIN_ADDR_MAX_FAILURES=100000",
                                          "BARBERIA_LOGIN_WINDOW_S=3600",
                                          "BARBERIA_LOGIN_LOCK_S=3600",
                                          "BARBERIA_LOGIN_LOCK_MAX_S=3600",
                                          "BARBERIA_HASH_WAIT_MS=300000",
                                          "BARBERIA_DB_WAIT_MS=60000",
                                          "BARBERIA_DB_POOL=8",
                                          NULL};

static const char *const address_env[] = {"BARBERIA_LOGIN_MAX_FAILURES=100000",
                                          "BARBERIA_LOGIN_ADDR_MAX_FAILURES=5",
                                          "BARBERIA_LOGIN_WINDOW_S=3600",
                                          "BARBERIA_LOGIN_LOCK_S=3600",
                                          "BARBERIA_LOGIN_LOCK_MAX_S=3600",
                                          "BARBERIA_HASH_WAIT_MS=300000",
                                          "BARBERIA_DB_WAIT_MS=60000",
                                          "BARBERIA_DB_POOL=8",
                                          NULL};

/* --- attempts ------------------------------------------------------------------------ */

/* One sign-in of a burst, made from its own thread (no cmocka there). */
struct attempt {
    const struct srv *s;
    char body[512];
    bool right; /* the account's real password */
    long status;
    long retry_after;      /* of a 429: its Retry-After in seconds, else -1 */
    char error[64];        /* the answer's "error", if any */
    const char *forwarded; /* an "X-Forwarded-For: ..." line to send (NULL: none) */
};

static void attempt_set(struct attempt *a, const struct srv *s, const char *email,
                        const char *password, bool right)
{
    *a = (struct attempt){.s = s, .right = right, .retry_after = -1};
    json_t *b = json_pack("{s:s, s:s}", "email", email, "password", password);
    char *text = json_dumps(b, JSON_COMPACT);
    snprintf(a->body, sizeof a->body, "%s", text);
    free(text);
    json_decref(b);
}

static void attempt_run(void *item)
{
    struct attempt *a = item;
    const char *const fwd[] = {a->forwarded, NULL};
    struct req_opts o = {.body = a->body, .headers = a->forwarded ? fwd : NULL};
    struct resp r;
    a->status = http_try(a->s, "POST", "/api/auth/login", &o, &r);
    const char *e = jstr(r.json, "error");
    if (e) snprintf(a->error, sizeof a->error, "%s", e);
    char buf[32];
    const char *ra = resp_header(&r, "Retry-After", buf, sizeof buf);
    if (ra) a->retry_after = strtol(ra, NULL, 10);
    resp_free(&r);
}

/* What a burst got: judged wrong (401), right (200), refused (429). Fails
 * on any other answer, and on a 429 that is not the throttle's. */
struct tally {
    int wrong, right, refused;
};

static struct tally tally_of(const struct attempt *a, size_t n)
{
    struct tally t = {0};
    for (size_t i = 0; i < n; i++) {
        if (a[i].status == 401 && !a[i].right && !strcmp(a[i].error, "Credenciales inválidas"))
            t.wrong++;
        else if (a[i].status == 200 && a[i].right)
            t.right++;
        else if (a[i].status == 429 && !strcmp(a[i].error, "Demasiados intentos") &&
                 a[i].retry_after >= 1)
            t.refused++;
        else
            fail_msg("attempt %zu (%s password): %ld %s", i, a[i].right ? "right" : "wrong",
                     a[i].status, a[i].error);
    }
    return t;
}

/* n wrong passwords for email at once, through the nodes in turn. */
static void wrong_burst(const struct srv *const *nodes, size_t nn, const char *email,
                        struct attempt *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        attempt_set(&a[i], nodes[i % nn], email, "equivocada", false);
    race_threads(n, attempt_run, a, sizeof *a);
}

/* One sign-in from the test's thread; asserts its status (and the
 * throttle's answer for a 429). */
static void login_expect(const struct srv *s, const char *email, const char *password, long want)
{
    struct attempt a;
    attempt_set(&a, s, email, password, false);
    attempt_run(&a);
    if (a.status != want)
        fail_msg("login of %s: expected %ld, got %ld %s", email, want, a.status, a.error);
    if (want == 429) {
        assert_string_equal(a.error, "Demasiados intentos");
        assert_true(a.retry_after >= 1);
    }
}

static void expect_only_the_limit_judged(const struct attempt *a, size_t n)
{
    struct tally t = tally_of(a, n);
    if (t.wrong != LIMIT || t.refused != (int)n - LIMIT)
        fail_msg("a burst of %zu wrong passwords: %d judged (401), %d refused (429); expected "
                 "%d and %zu",
                 n, t.wrong, t.refused, LIMIT, n - LIMIT);
}

/* --- per account ----------------------------------------------------------------------- */

/* Forty wrong passwords for one account at once: exactly the limit's worth
 * are judged, every other gets 429 with Retry-After; the lock they started
 * refuses the right password too. */
static void a_burst_of_guesses_for_one_account_judges_only_the_limit(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, account_env, NULL);
    struct user ana;
    signup_user(&s, &ana, "Ana");
    struct attempt a[BURST];
    const struct srv *nodes[] = {&s};
    wrong_burst(nodes, 1, ana.email, a, BURST);
    expect_only_the_limit_judged(a, BURST);
    login_expect(&s, ana.email, ana.password, 429);
    srv_cleanup(&s);
}

struct background_burst {
    const struct srv *s;
    const char *email;
    struct attempt a[BURST];
};

static void *background_burst_run(void *p)
{
    struct background_burst *b = p;
    const struct srv *nodes[] = {b->s};
    wrong_burst(nodes, 1, b->email, b->a, BURST);
    return NULL;
}

struct locked_key {
    const struct srv *s;
    const char *key;
};

static bool key_locked(void *ud)
{
    struct locked_key *k = ud;
    return db_count(k->s,
                    "SELECT count(*) FROM auth_throttle WHERE key = '%s' AND locked_until IS "
                    "NOT NULL",
                    k->key) == 1;
}

/* The right password sent while a burst of wrong ones is still being
 * answered, once the burst has reached the limit, gets 429; so does every
 * attempt of a later burst that mixes the right password with wrong ones. */
static void the_right_password_in_a_burst_past_the_limit_gets_429(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, account_env, NULL);
    struct user ana;
    signup_user(&s, &ana, "Ana");

    struct background_burst *b = calloc(1, sizeof *b);
    assert_non_null(b);
    b->s = &s;
    b->email = ana.email;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, background_burst_run, b), 0);
    char key[160];
    snprintf(key, sizeof key, "email:%s", ana.email);
    struct locked_key lk = {&s, key};
    bool locked = wait_until(key_locked, &lk, 120000);
    struct attempt right;
    attempt_set(&right, &s, ana.email, ana.password, true);
    if (locked) attempt_run(&right);
    pthread_join(th, NULL);
    assert_true(locked);
    struct tally rt = tally_of(&right, 1);
    assert_int_equal(rt.refused, 1);
    expect_only_the_limit_judged(b->a, BURST);
    free(b);

    /* the right password among wrong ones, all at once, while locked */
    enum { MIXED = 16 };
    struct attempt m[MIXED];
    for (int i = 0; i < MIXED; i++)
        attempt_set(&m[i], &s, ana.email, i % 4 ? "equivocada" : ana.password, i % 4 == 0);
    race_threads(MIXED, attempt_run, m, sizeof m[0]);
    struct tally t = tally_of(m, MIXED);
    assert_int_equal(t.refused, MIXED);
    srv_cleanup(&s);
}

/* --- per client address ----------------------------------------------------------------- */

/* Forty wrong passwords for forty e-mails (some registered, most not) from
 * one address at once: exactly the address's limit is judged; the lock
 * refuses the right password of any account from there. */
static void a_burst_over_many_accounts_from_one_address_judges_only_the_limit(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, address_env, NULL);
    struct user ana, beto;
    signup_user(&s, &ana, "Ana");
    signup_user(&s, &beto, "Beto");
    struct attempt a[BURST];
    char emails[BURST][128];
    for (int i = 0; i < BURST; i++) {
        if (i == 0)
            snprintf(emails[i], sizeof emails[i], "%s", ana.email);
        else if (i == 1)
            snprintf(emails[i], sizeof emails[i], "%s", beto.email);
        else
            unique_email(emails[i], sizeof emails[i], "barrido");
        attempt_set(&a[i], &s, emails[i], "equivocada", false);
    }
    race_threads(BURST, attempt_run, a, sizeof a[0]);
    expect_only_the_limit_judged(a, BURST);
    login_expect(&s, ana.email, ana.password, 429);
    login_expect(&s, beto.email, beto.password, 429);
    srv_cleanup(&s);
}

/* Behind a proxy every client arrives from its address: with the proxy
 * named trusted (BARBERIA_TRUSTED_PROXIES), the per-address count is the
 * X-Forwarded-For client's, and one client's guesses lock out no other
 * (nor the proxy's own requests); a forwarded address from a peer that is
 * not trusted is ignored, as is what a client wrote in front of the
 * proxy's entry. */
static void behind_a_trusted_proxy_each_forwarded_client_is_counted_apart(void **state)
{
    (void)state;
    const char *env[ARRAY_LEN(address_env) + 1];
    size_t n = 0;
    for (; address_env[n]; n++)
        env[n] = address_env[n];
    env[n++] = "BARBERIA_TRUSTED_PROXIES=192.0.2.1, 127.0.0.1";
    env[n] = NULL;
    struct srv s = {0};
    srv_start(&s, env, NULL);
    struct user ana;
    signup_user(&s, &ana, "Ana");
    /* the guesser wrote an address of its own in front: the proxy's entry,
     * the last, is the one that counts */
    for (int i = 0; i < LIMIT; i++) {
        char email[128];
        unique_email(email, sizeof email, "tras-proxy");
        struct attempt a;
        attempt_set(&a, &s, email, "equivocada", false);
        a.forwarded = "X-Forwarded-For: 198.51.100.77, 203.0.113.5";
        attempt_run(&a);
        assert_int_equal(a.status, 401);
    }
    static const struct {
        const char *forwarded;
        long want;
    } after[] = {
        {"X-Forwarded-For: 203.0.113.5", 429},            /* the guesser */
        {"X-Forwarded-For: 203.0.113.5, 192.0.2.1", 429}, /* through two proxies */
        {"X-Forwarded-For: 203.0.113.6", 200},            /* another client */
        {"X-Forwarded-For: 198.51.100.77", 200},          /* what the guesser wrote */
        {NULL, 200},                                      /* the proxy itself */
        {"X-Forwarded-For: nonsense", 200},               /* no address: the proxy's */
    };
    for (size_t i = 0; i < ARRAY_LEN(after); i++) {
        struct attempt a;
        attempt_set(&a, &s, ana.email, ana.password, true);
        a.forwarded = after[i].forwarded;
        attempt_run(&a);
        if (a.status != after[i].want)
            fail_msg("%s: %ld, not %ld", after[i].forwarded ? after[i].forwarded : "no header",
                     a.status, after[i].want);
    }
    srv_cleanup(&s);
    /* untrusted: X-Forwarded-For is anyone's to write, and ignored */
    struct srv u = {0};
    srv_start(&u, address_env, NULL);
    signup_user(&u, &ana, "Ana");
    for (int i = 0; i < LIMIT; i++) {
        char email[128], line[80];
        unique_email(email, sizeof email, "sin-proxy");
        snprintf(line, sizeof line, "X-Forwarded-For: 203.0.113.%d", 10 + i);
        struct attempt a;
        attempt_set(&a, &u, email, "equivocada", false);
        a.forwarded = line;
        attempt_run(&a);
        assert_int_equal(a.status, 401);
    }
    login_expect(&u, ana.email, ana.password, 429);
    srv_cleanup(&u);
}

/* A right password's attempt is counted while its password is checked,
 * then given back: many successes from one address never use up its
 * budget, and the success that reached the limit does not leave the lock
 * it started; the real failures before it still count. */
static void successes_give_back_what_they_counted(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, address_env, NULL);
    struct user ana;
    signup_user(&s, &ana, "Ana");
    for (int i = 0; i < 3 * LIMIT; i++)
        login_expect(&s, ana.email, ana.password, 200);
    char email[128];
    for (int i = 0; i < LIMIT - 1; i++) {
        unique_email(email, sizeof email, "barrido");
        login_expect(&s, email, "equivocada", 401);
    }
    /* counted as the fifth, checked, right: its lock is lifted */
    login_expect(&s, ana.email, ana.password, 200);
    assert_int_equal(db_count(&s, "SELECT count(*) FROM auth_throttle WHERE key = "
                                  "'addr:127.0.0.1' AND locked_until IS NOT NULL"),
                     0);
    login_expect(&s, ana.email, ana.password, 200);
    /* the fifth real failure locks */
    unique_email(email, sizeof email, "barrido");
    login_expect(&s, email, "equivocada", 401);
    login_expect(&s, ana.email, ana.password, 429);
    srv_cleanup(&s);
}

/* --- busy answers ----------------------------------------------------------------------- */

/* Keeps the one hashing slot busy: signs in again and again until told to
 * stop. */
struct hammer {
    const struct srv *s;
    const struct user *u;
    volatile bool stop;
};

static void *hammer_run(void *p)
{
    struct hammer *h = p;
    struct attempt a;
    attempt_set(&a, h->s, h->u->email, h->u->password, true);
    while (!h->stop)
        attempt_run(&a);
    return NULL;
}

/* An attempt refused as busy (503: no hashing slot in time) was not judged
 * and does not count: many of them in a row never lock the account. */
static void busy_answers_do_not_count(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_HASH_MAX=1",
                         "BARBERIA_HASH_WAIT_MS=1",
                         "BARBERIA_LOGIN_MAX_FAILURES=2",
                         "BARBERIA_LOGIN_LOCK_S=3600",
                         "BARBERIA_LOGIN_ADDR_MAX_FAILURES=100000",
                         NULL};
    srv_start(&s, env, NULL);
    struct user carga, ana;
    signup_user(&s, &carga, "Carga");
    signup_user(&s, &ana, "Ana");
    struct hammer hs[2] = {{.s = &s, .u = &carga}, {.s = &s, .u = &carga}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hammer_run, &hs[i]), 0);
    int busy = 0, ok = 0;
    long other = 0;
    struct attempt a;
    for (int i = 0; i < 2000 && busy < 6 && !other; i++) {
        attempt_set(&a, &s, ana.email, ana.password, true);
        attempt_run(&a);
        if (a.status == 503)
            busy++;
        else if (a.status == 200)
            ok++;
        else
            other = a.status;
    }
    for (int i = 0; i < 2; i++) {
        hs[i].stop = true;
        pthread_join(th[i], NULL);
    }
    if (other) fail_msg("a login answered %ld %s", other, a.error);
    assert_true(busy >= 6);
    login_expect(&s, ana.email, ana.password, 200);
    srv_cleanup(&s);
}

/* --- two nodes on one database ---------------------------------------------------------- */

/* A burst split between two nodes on one database (PostgreSQL on api-pg,
 * one SQLite file on api) judges the limit's worth in all; both refuse
 * the right password after it. */
static void a_burst_through_two_nodes_judges_only_the_limit(void **state)
{
    (void)state;
    struct srv a = {0}, b = {0};
    srv_start(&a, account_env, NULL);
    srv_init_peer(&b, &a);
    srv_start(&b, account_env, NULL);
    struct user ana;
    signup_user(&a, &ana, "Ana");
    struct attempt at[BURST];
    const struct srv *nodes[] = {&a, &b};
    wrong_burst(nodes, 2, ana.email, at, BURST);
    expect_only_the_limit_judged(at, BURST);
    login_expect(&a, ana.email, ana.password, 429);
    login_expect(&b, ana.email, ana.password, 429);
    srv_cleanup(&b);
    srv_cleanup(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_burst_of_guesses_for_one_account_judges_only_the_limit),
        cmocka_unit_test(the_right_password_in_a_burst_past_the_limit_gets_429),
        cmocka_unit_test(a_burst_over_many_accounts_from_one_address_judges_only_the_limit),
        cmocka_unit_test(successes_give_back_what_they_counted),
        cmocka_unit_test(busy_answers_do_not_count),
        cmocka_unit_test(a_burst_through_two_nodes_judges_only_the_limit),
        cmocka_unit_test(behind_a_trusted_proxy_each_forwarded_client_is_counted_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
