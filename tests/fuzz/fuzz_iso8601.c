/*
 * fuzz_iso8601.c - ISO 8601 / RFC 3339 parsing (src/util/iso8601.c).
 *
 * The input is the timestamp text. Properties of every accepted one:
 * - the instant lies in years 0001-9999;
 * - its UTC form is 24 characters, re-parses to the same instant, and
 *   formats again to the same text (format(parse(x)) is a fixed point);
 * - a text already in the API's own form (YYYY-MM-DDTHH:MM:SS.sssZ) comes
 *   back byte for byte;
 * - the date it starts with is a real calendar day: the day-count round
 *   trip holds and agrees with the C library's timegm().
 */
#define _GNU_SOURCE
#include "fz.h"
#include "util/iso8601.h"

#include <string.h>
#include <time.h>

#define MIN_MS (-62135596800000LL)
#define MAX_MS (253402300799999LL)

static unsigned num(const uint8_t *p, int n)
{
    unsigned v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (unsigned)(p[i] - '0');
    return v;
}

static bool api_form(const uint8_t *d, size_t n)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
    if (n != ISO8601_LEN) return false;
    for (size_t i = 0; i < n; i++) {
        if (shape[i] == 'd' ? d[i] < '0' || d[i] > '9' : d[i] != (uint8_t)shape[i]) return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t ms = 0;
    if (!iso8601_parse((const char *)data, size, &ms)) return 0;
    if (ms < MIN_MS || ms > MAX_MS)
        fz_fail("%.*s: instant %lld out of range", (int)size, data, (long long)ms);

    char out[ISO8601_LEN + 1], again[ISO8601_LEN + 1];
    iso8601_format(ms, out);
    if (strlen(out) != ISO8601_LEN) fz_fail("%.*s: formatted as %s", (int)size, data, out);
    int64_t back = 0;
    if (!iso8601_parse(out, ISO8601_LEN, &back) || back != ms)
        fz_fail("%.*s: %s does not re-parse to %lld", (int)size, data, out, (long long)ms);
    iso8601_format(back, again);
    if (strcmp(out, again)) fz_fail("%s formats again as %s", out, again);
    if (api_form(data, size) && memcmp(out, data, size))
        fz_fail("%.*s: the API's own form came back as %s", (int)size, data, out);
    char date[11];
    iso8601_date(ms, date);
    if (memcmp(date, out, 10)) fz_fail("%s: date part %s", out, date);

    /* every accepted text starts with YYYY-MM-DD */
    unsigned y = num(data, 4), m = num(data + 5, 2), d = num(data + 8, 2);
    int64_t days = iso8601_days_from_civil(y, m, d);
    int64_t y2;
    unsigned m2, d2;
    iso8601_civil_from_days(days, &y2, &m2, &d2);
    if (y2 != (int64_t)y || m2 != m || d2 != d)
        fz_fail("%.*s: day %lld is %lld-%u-%u", (int)size, data, (long long)days, (long long)y2, m2,
                d2);
    struct tm tm = {
        .tm_year = (int)y - 1900, .tm_mon = (int)m - 1, .tm_mday = (int)d, .tm_hour = 12};
    time_t t = timegm(&tm);
    if (tm.tm_mday != (int)d || tm.tm_mon != (int)m - 1 || (t - 12 * 3600) / 86400 != days)
        fz_fail("%.*s: not the day timegm() knows (%lld vs %lld)", (int)size, data, (long long)days,
                (long long)((t - 12 * 3600) / 86400));
    return 0;
}
