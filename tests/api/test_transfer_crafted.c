/*
 * test_transfer_crafted.c - `barberia import` of an export someone made by
 * hand, each file's checksum in the manifest made to match: refused before
 * anything is written, with one line saying why, exit 1. The photos go in
 * the photo bucket only (never a bucket the export names), each listed
 * object named by exactly one photo record and each record's object
 * listed; a symbolic link (to /dev/zero: it would never end) or anything
 * but a regular file, a line past the cap and an object larger than a
 * photo may be are refused; two live appointments of a barber may not
 * overlap (SQLite has only the booking's own check); every value is of its
 * column's kind (a time, an id, an integer, not null...) and, where the
 * column holds a set (an appointment's estado, an outbox message's
 * status...), one of its words; a row the schema's checks refuse is named
 * by its file and line. On S3, whose bucket
 * may be shared, an import refused because a key is taken leaves no
 * intent behind, so that no later sweep removes the object it never
 * wrote.
 */
#include "harness.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct fixture A; /* the source: SQLite and a folder, always */
static struct user ana;
static char foto_key[300]; /* the key of her photo */
static int exports;        /* exports made so far, for their names */

static int setup(void **state)
{
    (void)state;
    srv_init(&A.s);
    A.s.s3 = false;
    A.s.dburl[0] = '\0';
    fixture_start(&A, NULL, "Barbero Origen", "Corte Origen", 30, 12.5);
    signup_user(&A.s, &ana, "Ana Origen");
    char *c1 = book(&A.s, &ana, A.barbero, A.servicio, "2032-09-01T10:00:00.000Z", NULL);
    free(book(&A.s, &ana, A.barbero, A.servicio, "2032-09-01T11:00:00.000Z", NULL));
    char bytes[300];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (char)(i * 31 + 5);
    json_t *foto = upload_photo(&A.s, &ana, c1, "antes", bytes, sizeof bytes);
    snprintf(foto_key, sizeof foto_key, "%s", jstr(foto, "storage_path"));
    json_decref(foto);
    free(c1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_stop(&A);
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

/* A fresh export of A. OUT: out (its folder). */
static void export_a(char *out, size_t n)
{
    snprintf(out, n, "%s/export-%d", A.s.dir, ++exports);
    const char *args[] = {"export", "--to", out, NULL};
    char *err = NULL;
    if (run_cli(&A.s, NULL, args, true, NULL, &err) != 0) fail_msg("export: %s", err);
    free(err);
}

static void sha_of(const char *path, char hex[65])
{
    size_t len = 0;
    char *text = read_file(path, &len);
    assert_non_null(text);
    unsigned char d[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(d, (unsigned char *)text, len);
    free(text);
    sodium_bin2hex(hex, 65, d, sizeof d);
}

/* The manifest's SHA-256 of name.jsonl (a table, or "objects") made that
 * of the file as it is now. */
static void refresh(const char *dir, const char *name)
{
    char path[700], file[700], hex[65];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    snprintf(file, sizeof file, "%s/%s.jsonl", dir, name);
    sha_of(file, hex);
    json_error_t e;
    json_t *m = json_load_file(path, 0, &e);
    assert_non_null(m);
    if (!strcmp(name, "objects")) {
        json_object_set_new(json_object_get(m, "objects"), "sha256", json_string(hex));
    } else {
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(m, "tables"), i, t)
        {
            if (!strcmp(json_string_value(json_object_get(t, "name")), name))
                json_object_set_new(t, "sha256", json_string(hex));
        }
    }
    assert_int_equal(json_dump_file(m, path, JSON_INDENT(2)), 0);
    json_decref(m);
}

static void write_text(const char *path, const char *mode, const char *text, size_t len)
{
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* objects.jsonl's only line, as written by the export. */
static json_t *object_line(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/objects.jsonl", dir);
    char *text = read_file(path, NULL);
    assert_non_null(text);
    json_error_t e;
    json_t *o = json_loadb(text, strcspn(text, "\n"), 0, &e);
    free(text);
    assert_non_null(o);
    return o;
}

static void set_objects(const char *dir, json_t *o)
{
    char path[700];
    snprintf(path, sizeof path, "%s/objects.jsonl", dir);
    char *text = json_dumps(o, JSON_COMPACT);
    size_t n = strlen(text);
    text = realloc(text, n + 2);
    text[n] = '\n';
    write_text(path, "w", text, n + 1);
    free(text);
    refresh(dir, "objects");
}

/* The import of dir into a new target (this run's database, and the
 * folder store, whose photos are the target's alone: the S3 test server's
 * bucket is shared) is refused (exit 1, within 60 s), saying needle (NULL:
 * anything), and leaves nothing: no row, no photo, no intent. */
static void expect_refused(const char *dir, const char *needle)
{
    struct srv D = {0};
    srv_init(&D);
    D.s3 = false;
    const char *args[] = {"import", "--from", dir, NULL};
    char *err = NULL;
    int rc = run_cli_within(&D, NULL, args, true, 60000, NULL, &err);
    if (rc != 1 || (needle && (!err || !strstr(err, needle))))
        fail_msg("import of %s: exit %d (want 1, saying \"%s\"): %s", dir, rc, needle ? needle : "",
                 err ? err : "");
    /* one line */
    assert_non_null(err);
    assert_true(strchr(err, '\n') == NULL || strchr(err, '\n') == err + strlen(err) - 1);
    free(err);
    assert_false(obj_exists(&D, foto_key));
    const char *migrate[] = {"migrate", NULL};
    assert_int_equal(run_cli(&D, NULL, migrate, true, NULL, NULL), 0);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM auth_users"), 0);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM fotos_cita"), 0);
    assert_int_equal(db_count(&D, "SELECT count(*) FROM obj_intents"), 0);
    srv_cleanup(&D);
}

static void expect_imported(const char *dir)
{
    struct srv D = {0};
    srv_init(&D);
    D.s3 = false; /* as expect_refused */
    const char *args[] = {"import", "--from", dir, NULL};
    char *err = NULL;
    int rc = run_cli_within(&D, NULL, args, true, 60000, NULL, &err);
    if (rc != 0) fail_msg("import of %s: exit %d: %s", dir, rc, err ? err : "");
    free(err);
    srv_cleanup(&D);
}

/* --- the tests ---------------------------------------------------------------------- */

/* An export whose objects.jsonl names another bucket would have the import
 * create it (public, on S3) and write there, while its clean-up names the
 * photo bucket. */
static void a_photo_in_another_bucket_is_refused(void **state)
{
    (void)state;
    char out[400], from[700], to[700];
    export_a(out, sizeof out);
    snprintf(from, sizeof from, "%s/objects/fotos-citas", out);
    snprintf(to, sizeof to, "%s/objects/planted-bucket", out);
    assert_int_equal(rename(from, to), 0);
    json_t *o = object_line(out);
    json_array_set_new(o, 0, json_string("planted-bucket"));
    set_objects(out, o);
    json_decref(o);
    expect_refused(out, "outside the bucket fotos-citas");
}

/* An object no photo record names would stay in the store for good (no
 * record, no intent); a record whose object is not listed would load
 * without its photo; two entries of one key, or two records naming one
 * object, are not a shop either. */
static void photos_and_objects_must_name_each_other_one_to_one(void **state)
{
    (void)state;
    char out[400], path[900];
    /* one object more, named by nothing */
    export_a(out, sizeof out);
    snprintf(path, sizeof path, "%s/objects/fotos-citas/planted", out);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/objects/fotos-citas/planted/page.html", out);
    write_text(path, "w", "<p>hi</p>", 9);
    char hex[65];
    sha_of(path, hex);
    json_t *o = object_line(out);
    char line[400];
    snprintf(line, sizeof line, "[\"fotos-citas\",\"planted/page.html\",\"text/html\",9,\"%s\"]\n",
             hex);
    snprintf(path, sizeof path, "%s/objects.jsonl", out);
    write_text(path, "a", line, strlen(line));
    refresh(out, "objects");
    expect_refused(out, "no photo's");
    /* the photo's object not listed */
    export_a(out, sizeof out);
    snprintf(path, sizeof path, "%s/objects.jsonl", out);
    write_text(path, "w", "", 0);
    refresh(out, "objects");
    expect_refused(out, "does not list");
    /* listed twice */
    export_a(out, sizeof out);
    char *twice = json_dumps(o, JSON_COMPACT);
    snprintf(path, sizeof path, "%s/objects.jsonl", out);
    write_text(path, "a", twice, strlen(twice));
    write_text(path, "a", "\n", 1);
    free(twice);
    refresh(out, "objects");
    expect_refused(out, "twice");
    json_decref(o);
}

/* hash_file followed links and read to the end: horarios.jsonl linked to
 * /dev/zero hung the import for good. A link to a file of the right bytes
 * is refused too, as is a folder on the way that is a link, and a FIFO. */
static void a_link_or_anything_but_a_file_in_an_export_is_refused(void **state)
{
    (void)state;
    char out[400], path[900], copy[900];
    export_a(out, sizeof out);
    snprintf(path, sizeof path, "%s/horarios.jsonl", out);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink("/dev/zero", path), 0);
    expect_refused(out, "horarios.jsonl in the export is not a regular file");

    export_a(out, sizeof out);
    snprintf(path, sizeof path, "%s/objects/fotos-citas/%s", out, foto_key);
    snprintf(copy, sizeof copy, "%s/elsewhere", out);
    assert_int_equal(rename(path, copy), 0);
    assert_int_equal(symlink(copy, path), 0);
    expect_refused(out, "not a regular file");

    export_a(out, sizeof out);
    snprintf(path, sizeof path, "%s/objects/fotos-citas", out);
    snprintf(copy, sizeof copy, "%s/elsewhere", out);
    assert_int_equal(rename(path, copy), 0);
    assert_int_equal(symlink(copy, path), 0);
    expect_refused(out, "not a regular file");

    export_a(out, sizeof out);
    snprintf(path, sizeof path, "%s/ausencias.jsonl", out);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    expect_refused(out, "ausencias.jsonl in the export is not a regular file");
}

/* getline took a line of any length, and an object of any size was
 * stored. */
static void a_line_or_an_object_past_its_cap_is_refused(void **state)
{
    (void)state;
    char out[400], path[900];
    export_a(out, sizeof out);
    size_t big = (16u << 20) + 10;
    char *text = malloc(big + 1);
    assert_non_null(text);
    memset(text, ' ', big);
    text[big] = '\n';
    snprintf(path, sizeof path, "%s/ausencias.jsonl", out);
    write_text(path, "a", text, big + 1);
    refresh(out, "ausencias");
    expect_refused(out, "a line longer than");

    /* the photo grown past the upload's limit (5 MB), listed with its
     * size and checksum */
    export_a(out, sizeof out);
    snprintf(path, sizeof path, "%s/objects/fotos-citas/%s", out, foto_key);
    size_t photo = 5u * 1024 * 1024 + 1;
    memset(text, 'x', photo);
    write_text(path, "w", text, photo);
    free(text);
    char hex[65];
    sha_of(path, hex);
    json_t *o = object_line(out);
    json_array_set_new(o, 3, json_integer((json_int_t)photo));
    json_array_set_new(o, 4, json_string(hex));
    set_objects(out, o);
    json_decref(o);
    expect_refused(out, "more than a photo may have");
}

/* An appointment doubled under a new id (same barber, same time, live)
 * loaded on SQLite, where PostgreSQL's exclusion constraint refuses it; a
 * cancelled one may overlap, as in the shop. */
static void overlapping_appointments_of_a_barber_are_refused(void **state)
{
    (void)state;
    for (int cancelled = 0; cancelled < 2; cancelled++) {
        char out[400], path[900];
        export_a(out, sizeof out);
        snprintf(path, sizeof path, "%s/citas.jsonl", out);
        char *text = read_file(path, NULL);
        assert_non_null(text);
        json_error_t e;
        json_t *row = json_loadb(text, strcspn(text, "\n"), 0, &e);
        free(text);
        assert_non_null(row);
        json_array_set_new(row, 0, json_string("0b7a8c1e-0000-4000-8000-0000000000aa"));
        json_array_set_new(row, 6, json_string(cancelled ? "cancelada" : "confirmada"));
        char *line = json_dumps(row, JSON_COMPACT);
        json_decref(row);
        write_text(path, "a", line, strlen(line));
        write_text(path, "a", "\n", 1);
        free(line);
        refresh(out, "citas");
        if (cancelled)
            expect_imported(out);
        else /* PostgreSQL's constraint says it first, in its own words */
            expect_refused(out, test_pg() ? NULL : "overlaps another live one");
    }
}

/* The first row of dir/table.jsonl with its column col set to v (taken),
 * the manifest's sum made to match. */
static void set_first_value(const char *dir, const char *table, size_t col, json_t *v)
{
    char path[900];
    snprintf(path, sizeof path, "%s/%s.jsonl", dir, table);
    size_t len = 0;
    char *text = read_file(path, &len);
    assert_non_null(text);
    size_t first = strcspn(text, "\n");
    json_error_t e;
    json_t *row = json_loadb(text, first, 0, &e);
    assert_non_null(row);
    assert_int_equal(json_array_set_new(row, col, v), 0);
    char *line = json_dumps(row, JSON_COMPACT);
    json_decref(row);
    write_text(path, "w", line, strlen(line));
    write_text(path, "a", text + first, len - first);
    free(line);
    free(text);
    refresh(dir, table);
}

/* Nothing checked the values of the rows: on SQLite, whose columns take
 * anything, an appointment starting at "garbage" loaded, was listed so and
 * its slot offered as free; a service lasted "x" minutes (served as 0).
 * Each value not of its column's kind - a time in another form, an
 * integer, an id, a null where the column is NOT NULL, a flag, a price -
 * is refused naming the file, the line and the column, nothing written. */
static void a_value_not_of_its_columns_kind_is_refused(void **state)
{
    (void)state;
    static const struct {
        const char *table;
        size_t col;
        const char *json; /* the value, as JSON */
        const char *says;
    } cases[] = {
        {"citas", 4, "\"garbage\"", "citas.jsonl, line 1, column fecha_inicio: not a time"},
        /* a time, but not in the service's form: it would sort apart */
        {"citas", 5, "\"2032-09-01T10:30:00Z\"",
         "citas.jsonl, line 1, column fecha_fin: not a time"},
        {"citas", 4, "\"2032-02-30T10:00:00.000Z\"", "column fecha_inicio: not a time"},
        {"citas", 2, "\"not-an-id\"", "citas.jsonl, line 1, column barbero_id: not an id"},
        {"citas", 0, "\"0B7A8C1E-0000-4000-8000-0000000000AA\"", "column id: not an id"},
        {"citas", 6, "null",
         "citas.jsonl, line 1, column estado: null, and the column is NOT NULL"},
        {"citas", 10, "\"abc\"", "citas.jsonl, line 1, column precio: not a number"},
        {"servicios", 2, "\"x\"", "servicios.jsonl, line 1, column duracion_min: not an integer"},
        {"servicios", 4, "2", "servicios.jsonl, line 1, column activo: not 0 or 1"},
        {"horarios", 1, "1.5", "horarios.jsonl, line 1, column dia: not an integer"},
        {"perfiles", 4, "{}", "perfiles.jsonl, line 1, column created_at: not a value"},
        {"fotos_cita", 7, "null", "fotos_cita.jsonl, line 1, column bytes: null"},
        /* the links' key: anything else loaded, and then no command (serve,
         * a list, an export) could open the shop ("the stored link key is
         * malformed") */
        {"claves", 1, "\"zz\"", "claves.jsonl, line 1, column valor: not a key (64 lowercase hex"},
        {"claves", 1, "\"6CB988E2EFF5F111A394A86C67DF9A4445EEB4DD3EE6A53300112233445566AA\"",
         "column valor: not a key"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char out[400];
        export_a(out, sizeof out);
        json_error_t e;
        json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, &e);
        assert_non_null(v);
        set_first_value(out, cases[i].table, cases[i].col, v);
        expect_refused(out, cases[i].says);
    }
    /* a row of fewer values than the table's columns */
    char out[400], path[900];
    export_a(out, sizeof out);
    snprintf(path, sizeof path, "%s/barberos.jsonl", out);
    write_text(path, "a", "[\"0b7a8c1e-0000-4000-8000-0000000000ab\",\"B\"]\n", 45);
    refresh(out, "barberos");
    expect_refused(out, "barberos.jsonl, line 2: 2 values, and the table has 4");
    /* what the export wrote, untouched, imports */
    export_a(out, sizeof out);
    expect_imported(out);
}

/* dir/table.jsonl with the row (JSON) added at its end, the manifest's
 * sum made to match. */
static void add_row(const char *dir, const char *table, const char *row)
{
    char path[900];
    snprintf(path, sizeof path, "%s/%s.jsonl", dir, table);
    write_text(path, "a", row, strlen(row));
    write_text(path, "a", "\n", 1);
    refresh(dir, table);
}

/* A WhatsApp message of the outbox, delivered; status and entrega as given. */
#define OUTBOX_ROW(status, entrega)                                                                \
    "[\"0b7a8c1e-0000-4000-8000-0000000000b1\",\"0b7a8c1e-0000-4000-8000-0000000000b2\","          \
    "\"34600111222\",\"Ana\",\"B\",\"S\",\"2032-09-01T10:00:00.000Z\","                            \
    "\"2032-09-01T10:30:00.000Z\",null,\"2032-08-01T10:00:00.000Z\",\"" status "\",1,"             \
    "\"2032-08-01T10:00:00.000Z\",null,null,\"2032-08-01T10:00:01.000Z\",\"confirmacion\",null,"   \
    "null,\"whatsapp\",0,\"wamid.x\",\"" entrega "\",\"2032-08-01T10:00:02.000Z\"]"

/* Only the kind of a state was checked: an export edited to hold an
 * appointment "borrada" imported, and was neither live nor cancelled
 * (the overlap rule and the listings filter by the words); an outbox
 * message "queued" was never sent nor listed as pending. Every column
 * whose values are a domain list (citas.estado, mail_outbox.status, kind,
 * canal and entrega, consentimientos.tipo) refuses any other word, naming
 * the file, the line, the column and the words it takes, nothing written;
 * perfiles.rol stays free text, as the specification stores it. */
static void a_value_outside_its_columns_words_is_refused(void **state)
{
    (void)state;
    char out[400], row[200];
    export_a(out, sizeof out);
    set_first_value(out, "citas", 6, json_string("borrada"));
    expect_refused(out, "citas.jsonl, line 1, column estado: not one of confirmada, cancelada, "
                        "completada, no_presentado");
    export_a(out, sizeof out);
    add_row(out, "mail_outbox", OUTBOX_ROW("queued", "read"));
    expect_refused(out, "mail_outbox.jsonl, line 1, column status: not one of pending, sent, "
                        "dropped, skipped");
    export_a(out, sizeof out);
    add_row(out, "mail_outbox", OUTBOX_ROW("sent", "seen"));
    expect_refused(out, "mail_outbox.jsonl, line 1, column entrega: not one of sent, delivered, "
                        "read, failed");
    export_a(out, sizeof out);
    snprintf(row, sizeof row, "[\"%s\",\"video\",\"2032-08-01T10:00:00.000Z\",null]", ana.id);
    add_row(out, "consentimientos", row);
    expect_refused(out, "column tipo: not one of fotos");
    /* a key under another name loaded beside the target's own, and every
     * link handed out before stopped opening */
    export_a(out, sizeof out);
    set_first_value(out, "claves", 0, json_string("otra"));
    expect_refused(out, "claves.jsonl, line 1, column nombre: not one of enlaces");
    /* each word of its list imports, and so does any rol */
    export_a(out, sizeof out);
    set_first_value(out, "citas", 6, json_string("no_presentado"));
    set_first_value(out, "perfiles", 1, json_string("jefa"));
    add_row(out, "mail_outbox", OUTBOX_ROW("skipped", "failed"));
    snprintf(row, sizeof row, "[\"%s\",\"fotos\",\"2032-08-01T10:00:00.000Z\",null]", ana.id);
    add_row(out, "consentimientos", row);
    expect_imported(out);
}

/* A value of its kind that the schema's CHECK refuses (a service of 0
 * minutes, an appointment ending before it starts, a day 9 of the week)
 * was refused with the database's bare words ("CHECK constraint failed:
 * duracion_min > 0"), no file or line to look at; now they follow the
 * row's file and line, and nothing is written. */
static void a_row_the_schema_refuses_names_its_file_and_line(void **state)
{
    (void)state;
    static const struct {
        const char *table;
        size_t col;
        const char *json;
    } cases[] = {
        {"servicios", 2, "0"},
        {"servicios", 5, "121"},
        {"citas", 5, "\"2032-09-01T09:00:00.000Z\""},
        {"horarios", 1, "9"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char out[400], where[100];
        export_a(out, sizeof out);
        json_error_t e;
        json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, &e);
        assert_non_null(v);
        set_first_value(out, cases[i].table, cases[i].col, v);
        /* then the database's own words, which differ by backend */
        snprintf(where, sizeof where, "%s.jsonl, line 1: ", cases[i].table);
        expect_refused(out, where);
    }
}

/* An S3 bucket may be shared: an import into it that finds one of its keys
 * taken (here by an earlier import of the same export) is refused, and
 * leaves no intent on that key, so that no sweep (serve's, the next
 * import's) removes an object it never wrote. */
static void an_import_refused_by_a_taken_key_leaves_the_object_alone(void **state)
{
    (void)state;
    const char *env[4];
    size_t n = 0;
    if (!test_s3_env(env, &n)) skip();
    char out[400];
    export_a(out, sizeof out);
    struct srv E = {0}, D = {0};
    srv_init(&E);
    E.s3 = true;
    srv_init(&D);
    D.s3 = true;
    const char *args[] = {"import", "--from", out, NULL};
    const char *migrate[] = {"migrate", NULL};
    char *err = NULL;
    if (run_cli(&E, NULL, args, true, NULL, &err) != 0) fail_msg("import: %s", err);
    free(err);
    err = NULL;
    assert_true(obj_exists(&E, foto_key));
    /* a shop made first, so that its database outlives the refusal */
    assert_int_equal(run_cli(&D, NULL, migrate, true, NULL, NULL), 0);
    for (int again = 0; again < 2; again++) {
        assert_int_equal(run_cli(&D, NULL, args, true, NULL, &err), 1);
        if (!err || !strstr(err, "already has")) fail_msg("import: %s", err ? err : "");
        free(err);
        err = NULL;
        assert_int_equal(db_count(&D, "SELECT count(*) FROM obj_intents"), 0);
        assert_int_equal(db_count(&D, "SELECT count(*) FROM fotos_cita"), 0);
        assert_true(obj_exists(&E, foto_key));
    }
    /* E's photo is still E's */
    assert_int_equal(db_count(&E, "SELECT count(*) FROM fotos_cita"), 1);
    srv_cleanup(&D);
    srv_cleanup(&E);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_photo_in_another_bucket_is_refused),
        cmocka_unit_test(photos_and_objects_must_name_each_other_one_to_one),
        cmocka_unit_test(a_link_or_anything_but_a_file_in_an_export_is_refused),
        cmocka_unit_test(a_line_or_an_object_past_its_cap_is_refused),
        cmocka_unit_test(overlapping_appointments_of_a_barber_are_refused),
        cmocka_unit_test(a_value_not_of_its_columns_kind_is_refused),
        cmocka_unit_test(a_value_outside_its_columns_words_is_refused),
        cmocka_unit_test(a_row_the_schema_refuses_names_its_file_and_line),
        cmocka_unit_test(an_import_refused_by_a_taken_key_leaves_the_object_alone),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
