/*
 * metrics.h - the process's counters, gauges and request histograms, and
 * their Prometheus text exposition (format 0.0.4).
 *
 * One set per process (one service runs in a process): every module counts
 * what it does with metric_add() from any thread (relaxed atomics: a scrape
 * sees each value whole, not all of them at one instant). The HTTP layer
 * reports each request with metrics_http_done(); the names of its routes
 * come from metrics_http_routes(). Nothing here allocates on a hot path.
 */
#ifndef BR_METRICS_H
#define BR_METRICS_H

#include "buf.h"

#include <stdint.h>

enum metric {
    /* counters */
    M_DB_ACQUIRES,    /* pool connections leased */
    M_DB_WAITS,       /* leases that had to wait for a free connection */
    M_DB_WAIT_US,     /* time spent waiting for one, in microseconds */
    M_DB_TIMEOUTS,    /* leases refused after BARBERIA_DB_WAIT_MS */
    M_DB_RECONNECTS,  /* connections re-opened after a loss */
    M_CAL_FAILURES,   /* bookings whose calendar event could not be made */
    M_MAIL_SENT,      /* confirmations delivered */
    M_MAIL_FAILURES,  /* delivery attempts that failed (retried) */
    M_MAIL_DROPPED,   /* confirmations given up */
    M_PHOTOS_STORED,  /* photos stored */
    M_PHOTOS_REMOVED, /* photo objects removed (deletes and sweeps) */
    M_SWEEPS,         /* sweeper passes */
    M_SWEEP_FAILURES, /* removals a pass could not make */
    /* remembered answers (memo/memo.h; sessions and names: the store) served, and read afresh */
    M_MEMO_SESSION_HITS,
    M_MEMO_SESSION_MISSES,
    M_MEMO_CATALOG_HITS,
    M_MEMO_CATALOG_MISSES,
    M_MEMO_CITAS_HITS,
    M_MEMO_CITAS_MISSES,
    M_MEMO_NAMES_HITS, /* listings completed from the catalog's names held */
    M_MEMO_NAMES_MISSES,
    M_MEMO_SLOTS_HITS, /* GET /api/disponibilidad */
    M_MEMO_SLOTS_MISSES,
    M_COUNTERS,
    /* gauges */
    M_DB_POOL_SIZE = M_COUNTERS, /* connections in the pool */
    M_DB_IN_USE,                 /* connections leased now */
    M_DB_WRITES_WAITING,         /* write transactions queued for SQLite's writer */
    M_INFLIGHT,                  /* requests being served */
    M_ALL,
};

void metric_add(enum metric m, int64_t n);
static inline void metric_inc(enum metric m)
{
    metric_add(m, 1);
}
void metric_set(enum metric m, int64_t v);
int64_t metric_get(enum metric m);

/* The HTTP routes, as "METHOD path" labels by index (borrowed for the
 * process's life); at most 64 of them. */
void metrics_http_routes(const char *const *names, int n);
/* A request was received (in flight until metrics_http_done). */
void metrics_http_begin(void);
/* A request ended: its route's index (-1: none matched), its status and
 * how long it took. */
void metrics_http_done(int route, unsigned status, int64_t us);

/* Values the exposition asks for at scrape time (from the store). */
struct metrics_scrape {
    bool have_outbox;
    int64_t outbox_pending, outbox_dropped;
};

/* Appends the exposition of every metric to out. */
br_err metrics_render(struct buf *out, const struct metrics_scrape *extra) WARN_UNUSED;

#endif
