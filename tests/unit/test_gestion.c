/*
 * test_gestion.c - an appointment's link token (core/gestion.h): 64
 * base64url characters that name their appointment under their key and
 * nothing else - not under another key, not with one character changed,
 * not another appointment's id with this signature.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gestion.h"

#define ID_A "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"
#define ID_B "9d0c8e8a-3c1d-4e2f-9a7b-1234567890ab"

static unsigned char K1[APP_LINK_KEY_BYTES], K2[APP_LINK_KEY_BYTES];

static int setup(void **state)
{
    (void)state;
    if (sodium_init() < 0) return -1;
    memset(K1, 1, sizeof K1);
    memset(K2, 2, sizeof K2);
    return 0;
}

static void a_token_names_its_cita_under_its_key_only(void **state)
{
    (void)state;
    char t[GESTION_TOKEN_LEN + 1], u[GESTION_TOKEN_LEN + 1];
    assert_true(gestion_token(K1, ID_A, t));
    assert_int_equal(strlen(t), GESTION_TOKEN_LEN);
    assert_int_equal(strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
                     GESTION_TOKEN_LEN);
    /* the same every time (the outbox signs each message anew) */
    assert_true(gestion_token(K1, ID_A, u));
    assert_string_equal(t, u);
    /* any case of the id is the same cita */
    assert_true(gestion_token(K1, "0B5F8E8A-3C1D-4E2F-9A7B-1234567890AB", u));
    assert_string_equal(t, u);
    br_id id;
    assert_true(gestion_token_cita(K1, t, id));
    assert_string_equal(id, ID_A);
    assert_false(gestion_token_cita(K2, t, id));
    assert_string_equal(id, "");
    /* every character matters */
    for (size_t i = 0; i < GESTION_TOKEN_LEN; i++) {
        memcpy(u, t, sizeof u);
        u[i] = u[i] == 'A' ? 'B' : 'A';
        assert_false(gestion_token_cita(K1, u, id));
    }
    /* another cita's id with this signature */
    char b[GESTION_TOKEN_LEN + 1];
    assert_true(gestion_token(K1, ID_B, b));
    memcpy(u, b, 21);
    memcpy(u + 21, t + 21, sizeof u - 21);
    assert_false(gestion_token_cita(K1, u, id));
    /* other shapes */
    assert_false(gestion_token_cita(K1, NULL, id));
    assert_false(gestion_token_cita(K1, "", id));
    assert_false(gestion_token_cita(K1, ID_A, id));
    char longer[GESTION_TOKEN_LEN + 2];
    memcpy(longer, t, GESTION_TOKEN_LEN);
    longer[GESTION_TOKEN_LEN] = 'A';
    longer[GESTION_TOKEN_LEN + 1] = '\0';
    assert_false(gestion_token_cita(K1, longer, id));
    /* no token for what is no id */
    assert_false(gestion_token(K1, "no-es-un-id", u));
    assert_null(gestion_link(K1, "http://x", "no-es-un-id"));
    char *link = gestion_link(K1, "https://barberia.example", ID_A);
    char want[200];
    snprintf(want, sizeof want, "https://barberia.example/c/%s", t);
    assert_string_equal(link, want);
    free(link);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_token_names_its_cita_under_its_key_only),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
