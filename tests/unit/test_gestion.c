/*
 * test_gestion.c - an appointment's link token (core/gestion.h): 64
 * base64url characters (70 with a generation) that name their appointment
 * and generation under their key and nothing else - not under another
 * key, not with one character changed, not another appointment's id or
 * another generation with this signature.
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
    char t[GESTION_TOKEN_MAX + 1], u[GESTION_TOKEN_MAX + 1];
    assert_true(gestion_token(K1, ID_A, 0, t));
    assert_int_equal(strlen(t), 64);
    assert_int_equal(strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
                     64);
    /* the same every time (the outbox signs each message anew) */
    assert_true(gestion_token(K1, ID_A, 0, u));
    assert_string_equal(t, u);
    /* any case of the id is the same cita */
    assert_true(gestion_token(K1, "0B5F8E8A-3C1D-4E2F-9A7B-1234567890AB", 0, u));
    assert_string_equal(t, u);
    br_id id;
    uint32_t gen = 7;
    assert_true(gestion_token_cita(K1, t, id, &gen));
    assert_string_equal(id, ID_A);
    assert_int_equal(gen, 0);
    assert_false(gestion_token_cita(K2, t, id, &gen));
    assert_string_equal(id, "");
    /* every character matters */
    for (size_t i = 0; i < 64; i++) {
        memcpy(u, t, sizeof u);
        u[i] = u[i] == 'A' ? 'B' : 'A';
        assert_false(gestion_token_cita(K1, u, id, &gen));
    }
    /* another cita's id with this signature */
    char b[GESTION_TOKEN_MAX + 1];
    assert_true(gestion_token(K1, ID_B, 0, b));
    memcpy(u, b, 21);
    memcpy(u + 21, t + 21, 64 - 21 + 1);
    assert_false(gestion_token_cita(K1, u, id, &gen));
    /* other shapes */
    assert_false(gestion_token_cita(K1, NULL, id, &gen));
    assert_false(gestion_token_cita(K1, "", id, &gen));
    assert_false(gestion_token_cita(K1, ID_A, id, &gen));
    char longer[66];
    memcpy(longer, t, 64);
    longer[64] = 'A';
    longer[65] = '\0';
    assert_false(gestion_token_cita(K1, longer, id, &gen));
    /* no token for what is no id */
    assert_false(gestion_token(K1, "no-es-un-id", 0, u));
    assert_null(gestion_link(K1, "http://x", "no-es-un-id", 0));
    char *link = gestion_link(K1, "https://barberia.example", ID_A, 0);
    char want[200];
    snprintf(want, sizeof want, "https://barberia.example/c/%s", t);
    assert_string_equal(link, want);
    free(link);
}

/* A generation's token: longer, its own for each generation, and the
 * generation it names cannot be changed. */
static void a_generation_has_tokens_of_its_own(void **state)
{
    (void)state;
    char t0[GESTION_TOKEN_MAX + 1], t1[GESTION_TOKEN_MAX + 1], t2[GESTION_TOKEN_MAX + 1];
    assert_true(gestion_token(K1, ID_A, 0, t0));
    assert_true(gestion_token(K1, ID_A, 1, t1));
    assert_true(gestion_token(K1, ID_A, 2, t2));
    assert_int_equal(strlen(t1), GESTION_TOKEN_MAX);
    assert_string_not_equal(t1, t2);
    assert_memory_not_equal(t0, t1, 64);
    br_id id;
    uint32_t gen = 0;
    assert_true(gestion_token_cita(K1, t1, id, &gen));
    assert_string_equal(id, ID_A);
    assert_int_equal(gen, 1);
    assert_true(gestion_token_cita(K1, t2, id, &gen));
    assert_int_equal(gen, 2);
    assert_false(gestion_token_cita(K2, t2, id, &gen));
    /* every character matters */
    char u[GESTION_TOKEN_MAX + 1];
    for (size_t i = 0; i < GESTION_TOKEN_MAX; i++) {
        memcpy(u, t2, sizeof u);
        u[i] = u[i] == 'A' ? 'B' : 'A';
        assert_false(gestion_token_cita(K1, u, id, &gen));
    }
    /* generation 1's id and generation with generation 2's signature */
    memcpy(u, t1, sizeof u);
    memcpy(u + 27, t2 + 27, GESTION_TOKEN_MAX - 27 + 1);
    assert_false(gestion_token_cita(K1, u, id, &gen));
    /* a large generation round-trips */
    assert_true(gestion_token(K1, ID_B, 0xFFFFFFFFu, t1));
    assert_true(gestion_token_cita(K1, t1, id, &gen));
    assert_string_equal(id, ID_B);
    assert_true(gen == 0xFFFFFFFFu);
    char *link = gestion_link(K1, "https://barberia.example", ID_A, 2);
    char want[200];
    snprintf(want, sizeof want, "https://barberia.example/c/%s", t2);
    assert_string_equal(link, want);
    free(link);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_token_names_its_cita_under_its_key_only),
        cmocka_unit_test(a_generation_has_tokens_of_its_own),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
