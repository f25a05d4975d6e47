/*
 * test_roles.c - the role rule (domain/roles.h): `admin` administers,
 * `admin` and `barbero` are staff, anything else - or no profile - is a
 * client (the specification: "Any other value is treated as an ordinary
 * client").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "domain/roles.h"

struct row {
    const char *rol;
    bool admin, staff, known;
};

static const struct row rows[] = {
    {"admin", true, true, true},     {"barbero", false, true, true},
    {"cliente", false, false, true}, {NULL, false, false, false},
    {"", false, false, false},       {"Admin", false, false, false},
    {"admin ", false, false, false}, {"barberos", false, false, false},
    {"root", false, false, false},
};

static void each_rol_is_what_the_specification_says(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        assert_int_equal(rol_is_admin(r->rol), r->admin);
        assert_int_equal(rol_is_staff(r->rol), r->staff);
        assert_int_equal(rol_is_known(r->rol), r->known);
        struct principal p = {.has_perfil = true, .perfil = {.rol = (char *)r->rol}};
        assert_int_equal(principal_is_admin(&p), r->admin);
        assert_int_equal(principal_is_staff(&p), r->staff);
    }
}

static void a_caller_without_a_profile_is_a_client(void **state)
{
    (void)state;
    struct principal p = {.has_perfil = false, .perfil = {.rol = (char *)"admin"}};
    assert_false(principal_is_admin(&p));
    assert_false(principal_is_staff(&p));
}

static void the_sql_list_names_exactly_the_staff_roles(void **state)
{
    (void)state;
    assert_string_equal(ROL_STAFF_SQL, "('admin', 'barbero')");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_rol_is_what_the_specification_says),
        cmocka_unit_test(a_caller_without_a_profile_is_a_client),
        cmocka_unit_test(the_sql_list_names_exactly_the_staff_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
