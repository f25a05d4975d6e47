/*
 * db_pg.c - the SQL port on PostgreSQL, through libpq (see db.h).
 *
 * A pool of connections, each with its own prepared statements (named on
 * first use, keyed by the SQL string's address, as on SQLite). Every round
 * trip is asynchronous with a deadline of our own (poll on the socket), so
 * a server that stops answering costs a request at most its bound, never a
 * hang: past it the query is cancelled and the connection dropped.
 *
 * Sessions run in UTC with ISO dates, so the adapter can hand timestamptz
 * columns to the repository in the API's form (YYYY-MM-DDTHH:MM:SS.sssZ,
 * exactly as SQLite stores them); integer and floating columns become
 * DB_INT and DB_REAL, everything else text. Parameters travel as text and
 * the server infers their types from the statement (`?` placeholders are
 * rewritten to $1, $2... once per statement).
 *
 * Writes: each db_ops.write is one transaction on one pooled connection
 * (READ COMMITTED). PostgreSQL commits concurrent transactions together on
 * its own (its WAL flush serves every waiting commit), so no writer thread
 * is needed here. A check-then-write takes a transaction-scoped advisory
 * lock on its key first (db_ops.lock: one cita's photos, the outbox, a
 * throttling key), which serialises it against every other node; a
 * booking locks the hours of its barber's calendar it touches (citas.c:
 * lock_slot_hours), and the schema's exclusion constraint makes its insert
 * the check.
 *
 * Outages: a connection the server dropped (a restart, a network cut) is
 * marked broken; the next lease reconnects it within a short bound. While
 * the server is away requests fail at once with BR_BUSY "Base de datos no
 * disponible" (503 with Retry-After) and the service recovers by itself.
 * An idle connection a server shutdown or restart has ended holds the
 * server's goodbye (an error, then the end of the stream) unread in its
 * socket: every lease, and the health check, looks for it without a round
 * trip (conn_stale) and reconnects such a connection before using it, so
 * the first requests after a restart succeed instead of failing once per
 * pooled connection. The health check also tries once more on a fresh
 * connection when its own fails at once with a lost connection.
 */
#include "db.h"
#include "db_pg_text.h"
#include "../util/cond.h"
#include "../util/log.h"
#include "../util/metrics.h"
#include "pool.h"
#include "schema.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STMT_CACHE           128
#define MAX_COLS             32
#define MAX_PARAMS           32
#define DEFAULT_POOL         8
#define DEFAULT_WAIT_MS      5000
#define DEFAULT_LOCK_WAIT_MS 10000
#define DEFAULT_PING_MS      1000
#define CONNECT_MS           2000 /* longest (re)connection attempt */
#define SLACK_MS             2000 /* client-side bound past the server's own timeouts */
#define BUSY_MSG             "Servicio ocupado"
#define DOWN_MSG             "Base de datos no disponible"
#define INDOUBT_MSG          "No se sabe si el cambio se guardó: compruébelo antes de repetirlo"
#define INDOUBT_PAUSE_MS     100 /* between two questions about a commit's outcome */
#define RETRY_S              1
#define MIGRATE_LOCK         7305402110529876481ll /* pg_advisory_lock key of migrations */

struct stmt_slot {
    const char *sql;
    int id; /* prepared as "s<id>" */
};

struct db_conn {
    PGconn *h;
    bool broken; /* reconnect before the next use */
    bool opened; /* has been connected once: a new connection is then a reconnect */
    struct stmt_slot cache[STMT_CACHE];
    int nstmt;
    int64_t deadline_ms; /* of the current call, on the monotonic clock */
    int op_ms;           /* bound on one statement */
    char ts[MAX_COLS][DB_PG_TS_LEN + 1];
    char why[256];    /* why it is broken */
    bool retry;       /* the last failure was a deadlock or serialisation failure */
    bool pipe;        /* in a write transaction, in libpq's pipeline mode */
    int pending;      /* commands sent in the pipeline whose results are unread */
    bool txid_unread; /* the transaction's txid_current() is sent, its answer unread */
    int64_t txid;     /* the write transaction's id; 0 until its answer is read */
    bool commit_sent; /* its COMMIT was handed to libpq */
};

struct pg_db {
    struct db base;
    char *target; /* the URL; never logged (it may carry a password) */
    struct db_pool pool;
    struct db_conn *conns;
    int n;
    int wait_ms, lock_wait_ms, ping_ms;
    pthread_mutex_t mu;
    bool outage; /* under mu: logged once when it starts and once when it ends */
    pthread_mutex_t ping_mu;
    struct db_conn ping_conn;
};

static br_err busy(void)
{
    return err_set_retry(BR_BUSY, RETRY_S, BUSY_MSG);
}

/* The connection is lost (or never came up): BR_BUSY DOWN_MSG, with why as
 * the detail pg_acquire logs. */
static br_err down(struct db_conn *c, const char *why)
{
    c->broken = true;
    /* on one line: libpq's messages may span several */
    const char *w = why && *why ? why : "connection lost";
    size_t n = 0;
    for (; *w && n + 1 < sizeof c->why; w++) {
        bool space = *w == '\n' || *w == '\t' || *w == ' ';
        if (!space)
            c->why[n++] = *w;
        else if (n && c->why[n - 1] != ' ')
            c->why[n++] = ' ';
    }
    while (n && c->why[n - 1] == ' ')
        n--;
    c->why[n] = '\0';
    return err_set_retry(BR_BUSY, RETRY_S, DOWN_MSG);
}

/* Notices ("relation already exists, skipping") are not failures: libpq
 * would print them on stderr. */
static void ignore_notice(void *arg, const PGresult *r)
{
    (void)arg;
    (void)r;
}

/* libpq's last message on h, on one line without its final newline;
 * scrubbed of target's password when target is given. */
static const char *conn_msg(PGconn *h, const char *target, char *buf, size_t n)
{
    snprintf(buf, n, "%s", h ? PQerrorMessage(h) : "out of memory");
    size_t len = strlen(buf);
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
        buf[--len] = '\0';
    if (target) db_pg_scrub(target, buf, n);
    return buf;
}

/* Waits until the socket is ready for what libpq wants, or the deadline. */
static bool wait_socket(PGconn *h, bool for_write, int64_t deadline_ms)
{
    int left = (int)(deadline_ms - clock_mono_ms());
    if (left <= 0) return false;
    struct pollfd p = {.fd = PQsocket(h), .events = for_write ? POLLOUT : POLLIN};
    if (p.fd < 0) return false;
    int r;
    do
        r = poll(&p, 1, left);
    while (r < 0 && errno == EINTR);
    return r > 0;
}

static void conn_drop(struct db_conn *c)
{
    if (c->h) PQfinish(c->h);
    c->h = NULL;
    c->nstmt = 0;
    memset(c->cache, 0, sizeof c->cache);
}

/* Whether an idle connection is known to be unusable without asking the
 * server: broken, never opened, or its socket holds what a server that
 * went away sends (its FATAL goodbye, the end of the stream, a reset). What
 * else an idle connection may receive (a notice, a parameter change) is
 * read and left for libpq to process. A connection that looks fine may
 * still fail on its next use (a cut without a goodbye). */
static bool conn_stale(struct db_conn *c)
{
    if (c->broken || !c->h || PQstatus(c->h) != CONNECTION_OK) return true;
    /* a few rounds: libpq reads what is there, and sees the end of the
     * stream only on the read after it */
    for (int i = 0; i < 4; i++) {
        struct pollfd p = {.fd = PQsocket(c->h), .events = POLLIN};
        if (p.fd < 0) return true;
        int r;
        do
            r = poll(&p, 1, 0);
        while (r < 0 && errno == EINTR);
        if (r <= 0) return false; /* nothing waiting */
        if (p.revents & (POLLERR | POLLNVAL)) return true;
        if (!PQconsumeInput(c->h) || PQstatus(c->h) != CONNECTION_OK) return true;
        /* process what came (an error while idle counts as a notice) */
        PGnotify *n;
        while ((n = PQnotifies(c->h)))
            PQfreemem(n);
    }
    return false;
}

/* Gives up on the statement running on c: asks the server to cancel it and
 * drops the connection (its state is unknown). */
static br_err timed_out(struct db_conn *c)
{
    PGcancel *k = PQgetCancel(c->h);
    if (k) {
        char e[128];
        (void)PQcancel(k, e, sizeof e);
        PQfreeCancel(k);
    }
    conn_drop(c);
    c->broken = true;
    log_warn("db: a PostgreSQL call passed its %d ms bound; cancelled", c->op_ms);
    return busy();
}

static br_err result_error(struct db_conn *c, const PGresult *r)
{
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    char buf[256];
    if (!msg) msg = conn_msg(c->h, NULL, buf, sizeof buf);
    if (!state || PQstatus(c->h) != CONNECTION_OK) return down(c, msg);
    if (!strcmp(state, "23505") || !strcmp(state, "23P01")) /* unique, exclusion */
        return err_set(BR_CONFLICT, "%s", msg);
    /* a deadlock or a serialisation failure: the transaction may simply
     * run again (pg_write does) */
    if (!strncmp(state, "40", 2)) c->retry = true;
    if (!strncmp(state, "40", 2) || !strcmp(state, "55P03") || !strcmp(state, "57014"))
        return busy(); /* serialisation, deadlock, lock or statement timeout */
    if (!strncmp(state, "08", 2) || !strncmp(state, "57P", 3)) return down(c, msg);
    return err_set(BR_STORE, "%s", msg);
}

/* Sends what libpq still holds of the commands written, within c's
 * deadline. */
static br_err flush_out(struct db_conn *c)
{
    for (;;) {
        int f = PQflush(c->h);
        if (f == 0) return BR_OK;
        if (f < 0) return down(c, PQerrorMessage(c->h));
        if (!wait_socket(c->h, true, c->deadline_ms)) return timed_out(c);
    }
}

/* Reads every result of the command just sent, within c's deadline. OUT:
 * *out, the last result (or the first error), owned by the caller. */
static br_err collect(struct db_conn *c, PGresult **out)
{
    *out = NULL;
    br_err sent = flush_out(c);
    if (sent) return sent;
    PGresult *keep = NULL;
    for (;;) {
        while (PQisBusy(c->h)) {
            if (!wait_socket(c->h, false, c->deadline_ms)) {
                PQclear(keep);
                return timed_out(c);
            }
            if (!PQconsumeInput(c->h)) {
                PQclear(keep);
                return down(c, PQerrorMessage(c->h));
            }
        }
        PGresult *r = PQgetResult(c->h);
        if (!r) break;
        if (keep && PQresultStatus(keep) == PGRES_FATAL_ERROR) {
            PQclear(r); /* the first error is the one that counts */
        } else {
            PQclear(keep);
            keep = r;
        }
    }
    if (!keep) {
        if (PQstatus(c->h) != CONNECTION_OK) return down(c, PQerrorMessage(c->h));
        return err_set(BR_STORE, "PostgreSQL sent no result");
    }
    ExecStatusType s = PQresultStatus(keep);
    if (s == PGRES_FATAL_ERROR || s == PGRES_BAD_RESPONSE || s == PGRES_NONFATAL_ERROR) {
        br_err rc = result_error(c, keep);
        PQclear(keep);
        return rc;
    }
    *out = keep;
    return BR_OK;
}

/* Runs constant SQL text (one or more statements, no parameters). */
static br_err simple(struct db_conn *c, const char *sql)
{
    if (!c->h) return down(c, NULL);
    c->deadline_ms = clock_mono_ms() + c->op_ms;
    if (!PQsendQuery(c->h, sql)) return down(c, PQerrorMessage(c->h));
    PGresult *r = NULL;
    br_err rc = collect(c, &r);
    PQclear(r);
    return rc;
}

/* --- pipelined write transactions -----------------------------------------------
 *
 * A write transaction runs in libpq's pipeline mode: BEGIN and the
 * statements whose outcome the transaction does not read (exec_later) are
 * sent without waiting; a statement with rows or a count to read, a
 * statement's first PREPARE and COMMIT send a sync point and read every
 * result up to it. A booking (BEGIN, the overlap check, three inserts,
 * COMMIT) thus costs two round trips instead of six. The error of a
 * statement sent ahead surfaces at the next sync point; the server has
 * aborted the transaction by then, so nothing after it takes effect. */

static br_err pipe_sent(struct db_conn *c, int ok)
{
    if (!ok) return down(c, PQerrorMessage(c->h));
    c->pending++;
    return BR_OK;
}

/* The next result within c's deadline; NULL ends a command's results. */
static br_err next_result(struct db_conn *c, PGresult **out)
{
    *out = NULL;
    while (PQisBusy(c->h)) {
        if (!wait_socket(c->h, false, c->deadline_ms)) return timed_out(c);
        if (!PQconsumeInput(c->h)) return down(c, PQerrorMessage(c->h));
    }
    *out = PQgetResult(c->h);
    return BR_OK;
}

static bool failed(const PGresult *r)
{
    ExecStatusType s = PQresultStatus(r);
    return s == PGRES_FATAL_ERROR || s == PGRES_BAD_RESPONSE || s == PGRES_NONFATAL_ERROR;
}

/* The transaction's id, from the answer to pipe_begin's txid_current(). */
static void take_txid(struct db_conn *c, const PGresult *r)
{
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
        c->txid = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
}

/* Sends a sync point and reads every result up to it, within c's deadline.
 * Returns the first command's error, if any. OUT: *last (when last is not
 * NULL and all went well), the result of the last command sent. */
static br_err pipe_sync(struct db_conn *c, PGresult **last)
{
    if (last) *last = NULL;
    if (!PQpipelineSync(c->h)) return down(c, PQerrorMessage(c->h));
    br_err rc = flush_out(c), first = BR_OK;
    PGresult *keep = NULL;
    for (int i = 0; !rc && i < c->pending; i++) {
        for (;;) {
            PGresult *r = NULL;
            rc = next_result(c, &r);
            if (rc || !r) break;
            if (failed(r) && !first) first = result_error(c, r);
            if (c->txid_unread && i == 1) take_txid(c, r);
            if (last && i == c->pending - 1 && !first && !failed(r)) {
                PQclear(keep);
                keep = r;
            } else {
                PQclear(r); /* PGRES_PIPELINE_ABORTED after an error */
            }
        }
    }
    if (!rc) {
        PGresult *r = NULL; /* the sync point's own result */
        rc = next_result(c, &r);
        if (!rc && (!r || PQresultStatus(r) != PGRES_PIPELINE_SYNC))
            rc = down(c, "a pipeline sync point went missing");
        PQclear(r);
    }
    c->pending = 0;
    c->txid_unread = false;
    if (rc || first) {
        PQclear(keep);
        return first ? first : rc;
    }
    if (last)
        *last = keep;
    else
        PQclear(keep);
    return BR_OK;
}

/* BEGIN, and the transaction's id asked for at once, read with the
 * results of its first sync point (pipe_sync): what tells, on another
 * connection, whether a COMMIT whose answer was lost took effect
 * (commit_outcome). */
static br_err pipe_begin(struct db_conn *c)
{
    if (!c->h || c->broken) return down(c, NULL);
    if (!PQenterPipelineMode(c->h)) return down(c, PQerrorMessage(c->h));
    c->pipe = true;
    c->pending = 0;
    c->txid = 0;
    c->txid_unread = false;
    c->commit_sent = false;
    br_err rc = pipe_sent(c, PQsendQueryParams(c->h, "BEGIN", 0, NULL, NULL, NULL, NULL, 0));
    if (!rc)
        rc = pipe_sent(
            c, PQsendQueryParams(c->h, "SELECT txid_current()", 0, NULL, NULL, NULL, NULL, 0));
    if (!rc) c->txid_unread = true;
    return rc;
}

/* Leaves pipeline mode (reading what is still unread first); a connection
 * that cannot leave it is dropped. */
static void pipe_leave(struct db_conn *c)
{
    if (!c->pipe) return;
    c->pipe = false;
    if (!c->h) return;
    if (c->pending && !c->broken) {
        c->deadline_ms = clock_mono_ms() + c->op_ms;
        (void)pipe_sync(c, NULL);
    }
    c->pending = 0;
    if (c->h && !PQexitPipelineMode(c->h)) {
        conn_drop(c);
        c->broken = true;
    }
}

static br_err pipe_commit(struct db_conn *c)
{
    if (!c->h || c->broken) return down(c, NULL);
    c->deadline_ms = clock_mono_ms() + c->op_ms;
    /* the transaction's id in hand before COMMIT goes out: a sync point
     * of its own only for a transaction that had none (every one today
     * reads something before it commits) */
    br_err rc = c->txid_unread ? pipe_sync(c, NULL) : BR_OK;
    if (!rc) rc = pipe_sent(c, PQsendQueryParams(c->h, "COMMIT", 0, NULL, NULL, NULL, NULL, 0));
    if (!rc) {
        c->commit_sent = true;
        rc = pipe_sync(c, NULL);
    }
    return rc;
}

/* Connects c within CONNECT_MS and sets the session up. */
static br_err conn_open(const char *target, int op_ms, int lock_wait_ms, struct db_conn *c)
{
    conn_drop(c);
    c->op_ms = op_ms;
    const char *keys[] = {"dbname", "fallback_application_name", NULL};
    const char *vals[] = {target, "barberia", NULL};
    c->h = PQconnectStartParams(keys, vals, 1);
    char buf[256];
    if (!c->h || PQstatus(c->h) == CONNECTION_BAD) {
        br_err rc = down(c, conn_msg(c->h, target, buf, sizeof buf));
        conn_drop(c);
        return rc;
    }
    PQsetNoticeReceiver(c->h, ignore_notice, NULL);
    int64_t deadline = clock_mono_ms() + CONNECT_MS;
    for (;;) {
        PostgresPollingStatusType s = PQconnectPoll(c->h);
        if (s == PGRES_POLLING_OK) break;
        bool ready = false;
        if (s == PGRES_POLLING_READING || s == PGRES_POLLING_WRITING)
            ready = wait_socket(c->h, s == PGRES_POLLING_WRITING, deadline);
        if (!ready) {
            const char *why = s == PGRES_POLLING_FAILED ? conn_msg(c->h, target, buf, sizeof buf)
                                                        : "connection attempt timed out";
            br_err rc = down(c, why);
            conn_drop(c);
            return rc;
        }
    }
    if (PQsetnonblocking(c->h, 1) != 0) {
        br_err rc = down(c, conn_msg(c->h, target, buf, sizeof buf));
        conn_drop(c);
        return rc;
    }
    /* the server's own bounds: a lock (a row, an advisory lock) waited for
     * past lock_wait_ms, or a statement past its bound, fails as busy */
    char setup[256];
    snprintf(setup, sizeof setup,
             "SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, YMD'; SET lock_timeout = %d; "
             "SET statement_timeout = %d; SET idle_in_transaction_session_timeout = %d",
             lock_wait_ms, op_ms, op_ms + SLACK_MS);
    br_err rc = simple(c, setup);
    if (rc) {
        conn_drop(c);
        c->broken = true;
        return rc;
    }
    c->broken = false;
    c->opened = true;
    return BR_OK;
}

static void pg_close(struct db *db)
{
    struct pg_db *p = (struct pg_db *)db;
    if (!p) return;
    for (int i = 0; i < p->n; i++)
        conn_drop(&p->conns[i]);
    conn_drop(&p->ping_conn);
    free(p->conns);
    free(p->target);
    db_pool_destroy(&p->pool);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->ping_mu);
    free(p);
}

static int statement_ms(const struct pg_db *p)
{
    return p->lock_wait_ms + SLACK_MS;
}

static br_err pg_open(const char *target, const struct db_pool_opts *o, struct db **out)
{
    int n = o && o->size > 0 ? o->size : DEFAULT_POOL;
    struct pg_db *p = xcalloc(1, sizeof *p);
    p->base.ops = &db_pg_ops;
    p->target = xstrdup(target);
    p->wait_ms = o && o->wait_ms > 0 ? o->wait_ms : DEFAULT_WAIT_MS;
    p->lock_wait_ms = o && o->lock_wait_ms > 0 ? o->lock_wait_ms : DEFAULT_LOCK_WAIT_MS;
    p->ping_ms = o && o->ping_ms > 0 ? o->ping_ms : DEFAULT_PING_MS;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->ping_mu, NULL);
    db_pool_init(&p->pool, n, p->wait_ms);
    p->conns = xcalloc((size_t)n, sizeof *p->conns);
    p->n = n;
    /* one connection now, so that a wrong URL or password fails at start;
     * the others connect on first use */
    br_err rc = conn_open(p->target, statement_ms(p), p->lock_wait_ms, &p->conns[0]);
    for (int i = 0; i < n; i++) {
        p->conns[i].op_ms = statement_ms(p);
        if (i > 0) p->conns[i].broken = true;
        db_pool_put(&p->pool, &p->conns[i]);
    }
    p->ping_conn.broken = true;
    p->ping_conn.op_ms = p->ping_ms;
    if (rc) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", p->conns[0].why);
        pg_close(&p->base);
        return err_set(BR_STORE, "cannot connect to PostgreSQL: %s", msg);
    }
    *out = &p->base;
    return BR_OK;
}

static br_err pg_acquire(struct db *db, struct db_conn **out)
{
    struct pg_db *p = (struct pg_db *)db;
    struct db_conn *c = NULL;
    br_err rc = db_pool_take(&p->pool, (void **)&c);
    if (rc) return rc;
    if (conn_stale(c)) {
        /* the pool's connections but the first open on first use: that is
         * no reconnect */
        bool again = c->opened;
        rc = conn_open(p->target, statement_ms(p), p->lock_wait_ms, c);
        if (!rc && again) metric_inc(M_DB_RECONNECTS);
        pthread_mutex_lock(&p->mu);
        bool was = p->outage;
        p->outage = rc != BR_OK;
        pthread_mutex_unlock(&p->mu);
        if (rc && !was)
            log_warn("db: PostgreSQL unavailable (%s); answering 503 until it is back", c->why);
        if (!rc && was) log_info("db: PostgreSQL is back");
        if (rc) {
            db->ops->release(db, c);
            return rc;
        }
    }
    *out = c;
    return BR_OK;
}

static void pg_release(struct db *db, struct db_conn *c)
{
    struct pg_db *p = (struct pg_db *)db;
    if (c->h && !c->broken && PQtransactionStatus(c->h) != PQTRANS_IDLE) {
        /* a caller forgot to end its transaction, or a call was cut short:
         * never hand that on */
        if (PQtransactionStatus(c->h) == PQTRANS_ACTIVE || simple(c, "ROLLBACK") != BR_OK) {
            conn_drop(c);
            c->broken = true;
        }
    }
    db_pool_put(&p->pool, c);
}

static br_err pg_begin(struct db_conn *c)
{
    return simple(c, "BEGIN");
}

static br_err pg_begin_read(struct db_conn *c)
{
    return simple(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

static br_err pg_commit(struct db_conn *c)
{
    br_err rc = simple(c, "COMMIT");
    if (rc && c->h && PQtransactionStatus(c->h) != PQTRANS_IDLE) (void)simple(c, "ROLLBACK");
    return rc;
}

static void pg_rollback(struct db_conn *c)
{
    if (c->h && !c->broken && PQtransactionStatus(c->h) != PQTRANS_IDLE)
        (void)simple(c, "ROLLBACK");
}

static br_err prepared(struct db_conn *c, const char *sql, char name[16])
{
    size_t h = ((uintptr_t)sql >> 3) % STMT_CACHE;
    for (size_t probe = 0; probe < STMT_CACHE; probe++) {
        struct stmt_slot *slot = &c->cache[(h + probe) % STMT_CACHE];
        if (slot->sql == sql) {
            snprintf(name, 16, "s%d", slot->id);
            return BR_OK;
        }
        if (slot->sql) continue;
        int np = 0;
        char *text = db_pg_translate(sql, &np);
        int id = ++c->nstmt;
        snprintf(name, 16, "s%d", id);
        br_err rc = BR_OK;
        if (!PQsendPrepare(c->h, name, text, 0, NULL)) rc = down(c, PQerrorMessage(c->h));
        free(text);
        PGresult *r = NULL;
        if (!rc && c->pipe) {
            c->pending++;
            rc = pipe_sync(c, NULL);
        } else if (!rc) {
            rc = collect(c, &r);
        }
        PQclear(r);
        if (rc) return rc;
        slot->sql = sql;
        slot->id = id;
        return BR_OK;
    }
    return err_set(BR_STORE, "statement cache full");
}

static br_err send_stmt(struct db_conn *c, const char *sql, const struct db_val *params,
                        int nparams);

/* In a pipelined transaction the lock is sent ahead like exec_later: the
 * server takes it, in order, before any later statement runs; a lock it
 * could not take in time fails the transaction at the next sync point. */
static br_err pg_lock(struct db_conn *c, const char *key)
{
    static const char sql[] = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))";
    struct db_val k = db_text(key);
    if (!c->h) return down(c, NULL);
    return c->pipe ? send_stmt(c, sql, &k, 1) : db_pg_ops.exec(c, sql, &k, 1, NULL, NULL, NULL);
}

/* Sends one prepared statement (preparing it first when new on c). */
static br_err send_stmt(struct db_conn *c, const char *sql, const struct db_val *params,
                        int nparams)
{
    if (!c->h || c->broken) return down(c, NULL);
    if (nparams > MAX_PARAMS) return err_set(BR_STORE, "too many parameters");
    c->deadline_ms = clock_mono_ms() + c->op_ms;
    char name[16];
    br_err rc = prepared(c, sql, name);
    if (rc) return rc;
    char num[MAX_PARAMS][32];
    char *owned[MAX_PARAMS] = {0};
    const char *vals[MAX_PARAMS];
    for (int i = 0; i < nparams; i++) {
        const struct db_val *p = &params[i];
        switch (p->type) {
        case DB_NULL:
            vals[i] = NULL;
            break;
        case DB_INT:
            snprintf(num[i], sizeof num[i], "%" PRId64, p->i);
            vals[i] = num[i];
            break;
        case DB_REAL:
            snprintf(num[i], sizeof num[i], "%.17g", p->d);
            vals[i] = num[i];
            break;
        case DB_TEXT:
            owned[i] = db_pg_text_param(p->s, p->n);
            vals[i] = owned[i];
            break;
        }
    }
    if (!PQsendQueryPrepared(c->h, name, nparams, vals, NULL, NULL, 0))
        rc = down(c, PQerrorMessage(c->h));
    else if (c->pipe)
        c->pending++;
    for (int i = 0; i < nparams; i++)
        free(owned[i]);
    return rc;
}

/* In a pipelined write transaction: sent now, its result read at the next
 * sync point. Elsewhere the same as exec. */
static br_err pg_exec_later(struct db_conn *c, const char *sql, const struct db_val *params,
                            int nparams)
{
    if (!c->pipe) return db_pg_ops.exec(c, sql, params, nparams, NULL, NULL, NULL);
    return send_stmt(c, sql, params, nparams);
}

static br_err pg_exec(struct db_conn *c, const char *sql, const struct db_val *params, int nparams,
                      db_row_fn fn, void *ud, int64_t *changes)
{
    br_err rc = send_stmt(c, sql, params, nparams);
    if (rc) return rc;
    PGresult *r = NULL;
    rc = c->pipe ? pipe_sync(c, &r) : collect(c, &r);
    if (rc) return rc;
    if (fn && PQresultStatus(r) == PGRES_TUPLES_OK) {
        int rows = PQntuples(r), ncols = PQnfields(r);
        if (ncols > MAX_COLS) ncols = MAX_COLS;
        struct db_val cols[MAX_COLS];
        for (int row = 0; row < rows && !rc; row++) {
            for (int i = 0; i < ncols && !rc; i++)
                rc = db_pg_column(r, row, i, c->ts[i], &cols[i]);
            if (!rc) rc = fn(ud, cols, ncols);
        }
    }
    if (!rc && changes) {
        const char *t = PQcmdTuples(r);
        *changes = t && *t ? strtoll(t, NULL, 10) : 0;
    }
    PQclear(r);
    return rc;
}

/* Undoes c's transaction after a failure, keeping that failure's error
 * (code, message, retry hint) rather than the rollback's. */
static br_err undo(struct db_conn *c, br_err rc)
{
    struct err_kept why;
    err_keep(&why);
    pipe_leave(c);
    pg_rollback(c);
    return err_restore(rc, &why);
}

static br_err status_row(void *ud, const struct db_val *cols, int n)
{
    if (n > 0 && cols[0].type == DB_TEXT) snprintf(ud, 16, "%.*s", (int)cols[0].n, cols[0].s);
    return BR_OK;
}

/* Whether transaction txid, whose COMMIT went out and whose answer was
 * lost, took effect: asked on a connection of its own (the pool's may all
 * be taken) until bound_ms have passed. BR_OK, committed; BR_BUSY, aborted
 * (nothing stored); BR_INDOUBT when no answer came in time. */
static br_err commit_outcome(struct pg_db *p, int64_t txid, int bound_ms)
{
    static const char sql[] = "SELECT txid_status(?)";
    struct db_val id = db_int(txid);
    int64_t until = clock_mono_ms() + bound_ms;
    struct db_conn q = {0};
    char status[16] = "";
    while (txid) {
        int left = (int)(until - clock_mono_ms());
        if (left <= 0) break;
        br_err rc = q.h && !q.broken ? BR_OK : conn_open(p->target, left, p->lock_wait_ms, &q);
        q.op_ms = left;
        status[0] = '\0';
        if (!rc) rc = pg_exec(&q, sql, &id, 1, status_row, status, NULL);
        if (!rc && (!strcmp(status, "committed") || !strcmp(status, "aborted"))) break;
        /* "in progress" (its backend has not finished the commit, or has not
         * yet seen the connection go), or no answer: ask again */
        left = (int)(until - clock_mono_ms());
        int ms = left < INDOUBT_PAUSE_MS ? left : INDOUBT_PAUSE_MS;
        struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000};
        if (ms > 0) nanosleep(&pause, NULL);
    }
    conn_drop(&q);
    if (!strcmp(status, "committed")) {
        log_warn("db: the answer to the COMMIT of transaction %lld was lost; it committed",
                 (long long)txid);
        err_clear();
        return BR_OK;
    }
    if (!strcmp(status, "aborted")) {
        log_warn("db: the answer to the COMMIT of transaction %lld was lost; it did not commit",
                 (long long)txid);
        return err_set_retry(BR_BUSY, RETRY_S, DOWN_MSG);
    }
    log_error("db: the answer to the COMMIT of transaction %lld was lost and its outcome is "
              "unknown after %d ms",
              (long long)txid, bound_ms);
    return err_set_retry(BR_INDOUBT, RETRY_S, INDOUBT_MSG);
}

/* One attempt of a write transaction on c. A COMMIT that went out and
 * whose answer never came (the connection lost, or its bound passed) is no
 * failure to undo: the server may have committed it. The connection is
 * closed (a backend that never received the COMMIT then rolls back) and
 * the outcome asked for (commit_outcome). */
static br_err write_once(struct pg_db *p, struct db_conn *c, db_tx_fn fn, void *ud)
{
    c->retry = false;
    br_err rc = pipe_begin(c);
    if (!rc) rc = fn(&p->base, c, ud);
    if (!rc) rc = pipe_commit(c);
    if (rc == BR_BUSY && c->commit_sent && c->broken) {
        conn_drop(c);
        pipe_leave(c);
        return commit_outcome(p, c->txid, c->op_ms);
    }
    if (rc) rc = undo(c, rc);
    pipe_leave(c);
    return rc;
}

/* Two transactions can deadlock where both wait for the other, e.g.
 * overlapping bookings checked by the exclusion constraint at once (each
 * inserts its index entry, then waits for the other's): the server aborts
 * one after deadlock_timeout, which then runs again (its statements only
 * touch the database) and now sees the others' outcome. A race of many
 * (sixteen bookings of one slot) can make one transaction the victim
 * several times, so it runs again for as long as the lock wait bound
 * allows, not a fixed number of times; the pause grows with each attempt. */
static br_err pg_write(struct db *db, db_tx_fn fn, void *ud, uint64_t touch)
{
    (void)touch; /* nothing is remembered on PostgreSQL (no mark) */
    struct pg_db *p = (struct pg_db *)db;
    struct db_conn *c = NULL;
    br_err rc = pg_acquire(db, &c);
    if (rc) return rc;
    int64_t until = clock_mono_ms() + p->lock_wait_ms;
    for (int attempt = 1;; attempt++) {
        rc = write_once(p, c, fn, ud);
        if (rc != BR_BUSY || !c->retry || c->broken || clock_mono_ms() >= until) break;
        int step = attempt < 10 ? attempt : 10;
        struct timespec pause = {0, (long)(randombytes_uniform(5000) + 1000) * 1000 * step};
        nanosleep(&pause, NULL);
    }
    pg_release(db, c);
    return rc;
}

/* The health check, on a connection of its own: the same query the
 * service could run now. A stale connection is replaced first; one that
 * fails at once with a lost connection (a cut conn_stale could not see) is
 * replaced and asked once more, as the next lease of a pooled connection
 * would be, while the bound leaves time. So it never says 503 when the
 * service's own requests would succeed. */
static br_err pg_ping(struct db *db)
{
    struct pg_db *p = (struct pg_db *)db;
    int64_t t0 = clock_mono_ms();
    struct timespec until = deadline_in(CLOCK_REALTIME, p->ping_ms);
    if (pthread_mutex_timedlock(&p->ping_mu, &until) != 0) return busy();
    struct db_conn *c = &p->ping_conn;
    static const char sql[] = "SELECT 1 FROM perfiles LIMIT 1";
    br_err rc = BR_OK;
    bool fresh = conn_stale(c);
    if (fresh) rc = conn_open(p->target, p->ping_ms, p->lock_wait_ms, c);
    if (!rc) rc = simple(c, sql);
    if (rc == BR_BUSY && c->broken && !fresh && clock_mono_ms() - t0 < p->ping_ms) {
        rc = conn_open(p->target, p->ping_ms, p->lock_wait_ms, c);
        if (!rc) rc = simple(c, sql);
    }
    pthread_mutex_unlock(&p->ping_mu);
    return rc;
}

struct version_ud {
    int64_t v;
};

static br_err version_row(void *ud, const struct db_val *cols, int n)
{
    ((struct version_ud *)ud)->v = n > 0 && cols[0].type == DB_INT ? cols[0].i : 0;
    return BR_OK;
}

/* Migrations run on a connection of their own under a session advisory
 * lock, so that nodes starting at once take turns: the first migrates, the
 * others find the work done. Each step commits with its version. */
static br_err pg_migrate(struct db *db)
{
    struct pg_db *p = (struct pg_db *)db;
    struct db_conn c = {0};
    /* a migration may rewrite large tables: a generous bound */
    br_err rc = conn_open(p->target, 600000, 600000, &c);
    static const char lock_sql[] = "SELECT pg_advisory_lock(?)";
    static const char ver_sql[] = "SELECT coalesce(max(version), 0) FROM schema_version";
    static const char set_sql[] = "INSERT INTO schema_version (version, applied_at) "
                                  "VALUES (?, now())";
    struct db_val key = db_int(MIGRATE_LOCK);
    if (!rc) rc = pg_exec(&c, lock_sql, &key, 1, NULL, NULL, NULL);
    if (!rc)
        rc = simple(&c, "CREATE TABLE IF NOT EXISTS schema_version ("
                        "version integer PRIMARY KEY, applied_at timestamptz NOT NULL)");
    struct version_ud v = {0};
    if (!rc) rc = pg_exec(&c, ver_sql, NULL, 0, version_row, &v, NULL);
    for (int i = (int)v.v; !rc && i < schema_pg_count; i++) {
        struct db_val ver = db_int(i + 1);
        rc = simple(&c, "BEGIN");
        if (!rc) rc = simple(&c, schema_pg[i]);
        if (!rc) rc = pg_exec(&c, set_sql, &ver, 1, NULL, NULL, NULL);
        if (!rc) rc = simple(&c, "COMMIT");
        if (rc) pg_rollback(&c);
        if (!rc) log_info("db: schema migrated to version %d", i + 1);
    }
    if (!rc && v.v > schema_pg_count)
        rc = err_set(BR_STORE, "database schema version %d is newer than this program's (%d)",
                     (int)v.v, schema_pg_count);
    conn_drop(&c); /* ends the session, and with it the advisory lock */
    return rc;
}

const struct db_ops db_pg_ops = {
    .name = "postgresql",
    .open = pg_open,
    .close = pg_close,
    .migrate = pg_migrate,
    .ping = pg_ping,
    .acquire = pg_acquire,
    .release = pg_release,
    .begin = pg_begin,
    .begin_read = pg_begin_read,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .lock = pg_lock,
    .exec = pg_exec,
    .exec_later = pg_exec_later,
    .write = pg_write,
};
