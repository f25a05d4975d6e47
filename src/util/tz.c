/*
 * tz.c - the shop's time zone (see tz.h).
 *
 * Local to UTC: the local fields read as if they were UTC give L; the
 * zone's offset a day before and a day after L gives at most two
 * candidates L - offset (one transition at most in between: zones change
 * far less often than every two days); a candidate is right when
 * localtime_r() maps it back to the same fields. None right: the local time
 * is in a spring-forward gap; two right: an autumn repeat, the earlier wins.
 */
#define _GNU_SOURCE
#include "tz.h"
#include "iso8601.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ZONEINFO "/usr/share/zoneinfo/"

br_err tz_check(const char *tz)
{
    if (!tz || !*tz) return err_set(BR_CONFIG, "BARBERIA_TZ is empty");
    size_t n = strlen(tz);
    bool ok = n <= TZ_NAME_MAX && tz[0] != '/' && tz[0] != '-' && tz[n - 1] != '/';
    for (size_t i = 0; ok && i < n; i++) {
        char c = tz[i];
        ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
             c == '/' || c == '_' || c == '-' || c == '+';
    }
    /* the character set has no '.', so ".." cannot occur; say it anyway */
    if (!ok || strstr(tz, ".."))
        return err_set(BR_CONFIG, "BARBERIA_TZ must be an IANA zone name such as Europe/Madrid");
    char path[sizeof ZONEINFO + TZ_NAME_MAX];
    snprintf(path, sizeof path, ZONEINFO "%s", tz);
    /* a real zone file starts with "TZif"; this refuses folders
     * (Europe) and the odd files that live beside the zones */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(BR_CONFIG, "BARBERIA_TZ: unknown time zone %s", tz);
    struct stat sb;
    char magic[4];
    bool zone = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
                read(fd, magic, sizeof magic) == (ssize_t)sizeof magic && !memcmp(magic, "TZif", 4);
    close(fd);
    if (!zone) return err_set(BR_CONFIG, "BARBERIA_TZ: %s is not a time zone", tz);
    return BR_OK;
}

br_err tz_use(const char *tz)
{
    br_err rc = tz_check(tz);
    if (rc) return rc;
    /* ":<path>" makes the C library read exactly the file checked above,
     * whatever TZDIR says */
    char value[sizeof ZONEINFO + TZ_NAME_MAX + 1];
    snprintf(value, sizeof value, ":" ZONEINFO "%s", tz);
    if (setenv("TZ", value, 1) != 0)
        return err_set(BR_CONFIG, "BARBERIA_TZ: cannot set TZ: %s", strerror(errno));
    tzset();
    return BR_OK;
}

/* --- civil dates (iso8601.c holds the arithmetic) ---------------------------------- */

int64_t tz_days_from_civil(const struct tz_date *dt)
{
    return iso8601_days_from_civil(dt->y, (unsigned)dt->m, (unsigned)dt->d);
}

void tz_civil_from_days(int64_t z, struct tz_date *out)
{
    int64_t y;
    unsigned m, d;
    iso8601_civil_from_days(z, &y, &m, &d);
    out->y = (int)y;
    out->m = (int)m;
    out->d = (int)d;
}

int tz_iso_weekday(const struct tz_date *d)
{
    int64_t z = tz_days_from_civil(d); /* 1970-01-01 was a Thursday (4) */
    int64_t w = (z % 7 + 7 + 3) % 7;   /* 0 = Monday */
    return (int)w + 1;
}

bool tz_date_parse(const char *s, struct tz_date *out)
{
    if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-') return false;
    int v[3] = {0, 0, 0};
    static const int at[3] = {0, 5, 8}, len[3] = {4, 2, 2};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < len[k]; i++) {
            char c = s[at[k] + i];
            if (c < '0' || c > '9') return false;
            v[k] = v[k] * 10 + (c - '0');
        }
    struct tz_date d = {v[0], v[1], v[2]};
    if (d.y < 1970 || d.m < 1 || d.m > 12 || d.d < 1 || d.d > 31) return false;
    struct tz_date back;
    tz_civil_from_days(tz_days_from_civil(&d), &back);
    if (back.y != d.y || back.m != d.m || back.d != d.d) return false; /* 2026-02-30 */
    *out = d;
    return true;
}

/* --- conversions ---------------------------------------------------------------- */

static bool offset_at(int64_t s, long *off)
{
    time_t t = (time_t)s;
    struct tm tm;
    if (!localtime_r(&t, &tm)) return false;
    *off = tm.tm_gmtoff;
    return true;
}

static bool maps_to(int64_t s, const struct tz_date *d, int minute)
{
    time_t t = (time_t)s;
    struct tm tm;
    if (!localtime_r(&t, &tm)) return false;
    return tm.tm_year + 1900 == d->y && tm.tm_mon + 1 == d->m && tm.tm_mday == d->d &&
           tm.tm_hour * 60 + tm.tm_min == minute && tm.tm_sec == 0;
}

bool tz_local_to_utc(const struct tz_date *d, int minute, int64_t *ms)
{
    if (minute < 0 || minute >= 1440) return false;
    int64_t l = tz_days_from_civil(d) * 86400 + (int64_t)minute * 60;
    long before, after;
    if (!offset_at(l - 86400, &before) || !offset_at(l + 86400, &after)) return false;
    int64_t c1 = l - before, c2 = l - after;
    bool ok1 = maps_to(c1, d, minute), ok2 = c2 != c1 && maps_to(c2, d, minute);
    if (!ok1 && !ok2) return false;
    int64_t s = ok1 && ok2 ? (c1 < c2 ? c1 : c2) : ok1 ? c1 : c2;
    *ms = s * 1000;
    return true;
}

bool tz_local_instant(const struct tz_date *d, int minute, int64_t *ms)
{
    int64_t days = tz_days_from_civil(d);
    for (int k = 0; k <= 1440; k++, minute++) {
        struct tz_date dd;
        tz_civil_from_days(days + minute / 1440, &dd);
        if (tz_local_to_utc(&dd, minute % 1440, ms)) return true;
    }
    return false;
}

void tz_date_format(const struct tz_date *d, char out[11])
{
    snprintf(out, 11, "%04u-%02u-%02u", (unsigned)d->y % 10000u, (unsigned)d->m % 100u,
             (unsigned)d->d % 100u);
}

bool tz_local_date(int64_t ms, char out[11], int64_t *days)
{
    struct tz_date d;
    int minute;
    if (!tz_utc_to_local(ms, &d, &minute)) return false;
    tz_date_format(&d, out);
    if (days) *days = tz_days_from_civil(&d);
    return true;
}

bool tz_utc_to_local(int64_t ms, struct tz_date *d, int *minute)
{
    int64_t s = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    time_t t = (time_t)s;
    struct tm tm;
    if (!localtime_r(&t, &tm)) return false;
    d->y = tm.tm_year + 1900;
    d->m = tm.tm_mon + 1;
    d->d = tm.tm_mday;
    *minute = tm.tm_hour * 60 + tm.tm_min;
    return true;
}
