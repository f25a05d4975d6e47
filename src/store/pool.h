/*
 * pool.h - the free list of a connection pool, shared by the SQL adapters:
 * leases wait in turn, at most wait_ms, on the monotonic clock; every lease
 * and wait is counted in the metrics (util/metrics.h).
 *
 * Items are the adapter's own connections, as opaque pointers; the pool
 * never owns them. Thread-safe.
 */
#ifndef BR_POOL_H
#define BR_POOL_H

#include "../util/err.h"

#include <pthread.h>

struct db_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void **free; /* a stack of the idle items */
    int nfree, size;
    int wait_ms;
};

/* An empty pool of size items at most; fill it with db_pool_put (until
 * then they count as leased). */
void db_pool_init(struct db_pool *p, int size, int wait_ms);
void db_pool_destroy(struct db_pool *p);

/* Takes an idle item, waiting at most wait_ms for one: then BR_BUSY
 * "Servicio ocupado" (with a retry hint, and a log line). OUT: *out. */
br_err db_pool_take(struct db_pool *p, void **out) WARN_UNUSED;

/* Takes an idle item if there is one, at once (not counted in the metrics:
 * for housekeeping). */
bool db_pool_try_take(struct db_pool *p, void **out);

/* Gives an item (back) to the pool. */
void db_pool_put(struct db_pool *p, void *item);

#endif
