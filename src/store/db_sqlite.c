/*
 * db_sqlite.c - the SQL port on an embedded SQLite file (see db.h).
 *
 * The database runs in WAL mode, so readers never wait for the writer, with
 * synchronous=FULL (a 201 means the booking survives a power cut),
 * foreign_keys=ON and a busy timeout. Every transaction that may write starts
 * with BEGIN IMMEDIATE: it takes the single write lock up front, so a
 * check-then-write (overlap check and insert, photo count and insert) is
 * serialised against every other writer, across threads and processes (the
 * CLI may run beside `serve`). A deferred transaction that later upgrades to
 * a write could fail with SQLITE_BUSY that no busy timeout rescues.
 *
 * Writes go through one writer thread with a connection of its own (group
 * commit): callers queue their transaction (db_ops.write) and wait; the
 * writer takes every transaction waiting, in order, runs them back to back
 * inside one BEGIN IMMEDIATE, each under its own SAVEPOINT (a failing one -
 * a 409, a photo cap, a constraint - is rolled back alone), commits once
 * (one fsync under synchronous=FULL) and only then wakes them all. Each
 * transaction still sees every earlier one, so a check-then-write stays
 * atomic. Waiting is FIFO on condition variables, never SQLite's
 * sleep-polling busy handler; the busy timeout only covers other processes
 * (the CLI beside `serve`). Checkpoints never run in a commit
 * (wal_autocheckpoint=0): a checkpointer thread copies the WAL back every
 * CHECKPOINT_EVERY_MS (PASSIVE, never waiting for anyone), and resets it
 * (RESTART) once it passes WAL_MAX_BYTES, so it cannot grow without bound.
 * Both figures were measured (bench/compare at 1,000,000 appointments): a
 * checkpoint every second made each one long enough to stall the commits'
 * fsyncs, and a RESTART blocks the writer while it waits for the readers,
 * so at 64 MiB it came every few seconds under load: p99 of a booking
 * 300-400 ms either way, 11 ms with 250 ms and 512 MiB. The RESTART waits
 * for the readers at most RESTART_WAIT_MS (restart_busy), and is tried
 * again on the next tick when they do not pause in that time. Under a
 * stream of writes a PASSIVE checkpoint never copies the whole log, and
 * SQLite syncs the database file only after a whole copy: the pages copied
 * piled up unsynced until the RESTART synced them all while holding the
 * writer - 300 ms at a million appointments, every five seconds. The
 * checkpointer therefore starts their write-back after every PASSIVE
 * (sync_file_range, which waits for nothing), and the RESTART's sync finds
 * little left (20-30 ms measured).
 *
 * Connections are pooled; each caches its prepared statements keyed by the
 * SQL string's address (the repository passes string constants). Waiting is
 * bounded twice over: for a free connection (a condition variable on the * monotonic clock, at most
 * wait_ms) and for another writer's lock (SQLite's busy timeout, at most lock_wait_ms); past either
 * the caller gets BR_BUSY "Servicio ocupado", which the API answers 503 with Retry-After, never a
 * hang. The health check has a connection of its own with a short busy timeout, so it answers
 * within its bound however busy the pool is.
 */
#define _GNU_SOURCE /* sync_file_range */
#include "db.h"
#include "db_sqlite_copy.h"
#include "../util/cond.h"
#include "pool.h"
#include "schema.h"
#include "../util/log.h"
#include "../util/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STMT_CACHE           128 /* slots; the repository has fewer statements */
#define MAX_COLS             32
#define DEFAULT_POOL         8
#define DEFAULT_WAIT_MS      5000
#define DEFAULT_LOCK_WAIT_MS 10000
#define DEFAULT_PING_MS      1000
#define BUSY_MSG             "Servicio ocupado"
#define BATCH_MAX            256  /* transactions in one group commit */
#define JOURNAL_KEYS         4096 /* counters of changes per touch key (hashed) */
#define CHECKPOINT_EVERY_MS  250
#define WAL_MAX_BYTES        (512ll * 1024 * 1024)
#define RESTART_POLL_US      200
#define RESTART_WAIT_MS      10
#define BUSY_RETRY_S         1
#define SHM_MAP_BYTES        4096 /* of the -shm file: its header is the first 136 */

struct stmt_slot {
    const char *sql;
    sqlite3_stmt *stmt;
};

struct db_conn {
    sqlite3 *h;
    struct stmt_slot cache[STMT_CACHE];
    /* a read transaction kept open between reads (sq_read), whose snapshot
     * is current while the database's stamp still equals this one; when
     * not warm, the stamp of the last read (seen: there was one) */
    bool warm, seen;
    unsigned char stamp[DB_STAMP_SIZE];
};

/* A write transaction waiting for (or run by) the writer. Lives on the
 * caller's stack until done. */
struct wjob {
    db_tx_fn fn;
    void *ud;
    uint64_t touch; /* what fn may change (db.h: DB_TOUCH_*) */
    br_err rc;
    int retry_after;
    char msg[512];
    bool done;
    pthread_cond_t cv;
    struct wjob *next;
};

struct sqlite_db {
    struct db base;
    char *path; /* named in failures that concern the file as a whole */
    struct db_pool pool;
    struct db_conn *conns;
    int n;
    int wait_ms;
    int lock_wait_ms;
    int ping_ms;
    pthread_mutex_t ping_mu; /* one health check at a time on ping_conn */
    struct db_conn ping_conn;

    /* the writer: a FIFO of waiting transactions, one thread, one connection */
    pthread_mutex_t wmu;
    pthread_cond_t wcv;
    struct wjob *whead, *wtail;
    bool wstop;
    bool writer_started;
    pthread_t writer;
    struct db_conn wconn;

    /* the checkpointer */
    pthread_cond_t ccv; /* under wmu */
    bool checkpointer_started;
    pthread_t checkpointer;
    struct db_conn cconn;

    /* false while the checkpointer resets the WAL: sq_read keeps no
     * snapshot then, since a kept one would make the reset wait in vain */
    atomic_bool keep_snapshots;

    /* the wal-index (`-shm`) file, mapped read-only for stamp() once it
     * holds a header; NULL until then, or for good without it */
    int shm_fd;
    _Atomic(const unsigned char *) shm;
    /* the database file, read-only, for starting the write-back of what the
     * checkpoints copied into it; -1 without */
    int db_fd;

    /* The journal of the writer's commits (sq_mark, sq_unchanged): the
     * stamp the last batch left (when nothing but that batch committed since
     * the batch before it), and counts of the changes the batches made, to
     * everything, per touch key (hashed into JOURNAL_KEYS) and to any key
     * (DB_TOUCH_EVERY_KEY). Under jmu. */
    pthread_mutex_t jmu;
    unsigned char known[DB_STAMP_SIZE];
    bool has_known;
    uint64_t all;
    uint64_t keys[JOURNAL_KEYS];
    uint64_t keyed;
};

static br_err busy(void)
{
    return err_set_retry(BR_BUSY, BUSY_RETRY_S, BUSY_MSG);
}

static br_err fail(sqlite3 *h, int rc, const char *what)
{
    /* another writer kept the lock past the busy timeout */
    if ((rc & 0xff) == SQLITE_BUSY) return busy();
    const char *msg = h ? sqlite3_errmsg(h) : sqlite3_errstr(rc);
    if ((rc & 0xff) == SQLITE_CONSTRAINT &&
        (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY))
        return err_set(BR_CONFLICT, "%s", msg);
    (void)what;
    return err_set(BR_STORE, "%s", msg);
}

static br_err exec_plain(sqlite3 *h, const char *sql)
{
    char *emsg = NULL;
    int rc = sqlite3_exec(h, sql, NULL, NULL, &emsg);
    if ((rc & 0xff) == SQLITE_BUSY) {
        sqlite3_free(emsg);
        return busy();
    }
    if (rc != SQLITE_OK) {
        br_err e = err_set(BR_STORE, "%s", emsg ? emsg : sqlite3_errstr(rc));
        sqlite3_free(emsg);
        return e;
    }
    return BR_OK;
}

static br_err conn_open(const char *path, int busy_ms, struct db_conn *c)
{
    memset(c, 0, sizeof *c);
    int rc = sqlite3_open_v2(
        path, &c->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        br_err e = err_set(BR_STORE, "cannot open %s: %s", path,
                           c->h ? sqlite3_errmsg(c->h) : sqlite3_errstr(rc));
        sqlite3_close(c->h);
        c->h = NULL;
        return e;
    }
    sqlite3_extended_result_codes(c->h, 1);
    sqlite3_busy_timeout(c->h, busy_ms);
    br_err e = exec_plain(c->h, "PRAGMA journal_mode=WAL;"
                                "PRAGMA synchronous=FULL;"
                                "PRAGMA foreign_keys=ON;"
                                "PRAGMA wal_autocheckpoint=0;");
    if (e) e = err_prefix(e, path);
    return e;
}

static void conn_close(struct db_conn *c)
{
    for (int i = 0; i < STMT_CACHE; i++)
        if (c->cache[i].stmt) sqlite3_finalize(c->cache[i].stmt);
    sqlite3_close(c->h);
    c->h = NULL;
}

static void stop_threads(struct sqlite_db *s);

static void sq_close(struct db *db)
{
    struct sqlite_db *s = (struct sqlite_db *)db;
    if (!s) return;
    stop_threads(s);
    if (s->wconn.h) conn_close(&s->wconn);
    if (s->cconn.h) conn_close(&s->cconn);
    for (int i = 0; i < s->n; i++)
        if (s->conns[i].h) conn_close(&s->conns[i]);
    free(s->conns);
    if (s->ping_conn.h) conn_close(&s->ping_conn);
    /* only now: closing any descriptor of a file drops every POSIX lock
     * this process holds on it, SQLite's on the -shm file included */
    const unsigned char *shm = atomic_load(&s->shm);
    if (shm) munmap((void *)shm, SHM_MAP_BYTES);
    if (s->shm_fd >= 0) close(s->shm_fd);
    if (s->db_fd >= 0) close(s->db_fd);
    free(s->path);
    pthread_mutex_destroy(&s->ping_mu);
    db_pool_destroy(&s->pool);
    pthread_mutex_destroy(&s->wmu);
    pthread_mutex_destroy(&s->jmu);
    pthread_cond_destroy(&s->wcv);
    pthread_cond_destroy(&s->ccv);
    free(s);
}

/* --- the writer: group commit ------------------------------------------------------ */

/* Ends a job with its outcome (the detail comes from this thread's err). */
static void job_fail(struct wjob *j, br_err rc)
{
    j->rc = rc;
    j->retry_after = err_retry_after();
    snprintf(j->msg, sizeof j->msg, "%s", err_msg());
}

static bool sq_stamp(struct db *db, unsigned char out[DB_STAMP_SIZE]);

/* The wal-index header's change counter (iChange: bytes 8-11, native byte
 * order), which every commit raises by one. */
static uint32_t stamp_changes(const unsigned char st[DB_STAMP_SIZE])
{
    uint32_t v;
    memcpy(&v, st + 8, sizeof v);
    return v;
}

/* Counts what a committed batch changed. pre is the stamp read before its
 * COMMIT, while the batch held the write lock (NULL: could not be read):
 * commits of others since the last batch show as a pre that is not the
 * stamp it left, and one that slipped in between the COMMIT and the read of
 * post as a change counter more than one past pre's; either counts as a
 * change to everything, since nobody can tell what it was. */
static void journal_commit(struct sqlite_db *s, const struct wjob *batch, const unsigned char *pre)
{
    unsigned char post[DB_STAMP_SIZE];
    bool post_ok = sq_stamp(&s->base, post);
    bool alone =
        pre && post_ok &&
        (!memcmp(pre, post, DB_STAMP_SIZE) || stamp_changes(post) == stamp_changes(pre) + 1);
    pthread_mutex_lock(&s->jmu);
    if (!pre || !s->has_known || memcmp(pre, s->known, DB_STAMP_SIZE) || !alone) s->all++;
    for (const struct wjob *j = batch; j; j = j->next) {
        if (j->rc != BR_OK || j->touch == DB_TOUCH_NONE) continue; /* undone, or unread */
        if (j->touch == DB_TOUCH_ALL) {
            s->all++;
        } else {
            s->keys[j->touch % JOURNAL_KEYS]++;
            s->keyed++;
        }
    }
    s->has_known = post_ok;
    if (post_ok) memcpy(s->known, post, DB_STAMP_SIZE);
    pthread_mutex_unlock(&s->jmu);
}

/* After a COMMIT that failed: whatever happened, nothing can be told. */
static void journal_forget(struct sqlite_db *s)
{
    pthread_mutex_lock(&s->jmu);
    s->all++;
    s->has_known = false;
    pthread_mutex_unlock(&s->jmu);
}

/* The journal's count of the changes to what a read of key depends on
 * besides everything (the caller holds jmu). */
static uint64_t key_gen(const struct sqlite_db *s, uint64_t key)
{
    if (key == DB_TOUCH_NONE) return 0;
    if (key == DB_TOUCH_EVERY_KEY) return s->keyed;
    return s->keys[key % JOURNAL_KEYS];
}

static bool sq_mark(struct db *db, uint64_t key, struct db_mark *m)
{
    struct sqlite_db *s = (struct sqlite_db *)db;
    /* the stamp first: the counts read after it include every batch that
     * committed before it */
    if (!sq_stamp(db, m->stamp)) return false;
    pthread_mutex_lock(&s->jmu);
    m->all = s->all;
    m->key = key;
    m->key_gen = key_gen(s, key);
    pthread_mutex_unlock(&s->jmu);
    return true;
}

static bool sq_unchanged(struct db *db, const struct db_mark *m)
{
    struct sqlite_db *s = (struct sqlite_db *)db;
    unsigned char now[DB_STAMP_SIZE];
    if (!sq_stamp(db, now)) return false;
    if (!memcmp(now, m->stamp, DB_STAMP_SIZE)) return true; /* no commit at all */
    /* commits since, all of them the writer's (the database is where its
     * last batch left it) and none that touched what the read depends on */
    pthread_mutex_lock(&s->jmu);
    bool same = s->has_known && !memcmp(now, s->known, DB_STAMP_SIZE) && s->all == m->all &&
                key_gen(s, m->key) == m->key_gen;
    pthread_mutex_unlock(&s->jmu);
    return same;
}

/* Runs one batch of transactions in one commit. */
static void run_batch(struct sqlite_db *s, struct wjob *batch)
{
    sqlite3 *h = s->wconn.h;
    br_err rc = exec_plain(h, "BEGIN IMMEDIATE");
    if (rc) {
        if (rc == BR_BUSY)
            log_warn("db: another process held the write lock past %d ms "
                     "(BARBERIA_DB_LOCK_WAIT_MS); answering busy",
                     s->lock_wait_ms);
        for (struct wjob *j = batch; j; j = j->next)
            job_fail(j, rc);
        return;
    }
    for (struct wjob *j = batch; j; j = j->next) {
        rc = exec_plain(h, "SAVEPOINT tx");
        if (!rc) {
            err_clear();
            br_err frc = j->fn(&s->base, &s->wconn, j->ud);
            if (frc) {
                job_fail(j, frc);
                rc = exec_plain(h, "ROLLBACK TO tx");
            } else {
                j->rc = BR_OK;
            }
            if (!rc) rc = exec_plain(h, "RELEASE tx");
        }
        if (rc) {
            /* the savepoint machinery itself failed: nothing of the batch
             * can be trusted; undo it all */
            struct err_kept why;
            err_keep(&why);
            sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
            err_restore(rc, &why);
            for (struct wjob *k = batch; k; k = k->next)
                if (k->rc == BR_OK) job_fail(k, rc);
            log_error("db: a write batch failed and was rolled back: %s", why.msg);
            return;
        }
    }
    /* the write lock is still held: no other connection commits until ours */
    unsigned char pre[DB_STAMP_SIZE];
    bool pre_ok = sq_stamp(&s->base, pre);
    rc = exec_plain(h, "COMMIT");
    if (!rc) journal_commit(s, batch, pre_ok ? pre : NULL);
    if (rc) {
        journal_forget(s);
        struct err_kept why;
        err_keep(&why);
        if (!sqlite3_get_autocommit(h)) sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        err_restore(rc, &why);
        for (struct wjob *j = batch; j; j = j->next)
            if (j->rc == BR_OK) job_fail(j, rc);
        log_error("db: committing a write batch failed: %s", why.msg);
    }
}

static void *writer_main(void *arg)
{
    struct sqlite_db *s = arg;
    pthread_mutex_lock(&s->wmu);
    for (;;) {
        while (!s->whead && !s->wstop)
            pthread_cond_wait(&s->wcv, &s->wmu);
        if (!s->whead) break; /* stopping, and nothing is waiting */
        /* every transaction waiting now, oldest first, up to BATCH_MAX */
        struct wjob *batch = s->whead, *last = batch;
        int n = 1;
        for (; n < BATCH_MAX && last->next; n++)
            last = last->next;
        s->whead = last->next;
        if (!s->whead) s->wtail = NULL;
        last->next = NULL;
        metric_add(M_DB_WRITES_WAITING, -n);
        pthread_mutex_unlock(&s->wmu);

        run_batch(s, batch);

        pthread_mutex_lock(&s->wmu);
        for (struct wjob *j = batch, *next; j; j = next) {
            next = j->next; /* j may be gone once signalled */
            j->done = true;
            pthread_cond_signal(&j->cv);
        }
    }
    pthread_mutex_unlock(&s->wmu);
    return NULL;
}

static br_err sq_write(struct db *db, db_tx_fn fn, void *ud, uint64_t touch)
{
    struct sqlite_db *s = (struct sqlite_db *)db;
    struct wjob j = {.fn = fn, .ud = ud, .touch = touch};
    pthread_cond_init(&j.cv, NULL);
    pthread_mutex_lock(&s->wmu);
    if (s->wstop) {
        pthread_mutex_unlock(&s->wmu);
        pthread_cond_destroy(&j.cv);
        return err_set(BR_STORE, "the database is closing");
    }
    if (s->wtail)
        s->wtail->next = &j;
    else
        s->whead = &j;
    s->wtail = &j;
    metric_inc(M_DB_WRITES_WAITING);
    pthread_cond_signal(&s->wcv);
    while (!j.done)
        pthread_cond_wait(&j.cv, &s->wmu);
    pthread_mutex_unlock(&s->wmu);
    pthread_cond_destroy(&j.cv);
    if (j.rc) {
        if (j.retry_after > 0) return err_set_retry(j.rc, j.retry_after, "%s", j.msg);
        return err_set(j.rc, "%s", j.msg);
    }
    return BR_OK;
}

/* --- the checkpointer ---------------------------------------------------------------- */

/* The checkpointer's busy handler: a RESTART blocks the writer while it
 * waits for the readers of the old log to finish, so it looks for a gap
 * between their (short) reads every RESTART_POLL_US, for RESTART_WAIT_MS at
 * most, and gives up until the next tick - never SQLite's default handler,
 * whose sleeps grow to 100 ms each, with the writer held all along. */
static void cool_idle(struct sqlite_db *s);

static int restart_busy(void *ud, int count)
{
    if ((int64_t)count * RESTART_POLL_US >= (int64_t)RESTART_WAIT_MS * 1000) return 0;
    cool_idle(ud); /* snapshots kept by idle connections would never end */
    struct timespec ts = {0, RESTART_POLL_US * 1000L};
    nanosleep(&ts, NULL);
    return 1;
}

/* The statements of a kept read transaction (sq_read), prepared once per
 * connection like the repository's (the cache is keyed by address). */
static const char sql_begin_read[] = "BEGIN", sql_end_read[] = "COMMIT";
static br_err step_cached(struct db_conn *c, const char *sql);

/* Ends the read transaction a connection kept open (sq_read). */
static void cool(struct db_conn *c)
{
    if (c->warm && !sqlite3_get_autocommit(c->h) && step_cached(c, sql_end_read) != BR_OK)
        sqlite3_exec(c->h, "ROLLBACK", NULL, NULL, NULL);
    c->warm = false;
}

/* Ends the read transactions idle pooled connections kept open (sq_read),
 * so that none holds a checkpoint back for longer than a tick. */
static void cool_idle(struct sqlite_db *s)
{
    struct db_conn *idle[64];
    int n = 0;
    while (n < (int)(sizeof idle / sizeof idle[0]) && db_pool_try_take(&s->pool, (void **)&idle[n]))
        n++;
    for (int i = 0; i < n; i++)
        cool(idle[i]);
    while (n > 0)
        db_pool_put(&s->pool, idle[--n]);
}

static void *checkpointer_main(void *arg)
{
    struct sqlite_db *s = arg;
    sqlite3 *h = s->cconn.h;
    sqlite3_busy_handler(h, restart_busy, s);
    int done_before = -1;
    pthread_mutex_lock(&s->wmu);
    while (!s->wstop) {
        struct timespec until = deadline_in(CLOCK_MONOTONIC, CHECKPOINT_EVERY_MS);
        pthread_cond_timedwait(&s->ccv, &s->wmu, &until);
        if (s->wstop) break;
        pthread_mutex_unlock(&s->wmu);
        cool_idle(s);
        int log_frames = 0, done = 0;
        /* PASSIVE: copies what no reader still needs, waits for no one */
        int rc = sqlite3_wal_checkpoint_v2(h, NULL, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &done);
        int64_t wal_bytes = (int64_t)log_frames * 4096; /* about: frames of the default page */
        /* under a stream of writes a PASSIVE checkpoint never copies the
         * whole log, and only a whole copy syncs the database file: its
         * pages would pile up in the page cache for the RESTART below to
         * sync, holding the writer (300 ms at a million appointments).
         * Their write-back starts now instead, waiting for nothing. */
        if (rc == SQLITE_OK && done != done_before && s->db_fd >= 0)
            (void)sync_file_range(s->db_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        done_before = done;
        if (rc == SQLITE_OK && wal_bytes > WAL_MAX_BYTES) {
            /* readers keep it from being reused: wait for them (the busy
             * timeout bounds it) and start the log over; no snapshot is
             * kept meanwhile, or the wait would be in vain */
            atomic_store(&s->keep_snapshots, false);
            cool_idle(s);
            rc = sqlite3_wal_checkpoint_v2(h, NULL, SQLITE_CHECKPOINT_RESTART, &log_frames, &done);
            if (rc == SQLITE_OK) atomic_store(&s->keep_snapshots, true);
            if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY)
                log_warn("db: resetting the %lld-byte WAL failed: %s", (long long)wal_bytes,
                         sqlite3_errmsg(h));
        } else if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY) {
            log_warn("db: checkpoint failed: %s", sqlite3_errmsg(h));
        }
        pthread_mutex_lock(&s->wmu);
    }
    pthread_mutex_unlock(&s->wmu);
    return NULL;
}

static br_err start_threads(struct sqlite_db *s)
{
    if (pthread_create(&s->writer, NULL, writer_main, s) != 0)
        return err_set(BR_INTERNAL, "cannot start the database writer");
    s->writer_started = true;
    if (pthread_create(&s->checkpointer, NULL, checkpointer_main, s) != 0)
        return err_set(BR_INTERNAL, "cannot start the database checkpointer");
    s->checkpointer_started = true;
    return BR_OK;
}

/* Lets the writer finish every transaction already queued, then stops both
 * threads. */
static void stop_threads(struct sqlite_db *s)
{
    pthread_mutex_lock(&s->wmu);
    s->wstop = true;
    pthread_cond_broadcast(&s->wcv);
    pthread_cond_broadcast(&s->ccv);
    pthread_mutex_unlock(&s->wmu);
    if (s->writer_started) pthread_join(s->writer, NULL);
    if (s->checkpointer_started) pthread_join(s->checkpointer, NULL);
    s->writer_started = s->checkpointer_started = false;
}

static br_err sq_open(const char *path, const struct db_pool_opts *o, struct db **out)
{
    /* No allocation statistics: they take a global mutex on every malloc.
     * Only possible before SQLite initialises; later calls are refused,
     * which is harmless. Stores are opened by the main thread only. */
    static bool configured;
    if (!configured) {
        configured = true;
        (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    }
    int n = o && o->size > 0 ? o->size : DEFAULT_POOL;
    struct sqlite_db *s = xcalloc(1, sizeof *s);
    s->base.ops = &db_sqlite_ops;
    s->shm_fd = s->db_fd = -1;
    atomic_init(&s->keep_snapshots, true);
    s->path = xstrdup(path);
    s->wait_ms = o && o->wait_ms > 0 ? o->wait_ms : DEFAULT_WAIT_MS;
    s->lock_wait_ms = o && o->lock_wait_ms > 0 ? o->lock_wait_ms : DEFAULT_LOCK_WAIT_MS;
    s->ping_ms = o && o->ping_ms > 0 ? o->ping_ms : DEFAULT_PING_MS;
    db_pool_init(&s->pool, n, s->wait_ms);
    pthread_mutex_init(&s->ping_mu, NULL);
    pthread_mutex_init(&s->wmu, NULL);
    pthread_mutex_init(&s->jmu, NULL);
    pthread_cond_init(&s->wcv, NULL);
    /* waits are measured on the monotonic clock: a clock step never
     * stretches or cuts one short */
    cond_init_mono(&s->ccv);
    s->conns = xcalloc((size_t)n, sizeof *s->conns);
    /* a new database is the owner's alone (password hashes, the links'
     * key), whatever the folder's mode: SQLite gives its -wal and -shm the
     * database file's mode */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    br_err rc = BR_OK;
    for (int i = 0; i < n && !rc; i++) {
        rc = conn_open(path, s->lock_wait_ms, &s->conns[i]);
        s->n = i + 1;
        db_pool_put(&s->pool, &s->conns[i]);
    }
    if (!rc) rc = conn_open(path, s->ping_ms, &s->ping_conn);
    if (!rc) rc = conn_open(path, s->lock_wait_ms, &s->wconn);
    if (!rc) rc = conn_open(path, s->lock_wait_ms, &s->cconn);
    if (!rc) rc = start_threads(s);
    if (rc) {
        sq_close(&s->base);
        return rc;
    }
    char *shm = xasprintf("%s-shm", path);
    s->shm_fd = open(shm, O_RDONLY | O_CLOEXEC);
    free(shm);
    s->db_fd = open(path, O_RDONLY | O_CLOEXEC);
    *out = &s->base;
    return BR_OK;
}

/* The stamp is the first copy of the wal-index header (the start of the
 * `-shm` file, SQLite's documented WAL format: walformat.html). Every
 * commit rewrites it (the frame count, the change counter, the checksums;
 * a WAL reset the salts), second copy first, and readers start their
 * snapshot from it. It is read from a read-only mapping of the file: a
 * copy of 48 bytes, no system call. The mapping cannot fault: SQLite only
 * truncates the file when a connection opens it with no other connection
 * anywhere holding it, and this pool's connections hold it until sq_close
 * unmaps it. A copy that tears across a writer's update differs from any
 * stamp taken before and counts as a change. */
static bool sq_stamp(struct db *db, unsigned char out[DB_STAMP_SIZE])
{
    struct sqlite_db *s = (struct sqlite_db *)db;
    const unsigned char *shm = atomic_load_explicit(&s->shm, memory_order_acquire);
    if (!shm) {
        /* mapped once it holds a header: every connection is open by then */
        struct stat sb;
        if (s->shm_fd < 0 || fstat(s->shm_fd, &sb) || sb.st_size < SHM_MAP_BYTES) return false;
        void *m = mmap(NULL, SHM_MAP_BYTES, PROT_READ, MAP_SHARED, s->shm_fd, 0);
        if (m == MAP_FAILED) return false;
        const unsigned char *none = NULL;
        if (!atomic_compare_exchange_strong(&s->shm, &none, m)) munmap(m, SHM_MAP_BYTES);
        shm = atomic_load(&s->shm);
    }
    memcpy(out, shm, DB_STAMP_SIZE);
    atomic_thread_fence(memory_order_acquire);
    /* byte 12 is isInit: a header not yet built stamps nothing */
    return out[12] != 0;
}

static br_err sq_acquire(struct db *db, struct db_conn **out)
{
    br_err rc = db_pool_take(&((struct sqlite_db *)db)->pool, (void **)out);
    if (!rc) cool(*out); /* the caller starts its own transactions */
    return rc;
}

static void sq_release(struct db *db, struct db_conn *c)
{
    if (!c->warm && !sqlite3_get_autocommit(c->h)) {
        /* a caller forgot to end its transaction: never hand that on */
        log_error("db: connection released inside a transaction; rolling back");
        sqlite3_exec(c->h, "ROLLBACK", NULL, NULL, NULL);
    }
    db_pool_put(&((struct sqlite_db *)db)->pool, c);
}

static br_err sq_begin(struct db_conn *c)
{
    return exec_plain(c->h, "BEGIN IMMEDIATE");
}

/* A deferred transaction in WAL mode reads one snapshot from its first
 * statement on. */
static br_err sq_begin_read(struct db_conn *c)
{
    return exec_plain(c->h, "BEGIN");
}

static br_err sq_commit(struct db_conn *c)
{
    br_err rc = exec_plain(c->h, "COMMIT");
    if (rc && !sqlite3_get_autocommit(c->h)) sqlite3_exec(c->h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static void sq_rollback(struct db_conn *c)
{
    if (!sqlite3_get_autocommit(c->h)) sqlite3_exec(c->h, "ROLLBACK", NULL, NULL, NULL);
}

static br_err sq_lock(struct db_conn *c, const char *key)
{
    /* BEGIN IMMEDIATE already holds the database's only write lock. */
    (void)c;
    (void)key;
    return BR_OK;
}

static br_err prepared(struct db_conn *c, const char *sql, sqlite3_stmt **out)
{
    size_t h = ((uintptr_t)sql >> 3) % STMT_CACHE;
    for (size_t probe = 0; probe < STMT_CACHE; probe++) {
        struct stmt_slot *slot = &c->cache[(h + probe) % STMT_CACHE];
        if (slot->sql == sql) {
            *out = slot->stmt;
            return BR_OK;
        }
        if (!slot->sql) {
            int rc =
                sqlite3_prepare_v3(c->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &slot->stmt, NULL);
            if (rc != SQLITE_OK) {
                slot->stmt = NULL;
                return fail(c->h, rc, "prepare");
            }
            slot->sql = sql;
            *out = slot->stmt;
            return BR_OK;
        }
    }
    /* cache full: should not happen with a fixed set of statements */
    return err_set(BR_STORE, "statement cache full");
}

static br_err step_cached(struct db_conn *c, const char *sql)
{
    sqlite3_stmt *st = NULL;
    br_err rc = prepared(c, sql, &st);
    if (rc) return rc;
    int src = sqlite3_step(st);
    sqlite3_reset(st);
    return src == SQLITE_DONE ? BR_OK : fail(c->h, src, "step");
}

static br_err sq_exec(struct db_conn *c, const char *sql, const struct db_val *params, int nparams,
                      db_row_fn fn, void *ud, int64_t *changes)
{
    sqlite3_stmt *st = NULL;
    br_err rc = prepared(c, sql, &st);
    if (rc) return rc;
    int src = SQLITE_OK;
    for (int i = 0; i < nparams && src == SQLITE_OK; i++) {
        const struct db_val *p = &params[i];
        switch (p->type) {
        case DB_NULL:
            src = sqlite3_bind_null(st, i + 1);
            break;
        case DB_INT:
            src = sqlite3_bind_int64(st, i + 1, p->i);
            break;
        case DB_REAL:
            src = sqlite3_bind_double(st, i + 1, p->d);
            break;
        case DB_TEXT:
            src = sqlite3_bind_text64(st, i + 1, p->s, p->n, SQLITE_STATIC, SQLITE_UTF8);
            break;
        }
    }
    if (src != SQLITE_OK) rc = fail(c->h, src, "bind");
    while (!rc) {
        src = sqlite3_step(st);
        if (src == SQLITE_DONE) break;
        if (src != SQLITE_ROW) {
            rc = fail(c->h, src, "step");
            break;
        }
        if (!fn) continue;
        int n = sqlite3_column_count(st);
        if (n > MAX_COLS) n = MAX_COLS;
        struct db_val cols[MAX_COLS];
        for (int i = 0; i < n; i++) {
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_NULL:
                cols[i] = db_null();
                break;
            case SQLITE_INTEGER:
                cols[i] = db_int(sqlite3_column_int64(st, i));
                break;
            case SQLITE_FLOAT:
                cols[i] = db_real(sqlite3_column_double(st, i));
                break;
            default: {
                const unsigned char *t = sqlite3_column_text(st, i);
                cols[i] = (struct db_val){.type = DB_TEXT,
                                          .s = t ? (const char *)t : "",
                                          .n = (size_t)sqlite3_column_bytes(st, i)};
            }
            }
        }
        rc = fn(ud, cols, n);
    }
    if (!rc && changes) *changes = sqlite3_changes64(c->h);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

/* One read on a pooled connection that may keep its read transaction open
 * afterwards (when the database looks quiet): the next read on it skips
 * starting one (the WAL read lock, a
 * process-wide mutex and fcntl() on the -shm file, and as much to end it)
 * while the stamp shows no commit since the snapshot was taken; the stamp
 * is read before BEGIN, so an equal stamp later means the snapshot is the
 * latest state. The checkpointer ends the transactions of idle connections
 * every tick, so a kept snapshot holds back checkpoints CHECKPOINT_EVERY_MS
 * at most. */
static br_err sq_read(struct db *db, const char *sql, const struct db_val *params, int nparams,
                      db_row_fn fn, void *ud)
{
    struct sqlite_db *s = (struct sqlite_db *)db;
    struct db_conn *c = NULL;
    br_err rc = db_pool_take(&s->pool, (void **)&c);
    if (rc) return rc;
    unsigned char now[DB_STAMP_SIZE];
    bool stamped = sq_stamp(db, now);
    bool same = stamped && c->seen && !memcmp(c->stamp, now, DB_STAMP_SIZE);
    if (c->warm && !same) cool(c);
    /* a transaction is kept only when the database looks quiet (nothing
     * committed since this connection's last read): under a stream of
     * writes every snapshot would be dropped at the next read, and
     * starting and ending it explicitly costs more than a plain read */
    if (!c->warm && same && atomic_load_explicit(&s->keep_snapshots, memory_order_relaxed) &&
        step_cached(c, sql_begin_read) == BR_OK)
        c->warm = true;
    c->seen = stamped;
    if (stamped) memcpy(c->stamp, now, DB_STAMP_SIZE);
    rc = sq_exec(c, sql, params, nparams, fn, ud, NULL);
    /* a failure, or a statement that wrote after all, ends the transaction
     * (committing what an autocommit statement would have) */
    if (c->warm && (rc || sqlite3_txn_state(c->h, "main") == SQLITE_TXN_WRITE)) cool(c);
    db_pool_put(&s->pool, c);
    return rc;
}

static br_err sq_ping(struct db *db)
{
    struct sqlite_db *s = (struct sqlite_db *)db;
    int64_t start = clock_mono_ms();
    struct timespec until = deadline_in(CLOCK_REALTIME, s->ping_ms);
    if (pthread_mutex_timedlock(&s->ping_mu, &until) != 0) return busy();
    int left = s->ping_ms - (int)(clock_mono_ms() - start);
    br_err rc = BR_OK;
    if (left <= 0) {
        rc = busy();
    } else {
        /* readers never wait for the writer in WAL mode; the busy timeout
         * covers what still can block a reader (a recovery, an exclusive
         * lock taken by another program) */
        sqlite3_busy_timeout(s->ping_conn.h, left);
        rc = exec_plain(s->ping_conn.h, "SELECT 1 FROM perfiles LIMIT 1");
    }
    pthread_mutex_unlock(&s->ping_mu);
    return rc;
}

static br_err sq_backup_to(struct db *db, const char *path)
{
    struct db_conn *c = NULL;
    br_err rc = sq_acquire(db, &c);
    if (rc) return rc;
    sqlite3 *to = NULL;
    rc = sqlite_open_file(path, true, &to);
    if (!rc) rc = sqlite_copy(c->h, to, path);
    /* the copy is a file of its own: no WAL beside it */
    if (!rc) rc = exec_plain(to, "PRAGMA journal_mode=DELETE");
    sqlite3_close(to);
    sq_release(db, c);
    return rc;
}

static br_err sq_restore_from(struct db *db, const char *path)
{
    sqlite3 *from = NULL;
    br_err rc = sqlite_open_file(path, false, &from);
    struct db_conn *c = NULL;
    if (!rc) rc = sq_acquire(db, &c);
    /* the copy takes the write lock like any writer (busy timeout) */
    if (!rc) rc = sqlite_copy(from, c->h, ((struct sqlite_db *)db)->path);
    if (!rc) rc = exec_plain(c->h, "PRAGMA journal_mode=WAL");
    if (c) sq_release(db, c);
    sqlite3_close(from);
    return rc;
}

static br_err user_version(sqlite3 *h, int *v)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL);
    if (rc != SQLITE_OK) return fail(h, rc, "user_version");
    rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? BR_OK : fail(h, rc, "user_version");
}

static br_err sq_migrate(struct db *db)
{
    struct db_conn *c = NULL;
    br_err rc = sq_acquire(db, &c);
    if (rc) return rc;
    /* a schema already current needs no write lock: a read (`user list`,
     * a node starting) goes ahead while another process writes */
    int v = 0;
    rc = user_version(c->h, &v);
    if (!rc && v == schema_sqlite_count) {
        sq_release(db, c);
        return BR_OK;
    }
    if (!rc) rc = exec_plain(c->h, "BEGIN IMMEDIATE");
    if (!rc) rc = user_version(c->h, &v);
    for (int i = v; !rc && i < schema_sqlite_count; i++) {
        rc = exec_plain(c->h, schema_sqlite[i]);
        if (!rc) {
            char pragma[48];
            snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", i + 1);
            rc = exec_plain(c->h, pragma);
        }
        if (!rc) log_info("db: schema migrated to version %d", i + 1);
    }
    if (!rc && v > schema_sqlite_count)
        rc = err_set(BR_STORE, "database schema version %d is newer than this program's (%d)", v,
                     schema_sqlite_count);
    if (!rc) rc = exec_plain(c->h, "COMMIT");
    if (rc) {
        struct err_kept why;
        err_keep(&why);
        sq_rollback(c);
        err_restore(rc, &why);
        rc = err_prefix(rc, ((struct sqlite_db *)db)->path);
    }
    /* statements prepared before the migration may refer to the old schema */
    for (int i = 0; i < STMT_CACHE; i++) {
        if (c->cache[i].stmt) sqlite3_finalize(c->cache[i].stmt);
        c->cache[i].stmt = NULL;
        c->cache[i].sql = NULL;
    }
    sq_release(db, c);
    return rc;
}

const struct db_ops db_sqlite_ops = {
    .name = "sqlite",
    .open = sq_open,
    .close = sq_close,
    .migrate = sq_migrate,
    .ping = sq_ping,
    .acquire = sq_acquire,
    .release = sq_release,
    .begin = sq_begin,
    .begin_read = sq_begin_read,
    .backup_to = sq_backup_to,
    .restore_from = sq_restore_from,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .lock = sq_lock,
    .exec = sq_exec,
    .write = sq_write,
    .mark = sq_mark,
    .unchanged = sq_unchanged,
    .read = sq_read,
};
