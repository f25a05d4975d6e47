/*
 * log.c - stderr logging (see log.h).
 */
#include "log.h"
#include "cond.h"
#include "iso8601.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_LEN 2048
#define ACCESS_BUF   (64 * 1024) /* access lines held before one write */

static atomic_bool quiet;

/* The access-line buffer (see log_buffer_start). Every write to stderr
 * holds mu, so a line never interleaves with another and the buffered
 * lines always go out before any later one. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flush_cv;
static char abuf[ACCESS_BUF];
static size_t alen;
static bool buffering, stopping;
static int flush_ms;
static pthread_t flusher;

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* stderr is gone; nothing sensible left to do */
        p += w;
        n -= (size_t)w;
    }
}

/* With mu held. */
static void flush_locked(void)
{
    if (alen) write_all(abuf, alen);
    alen = 0;
}

static void *flusher_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!stopping) {
        struct timespec until = deadline_in(CLOCK_MONOTONIC, flush_ms);
        int rc = pthread_cond_timedwait(&flush_cv, &mu, &until);
        if (rc == 0 || rc == ETIMEDOUT) flush_locked();
    }
    flush_locked();
    pthread_mutex_unlock(&mu);
    return NULL;
}

br_err log_buffer_start(int every_ms)
{
    cond_init_mono(&flush_cv);
    pthread_mutex_lock(&mu);
    flush_ms = every_ms > 0 ? every_ms : 1;
    stopping = false;
    int rc = pthread_create(&flusher, NULL, flusher_main, NULL);
    buffering = rc == 0;
    pthread_mutex_unlock(&mu);
    if (rc) {
        pthread_cond_destroy(&flush_cv);
        return err_set(BR_INTERNAL, "log: cannot start the flusher thread");
    }
    return BR_OK;
}

void log_buffer_stop(void)
{
    pthread_mutex_lock(&mu);
    bool was = buffering;
    buffering = false;
    stopping = true;
    pthread_cond_signal(&flush_cv);
    pthread_mutex_unlock(&mu);
    if (!was) return;
    pthread_join(flusher, NULL);
    pthread_cond_destroy(&flush_cv);
}

/* One formatted line: buffered (an access line while buffering) or
 * written at once, after whatever is buffered. */
static void put_line(const char *line, size_t len, bool buffered)
{
    pthread_mutex_lock(&mu);
    if (buffered && buffering) {
        if (alen + len > sizeof abuf) flush_locked();
        memcpy(abuf + alen, line, len);
        alen += len;
    } else {
        flush_locked();
        write_all(line, len);
    }
    pthread_mutex_unlock(&mu);
}

void log_set_quiet(bool q)
{
    atomic_store(&quiet, q);
}

static void emit(bool buffered, const char *level, const char *fmt, va_list ap) PRINTF_LIKE(3, 0);
static void emit(bool buffered, const char *level, const char *fmt, va_list ap)
{
    char line[LINE_MAX_LEN];
    char ts[ISO8601_LEN + 1];
    iso8601_format(clock_now_ms(), ts);
    int n = snprintf(line, sizeof line, "%s %s ", ts, level);
    if (n < 0) return;
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2) len = sizeof line - 2;
    line[len++] = '\n';
    put_line(line, len, buffered);
}

#define DEFINE_LOG(fn, level)                                                                      \
    void fn(const char *fmt, ...)                                                                  \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        emit(false, level, fmt, ap);                                                               \
        va_end(ap);                                                                                \
    }

void log_info(const char *fmt, ...)
{
    if (atomic_load(&quiet)) return;
    va_list ap;
    va_start(ap, fmt);
    emit(false, "info", fmt, ap);
    va_end(ap);
}

DEFINE_LOG(log_warn, "warn")
DEFINE_LOG(log_error, "error")

/* Appends n bytes of client text to out (at most cap bytes in all, o
 * already used), control characters, '"' and '\\' written as \\xNN so
 * that nobody can forge a line or drive a terminal. Returns the new
 * length. */
static size_t escape(const char *in, size_t n, char *out, size_t o, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)in;
    for (size_t i = 0; i < n && p[i] && o + 5 < cap; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f || p[i] == '"' || p[i] == '\\') {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[p[i] >> 4];
            out[o++] = hex[p[i] & 15];
        } else {
            out[o++] = (char)p[i];
        }
    }
    return o;
}

#define TOKEN_MIN  16 /* shortest segment taken for a secret */
#define TOKEN_RUN  64 /* shortest run taken for a secret inside a segment */
#define TOKEN_MARK "<token>"

static bool hex_digit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A character of the base64 and base64url alphabets (hex included, '='
 * padding too). */
static bool token_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '+' || c == '=';
}

/* A canonical UUID, in either case: 8-4-4-4-12 hex digits. */
static bool uuid_shaped(const char *s, size_t n)
{
    if (n != 36) return false;
    for (size_t i = 0; i < n; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !hex_digit(s[i])) return false;
    }
    return true;
}

/* Whether a path segment looks like a secret: TOKEN_MIN or more of
 * token_char() and nothing else, unless it is a UUID (ids are not
 * secrets). Words and file names (a '.', '%', '~'...) are not. */
static bool token_shaped(const char *s, size_t n)
{
    if (n < TOKEN_MIN) return false;
    for (size_t i = 0; i < n; i++)
        if (!token_char(s[i])) return false;
    return !uuid_shaped(s, n);
}

/* Appends TOKEN_MARK if it fits. */
static size_t put_mark(char *out, size_t o, size_t cap)
{
    if (o + sizeof TOKEN_MARK + 4 < cap) {
        memcpy(out + o, TOKEN_MARK, sizeof TOKEN_MARK - 1);
        o += sizeof TOKEN_MARK - 1;
    }
    return o;
}

/* Appends one path segment (n bytes) as escape() does: TOKEN_MARK for the
 * whole of it if it is token-shaped, else TOKEN_MARK for each run of
 * TOKEN_RUN or more token characters in it (a link's token with something
 * stuck to it: "<token>.", "<token>)"), the rest as it is. */
static size_t put_segment(const char *s, size_t n, char *out, size_t o, size_t cap)
{
    if (token_shaped(s, n)) return put_mark(out, o, cap);
    size_t i = 0;
    while (i < n) {
        size_t run = 0;
        while (i + run < n && token_char(s[i + run]))
            run++;
        o = run >= TOKEN_RUN ? put_mark(out, o, cap) : escape(s + i, run, out, o, cap);
        i += run;
        size_t other = 0;
        while (i + other < n && !token_char(s[i + other]))
            other++;
        o = escape(s + i, other, out, o, cap);
        i += other;
    }
    return o;
}

/* Appends a request path, each segment as put_segment() writes it. */
static size_t put_path(const char *path, char *out, size_t o, size_t cap)
{
    const char *p = path;
    for (;;) {
        size_t seg = strcspn(p, "/");
        o = put_segment(p, seg, out, o, cap);
        if (!p[seg]) return o;
        o = escape("/", 1, out, o, cap);
        p += seg + 1;
    }
}

const char *log_request(const char *method, const char *path, char *out, size_t n)
{
    if (n == 0) return "";
    size_t o = escape(method ? method : "", SIZE_MAX, out, 0, n);
    if (o + 2 < n) out[o++] = ' ';
    o = put_path(path ? path : "", out, o, n);
    out[o] = '\0';
    return out;
}

const char *log_text(const char *text, char *out, size_t n)
{
    if (n == 0) return "";
    size_t o = escape(text ? text : "", SIZE_MAX, out, 0, n);
    out[o] = '\0';
    return out;
}

/* Appends the decimal digits of v. */
static size_t put_uint(char *out, size_t o, uint64_t v)
{
    char tmp[24];
    size_t k = sizeof tmp;
    do {
        tmp[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(out + o, tmp + k, sizeof tmp - k);
    return o + sizeof tmp - k;
}

/* "<time> info <method> <path> <status> <ms>ms", written by hand: one per
 * request, it is on every request's path (the method and path bounded as
 * before: 63 and 511 bytes of escaped text; token-shaped path segments
 * redacted). */
void log_access(const char *method, const char *path, unsigned status, double ms)
{
    if (atomic_load(&quiet)) return;
    char line[ISO8601_LEN + 64 + 512 + 64];
    iso8601_format(clock_now_ms(), line);
    size_t o = ISO8601_LEN;
    memcpy(line + o, " info ", 6);
    o = escape(method, SIZE_MAX, line, o + 6, o + 6 + 64 - 1);
    line[o++] = ' ';
    o = put_path(path, line, o, o + 512 - 1);
    line[o++] = ' ';
    o = put_uint(line, o, status);
    line[o++] = ' ';
    uint64_t tenths = ms > 0 && ms < 1e15 ? (uint64_t)(ms * 10 + 0.5) : 0;
    o = put_uint(line, o, tenths / 10);
    line[o++] = '.';
    line[o++] = (char)('0' + tenths % 10);
    memcpy(line + o, "ms\n", 3);
    put_line(line, o + 3, true);
}
