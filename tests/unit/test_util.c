/*
 * test_util.c - the small utilities: capped buffers, UTF-8 checks, e-mail
 * normalisation, the outbox's backoff schedule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "identity/identity.h"
#include "core/outbox.h"
#include "util/buf.h"

static void buffer_refuses_to_grow_past_its_cap_and_stays_intact(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 10);
    assert_int_equal(buf_append(&b, "0123456789", 10), BR_OK);
    assert_int_equal(buf_append(&b, "x", 1), BR_TOOLARGE);
    assert_int_equal(b.len, 10);
    assert_string_equal(buf_cstr(&b), "0123456789");
    buf_reset(&b);
    assert_int_equal(buf_printf(&b, "%s-%d", "ab", 7), BR_OK);
    assert_string_equal(buf_cstr(&b), "ab-7");
    assert_int_equal(buf_printf(&b, "%0300d", 1), BR_TOOLARGE);
    assert_string_equal(buf_cstr(&b), "ab-7");
    size_t n;
    char *p = buf_steal(&b, &n);
    assert_int_equal(n, 4);
    assert_string_equal(p, "ab-7");
    free(p);
    assert_int_equal(b.len, 0);
    buf_free(&b);
}

static void long_printf_goes_through_the_slow_path(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 4096);
    assert_int_equal(buf_printf(&b, "%0999d", 5), BR_OK);
    assert_int_equal(b.len, 999);
    assert_int_equal(b.p[998], '5');
    buf_free(&b);
}

static void utf8_validation_refuses_malformed_sequences(void **state)
{
    (void)state;
    assert_true(utf8_valid("añ€😀", strlen("añ€😀")));
    assert_int_equal(utf8_count("añ€😀", strlen("añ€😀")), 4);
    static const char *const bad[] = {
        "\x80",
        "\xc3",
        "\xc0\x80",
        "\xe0\x80\x80",
        "\xed\xa0\x80" /* surrogate */,
        "\xf4\x90\x80\x80" /* > U+10FFFF */,
        "\xff",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (utf8_valid(bad[i], strlen(bad[i]))) fail_msg("accepted #%zu", i);
    assert_false(utf8_valid("a\0b", 3));
}

struct email_case {
    const char *in;
    const char *out; /* NULL: refused */
};

static void emails_are_trimmed_lowercased_and_checked(void **state)
{
    (void)state;
    static const struct email_case cases[] = {
        {"Ana@Example.COM", "ana@example.com"},
        {"  ana@example.com \t", "ana@example.com"},
        {"ana.maria+citas@sub.example.es", "ana.maria+citas@sub.example.es"},
        {"josé@correo.es", NULL}, /* SMTP without SMTPUTF8 cannot carry it */
        {"", NULL},
        {"   ", NULL},
        {"ana", NULL},
        {"ana@", NULL},
        {"@example.com", NULL},
        {"ana@@example.com", NULL},
        {"ana@b@example.com", NULL},
        {"ana@localhost", NULL},
        {"ana@.example.com", NULL},
        {"ana@example.com.", NULL},
        {"ana@example..com", NULL},
        {"ana maria@example.com", NULL},
        {"ana@example.com\r\nBcc: x@y.z", NULL},
        {"<ana@example.com>", NULL},
        {".ana@example.com", NULL},
        {"ana.@example.com", NULL},
        /* the domain a deleted account's sign-in is moved to is nobody's */
        {"7d0f1c2a-3b4c-4d5e-8f60-718293a4b5c6@eliminado.invalid", NULL},
        {"7D0F1C2A-3B4C-4D5E-8F60-718293A4B5C6@Eliminado.Invalid ", NULL},
        {"ana@otro.eliminado.invalid", "ana@otro.eliminado.invalid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        bool ok = ident_normalize_email(cases[i].in, &out);
        if (ok != (cases[i].out != NULL)) fail_msg("\"%s\": ok=%d", cases[i].in, ok);
        if (ok) {
            if (strcmp(out, cases[i].out)) fail_msg("\"%s\" -> \"%s\"", cases[i].in, out);
            free(out);
        }
    }
}

static void backoff_doubles_from_one_second_up_to_five_minutes(void **state)
{
    (void)state;
    assert_int_equal(outbox_backoff_ms(1), 1000);
    assert_int_equal(outbox_backoff_ms(2), 2000);
    assert_int_equal(outbox_backoff_ms(3), 4000);
    assert_int_equal(outbox_backoff_ms(9), 256000);
    assert_int_equal(outbox_backoff_ms(10), 300000);
    assert_int_equal(outbox_backoff_ms(1000), 300000);
    assert_int_equal(outbox_backoff_ms(0), 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buffer_refuses_to_grow_past_its_cap_and_stays_intact),
        cmocka_unit_test(long_printf_goes_through_the_slow_path),
        cmocka_unit_test(utf8_validation_refuses_malformed_sequences),
        cmocka_unit_test(emails_are_trimmed_lowercased_and_checked),
        cmocka_unit_test(backoff_doubles_from_one_second_up_to_five_minutes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
