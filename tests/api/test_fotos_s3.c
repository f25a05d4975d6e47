/*
 * test_fotos_s3.c - the photo API over HTTP with `barberia serve` keeping
 * its objects in a real S3-compatible server (BARBERIA_STORAGE_URL; see
 * scripts/s3-server, which scripts/test starts and names in
 * BARBERIA_TEST_S3_URL): uploads land in the store and nowhere else, the
 * photo URL (the service's own, or the store's with
 * BARBERIA_STORAGE_PUBLIC_URL) serves the exact bytes, a delete removes the
 * object, the three-per-tipo rule holds, and an upload while the store is
 * down is the specification's 500 "Error al subir imagen: ..." with no
 * record left, within the configured bound; a store on https with a
 * private authority's certificate is trusted through
 * BARBERIA_STORAGE_CA_FILE, and only through it. Skipped without
 * BARBERIA_TEST_S3_URL.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S3_SERVER BARBERIA_TESTS_DIR "/../scripts/s3-server"

static struct fixture F; /* a server on the shared S3 store */
static struct user A, B;
static const char *S3_URL; /* NULL: every test is skipped */
static char ENV_URL[256], ENV_ACCESS[160], ENV_SECRET[160];

/* --- helpers ---------------------------------------------------------------------- */

/* The environment of a server on the store at url; more may follow (NULL
 * ends the list; at most 4). */
static void store_env(const char **env, const char *url, const char *more1, const char *more2)
{
    snprintf(ENV_URL, sizeof ENV_URL, "BARBERIA_STORAGE_URL=%s", url);
    const char *ak = getenv("BARBERIA_TEST_S3_ACCESS_KEY");
    const char *sk = getenv("BARBERIA_TEST_S3_SECRET_KEY");
    snprintf(ENV_ACCESS, sizeof ENV_ACCESS, "BARBERIA_STORAGE_ACCESS_KEY=%s",
             ak && *ak ? ak : "barberia-test");
    snprintf(ENV_SECRET, sizeof ENV_SECRET, "BARBERIA_STORAGE_SECRET_KEY=%s",
             sk && *sk ? sk : "barberia-test-secret");
    size_t n = 0;
    env[n++] = ENV_URL;
    env[n++] = ENV_ACCESS;
    env[n++] = ENV_SECRET;
    if (more1) env[n++] = more1;
    if (more2) env[n++] = more2;
    env[n] = NULL;
}

static char *new_cita(const struct fixture *f, const struct user *u)
{
    static int n;
    int k = n++;
    char when[64];
    snprintf(when, sizeof when, "2032-%02d-%02dT%02d:00:00Z", 1 + (k / 200) % 12, 1 + (k / 10) % 20,
             8 + k % 10);
    return book(&f->s, u, f->barbero, f->servicio, when, NULL);
}

/* A server of its own on the store at url, with one more setting (or
 * NULL), its barber and service "Barbero <what>" and "Corte <what>", and a
 * client u named client with one appointment: its id (caller frees). */
static char *own_server(struct fixture *f, const char *url, const char *setting, const char *what,
                        struct user *u, const char *client)
{
    const char *env[8];
    store_env(env, url, setting, NULL);
    char barbero[64], corte[64];
    snprintf(barbero, sizeof barbero, "Barbero %s", what);
    snprintf(corte, sizeof corte, "Corte %s", what);
    memset(f, 0, sizeof *f);
    fixture_start(f, env, barbero, corte, 30, 15.0);
    signup_user(&f->s, u, client);
    return new_cita(f, u);
}

static const char *pixels(size_t *len, unsigned seed)
{
    static char p[4096];
    for (size_t i = 0; i < sizeof p; i++)
        p[i] = (char)(i * 13 + seed);
    *len = sizeof p;
    return p;
}

/* An upload of data declared as type. */
static void upload_as(const struct fixture *f, const struct user *u, const char *cita,
                      const char *tipo, const char *type, const char *data, size_t len,
                      struct resp *r)
{
    struct part parts[] = {
        {"file", data, len, "foto.png", type},
        {"cita_id", cita, 0, NULL, NULL},
        {"tipo", tipo, 0, NULL, NULL},
    };
    http_multipart(&f->s, "/api/fotos", u->token, parts, 3, r);
}

static void upload(const struct fixture *f, const struct user *u, const char *cita,
                   const char *tipo, const char *data, size_t len, struct resp *r)
{
    upload_as(f, u, cita, tipo, "image/png", data, len, r);
}

static json_t *upload_as_ok(const struct fixture *f, const struct user *u, const char *cita,
                            const char *tipo, const char *type, const char *data, size_t len)
{
    struct resp r;
    upload_as(f, u, cita, tipo, type, data, len, &r);
    if (r.status != 201) fail_msg("upload as %s expected 201, got %ld: %s", type, r.status, r.body);
    json_t *foto = json_object_get(r.json, "foto");
    json_incref(foto);
    resp_free(&r);
    return foto;
}

static json_t *upload_ok(const struct fixture *f, const struct user *u, const char *cita,
                         const char *tipo, const char *data, size_t len)
{
    struct resp r;
    upload(f, u, cita, tipo, data, len, &r);
    if (r.status != 201) fail_msg("upload expected 201, got %ld: %s", r.status, r.body);
    json_t *foto = json_object_get(r.json, "foto");
    json_incref(foto);
    resp_free(&r);
    return foto;
}

/* GET of an absolute URL (the service's or the store's), unsigned. */
static void get_url(const char *url, struct resp *r)
{
    struct srv at;
    memset(&at, 0, sizeof at);
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : NULL;
    if (!p || (size_t)(p - url) >= sizeof at.base) fail_msg("not an absolute URL: %s", url);
    memcpy(at.base, url, (size_t)(p - url));
    http_get(&at, p, NULL, r);
}

/* The object as the S3 server itself serves it (it answers unsigned GETs). */
static void get_from_store(const char *storage_path, struct resp *r)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/fotos-citas/%s", S3_URL, storage_path);
    get_url(url, r);
}

static void expect_bytes(const struct resp *r, const char *data, size_t len)
{
    assert_int_equal(r->status, 200);
    assert_int_equal(r->len, len);
    assert_memory_equal(r->body, data, len);
}

/* An answer's Content-Type is type, with `Content-Disposition: attachment`
 * or without any. */
static void expect_type(const struct resp *r, const char *what, const char *type, bool attachment)
{
    char h[256];
    const char *got = resp_header(r, "Content-Type", h, sizeof h);
    if (!got || strcmp(got, type) != 0)
        fail_msg("%s: Content-Type %s, expected %s", what, got ? got : "(none)", type);
    got = resp_header(r, "Content-Disposition", h, sizeof h);
    if (attachment ? !got || strcmp(got, "attachment") != 0 : got != NULL)
        fail_msg("%s (%s): Content-Disposition %s, expected %s", what, type, got ? got : "(none)",
                 attachment ? "attachment" : "none");
}

static long fotos_of(const struct fixture *f, const char *cita)
{
    return db_count(&f->s, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita);
}

/* --- setup ------------------------------------------------------------------------ */

static int group_setup(void **state)
{
    (void)state;
    S3_URL = getenv("BARBERIA_TEST_S3_URL");
    if (!S3_URL || !*S3_URL) {
        S3_URL = NULL;
        return 0;
    }
    const char *env[8];
    store_env(env, S3_URL, NULL, NULL);
    fixture_start(&F, env, "Barbero S3", "Corte S3", 30, 15.0);
    signup_user(&F.s, &A, "Ana S3");
    signup_user(&F.s, &B, "Beto S3");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (S3_URL) fixture_stop(&F);
    return 0;
}

static void need_store(void)
{
    if (!S3_URL) skip();
}

/* --- tests ------------------------------------------------------------------------ */

static void upload_lands_in_the_store_and_the_photo_url_serves_its_bytes(void **state)
{
    (void)state;
    need_store();
    char *cita = new_cita(&F, &A);
    size_t len;
    const char *img = pixels(&len, 1);
    json_t *f = upload_ok(&F, &A, cita, "antes", img, len);
    const char *url = jstr(f, "url"), *path = jstr(f, "storage_path");
    /* the service's own URL: the store's URLs are not handed out */
    char want[512];
    snprintf(want, sizeof want, "%s/storage/v1/object/public/fotos-citas/", F.s.base);
    assert_true(url && !strncmp(url, want, strlen(want)));
    struct resp r;
    get_url(url, &r);
    expect_bytes(&r, img, len);
    expect_header(&r, "Content-Type", "image/png");
    expect_header(&r, "X-Content-Type-Options", "nosniff");
    resp_free(&r);
    /* in the S3 store, and not in the data folder */
    get_from_store(path, &r);
    expect_bytes(&r, img, len);
    resp_free(&r);
    char file[768];
    snprintf(file, sizeof file, "%s/storage/fotos-citas/%s", F.s.data, path);
    assert_int_not_equal(access(file, F_OK), 0);
    /* the local copy made to serve it is gone */
    char scratch[512];
    snprintf(scratch, sizeof scratch, "%s/s3-scratch", F.s.data);
    assert_int_equal(count_files(scratch), 0);
    json_decref(f);
    free(cita);
}

static void delete_removes_the_object_from_the_store(void **state)
{
    (void)state;
    need_store();
    char *cita = new_cita(&F, &A);
    size_t len;
    const char *img = pixels(&len, 2);
    json_t *f = upload_ok(&F, &B, cita, "despues", img, len);
    char q[160];
    snprintf(q, sizeof q, "/api/fotos?id=%s", jstr(f, "id"));
    struct req_opts o = {.token = B.token};
    struct resp r;
    http_req(&F.s, "DELETE", q, &o, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    get_url(jstr(f, "url"), &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    get_from_store(jstr(f, "storage_path"), &r);
    assert_int_equal(r.status, 404);
    resp_free(&r);
    assert_int_equal(fotos_of(&F, cita), 0);
    json_decref(f);
    free(cita);
}

static void a_fourth_photo_of_a_tipo_is_refused(void **state)
{
    (void)state;
    need_store();
    char *cita = new_cita(&F, &A);
    size_t len;
    const char *img = pixels(&len, 3);
    for (int i = 0; i < 3; i++)
        json_decref(upload_ok(&F, i % 2 ? &B : &A, cita, "antes", img, len));
    struct resp r;
    upload(&F, &A, cita, "antes", img, len, &r);
    expect_error(&r, 400, "Máximo 3 fotos por tipo");
    resp_free(&r);
    assert_int_equal(fotos_of(&F, cita), 3);
    /* the other tipo still has room */
    json_decref(upload_ok(&F, &A, cita, "despues", img, len));
    free(cita);
}

static void with_a_store_public_url_the_photo_url_points_at_the_store(void **state)
{
    (void)state;
    need_store();
    char pub[320];
    snprintf(pub, sizeof pub, "BARBERIA_STORAGE_PUBLIC_URL=%s/fotos-citas/", S3_URL);
    struct fixture P;
    struct user u;
    char *cita = own_server(&P, S3_URL, pub, "Público", &u, "Pía");
    size_t len;
    const char *img = pixels(&len, 4);
    json_t *f = upload_ok(&P, &u, cita, "antes", img, len);
    char want[1024];
    snprintf(want, sizeof want, "%s/fotos-citas/%s", S3_URL, jstr(f, "storage_path"));
    assert_string_equal(jstr(f, "url"), want);
    /* the listing hands out the same URL */
    char q[160];
    snprintf(q, sizeof q, "/api/fotos?cita_id=%s", cita);
    struct resp r;
    http_get(&P.s, q, u.token, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "fotos"), 0), "url"), want);
    resp_free(&r);
    /* straight from the store, with nobody's signature */
    get_url(want, &r);
    expect_bytes(&r, img, len);
    resp_free(&r);
    json_decref(f);
    free(cita);
    fixture_stop(&P);
}

/* The declared types of the type tests, and what the store must serve. */
static const struct {
    const char *declared, *stored;
    bool attachment;
} TYPES[] = {
    {"image/png,text/javascript", "application/octet-stream", true},
    {"image/gif;a=b,text/html", "application/octet-stream", true},
    {"IMAGE/PNG; charset=x", "image/png", false},
    {"image/svg+xml", "image/svg+xml", true},
    {"image/heic", "image/heic", false},
};

static void with_a_store_public_url_the_store_serves_the_canonical_type(void **state)
{
    (void)state;
    need_store();
    char pub[320];
    snprintf(pub, sizeof pub, "BARBERIA_STORAGE_PUBLIC_URL=%s/fotos-citas/", S3_URL);
    struct fixture P;
    struct user u;
    char *cita = own_server(&P, S3_URL, pub, "Tipos", &u, "Tina");
    size_t len;
    const char *img = pixels(&len, 5);
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) {
        json_t *f =
            upload_as_ok(&P, &u, cita, i % 2 ? "antes" : "despues", TYPES[i].declared, img, len);
        /* the URL handed out is the store's: what it stored is what readers get */
        struct resp r;
        get_url(jstr(f, "url"), &r);
        expect_bytes(&r, img, len);
        expect_type(&r, TYPES[i].declared, TYPES[i].stored, TYPES[i].attachment);
        resp_free(&r);
        json_decref(f);
    }
    free(cita);
    fixture_stop(&P);
}

static void fotos_retype_rewrites_what_an_older_version_stored(void **state)
{
    (void)state;
    need_store();
    char pub[320];
    snprintf(pub, sizeof pub, "BARBERIA_STORAGE_PUBLIC_URL=%s/fotos-citas/", S3_URL);
    struct fixture P;
    struct user u;
    char *cita = own_server(&P, S3_URL, pub, "Antiguo", &u, "Olga");
    size_t len;
    const char *img = pixels(&len, 6);
    /* photos stored as an older version stored them: with the declared text */
    size_t n = sizeof TYPES / sizeof TYPES[0];
    json_t *f[sizeof TYPES / sizeof TYPES[0]];
    for (size_t i = 0; i < n; i++) {
        f[i] = upload_ok(&P, &u, cita, i % 2 ? "antes" : "despues", img, len);
        obj_set_raw_type(&P.s, jstr(f[i], "storage_path"), TYPES[i].declared);
        struct resp r;
        get_url(jstr(f[i], "url"), &r);
        expect_type(&r, "planted", TYPES[i].declared, false);
        resp_free(&r);
    }
    /* one untouched photo stays as it is */
    char *other = new_cita(&P, &u);
    json_t *fine = upload_ok(&P, &u, other, "antes", img, len);

    const char *env[8];
    char *out = NULL, *err = NULL;
    store_env(env, S3_URL, NULL, NULL);
    static const char *const args[] = {"fotos", "retype", NULL};
    int st = run_cli(&P.s, env, args, true, &out, &err);
    if (st != 0) fail_msg("fotos retype exited %d: %s", st, err ? err : "");
    /* a row per rewritten object: the ones whose type changes (the heic
     * photo was stored as image/heic already, the PNG was stored right) */
    for (size_t i = 0; i < n; i++) {
        bool changes = strcmp(TYPES[i].declared, TYPES[i].stored) != 0 || TYPES[i].attachment;
        char row[512];
        snprintf(row, sizeof row, "retyped\t%s\n", jstr(f[i], "storage_path"));
        if ((strstr(out, row) != NULL) != changes)
            fail_msg("fotos retype output %s %s:\n%s", changes ? "lacks" : "has", row, out);
    }
    assert_non_null(strstr(out, "checked 6 photos: 4 retyped, 0 removed"));
    free(out);
    free(err);

    for (size_t i = 0; i < n; i++) {
        struct resp r;
        get_url(jstr(f[i], "url"), &r);
        expect_bytes(&r, img, len);
        expect_type(&r, TYPES[i].declared, TYPES[i].stored, TYPES[i].attachment);
        resp_free(&r);
    }
    struct resp r;
    get_url(jstr(fine, "url"), &r);
    expect_bytes(&r, img, len);
    expect_type(&r, "untouched", "image/png", false);
    resp_free(&r);

    /* again: nothing left to do */
    out = err = NULL;
    st = run_cli(&P.s, env, args, true, &out, &err);
    if (st != 0) fail_msg("fotos retype exited %d: %s", st, err ? err : "");
    assert_null(strstr(out, "retyped\t"));
    assert_non_null(strstr(out, "checked 6 photos: 0 retyped"));
    free(out);
    free(err);
    for (size_t i = 0; i < n; i++)
        json_decref(f[i]);
    json_decref(fine);
    free(other);
    free(cita);
    fixture_stop(&P);
}

/* A private S3 server for the test that stops it. */
static char PRIVATE_DIR[] = "/tmp/barberia-s3-private-XXXXXX";
static bool private_running;

/* Stops the S3 server whose folder is dir, when *running. */
static void store_stop(const char *dir, bool *running)
{
    if (!*running) return;
    const char *argv[] = {S3_SERVER, "stop", dir, NULL};
    char *out = NULL, *err = NULL;
    int st = run_program(argv, NULL, 30000, &out, &err);
    *running = false;
    if (st != 0) fprintf(stderr, "s3-server stop: %d %s\n", st, err ? err : "");
    free(out);
    free(err);
}

static void private_store_stop(void)
{
    store_stop(PRIVATE_DIR, &private_running);
}

static int rm_entry(const char *p, const struct stat *sb, int f, struct FTW *w)
{
    (void)sb;
    (void)f;
    (void)w;
    return remove(p);
}

/* Stops the server and removes dir, once mkdtemp has made it. */
static void store_remove(char *dir, const char *data, bool *running)
{
    store_stop(data, running);
    if (strcmp(dir + strlen(dir) - 6, "XXXXXX") != 0) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int private_store_teardown(void **state)
{
    (void)state;
    store_remove(PRIVATE_DIR, PRIVATE_DIR, &private_running);
    return 0;
}

static void upload_or_delete_while_the_store_is_down_leaves_no_record(void **state)
{
    (void)state;
    need_store();
    if (!mkdtemp(PRIVATE_DIR)) fail_msg("mkdtemp failed");
    const char *argv[] = {S3_SERVER, "start", PRIVATE_DIR, NULL};
    char *url = NULL, *err = NULL;
    int st = run_program(argv, NULL, 120000, &url, &err);
    if (st != 0 || !url) fail_msg("s3-server start: %d %s", st, err ? err : "");
    private_running = true;
    url[strcspn(url, "\n")] = '\0';
    struct fixture D;
    struct user u;
    char *cita = own_server(&D, url, "BARBERIA_STORAGE_TIMEOUT_MS=2000", "Caído", &u, "Dora");
    size_t len;
    const char *img = pixels(&len, 5);
    json_decref(upload_ok(&D, &u, cita, "antes", img, len));
    json_t *doomed = upload_ok(&D, &u, cita, "despues", img, len);
    char doomed_q[128];
    snprintf(doomed_q, sizeof doomed_q, "/api/fotos?id=%s", jstr(doomed, "id"));
    json_decref(doomed);

    private_store_stop();
    int64_t t0 = clock_mono_ms();
    struct resp r;
    upload(&D, &u, cita, "antes", img, len, &r);
    int64_t took = clock_mono_ms() - t0;
    assert_int_equal(r.status, 500);
    const char *msg = jstr(r.json, "error");
    if (!msg || strncmp(msg, "Error al subir imagen: ", 23) != 0 || strlen(msg) <= 23)
        fail_msg("expected 'Error al subir imagen: <detail>', got %s", r.body);
    /* no host name or secret reaches the client */
    assert_null(strstr(msg, "127.0.0.1"));
    assert_null(strstr(msg, "secret"));
    resp_free(&r);
    assert_true(took < 10000);
    assert_int_equal(fotos_of(&D, cita), 2);
    /* a delete while the store is down: the photo leaves the API at once,
     * its object is named by a delete intent for the sweeper to finish */
    struct req_opts o = {.token = u.token};
    http_req(&D.s, "DELETE", doomed_q, &o, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(fotos_of(&D, cita), 1);
    assert_int_equal(db_count(&D.s, "SELECT count(*) FROM obj_intents WHERE op = 'delete'"), 1);
    /* the failed call is one warn line in the log */
    assert_true(srv_wait_log(&D.s, "warn storage: HEAD fotos-citas/", 5000));
    /* the service itself is fine */
    expect_healthy(&D.s);
    free(url);
    free(err);
    free(cita);
    fixture_stop(&D);
}

/* A store on https with a certificate of a private authority: trusted only
 * through BARBERIA_STORAGE_CA_FILE (certificates are always verified). */
static char TLS_DIR[] = "/tmp/barberia-s3-tls-XXXXXX";
static bool tls_running;

static int tls_store_teardown(void **state)
{
    (void)state;
    char data[64];
    snprintf(data, sizeof data, "%s/store", TLS_DIR);
    store_remove(TLS_DIR, data, &tls_running);
    return 0;
}

static void an_https_store_is_trusted_through_the_ca_file(void **state)
{
    (void)state;
    need_store();
    if (!mkdtemp(TLS_DIR)) fail_msg("mkdtemp failed");
    char cert[96], key[96], data[96];
    make_cert(TLS_DIR, cert, key, sizeof cert);
    snprintf(data, sizeof data, "%s/store", TLS_DIR);
    char ecert[128], ekey[128];
    snprintf(ecert, sizeof ecert, "S3_TLS_CERT=%s", cert);
    snprintf(ekey, sizeof ekey, "S3_TLS_KEY=%s", key);
    const char *senv[] = {ecert, ekey, NULL};
    const char *start[] = {S3_SERVER, "start", data, NULL};
    char *url = NULL, *err = NULL;
    int st = run_program(start, senv, 120000, &url, &err);
    if (st != 0 || !url) fail_msg("s3-server start: %d %s", st, err ? err : "");
    tls_running = true;
    free(err);
    url[strcspn(url, "\n")] = '\0';
    assert_int_equal(strncmp(url, "https://", 8), 0);
    size_t len;
    const char *img = pixels(&len, 6);

    /* with the authority's certificate: uploads land, the URL serves them */
    char eca[128];
    snprintf(eca, sizeof eca, "BARBERIA_STORAGE_CA_FILE=%s", cert);
    struct fixture T;
    struct user u;
    char *cita = own_server(&T, url, eca, "TLS", &u, "Tania");
    json_t *f = upload_ok(&T, &u, cita, "antes", img, len);
    struct resp r;
    get_url(jstr(f, "url"), &r);
    expect_bytes(&r, img, len);
    resp_free(&r);
    json_decref(f);
    free(cita);
    fixture_stop(&T);

    /* without it the store's certificate is not trusted: the upload is the
     * specification's 500 and leaves nothing behind */
    cita = own_server(&T, url, NULL, "TLS", &u, "Tomás");
    upload(&T, &u, cita, "antes", img, len, &r);
    assert_int_equal(r.status, 500);
    const char *msg = jstr(r.json, "error");
    if (!msg || strncmp(msg, "Error al subir imagen: ", 23) != 0)
        fail_msg("expected 'Error al subir imagen: <detail>', got %s", r.body);
    resp_free(&r);
    assert_int_equal(fotos_of(&T, cita), 0);
    assert_true(srv_wait_log(&T.s, "warn storage:", 5000));
    free(cita);
    fixture_stop(&T);
    free(url);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(upload_lands_in_the_store_and_the_photo_url_serves_its_bytes),
        cmocka_unit_test(delete_removes_the_object_from_the_store),
        cmocka_unit_test(a_fourth_photo_of_a_tipo_is_refused),
        cmocka_unit_test(with_a_store_public_url_the_photo_url_points_at_the_store),
        cmocka_unit_test(with_a_store_public_url_the_store_serves_the_canonical_type),
        cmocka_unit_test(fotos_retype_rewrites_what_an_older_version_stored),
        cmocka_unit_test_teardown(upload_or_delete_while_the_store_is_down_leaves_no_record,
                                  private_store_teardown),
        cmocka_unit_test_teardown(an_https_store_is_trusted_through_the_ca_file,
                                  tls_store_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
