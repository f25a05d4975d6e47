/*
 * iso8601.h - the timestamps of the API.
 *
 * Input: ISO 8601 extended format / RFC 3339, as clients send it:
 *   2031-05-04                       (a date alone: midnight UTC)
 *   2031-05-04T10:30                 (no offset: UTC)
 *   2031-05-04T10:30:15.25+02:00     (fractions of any length, ms kept)
 * 'T' may be 't' or a space, 'Z' may be 'z'; offsets are Z, +HH:MM, +HHMM or
 * +HH. Calendar rules are checked (2031-02-30 is refused, leap years known),
 * and the instant, once moved to UTC, must lie in years 0001-9999.
 *
 * Output: always UTC, `YYYY-MM-DDTHH:MM:SS.sssZ` (24 characters), which sorts
 * as text in time order - the stores rely on that.
 */
#ifndef BR_ISO8601_H
#define BR_ISO8601_H

#include "common.h"

#define ISO8601_LEN    24         /* strlen("2031-05-04T10:30:15.250Z") */
#define ISO8601_DAY_MS 86400000LL /* a UTC day: no leap seconds here */

/* Parses n bytes at s. OUT: *ms, milliseconds since the epoch (UTC).
 * Returns false, leaving *ms alone, when s is not such a timestamp. */
bool iso8601_parse(const char *s, size_t n, int64_t *ms) WARN_UNUSED;

/* Formats ms (within years 0001-9999) into out, NUL-terminated. */
void iso8601_format(int64_t ms, char out[ISO8601_LEN + 1]);

/* The `YYYY-MM-DD` date part of the UTC form of ms. */
void iso8601_date(int64_t ms, char out[11]);

/* Days since 1970-01-01 of a proleptic Gregorian date, and back. */
int64_t iso8601_days_from_civil(int64_t y, unsigned m, unsigned d);
void iso8601_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
