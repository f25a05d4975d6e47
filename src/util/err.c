/*
 * err.c - per-thread error details (see err.h).
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char detail[512];
static _Thread_local int retry_after;
_Static_assert(sizeof detail == sizeof((struct err_kept *)0)->msg, "a kept detail holds it whole");

static void set_detail(const char *fmt, va_list ap) PRINTF_LIKE(1, 0);
static void set_detail(const char *fmt, va_list ap)
{
    /* formatted aside first: callers pass err_msg() itself as an argument
     * (err_set(BR_STORE, "%s", err_msg())), and vsnprintf() into its own
     * source is undefined (glibc empties the message) */
    char tmp[sizeof detail];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    memcpy(detail, tmp, sizeof detail);
}

br_err err_set_retry(br_err code, int retry_after_s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_detail(fmt, ap);
    va_end(ap);
    retry_after = retry_after_s > 0 ? retry_after_s : 1;
    return code;
}

void err_keep(struct err_kept *k)
{
    memcpy(k->msg, detail, sizeof k->msg);
    k->retry_after = retry_after;
}

br_err err_restore(br_err code, const struct err_kept *k)
{
    memcpy(detail, k->msg, sizeof detail);
    retry_after = k->retry_after;
    return code;
}

br_err err_prefix(br_err code, const char *prefix)
{
    int keep = retry_after;
    err_set(code, "%s: %s", prefix, detail);
    retry_after = keep;
    return code;
}

int err_retry_after(void)
{
    return retry_after;
}

br_err err_set(br_err code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_detail(fmt, ap);
    va_end(ap);
    retry_after = 0;
    return code;
}

const char *err_msg(void)
{
    return detail;
}

void err_clear(void)
{
    detail[0] = '\0';
    retry_after = 0;
}

const char *err_name(br_err code)
{
    static const char *const names[] = {
        [BR_OK] = "ok",
        [BR_INVALID] = "invalid",
        [BR_UNAUTH] = "unauthenticated",
        [BR_FORBIDDEN] = "forbidden",
        [BR_NOTFOUND] = "not found",
        [BR_CONFLICT] = "conflict",
        [BR_TOOLARGE] = "too large",
        [BR_STORE] = "store",
        [BR_OBJSTORE] = "object store",
        [BR_UPSTREAM] = "upstream",
        [BR_TIMEOUT] = "timeout",
        [BR_IO] = "io",
        [BR_CONFIG] = "config",
        [BR_INTERNAL] = "internal",
        [BR_BUSY] = "busy",
        [BR_THROTTLED] = "throttled",
        [BR_INDOUBT] = "in doubt",
    };
    if ((unsigned)code < ARRAY_LEN(names) && names[code]) return names[code];
    return "unknown";
}
