/*
 * test_access_log.c - the access log cannot be forged or turned into
 * terminal control sequences: libmicrohttpd passes any byte but space, CR
 * and LF through in a request's method, and the method is client text just
 * like the path, so both are escaped (\xNN) in the access line. A path
 * segment shaped like a secret token is written as `<token>` (ids, which
 * are canonical UUIDs, stay), and so is a link's token with something
 * stuck to it. Access lines are buffered, come out whole,
 * and are never lost by a clean stop.
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

/* The access line of GET path (404 or whatever it answers): the first
 * line of the log holding "GET <shown> ". */
static void get_and_wait_for_line(const char *path, const char *shown)
{
    struct resp r;
    http_get(&S, path, NULL, &r);
    resp_free(&r);
    char want[256];
    snprintf(want, sizeof want, "info GET %s ", shown);
    if (!srv_wait_log(&S, want, 5000)) fail_msg("no access line \"%s\"", want);
}

static void token_shaped_path_segments_are_redacted_and_uuids_kept(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    /* 32 random bytes as unpadded base64url (43 characters) and as hex (64) */
    static const char b64[] = "q3Zr-8Kx_0aVbN4mW7pLc2TyHs9dEfGuJiOk1lMnRtA";
    static const char hex[] = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    static const char uuid[] = "6f1c2b4a-9d3e-4f5a-8b7c-0123456789ab";
    assert_int_equal(strlen(b64), 43);
    /* an appointment's link token: 64 characters of base64url */
    static const char link[] = "LR8j_ZDHqVpnCPheP-QXrkEXcJrO1XWxkJq3DOVIybIQ2Vx2OFBbiqscn7r0zxiU";
    assert_int_equal(strlen(hex), 64);
    assert_int_equal(strlen(link), 64);
    char path[256], shown[256];

    snprintf(path, sizeof path, "/c/%s", b64);
    get_and_wait_for_line(path, "/c/<token>");
    snprintf(path, sizeof path, "/api/gestion/%s", hex);
    get_and_wait_for_line(path, "/api/gestion/<token>");
    /* a token between ids and names, and percent-encoded (the log shows
     * the path decoded, so the encoding hides nothing) */
    snprintf(path, sizeof path, "/api/barberos/%s/agenda.ics", uuid);
    snprintf(shown, sizeof shown, "/api/barberos/%s/agenda.ics", uuid);
    get_and_wait_for_line(path, shown);
    snprintf(path, sizeof path, "/api/barberos/%s/%s/agenda.ics", uuid, b64);
    snprintf(shown, sizeof shown, "/api/barberos/%s/<token>/agenda.ics", uuid);
    get_and_wait_for_line(path, shown);
    snprintf(path, sizeof path, "/r/%%39%%66%s", hex + 2);
    get_and_wait_for_line(path, "/r/<token>");
    /* a link's token with something stuck to it (a sentence's full stop, a
     * bracket around the link) */
    snprintf(path, sizeof path, "/c/%s.", link);
    get_and_wait_for_line(path, "/c/<token>.");
    snprintf(path, sizeof path, "/c/%s)", link);
    get_and_wait_for_line(path, "/c/<token>)");
    snprintf(path, sizeof path, "/api/gestion/%s;x", link);
    get_and_wait_for_line(path, "/api/gestion/<token>;x");
    /* an upper-case UUID is an id too; short words and file names stay */
    get_and_wait_for_line("/api/citas/6F1C2B4A-9D3E-4F5A-8B7C-0123456789AB/cancelar",
                          "/api/citas/6F1C2B4A-9D3E-4F5A-8B7C-0123456789AB/cancelar");
    get_and_wait_for_line("/api/disponibilidad/x/app.4f3c2a1b9d8e7f60.js",
                          "/api/disponibilidad/x/app.4f3c2a1b9d8e7f60.js");

    assert_int_equal(srv_stop(&S), 0);
    char *log = srv_log(&S);
    assert_null(strstr(log, b64));
    assert_null(strstr(log, hex));
    assert_null(strstr(log, hex + 2));
    assert_null(strstr(log, link));
    assert_non_null(strstr(log, uuid));
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(control_bytes_in_method_and_path_are_escaped_in_the_access_log,
                                  cleanup),
        cmocka_unit_test_teardown(every_access_line_is_written_whole_by_the_stop, cleanup),
        cmocka_unit_test_teardown(token_shaped_path_segments_are_redacted_and_uuids_kept, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
