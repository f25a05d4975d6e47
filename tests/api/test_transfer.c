/*
 * test_transfer.c - `barberia export` and `barberia import`: a shop moves
 * from the embedded defaults (SQLite and the photo folder) to the other
 * backends of this run (PostgreSQL on api-pg/, S3 when a test server is
 * given) and back, with nothing lost: the same rows byte for byte
 * (checksums of every table and of the photos), the same answers from the
 * API, the photos' bytes, passwords and sessions. A damaged export or a
 * target that already holds data is refused with nothing written.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct fixture A; /* the source: SQLite and a folder, always */
static struct srv B;     /* the target: this run's backends */
static char target_db[256];
static const char *target_env[4];
static struct user ana, admin;
static char *foto_path, foto_bytes[300];

static void target_init(void)
{
    size_t n = 0;
    test_s3_env(target_env, &n);
    target_env[n] = NULL;
}

static int setup(void **state)
{
    (void)state;
    /* A runs on SQLite even on a PostgreSQL run: the database made for it
     * is B's */
    srv_init(&A.s);
    A.s.s3 = false; /* the folder, even where the suite runs on S3 */
    snprintf(target_db, sizeof target_db, "%s", A.s.dburl);
    A.s.dburl[0] = '\0';
    fixture_start(&A, NULL, "Barbero Origen", "Corte Origen", 30, 12.5);
    srv_init_peer(&B, &A.s);
    snprintf(B.data, sizeof B.data, "%s/data", B.dir);
    snprintf(B.dburl, sizeof B.dburl, "%s", target_db);
    B.peer = false; /* its database is its own: srv_cleanup drops it */
    target_init();

    make_user(&A.s, &admin, "Admin Origen", "admin");
    signup_user(&A.s, &ana, "Ana Origen");
    char *segundo = make_barbero(&A.s, "Segunda Barbera");
    char *c1 = book(&A.s, &ana, A.barbero, A.servicio, "2032-09-01T10:00:00.000Z", "Con notas");
    free(book(&A.s, &ana, segundo, A.servicio, "2032-09-01T10:00:00.000Z", NULL));
    free(book(&A.s, &admin, A.barbero, A.servicio, "2032-09-02T10:00:00+02:00", NULL));
    for (size_t i = 0; i < sizeof foto_bytes; i++)
        foto_bytes[i] = (char)(i * 31 + 5);
    json_t *foto = upload_photo(&A.s, &ana, c1, "antes", foto_bytes, sizeof foto_bytes);
    foto_path = photo_path(foto);
    json_decref(foto);
    free(c1);
    free(segundo);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (B.dir[0]) srv_cleanup(&B);
    free(foto_path);
    fixture_stop(&A);
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

static int cli_in(const struct srv *s, const char *const *env, const char *cmd, const char *flag,
                  const char *dir, char **err)
{
    const char *args[] = {cmd, flag, dir, NULL};
    char *out = NULL;
    int rc = run_cli(s, env, args, true, &out, err);
    free(out);
    return rc;
}

static void expect_cli_ok(const struct srv *s, const char *const *env, const char *cmd,
                          const char *flag, const char *dir)
{
    char *err = NULL;
    int rc = cli_in(s, env, cmd, flag, dir, &err);
    if (rc != 0) fail_msg("%s %s %s: exit %d: %s", cmd, flag, dir, rc, err ? err : "");
    free(err);
}

/* The manifest's checksums of every table and of the photos' list. */
static char *sums(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_error_t e;
    json_t *m = json_load_file(path, 0, &e);
    if (!m) fail_msg("%s: %s", path, e.text);
    json_t *keep = json_pack("{s:O, s:O}", "tables", json_object_get(m, "tables"), "objects",
                             json_object_get(m, "objects"));
    char *text = json_dumps(keep, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(keep);
    json_decref(m);
    return text;
}

static json_t *listing(const struct srv *s)
{
    struct resp r;
    http_get(s, "/api/citas", admin.token, &r);
    assert_int_equal(r.status, 200);
    json_t *l = json_incref(json_object_get(r.json, "citas"));
    resp_free(&r);
    return l;
}

/* --- the tests ------------------------------------------------------------------------ */

static void a_shop_moves_to_the_other_backends_and_back_with_nothing_lost(void **state)
{
    (void)state;
    char out1[400], out2[400], out3[400];
    snprintf(out1, sizeof out1, "%s/export-1", A.s.dir);
    snprintf(out2, sizeof out2, "%s/export-2", A.s.dir);
    snprintf(out3, sizeof out3, "%s/export-3", A.s.dir);
    json_t *before = listing(&A.s);
    assert_int_equal(json_array_size(before), 3);

    /* out of the embedded defaults, while the service runs */
    expect_cli_ok(&A.s, NULL, "export", "--to", out1);
    /* into this run's backends, then served from there */
    expect_cli_ok(&B, target_env, "import", "--from", out1);
    /* the same rows, byte for byte, out of the other backends */
    expect_cli_ok(&B, target_env, "export", "--to", out2);
    char *s1 = sums(out1), *s2 = sums(out2);
    assert_string_equal(s1, s2);
    srv_start(&B, target_env, NULL);
    json_t *after = listing(&B);
    if (!json_equal(before, after)) {
        char *x = json_dumps(before, 0), *y = json_dumps(after, 0);
        fail_msg("listings differ:\n%s\n%s", x, y);
    }
    json_decref(after);
    /* the photo's bytes, from the new store */
    struct resp r;
    http_get(&B, foto_path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, sizeof foto_bytes);
    assert_memory_equal(r.body, foto_bytes, sizeof foto_bytes);
    resp_free(&r);
    /* the session of the old deployment, and the password */
    http_get(&B, "/api/auth/me", ana.token, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char body[256];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", ana.email, ana.password);
    http_json(&B, "POST", "/api/auth/login", NULL, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* the booking rule holds on the moved data */
    json_t *b = json_pack("{s:s, s:s, s:s}", "barbero_id", A.barbero, "servicio_id", A.servicio,
                          "fecha_inicio", "2032-09-01T10:15:00.000Z");
    char *text = json_dumps(b, 0);
    json_decref(b);
    http_json(&B, "POST", "/api/citas", ana.token, text, &r);
    expect_error(&r, 409, "El horario ya no está disponible");
    resp_free(&r);
    free(text);

    /* and back into an embedded deployment */
    struct srv C = {0};
    srv_init(&C);
    C.dburl[0] = '\0'; /* SQLite (its database on a PostgreSQL run goes unused) */
    C.s3 = false;      /* and the folder */
    expect_cli_ok(&C, NULL, "import", "--from", out2);
    expect_cli_ok(&C, NULL, "export", "--to", out3);
    char *s3 = sums(out3);
    assert_string_equal(s1, s3);
    free(s1);
    free(s2);
    free(s3);
    srv_cleanup(&C);
    json_decref(before);
}

static void a_damaged_export_or_a_used_target_is_refused_with_nothing_written(void **state)
{
    (void)state;
    char out[400];
    snprintf(out, sizeof out, "%s/export-damaged", A.s.dir);
    expect_cli_ok(&A.s, NULL, "export", "--to", out);
    /* an export goes to a new folder only */
    char *err = NULL;
    assert_int_equal(cli_in(&A.s, NULL, "export", "--to", out, &err), 1);
    assert_non_null(strstr(err, "not empty"));
    free(err);

    /* one byte changed in one row */
    char path[600];
    snprintf(path, sizeof path, "%s/citas.jsonl", out);
    size_t len = 0;
    char *text = read_file(path, &len);
    assert_non_null(text);
    char *p = strstr(text, "confirmada");
    assert_non_null(p);
    p[0] = 'C';
    FILE *f = fopen(path, "w");
    fwrite(text, 1, len, f);
    fclose(f);
    free(text);

    struct srv D = {0};
    srv_init(&D);
    assert_int_equal(cli_in(&D, NULL, "import", "--from", out, &err), 1);
    assert_non_null(strstr(err, "checksum mismatch"));
    free(err);
    /* nothing written: the target is as empty as a new one */
    const char *migrate[] = {"migrate", NULL};
    assert_int_equal(run_cli(&D, NULL, migrate, true, NULL, NULL), 0);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM citas"), 0);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM auth_users"), 0);
    srv_cleanup(&D);

    /* a target with data already */
    char good[400];
    snprintf(good, sizeof good, "%s/export-good", A.s.dir);
    expect_cli_ok(&A.s, NULL, "export", "--to", good);
    assert_int_equal(cli_in(&A.s, NULL, "import", "--from", good, &err), 1);
    assert_non_null(strstr(err, "already holds data"));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_shop_moves_to_the_other_backends_and_back_with_nothing_lost),
        cmocka_unit_test(a_damaged_export_or_a_used_target_is_refused_with_nothing_written),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
