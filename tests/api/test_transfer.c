/*
 * test_transfer.c - `barberia export` and `barberia import`: a shop moves
 * from the embedded defaults (SQLite and the photo folder) to the other
 * backends of this run (PostgreSQL on api-pg/, S3 when a test server is
 * given) and back, with nothing lost: the same rows byte for byte
 * (checksums of every table and of the photos), the same answers from the
 * API, the photos' bytes, passwords and sessions, and the working hours: a
 * deactivated barber and service, a changed week, a day off and a shop
 * closure come back the same, with the same free slots. An export of
 * version 1 (made before the schedules) still loads: every barber and
 * service active, every barber with the default week; one of version 2
 * (before photo sizes) gives each photo its object's size, which the
 * uploader's quota then counts; one of version 4 (before a consent kept
 * who recorded it) brings the clients' WhatsApp consents back as she gave
 * them, recorded by no staff user. A damaged export, a target that
 * already holds data or one a `serve` runs on is refused with nothing
 * written.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct fixture A; /* the source: SQLite and a folder, always */
static struct srv B;     /* the target: this run's backends */
static char target_db[256];
static const char *target_env[4];
static struct user ana, admin;
static char *foto_path, foto_bytes[300];
static char first_day[11], closed_day[11]; /* of the free slots compared */
#define DAYS 8                             /* compared from first_day on */

static void target_init(void)
{
    size_t n = 0;
    test_s3_env(target_env, &n);
    target_env[n] = NULL;
}

static void admin_call(const struct srv *s, const char *method, const char *path, const char *body,
                       long status, struct resp *r)
{
    http_json(s, method, path, admin.token, body, r);
    if (r->status != status) fail_msg("%s %s: %ld %s", method, path, r->status, r->body);
}

/* The date days from today (UTC; far enough ahead for the shop's zone not
 * to matter), and its ISO weekday. */
static int date_ahead(int days, char out[11])
{
    time_t t = time(NULL) + (time_t)days * 86400;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 11, "%Y-%m-%d", &tm);
    return tm.tm_wday ? tm.tm_wday : 7;
}

/* Issue 9's state, made through the API: a barber and a service taken off
 * the catalog, another week for the fixture's barber, a day off of the
 * second barber and a day the shop is closed, all within the days whose
 * free slots are compared. */
static void hours_init(const char *segundo)
{
    struct resp r;
    char path[200], body[400], off_from[11], off_to[11];
    admin_call(&A.s, "POST", "/api/admin/barberos", "{\"nombre\":\"Barbero Retirado\"}", 201, &r);
    snprintf(path, sizeof path, "/api/admin/barberos/%s",
             jstr(json_object_get(r.json, "barbero"), "id"));
    resp_free(&r);
    admin_call(&A.s, "PATCH", path, "{\"activo\":false}", 200, &r);
    resp_free(&r);
    admin_call(&A.s, "POST", "/api/admin/servicios",
               "{\"nombre\":\"Servicio Retirado\",\"duracion_min\":45,\"precio\":20}", 201, &r);
    snprintf(path, sizeof path, "/api/admin/servicios/%s",
             jstr(json_object_get(r.json, "servicio"), "id"));
    resp_free(&r);
    admin_call(&A.s, "PATCH", path, "{\"activo\":false}", 200, &r);
    resp_free(&r);
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", A.barbero);
    admin_call(&A.s, "PUT", path,
               "{\"horario\":[{\"dia\":1,\"inicio\":\"08:00\",\"fin\":\"12:30\"},"
               "{\"dia\":3,\"inicio\":\"10:00\",\"fin\":\"13:00\"},"
               "{\"dia\":3,\"inicio\":\"17:15\",\"fin\":\"21:00\"},"
               "{\"dia\":5,\"inicio\":\"12:00\",\"fin\":\"19:45\"},"
               "{\"dia\":7,\"inicio\":\"10:00\",\"fin\":\"14:00\"}]}",
               200, &r);
    resp_free(&r);
    date_ahead(20, first_day);
    date_ahead(21, off_from);
    date_ahead(22, off_to);
    date_ahead(24, closed_day);
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"desde\":\"%s\",\"hasta\":\"%s\",\"motivo\":\"Médico\"}",
             segundo, off_from, off_to);
    admin_call(&A.s, "POST", "/api/admin/ausencias", body, 201, &r);
    resp_free(&r);
    snprintf(body, sizeof body, "{\"desde\":\"%s\",\"hasta\":\"%s\",\"motivo\":\"Cerrado\"}",
             closed_day, closed_day);
    admin_call(&A.s, "POST", "/api/admin/ausencias", body, 201, &r);
    resp_free(&r);
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
    hours_init(segundo);
    /* her WhatsApp consent, recorded at the desk by the admin */
    char path[200];
    snprintf(path, sizeof path, "/api/clientes/%s/whatsapp", ana.id);
    struct resp r;
    admin_call(&A.s, "PUT", path, "{\"acepta\":true,\"telefono\":\"600 555 123\"}", 200, &r);
    resp_free(&r);
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

/* What the API tells of the catalog and the hours: the admin listings,
 * every barber's week, the days off, and the free slots of DAYS days for
 * every service and barber (and any barber), each as {status, body}; and
 * the client's WhatsApp consent with who recorded it. */
static void answer(const struct srv *s, json_t *into, const char *path, const char *token)
{
    struct resp r;
    http_get(s, path, token, &r);
    json_object_set_new(into, path,
                        json_pack("{s:I, s:O?}", "status", (json_int_t)r.status, "body", r.json));
    resp_free(&r);
}

static json_t *hours(const struct srv *s)
{
    json_t *h = json_object();
    answer(s, h, "/api/admin/barberos", admin.token);
    answer(s, h, "/api/admin/servicios", admin.token);
    answer(s, h, "/api/barberos", NULL);
    answer(s, h, "/api/servicios", NULL);
    answer(s, h, "/api/admin/ausencias", admin.token);
    char path[300];
    snprintf(path, sizeof path, "/api/clientes/%s/whatsapp", ana.id);
    answer(s, h, path, admin.token);
    json_t *barberos = json_object_get(
        json_object_get(json_object_get(h, "/api/admin/barberos"), "body"), "barberos");
    json_t *servicios = json_object_get(
        json_object_get(json_object_get(h, "/api/admin/servicios"), "body"), "servicios");
    assert_true(json_array_size(barberos) >= 3);
    assert_true(json_array_size(servicios) >= 2);
    size_t i, k;
    json_t *b, *v;
    json_array_foreach(barberos, i, b)
    {
        snprintf(path, sizeof path, "/api/barberos/%s/horario", jstr(b, "id"));
        answer(s, h, path, NULL);
    }
    char day[11];
    for (int d = 0; d < DAYS; d++) {
        date_ahead(20 + d, day);
        json_array_foreach(servicios, k, v)
        {
            snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s",
                     jstr(v, "id"), day);
            answer(s, h, path, NULL);
            json_array_foreach(barberos, i, b)
            {
                snprintf(path, sizeof path,
                         "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s", jstr(v, "id"),
                         day, jstr(b, "id"));
                answer(s, h, path, NULL);
            }
        }
    }
    return h;
}

static void expect_same_hours(const json_t *want, const struct srv *s, const char *where)
{
    json_t *got = hours(s);
    const char *path;
    json_t *w;
    json_object_foreach((json_t *)want, path, w)
    {
        json_t *g = json_object_get(got, path);
        if (!json_equal(w, g)) {
            char *x = json_dumps(w, JSON_COMPACT), *y = g ? json_dumps(g, JSON_COMPACT) : NULL;
            fail_msg("%s: GET %s differs:\n%s\n%s", where, path, x, y ? y : "(none)");
        }
    }
    assert_int_equal(json_object_size(got), json_object_size(want));
    json_decref(got);
}

/* The source's hours are what hours_init made, and the consent what setup
 * recorded: a test of the test. */
static void expect_hours_made(const json_t *h)
{
    size_t i;
    json_t *b;
    int inactive = 0;
    json_array_foreach(
        json_object_get(json_object_get(json_object_get(h, "/api/admin/barberos"), "body"),
                        "barberos"),
        i, b) inactive += json_is_false(json_object_get(b, "activo"));
    assert_int_equal(inactive, 1);
    json_t *aus = json_object_get(
        json_object_get(json_object_get(h, "/api/admin/ausencias"), "body"), "ausencias");
    assert_int_equal(json_array_size(aus), 2);
    char path[300];
    snprintf(path, sizeof path, "/api/clientes/%s/whatsapp", ana.id);
    json_t *wa = json_object_get(json_object_get(json_object_get(h, path), "body"), "whatsapp");
    assert_true(json_is_true(json_object_get(wa, "acepta")));
    const char *por = jstr(wa, "registrado_por");
    if (!por || strcmp(por, admin.id)) fail_msg("registrado_por: %s", por ? por : "null");
    snprintf(path, sizeof path, "/api/barberos/%s/horario", A.barbero);
    json_t *week = json_object_get(json_object_get(json_object_get(h, path), "body"), "horario");
    assert_int_equal(json_array_size(week), 5);
    /* the shop's closed day has no slot, another day has some */
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s", A.servicio,
             closed_day);
    json_t *closed = json_object_get(json_object_get(json_object_get(h, path), "body"), "huecos");
    assert_non_null(closed);
    assert_int_equal(json_array_size(closed), 0);
    size_t slots = 0;
    char day[11];
    for (int d = 0; d < DAYS; d++) {
        date_ahead(20 + d, day);
        snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s", A.servicio, day);
        slots += json_array_size(
            json_object_get(json_object_get(json_object_get(h, path), "body"), "huecos"));
    }
    assert_true(slots > 0);
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
    json_t *hours_before = hours(&A.s);
    expect_hours_made(hours_before);

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
    /* the catalog, the weeks, the days off and the free slots */
    expect_same_hours(hours_before, &B, "after the import");
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
    srv_start(&C, NULL, NULL);
    expect_same_hours(hours_before, &C, "back on SQLite");
    srv_cleanup(&C);
    json_decref(hours_before);
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
    /* a folder that holds anything already is refused, and what it holds
     * stays as it was (a table's name included) */
    char mine[400], keep[500];
    snprintf(mine, sizeof mine, "%s/export-mine", A.s.dir);
    assert_int_equal(mkdir(mine, 0700), 0);
    snprintf(keep, sizeof keep, "%s/perfiles.jsonl", mine);
    FILE *kf = fopen(keep, "w");
    assert_non_null(kf);
    fputs("mio\n", kf);
    fclose(kf);
    assert_int_equal(cli_in(&A.s, NULL, "export", "--to", mine, &err), 1);
    assert_non_null(strstr(err, "not empty"));
    free(err);
    size_t klen = 0;
    char *kept = read_file(keep, &klen);
    assert_non_null(kept);
    assert_string_equal(kept, "mio\n");
    free(kept);
    /* a file where the folder would go is said to be one */
    assert_int_equal(cli_in(&A.s, NULL, "export", "--to", keep, &err), 1);
    assert_non_null(strstr(err, "is not a folder"));
    free(err);
    /* an export that fails (a photo gone from the folder store) takes back
     * what it wrote: the same command runs again once the cause is mended */
    if (!A.s.s3) {
        char again[400];
        snprintf(again, sizeof again, "%s/export-again", A.s.dir);
        photo_aside(&A.s, true);
        assert_int_equal(cli_in(&A.s, NULL, "export", "--to", again, &err), 1);
        assert_non_null(strstr(err, "is missing"));
        free(err);
        assert_false(file_exists(again));
        photo_aside(&A.s, false);
        expect_cli_ok(&A.s, NULL, "export", "--to", again);
    }

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
    /* nothing made of its data folder either: no database file, no photos' folder */
    char made[600];
    snprintf(made, sizeof made, "%s/barberia.db", D.data);
    assert_false(file_exists(made));
    snprintf(made, sizeof made, "%s/storage", D.data);
    assert_false(file_exists(made));
    assert_false(file_exists(D.data));
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

/* What an import killed halfway leaves behind: photos it stored, each
 * under its intent, and no rows. Running it again first finishes those
 * intents (the object no record names goes) and then loads the export
 * whole, where it used to refuse the key it found taken. */
static void an_import_cut_short_by_a_crash_is_finished_and_runs_again(void **state)
{
    (void)state;
    char out[400];
    snprintf(out, sizeof out, "%s/export-crash", A.s.dir);
    expect_cli_ok(&A.s, NULL, "export", "--to", out);
    char list[600];
    snprintf(list, sizeof list, "%s/objects.jsonl", out);
    char *text = read_file(list, NULL);
    assert_non_null(text);
    json_error_t e;
    json_t *first = json_loadb(text, strcspn(text, "\n"), 0, &e);
    free(text);
    const char *key = json_string_value(json_array_get(first, 1));
    assert_non_null(key);

    struct srv D = {0};
    srv_init(&D);
    D.s3 = false; /* the folder store: where the crash's object is put by hand */
    const char *migrate[] = {"migrate", NULL};
    assert_int_equal(run_cli(&D, NULL, migrate, true, NULL, NULL), 0);
    /* the crashed import's object, half written, and its intent */
    char path[900];
    snprintf(path, sizeof path, "%s/storage/fotos-citas/%s", D.data, key);
    for (char *q = strchr(path + strlen(D.data) + 1, '/'); q; q = strchr(q + 1, '/')) {
        *q = '\0';
        (void)mkdir(path, 0755);
        *q = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("half", f);
    fclose(f);
    char sql[1200];
    snprintf(sql, sizeof sql,
             "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
             "VALUES ('0b7a8c1e-0000-4000-8000-000000000001', 'fotos-citas', '%s', 'put', "
             "'a-gone-node', 999999, '0123456789abcdef', '2026-01-01T00:00:00.000Z')",
             key);
    assert_int_equal(db_exec(&D, sql, NULL), 0);

    char *err = NULL;
    if (cli_in(&D, NULL, "import", "--from", out, &err) != 0) fail_msg("import: %s", err);
    free(err);
    /* the photo is the export's, and nothing is left to finish */
    char src[900];
    snprintf(src, sizeof src, "%s/objects/fotos-citas/%s", out, key);
    size_t want_len = 0, got_len = 0;
    char *want = read_file(src, &want_len), *got = obj_read(&D, key, &got_len);
    assert_non_null(want);
    assert_non_null(got);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
    free(want);
    free(got);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM obj_intents"), 0);
    json_decref(first);
    srv_cleanup(&D);
}

/* An import while a `serve` runs on the target would leave that serve
 * answering from what it read before (the links' key it holds among it):
 * refused while the serve's lease is live, with nothing written, and done
 * once it has stopped. */
static void an_import_while_the_target_serves_is_refused(void **state)
{
    (void)state;
    char out[400];
    snprintf(out, sizeof out, "%s/export-serving", A.s.dir);
    expect_cli_ok(&A.s, NULL, "export", "--to", out);
    struct srv D = {0};
    srv_init(&D);
    D.s3 = false; /* the folder store: the suite's bucket holds these photos already */
    srv_start(&D, NULL, NULL);
    char *err = NULL;
    assert_int_equal(cli_in(&D, NULL, "import", "--from", out, &err), 1);
    if (!err || !strstr(err, "another barberia process is using this data"))
        fail_msg("import: %s", err ? err : "");
    free(err);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM auth_users"), 0);
    assert_int_equal(srv_stop(&D), 0);
    expect_cli_ok(&D, NULL, "import", "--from", out);
    assert_true(db_count(&D, "SELECT count(*) FROM auth_users") > 0);
    srv_cleanup(&D);
}

/* A target whose object store holds photos already (another shop's, in a
 * shared bucket, or ones left by hand) is not empty: refused, nothing
 * written. */
static void an_import_into_a_store_that_holds_photos_is_refused(void **state)
{
    (void)state;
    char out[400];
    snprintf(out, sizeof out, "%s/export-stale", A.s.dir);
    expect_cli_ok(&A.s, NULL, "export", "--to", out);
    struct srv D = {0};
    srv_init(&D);
    D.s3 = false;
    char path[700];
    snprintf(path, sizeof path, "%s/storage", D.data);
    (void)mkdir(D.data, 0755);
    (void)mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/storage/fotos-citas", D.data);
    (void)mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/storage/fotos-citas/zz", D.data);
    (void)mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/storage/fotos-citas/zz/stale.png", D.data);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("someone else's", f);
    fclose(f);
    char *err = NULL;
    assert_int_equal(cli_in(&D, NULL, "import", "--from", out, &err), 1);
    if (!err || !strstr(err, "already holds photos")) fail_msg("import: %s", err ? err : "");
    free(err);
    assert_true(file_exists(path));
    /* the database it made for the import is gone again; the folder store,
     * which was there, stays */
    char db[700];
    snprintf(db, sizeof db, "%s/barberia.db", D.data);
    assert_false(file_exists(db));
    const char *migrate[] = {"migrate", NULL};
    assert_int_equal(run_cli(&D, NULL, migrate, true, NULL, NULL), 0);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM auth_users"), 0);
    assert_int_equal(obj_count(&D, ""), 1);
    srv_cleanup(&D);
}

/* An export of version 1, made by the version before working hours (`barberia
 * export` of a shop with an admin, two barbers and a service). */
#define EXPORT_V1 BARBERIA_TESTS_DIR "/api/data/export-v1"

/* A photo deleted while the export runs (its object gone, its delete
 * intent recorded by the live process deleting it) is left out of the
 * export, as a backup leaves it; an object missing for real (its record
 * stands and nobody deletes it) fails the export, with nothing left. */
static void a_photo_deleted_while_the_export_runs_is_left_out_of_it(void **state)
{
    (void)state;
    char dir[300], missing[300], sql[1400], host[256] = "";
    snprintf(dir, sizeof dir, "%s/export-race", A.s.dir);
    snprintf(missing, sizeof missing, "%s/export-missing", A.s.dir);
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    char *key = db_query(&A.s, "SELECT storage_path FROM fotos_cita ORDER BY id LIMIT 1");
    photo_aside(&A.s, true);
    char *err = NULL;
    assert_int_equal(cli_in(&A.s, NULL, "export", "--to", missing, &err), 1);
    if (!err || !strstr(err, "is missing")) fail_msg("export: %s", err ? err : "");
    free(err);
    assert_false(file_exists(missing));
    /* this test process stands for the deleting one: its lease is live */
    snprintf(sql, sizeof sql,
             "INSERT INTO proc_leases VALUES ('0ddba11a0ddba11a0ddba11a0ddba11a', '%s', %ld, "
             "strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now'), "
             "strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now', '+1 hour'));"
             "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
             "VALUES ('55555555-5555-4555-8555-555555555555', 'fotos-citas', '%s', 'delete', "
             "'%s', %ld, '0ddba11a0ddba11a0ddba11a0ddba11a', '2030-01-01T00:00:00.000Z')",
             host, (long)getpid(), key, host, (long)getpid());
    assert_int_equal(db_exec(&A.s, sql, NULL), 0);
    int status = cli_in(&A.s, NULL, "export", "--to", dir, &err);
    assert_int_equal(db_exec(&A.s,
                             "DELETE FROM obj_intents WHERE id = "
                             "'55555555-5555-4555-8555-555555555555'; DELETE FROM proc_leases "
                             "WHERE instance = '0ddba11a0ddba11a0ddba11a0ddba11a'",
                             NULL),
                     0);
    photo_aside(&A.s, false);
    if (status != 0) fail_msg("export: %s", err ? err : "");
    free(err);
    char path[400];
    snprintf(path, sizeof path, "%s/fotos_cita.jsonl", dir);
    char *rows = read_file(path, NULL);
    assert_non_null(rows);
    assert_null(strstr(rows, key));
    free(rows);
    snprintf(path, sizeof path, "%s/citas.jsonl", dir);
    rows = read_file(path, NULL);
    assert_true(rows && *rows); /* the rest is there */
    free(rows);
    free(key);
}

static const char DEFAULT_WEEK[] =
    "[{\"dia\":1,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{\"dia\":1,\"inicio\":\"16:00\",\"fin\":"
    "\"20:00\"},{\"dia\":2,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{\"dia\":2,\"inicio\":\"16:00\","
    "\"fin\":\"20:00\"},{\"dia\":3,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{\"dia\":3,\"inicio\":"
    "\"16:00\",\"fin\":\"20:00\"},{\"dia\":4,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{\"dia\":4,"
    "\"inicio\":\"16:00\",\"fin\":\"20:00\"},{\"dia\":5,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{"
    "\"dia\":5,\"inicio\":\"16:00\",\"fin\":\"20:00\"},{\"dia\":6,\"inicio\":\"09:00\",\"fin\":"
    "\"14:00\"}]";

static void an_export_of_version_1_loads_with_every_barber_on_the_default_week(void **state)
{
    (void)state;
    struct srv D = {0};
    srv_init(&D); /* this run's backends */
    expect_cli_ok(&D, target_env, "import", "--from", EXPORT_V1);
    srv_start(&D, target_env, NULL);
    struct resp r;
    http_json(&D, "POST", "/api/auth/login", NULL,
              "{\"email\":\"admin@v1.example\",\"password\":\"clave-v1-admin\"}", &r);
    assert_int_equal(r.status, 200);
    char token[128];
    snprintf(token, sizeof token, "%s", jstr(r.json, "token"));
    resp_free(&r);

    /* every barber and service active, every barber on the default week */
    json_t *week = json_loads(DEFAULT_WEEK, 0, NULL);
    http_get(&D, "/api/admin/barberos", token, &r);
    assert_int_equal(r.status, 200);
    json_t *barberos = json_object_get(r.json, "barberos");
    assert_int_equal(json_array_size(barberos), 2);
    size_t i;
    json_t *b;
    json_array_foreach(barberos, i, b)
    {
        assert_true(json_is_true(json_object_get(b, "activo")));
        char path[200];
        struct resp h;
        snprintf(path, sizeof path, "/api/barberos/%s/horario", jstr(b, "id"));
        http_get(&D, path, NULL, &h);
        assert_int_equal(h.status, 200);
        if (!json_equal(json_object_get(h.json, "horario"), week)) fail_msg("%s: %s", path, h.body);
        resp_free(&h);
    }
    resp_free(&r);
    json_decref(week);
    http_get(&D, "/api/admin/servicios", token, &r);
    assert_int_equal(r.status, 200);
    json_t *servicios = json_object_get(r.json, "servicios");
    assert_int_equal(json_array_size(servicios), 1);
    json_t *corte = json_array_get(servicios, 0);
    assert_true(json_is_true(json_object_get(corte, "activo")));
    /* bookable: a weekday has free slots for both barbers */
    char day[11], path[300];
    int wd = date_ahead(20, day);
    for (int d = 21; wd > 5; d++)
        wd = date_ahead(d, day);
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s", jstr(corte, "id"),
             day);
    resp_free(&r);
    http_get(&D, path, NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *huecos = json_object_get(r.json, "huecos");
    assert_int_equal(json_array_size(huecos), 19 + 15); /* from 09:00-13:30, 16:00-19:30 */
    assert_int_equal(json_array_size(json_object_get(json_array_get(huecos, 0), "barberos")), 2);
    resp_free(&r);
    http_get(&D, "/api/admin/ausencias", token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "ausencias")), 0);
    resp_free(&r);

    /* exported again, it is of this version, with the weeks */
    char out[400], manifest[450];
    snprintf(out, sizeof out, "%s/export-from-v1", D.dir);
    expect_cli_ok(&D, target_env, "export", "--to", out);
    snprintf(manifest, sizeof manifest, "%s/manifest.json", out);
    json_error_t e;
    json_t *m = json_load_file(manifest, 0, &e);
    assert_non_null(m);
    assert_int_equal(json_integer_value(json_object_get(m, "version")), 6);
    json_t *t;
    long horarios = -1;
    json_array_foreach(json_object_get(m, "tables"), i, t) if (!strcmp(jstr(t, "name"), "horarios"))
        horarios = (long)json_integer_value(json_object_get(t, "rows"));
    assert_int_equal(horarios, 2 * 11);
    json_decref(m);
    srv_cleanup(&D);
}

/* An export of version 2, made by the version before photo sizes were
 * recorded (`barberia export` of a shop where a client uploaded photos of
 * 12000 and 20000 bytes to her cita). */
#define EXPORT_V2      BARBERIA_TESTS_DIR "/api/data/export-v2"
#define EXPORT_V2_CITA "ef90f72c-172b-4ec8-92b5-28de3a12220f"

static void an_export_of_version_2_loads_each_photos_size_for_the_quota(void **state)
{
    (void)state;
    struct srv D = {0};
    srv_init(&D); /* this run's database */
    /* the photo folder: the export's keys are fixed, and a store shared by
     * every run of the suite would hold them from the run before */
    D.s3 = false;
    expect_cli_ok(&D, NULL, "import", "--from", EXPORT_V2);
    assert_int_equal(db_count(&D, "SELECT sum(bytes) FROM fotos_cita"), 12000 + 20000);
    /* they count 3 + 5 blocks of 4 KiB: a quota of 9 leaves room for one */
    static const char *const env[] = {"BARBERIA_PHOTO_QUOTA_BYTES=36864", NULL};
    srv_start(&D, env, NULL);
    struct resp r;
    http_json(&D, "POST", "/api/auth/login", NULL,
              "{\"email\":\"cliente@v2.example\",\"password\":\"clave-v2-cliente\"}", &r);
    assert_int_equal(r.status, 200);
    struct user u = {0};
    snprintf(u.token, sizeof u.token, "%s", jstr(r.json, "token"));
    resp_free(&r);
    json_decref(upload_photo(&D, &u, EXPORT_V2_CITA, "otra", "x", 1));
    const struct part parts[] = {
        {.name = "file", .data = "y", .len = 1, .filename = "y.png", .type = "image/png"},
        {.name = "cita_id", .data = EXPORT_V2_CITA},
        {.name = "tipo", .data = "una-mas"},
    };
    http_multipart(&D, "/api/fotos", u.token, parts, 3, &r);
    expect_error(&r, 400, "Cuota de fotos superada");
    resp_free(&r);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM fotos_cita"), 3);
    srv_cleanup(&D);
}

/* An export of version 4, made by the version before a WhatsApp consent
 * kept who recorded it (`barberia export` of a shop where two clients gave
 * their consent themselves, and the second then withdrew hers). */
#define EXPORT_V4 BARBERIA_TESTS_DIR "/api/data/export-v4"

/* Her consent as GET /api/auth/me/whatsapp answers it, signed in with
 * email and password on s. */
static json_t *own_consent(const struct srv *s, const char *email, const char *password)
{
    char body[200];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", email, password);
    struct resp r;
    http_json(s, "POST", "/api/auth/login", NULL, body, &r);
    if (r.status != 200) fail_msg("login %s: %ld %s", email, r.status, r.body);
    char token[128];
    snprintf(token, sizeof token, "%s", jstr(r.json, "token"));
    resp_free(&r);
    http_get(s, "/api/auth/me/whatsapp", token, &r);
    if (r.status != 200) fail_msg("consent of %s: %ld %s", email, r.status, r.body);
    json_t *w = json_incref(json_object_get(r.json, "whatsapp"));
    resp_free(&r);
    return w;
}

static void an_export_of_version_4_loads_the_consents_as_the_clients_gave_them(void **state)
{
    (void)state;
    struct srv D = {0};
    srv_init(&D); /* this run's backends */
    expect_cli_ok(&D, target_env, "import", "--from", EXPORT_V4);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM whatsapp_consentimientos"), 2);
    assert_int_equal(
        db_count(&D, "SELECT count(*) FROM whatsapp_consentimientos WHERE registrado_por IS NULL"),
        2);
    srv_start(&D, target_env, NULL);
    json_t *w = own_consent(&D, "cliente@v4.example", "clave-v4-cliente");
    json_t *want = json_loads("{\"acepta\":true,\"telefono\":\"+34612345678\",\"otorgado_en\":"
                              "\"2026-11-26T14:02:08.751Z\",\"retirado_en\":null,"
                              "\"registrado_por\":null}",
                              0, NULL);
    if (!json_equal(w, want)) fail_msg("%s", json_dumps(w, JSON_COMPACT));
    json_decref(w);
    json_decref(want);
    w = own_consent(&D, "retirada@v4.example", "clave-v4-retirada");
    want = json_loads("{\"acepta\":false,\"telefono\":\"+442079460958\",\"otorgado_en\":"
                      "\"2026-11-26T14:02:15.321Z\",\"retirado_en\":\"2026-11-26T14:02:15.358Z\","
                      "\"registrado_por\":null}",
                      0, NULL);
    if (!json_equal(w, want)) fail_msg("%s", json_dumps(w, JSON_COMPACT));
    json_decref(w);
    json_decref(want);
    srv_cleanup(&D);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_shop_moves_to_the_other_backends_and_back_with_nothing_lost),
        cmocka_unit_test(a_damaged_export_or_a_used_target_is_refused_with_nothing_written),
        cmocka_unit_test(an_import_cut_short_by_a_crash_is_finished_and_runs_again),
        cmocka_unit_test(an_import_into_a_store_that_holds_photos_is_refused),
        cmocka_unit_test(an_import_while_the_target_serves_is_refused),
        cmocka_unit_test(a_photo_deleted_while_the_export_runs_is_left_out_of_it),
        cmocka_unit_test(an_export_of_version_1_loads_with_every_barber_on_the_default_week),
        cmocka_unit_test(an_export_of_version_2_loads_each_photos_size_for_the_quota),
        cmocka_unit_test(an_export_of_version_4_loads_the_consents_as_the_clients_gave_them),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
