/*
 * buf.h - a growable byte buffer with a hard cap (after curl's dynbuf).
 *
 * The cap is fixed at init: an append that would pass it fails with
 * BR_TOOLARGE and leaves the buffer unchanged. The bytes are always followed
 * by a NUL so that text can be used as a C string.
 */
#ifndef BR_BUF_H
#define BR_BUF_H

#include "err.h"

struct buf {
    char *p;    /* owned; NULL until the first append */
    size_t len; /* bytes in use, not counting the trailing NUL */
    size_t cap; /* bytes allocated */
    size_t max; /* hard cap on len */
};

void buf_init(struct buf *b, size_t max);
void buf_free(struct buf *b);
/* Forgets the content but keeps the allocation. */
void buf_reset(struct buf *b);
br_err buf_append(struct buf *b, const void *data, size_t n) WARN_UNUSED;
br_err buf_puts(struct buf *b, const char *s) WARN_UNUSED;
br_err buf_printf(struct buf *b, const char *fmt, ...) PRINTF_LIKE(2, 3) WARN_UNUSED;
/* The content as a C string ("" when empty); borrowed. */
const char *buf_cstr(const struct buf *b);
/* Hands the allocation to the caller (who frees it) and resets the buffer. */
char *buf_steal(struct buf *b, size_t *len);

#endif
