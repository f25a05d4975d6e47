/*
 * test_config.c - settings from the environment and flags.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static void defaults_apply_when_nothing_is_set(void **state)
{
    (void)state;
    unsetenv("BARBERIA_LISTEN");
    unsetenv("BARBERIA_DATA");
    struct config c;
    int i = 0;
    char *argv[] = {NULL};
    assert_int_equal(config_load(&c, CONFIG_DATA | CONFIG_SERVE, 0, argv, &i), BR_OK);
    assert_string_equal(c.listen, "127.0.0.1:8080");
    assert_string_equal(c.data_dir, "./data");
    assert_null(c.public_url);
    assert_null(c.database_url);
    assert_string_equal(c.google_calendar_id, "primary");
    assert_string_equal(c.google_api_url, "https://www.googleapis.com/calendar/v3");
    assert_int_equal(c.calendar_timeout_ms, 5000);
    assert_string_equal(c.smtp_from, "no-reply@localhost");
    assert_string_equal(c.tz, "UTC"); /* the product contract's */
    assert_int_equal(c.slot_min, 15);
    assert_int_equal(c.min_notice_min, 120);
    assert_int_equal(c.max_days_ahead, 90);
    assert_int_equal(c.cancel_cutoff_min, 120);
    assert_int_equal(c.reminder_hours, -1);
    assert_string_equal(c.reminder_offsets, "24h,2h");
    config_free(&c);
}

static void flags_win_over_variables_and_stop_at_unknown_arguments(void **state)
{
    (void)state;
    setenv("BARBERIA_LISTEN", "0.0.0.0:9000", 1);
    setenv("BARBERIA_DATA", "/var/lib/x", 1);
    setenv("BARBERIA_PUBLIC_URL", "", 1); /* empty counts as unset */
    struct config c;
    char *argv[] = {"--listen", "127.0.0.1:0", "--public-url=https://barberia.example",
                    "--demo",   "--data",      "/y"};
    int i = 0;
    assert_int_equal(config_load(&c, CONFIG_DATA | CONFIG_SERVE, 6, argv, &i), BR_OK);
    assert_int_equal(i, 3); /* stopped at --demo */
    assert_string_equal(c.listen, "127.0.0.1:0");
    assert_string_equal(c.public_url, "https://barberia.example");
    assert_string_equal(c.data_dir, "/var/lib/x");
    config_free(&c);
    unsetenv("BARBERIA_LISTEN");
    unsetenv("BARBERIA_DATA");
    unsetenv("BARBERIA_PUBLIC_URL");
}

static void serve_settings_are_not_taken_by_data_commands(void **state)
{
    (void)state;
    struct config c;
    char *argv[] = {"--data", "/d", "--listen", "x"};
    int i = 0;
    assert_int_equal(config_load(&c, CONFIG_DATA, 4, argv, &i), BR_OK);
    assert_int_equal(i, 2);
    config_free(&c);
}

static void bad_numbers_and_missing_values_are_config_errors(void **state)
{
    (void)state;
    struct config c;
    int i = 0;
    setenv("BARBERIA_CALENDAR_TIMEOUT_MS", "soon", 1);
    assert_int_equal(config_load(&c, CONFIG_SERVE | CONFIG_DATA, 0, NULL, &i), BR_CONFIG);
    assert_non_null(strstr(err_msg(), "BARBERIA_CALENDAR_TIMEOUT_MS"));
    config_free(&c);
    setenv("BARBERIA_CALENDAR_TIMEOUT_MS", "99999999", 1);
    assert_int_equal(config_load(&c, CONFIG_SERVE | CONFIG_DATA, 0, NULL, &i), BR_CONFIG);
    config_free(&c);
    unsetenv("BARBERIA_CALENDAR_TIMEOUT_MS");
    char *argv[] = {"--listen"};
    i = 0;
    assert_int_equal(config_load(&c, CONFIG_SERVE | CONFIG_DATA, 1, argv, &i), BR_CONFIG);
    config_free(&c);
    char *argv2[] = {"--data="};
    i = 0;
    assert_int_equal(config_load(&c, CONFIG_DATA, 1, argv2, &i), BR_CONFIG);
    config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_apply_when_nothing_is_set),
        cmocka_unit_test(flags_win_over_variables_and_stop_at_unknown_arguments),
        cmocka_unit_test(serve_settings_are_not_taken_by_data_commands),
        cmocka_unit_test(bad_numbers_and_missing_values_are_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
