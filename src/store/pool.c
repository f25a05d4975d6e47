/*
 * pool.c - a connection pool's free list (see pool.h).
 */
#include "pool.h"
#include "../util/cond.h"
#include "../util/log.h"
#include "../util/metrics.h"

#include <errno.h>
#include <stdlib.h>

void db_pool_init(struct db_pool *p, int size, int wait_ms)
{
    pthread_mutex_init(&p->mu, NULL);
    cond_init_mono(&p->cv);
    p->free = xcalloc((size_t)size, sizeof *p->free);
    p->nfree = 0;
    p->size = size;
    p->wait_ms = wait_ms;
    /* items count as leased until they are put in */
    metric_add(M_DB_POOL_SIZE, size);
    metric_add(M_DB_IN_USE, size);
}

void db_pool_destroy(struct db_pool *p)
{
    if (!p->free) return;
    metric_add(M_DB_POOL_SIZE, -p->size);
    metric_add(M_DB_IN_USE, -(p->size - p->nfree));
    free(p->free);
    p->free = NULL;
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

br_err db_pool_take(struct db_pool *p, void **out)
{
    int64_t waited_from = 0;
    pthread_mutex_lock(&p->mu);
    if (!p->nfree) {
        waited_from = clock_mono_us();
        struct timespec until = deadline_in(CLOCK_MONOTONIC, p->wait_ms);
        int w = 0;
        while (!p->nfree && w != ETIMEDOUT)
            w = pthread_cond_timedwait(&p->cv, &p->mu, &until);
    }
    void *item = p->nfree ? p->free[--p->nfree] : NULL;
    pthread_mutex_unlock(&p->mu);
    if (waited_from) {
        metric_inc(M_DB_WAITS);
        metric_add(M_DB_WAIT_US, clock_mono_us() - waited_from);
    }
    if (!item) {
        metric_inc(M_DB_TIMEOUTS);
        log_warn("db: no free connection within %d ms (BARBERIA_DB_WAIT_MS); answering busy",
                 p->wait_ms);
        return err_set_retry(BR_BUSY, 1, "Servicio ocupado");
    }
    metric_inc(M_DB_ACQUIRES);
    metric_inc(M_DB_IN_USE);
    *out = item;
    return BR_OK;
}

bool db_pool_try_take(struct db_pool *p, void **out)
{
    pthread_mutex_lock(&p->mu);
    bool got = p->nfree > 0;
    if (got) *out = p->free[--p->nfree];
    pthread_mutex_unlock(&p->mu);
    if (got) metric_inc(M_DB_IN_USE);
    return got;
}

void db_pool_put(struct db_pool *p, void *item)
{
    pthread_mutex_lock(&p->mu);
    if (p->nfree < p->size) p->free[p->nfree++] = item;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    metric_add(M_DB_IN_USE, -1);
}
