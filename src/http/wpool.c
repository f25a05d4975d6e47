/*
 * wpool.c - a bounded pool of worker threads with a FIFO queue (see wpool.h).
 *
 * The queue is a ring of queue_max slots under one mutex; workers wait on a
 * condition variable, so a job starts as soon as a worker is free and jobs
 * start in the order they were submitted (no polling, no sleeping).
 */
#include "wpool.h"

#include <pthread.h>
#include <stdlib.h>

struct job {
    wpool_fn fn;
    void *arg;
};

struct wpool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct job *ring;
    int cap, head, len;
    int running;
    bool stopping;
    int nthreads;
    pthread_t *threads;
};

static void *worker(void *arg)
{
    struct wpool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->len == 0 && !p->stopping)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->len == 0) break; /* stopping and drained */
        struct job j = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->len--;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        j.fn(j.arg);
        pthread_mutex_lock(&p->mu);
        p->running--;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

br_err wpool_start(const char *name, int nthreads, int queue_max, struct wpool **out)
{
    struct wpool *p = xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->cap = queue_max > 0 ? queue_max : 1;
    p->ring = xcalloc((size_t)p->cap, sizeof *p->ring);
    p->threads = xcalloc((size_t)nthreads, sizeof *p->threads);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* handlers keep little on the stack; SQLite and jansson are happy with 1 MiB */
    pthread_attr_setstacksize(&attr, 1024 * 1024);
    for (int i = 0; i < nthreads; i++) {
        if (pthread_create(&p->threads[i], &attr, worker, p) != 0) {
            pthread_attr_destroy(&attr);
            p->nthreads = i;
            wpool_free(p);
            return err_set(BR_INTERNAL, "cannot start %s worker %d of %d", name, i + 1, nthreads);
        }
        p->nthreads = i + 1;
    }
    pthread_attr_destroy(&attr);
    *out = p;
    return BR_OK;
}

br_err wpool_submit(struct wpool *p, wpool_fn fn, void *arg)
{
    pthread_mutex_lock(&p->mu);
    if (p->stopping || p->len == p->cap) {
        pthread_mutex_unlock(&p->mu);
        return BR_BUSY;
    }
    p->ring[(p->head + p->len) % p->cap] = (struct job){fn, arg};
    p->len++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return BR_OK;
}

int wpool_pending(struct wpool *p)
{
    pthread_mutex_lock(&p->mu);
    int n = p->len + p->running;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void wpool_stop(struct wpool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    p->nthreads = 0;
}

void wpool_free(struct wpool *p)
{
    if (!p) return;
    wpool_stop(p);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->ring);
    free(p->threads);
    free(p);
}
