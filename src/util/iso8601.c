/*
 * iso8601.c - timestamp parsing and formatting (see iso8601.h).
 *
 * Written by hand because none of our libraries offers strict RFC 3339
 * parsing without locale or time-zone state: strptime() ignores offsets and
 * timegm() silently normalises 2031-02-30 into March.
 */
#include "iso8601.h"

/* 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z */
#define MIN_MS (-62135596800000LL)
#define MAX_MS (253402300799999LL)

int64_t iso8601_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    /* Shift the year to start in March so the leap day is the year's last. */
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void iso8601_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* Reads exactly k digits at s[*i]; advances *i. */
static bool digits(const char *s, size_t n, size_t *i, unsigned k, unsigned *out)
{
    if (n - *i < k) return false;
    unsigned v = 0;
    for (unsigned j = 0; j < k; j++) {
        char c = s[*i + j];
        if (c < '0' || c > '9') return false;
        v = v * 10 + (unsigned)(c - '0');
    }
    *i += k;
    *out = v;
    return true;
}

static bool lit(const char *s, size_t n, size_t *i, char c)
{
    if (*i < n && s[*i] == c) {
        (*i)++;
        return true;
    }
    return false;
}

bool iso8601_parse(const char *s, size_t n, int64_t *ms_out)
{
    size_t i = 0;
    unsigned y, mo, d, hh = 0, mm = 0, ss = 0, frac = 0;
    if (!digits(s, n, &i, 4, &y) || !lit(s, n, &i, '-') || !digits(s, n, &i, 2, &mo) ||
        !lit(s, n, &i, '-') || !digits(s, n, &i, 2, &d))
        return false;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo)) return false;

    int64_t offset_min = 0;
    if (i < n) {
        if (s[i] != 'T' && s[i] != 't' && s[i] != ' ') return false;
        i++;
        if (!digits(s, n, &i, 2, &hh) || !lit(s, n, &i, ':') || !digits(s, n, &i, 2, &mm))
            return false;
        if (lit(s, n, &i, ':')) {
            if (!digits(s, n, &i, 2, &ss)) return false;
            if (i < n && (s[i] == '.' || s[i] == ',')) {
                i++;
                size_t start = i;
                unsigned scale = 100;
                while (i < n && s[i] >= '0' && s[i] <= '9') {
                    frac += (unsigned)(s[i] - '0') * scale;
                    scale /= 10;
                    i++;
                }
                if (i == start) return false;
            }
        }
        if (hh > 23 || mm > 59 || ss > 59) return false;
        if (i < n) {
            char c = s[i++];
            if (c == 'Z' || c == 'z') {
                offset_min = 0;
            } else if (c == '+' || c == '-') {
                unsigned oh, om = 0;
                if (!digits(s, n, &i, 2, &oh)) return false;
                if (lit(s, n, &i, ':')) {
                    if (!digits(s, n, &i, 2, &om)) return false;
                } else if (i < n) {
                    if (!digits(s, n, &i, 2, &om)) return false;
                }
                if (oh > 23 || om > 59) return false;
                offset_min = (int64_t)(oh * 60 + om) * (c == '-' ? -1 : 1);
            } else {
                return false;
            }
        }
        if (i != n) return false;
    }

    int64_t days = iso8601_days_from_civil(y, mo, d);
    int64_t ms = days * ISO8601_DAY_MS + (int64_t)((hh * 60 + mm) * 60 + ss) * 1000 + frac;
    ms -= offset_min * 60000;
    if (ms < MIN_MS || ms > MAX_MS) return false;
    *ms_out = ms;
    return true;
}

static void split(int64_t ms, int64_t *days, int64_t *rem)
{
    *days = ms / ISO8601_DAY_MS;
    *rem = ms % ISO8601_DAY_MS;
    if (*rem < 0) {
        *rem += ISO8601_DAY_MS;
        (*days)--;
    }
}

/* Writes v as exactly `width` decimal digits at p (v < 10^width). */
static char *digits_out(char *p, unsigned v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + width;
}

void iso8601_format(int64_t ms, char out[ISO8601_LEN + 1])
{
    if (ms < MIN_MS) ms = MIN_MS;
    if (ms > MAX_MS) ms = MAX_MS;
    int64_t days, rem, y;
    unsigned m, d;
    split(ms, &days, &rem);
    iso8601_civil_from_days(days, &y, &m, &d);
    unsigned msec = (unsigned)(rem % 1000);
    unsigned sec = (unsigned)(rem / 1000);
    /* by hand: every field has a fixed width, and the hot paths (every
     * record of every listing) need no format parsing */
    char *p = out;
    p = digits_out(p, (unsigned)y, 4);
    *p++ = '-';
    p = digits_out(p, m, 2);
    *p++ = '-';
    p = digits_out(p, d, 2);
    *p++ = 'T';
    p = digits_out(p, sec / 3600, 2);
    *p++ = ':';
    p = digits_out(p, sec / 60 % 60, 2);
    *p++ = ':';
    p = digits_out(p, sec % 60, 2);
    *p++ = '.';
    p = digits_out(p, msec, 3);
    *p++ = 'Z';
    *p = '\0';
}

void iso8601_date(int64_t ms, char out[11])
{
    char full[ISO8601_LEN + 1];
    iso8601_format(ms, full);
    for (int i = 0; i < 10; i++)
        out[i] = full[i];
    out[10] = '\0';
}
