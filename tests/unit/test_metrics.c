/*
 * test_metrics.c - the metrics registry's rules: which clients count as
 * loopback for GET /metrics, bucket edges (a bucket's bound is inclusive),
 * unknown routes and statuses, the gauges' arithmetic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/api.h"
#include "util/metrics.h"

#include <string.h>

static void loopback_is_127_slash_8_and_the_v6_one(void **state)
{
    (void)state;
    assert_true(api_is_loopback("127.0.0.1"));
    assert_true(api_is_loopback("127.10.20.30"));
    assert_true(api_is_loopback("::1"));
    assert_true(api_is_loopback("::ffff:127.0.0.1"));
    assert_false(api_is_loopback("10.0.0.1"));
    assert_false(api_is_loopback("128.0.0.1"));
    assert_false(api_is_loopback("::2"));
    assert_false(api_is_loopback("::ffff:10.0.0.1"));
    assert_false(api_is_loopback("fe80::1"));
    assert_false(api_is_loopback(""));
}

static char *render(void)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(metrics_render(&b, NULL), BR_OK);
    return buf_steal(&b, NULL);
}

static void bucket_bounds_are_inclusive_and_odd_requests_land_somewhere(void **state)
{
    (void)state;
    static const char *const names[] = {"GET /a", "POST /b"};
    metrics_http_routes(names, 2);
    metrics_http_begin();
    metrics_http_done(0, 200, 500); /* exactly 0.5 ms: in le="0.0005" */
    metrics_http_begin();
    metrics_http_done(1, 999, 20000000); /* a status past 599, 20 s: +Inf only */
    metrics_http_begin();
    metrics_http_done(-1, 404, 1);
    metrics_http_begin(); /* one still in flight */
    char *t = render();
    assert_non_null(strstr(t, "barberia_http_request_duration_seconds_bucket{method=\"GET\","
                              "route=\"/a\",le=\"0.0005\"} 1\n"));
    assert_non_null(strstr(t, "barberia_http_request_duration_seconds_bucket{method=\"POST\","
                              "route=\"/b\",le=\"10\"} 0\n"));
    assert_non_null(strstr(t, "barberia_http_request_duration_seconds_bucket{method=\"POST\","
                              "route=\"/b\",le=\"+Inf\"} 1\n"));
    assert_null(strstr(t, "status=\"999\""));
    assert_non_null(strstr(t, "barberia_http_requests_total{method=\"\",route=\"unmatched\","
                              "status=\"404\"} 1\n"));
    assert_non_null(strstr(t, "barberia_http_requests_in_flight 1\n"));
    free(t);
    metrics_http_done(0, 200, 1);
    metrics_http_routes(NULL, 0);
}

static void gauges_add_and_set(void **state)
{
    (void)state;
    metric_set(M_DB_IN_USE, 0);
    metric_add(M_DB_IN_USE, 3);
    metric_add(M_DB_IN_USE, -1);
    assert_int_equal(metric_get(M_DB_IN_USE), 2);
    metric_inc(M_MAIL_SENT);
    char *t = render();
    assert_non_null(strstr(t, "# TYPE barberia_db_pool_in_use gauge\nbarberia_db_pool_in_use 2\n"));
    assert_non_null(strstr(t, "barberia_mail_sent_total 1\n"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loopback_is_127_slash_8_and_the_v6_one),
        cmocka_unit_test(bucket_bounds_are_inclusive_and_odd_requests_land_somewhere),
        cmocka_unit_test(gauges_add_and_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
