/*
 * test_fotos_subida.c - POST /api/fotos over HTTP, what it refuses and in
 * which order: the specification's processing order (which error wins),
 * the three-per-tipo rule, also under parallel uploads from many users, and
 * "nothing partial" when the record cannot be stored (a real SQLite trigger
 * forces it). The record and the object are test_fotos_objetos.c's.
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

/* --- POST: processing order ------------------------------------------------------------- */

static void post_without_session_is_401_whatever_the_body(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    struct resp r;

    upload(NULL, cita, "antes", "a.png", "image/png", img, len, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);

    struct user fake = {.token = "not-a-session-token"};
    upload(&fake, cita, "antes", "a.png", "image/png", img, len, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);

    /* a huge file: still 401 (not the size error) */
    size_t big = 12 * MIB;
    char *huge = malloc(big);
    memset(huge, 'x', big);
    upload(NULL, cita, "antes", "a.png", "image/png", huge, big, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    free(huge);

    /* a malformed body, and a body that is not a form at all */
    post_form(NULL, "--" BOUNDARY "\r\ngarbage", 0, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    http_json(&F.s, "POST", "/api/fotos", NULL, "{\"cita_id\":\"x\"}", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);

    /* nothing was stored */
    json_t *l = list_fotos(&A, cita);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    free(cita);
}

static void post_with_a_missing_or_empty_part_is_400_faltan_campos(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    struct resp r;

    upload(&A, cita, "antes", NULL, NULL, NULL, 0, &r); /* no file */
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    upload(&A, NULL, "antes", "a.png", "image/png", img, len, &r); /* no cita_id */
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    upload(&A, cita, NULL, "a.png", "image/png", img, len, &r); /* no tipo */
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    upload(&A, "", "antes", "a.png", "image/png", img, len, &r); /* empty cita_id */
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    upload(&A, cita, "", "a.png", "image/png", img, len, &r); /* empty tipo */
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);

    /* not multipart at all: JSON, plain text, no body */
    char json[256];
    snprintf(json, sizeof json, "{\"cita_id\":\"%s\",\"tipo\":\"antes\",\"file\":\"abc\"}", cita);
    http_json(&F.s, "POST", "/api/fotos", A.token, json, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    struct req_opts o = {.token = A.token, .content_type = "text/plain", .body = "hola"};
    http_req(&F.s, "POST", "/api/fotos", &o, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    http_json(&F.s, "POST", "/api/fotos", A.token, NULL, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);

    json_t *l = list_fotos(&A, cita);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    free(cita);
}

static void missing_part_wins_over_a_too_large_file(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t big = 6 * MIB;
    char *data = malloc(big);
    memset(data, 'z', big);
    struct resp r;
    upload(&A, cita, NULL, "a.png", "image/png", data, big, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    upload(&A, NULL, "antes", "a.png", "text/plain", data, big, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    free(data);
    free(cita);
}

static void file_over_5mib_is_400_and_exactly_5mib_is_accepted(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t max = 5 * MIB;
    char *data = malloc(max + 1);
    for (size_t i = 0; i <= max; i++)
        data[i] = (char)(i % 251);
    struct resp r;

    upload(&A, cita, "antes", "big.jpg", "image/jpeg", data, max + 1, &r);
    expect_error(&r, 400, "Máximo 5MB por imagen");
    resp_free(&r);
    json_t *l = list_fotos(&A, cita);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);

    json_t *f = upload_ok(&A, cita, "antes", "big.jpg", "image/jpeg", data, max);
    size_t got = 0;
    char *stored = obj_read(&F.s, jstr(f, "storage_path"), &got);
    assert_non_null(stored);
    assert_int_equal(got, max);
    assert_memory_equal(stored, data, max);
    free(stored);
    json_decref(f);
    free(data);
    free(cita);
}

static void too_large_wins_over_a_non_image_type(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t n = 5 * MIB + 1;
    char *data = malloc(n);
    memset(data, 't', n);
    struct resp r;
    upload(&A, cita, "antes", "notes.txt", "text/plain", data, n, &r);
    expect_error(&r, 400, "Máximo 5MB por imagen");
    resp_free(&r);
    /* and over an unknown cita */
    upload(&A, NO_SUCH_UUID, "antes", "a.png", "image/png", data, n, &r);
    expect_error(&r, 400, "Máximo 5MB por imagen");
    resp_free(&r);
    free(data);
    free(cita);
}

static void non_image_content_type_is_400(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    struct resp r;
    static const char *const bad[] = {
        "text/plain", "application/octet-stream", "image",
        "imagex/png", "text/html; x=image/png",   "application/image/png"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        upload(&A, cita, "antes", "a.png", bad[i], img, len, &r);
        expect_error(&r, 400, "Solo se permiten imágenes");
        resp_free(&r);
    }
    /* a file part without any Content-Type header */
    size_t blen;
    char *body = form_body(cita, "antes", "", "PNGDATA", &blen);
    post_form(&A, body, blen, &r);
    expect_error(&r, 400, "Solo se permiten imágenes");
    resp_free(&r);
    free(body);
    /* the type check wins over an unknown cita */
    upload(&A, NO_SUCH_UUID, "antes", "a.png", "text/plain", img, len, &r);
    expect_error(&r, 400, "Solo se permiten imágenes");
    resp_free(&r);

    json_t *l = list_fotos(&A, cita);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    free(cita);
}

static void image_content_type_is_matched_case_insensitively(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    json_t *f = upload_ok(&A, cita, "antes", "a.png", "IMAGE/PNG", img, len);
    json_decref(f);
    free(cita);
}

static void unknown_cita_is_404(void **state)
{
    (void)state;
    size_t len;
    const char *img = pixels(&len);
    struct resp r;
    static const char *const ids[] = {NO_SUCH_UUID, "not-a-uuid", "1", "' OR 1=1 --",
                                      "3F8E2A51-4B7C-4D2E-9A10-5C6B7D8E9F0"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        upload(&A, ids[i], "antes", "a.png", "image/png", img, len, &r);
        expect_error(&r, 404, "Cita no encontrada");
        resp_free(&r);
    }
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", NO_SUCH_UUID), 0);
}

static void unknown_cita_wins_over_the_three_per_tipo_rule(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    for (int i = 0; i < 3; i++)
        json_decref(upload_ok(&A, cita, "antes", "a.png", "image/png", img, len));
    /* the cita goes away behind the service's back; its three photos stay */
    char *out = NULL;
    char sql[256];
    /* (db_exec checks no foreign key on either backend, as the sqlite3 tool) */
    snprintf(sql, sizeof sql, "%sDELETE FROM citas WHERE id = '%s';",
             test_pg() ? "" : "PRAGMA foreign_keys=OFF; ", cita);
    assert_int_equal(db_exec(&F.s, sql, &out), 0);
    free(out);
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s' AND tipo = 'antes'",
                 cita),
        3);
    struct resp r;
    upload(&A, cita, "antes", "a.png", "image/png", img, len, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    free(cita);
}

static void any_user_may_upload_to_any_cita(void **state)
{
    (void)state;
    char *cita = new_cita(&A); /* A's cita */
    size_t len;
    const char *img = pixels(&len);
    json_t *f = upload_ok(&B, cita, "despues", "b.png", "image/png", img, len);
    assert_string_equal(jstr(f, "cliente_id"), B.id);
    assert_string_equal(jstr(f, "cita_id"), cita);
    json_decref(f);
    free(cita);
}

static void three_per_tipo_counts_every_uploader_of_the_cita(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    char *other = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    json_decref(upload_ok(&A, cita, "antes", "1.png", "image/png", img, len));
    json_decref(upload_ok(&B, cita, "antes", "2.png", "image/png", img, len));
    json_decref(upload_ok(&A, cita, "antes", "3.png", "image/png", img, len));

    /* a fourth, by a user who has uploaded nothing there yet */
    struct resp r;
    upload(&C, cita, "antes", "4.png", "image/png", img, len, &r);
    expect_error(&r, 400, "Máximo 3 fotos por tipo");
    resp_free(&r);
    upload(&A, cita, "antes", "4.png", "image/png", img, len, &r);
    expect_error(&r, 400, "Máximo 3 fotos por tipo");
    resp_free(&r);

    /* the other tipo and another cita are counted apart */
    json_decref(upload_ok(&C, cita, "despues", "5.png", "image/png", img, len));
    json_decref(upload_ok(&C, other, "antes", "6.png", "image/png", img, len));

    json_t *l = list_fotos(&A, cita);
    assert_int_equal(json_array_size(l), 4);
    json_decref(l);
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s' AND tipo = 'antes'",
                 cita),
        3);
    assert_int_equal(cita_objects(C.id, cita), 1); /* C's "despues" only */
    free(cita);
    free(other);
}

/* --- nothing partial -----------------------------------------------------------------------------
 */

static int drop_trigger(void **state)
{
    (void)state;
    return db_forced_failure(&F.s, "fotos_cita", false) == 0 ? 0 : -1;
}

static void failed_record_store_removes_the_object_and_answers_500(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    size_t len;
    const char *img = pixels(&len);
    assert_int_equal(db_forced_failure(&F.s, "fotos_cita", true), 0);

    struct resp r;
    upload(&A, cita, "antes", "a.png", "image/png", img, len, &r);
    expect_error(&r, 500, "fallo forzado");
    resp_free(&r);

    assert_int_equal(cita_objects(A.id, cita), 0);
    no_scratch_left();
    if (!F.s.s3) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/storage/.meta/fotos-citas/%s/%s", F.s.data, A.id, cita);
        assert_int_equal(count_files(dir), 0);
    }
    json_t *l = list_fotos(&A, cita);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);

    /* once the store works again, so does the upload */
    assert_int_equal(drop_trigger(NULL), 0);
    json_t *f = upload_ok(&A, cita, "antes", "a.png", "image/png", img, len);
    assert_int_equal(cita_objects(A.id, cita), 1);
    json_decref(f);
    free(cita);
}

/* The answer carries the store's message, as the specification wants, and
 * the log keeps it with the request it failed. */
static void a_failed_record_store_is_logged_with_its_request(void **state)
{
    (void)state;
    char *cita = new_cita(&B);
    size_t len;
    const char *img = pixels(&len);
    assert_int_equal(db_forced_failure(&F.s, "fotos_cita", true), 0);
    struct resp r;
    upload(&B, cita, "despues", "b.png", "image/png", img, len, &r);
    expect_error(&r, 500, "fallo forzado");
    resp_free(&r);
    assert_true(
        srv_wait_log(&F.s, "error http: POST /api/fotos answered 500: fallo forzado", 5000));
    free(cita);
}

/* --- concurrency
 * ------------------------------------------------------------------------------------ */

enum { RACERS = 12 };

struct racer {
    const char *token, *cita;
    long status;
    char body[512];
};

/* One upload from its own thread (race_threads: no cmocka here). */
static void racer_run(void *item)
{
    struct racer *x = item;
    const struct part parts[] = {
        {.name = "file", .data = "racing-bytes", .filename = "race.png", .type = "image/png"},
        {.name = "cita_id", .data = x->cita},
        {.name = "tipo", .data = "antes"},
    };
    struct resp r;
    long st = http_multipart_try(&F.s, "/api/fotos", x->token, parts, 3, &r);
    x->status = st ? st : -1;
    snprintf(x->body, sizeof x->body, "%s", r.body ? r.body : "");
    resp_free(&r);
}

static void parallel_uploads_from_many_users_never_exceed_three_per_tipo(void **state)
{
    (void)state;
    char *cita = new_cita(&A);
    static struct user users[RACERS];
    for (int i = 0; i < RACERS; i++)
        signup_user(&F.s, &users[i], NULL);
    struct racer x[RACERS];
    for (int i = 0; i < RACERS; i++)
        x[i] = (struct racer){.token = users[i].token, .cita = cita};
    race_threads(RACERS, racer_run, x, sizeof *x);

    int ok = 0, full = 0;
    for (int i = 0; i < RACERS; i++) {
        if (x[i].status == 201) {
            ok++;
        } else if (x[i].status == 400 &&
                   !strcmp(x[i].body, "{\"error\":\"Máximo 3 fotos por tipo\"}")) {
            full++;
        } else {
            fail_msg("racer %d: unexpected answer %ld %s", i, x[i].status, x[i].body);
        }
    }
    assert_int_equal(ok, 3);
    assert_int_equal(full, RACERS - 3);

    json_t *l = list_fotos(&A, cita);
    assert_int_equal(json_array_size(l), 3);
    /* exactly the listed objects exist: no orphan from a lost race */
    size_t files = 0;
    for (int i = 0; i < RACERS; i++)
        files += cita_objects(users[i].id, cita);
    assert_int_equal(files, 3);
    for (size_t i = 0; i < 3; i++)
        assert_true(obj_exists(&F.s, jstr(json_array_get(l, i), "storage_path")));
    no_scratch_left();
    json_decref(l);
    free(cita);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(post_without_session_is_401_whatever_the_body),
        cmocka_unit_test(post_with_a_missing_or_empty_part_is_400_faltan_campos),
        cmocka_unit_test(missing_part_wins_over_a_too_large_file),
        cmocka_unit_test(file_over_5mib_is_400_and_exactly_5mib_is_accepted),
        cmocka_unit_test(too_large_wins_over_a_non_image_type),
        cmocka_unit_test(non_image_content_type_is_400),
        cmocka_unit_test(image_content_type_is_matched_case_insensitively),
        cmocka_unit_test(unknown_cita_is_404),
        cmocka_unit_test(unknown_cita_wins_over_the_three_per_tipo_rule),
        cmocka_unit_test(any_user_may_upload_to_any_cita),
        cmocka_unit_test(three_per_tipo_counts_every_uploader_of_the_cita),
        cmocka_unit_test_teardown(failed_record_store_removes_the_object_and_answers_500,
                                  drop_trigger),
        cmocka_unit_test_teardown(a_failed_record_store_is_logged_with_its_request, drop_trigger),
        cmocka_unit_test(parallel_uploads_from_many_users_never_exceed_three_per_tipo),
    };
    return cmocka_run_group_tests(tests, fotos_group_setup, fotos_group_teardown);
}
