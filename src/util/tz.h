/*
 * tz.h - the shop's time zone: checking an IANA zone name, making it the
 * process's zone once at start, and converting between the shop's local
 * date and time and UTC instants across daylight-saving changes.
 *
 * The conversions use the C library's localtime_r() over the zone file
 * that tz_use() set (TZ=":/usr/share/zoneinfo/<name>", read once): thread-
 * safe from then on. tz_use() must run before any other thread starts.
 */
#ifndef BR_TZ_H
#define BR_TZ_H

#include "err.h"

#include <stdbool.h>
#include <stdint.h>

#define TZ_NAME_MAX 128

/* Whether name is an IANA zone this machine knows: letters, digits and
 * "/_-+" only (no "..", no leading '/' or '-'), naming a TZif file under
 * /usr/share/zoneinfo. No path is built from a name that fails the
 * character check. BR_CONFIG with a one-line detail naming BARBERIA_TZ. */
br_err tz_check(const char *name) WARN_UNUSED;

/* tz_check, then makes the zone the process's (setenv TZ + tzset). */
br_err tz_use(const char *name) WARN_UNUSED;

/* A civil date (proleptic Gregorian). */
struct tz_date {
    int y, m, d; /* m 1-12, d 1-31 */
};

/* Parses exactly "YYYY-MM-DD" (a real date, year 1970-9999). */
bool tz_date_parse(const char *s, struct tz_date *out);
/* Days since 1970-01-01 of a civil date (may be negative). */
int64_t tz_days_from_civil(const struct tz_date *d);
void tz_civil_from_days(int64_t days, struct tz_date *out);
/* ISO weekday of a date: 1 = Monday ... 7 = Sunday. */
int tz_iso_weekday(const struct tz_date *d);

/* The UTC instant (ms since 1970) of local date d at minute (0-1439) in the
 * process's zone. A local time that does not exist (the hour skipped when
 * clocks go forward) gives false; one that occurs twice (clocks go back)
 * gives its first occurrence. */
bool tz_local_to_utc(const struct tz_date *d, int minute, int64_t *ms);

/* The same for a bound of working hours: minute may be 1440 (the next
 * day's midnight), and a time the clocks skip moves on to the first one
 * that exists (an interval from 02:30 on the spring day starts at 03:00). */
bool tz_local_instant(const struct tz_date *d, int minute, int64_t *ms);

/* The local date and minute of the day of a UTC instant. */
bool tz_utc_to_local(int64_t ms, struct tz_date *d, int *minute);

/* d as "YYYY-MM-DD" (years past 9999 wrap: the callers' dates never are). */
void tz_date_format(const struct tz_date *d, char out[11]);

/* The local date of a UTC instant as "YYYY-MM-DD"; OUT: *days, its day
 * number (tz_days_from_civil), when days is not NULL. False when the C
 * library cannot convert it. */
bool tz_local_date(int64_t ms, char out[11], int64_t *days);

#endif
