/*
 * log.c - stderr logging (see log.h).
 */
#include "log.h"
#include "iso8601.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_LEN 2048

static atomic_bool quiet;

void log_set_quiet(bool q)
{
    atomic_store(&quiet, q);
}

static void emit(const char *level, const char *fmt, va_list ap) PRINTF_LIKE(2, 0);
static void emit(const char *level, const char *fmt, va_list ap)
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
    if (write(STDERR_FILENO, line, len) < 0) {
        /* stderr is gone; nothing sensible left to do */
    }
}

#define DEFINE_LOG(fn, level)                                                                      \
    void fn(const char *fmt, ...)                                                                  \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        emit(level, fmt, ap);                                                                      \
        va_end(ap);                                                                                \
    }

void log_info(const char *fmt, ...)
{
    if (atomic_load(&quiet)) return;
    va_list ap;
    va_start(ap, fmt);
    emit("info", fmt, ap);
    va_end(ap);
}

DEFINE_LOG(log_warn, "warn")
DEFINE_LOG(log_error, "error")

/* Copies client text into out (n bytes), control characters, '"' and '\\'
 * written as \xNN so that nobody can forge a line or drive a terminal. */
static void escape(const char *in, char *out, size_t n)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < n; p++) {
        if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\') {
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", *p);
        } else {
            out[o++] = (char)*p;
        }
    }
    out[o] = '\0';
}

void log_access(const char *method, const char *path, unsigned status, double ms)
{
    char safe_method[64], safe_path[512];
    escape(method, safe_method, sizeof safe_method);
    escape(path, safe_path, sizeof safe_path);
    log_info("%s %s %u %.1fms", safe_method, safe_path, status, ms);
}
