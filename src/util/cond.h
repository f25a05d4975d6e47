/*
 * cond.h - waiting with a deadline: condition variables that measure their
 * waits on the monotonic clock (a step of the wall clock neither stretches
 * nor cuts a wait short), and the absolute times that pthread's timed waits
 * take. A condition variable and its deadlines must use the same clock: a
 * monotonic deadline given to a default (wall-clock) condition variable is
 * decades in the past, and the wait returns at once, every time.
 */
#ifndef BR_COND_H
#define BR_COND_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* pthread_cond_init on CLOCK_MONOTONIC: wait on it with deadlines from
 * deadline_in(CLOCK_MONOTONIC, ...). */
void cond_init_mono(pthread_cond_t *cv);

/* Now plus ms milliseconds on clk, for pthread_cond_timedwait (monotonic
 * condition variables) or pthread_mutex_timedlock (CLOCK_REALTIME). */
struct timespec deadline_in(clockid_t clk, int64_t ms);

#endif
