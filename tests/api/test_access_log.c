/*
 * test_access_log.c - the access log cannot be forged or turned into
 * terminal control sequences: libmicrohttpd passes any byte but space, CR
 * and LF through in a request's method, and the method is client text just
 * like the path, so both are escaped (\xNN) in the access line. Access
 * lines are buffered, come out whole, and are never lost by a clean stop.
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

/* Each request's line, whole (a line is written when its request is over,
 * so two requests in flight at once may log in either order); all of them
 * written by the time a SIGTERM'd server has exited, before its last line. */
static void every_access_line_is_written_whole_by_the_stop(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    enum { N = 400 };
    for (int i = 0; i < N; i++) {
        char path[64];
        snprintf(path, sizeof path, "/api/nada/%04d", i);
        struct resp r;
        http_get(&S, path, NULL, &r);
        assert_int_equal(r.status, 404);
        resp_free(&r);
    }
    assert_int_equal(srv_stop(&S), 0);
    char *log = srv_log(&S);
    const char *last = log;
    for (int i = 0; i < N; i++) {
        char want[64];
        snprintf(want, sizeof want, "Z info GET /api/nada/%04d 404 ", i);
        const char *p = strstr(log, want);
        if (!p) fail_msg("the line of request %d is missing", i);
        if (p - 23 != log && p[-24] != '\n') fail_msg("the line of request %d is not whole", i);
        if (p > last) last = p;
    }
    assert_non_null(strstr(last, "info stopped"));
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(control_bytes_in_method_and_path_are_escaped_in_the_access_log,
                                  cleanup),
        cmocka_unit_test_teardown(every_access_line_is_written_whole_by_the_stop, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
