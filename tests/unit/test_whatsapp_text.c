/*
 * test_whatsapp_text.c - the parameters of a WhatsApp template message as
 * the Graph API takes them (mail/whatsapp.h): one line, no run of spaces,
 * whole UTF-8 characters at a cut, and the six together short enough that
 * the body stays within Meta's 1,024 characters.
 */
#include "mail/whatsapp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static size_t chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static bool ends_with_ellipsis(const char *s)
{
    size_t n = strlen(s);
    return n >= 3 && !strcmp(s + n - 3, "…");
}

static void param_text_is_one_line_without_runs_of_spaces(void **state)
{
    (void)state;
    char out[32];
    whatsapp_param_text("  Ana\n\tPérez   López  ", out, sizeof out);
    assert_string_equal(out, "Ana Pérez López");
    whatsapp_param_text("   ", out, sizeof out);
    assert_string_equal(out, "-");
    whatsapp_param_text(NULL, out, sizeof out);
    assert_string_equal(out, "-");
    /* a cut never leaves half a character: "é" is two bytes */
    whatsapp_param_text("ééééé", out, 6);
    assert_string_equal(out, "éé");
}

static void short_parameters_are_left_alone(void **state)
{
    (void)state;
    char a[64] = "Ana Pérez", b[64] = "Corte clásico", c[64] = "Carlos";
    char *t[] = {a, b, c};
    whatsapp_params_fit(t, 3, 60, 700);
    assert_string_equal(a, "Ana Pérez");
    assert_string_equal(b, "Corte clásico");
    assert_string_equal(c, "Carlos");
}

static void the_longest_are_cut_first_to_one_length(void **state)
{
    (void)state;
    char a[400], b[420], c[400] = "sábado 21 de noviembre, 10:30";
    memset(a, 'a', 300);
    a[300] = '\0';
    /* 200 characters of two bytes each */
    for (int i = 0; i < 200; i++)
        memcpy(b + 2 * i, "ñ", 2);
    b[400] = '\0';
    char *t[] = {a, b, c};
    size_t fixed = 40, budget = 300;
    size_t short_one = chars(c);
    whatsapp_params_fit(t, 3, fixed, budget);
    assert_string_equal(c, "sábado 21 de noviembre, 10:30"); /* under the cut: whole */
    assert_int_equal(chars(a), chars(b));
    assert_true(ends_with_ellipsis(a) && ends_with_ellipsis(b));
    size_t total = chars(a) + chars(b) + short_one + fixed;
    assert_true(total <= budget);
    assert_true(total >= budget - 2); /* the largest length that fits */
    assert_int_equal(strncmp(b, "ññ", 4), 0);
}

static void a_cut_drops_the_spaces_before_the_ellipsis(void **state)
{
    (void)state;
    char a[64] = "abcdefgh       ijklmnop", b[64] = "x";
    /* each keeps at least 8 characters, so 16 are room: a is cut to 15,
     * which end in the run of spaces */
    char *t[] = {a, b};
    whatsapp_params_fit(t, 2, 0, 16);
    assert_string_equal(a, "abcdefgh…");
    assert_string_equal(b, "x");
}

static void a_huge_fixed_part_leaves_each_a_floor(void **state)
{
    (void)state;
    char a[64], b[64];
    memset(a, 'a', 40);
    a[40] = '\0';
    memset(b, 'b', 40);
    b[40] = '\0';
    char *t[] = {a, b};
    whatsapp_params_fit(t, 2, 5000, 700);
    assert_int_equal(chars(a), 8);
    assert_int_equal(chars(b), 8);
    assert_true(ends_with_ellipsis(a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(param_text_is_one_line_without_runs_of_spaces),
        cmocka_unit_test(short_parameters_are_left_alone),
        cmocka_unit_test(the_longest_are_cut_first_to_one_length),
        cmocka_unit_test(a_cut_drops_the_spaces_before_the_ellipsis),
        cmocka_unit_test(a_huge_fixed_part_leaves_each_a_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
