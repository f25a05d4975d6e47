/*
 * test_names.c - the catalog's names as of a version (store/names.h): found
 * by id whatever the order they came in, copied (the caller's buffers may
 * go), bounded, and of exactly one version.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "store/names.h"

#include <stdio.h>
#include <string.h>

static struct db_val text(const char *s)
{
    return db_text(s);
}

static void id_of(int i, char out[37])
{
    snprintf(out, 37, "00000000-0000-4000-8000-%012d", i);
}

static void entries_are_found_by_id_in_any_order(void **state)
{
    (void)state;
    struct names *n = names_new();
    int order[] = {5, 1, 9, 3, 7, 2, 8, 4, 6, 0};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        char id[37], nombre[32];
        id_of(order[k], id);
        snprintf(nombre, sizeof nombre, "Servicio %d", order[k]);
        struct db_val v[] = {text(nombre), db_int(10 + order[k]), db_real(order[k] + 0.5)};
        assert_int_equal(names_add(n, NAMES_SERVICIO, (struct db_val[]){text(id)}, v, 3), BR_OK);
        memset(nombre, 'x', sizeof nombre - 1); /* the names keep their own copy */
    }
    char bid[37];
    id_of(3, bid); /* a barber may share an id with a service: kinds apart */
    struct db_val bv[] = {text("Barbero Tres"), db_null()};
    assert_int_equal(names_add(n, NAMES_BARBERO, (struct db_val[]){text(bid)}, bv, 2), BR_OK);
    names_seal(n);

    for (int i = 0; i < 10; i++) {
        char id[37], nombre[32];
        id_of(i, id);
        const struct db_val *v = names_find(n, NAMES_SERVICIO, (struct db_val[]){text(id)});
        assert_non_null(v);
        snprintf(nombre, sizeof nombre, "Servicio %d", i);
        assert_int_equal(v[0].type, DB_TEXT);
        assert_int_equal(v[0].n, strlen(nombre));
        assert_memory_equal(v[0].s, nombre, v[0].n);
        assert_int_equal(v[1].i, 10 + i);
        assert_true(v[2].d == i + 0.5);
    }
    const struct db_val *b = names_find(n, NAMES_BARBERO, (struct db_val[]){text(bid)});
    assert_non_null(b);
    assert_memory_equal(b[0].s, "Barbero Tres", 12);
    assert_int_equal(b[1].type, DB_NULL);

    char other[37];
    id_of(11, other);
    assert_null(names_find(n, NAMES_SERVICIO, (struct db_val[]){text(other)}));
    id_of(4, other);
    assert_null(names_find(n, NAMES_BARBERO, (struct db_val[]){text(other)}));
    assert_null(names_find(n, NAMES_SERVICIO, (struct db_val[]){text("0000")}));
    assert_null(names_find(n, NAMES_SERVICIO, (struct db_val[]){db_null()}));
    names_unref(n);
}

static void a_set_is_of_one_version_only(void **state)
{
    (void)state;
    struct names *n = names_new();
    struct db_val v1 = text("3f1c0a6e-1111-4222-8333-444455556666");
    assert_false(names_is(n, &v1)); /* no version yet */
    assert_true(names_set_version(n, &v1));
    assert_true(names_is(n, &v1));
    struct db_val v2 = text("3f1c0a6e-1111-4222-8333-444455556667");
    assert_false(names_is(n, &v2));
    struct db_val prefix = text("3f1c0a6e-1111-4222-8333-44445555666");
    assert_false(names_is(n, &prefix));
    assert_false(names_is(n, (struct db_val[]){db_null()}));
    assert_false(names_is(NULL, &v1));
    char longer[NAMES_VERSION + 1];
    memset(longer, 'a', NAMES_VERSION);
    longer[NAMES_VERSION] = '\0';
    assert_false(names_set_version(n, (struct db_val[]){text(longer)}));
    assert_false(names_set_version(n, (struct db_val[]){db_int(7)}));
    assert_true(names_is(n, &v1)); /* refused versions change nothing */

    /* references: the set lives until the last one goes (ASan checks) */
    struct names *r = names_ref(n);
    names_unref(n);
    assert_true(names_is(r, &v1));
    names_unref(r);
    names_unref(NULL);
}

static void entries_are_bounded_and_checked(void **state)
{
    (void)state;
    struct names *n = names_new();
    struct db_val bv[] = {text("B"), db_null()};
    struct db_val sv[] = {text("S"), db_int(30), db_real(10)};
    assert_int_equal(names_add(n, NAMES_BARBERO, (struct db_val[]){text("not-an-id")}, bv, 2),
                     BR_INVALID);
    char id[37];
    id_of(1, id);
    assert_int_equal(names_add(n, NAMES_BARBERO, (struct db_val[]){text(id)}, sv, 3), BR_INVALID);
    assert_int_equal(names_add(n, NAMES_SERVICIO, (struct db_val[]){text(id)}, bv, 2), BR_INVALID);
    for (int i = 0; i < NAMES_MAX; i++) {
        id_of(i, id);
        assert_int_equal(names_add(n, i % 2 ? NAMES_BARBERO : NAMES_SERVICIO,
                                   (struct db_val[]){text(id)}, i % 2 ? bv : sv, i % 2 ? 2 : 3),
                         BR_OK);
    }
    id_of(NAMES_MAX, id);
    assert_int_equal(names_add(n, NAMES_SERVICIO, (struct db_val[]){text(id)}, sv, 3), BR_TOOLARGE);
    names_seal(n);
    id_of(NAMES_MAX - 1, id);
    assert_non_null(names_find(n, NAMES_BARBERO, (struct db_val[]){text(id)}));
    id_of(NAMES_MAX - 2, id);
    assert_non_null(names_find(n, NAMES_SERVICIO, (struct db_val[]){text(id)}));
    names_unref(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entries_are_found_by_id_in_any_order),
        cmocka_unit_test(a_set_is_of_one_version_only),
        cmocka_unit_test(entries_are_bounded_and_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
