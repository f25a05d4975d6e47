/*
 * test_backup.c - backups and their restore, as docs/operations.md
 * (Backups) tells an operator to take them. On SQLite: `barberia backup`
 * while `serve` runs gives one consistent snapshot (later writes are not in
 * it) that serves as a data folder of its own, and `barberia restore` puts
 * it into an empty deployment. On PostgreSQL: `barberia backup` points at
 * pg_dump, and the documented procedure (pg_dump, pg_restore into a new
 * database, the photo folder copied) gives back the same service. A backup
 * taken before the schema had working hours still restores: its barbers get the
 * default week, as the migration gives it. A backup and an export hold
 * password hashes, sessions and the links' key: the folder each makes is
 * its owner's alone (0700), the files they write in it too (0600),
 * whatever the umask.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct fixture A;
static struct user ana, admin;
static char *foto_path, foto_bytes[200];

static int setup(void **state)
{
    (void)state;
    fixture_start(&A, NULL, "Barbero Copia", "Corte Copia", 30, 11.0);
    make_user(&A.s, &admin, "Admin Copia", "admin");
    signup_user(&A.s, &ana, "Ana Copia");
    char *c1 = book(&A.s, &ana, A.barbero, A.servicio, "2032-10-01T10:00:00.000Z", "antes");
    free(book(&A.s, &ana, A.barbero, A.servicio, "2032-10-02T10:00:00.000Z", NULL));
    for (size_t i = 0; i < sizeof foto_bytes; i++)
        foto_bytes[i] = (char)(i * 17 + 9);
    json_t *foto = upload_photo(&A.s, &ana, c1, "despues", foto_bytes, sizeof foto_bytes);
    foto_path = photo_path(foto);
    json_decref(foto);
    free(c1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(foto_path);
    fixture_stop(&A);
    return 0;
}

static char *listing_text(const struct srv *s)
{
    struct resp r;
    http_get(s, "/api/citas", admin.token, &r);
    assert_int_equal(r.status, 200);
    char *t = json_dumps(json_object_get(r.json, "citas"), JSON_COMPACT);
    resp_free(&r);
    return t;
}

static void expect_photo(const struct srv *s)
{
    struct resp r;
    http_get(s, foto_path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, sizeof foto_bytes);
    assert_memory_equal(r.body, foto_bytes, sizeof foto_bytes);
    resp_free(&r);
}

static int cli(const struct srv *s, const char *cmd, const char *flag, const char *dir, char **err)
{
    const char *args[] = {cmd, flag, dir, NULL};
    return run_cli(s, NULL, args, true, NULL, err);
}

/* A new folder dir holding one small file, name. */
static void folder_with(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(mkdir(dir, 0755), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("no es una copia\n", f);
    fclose(f);
}

static void sqlite_backup_while_serving_and_restore(void)
{
    char *at_backup = listing_text(&A.s);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/backup", A.s.dir);
    char *err = NULL;
    if (cli(&A.s, "backup", "--to", dir, &err) != 0) fail_msg("backup: %s", err);
    free(err);
    /* written after the backup: not in it */
    free(book(&A.s, &ana, A.barbero, A.servicio, "2032-10-03T10:00:00.000Z", NULL));
    assert_int_equal(cli(&A.s, "backup", "--to", dir, &err), 1); /* a new folder only */
    assert_non_null(strstr(err, "not empty"));
    free(err);
    /* or an empty one: not one that holds anybody else's files */
    char other[300];
    snprintf(other, sizeof other, "%s/otra", A.s.dir);
    folder_with(other, "notas.txt");
    assert_int_equal(cli(&A.s, "backup", "--to", other, &err), 1);
    assert_non_null(strstr(err, "not empty"));
    free(err);
    assert_int_equal(count_files(other), 1);
    /* a backup that fails (a photo gone from the folder store) takes back
     * what it wrote: the same command runs again once the cause is mended */
    if (!A.s.s3) {
        char again[400];
        snprintf(again, sizeof again, "%s/backup-again", A.s.dir);
        photo_aside(&A.s, true);
        assert_int_equal(cli(&A.s, "backup", "--to", again, &err), 1);
        free(err);
        assert_false(file_exists(again));
        photo_aside(&A.s, false);
        if (cli(&A.s, "backup", "--to", again, &err) != 0) fail_msg("backup: %s", err);
        free(err);
    }

    /* the backup is a data folder: serve runs on it as it is */
    struct srv B;
    srv_init_peer(&B, &A.s);
    snprintf(B.data, sizeof B.data, "%s", dir);
    srv_start(&B, NULL, NULL);
    char *from_backup = listing_text(&B);
    assert_string_equal(at_backup, from_backup);
    expect_photo(&B);
    srv_cleanup(&B);

    /* restored into an empty deployment: not while a serve runs on it
     * (its open database would be replaced under it) */
    struct srv C = {0};
    srv_init(&C);
    srv_start(&C, NULL, NULL);
    assert_int_equal(cli(&C, "restore", "--from", dir, &err), 1);
    if (!err || !strstr(err, "another barberia process is using this data"))
        fail_msg("restore: %s", err ? err : "");
    free(err);
    assert_int_equal(srv_stop(&C), 0);
    if (cli(&C, "restore", "--from", dir, &err) != 0) fail_msg("restore: %s", err);
    free(err);
    srv_start(&C, NULL, NULL);
    char *restored = listing_text(&C);
    assert_string_equal(at_backup, restored);
    expect_photo(&C);
    struct resp r;
    http_get(&C, "/api/auth/me", ana.token, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    srv_stop(&C);
    /* never over data */
    assert_int_equal(cli(&C, "restore", "--from", dir, &err), 1);
    assert_non_null(strstr(err, "already holds data"));
    free(err);
    srv_cleanup(&C);
    /* a backup is no export, nor an export a backup: refused before the
     * target is made */
    struct srv E = {0};
    srv_init(&E);
    assert_int_equal(cli(&E, "import", "--from", dir, &err), 1);
    assert_non_null(strstr(err, "holds no export (no manifest.json there)"));
    free(err);
    char ex[300];
    snprintf(ex, sizeof ex, "%s/export", A.s.dir);
    assert_int_equal(cli(&A.s, "export", "--to", ex, &err), 0);
    free(err);
    assert_int_equal(cli(&E, "restore", "--from", ex, &err), 1);
    assert_non_null(strstr(err, "holds no backup (no barberia.db there)"));
    free(err);
    assert_false(file_exists(E.data));
    srv_cleanup(&E);
    free(at_backup);
    free(from_backup);
    free(restored);
}

/* docs/operations.md, Backups, on PostgreSQL */
static void pg_dump_procedure(void)
{
    char *err = NULL;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/backup", A.s.dir);
    assert_int_equal(cli(&A.s, "backup", "--to", dir, &err), 1);
    assert_non_null(strstr(err, "Backups"));
    free(err);
    assert_false(file_exists(dir)); /* said before anything is made */
    /* a restore too, whatever the target holds, before a photo is copied */
    char fake[400];
    snprintf(fake, sizeof fake, "%s/not-a-pg-backup", A.s.dir);
    folder_with(fake, "barberia.db");
    assert_int_equal(cli(&A.s, "restore", "--from", fake, &err), 1);
    assert_non_null(strstr(err, "own restore tools"));
    free(err);

    char *at_backup = listing_text(&A.s);
    char dump[400];
    snprintf(dump, sizeof dump, "%s/barberia.dump", A.s.dir);
    const char *d[] = {
        "/usr/bin/pg_dump", "--format=custom", "--file", dump, "-d", A.s.dburl, NULL};
    if (run_program(d, NULL, 120000, NULL, &err) != 0) fail_msg("pg_dump: %s", err);
    free(err);
    /* a new deployment: its own (empty) database and data folder */
    struct srv B = {0};
    srv_init(&B);
    /* a restore tried on the new database first is refused before it is
     * opened: nothing of it there to stand in pg_restore's way */
    assert_int_equal(cli(&B, "restore", "--from", fake, &err), 1);
    assert_non_null(strstr(err, "own restore tools"));
    free(err);
    const char *r[] = {
        "/usr/bin/pg_restore", "--no-owner", "--exit-on-error", "-d", B.dburl, dump, NULL};
    if (run_program(r, NULL, 120000, NULL, &err) != 0) fail_msg("pg_restore: %s", err);
    free(err);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp -a '%s/storage' '%s/'", B.data, A.s.data,
             B.data);
    assert_int_equal(system(cmd), 0);
    srv_start(&B, NULL, NULL);
    char *restored = listing_text(&B);
    assert_string_equal(at_backup, restored);
    expect_photo(&B);
    srv_cleanup(&B);
    free(at_backup);
    free(restored);
}

static void a_backup_gives_back_the_same_service(void **state)
{
    (void)state;
    if (test_pg())
        pg_dump_procedure();
    else
        sqlite_backup_while_serving_and_restore();
}

/* The backup's database taken back to the schema before bookable hours (version
 * 6: no activo, no horarios, no ausencias, no outbox kinds, the overlap
 * index of then, no catalog version, no photo sizes, no account links,
 * account mail or consents, no prices kept, no links' key, no waiting
 * list nor its freed slots, no WhatsApp, no front desk, no links'
 * generations), as a backup
 * of that version holds it. */
static void as_before_the_hours(const char *dir)
{
    struct srv old = {0};
    snprintf(old.dir, sizeof old.dir, "%s", A.s.dir);
    snprintf(old.data, sizeof old.data, "%s", dir);
    assert_int_equal(db_exec(&old,
                             "DROP TABLE enlaces_cliente; DROP TABLE whatsapp_envios; "
                             "DROP TABLE espera_liberaciones; "
                             "DROP TABLE whatsapp_consentimientos; "
                             "DROP INDEX mail_outbox_proveedor; "
                             "DROP INDEX mail_outbox_recordatorio_canal; "
                             "ALTER TABLE mail_outbox DROP COLUMN canal; "
                             "ALTER TABLE mail_outbox DROP COLUMN antelacion_min; "
                             "ALTER TABLE mail_outbox DROP COLUMN proveedor_id; "
                             "ALTER TABLE mail_outbox DROP COLUMN entrega; "
                             "ALTER TABLE mail_outbox DROP COLUMN entrega_at; "
                             "CREATE UNIQUE INDEX mail_outbox_recordatorio ON "
                             "mail_outbox(cita_id, fecha_inicio) WHERE kind = 'recordatorio'; "
                             "DROP TABLE cuenta_tokens; DROP TABLE cuenta_correo; "
                             "DROP TABLE consentimientos; DROP INDEX mail_outbox_recipient; "
                             "ALTER TABLE auth_users DROP COLUMN eliminado_en; "
                             "DROP INDEX citas_informe; ALTER TABLE citas DROP COLUMN precio; "
                             "DROP TABLE barbero_contactos; "
                             "DROP INDEX fotos_cita_cliente; "
                             "ALTER TABLE fotos_cita DROP COLUMN bytes; "
                             "DROP TABLE claves; DROP TABLE lista_espera_avisos; "
                             "DROP TABLE lista_espera; ALTER TABLE mail_outbox DROP COLUMN enlace; "
                             "ALTER TABLE servicios DROP COLUMN margen_min; "
                             "ALTER TABLE citas DROP COLUMN asistencia_en; "
                             "DROP TRIGGER barberos_alta; DROP TRIGGER barberos_cambio; "
                             "DROP TRIGGER barberos_baja; DROP TRIGGER servicios_alta; "
                             "DROP TRIGGER servicios_cambio; DROP TRIGGER servicios_baja; "
                             "DROP TABLE catalogo_version; "
                             "DROP INDEX citas_barbero_inicio; CREATE INDEX citas_barbero_fin "
                             "ON citas(barbero_id, fecha_fin, fecha_inicio, estado); "
                             "DROP TABLE horarios; DROP TABLE ausencias; "
                             "DROP INDEX mail_outbox_cita; DROP INDEX mail_outbox_recordatorio; "
                             "ALTER TABLE mail_outbox DROP COLUMN kind; "
                             "ALTER TABLE mail_outbox DROP COLUMN due_at; "
                             "ALTER TABLE barberos DROP COLUMN activo; "
                             "ALTER TABLE servicios DROP COLUMN activo; PRAGMA user_version = 6;",
                             NULL),
                     0);
    assert_int_equal(db_count(&old, "SELECT count(*) FROM sqlite_master WHERE name = 'horarios'"),
                     0);
}

static void a_backup_from_before_the_hours_restores_with_the_default_week(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* backups are SQLite's (PostgreSQL: pg_dump) */
    char dir[300];
    snprintf(dir, sizeof dir, "%s/backup-v6", A.s.dir);
    char *err = NULL;
    if (cli(&A.s, "backup", "--to", dir, &err) != 0) fail_msg("backup: %s", err);
    free(err);
    as_before_the_hours(dir);
    char *at_backup = listing_text(&A.s);

    struct srv C = {0};
    srv_init(&C);
    if (cli(&C, "restore", "--from", dir, &err) != 0) fail_msg("restore: %s", err);
    free(err);
    srv_start(&C, NULL, NULL);
    char *restored = listing_text(&C);
    assert_string_equal(at_backup, restored);
    expect_photo(&C);
    char path[200];
    snprintf(path, sizeof path, "/api/barberos/%s/horario", A.barbero);
    struct resp r;
    http_get(&C, path, NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *week = json_object_get(r.json, "horario");
    assert_int_equal(json_array_size(week), 11); /* Monday to Friday twice, Saturday once */
    assert_string_equal(jstr(json_array_get(week, 0), "inicio"), "09:00");
    assert_string_equal(jstr(json_array_get(week, 10), "fin"), "14:00");
    resp_free(&r);
    http_get(&C, "/api/admin/barberos", admin.token, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(
        json_object_get(json_array_get(json_object_get(r.json, "barberos"), 0), "activo")));
    resp_free(&r);
    srv_cleanup(&C);
    free(at_backup);
    free(restored);
}

/* A backup of A's shop in dir, and a server for its database (for db_exec). */
static void backup_of_a(const char *dir, struct srv *bk)
{
    char *err = NULL;
    if (cli(&A.s, "backup", "--to", dir, &err) != 0) fail_msg("backup: %s", err);
    free(err);
    memset(bk, 0, sizeof *bk);
    snprintf(bk->dir, sizeof bk->dir, "%s", A.s.dir);
    snprintf(bk->data, sizeof bk->data, "%s", dir);
}

/* restore --from dir into a new deployment: refused (exit 1) with why in
 * its message, and nothing of the target made. */
static void restore_refused(const char *dir, const char *why)
{
    struct srv C = {0};
    srv_init(&C);
    char *err = NULL;
    assert_int_equal(cli(&C, "restore", "--from", dir, &err), 1);
    if (!err || !strstr(err, why)) fail_msg("restore: expected \"%s\" in: %s", why, err);
    const char *nl = strchr(err, '\n');
    assert_true(!nl || !nl[1]); /* one line */
    free(err);
    assert_false(file_exists(C.data));
    srv_cleanup(&C);
}

/* A crafted backup whose photo folder is a link to another folder of the
 * machine (its database naming a file there as a photo) would copy that
 * file into the restored shop's public bucket: refused, as is one whose
 * storage/ or barberia.db is a link. */
static void a_backup_with_links_in_it_is_refused(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* backups are SQLite's (PostgreSQL: pg_dump) */
    char dir[300], out[300], cmd[2400];
    snprintf(dir, sizeof dir, "%s/backup-links", A.s.dir);
    snprintf(out, sizeof out, "%s/elsewhere", A.s.dir);
    struct srv bk;
    backup_of_a(dir, &bk);
    folder_with(out, "secret.txt");
    assert_int_equal(db_exec(&bk, "UPDATE fotos_cita SET storage_path = 'secret.txt'", NULL), 0);
    snprintf(cmd, sizeof cmd,
             "rm -r '%s/storage/fotos-citas' && ln -s '%s' '%s/storage/fotos-citas'", dir, out,
             dir);
    assert_int_equal(system(cmd), 0);
    restore_refused(dir, "storage/fotos-citas is a symbolic link");

    snprintf(cmd, sizeof cmd, "mv '%s/storage' '%s/st' && ln -s '%s/st' '%s/storage'", dir, out,
             out, dir);
    assert_int_equal(system(cmd), 0);
    restore_refused(dir, "storage is a symbolic link");

    snprintf(cmd, sizeof cmd,
             "rm '%s/storage' && mv '%s/st' '%s/storage' && mv '%s/barberia.db' '%s/' && "
             "ln -s '%s/barberia.db' '%s/barberia.db'",
             dir, out, dir, dir, out, out, dir);
    assert_int_equal(system(cmd), 0);
    restore_refused(dir, "barberia.db is a symbolic link");
}

/* A backup's database holds exactly the schema the migrations make: one
 * that brings a trigger of its own (every sign-up made an administrator),
 * a view, a table or an index is refused before anything is made. */
static void a_backup_with_a_schema_of_its_own_is_refused(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* backups are SQLite's (PostgreSQL: pg_dump) */
    static const struct {
        const char *plant, *undo, *said;
    } cases[] = {
        {"CREATE TRIGGER zz_audit AFTER INSERT ON perfiles BEGIN UPDATE perfiles SET rol = "
         "'admin' WHERE id = NEW.id; END",
         "DROP TRIGGER zz_audit", "holds the trigger zz_audit"},
        {"CREATE VIEW zz_view AS SELECT id FROM perfiles", "DROP VIEW zz_view",
         "holds the view zz_view"},
        {"CREATE TABLE zz_table (x TEXT)", "DROP TABLE zz_table", "holds the table zz_table"},
        {"CREATE INDEX zz_index ON perfiles(rol)", "DROP INDEX zz_index", "the index zz_index"},
        /* a trigger of the schema's own, redefined */
        {"DROP TRIGGER barberos_alta; CREATE TRIGGER barberos_alta AFTER INSERT ON barberos "
         "BEGIN SELECT 1; END",
         NULL, "the trigger barberos_alta"},
    };
    char dir[300];
    snprintf(dir, sizeof dir, "%s/backup-schema", A.s.dir);
    struct srv bk;
    backup_of_a(dir, &bk);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        assert_int_equal(db_exec(&bk, cases[i].plant, NULL), 0);
        restore_refused(dir, cases[i].said);
        if (cases[i].undo) assert_int_equal(db_exec(&bk, cases[i].undo, NULL), 0);
    }
}

/* A backup's rows were copied whatever they held: a links' key that is no
 * key restored, and then no command opened the shop again ("the stored
 * link key is malformed": serve, user list, export alike); an appointment
 * "borrada" was neither live nor cancelled. Every row is checked as an
 * import checks an export's, before anything is made: refused naming the
 * table, the row and the column. */
static void a_backup_whose_rows_no_version_writes_is_refused(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* backups are SQLite's (PostgreSQL: pg_dump) */
    static const struct {
        const char *plant, *undo, *said;
    } cases[] = {
        {"UPDATE claves SET valor = 'zz' || valor", "UPDATE claves SET valor = substr(valor, 3)",
         "its table claves, row 1 (in key order), column valor: not a key"},
        {"UPDATE citas SET estado = 'borrada'", "UPDATE citas SET estado = 'confirmada'",
         "column estado: not one of confirmada, cancelada, completada, no_presentado"},
        {"UPDATE citas SET created_at = '2032-09-01 10:00'", NULL, "column created_at: not a time"},
    };
    char dir[300];
    snprintf(dir, sizeof dir, "%s/backup-rows", A.s.dir);
    struct srv bk;
    backup_of_a(dir, &bk);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        assert_int_equal(db_exec(&bk, cases[i].plant, NULL), 0);
        restore_refused(dir, cases[i].said);
        if (cases[i].undo) assert_int_equal(db_exec(&bk, cases[i].undo, NULL), 0);
    }
}

/* The object intents and process leases in a backup are those of the
 * processes of the shop it was taken from: the restored shop starts
 * without them, so that its first sweep finishes none (a planted delete
 * intent would remove a photo, in a shared bucket another shop's). */
static void a_restored_shop_holds_no_intents_of_the_backups_processes(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* backups are SQLite's (PostgreSQL: pg_dump) */
    char dir[300];
    snprintf(dir, sizeof dir, "%s/backup-intents", A.s.dir);
    struct srv bk;
    backup_of_a(dir, &bk);
    const char *key = strstr(foto_path, "fotos-citas/") + strlen("fotos-citas/");
    char sql[1200];
    snprintf(sql, sizeof sql,
             "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
             "VALUES ('33333333-3333-4333-8333-333333333333', 'fotos-citas', '%s', 'delete', "
             "'elsewhere', 1, '', '2030-01-01T00:00:00Z'); "
             "INSERT INTO proc_leases (instance, node, pid, started_at, heartbeat_at) VALUES "
             "('0123456789abcdef0123456789abcdef', 'elsewhere', 1, '2030-01-01T00:00:00Z', "
             "'2030-01-01T00:00:00Z')",
             key);
    assert_int_equal(db_exec(&bk, sql, NULL), 0);
    struct srv C = {0};
    srv_init(&C);
    char *err = NULL;
    if (cli(&C, "restore", "--from", dir, &err) != 0) fail_msg("restore: %s", err);
    free(err);
    assert_int_equal(db_count(&C, "SELECT count(*) FROM obj_intents"), 0);
    assert_int_equal(db_count(&C, "SELECT count(*) FROM proc_leases"), 0);
    srv_start(&C, NULL, NULL);
    expect_photo(&C);
    srv_cleanup(&C);
}

/* A restore into a shared S3 bucket that meets an object it did not write
 * (another shop's, at a key the backup names) fails, and leaves no intent
 * on that key: no later sweep (the next restore's first step) removes the
 * other shop's photo. Only what the restore stored is ever taken back. */
static void a_failed_restore_never_removes_an_object_it_did_not_write(void **state)
{
    (void)state;
    const char *env[4];
    size_t n = 0;
    if (test_pg() || !test_s3_env(env, &n)) skip(); /* needs the S3 test server */
    char dir[300], sql[400], cmd[1600];
    snprintf(dir, sizeof dir, "%s/backup-shared", A.s.dir);
    struct srv bk;
    backup_of_a(dir, &bk);
    /* a key of its own on every run: the test server's bucket outlives it */
    char key[128];
    snprintf(key, sizeof key, "compartido-%ld-%lld/f.png", (long)getpid(), (long long)time(NULL));
    char *old = db_query(&bk, "SELECT storage_path FROM fotos_cita LIMIT 1");
    snprintf(sql, sizeof sql, "UPDATE fotos_cita SET storage_path = '%s'", key);
    assert_int_equal(db_exec(&bk, sql, NULL), 0);
    snprintf(cmd, sizeof cmd,
             "cd '%s/storage/fotos-citas' && mkdir -p \"$(dirname '%s')\" && mv '%s' '%s'", dir,
             key, old, key);
    assert_int_equal(system(cmd), 0);
    free(old);

    /* the other shop: the backup restored into the bucket first */
    struct srv other = {0}, target = {0};
    srv_init(&other);
    other.s3 = true;
    char *err = NULL;
    if (cli(&other, "restore", "--from", dir, &err) != 0) fail_msg("restore: %s", err);
    free(err);
    assert_true(obj_exists(&other, key));
    /* then into a shop of its own (made first: its database stays) */
    srv_init(&target);
    target.s3 = true;
    const char *migrate[] = {"migrate", NULL};
    assert_int_equal(run_cli(&target, NULL, migrate, true, NULL, NULL), 0);
    assert_int_equal(cli(&target, "restore", "--from", dir, &err), 1);
    assert_non_null(strstr(err, "already has"));
    free(err);
    assert_int_equal(db_count(&target, "SELECT count(*) FROM obj_intents"), 0);
    assert_int_equal(cli(&target, "restore", "--from", dir, &err), 1); /* sweeps first */
    free(err);
    assert_true(obj_exists(&other, key));
    srv_cleanup(&other);
    srv_cleanup(&target);
}

/* A photo deleted while a backup runs (its object gone from the store after
 * the snapshot was taken) is left out of the backup, which goes on; only a
 * missing object whose record still stands fails it. The deletion is held
 * at the instant a sweep would see it mid-way: its delete intent recorded
 * by a live process, its object gone. */
static void a_photo_deleted_while_the_backup_runs_is_left_out_of_it(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* backups are SQLite's (PostgreSQL: pg_dump) */
    char dir[300], sql[1400], host[256] = "";
    snprintf(dir, sizeof dir, "%s/backup-race", A.s.dir);
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    char *key = db_query(&A.s, "SELECT storage_path FROM fotos_cita ORDER BY id LIMIT 1");
    photo_aside(&A.s, true);
    /* this test process stands for the deleting one: alive, so no sweep
     * finishes the intent meanwhile */
    snprintf(sql, sizeof sql,
             "INSERT INTO proc_leases VALUES ('feedfacefeedfacefeedfacefeedface', '%s', %ld, "
             "strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now'), "
             "strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now', '+1 hour'));"
             "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
             "VALUES ('44444444-4444-4444-8444-444444444444', 'fotos-citas', '%s', 'delete', "
             "'%s', %ld, 'feedfacefeedfacefeedfacefeedface', '2030-01-01T00:00:00.000Z')",
             host, (long)getpid(), key, host, (long)getpid());
    assert_int_equal(db_exec(&A.s, sql, NULL), 0);
    char *err = NULL;
    int status = cli(&A.s, "backup", "--to", dir, &err);
    assert_int_equal(db_exec(&A.s,
                             "DELETE FROM obj_intents WHERE id = "
                             "'44444444-4444-4444-8444-444444444444'; DELETE FROM proc_leases "
                             "WHERE instance = 'feedfacefeedfacefeedfacefeedface'",
                             NULL),
                     0);
    photo_aside(&A.s, false);
    if (status != 0) fail_msg("backup: %s", err);
    free(err);
    struct srv bk = {0};
    snprintf(bk.dir, sizeof bk.dir, "%s", A.s.dir);
    snprintf(bk.data, sizeof bk.data, "%s", dir);
    assert_int_equal(
        db_count(&bk, "SELECT count(*) FROM fotos_cita WHERE storage_path = '%s'", key), 0);
    assert_true(db_count(&bk, "SELECT count(*) FROM citas") > 0); /* the rest is there */
    free(key);
}

/* The entries under a folder whose mode lets anyone but the owner in,
 * counted (nftw's callback takes no argument of its own). */
static int open_to_others;
static int walked;

static int count_open(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)flag;
    (void)ftw;
    walked++;
    if (sb->st_mode & 077) {
        open_to_others++;
        print_message("open to others: %s (%o)\n", path, (unsigned)(sb->st_mode & 07777));
    }
    return 0;
}

/* The permission bits of path (-1 when it is missing). */
static int mode_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
}

static void an_export_and_a_backup_are_their_owners_alone_whatever_the_umask(void **state)
{
    (void)state;
    mode_t was = umask(0); /* the commands inherit it: nothing left to the umask */
    char dir[400], path[500], *err = NULL;

    snprintf(dir, sizeof dir, "%s/export-private", A.s.dir);
    if (cli(&A.s, "export", "--to", dir, &err) != 0) fail_msg("export: %s", err);
    free(err);
    assert_int_equal(mode_of(dir), 0700);
    snprintf(path, sizeof path, "%s/claves.jsonl", dir);
    assert_int_equal(mode_of(path), 0600);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    assert_int_equal(mode_of(path), 0600);
    open_to_others = walked = 0;
    assert_int_equal(nftw(dir, count_open, 16, FTW_PHYS), 0);
    assert_int_equal(open_to_others, 0);
    assert_true(walked > 5); /* the tables, the objects' folders and the photo */

    snprintf(dir, sizeof dir, "%s/backup-private", A.s.dir);
    snprintf(path, sizeof path, "%s/barberia.db", dir);
    if (test_pg()) {
        /* refused (pg_dump's job), with nothing made */
        assert_int_equal(cli(&A.s, "backup", "--to", dir, &err), 1);
        free(err);
        assert_int_equal(mode_of(dir), -1);
        assert_int_equal(mode_of(path), -1);
    } else {
        if (cli(&A.s, "backup", "--to", dir, &err) != 0) fail_msg("backup: %s", err);
        free(err);
        assert_int_equal(mode_of(dir), 0700);
        assert_int_equal(mode_of(path), 0600);
        snprintf(path, sizeof path, "%s/barberia.db-journal", dir);
        assert_int_equal(mode_of(path), -1);
    }
    umask(was);
}

/* A data folder the operator made, open to others (a container volume,
 * mkdir with the usual umask): the database serve or migrate creates in it
 * is still its owner's alone, and so are its -wal and -shm. */
static void a_new_database_is_its_owners_alone_whatever_the_folder(void **state)
{
    (void)state;
    if (test_pg()) return; /* PostgreSQL keeps its own files */
    mode_t was = umask(0);
    char dir[400], path[500], *err = NULL;
    snprintf(dir, sizeof dir, "%s/operator-made", A.s.dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    const char *args[] = {"migrate", "--data", dir, NULL};
    if (run_cli(&A.s, NULL, args, false, NULL, &err) != 0) fail_msg("migrate: %s", err);
    free(err);
    snprintf(path, sizeof path, "%s/barberia.db", dir);
    assert_int_equal(mode_of(path), 0600);
    static const char *const side[] = {"-wal", "-shm"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/barberia.db%s", dir, side[i]);
        int m = mode_of(path);
        assert_true(m == -1 || m == 0600); /* gone once the last connection closed */
    }
    umask(was);
}

int main(void)
{
    test_folder_store(); /* the SQLite backup copies the photo folder beside the database */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_backup_gives_back_the_same_service),
        cmocka_unit_test(a_backup_from_before_the_hours_restores_with_the_default_week),
        cmocka_unit_test(a_backup_with_links_in_it_is_refused),
        cmocka_unit_test(a_backup_with_a_schema_of_its_own_is_refused),
        cmocka_unit_test(a_backup_whose_rows_no_version_writes_is_refused),
        cmocka_unit_test(a_restored_shop_holds_no_intents_of_the_backups_processes),
        cmocka_unit_test(a_failed_restore_never_removes_an_object_it_did_not_write),
        cmocka_unit_test(a_photo_deleted_while_the_backup_runs_is_left_out_of_it),
        cmocka_unit_test(an_export_and_a_backup_are_their_owners_alone_whatever_the_umask),
        cmocka_unit_test(a_new_database_is_its_owners_alone_whatever_the_folder),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
