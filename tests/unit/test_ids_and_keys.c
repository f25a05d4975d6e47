/*
 * test_ids_and_keys.c - UUIDs, ids in request paths, object-key validation,
 * URL encoding, and the photo key and extension rules of the specification.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/photos.h"
#include "util/objkey.h"
#include "util/uuid.h"

static void new_uuids_are_lowercase_canonical_v4_and_distinct(void **state)
{
    (void)state;
    char a[UUID_LEN + 1], b[UUID_LEN + 1], back[UUID_LEN + 1];
    for (int i = 0; i < 1000; i++) {
        uuid_v4(a);
        uuid_v4(b);
        assert_int_equal(strlen(a), UUID_LEN);
        assert_string_not_equal(a, b);
        assert_int_equal(a[14], '4');           /* version */
        assert_non_null(strchr("89ab", a[19])); /* variant */
        for (const char *p = a; *p; p++)
            assert_true(!(*p >= 'A' && *p <= 'Z'));
        assert_true(uuid_parse(a, UUID_LEN, back));
        assert_string_equal(a, back);
    }
}

static void uuid_parse_normalises_case_and_refuses_other_shapes(void **state)
{
    (void)state;
    char out[UUID_LEN + 1];
    assert_true(uuid_parse("0F8FAD5B-D9CB-469F-A165-70867728950E", UUID_LEN, out));
    assert_string_equal(out, "0f8fad5b-d9cb-469f-a165-70867728950e");
    static const char *const bad[] = {
        "",
        "0f8fad5b-d9cb-469f-a165-70867728950",   /* short */
        "0f8fad5b-d9cb-469f-a165-70867728950e0", /* long */
        "0f8fad5bd9cb-469f-a165-70867728950e-",  /* dash misplaced */
        "0f8fad5b-d9cb-469f-a165-70867728950g",  /* not hex */
        "{0f8fad5b-d9cb-469f-a165-70867728950}",
        "../../../../../../../../../etc/passwd",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (uuid_parse(bad[i], strlen(bad[i]), out)) fail_msg("accepted %s", bad[i]);
    assert_false(uuid_parse(NULL, 0, out));
}

static void object_keys_that_stay_inside_the_bucket_are_accepted(void **state)
{
    (void)state;
    static const char *const good[] = {
        "u/c/antes-1.jpg", "a",   "a/b/c/d", "u/c/antes-1./x", "u/c/ñandú-1.jpg",
        "u/c/a b-1.png",   "...", "a/.../b", ".hidden",        "a/..b",
        "a/b..",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!objkey_valid(good[i], strlen(good[i]))) fail_msg("refused %s", good[i]);
}

static void object_keys_that_could_escape_or_confuse_are_refused(void **state)
{
    (void)state;
    // clang-format off
    static const char *const bad[] = {
        "", "/", "/a", "a/", "a//b", ".", "..", "a/./b", "a/../b", "../x", "a/..",
        "u/c/a./../b", "a\nb", "a\rb", "a\tb", "a\x01" "b", "a\x7f" "b", "\xff\xfe",
        "a/\xc3", /* truncated UTF-8 */
        "\xc0\xaf", /* overlong '/' */
    };
    // clang-format on
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (objkey_valid(bad[i], strlen(bad[i]))) fail_msg("accepted key #%zu", i);
    char nul[] = {'a', '\0', 'b'};
    assert_false(objkey_valid(nul, 3));
    char longseg[300];
    memset(longseg, 'x', sizeof longseg - 1);
    longseg[sizeof longseg - 1] = '\0';
    assert_false(objkey_valid(longseg, strlen(longseg)));
    char *huge = malloc(OBJKEY_MAX + 2);
    for (int i = 0; i <= OBJKEY_MAX; i++)
        huge[i] = (i % 100 == 99) ? '/' : 'a';
    huge[OBJKEY_MAX + 1] = '\0';
    assert_false(objkey_valid(huge, OBJKEY_MAX + 1));
    free(huge);
}

static void url_encoding_keeps_slashes_and_unreserved_only(void **state)
{
    (void)state;
    char *e = objkey_url_encode("u/c/a b+#?%-1.Jpg~_");
    assert_string_equal(e, "u/c/a%20b%2B%23%3F%25-1.Jpg~_");
    free(e);
    e = objkey_url_encode("ñ");
    assert_string_equal(e, "%C3%B1");
    free(e);
}

struct ext_case {
    const char *filename;
    const char *ext;
};

static void extension_is_the_lowercased_text_after_the_last_dot_or_jpg(void **state)
{
    (void)state;
    static const struct ext_case cases[] = {
        {"foto.png", "png"}, {"FOTO.PNG", "png"}, {"a.b.WebP", "webp"}, {"photo", "jpg"},
        {"a.", "jpg"},       {"", "jpg"},         {NULL, "jpg"},        {".bashrc", "bashrc"},
        {"../../x", "/x"},   {"a./../b", "/b"},   {"x.JPEG ", "jpeg "}, {"archivo.tar.GZ", "gz"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *e = photo_ext(cases[i].filename);
        if (strcmp(e, cases[i].ext) != 0)
            fail_msg("%s -> %s, expected %s", cases[i].filename ? cases[i].filename : "(null)", e,
                     cases[i].ext);
        free(e);
    }
}

static void photo_key_has_the_specified_shape(void **state)
{
    (void)state;
    char *k = photo_key("u1", "c1", "antes", 1780000000123LL, "png");
    assert_string_equal(k, "u1/c1/antes-1780000000123.png");
    free(k);
    char *u = photo_public_url("http://h:1", "u1/c1/antes 1.png");
    assert_string_equal(u, "http://h:1/storage/v1/object/public/fotos-citas/u1/c1/antes%201.png");
    free(u);
}

static int init(void **state)
{
    (void)state;
    return sodium_init() < 0 ? -1 : 0;
}

#define ID "0f8fad5b-d9cb-469f-a165-70867728950e"

static void path_ids_are_uuids_in_one_segment_between_prefix_and_suffix(void **state)
{
    (void)state;
    // clang-format off
    static const struct {
        const char *path, *prefix, *suffix;
        enum api_path want;
    } cases[] = {
        {"/a/" ID,                         "/a/", "",         API_PATH_ID},
        {"/a/" ID "/horario",              "/a/", "/horario", API_PATH_ID},
        {"/a/0F8FAD5B-D9CB-469F-A165-70867728950E", "/a/", "", API_PATH_ID},
        /* one segment, not a UUID: the thing is not found */
        {"/a/nada",                        "/a/", "",         API_PATH_NOT_UUID},
        {"/a/nada/horario",                "/a/", "/horario", API_PATH_NOT_UUID},
        {"/a/" ID "0",                     "/a/", "",         API_PATH_NOT_UUID},
        {"/a/0f8fad5bd9cb469fa16570867728950e", "/a/", "",    API_PATH_NOT_UUID},
        {"/a/{" ID "}",                    "/a/", "",         API_PATH_NOT_UUID},
        {"/a/ " ID,                        "/a/", "",         API_PATH_NOT_UUID},
        /* another shape: no such resource */
        {"/a/",                            "/a/", "",         API_PATH_OTHER},
        {"/a//horario",                    "/a/", "/horario", API_PATH_OTHER},
        {"/a/" ID "/",                     "/a/", "",         API_PATH_OTHER},
        {"/a/" ID "/horario/",             "/a/", "/horario", API_PATH_OTHER},
        {"/a/" ID "/horarios",             "/a/", "/horario", API_PATH_OTHER},
        {"/a/" ID "/x",                    "/a/", "",         API_PATH_OTHER},
        {"/a/x/" ID "/horario",            "/a/", "/horario", API_PATH_OTHER},
        {"/a/" ID,                         "/a/", "/horario", API_PATH_OTHER},
        {"/b/" ID,                         "/a/", "",         API_PATH_OTHER},
        {"/a",                             "/a/", "",         API_PATH_OTHER},
    };
    // clang-format on
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        br_id out = "";
        enum api_path got = api_path_id(cases[i].path, cases[i].prefix, cases[i].suffix, out);
        if (got != cases[i].want)
            fail_msg("%s (%s, %s): %d, want %d", cases[i].path, cases[i].prefix, cases[i].suffix,
                     (int)got, (int)cases[i].want);
        if (got == API_PATH_ID) assert_string_equal(out, ID);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(new_uuids_are_lowercase_canonical_v4_and_distinct),
        cmocka_unit_test(uuid_parse_normalises_case_and_refuses_other_shapes),
        cmocka_unit_test(path_ids_are_uuids_in_one_segment_between_prefix_and_suffix),
        cmocka_unit_test(object_keys_that_stay_inside_the_bucket_are_accepted),
        cmocka_unit_test(object_keys_that_could_escape_or_confuse_are_refused),
        cmocka_unit_test(url_encoding_keeps_slashes_and_unreserved_only),
        cmocka_unit_test(extension_is_the_lowercased_text_after_the_last_dot_or_jpg),
        cmocka_unit_test(photo_key_has_the_specified_shape),
    };
    return cmocka_run_group_tests(tests, init, NULL);
}
