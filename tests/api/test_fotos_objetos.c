/*
 * test_fotos_objetos.c - a photo's record and its stored object over HTTP:
 * the record's shape, the object key, the public URL and its headers, the
 * file on disk, "never overwrite", and GET and DELETE /api/fotos. What an
 * upload refuses is test_fotos_subida.c's.
 */
#define _GNU_SOURCE
#include "fotos_fixture.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* --- POST: the record, the key, the object ------------------------------------------------ */

static void created_photo_is_201_with_exactly_the_record_fields(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    int64_t t0 = clock_now_ms();
    struct resp r;
    upload(&B, cita, "antes", "corte.PNG", "image/png", img, len, &r);
    int64_t t1 = clock_now_ms();
    assert_int_equal(r.status, 201);
    expect_keys(r.json, "foto", NULL);
    json_t *f = json_object_get(r.json, "foto");
    expect_keys(f, "id", "cita_id", "cliente_id", "tipo", "url", "storage_path", "created_at",
                NULL);
    assert_true(is_lower_uuid(jstr(f, "id")));
    assert_string_equal(jstr(f, "cita_id"), cita);
    assert_string_equal(jstr(f, "cliente_id"), B.id);
    assert_string_equal(jstr(f, "tipo"), "antes");
    assert_true(is_timestamp(jstr(f, "created_at")));

    int64_t ms = 0;
    expect_storage_path(jstr(f, "storage_path"), B.id, cita, "antes", "png", &ms);
    /* the key's time is the upload's (a taken millisecond moves it a few ms on) */
    assert_true(ms >= t0 - 1000 && ms <= t1 + 1000);

    char url[1024];
    snprintf(url, sizeof url, "%s/storage/v1/object/public/fotos-citas/%s", F.s.base,
             jstr(f, "storage_path"));
    assert_string_equal(jstr(f, "url"), url);
    expect_header(&r, "Content-Type", "application/json; charset=utf-8");

    /* the listing holds the same record */
    json_t *l = list_fotos(&C, cita);
    assert_int_equal(json_array_size(l), 1);
    assert_true(json_equal(json_array_get(l, 0), f));
    json_decref(l);
    resp_free(&r);
    free(cita);
}

static void extension_is_the_lowercased_text_after_the_last_dot_or_jpg(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    static const struct {
        const char *name, *ext;
    } cases[] = {
        {"photo", "jpg"},
        {"a.", "jpg"},
        {"X.PNG", "png"},
        {"a.b.JpEg", "jpeg"},
        {"Foto Final.WebP", "webp"},
        {"archive.tar.GZ", "gz"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char tipo[16];
        snprintf(tipo, sizeof tipo, "t%zu", i); /* a tipo each: three per tipo */
        json_t *f = upload_ok(&A, cita, tipo, cases[i].name, "image/jpeg", img, len);
        expect_storage_path(jstr(f, "storage_path"), A.id, cita, tipo, cases[i].ext, NULL);
        json_decref(f);
    }
    free(cita);
}

static void photo_url_serves_the_exact_bytes_with_safe_headers(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    json_t *f = upload_ok(&A, cita, "despues", "x.webp", "image/webp", img, len);
    struct resp r;
    http_get(&F.s, url_path(jstr(f, "url")), NULL, &r); /* no session needed */
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, len);
    assert_memory_equal(r.body, img, len);
    char h[256];
    expect_header(&r, "Content-Type", "image/webp");
    expect_header(&r, "X-Content-Type-Options", "nosniff");
    assert_non_null(resp_header(&r, "Content-Security-Policy", h, sizeof h));
    assert_non_null(strstr(h, "default-src 'none'"));
    assert_non_null(resp_header(&r, "Cache-Control", h, sizeof h));
    const char *ma = strstr(h, "max-age=");
    assert_non_null(ma);
    assert_true(strtol(ma + 8, NULL, 10) >= 30L * 24 * 3600);
    assert_null(strstr(h, "no-store"));
    assert_null(strstr(h, "no-cache"));
    resp_free(&r);
    json_decref(f);
    free(cita);
}

static void head_on_a_photo_url_answers_headers_without_body(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    json_t *f = upload_ok(&A, cita, "antes", "x.gif", "image/gif", img, len);
    struct resp r;
    http_req(&F.s, "HEAD", url_path(jstr(f, "url")), NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    char h[256];
    expect_header(&r, "Content-Type", "image/gif");
    assert_non_null(resp_header(&r, "Content-Length", h, sizeof h));
    assert_int_equal(strtol(h, NULL, 10), (long)len);
    expect_header(&r, "X-Content-Type-Options", "nosniff");
    resp_free(&r);
    json_decref(f);
    free(cita);
}

/* A photo URL serves the type given, as an attachment or not, with
 * nosniff and a sandboxing Content-Security-Policy - to GET and HEAD. */
static void expect_served(const char *url, const char *type, bool attachment)
{
    static const char *const methods[] = {"GET", "HEAD"};
    for (size_t i = 0; i < 2; i++) {
        struct resp r;
        http_req(&F.s, methods[i], url_path(url), NULL, &r);
        assert_int_equal(r.status, 200);
        char h[256];
        if (!resp_header(&r, "Content-Type", h, sizeof h) || strcmp(h, type) != 0)
            fail_msg("%s served as \"%s\", expected %s", url,
                     resp_header(&r, "Content-Type", h, sizeof h) ? h : "(none)", type);
        if (attachment)
            expect_header(&r, "Content-Disposition", "attachment");
        else if (resp_header(&r, "Content-Disposition", h, sizeof h))
            fail_msg("%s (%s) served with Content-Disposition: %s", url, type, h);
        expect_header(&r, "X-Content-Type-Options", "nosniff");
        assert_non_null(resp_header(&r, "Content-Security-Policy", h, sizeof h));
        assert_non_null(strstr(h, "default-src 'none'"));
        assert_non_null(strstr(h, "sandbox"));
        resp_free(&r);
    }
}

static void a_declared_type_that_is_not_one_image_type_is_served_as_octet_stream(void **state)
{
    (void)state;
    char *cita = new_cita(&B);
    size_t len;
    const char *img = pixels(&len);
    /* each starts with image/, so the specification accepts the upload; the
     * declared text never reaches a browser */
    static const char *const declared[] = {
        "image/png,text/javascript",
        "image/gif;a=b,text/html",
        "image/png, text/html",
        "image/",
        "image/png; a",
        "image/svg+xml;a=\"b\",text/html",
    };
    for (size_t i = 0; i < sizeof declared / sizeof declared[0]; i++) {
        json_t *f =
            upload_ok(&B, cita, i % 2 ? "antes" : "despues", "x.png", declared[i], img, len);
        expect_served(jstr(f, "url"), "application/octet-stream", true);
        json_decref(f);
    }
    free(cita);
}

static void a_well_formed_image_type_is_served_canonical(void **state)
{
    (void)state;
    char *cita = new_cita(&B);
    size_t len;
    const char *img = pixels(&len);
    static const struct {
        const char *declared, *served;
        bool attachment;
    } cases[] = {
        {"IMAGE/PNG; charset=x", "image/png", false},   {"image/heic", "image/heic", false},
        {"Image/JPEG ;q=\"1,2\"", "image/jpeg", false}, {"image/svg+xml", "image/svg+xml", true},
        {"image/x-made-up", "image/x-made-up", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *f =
            upload_ok(&B, cita, i % 2 ? "antes" : "despues", "x.img", cases[i].declared, img, len);
        expect_served(jstr(f, "url"), cases[i].served, cases[i].attachment);
        json_decref(f);
    }
    free(cita);
}

static void an_object_stored_earlier_with_the_declared_text_is_served_safely(void **state)
{
    (void)state;
    char *cita = new_cita(&C);
    size_t len;
    const char *img = pixels(&len);
    /* what an older version stored: the declared text as it came */
    static const struct {
        const char *stored, *served;
        bool attachment;
    } cases[] = {
        {"image/png,text/javascript", "application/octet-stream", true},
        {"image/gif;a=b,text/html", "application/octet-stream", true},
        {"IMAGE/SVG+XML; a=b", "image/svg+xml", true},
        {"Image/Png; q=1", "image/png", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *f =
            upload_ok(&C, cita, i % 2 ? "antes" : "despues", "x.png", "image/png", img, len);
        obj_set_raw_type(&F.s, jstr(f, "storage_path"), cases[i].stored);
        expect_served(jstr(f, "url"), cases[i].served, cases[i].attachment);
        json_decref(f);
    }
    free(cita);
}

static void missing_object_is_404_no_encontrado(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    static const char *const paths[] = {
        "/storage/v1/object/public/fotos-citas/nobody/nothing/antes-1.png",
        "/storage/v1/object/public/fotos-citas/",
        "/storage/v1/object/public/fotos-citas",
        "/storage/v1/object/public/otro-bucket/a/b.png",
        "/storage/v1/object/public/",
    };
    struct resp r;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        http_get(&F.s, paths[i], NULL, &r);
        expect_error(&r, 404, "No encontrado");
        resp_free(&r);
    }
    /* a folder of the bucket is not an object */
    size_t len;
    const char *img = pixels(&len);
    json_t *f = upload_ok(&A, cita, "antes", "a.png", "image/png", img, len);
    char path[512];
    snprintf(path, sizeof path, "/storage/v1/object/public/fotos-citas/%s/%s", A.id, cita);
    http_get(&F.s, path, NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    json_decref(f);
    free(cita);
}

static void uploaded_file_is_on_disk_under_the_bucket_folder(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    json_t *f = upload_ok(&C, cita, "antes", "disk.jpeg", "image/jpeg", img, len);
    size_t got = 0;
    char *stored = obj_read(&F.s, jstr(f, "storage_path"), &got);
    if (!stored) fail_msg("no object at %s", jstr(f, "storage_path"));
    assert_int_equal(got, len);
    assert_memory_equal(stored, img, len);
    free(stored);
    assert_int_equal(cita_objects(C.id, cita), 1);
    json_decref(f);
    free(cita);
}

static void an_existing_object_is_never_overwritten(void **state)
{
    (void)state;
    /* thousands of planted files: the folder store's; on S3 the same rule is
     * test_fotos_s3's and test_objstore_s3's */
    if (F.s.s3) skip();
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    /* make the bucket, then take every key A's next "antes" upload could use:
     * the server tries the 20 milliseconds from its clock's, so the planted
     * run reaches LEAD ms past now when the upload is sent (planted in
     * rounds: a slow machine plants for longer, never too short a run) */
    json_decref(upload_ok(&A, cita, "despues", "z.png", "image/png", img, len));
    char dir[512];
    snprintf(dir, sizeof dir, "%s/storage/fotos-citas/%s/%s", F.s.data, A.id, cita);
    enum { LEAD = 8000, ROUNDS = 20 };
    int64_t t0 = clock_now_ms() - 50, end = t0;
    for (int round = 0; end < clock_now_ms() + LEAD / 2; round++) {
        if (round == ROUNDS) fail_msg("planting fell behind the clock for %d rounds", ROUNDS);
        for (int64_t stop = clock_now_ms() + LEAD; end < stop; end++) {
            char path[640], text[64];
            snprintf(path, sizeof path, "%s/antes-%lld.png", dir, (long long)end);
            int n = snprintf(text, sizeof text, "planted-%lld", (long long)end);
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
            if (fd < 0) fail_msg("cannot plant %s: %s", path, strerror(errno));
            if (write(fd, text, (size_t)n) != n) fail_msg("cannot write %s", path);
            close(fd);
        }
    }
    struct resp r;
    upload(&A, cita, "antes", "a.png", "image/png", img, len, &r);
    expect_error(&r, 500, "Error al subir imagen: el objeto ya existe");
    resp_free(&r);
    /* every planted object is untouched, none was added, no record exists */
    assert_int_equal(count_files(dir), end - t0 + 1);
    for (int64_t ms = t0; ms < end; ms++) {
        char path[640], text[64];
        snprintf(path, sizeof path, "%s/antes-%lld.png", dir, (long long)ms);
        snprintf(text, sizeof text, "planted-%lld", (long long)ms);
        char *got = read_file(path, NULL);
        if (!got || strcmp(got, text) != 0) fail_msg("object %s was overwritten", path);
        free(got);
    }
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s' AND tipo = 'antes'",
                 cita),
        0);
    no_scratch_left();
    free(cita);
}

static void two_quick_uploads_get_distinct_paths(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    json_t *f1 = upload_ok(&A, cita, "antes", "a.png", "image/png", "first", 5);
    json_t *f2 = upload_ok(&A, cita, "antes", "a.png", "image/png", "second", 6);
    assert_string_not_equal(jstr(f1, "storage_path"), jstr(f2, "storage_path"));
    assert_string_not_equal(jstr(f1, "id"), jstr(f2, "id"));
    struct resp r;
    http_get(&F.s, url_path(jstr(f1, "url")), NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "first");
    resp_free(&r);
    http_get(&F.s, url_path(jstr(f2, "url")), NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "second");
    resp_free(&r);
    json_decref(f1);
    json_decref(f2);
    free(cita);
}

/* --- GET ------------------------------------------------------------------------------------- */

static void get_fotos_without_session_is_401(void **state)
{
    (void)state;
    struct resp r;
    http_get(&F.s, "/api/fotos?cita_id=" NO_SUCH_UUID, NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    http_get(&F.s, "/api/fotos?cita_id=" NO_SUCH_UUID, "bad-token", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
}

static void get_fotos_without_cita_id_is_400(void **state)
{
    (void)state;
    struct resp r;
    /* a parameter's name is matched exactly: CITA_ID is not cita_id */
    static const char *const paths[] = {"/api/fotos",
                                        "/api/fotos?cita_id=",
                                        "/api/fotos?cita_id",
                                        "/api/fotos?id=" NO_SUCH_UUID,
                                        "/api/fotos?CITA_ID=" NO_SUCH_UUID,
                                        "/api/fotos?Cita_Id=" NO_SUCH_UUID};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        http_get(&F.s, paths[i], A.token, &r);
        expect_error(&r, 400, "Falta cita_id");
        resp_free(&r);
    }
}

static void any_user_lists_any_citas_photos_oldest_first(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    json_t *up[3];
    up[0] = upload_ok(&A, cita, "antes", "1.png", "image/png", "uno", 3);
    up[1] = upload_ok(&B, cita, "despues", "2.png", "image/png", "dos", 3);
    up[2] = upload_ok(&A, cita, "despues", "3.png", "image/png", "tres", 4);
    /* C neither owns the cita nor uploaded anything to it */
    json_t *l = list_fotos(&C, cita);
    assert_int_equal(json_array_size(l), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *e = json_array_get(l, i);
        expect_keys(e, "id", "cita_id", "cliente_id", "tipo", "url", "storage_path", "created_at",
                    NULL);
        if (i > 0) {
            const char *prev = jstr(json_array_get(l, i - 1), "created_at");
            assert_true(strcmp(prev, jstr(e, "created_at")) <= 0);
        }
    }
    /* where their times differ, the order is the upload order */
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = i + 1; j < 3; j++) {
            if (!strcmp(jstr(up[i], "created_at"), jstr(up[j], "created_at"))) continue;
            size_t pi = 9, pj = 9;
            for (size_t k = 0; k < 3; k++) {
                const char *id = jstr(json_array_get(l, k), "id");
                if (!strcmp(id, jstr(up[i], "id"))) pi = k;
                if (!strcmp(id, jstr(up[j], "id"))) pj = k;
            }
            assert_true(pi < 3 && pj < 3 && pi < pj);
        }
    }
    for (size_t k = 0; k < 3; k++) {
        bool found = false;
        for (size_t i = 0; i < 3; i++)
            found |= json_equal(json_array_get(l, k), up[i]);
        if (!found) {
            char *a = json_dumps(l, JSON_COMPACT);
            fprintf(stderr, "listed: %s\n", a);
            free(a);
            for (size_t i = 0; i < 3; i++) {
                a = json_dumps(up[i], JSON_COMPACT);
                fprintf(stderr, "uploaded: %s\n", a);
                free(a);
            }
            fail_msg("listed photo %zu is not one of the uploads", k);
        }
    }
    for (size_t k = 0; k < 3; k++)
        json_decref(up[k]);
    json_decref(l);
    free(cita);
}

static void listing_an_unknown_cita_is_200_with_an_empty_list(void **state)
{
    (void)state;
    struct resp r;
    static const char *const paths[] = {"/api/fotos?cita_id=" NO_SUCH_UUID,
                                        "/api/fotos?cita_id=not-a-uuid",
                                        "/api/fotos?cita_id=%27%20OR%201%3D1%20--"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        http_get(&F.s, paths[i], A.token, &r);
        assert_int_equal(r.status, 200);
        expect_keys(r.json, "fotos", NULL);
        assert_true(json_is_array(json_object_get(r.json, "fotos")));
        assert_int_equal(json_array_size(json_object_get(r.json, "fotos")), 0);
        resp_free(&r);
    }
}

/* --- DELETE ------------------------------------------------------------------------------------
 */

static void delete_without_session_is_401(void **state)
{
    (void)state;
    struct resp r;
    delete_foto(NULL, "?id=" NO_SUCH_UUID, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
}

static void delete_without_id_is_400(void **state)
{
    (void)state;
    struct resp r;
    static const char *const q[] = {"", "?id=", "?id", "?cita_id=" NO_SUCH_UUID,
                                    "?ID=" NO_SUCH_UUID};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        delete_foto(&A, q[i], &r);
        expect_error(&r, 400, "Falta id");
        resp_free(&r);
    }
}

static void delete_of_unknown_or_foreign_photo_is_404_and_the_photo_stays(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    json_t *f = upload_ok(&A, cita, "antes", "mine.png", "image/png", img, len);
    struct resp r;
    delete_foto(&A, "?id=" NO_SUCH_UUID, &r);
    expect_error(&r, 404, "Foto no encontrada");
    resp_free(&r);
    delete_foto(&A, "?id=not-a-uuid", &r);
    expect_error(&r, 404, "Foto no encontrada");
    resp_free(&r);

    /* B may see A's photo, not delete it */
    char q[128];
    snprintf(q, sizeof q, "?id=%s", jstr(f, "id"));
    delete_foto(&B, q, &r);
    expect_error(&r, 404, "Foto no encontrada");
    resp_free(&r);
    json_t *l = list_fotos(&B, cita);
    assert_int_equal(json_array_size(l), 1);
    json_decref(l);
    assert_true(obj_exists(&F.s, jstr(f, "storage_path")));
    http_get(&F.s, url_path(jstr(f, "url")), NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    json_decref(f);
    free(cita);
}

static void owner_delete_removes_the_record_the_object_and_its_url(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    /* B uploads to A's cita; the photo is B's to delete */
    json_t *f = upload_ok(&B, cita, "antes", "del.png", "image/png", img, len);
    json_t *keep = upload_ok(&A, cita, "antes", "keep.png", "image/png", img, len);
    assert_true(obj_exists(&F.s, jstr(f, "storage_path")));

    char q[128];
    snprintf(q, sizeof q, "?id=%s", jstr(f, "id"));
    struct resp r;
    delete_foto(&B, q, &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "ok", NULL);
    assert_true(json_is_true(json_object_get(r.json, "ok")));
    resp_free(&r);

    json_t *l = list_fotos(&A, cita);
    assert_int_equal(json_array_size(l), 1);
    assert_string_equal(jstr(json_array_get(l, 0), "id"), jstr(keep, "id"));
    json_decref(l);
    assert_false(obj_exists(&F.s, jstr(f, "storage_path")));
    if (!F.s.s3) { /* the folder store's metadata goes with the object */
        char meta[768];
        snprintf(meta, sizeof meta, "%s/storage/.meta/fotos-citas/%s", F.s.data,
                 jstr(f, "storage_path"));
        assert_false(file_exists(meta));
    }
    http_get(&F.s, url_path(jstr(f, "url")), NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    /* a second delete finds nothing */
    delete_foto(&B, q, &r);
    expect_error(&r, 404, "Foto no encontrada");
    resp_free(&r);
    json_decref(f);
    json_decref(keep);
    free(cita);
}

/* tipo is not checked (the specification), so a "/" in it makes folders in
 * the folder store: the delete that empties them removes them, and an
 * upload and a delete in a loop leave nothing on disk. */
static void a_deleted_photo_leaves_no_folder_behind(void **state)
{
    (void)state;
    char *cita = new_cita(&C);
    size_t len;
    const char *img = pixels(&len);
    char tipo[256] = "c";
    for (int i = 0; i < 40; i++)
        memcpy(tipo + 1 + 2 * i, "/d", 3); /* "c/d/d/...": 40 folders deep */
    for (int round = 0; round < 3; round++) {
        json_t *f = upload_ok(&C, cita, tipo, "f.png", "image/png", img, len);
        char q[128];
        snprintf(q, sizeof q, "?id=%s", jstr(f, "id"));
        struct resp r;
        delete_foto(&C, q, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
        assert_false(obj_exists(&F.s, jstr(f, "storage_path")));
        json_decref(f);
    }
    if (!F.s.s3) { /* S3 has no folders */
        const char *roots[] = {"", ".meta/"};
        for (size_t i = 0; i < 2; i++) {
            char dir[512];
            snprintf(dir, sizeof dir, "%s/storage/%sfotos-citas/%s/%s", F.s.data, roots[i], C.id,
                     cita);
            if (file_exists(dir)) fail_msg("%s is left behind", dir);
            snprintf(dir, sizeof dir, "%s/storage/%sfotos-citas", F.s.data, roots[i]);
            assert_true(file_exists(dir)); /* the bucket's own folder stays */
        }
    }
    free(cita);
}

/* A symbolic link planted anywhere in the folder store (by hand, or brought
 * by a crafted backup) is never followed: no read serves the file it
 * points at, no upload writes through it, no delete removes what is behind
 * it. */
static void a_link_planted_in_the_folder_store_is_never_followed(void **state)
{
    (void)state;
    if (F.s.s3) skip(); /* S3 has no links */
    char out[512], path[1024], link[1024];
    snprintf(out, sizeof out, "%s/outside", F.s.dir);
    assert_int_equal(mkdir(out, 0755), 0);
    snprintf(path, sizeof path, "%s/secret.txt", out);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("secreto\n", fp);
    fclose(fp);
    size_t len;
    const char *img = pixels(&len);

    /* read: a link in the middle of a key */
    snprintf(link, sizeof link, "%s/storage/fotos-citas/planted", F.s.data);
    assert_int_equal(symlink(out, link), 0);
    struct resp r;
    http_get(&F.s, "/storage/v1/object/public/fotos-citas/planted/secret.txt", NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    assert_int_equal(unlink(link), 0);

    /* write: a link where the upload's key needs a folder */
    char *cita = new_cita(&C);
    snprintf(link, sizeof link, "%s/storage/fotos-citas/%s/%s", F.s.data, C.id, cita);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && ln -s '%s' '%s/w'", link, out, link);
    assert_int_equal(system(cmd), 0);
    upload(&C, cita, "w/z", "f.png", "image/png", img, len, &r);
    assert_int_not_equal(r.status, 201);
    resp_free(&r);
    assert_int_equal(count_files(out), 1); /* nothing written through the link */
    snprintf(cmd, sizeof cmd, "rm -r '%s'", link);
    assert_int_equal(system(cmd), 0);

    /* delete: the photo's folder swapped for a link to a folder that holds
     * a file of the same name */
    json_t *f = upload_ok(&C, cita, "v/z", "f.png", "image/png", img, len);
    snprintf(link, sizeof link, "%s/storage/fotos-citas/%s/%s/v", F.s.data, C.id, cita);
    snprintf(cmd, sizeof cmd, "mv '%s' '%s/v' && ln -s '%s/v' '%s'", link, out, out, link);
    assert_int_equal(system(cmd), 0);
    http_get(&F.s, url_path(jstr(f, "url")), NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    char q[128];
    snprintf(q, sizeof q, "?id=%s", jstr(f, "id"));
    delete_foto(&C, q, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    const char *leaf = strrchr(jstr(f, "storage_path"), '/');
    snprintf(path, sizeof path, "%s/v%s", out, leaf);
    assert_true(file_exists(path)); /* the file behind the link stays */

    snprintf(cmd, sizeof cmd, "rm -r '%s/storage/fotos-citas/%s/%s' '%s'", F.s.data, C.id, cita,
             out);
    assert_int_equal(system(cmd), 0);
    json_decref(f);
    free(cita);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(created_photo_is_201_with_exactly_the_record_fields),
        cmocka_unit_test(extension_is_the_lowercased_text_after_the_last_dot_or_jpg),
        cmocka_unit_test(photo_url_serves_the_exact_bytes_with_safe_headers),
        cmocka_unit_test(head_on_a_photo_url_answers_headers_without_body),
        cmocka_unit_test(a_declared_type_that_is_not_one_image_type_is_served_as_octet_stream),
        cmocka_unit_test(a_well_formed_image_type_is_served_canonical),
        cmocka_unit_test(an_object_stored_earlier_with_the_declared_text_is_served_safely),
        cmocka_unit_test(missing_object_is_404_no_encontrado),
        cmocka_unit_test(uploaded_file_is_on_disk_under_the_bucket_folder),
        cmocka_unit_test(an_existing_object_is_never_overwritten),
        cmocka_unit_test(two_quick_uploads_get_distinct_paths),
        cmocka_unit_test(get_fotos_without_session_is_401),
        cmocka_unit_test(get_fotos_without_cita_id_is_400),
        cmocka_unit_test(any_user_lists_any_citas_photos_oldest_first),
        cmocka_unit_test(listing_an_unknown_cita_is_200_with_an_empty_list),
        cmocka_unit_test(delete_without_session_is_401),
        cmocka_unit_test(delete_without_id_is_400),
        cmocka_unit_test(delete_of_unknown_or_foreign_photo_is_404_and_the_photo_stays),
        cmocka_unit_test(owner_delete_removes_the_record_the_object_and_its_url),
        cmocka_unit_test(a_deleted_photo_leaves_no_folder_behind),
        cmocka_unit_test(a_link_planted_in_the_folder_store_is_never_followed),
    };
    return cmocka_run_group_tests(tests, fotos_group_setup, fotos_group_teardown);
}
