/*
 * test_access_log.c - the access log cannot be forged or turned into
 * terminal control sequences: libmicrohttpd passes any byte but space, CR
 * and LF through in a request's method, and the method is client text just
 * like the path, so both are escaped (\xNN) in the access line.
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static struct srv S;

static int cleanup(void **state)
{
    (void)state;
    srv_cleanup(&S);
    return 0;
}

/* Whether the log holds a byte below 0x20 other than the line breaks, or
 * DEL. */
static bool has_control_bytes(const char *log)
{
    for (const unsigned char *p = (const unsigned char *)log; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f) return true;
    return false;
}

static void control_bytes_in_method_and_path_are_escaped_in_the_access_log(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    static const char req[] = "G\x1b[2JET /healthz%01%1b HTTP/1.1\r\nHost: x\r\n"
                              "Connection: close\r\n\r\n";
    char *reply = NULL;
    assert_int_equal(raw_http(&S, req, sizeof req - 1, 5000, &reply), 404);
    free(reply);
    static const char del[] =
        "X\x7f\x01 /api/citas HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_int_equal(raw_http(&S, del, sizeof del - 1, 5000, &reply), 405);
    free(reply);
    assert_true(srv_wait_log(&S, "X\\x7f\\x01 /api/citas 405", 5000));
    char *log = srv_log(&S);
    assert_non_null(strstr(log, "G\\x1b[2JET /healthz\\x01\\x1b 404"));
    assert_false(has_control_bytes(log));
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(control_bytes_in_method_and_path_are_escaped_in_the_access_log,
                                  cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
