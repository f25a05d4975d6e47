/*
 * test_mediatype.c - declared content types: the RFC 9110 media-type
 * parser, the canonical type a stored object carries, which types are
 * raster images served inline, and where a parameter's value is (a
 * multipart form's boundary).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/mediatype.h"

#define OCTETS MEDIATYPE_OCTET_STREAM

/* A declared text (with its length: it may hold a NUL) and what it
 * becomes: the parsed type ("" when refused) and the stored type. */
struct declared {
    const char *text;
    size_t len; /* 0: strlen(text) */
    const char *parsed;
    const char *stored;
};

static const struct declared CASES[] = {
    /* one well-formed type: its type/subtype, lowercased, without parameters */
    {"image/png", 0, "image/png", "image/png"},
    {"IMAGE/PNG", 0, "image/png", "image/png"},
    {"Image/Svg+XML", 0, "image/svg+xml", "image/svg+xml"},
    {"IMAGE/PNG; charset=x", 0, "image/png", "image/png"},
    {"image/jpeg;q=1;v=\"a b;c,d\\\"e\"", 0, "image/jpeg", "image/jpeg"},
    {"image/png \t; a=b ;c=d", 0, "image/png", "image/png"},
    {"image/png;", 0, "image/png", "image/png"},    /* an empty parameter (RFC 9110) */
    {"image/png; ;", 0, "image/png", "image/png"},  /* two of them */
    {"  image/gif  ", 0, "image/gif", "image/gif"}, /* the field's own whitespace */
    {"image/x-made.up+1", 0, "image/x-made.up+1", "image/x-made.up+1"},
    {"image/*", 0, "image/*", "image/*"},
    {"image/heic", 0, "image/heic", "image/heic"},
    {"image/png; a=\"\xc3\xb1\"", 0, "image/png", "image/png"}, /* obs-text when quoted */
    /* well-formed, but not an image: never stored as such */
    {"text/html", 0, "text/html", OCTETS},
    {"text/javascript; x=image/png", 0, "", OCTETS}, /* '/' is not a tchar */
    {"application/octet-stream", 0, "application/octet-stream", OCTETS},
    {"imagex/png", 0, "imagex/png", OCTETS},
    /* lists and stray characters */
    {"image/png,text/javascript", 0, "", OCTETS},
    {"image/png, text/javascript", 0, "", OCTETS},
    {"image/gif;a=b,text/html", 0, "", OCTETS},
    {"image/gif;a=\"b\",text/html", 0, "", OCTETS},
    {"image/gif; a=b text/html", 0, "", OCTETS},
    {"image/png text/html", 0, "", OCTETS},
    {"image/png\n", 0, "", OCTETS},
    {"image/png\r\ntext/html", 0, "", OCTETS},
    {"image/png\x01", 0, "", OCTETS},
    {"image/png\x7f", 0, "", OCTETS},
    {"image/p\xc3\xb1g", 0, "", OCTETS},
    {"image/png\0,text/html", 20, "", OCTETS}, /* a NUL inside */
    {"image/png/x", 0, "", OCTETS},
    {"image//png", 0, "", OCTETS},
    {"image /png", 0, "", OCTETS},
    {"image/ png", 0, "", OCTETS},
    {"(image)/png", 0, "", OCTETS},
    /* missing parts */
    {"", 0, "", OCTETS},
    {"   ", 0, "", OCTETS},
    {"image", 0, "", OCTETS},
    {"image/", 0, "", OCTETS},
    {"image/;a=b", 0, "", OCTETS},
    {"/png", 0, "", OCTETS},
    /* bad parameters */
    {"image/png; a", 0, "", OCTETS},
    {"image/png; a=", 0, "", OCTETS},
    {"image/png; =b", 0, "", OCTETS},
    {"image/png; a = b", 0, "", OCTETS},
    {"image/png; a=\"b", 0, "", OCTETS},     /* unterminated */
    {"image/png; a=\"b\\\"", 0, "", OCTETS}, /* its quote escaped */
    {"image/png; a=\"b\"c", 0, "", OCTETS},
    {"image/png; a=\"\x01\"", 0, "", OCTETS},
    {"image/png; a=b;c", 0, "", OCTETS},
    {"image/png; a=b c=d", 0, "", OCTETS},
    {"image/png; a=<b>", 0, "", OCTETS},
};

static void declared_types_parse_and_store_as_the_table_says(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const struct declared *c = &CASES[i];
        size_t n = c->len ? c->len : strlen(c->text);
        char out[MEDIATYPE_MAX + 1];
        bool ok = mediatype_parse(c->text, n, out);
        if (ok != (c->parsed[0] != '\0') || strcmp(out, c->parsed) != 0)
            fail_msg("parse of case %zu \"%s\": %s \"%s\", expected \"%s\"", i, c->text,
                     ok ? "accepted as" : "refused with", out, c->parsed);
        /* stored types are made from NUL-terminated text (up to a NUL) */
        if (c->len) continue;
        char stored[MEDIATYPE_MAX + 1];
        mediatype_stored(c->text, stored);
        if (strcmp(stored, c->stored) != 0)
            fail_msg("stored type of case %zu \"%s\": \"%s\", expected \"%s\"", i, c->text, stored,
                     c->stored);
        /* what is stored maps to itself when read back */
        char again[MEDIATYPE_MAX + 1];
        mediatype_stored(stored, again);
        assert_string_equal(again, stored);
    }
}

static void a_missing_type_is_stored_as_octet_stream(void **state)
{
    (void)state;
    char out[MEDIATYPE_MAX + 1];
    mediatype_stored(NULL, out);
    assert_string_equal(out, OCTETS);
    assert_false(mediatype_parse(NULL, 0, out));
    assert_string_equal(out, "");
}

static void types_longer_than_the_limit_are_refused(void **state)
{
    (void)state;
    char text[2 * MEDIATYPE_MAX], out[MEDIATYPE_MAX + 1];
    /* "image/" + subtype of exactly MEDIATYPE_MAX in all, then one more */
    memcpy(text, "image/", 6);
    memset(text + 6, 'a', MEDIATYPE_MAX - 6);
    assert_true(mediatype_parse(text, MEDIATYPE_MAX, out));
    assert_int_equal(strlen(out), MEDIATYPE_MAX);
    text[MEDIATYPE_MAX] = 'a';
    assert_false(mediatype_parse(text, MEDIATYPE_MAX + 1, out));
    /* long parameters do not count: they are dropped */
    memcpy(text, "image/png; a=", 13);
    memset(text + 13, 'b', sizeof text - 13);
    assert_true(mediatype_parse(text, sizeof text, out));
    assert_string_equal(out, "image/png");
}

static void only_raster_images_are_raster(void **state)
{
    (void)state;
    static const char *const raster[] = {
        "image/jpeg",          "image/pjpeg",  "image/jpg",
        "image/png",           "image/apng",   "image/x-png",
        "image/gif",           "image/webp",   "image/avif",
        "image/heic",          "image/heif",   "image/heic-sequence",
        "image/heif-sequence", "image/bmp",    "image/x-ms-bmp",
        "image/tiff",          "image/x-icon", "image/vnd.microsoft.icon",
    };
    for (size_t i = 0; i < sizeof raster / sizeof raster[0]; i++)
        if (!mediatype_raster(raster[i])) fail_msg("%s is not raster", raster[i]);
    static const char *const not_raster[] = {
        "image/svg+xml",
        "image/svg",
        "image/x-made-up",
        "image/*",
        OCTETS,
        "text/html",
        "text/javascript",
        "application/xml",
        "image/PNG", /* canonical types only */
        "image/png; a=b",
        "image/png,text/html",
        "",
        "image/pngx",
        "image/pn",
    };
    for (size_t i = 0; i < sizeof not_raster / sizeof not_raster[0]; i++)
        if (mediatype_raster(not_raster[i])) fail_msg("%s is raster", not_raster[i]);
    assert_false(mediatype_raster(NULL));
}

/* A field and the value its `boundary` parameter has there, as written
 * (NULL: none found). */
static const struct {
    const char *text, *value;
} PARAMS[] = {
    {"multipart/form-data; boundary=xyz", "xyz"},
    {"multipart/form-data; BOUNDARY=xyz", "xyz"}, /* names in any case (RFC 9110) */
    {"Multipart/Form-Data;Boundary=\"a b\"", "\"a b\""},
    {"multipart/form-data; boundary=xyz; charset=utf-8", "xyz"},
    {"multipart/form-data; charset=utf-8 ;\tbOuNdArY=x-1", "x-1"},
    {"multipart/form-data; a=\"boundary=no\"; boundary=yes", "yes"}, /* not inside a value */
    {"multipart/form-data; xboundary=no; boundary=yes", "yes"},
    {"multipart/form-data; boundary=first; boundary=second", "first"},
    {"multipart/form-data; boundary=\"\"", "\"\""},
    {"  multipart/form-data ; boundary=xyz  ", "xyz"},
    {"multipart/form-data", NULL},
    {"multipart/form-data; boundaryx=no", NULL},
    {"multipart/form-data; boundary=", NULL},      /* not a media type */
    {"multipart/form-data; boundary=a b", NULL},   /* nor this */
    {"multipart/form-data, boundary=xyz", NULL},   /* nor this */
    {"multipart/form-data; boundary=\"xyz", NULL}, /* unterminated */
};

static void a_parameter_is_found_in_any_case_and_nowhere_else(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof PARAMS / sizeof PARAMS[0]; i++) {
        const char *t = PARAMS[i].text;
        size_t at = 99, len = 99;
        bool ok = mediatype_param(t, strlen(t), "boundary", &at, &len);
        if (ok != (PARAMS[i].value != NULL))
            fail_msg("case %zu \"%s\": %s", i, t, ok ? "found" : "not found");
        if (ok && (len != strlen(PARAMS[i].value) || memcmp(t + at, PARAMS[i].value, len) != 0))
            fail_msg("case %zu \"%s\": found \"%.*s\", expected \"%s\"", i, t, (int)len, t + at,
                     PARAMS[i].value);
    }
    size_t at, len;
    assert_false(mediatype_param(NULL, 0, "boundary", &at, &len));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(declared_types_parse_and_store_as_the_table_says),
        cmocka_unit_test(a_missing_type_is_stored_as_octet_stream),
        cmocka_unit_test(types_longer_than_the_limit_are_refused),
        cmocka_unit_test(only_raster_images_are_raster),
        cmocka_unit_test(a_parameter_is_found_in_any_case_and_nowhere_else),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
