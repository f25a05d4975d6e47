/*
 * test_jsonw.c - the streaming JSON writer: structure, escaping, numbers,
 * and that whatever it writes parses back as the same value (jansson is
 * the referee).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonw.h"

static char *finish(struct jw *w)
{
    char *out;
    size_t len;
    assert_int_equal(jw_finish(w, &out, &len), BR_OK);
    assert_int_equal(strlen(out), len);
    return out;
}

static void nested_objects_and_arrays_get_their_commas_right(void **state)
{
    (void)state;
    struct jw w;
    jw_init(&w, 4096);
    jw_obj_open(&w);
    jw_kstr(&w, "a", "x");
    jw_key(&w, "b");
    jw_arr_open(&w);
    jw_int(&w, 1);
    jw_obj_open(&w);
    jw_kint(&w, "count", 2);
    jw_obj_close(&w);
    jw_arr_open(&w);
    jw_arr_close(&w);
    jw_null(&w);
    jw_bool(&w, true);
    jw_arr_close(&w);
    jw_kstr(&w, "c", NULL);
    jw_key(&w, "d");
    jw_obj_open(&w);
    jw_obj_close(&w);
    jw_obj_close(&w);
    char *out = finish(&w);
    assert_string_equal(out,
                        "{\"a\":\"x\",\"b\":[1,{\"count\":2},[],null,true],\"c\":null,\"d\":{}}");
    free(out);
}

static void strings_are_escaped_as_json_requires(void **state)
{
    (void)state;
    struct jw w;
    jw_init(&w, 4096);
    jw_arr_open(&w);
    jw_str(&w, "comillas \" barra \\ / línea\nretorno\rtab\tbs\bff\f \x01\x1f\x7f ñ€😀");
    jw_arr_close(&w);
    char *out = finish(&w);
    assert_string_equal(out, "[\"comillas \\\" barra \\\\ / línea\\nretorno\\rtab\\tbs\\bff\\f "
                             "\\u0001\\u001f\x7f ñ€😀\"]");
    json_error_t e;
    json_t *back = json_loads(out, 0, &e);
    assert_non_null(back);
    assert_string_equal(json_string_value(json_array_get(back, 0)),
                        "comillas \" barra \\ / línea\nretorno\rtab\tbs\bff\f \x01\x1f\x7f ñ€😀");
    json_decref(back);
    free(out);
}

static void bytes_that_are_not_utf8_become_the_replacement_character(void **state)
{
    (void)state;
    static const char *const bad[] = {"a\xff"
                                      "b",
                                      "\xc3", "\xc0\xaf", "x\xed\xa0\x80y", "\xe2\x82"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jw w;
        jw_init(&w, 4096);
        jw_arr_open(&w);
        jw_str(&w, bad[i]);
        jw_arr_close(&w);
        char *out = finish(&w);
        json_t *back = json_loads(out, 0, NULL);
        if (!back) fail_msg("case %zu is not valid JSON: %s", i, out);
        assert_non_null(strstr(json_string_value(json_array_get(back, 0)), "\xEF\xBF\xBD"));
        json_decref(back);
        free(out);
    }
}

static void reals_are_shortest_round_trips_and_stay_reals(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {15.0, "15.0"},
        {22.5, "22.5"},
        {19.99, "19.99"},
        {0.1, "0.1"},
        {0, "0.0"},
        {-3.25, "-3.25"},
        {1e300, "1e+300"},
        {123456789012.0, "123456789012.0"},
        {1.0 / 3.0, "0.3333333333333333"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct jw w;
        jw_init(&w, 4096);
        jw_arr_open(&w);
        jw_real(&w, cases[i].v);
        jw_arr_close(&w);
        char *out = finish(&w);
        char want[64];
        snprintf(want, sizeof want, "[%s]", cases[i].text);
        assert_string_equal(out, want);
        json_t *back = json_loads(out, 0, NULL);
        assert_true(json_is_real(json_array_get(back, 0)));
        assert_true(json_real_value(json_array_get(back, 0)) == cases[i].v);
        json_decref(back);
        free(out);
    }
    struct jw w;
    jw_init(&w, 64);
    jw_arr_open(&w);
    jw_real(&w, NAN);
    jw_real(&w, INFINITY);
    jw_int(&w, INT64_MIN);
    jw_arr_close(&w);
    char *out = finish(&w);
    assert_string_equal(out, "[null,null,-9223372036854775808]");
    free(out);
}

static void misuse_and_the_cap_are_reported_not_written(void **state)
{
    (void)state;
    char *out;
    size_t len;
    struct jw w;
    jw_init(&w, 16);
    jw_obj_open(&w);
    jw_kstr(&w, "k", "a string longer than the cap");
    jw_obj_close(&w);
    assert_int_equal(jw_finish(&w, &out, &len), BR_TOOLARGE);
    assert_null(out);

    jw_init(&w, 1024); /* a value where a key is due */
    jw_obj_open(&w);
    jw_key(&w, "a");
    jw_key(&w, "b");
    assert_int_not_equal(jw_finish(&w, &out, &len), BR_OK);

    jw_init(&w, 1024); /* left open */
    jw_arr_open(&w);
    assert_int_not_equal(jw_finish(&w, &out, &len), BR_OK);

    jw_init(&w, 1024); /* closed too often */
    jw_arr_open(&w);
    jw_arr_close(&w);
    jw_arr_close(&w);
    assert_int_not_equal(jw_finish(&w, &out, &len), BR_OK);

    jw_init(&w, 1024); /* nothing at all */
    assert_int_not_equal(jw_finish(&w, &out, &len), BR_OK);

    jw_init(&w, 1 << 20); /* too deep */
    for (int i = 0; i <= JW_MAX_DEPTH; i++)
        jw_arr_open(&w);
    assert_int_not_equal(jw_finish(&w, &out, &len), BR_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nested_objects_and_arrays_get_their_commas_right),
        cmocka_unit_test(strings_are_escaped_as_json_requires),
        cmocka_unit_test(bytes_that_are_not_utf8_become_the_replacement_character),
        cmocka_unit_test(reals_are_shortest_round_trips_and_stay_reals),
        cmocka_unit_test(misuse_and_the_cap_are_reported_not_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
