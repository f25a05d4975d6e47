/*
 * test_iso8601.c - timestamp parsing and formatting, table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/iso8601.h"

struct ok_case {
    const char *in;
    const char *utc; /* the canonical form it must format back to */
};

static const struct ok_case accepted[] = {
    {"2031-05-04T10:30:00Z", "2031-05-04T10:30:00.000Z"},
    {"2031-05-04T10:30:00.000Z", "2031-05-04T10:30:00.000Z"},
    {"2031-05-04T10:30:00.1Z", "2031-05-04T10:30:00.100Z"},
    {"2031-05-04T10:30:00.123456789Z", "2031-05-04T10:30:00.123Z"},
    {"2031-05-04T10:30:00,5Z", "2031-05-04T10:30:00.500Z"},
    {"2031-05-04T10:30:00", "2031-05-04T10:30:00.000Z"},  /* no offset: UTC */
    {"2031-05-04T10:30", "2031-05-04T10:30:00.000Z"},     /* no seconds */
    {"2031-05-04", "2031-05-04T00:00:00.000Z"},           /* a date: midnight UTC */
    {"2031-05-04t10:30:00z", "2031-05-04T10:30:00.000Z"}, /* RFC 3339 allows lowercase */
    {"2031-05-04 10:30:00Z", "2031-05-04T10:30:00.000Z"}, /* and a space */
    {"2031-05-04T12:30:00+02:00", "2031-05-04T10:30:00.000Z"},
    {"2031-05-04T12:30:00+0200", "2031-05-04T10:30:00.000Z"},
    {"2031-05-04T12:30:00+02", "2031-05-04T10:30:00.000Z"},
    {"2031-05-04T05:00:00-05:30", "2031-05-04T10:30:00.000Z"},
    {"2031-05-04T00:30:00+01:00", "2031-05-03T23:30:00.000Z"}, /* crosses a day */
    {"2031-01-01T00:30:00+01:00", "2030-12-31T23:30:00.000Z"}, /* and a year */
    {"2031-05-04T10:30:00-00:00", "2031-05-04T10:30:00.000Z"},
    {"2032-02-29T00:00:00Z", "2032-02-29T00:00:00.000Z"}, /* leap year */
    {"2000-02-29T00:00:00Z", "2000-02-29T00:00:00.000Z"}, /* 400-year rule */
    {"1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"},
    {"1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z"}, /* before the epoch */
    {"0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"},
    {"9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"},
};

static const char *const refused[] = {
    "",
    "garbage",
    "2031-02-30",           /* impossible date */
    "2031-02-29T00:00:00Z", /* not a leap year */
    "1900-02-29",           /* centuries are not leap years */
    "2031-13-01",
    "2031-00-10",
    "2031-04-31",
    "2031-05-00",
    "2031-05-04T24:00:00Z",
    "2031-05-04T10:60:00Z",
    "2031-05-04T10:30:60Z",  /* leap seconds are not accepted */
    "2031-05-04T10:30:00.Z", /* a dot without digits */
    "2031-05-04T10Z",        /* hours alone */
    "2031-05-04T10:30:00+24:00",
    "2031-05-04T10:30:00+02:60",
    "2031-05-04T10:30:00+2",
    "2031-05-04T10:30:00 Z",
    "2031-05-04T10:30:00Zjunk",
    "2031-5-4",
    "31-05-04",
    "+2031-05-04",
    "2031/05/04",
    "0000-01-01",                /* year zero */
    "0001-01-01T00:30:00+01:00", /* moves before year 1 */
    "9999-12-31T23:30:00-01:00", /* moves past year 9999 */
    "20310504T103000Z",          /* basic format is not taken */
    "2031-05-04T10:30:00Z\n",
};

static void accepted_timestamps_normalise_to_utc(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        int64_t ms = 0;
        if (!iso8601_parse(accepted[i].in, strlen(accepted[i].in), &ms))
            fail_msg("refused: %s", accepted[i].in);
        char out[ISO8601_LEN + 1];
        iso8601_format(ms, out);
        if (strcmp(out, accepted[i].utc) != 0)
            fail_msg("%s -> %s, expected %s", accepted[i].in, out, accepted[i].utc);
    }
}

static void malformed_or_impossible_timestamps_are_refused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        int64_t ms = 42;
        if (iso8601_parse(refused[i], strlen(refused[i]), &ms))
            fail_msg("accepted: \"%s\"", refused[i]);
        assert_int_equal(ms, 42); /* untouched on failure */
    }
}

static void parse_reads_only_n_bytes(void **state)
{
    (void)state;
    const char *s = "2031-05-04T10:30:00Zjunk";
    int64_t ms;
    assert_true(iso8601_parse(s, 20, &ms));
    char out[ISO8601_LEN + 1];
    iso8601_format(ms, out);
    assert_string_equal(out, "2031-05-04T10:30:00.000Z");
}

static void known_instants_have_known_epoch_values(void **state)
{
    (void)state;
    int64_t ms;
    assert_true(iso8601_parse("1970-01-01T00:00:00Z", 20, &ms));
    assert_int_equal(ms, 0);
    assert_true(iso8601_parse("2000-01-01T00:00:00Z", 20, &ms));
    assert_int_equal(ms, 946684800000LL);
    assert_true(iso8601_parse("1969-12-31T23:59:59.999Z", 24, &ms));
    assert_int_equal(ms, -1);
}

static void days_round_trip_over_four_centuries(void **state)
{
    (void)state;
    for (int64_t days = -200000; days <= 200000; days += 7) {
        int64_t y;
        unsigned m, d;
        iso8601_civil_from_days(days, &y, &m, &d);
        assert_int_equal(iso8601_days_from_civil(y, m, d), days);
    }
}

static void date_is_the_date_part_of_the_utc_form(void **state)
{
    (void)state;
    int64_t ms;
    const char *s = "2031-05-04T00:30:00+01:00";
    assert_true(iso8601_parse(s, strlen(s), &ms));
    char d[11];
    iso8601_date(ms, d);
    assert_string_equal(d, "2031-05-03");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepted_timestamps_normalise_to_utc),
        cmocka_unit_test(malformed_or_impossible_timestamps_are_refused),
        cmocka_unit_test(parse_reads_only_n_bytes),
        cmocka_unit_test(known_instants_have_known_epoch_values),
        cmocka_unit_test(days_round_trip_over_four_centuries),
        cmocka_unit_test(date_is_the_date_part_of_the_utc_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
