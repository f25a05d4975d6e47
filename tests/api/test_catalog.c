/*
 * test_catalog.c - the public catalog (GET /api/barberos, /api/servicios) is
 * cacheable: each answer carries an ETag (a digest of its body) and
 * Cache-Control: no-cache; an If-None-Match that names the current tag gets
 * 304 with no body, and any change to the catalog changes the tag at once.
 * Both are ordered by nombre byte by byte on either database, whatever the
 * locale the PostgreSQL database was made with.
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static struct srv S;

static int setup(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    free(make_barbero(&S, "Barbero Etag"));
    free(make_servicio(&S, "Corte Etag", 30, 12.5));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    return 0;
}

/* GET path with If-None-Match: inm (NULL: none). */
static void get_if(const char *path, const char *inm, struct resp *r)
{
    char hdr[256];
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", inm ? inm : "");
    const char *headers[] = {hdr, NULL};
    struct req_opts o = {.headers = inm ? headers : NULL};
    http_req(&S, "GET", path, &o, r);
}

static void check_revalidation(const char *path, const char *key)
{
    struct resp r;
    get_if(path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_array(json_object_get(r.json, key)));
    expect_header(&r, "Cache-Control", "no-cache");
    expect_header(&r, "Content-Type", "application/json; charset=utf-8");
    char etag[128];
    assert_non_null(resp_header(&r, "ETag", etag, sizeof etag));
    assert_true(strlen(etag) > 2 && etag[0] == '"' && etag[strlen(etag) - 1] == '"');
    char *body = strdup(r.body);
    resp_free(&r);

    /* the same tag again, in every form a client may send it */
    char weak[160], list[300];
    snprintf(weak, sizeof weak, "W/%s", etag);
    snprintf(list, sizeof list, "\"otro\", %s", etag);
    const char *same[] = {etag, weak, list, "*"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        get_if(path, same[i], &r);
        if (r.status != 304) fail_msg("%s with If-None-Match %s: %ld", path, same[i], r.status);
        assert_int_equal(r.len, 0);
        expect_header(&r, "ETag", etag);
        resp_free(&r);
    }
    /* another tag: the whole answer, unchanged */
    get_if(path, "\"00000000000000000000000000000000\"", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, body);
    expect_header(&r, "ETag", etag);
    resp_free(&r);
    free(body);
}

static void the_catalog_is_revalidated_by_etag(void **state)
{
    (void)state;
    check_revalidation("/api/barberos", "barberos");
    check_revalidation("/api/servicios", "servicios");
}

static void a_change_to_the_catalog_changes_its_tag(void **state)
{
    (void)state;
    struct resp r;
    get_if("/api/servicios", NULL, &r);
    char etag[128];
    assert_non_null(resp_header(&r, "ETag", etag, sizeof etag));
    resp_free(&r);
    /* the CLI is another process: the server has no event to learn from */
    free(make_servicio(&S, "Barba Etag", 15, 8));
    get_if("/api/servicios", etag, &r);
    assert_int_equal(r.status, 200);
    char now[128];
    assert_non_null(resp_header(&r, "ETag", now, sizeof now));
    assert_string_not_equal(now, etag);
    assert_int_equal(json_array_size(json_object_get(r.json, "servicios")), 2);
    resp_free(&r);
}

static void other_answers_are_never_stored(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Cliente Etag");
    struct resp r;
    http_get(&S, "/api/citas", u.token, &r);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Cache-Control", "no-store");
    char etag[128];
    assert_null(resp_header(&r, "ETag", etag, sizeof etag));
    resp_free(&r);
}

/* The names of `key` in the listing at path, in order, one line each
 * (caller frees). */
static char *names_at(const struct srv *s, const char *path, const char *token, const char *key)
{
    struct resp r;
    http_get(s, path, token, &r);
    assert_int_equal(r.status, 200);
    char *out = calloc(1, 1024);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r.json, key), i, e)
    {
        strncat(out, jstr(e, "nombre"), 1000 - strlen(out));
        strncat(out, "\n", 1000 - strlen(out));
    }
    resp_free(&r);
    return out;
}

/* "Ordered by nombre" (the contract): by the names' bytes, UTF-8's code
 * point order, as SQLite compares text; on PostgreSQL too when the database
 * was made under a locale that orders otherwise (en-US, where "álvaro"
 * comes before "Zoe" and "bruno" before "Bruno"). */
static void the_catalog_is_ordered_by_the_names_bytes_whatever_the_locale(void **state)
{
    (void)state;
    struct srv T = {0};
    srv_init(&T);
    srv_pg_locale(&T, "en-US");
    srv_start(&T, NULL, NULL);
    static const char *const names[] = {"Zoe", "álvaro", "Bruno", "bruno", "Ana", "Ñandú", "ana"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        free(make_barbero(&T, names[i]));
        free(make_servicio(&T, names[i], 30, 10.0));
    }
    /* Ñ is U+00D1, á U+00E1: after every ASCII letter, Ñ first */
    static const char want[] = "Ana\nBruno\nZoe\nana\nbruno\nÑandú\nálvaro\n";
    struct user admin;
    make_user(&T, &admin, "Admin Orden", "admin");
    static const struct {
        const char *path, *key;
        bool admin;
    } lists[] = {
        {"/api/barberos", "barberos", false},
        {"/api/servicios", "servicios", false},
        {"/api/admin/barberos", "barberos", true},
        {"/api/admin/servicios", "servicios", true},
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        char *got = names_at(&T, lists[i].path, lists[i].admin ? admin.token : NULL, lists[i].key);
        if (strcmp(got, want) != 0) fail_msg("%s in this order:\n%s", lists[i].path, got);
        free(got);
    }
    srv_cleanup(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_catalog_is_revalidated_by_etag),
        cmocka_unit_test(a_change_to_the_catalog_changes_its_tag),
        cmocka_unit_test(other_answers_are_never_stored),
        cmocka_unit_test(the_catalog_is_ordered_by_the_names_bytes_whatever_the_locale),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
