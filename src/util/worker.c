/*
 * worker.c - a background thread with naps, a wake-up and a stop (see
 * worker.h).
 */
#include "worker.h"
#include "common.h"
#include "cond.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct worker {
    worker_body body;
    void *ud;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* monotonic (cond.h) */
    bool stop, woken;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->body(w, w->ud);
    return NULL;
}

bool worker_start(worker_body body, void *ud, struct worker **out)
{
    struct worker *w = xcalloc(1, sizeof *w);
    w->body = body;
    w->ud = ud;
    pthread_mutex_init(&w->mu, NULL);
    cond_init_mono(&w->cv);
    *out = w;
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        *out = NULL;
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return false;
    }
    return true;
}

bool worker_stopping(struct worker *w)
{
    pthread_mutex_lock(&w->mu);
    bool s = w->stop;
    pthread_mutex_unlock(&w->mu);
    return s;
}

void worker_nap(struct worker *w, int64_t ms)
{
    pthread_mutex_lock(&w->mu);
    if (ms > 0) {
        struct timespec until = deadline_in(CLOCK_MONOTONIC, ms);
        while (!w->stop && !w->woken && pthread_cond_timedwait(&w->cv, &w->mu, &until) == 0) {
        }
    }
    w->woken = false;
    pthread_mutex_unlock(&w->mu);
}

/* Raises one of w's flags (stop, woken) and ends its nap. */
static void raise_flag(struct worker *w, bool *flag)
{
    pthread_mutex_lock(&w->mu);
    *flag = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void worker_wake(struct worker *w)
{
    if (w) raise_flag(w, &w->woken);
}

void worker_stop(struct worker *w, void (*interrupt)(void *ud))
{
    if (!w) return;
    raise_flag(w, &w->stop);
    if (interrupt) interrupt(w->ud);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
