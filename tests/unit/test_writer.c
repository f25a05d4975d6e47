/*
 * test_writer.c - the SQLite adapter's group commit (db_ops.write): the
 * transactions waiting for the writer run back to back in one commit, each
 * under its own SAVEPOINT, so one that fails (a unique key, a check) is
 * undone alone - all of it, not just its last statement - while the others
 * in its batch are committed; and waiting transactions run in the order
 * they came (and the gauge of those waiting counts them). And the writer's journal
 * (db_ops.mark/unchanged): a mark holds across the writer's commits whose touch spares it, and
 * never across one that touches what it depends on, a failed one aside, nor across a commit of
 * another connection - not even once the writer has committed after it; a mark of every key
 * (DB_TOUCH_EVERY_KEY) goes with any key's write.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/db.h"
#include "util/metrics.h"

#include <sqlite3.h>

static int rm_entry(const char *p, const struct stat *sb, int f, struct FTW *w)
{
    (void)sb, (void)f, (void)w;
    return remove(p);
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static char dir[64];
static struct db *db;

static const char sql_create[] = "CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY)";
static const char sql_insert[] = "INSERT INTO t (k) VALUES (?)";
static const char sql_count[] = "SELECT count(*) FROM t WHERE k = ?";

static br_err create_tx(struct db *d, struct db_conn *c, void *ud)
{
    (void)ud;
    return d->ops->exec(c, sql_create, NULL, 0, NULL, NULL, NULL);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/barberia-writer-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char path[128];
    snprintf(path, sizeof path, "%s/w.db", dir);
    struct db_pool_opts o = {.size = 2};
    if (db_sqlite_ops.open(path, &o, &db) != BR_OK) return -1;
    return db->ops->write(db, create_tx, NULL, DB_TOUCH_ALL) == BR_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    db->ops->close(db);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* A job: inserts its keys in order (stops at the first failure); the first
 * job of a test holds the writer (for hold_ms, or until the gate opens) so
 * that the others queue up behind it and form one batch. */
struct job {
    int keys[2];
    int nkeys;
    int hold_ms;
    int start_after_ms;
    br_err rc;
    int id;
    bool gated;
};

static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int order[64], norder;
static bool gate_open;

static int ran(void)
{
    pthread_mutex_lock(&order_mu);
    int n = norder;
    pthread_mutex_unlock(&order_mu);
    return n;
}

static br_err job_tx(struct db *d, struct db_conn *c, void *ud)
{
    struct job *j = ud;
    pthread_mutex_lock(&order_mu);
    order[norder++] = j->id;
    while (j->gated && !gate_open)
        pthread_cond_wait(&gate_cv, &order_mu);
    pthread_mutex_unlock(&order_mu);
    if (j->hold_ms) nap_ms(j->hold_ms);
    for (int i = 0; i < j->nkeys; i++) {
        struct db_val p[] = {db_int(j->keys[i])};
        br_err rc = d->ops->exec(c, sql_insert, p, 1, NULL, NULL, NULL);
        if (rc) return rc;
    }
    return BR_OK;
}

static void *run_job(void *arg)
{
    struct job *j = arg;
    nap_ms(j->start_after_ms);
    j->rc = db->ops->write(db, job_tx, j, DB_TOUCH_ALL);
    return NULL;
}

static void run_jobs(struct job *jobs, int n)
{
    pthread_t t[64];
    norder = 0;
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

static br_err count_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    *(int64_t *)ud = c[0].i;
    return BR_OK;
}

static int64_t present(int k)
{
    struct db_conn *c;
    assert_int_equal(db->ops->acquire(db, &c), BR_OK);
    int64_t n = -1;
    struct db_val p[] = {db_int(k)};
    assert_int_equal(db->ops->exec(c, sql_count, p, 1, count_row, &n, NULL), BR_OK);
    db->ops->release(db, c);
    return n;
}

static void a_failing_transaction_is_undone_alone_and_its_batch_commits(void **state)
{
    (void)state;
    /* key 999 is taken before the batch, so which job fails does not depend
     * on the order the threads reach the writer */
    struct job taken = {{999}, 1, 0, 0, 0, 99};
    run_jobs(&taken, 1);
    assert_int_equal(taken.rc, BR_OK);
    struct job jobs[] = {
        {{1000}, 1, 300, 0, 0, 0}, /* holds the writer: the rest queue up */
        {{1}, 1, 0, 50, 0, 1},        {{2}, 1, 0, 60, 0, 2},
        {{999}, 1, 0, 70, 0, 3},      /* taken: a unique key fails */
        {{100, 999}, 2, 0, 80, 0, 4}, /* 100, then the taken key */
        {{3}, 1, 0, 75, 0, 5},        {{4}, 1, 0, 90, 0, 6},
    };
    run_jobs(jobs, 7);
    assert_int_equal(jobs[0].rc, BR_OK);
    assert_int_equal(jobs[1].rc, BR_OK);
    assert_int_equal(jobs[2].rc, BR_OK);
    assert_int_equal(jobs[3].rc, BR_CONFLICT);
    assert_int_equal(jobs[4].rc, BR_CONFLICT);
    assert_int_equal(jobs[5].rc, BR_OK);
    assert_int_equal(jobs[6].rc, BR_OK);
    /* kept: what succeeded; gone: all of what failed, its first insert too */
    assert_int_equal(present(1000), 1);
    assert_int_equal(present(1), 1);
    assert_int_equal(present(2), 1);
    assert_int_equal(present(3), 1);
    assert_int_equal(present(4), 1);
    assert_int_equal(present(999), 1);
    assert_int_equal(present(100), 0);
}

/* Waits (up to 60 s) for what() to give want. */
static void await_value(int (*what)(void), int want, const char *name)
{
    for (int ms = 0; what() != want; ms++) {
        if (ms == 60000) fail_msg("%s stayed at %d, not %d", name, what(), want);
        nap_ms(1);
    }
}

static int writes_waiting(void)
{
    return (int)metric_get(M_DB_WRITES_WAITING);
}

static void waiting_transactions_run_in_the_order_they_came(void **state)
{
    (void)state;
    /* the first holds the writer until the gate opens; each of the others
     * calls write only once the one before it is seen queued (the writer's
     * gauge), so the order they came in is a fact, not a guess from
     * timing */
    enum { N = 24 };
    struct job jobs[N];
    pthread_t t[N];
    norder = 0;
    gate_open = false;
    for (int i = 0; i < N; i++) {
        jobs[i] = (struct job){{2000 + i}, 1, 0, 0, 0, i, i == 0};
        assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
        if (i == 0)
            await_value(ran, 1, "transactions begun");
        else
            await_value(writes_waiting, i, "writes waiting");
    }
    pthread_mutex_lock(&order_mu);
    gate_open = true;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&order_mu);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(norder, N);
    assert_int_equal(writes_waiting(), 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(jobs[i].rc, BR_OK);
        if (order[i] != i) fail_msg("transaction %d ran in place %d", order[i], i);
    }
}

/* One committed write of key k, saying it touches touch. */
static br_err write_key(int k, uint64_t touch)
{
    struct job j = {{k}, 1, 0, 0, 0, 0};
    return db->ops->write(db, job_tx, &j, touch);
}

/* A commit of another connection (as the CLI or SQL beside `serve` make). */
static void commit_elsewhere(int k)
{
    char path[128], sql[96];
    snprintf(path, sizeof path, "%s/w.db", dir);
    snprintf(sql, sizeof sql, "INSERT INTO t (k) VALUES (%d)", k);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    sqlite3_busy_timeout(h, 5000);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

static void marks_hold_until_a_commit_touches_what_they_depend_on(void **state)
{
    (void)state;
    uint64_t ana = db_touch_key("ana"), beto = db_touch_key("beto");
    assert_int_not_equal(ana % 4096, beto % 4096); /* different counters */
    assert_int_equal(write_key(3000, DB_TOUCH_ALL), BR_OK);
    struct db_mark any, own, every;
    assert_true(db->ops->mark(db, DB_TOUCH_NONE, &any));
    assert_true(db->ops->mark(db, ana, &own));
    assert_true(db->ops->mark(db, DB_TOUCH_EVERY_KEY, &every));
    assert_true(db->ops->unchanged(db, &any));
    assert_true(db->ops->unchanged(db, &own));
    assert_true(db->ops->unchanged(db, &every));

    /* bookkeeping: every mark holds */
    assert_int_equal(write_key(3001, DB_TOUCH_NONE), BR_OK);
    assert_true(db->ops->unchanged(db, &every));
    /* another key: all but the mark of every key hold */
    assert_int_equal(write_key(3002, beto), BR_OK);
    assert_true(db->ops->unchanged(db, &any));
    assert_true(db->ops->unchanged(db, &own));
    assert_false(db->ops->unchanged(db, &every));
    /* a write that failed changed nothing */
    assert_true(db->ops->mark(db, DB_TOUCH_EVERY_KEY, &every));
    assert_int_equal(write_key(3002, ana), BR_CONFLICT);
    assert_true(db->ops->unchanged(db, &own));
    assert_true(db->ops->unchanged(db, &every));
    /* the key's own write: only the marks that depend on it go */
    assert_int_equal(write_key(3003, ana), BR_OK);
    assert_true(db->ops->unchanged(db, &any));
    assert_false(db->ops->unchanged(db, &own));
    assert_false(db->ops->unchanged(db, &every));

    /* a write of anything: every mark goes */
    assert_true(db->ops->mark(db, DB_TOUCH_NONE, &any));
    assert_true(db->ops->mark(db, ana, &own));
    assert_true(db->ops->mark(db, DB_TOUCH_EVERY_KEY, &every));
    assert_int_equal(write_key(3004, DB_TOUCH_ALL), BR_OK);
    assert_false(db->ops->unchanged(db, &any));
    assert_false(db->ops->unchanged(db, &own));
    assert_false(db->ops->unchanged(db, &every));

    /* a commit elsewhere: at once, and after the writer's next commit too */
    assert_true(db->ops->mark(db, DB_TOUCH_NONE, &any));
    assert_true(db->ops->mark(db, beto, &own));
    commit_elsewhere(3005);
    assert_false(db->ops->unchanged(db, &any));
    assert_false(db->ops->unchanged(db, &own));
    assert_int_equal(write_key(3006, DB_TOUCH_NONE), BR_OK);
    assert_false(db->ops->unchanged(db, &any));
    assert_false(db->ops->unchanged(db, &own));
    /* a mark taken after it holds again across the writer's own */
    assert_true(db->ops->mark(db, DB_TOUCH_NONE, &any));
    commit_elsewhere(3007);
    assert_true(db->ops->mark(db, DB_TOUCH_NONE, &any)); /* after the other commit */
    assert_int_equal(write_key(3008, DB_TOUCH_NONE), BR_OK);
    /* the writer saw a commit it did not make since its last batch: it
     * cannot tell what that one changed, so even this mark goes */
    assert_false(db->ops->unchanged(db, &any));
    assert_true(db->ops->mark(db, DB_TOUCH_NONE, &any));
    assert_int_equal(write_key(3009, DB_TOUCH_NONE), BR_OK);
    assert_true(db->ops->unchanged(db, &any));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_failing_transaction_is_undone_alone_and_its_batch_commits),
        cmocka_unit_test(waiting_transactions_run_in_the_order_they_came),
        cmocka_unit_test(marks_hold_until_a_commit_touches_what_they_depend_on),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
