/*
 * test_avisos.c - how the shop reaches a client outside the web app
 * (domain/avisos.h), each rule a table: phone numbers to E.164, the quiet
 * hours, the reminder offsets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "domain/avisos.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

struct tel_row {
    const char *in, *cc, *out; /* out NULL: refused */
};

static const struct tel_row tel_rows[] = {
    {"612345678", "34", "34612345678"},
    {"612 34 56 78", "34", "34612345678"},
    {"612-345-678", "34", "34612345678"},
    {"(612) 345.678", "34", "34612345678"},
    {"+34 612 34 56 78", "34", "34612345678"},
    {"0034612345678", "34", "34612345678"},
    {"  +34612345678", "34", "34612345678"},
    {"+44 20 7946 0958", "34", "442079460958"},
    {"020 7946 0958", "44", "442079460958"},    /* the trunk 0 goes */
    {"06 1234 5678", "39", "390612345678"},     /* but not in Italy */
    {"+1 (415) 555-0123", "34", "14155550123"}, /* 11 digits */
    {"612345678", "1", "1612345678"},
    {"12345", "34", NULL},             /* too short */
    {"+1234567890123456", "34", NULL}, /* 16 digits */
    {"+0612345678", "34", NULL},       /* a country code never starts with 0 */
    {"61234567a", "34", NULL},
    {"612+345678", "34", NULL},
    {"", "34", NULL},
    {NULL, "34", NULL},
    {"612345678", "", NULL},
    {"612345678", "0", NULL},
    {"612345678", "3a", NULL},
    {"612345678", "1234", NULL},
};

static void phone_numbers_to_e164(void **state)
{
    (void)state;
    for (size_t i = 0; i < LEN(tel_rows); i++) {
        char out[RULE_E164_MAX];
        bool ok = rule_telefono_e164(tel_rows[i].in, tel_rows[i].cc, out);
        if (ok != (tel_rows[i].out != NULL))
            fail_msg("row %zu (%s): expected %s", i, tel_rows[i].in ? tel_rows[i].in : "NULL",
                     tel_rows[i].out ? tel_rows[i].out : "a refusal");
        if (ok) assert_string_equal(out, tel_rows[i].out);
    }
}

static void quiet_hours(void **state)
{
    (void)state;
    int f, t;
    assert_true(rule_quiet_hours_parse("21:00-09:00", &f, &t));
    assert_int_equal(f, 21 * 60);
    assert_int_equal(t, 9 * 60);
    assert_true(rule_quiet_now(21 * 60, f, t));
    assert_true(rule_quiet_now(23 * 60 + 59, f, t));
    assert_true(rule_quiet_now(0, f, t));
    assert_true(rule_quiet_now(8 * 60 + 59, f, t));
    assert_false(rule_quiet_now(9 * 60, f, t));
    assert_false(rule_quiet_now(20 * 60 + 59, f, t));
    assert_true(rule_quiet_hours_parse("13:30-15:00", &f, &t));
    assert_true(rule_quiet_now(14 * 60, f, t));
    assert_false(rule_quiet_now(15 * 60, f, t));
    assert_false(rule_quiet_now(13 * 60, f, t));
    assert_true(rule_quiet_hours_parse("no", &f, &t));
    assert_false(rule_quiet_now(22 * 60, f, t));
    assert_true(rule_quiet_hours_parse("", &f, &t));
    static const char *const bad[] = {"21:00",       "21:00-21:00", "21-09",       "25:00-09:00",
                                      "21:00-24:00", "21:00 09:00", "21:00-09:00x"};
    for (size_t i = 0; i < LEN(bad); i++)
        if (rule_quiet_hours_parse(bad[i], &f, &t)) fail_msg("accepted %s", bad[i]);
    assert_false(rule_quiet_hours_parse(NULL, &f, &t));
}

static void reminder_offsets(void **state)
{
    (void)state;
    int64_t o[RULE_OFFSETS_MAX];
    int n;
    assert_true(rule_reminder_offsets_parse("24h,2h", o, &n));
    assert_int_equal(n, 2);
    assert_int_equal(o[0], 1440);
    assert_int_equal(o[1], 120);
    assert_true(rule_reminder_offsets_parse(" 30m , 2d,1h,60m", o, &n));
    assert_int_equal(n, 3); /* 1h and 60m are one */
    assert_int_equal(o[0], 2880);
    assert_int_equal(o[1], 60);
    assert_int_equal(o[2], 30);
    assert_true(rule_reminder_offsets_parse("no", o, &n));
    assert_int_equal(n, 0);
    assert_true(rule_reminder_offsets_parse("", o, &n));
    assert_int_equal(n, 0);
    assert_true(rule_reminder_offsets_parse("365d", o, &n));
    static const char *const bad[] = {
        "24",  "h",          "0h",     "366d", "24h,",
        ",2h", "2x",         "24h;2h", "-1h",  "1h,2h,3h,4h,5h,6h,7h,8h,9h",
        "2 h", "9999999999m"};
    for (size_t i = 0; i < LEN(bad); i++)
        if (rule_reminder_offsets_parse(bad[i], o, &n)) fail_msg("accepted %s", bad[i]);
    assert_false(rule_reminder_offsets_parse(NULL, o, &n));
}

/* One number however written; two numbers never one. */
static void the_same_phone_written_another_way(void **state)
{
    (void)state;
    assert_true(rule_telefono_mismo("611223344", "611 22 33 44", "34"));
    assert_true(rule_telefono_mismo("611223344", "+34 611 22 33 44", "34"));
    assert_true(rule_telefono_mismo("0034611223344", "(611) 22-33-44", "34"));
    assert_true(rule_telefono_mismo("611 22 33 44", "611-22-33-44", NULL));
    assert_true(rule_telefono_mismo("llamar", "llamar", "34"));
    assert_false(rule_telefono_mismo("611223344", "611223345", "34"));
    assert_false(rule_telefono_mismo("611223344", "+44 611 22 33 44", "34"));
    assert_false(rule_telefono_mismo("611223344", "+34611223344", NULL)); /* no country known */
    assert_false(rule_telefono_mismo("llamar", "LLAMAR", "34"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(phone_numbers_to_e164),
        cmocka_unit_test(the_same_phone_written_another_way),
        cmocka_unit_test(quiet_hours),
        cmocka_unit_test(reminder_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
