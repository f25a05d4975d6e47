/*
 * err.h - the service's one error type.
 *
 * Every fallible function returns a br_err (BR_OK, 0, is success). The human
 * detail - the specification's Spanish message, or the data store's own
 * message - is kept per thread by err_set() and read back with err_msg() by
 * whoever turns the error into an answer (HTTP reply, CLI line, log line).
 * Threads never share a detail, so a request's message cannot leak into
 * another's.
 */
#ifndef BR_ERR_H
#define BR_ERR_H

#include "common.h"

typedef enum br_err {
    BR_OK = 0,
    BR_INVALID,   /* the caller's input is wrong (400) */
    BR_UNAUTH,    /* no valid session (401) */
    BR_FORBIDDEN, /* valid session, not allowed (403) */
    BR_NOTFOUND,  /* the thing named does not exist (404) */
    BR_CONFLICT,  /* clashes with existing data (409) */
    BR_TOOLARGE,  /* a size cap was passed (413) */
    BR_STORE,     /* the data store failed; detail is its message (500) */
    BR_OBJSTORE,  /* the object store failed; detail is its message (500) */
    BR_UPSTREAM,  /* an outbound call (calendar, mail) failed */
    BR_TIMEOUT,   /* an outbound call ran out of time */
    BR_IO,        /* a local file operation failed */
    BR_CONFIG,    /* the configuration is unusable */
    BR_INTERNAL,  /* anything else (500, generic message) */
    BR_BUSY,      /* a bounded resource is full; try again soon (503) */
    BR_THROTTLED, /* too many attempts; try again later (429) */
    BR_INDOUBT,   /* the outcome of a write is unknown: it may or may not be
                   * stored (a lost COMMIT answer, PostgreSQL); 503 */
} br_err;

/* Whether code is answered 503 with Retry-After: a bounded resource was
 * full (BR_BUSY) or a write's outcome could not be learnt (BR_INDOUBT). */
static inline bool err_unavailable(br_err code)
{
    return code == BR_BUSY || code == BR_INDOUBT;
}

/* Records a detail message for the calling thread and returns code, so that
 * `return err_set(BR_NOTFOUND, "Cita no encontrada");` reads in one line. */
br_err err_set(br_err code, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* err_set() that also says when to try again (BR_BUSY, BR_THROTTLED): the
 * answer then carries `Retry-After: retry_after_s`. */
br_err err_set_retry(br_err code, int retry_after_s, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Seconds to wait given by the calling thread's last err_set_retry(); 0
 * after a plain err_set() or err_clear(). */
int err_retry_after(void);

/* The calling thread's last detail message; "" when none. Borrowed until the
 * next err_set() on this thread. */
const char *err_msg(void);

/* A thread's detail (and retry hint) kept aside across calls that may set
 * their own: a rollback, a cleanup after the failure being reported. */
struct err_kept {
    char msg[512];
    int retry_after;
};
void err_keep(struct err_kept *k);
/* Sets the kept detail and hint back, as code's; returns code. */
br_err err_restore(br_err code, const struct err_kept *k);
/* Puts "prefix: " before the thread's detail (the file or the step that
 * failed), keeping its retry hint; returns code. */
br_err err_prefix(br_err code, const char *prefix);

/* Clears the calling thread's detail. */
void err_clear(void);

/* A short English name for a code, for logs ("store", "timeout", ...). */
const char *err_name(br_err code);

#endif
