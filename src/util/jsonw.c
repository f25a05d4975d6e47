/*
 * jsonw.c - the streaming JSON writer (see jsonw.h).
 */
#include "jsonw.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jw_init(struct jw *w, size_t max)
{
    buf_init(&w->b, max);
    w->depth = 0;
    w->first[0] = true;
    w->after_key = false;
    w->err = BR_OK;
}

void jw_free(struct jw *w)
{
    buf_free(&w->b);
}

static void put(struct jw *w, const char *s, size_t n)
{
    /* most writes are a few bytes into room already there */
    if (w->b.len + n < w->b.cap && !w->err) {
        memcpy(w->b.p + w->b.len, s, n);
        w->b.len += n;
        w->b.p[w->b.len] = '\0';
        return;
    }
    if (w->err) return;
    br_err rc = buf_append(&w->b, s, n);
    if (rc) w->err = rc;
}

static void fail(struct jw *w, br_err e)
{
    if (!w->err) w->err = e;
}

/* Before a value: the comma between siblings (unless a key just went). */
static void value_start(struct jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth]) put(w, ",", 1);
    w->first[w->depth] = false;
}

static void open_level(struct jw *w, char c)
{
    value_start(w);
    if (w->depth >= JW_MAX_DEPTH) {
        fail(w, BR_INTERNAL);
        return;
    }
    put(w, &c, 1);
    w->first[++w->depth] = true;
}

static void close_level(struct jw *w, char c)
{
    if (w->depth == 0 || w->after_key) {
        fail(w, BR_INTERNAL);
        return;
    }
    w->depth--;
    put(w, &c, 1);
}

void jw_obj_open(struct jw *w)
{
    open_level(w, '{');
}
void jw_obj_close(struct jw *w)
{
    close_level(w, '}');
}
void jw_arr_open(struct jw *w)
{
    open_level(w, '[');
}
void jw_arr_close(struct jw *w)
{
    close_level(w, ']');
}

/* Length of the well-formed UTF-8 sequence at s (at most n bytes), or 0. */
static size_t seq_len(const unsigned char *s, size_t n)
{
    size_t k = s[0] < 0xC0 ? 0 : s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : s[0] < 0xF8 ? 4 : 0;
    if (k == 0 || k > n || !utf8_valid((const char *)s, k)) return 0;
    return k;
}

/* A byte that goes out as it is inside a JSON string: printable ASCII but
 * the quote and the backslash. */
static inline bool plain(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static void quoted(struct jw *w, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (plain(s[i]))
        i++;
    /* the common case, a plain string with room for it: one copy */
    if (!s[i] && !w->err && w->b.len + i + 2 < w->b.cap) {
        char *d = w->b.p + w->b.len;
        d[0] = '"';
        memcpy(d + 1, s, i);
        d[i + 1] = '"';
        d[i + 2] = '\0';
        w->b.len += i + 2;
        return;
    }
    size_t n = i + strlen(str + i);
    put(w, "\"", 1);
    size_t run = 0; /* start of the pending run of bytes that need no escape */
    while (i < n) {
        unsigned char c = s[i];
        if (plain(c)) {
            i++;
            continue;
        }
        size_t k = c >= 0x80 ? seq_len(s + i, n - i) : 0;
        if (k) {
            i += k; /* well-formed UTF-8 goes out as it is */
            continue;
        }
        put(w, (const char *)s + run, i - run);
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t elen = 2;
        /* the escapes JSON names, by the byte they stand for */
        static const char named[] = "\"\\\n\r\t\b\f", letter[] = "\"\\nrtbf";
        const char *at = memchr(named, c, sizeof named - 1);
        if (at) {
            esc[1] = letter[at - named];
        } else if (c < 0x20) {
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
        } else {
            /* a byte that is not UTF-8: the replacement character */
            put(w, "\xEF\xBF\xBD", 3);
            elen = 0;
        }
        if (elen) put(w, esc, elen);
        i++;
        run = i;
    }
    put(w, (const char *)s + run, n - run);
    put(w, "\"", 1);
}

void jw_key(struct jw *w, const char *key)
{
    if (w->after_key || w->depth == 0) {
        fail(w, BR_INTERNAL);
        return;
    }
    value_start(w);
    quoted(w, key);
    put(w, ":", 1);
    w->after_key = true;
}

void jw_str(struct jw *w, const char *s)
{
    if (!s) {
        jw_null(w);
        return;
    }
    value_start(w);
    quoted(w, s);
}

/* The decimal digits of v, written backwards ending at end; returns where
 * they start. */
static char *digits(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

void jw_int(struct jw *w, int64_t v)
{
    char tmp[24];
    char *end = tmp + sizeof tmp;
    char *p = digits(end, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    if (v < 0) *--p = '-';
    value_start(w);
    put(w, p, (size_t)(end - p));
}

/* A real with at most two decimals (a price): written from its cents when
 * v is exactly the double nearest to cents / 100, which is then the
 * shortest text that reads back as v and the one %.15g gives. */
static bool real_cents(double v, char *tmp, int *n)
{
    if (!(v >= 0 && v < 1e13) || signbit(v)) return false;
    int64_t cents = (int64_t)(v * 100 + 0.5);
    if ((double)cents / 100.0 != v) return false;
    char buf[24];
    char *end = buf + sizeof buf;
    char *p = end;
    int64_t frac = cents % 100;
    if (frac % 10) *--p = (char)('0' + frac % 10);
    *--p = (char)('0' + frac / 10);
    *--p = '.';
    p = digits(p, (uint64_t)(cents / 100));
    *n = (int)(end - p);
    memcpy(tmp, p, (size_t)*n);
    tmp[*n] = '\0';
    return true;
}

int jw_real_text(double v, char out[JW_REAL_MAX])
{
    if (!isfinite(v)) return -1;
    int n = 0;
    if (real_cents(v, out, &n)) return n;
    /* the shortest precision that reads back as the same double */
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(out, JW_REAL_MAX, "%.*g", prec, v);
        if (strtod(out, NULL) == v) break;
    }
    if (!strpbrk(out, ".eE")) {
        out[n++] = '.';
        out[n++] = '0';
        out[n] = '\0';
    }
    return n;
}

void jw_real(struct jw *w, double v)
{
    char tmp[JW_REAL_MAX];
    int n = jw_real_text(v, tmp);
    if (n < 0) {
        jw_null(w);
        return;
    }
    value_start(w);
    put(w, tmp, (size_t)n);
}

void jw_bool(struct jw *w, bool v)
{
    value_start(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void jw_null(struct jw *w)
{
    value_start(w);
    put(w, "null", 4);
}

void jw_kstr(struct jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    jw_str(w, s);
}

void jw_kint(struct jw *w, const char *key, int64_t v)
{
    jw_key(w, key);
    jw_int(w, v);
}

void jw_kreal(struct jw *w, const char *key, double v)
{
    jw_key(w, key);
    jw_real(w, v);
}

br_err jw_finish(struct jw *w, char **out, size_t *len)
{
    if (!w->err && (w->depth != 0 || w->after_key || w->first[0])) w->err = BR_INTERNAL;
    if (w->err) {
        buf_free(&w->b);
        *out = NULL;
        *len = 0;
        return w->err;
    }
    *out = buf_steal(&w->b, len);
    return BR_OK;
}
