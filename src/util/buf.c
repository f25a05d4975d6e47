/*
 * buf.c - capped growable buffer (see buf.h).
 */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->max = max;
}

void buf_free(struct buf *b)
{
    free(b->p);
    buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->p) b->p[0] = '\0';
}

static br_err reserve(struct buf *b, size_t extra)
{
    if (extra > b->max - b->len) return err_set(BR_TOOLARGE, "buffer cap of %zu bytes", b->max);
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return BR_OK;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < need)
        cap *= 2;
    if (cap > b->max + 1) cap = b->max + 1;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
    return BR_OK;
}

br_err buf_append(struct buf *b, const void *data, size_t n)
{
    br_err rc = reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return BR_OK;
}

br_err buf_puts(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

br_err buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return err_set(BR_INTERNAL, "format error");
    if ((size_t)n < sizeof small) return buf_append(b, small, (size_t)n);
    br_err rc = reserve(b, (size_t)n);
    if (rc) return rc;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return BR_OK;
}

const char *buf_cstr(const struct buf *b)
{
    return b->p ? b->p : "";
}

char *buf_steal(struct buf *b, size_t *len)
{
    char *p = b->p ? b->p : xstrdup("");
    if (len) *len = b->len;
    buf_init(b, b->max);
    return p;
}
