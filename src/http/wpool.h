/*
 * wpool.h - a bounded pool of worker threads with a FIFO queue.
 *
 * The HTTP layer's I/O threads never block: work that can wait (a database
 * write, the calendar call, a password hash, an fsync) is handed to a pool
 * and the connection is suspended until it is done. The queue is bounded,
 * so a flood of requests gets a quick refusal instead of unbounded memory.
 *
 * Thread-safety: wpool_submit() may be called from any thread; start and
 * stop from one.
 */
#ifndef BR_WPOOL_H
#define BR_WPOOL_H

#include "../util/err.h"

struct wpool;

typedef void (*wpool_fn)(void *arg);

/* Starts nthreads workers (named "<name>-N" in logs) with a queue of at most
 * queue_max waiting jobs. OUT: *out, stopped with wpool_stop(). */
br_err wpool_start(const char *name, int nthreads, int queue_max, struct wpool **out) WARN_UNUSED;

/* Queues fn(arg) to run on a worker, in submission order. BR_BUSY when the
 * queue is full or the pool is stopping (fn is then not called). */
br_err wpool_submit(struct wpool *p, wpool_fn fn, void *arg) WARN_UNUSED;

/* Jobs waiting or running now. */
int wpool_pending(struct wpool *p);

/* Refuses new jobs (wpool_submit answers BR_BUSY from now on), lets the
 * queued and running ones finish and joins the workers. The pool stays
 * valid for wpool_submit() until wpool_free(). NULL is allowed. */
void wpool_stop(struct wpool *p);

/* Frees a stopped pool. NULL is allowed. */
void wpool_free(struct wpool *p);

#endif
