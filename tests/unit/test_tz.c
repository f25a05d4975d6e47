/*
 * test_tz.c - the shop's time zone: local date and time to UTC and back,
 * on Europe/Madrid's changeover days (the spring gap, the autumn repeat).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/iso8601.h"
#include "util/tz.h"

static int64_t at(const char *iso)
{
    int64_t ms;
    assert_true(iso8601_parse(iso, strlen(iso), &ms));
    return ms;
}

static void local(const char *date, int h, int m, const char *want)
{
    struct tz_date d;
    assert_true(tz_date_parse(date, &d));
    int64_t ms = 0;
    bool ok = tz_local_to_utc(&d, h * 60 + m, &ms);
    if (!want) {
        if (ok) fail_msg("%s %02d:%02d should not exist", date, h, m);
        return;
    }
    if (!ok) fail_msg("%s %02d:%02d refused", date, h, m);
    char got[ISO8601_LEN + 1];
    iso8601_format(ms, got);
    if (strcmp(got, want)) fail_msg("%s %02d:%02d gave %s, not %s", date, h, m, got, want);
}

static void madrid_spring_gap_is_skipped(void **state)
{
    (void)state;
    assert_int_equal(tz_use("Europe/Madrid"), BR_OK);
    local("2027-03-28", 1, 59, "2027-03-28T00:59:00.000Z");
    local("2027-03-28", 2, 0, NULL);
    local("2027-03-28", 2, 30, NULL);
    local("2027-03-28", 2, 59, NULL);
    local("2027-03-28", 3, 0, "2027-03-28T01:00:00.000Z");
    local("2027-03-28", 9, 0, "2027-03-28T07:00:00.000Z");
    local("2027-03-27", 9, 0, "2027-03-27T08:00:00.000Z");
    local("2027-03-28", 0, 0, "2027-03-27T23:00:00.000Z");
}

/* A bound of working hours in the gap moves on to 03:00; 24:00 is the
 * next day's midnight. */
static void an_hours_bound_in_the_gap_moves_on(void **state)
{
    (void)state;
    assert_int_equal(tz_use("Europe/Madrid"), BR_OK);
    struct tz_date d;
    assert_true(tz_date_parse("2027-03-28", &d));
    static const struct {
        int minute;
        const char *want;
    } cases[] = {{2 * 60 + 30, "2027-03-28T01:00:00.000Z"},
                 {2 * 60, "2027-03-28T01:00:00.000Z"},
                 {1 * 60 + 59, "2027-03-28T00:59:00.000Z"},
                 {5 * 60, "2027-03-28T03:00:00.000Z"},
                 {1440, "2027-03-28T22:00:00.000Z"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ms = 0;
        assert_true(tz_local_instant(&d, cases[i].minute, &ms));
        char got[ISO8601_LEN + 1];
        iso8601_format(ms, got);
        assert_string_equal(got, cases[i].want);
    }
}

static void madrid_autumn_repeat_takes_the_first(void **state)
{
    (void)state;
    assert_int_equal(tz_use("Europe/Madrid"), BR_OK);
    local("2027-10-31", 1, 59, "2027-10-30T23:59:00.000Z");
    local("2027-10-31", 2, 0, "2027-10-31T00:00:00.000Z"); /* first 02:00 (CEST) */
    local("2027-10-31", 2, 30, "2027-10-31T00:30:00.000Z");
    local("2027-10-31", 3, 0, "2027-10-31T02:00:00.000Z");
    local("2027-10-31", 9, 0, "2027-10-31T08:00:00.000Z");
    local("2027-10-30", 9, 0, "2027-10-30T07:00:00.000Z");
    local("2027-10-31", 23, 59, "2027-10-31T22:59:00.000Z");
}

static void utc_to_local_follows_the_offset(void **state)
{
    (void)state;
    assert_int_equal(tz_use("Europe/Madrid"), BR_OK);
    struct tz_date d;
    int min;
    assert_true(tz_utc_to_local(at("2027-03-28T00:59:00Z"), &d, &min));
    assert_int_equal(min, 1 * 60 + 59);
    assert_true(tz_utc_to_local(at("2027-03-28T01:00:00Z"), &d, &min));
    assert_int_equal(min, 3 * 60);
    assert_true(tz_utc_to_local(at("2027-10-31T00:30:00Z"), &d, &min));
    assert_int_equal(min, 2 * 60 + 30);
    assert_true(tz_utc_to_local(at("2027-10-31T01:30:00Z"), &d, &min));
    assert_int_equal(min, 2 * 60 + 30); /* the second 02:30 */
    assert_true(tz_utc_to_local(at("2026-12-31T23:30:00Z"), &d, &min));
    assert_int_equal(d.y, 2027);
    assert_int_equal(d.m, 1);
    assert_int_equal(d.d, 1);
    assert_int_equal(min, 30);
    assert_int_equal(tz_use("UTC"), BR_OK);
    local("2027-03-28", 2, 30, "2027-03-28T02:30:00.000Z");
}

static void dates_and_weekdays(void **state)
{
    (void)state;
    struct tz_date d;
    assert_true(tz_date_parse("2026-11-23", &d));
    assert_int_equal(tz_iso_weekday(&d), 1); /* a Monday */
    assert_true(tz_date_parse("2027-03-28", &d));
    assert_int_equal(tz_iso_weekday(&d), 7);
    assert_true(tz_date_parse("2028-02-29", &d));
    static const char *const bad[] = {
        "2027-02-29", "2026-13-01", "2026-00-10", "2026-1-01",  "2026-01-01T",
        "20260101",   "2026-01-32", "abcd-ef-gh", "1969-12-31", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tz_date_parse(bad[i], &d)) fail_msg("\"%s\" accepted", bad[i]);
    struct tz_date back;
    tz_civil_from_days(tz_days_from_civil(&(struct tz_date){2027, 3, 1}) - 1, &back);
    assert_int_equal(back.m, 2);
    assert_int_equal(back.d, 28);
}

static void zone_names_are_checked(void **state)
{
    (void)state;
    assert_int_equal(tz_check("Europe/Madrid"), BR_OK);
    assert_int_equal(tz_check("Europe/Nowhere"), BR_CONFIG);
    assert_int_equal(tz_check("../../etc/passwd"), BR_CONFIG);
    assert_int_equal(tz_check("Europe"), BR_CONFIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(madrid_spring_gap_is_skipped),
        cmocka_unit_test(an_hours_bound_in_the_gap_moves_on),
        cmocka_unit_test(madrid_autumn_repeat_takes_the_first),
        cmocka_unit_test(utc_to_local_follows_the_offset),
        cmocka_unit_test(dates_and_weekdays),
        cmocka_unit_test(zone_names_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
