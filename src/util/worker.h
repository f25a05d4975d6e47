/*
 * worker.h - a background thread that runs one loop until asked to stop:
 * the thread, the mutex and condition variable its naps wait on, a wake-up
 * and a stop. The loop itself (what it claims, sends or sweeps, how long it
 * sleeps) is the body its owner gives; the worker only starts, wakes, naps
 * and stops it.
 */
#ifndef BR_WORKER_H
#define BR_WORKER_H

#include <stdbool.h>
#include <stdint.h>

struct worker;

/* The thread's loop: runs until worker_stopping(w), sleeping with
 * worker_nap. ud is the value given to worker_start. */
typedef void (*worker_body)(struct worker *w, void *ud);

/* Starts a thread running body(w, ud). *out is set before the thread
 * starts, so the body may read it through ud. false when the thread cannot
 * be started (then nothing is left behind and *out is NULL); the caller
 * says what failed. */
bool worker_start(worker_body body, void *ud, struct worker **out);

/* Whether worker_stop was called. */
bool worker_stopping(struct worker *w);

/* Sleeps at most ms milliseconds (measured on the monotonic clock; none
 * when ms <= 0), less when woken or stopped. A wake-up that came while the
 * body was busy ends the next nap at once; each nap consumes it. */
void worker_nap(struct worker *w, int64_t ms);

/* Ends the current or the next nap. NULL: nothing. */
void worker_wake(struct worker *w);

/* Asks the thread to stop, then calls interrupt(ud) when not NULL (to cut
 * short what the body may be waiting on outside its naps: a transfer in
 * progress), waits for the thread to end and frees w. NULL: nothing. */
void worker_stop(struct worker *w, void (*interrupt)(void *ud));

#endif
