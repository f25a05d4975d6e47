/*
 * test_cli.c - the `barberia` command line as the contract states it:
 * --help and --version, exit statuses 0/1/2 with one-line errors and
 * nothing written on bad arguments, what add and list commands print, the
 * CLI beside a running `serve`, and `migrate` creating the schema.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------------------ */

/* Runs argv (NULL-terminated) with no --data added. */
static int cli(const struct srv *s, char **out, char **err, const char *const *argv)
{
    return run_cli(s, NULL, argv, false, out, err);
}

static bool db_exists(const struct srv *s)
{
    if (test_pg())
        return db_count(s, "SELECT count(*) FROM information_schema.tables WHERE "
                           "table_schema = 'public' AND table_name = 'perfiles'") == 1;
    char p[400];
    snprintf(p, sizeof p, "%s/barberia.db", s->data);
    return file_exists(p);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (*s == '\n') n++;
    return n;
}

static size_t count_char(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        if (*s == c) n++;
    return n;
}

static void print_argv(const char *const *argv)
{
    fprintf(stderr, "command:");
    for (; *argv; argv++)
        fprintf(stderr, " '%s'", *argv);
    fprintf(stderr, "\n");
}

/* Asserts exit status `want`, nothing on stdout, and exactly one line on
 * stderr starting with "barberia: ". */
static void expect_refusal(const struct srv *s, int want, const char *const *argv)
{
    char *out = NULL, *err = NULL;
    int st = cli(s, &out, &err, argv);
    if (st != want || strcmp(out, "") || count_lines(err) != 1 || err[strlen(err) - 1] != '\n' ||
        strncmp(err, "barberia: ", 10)) {
        print_argv(argv);
        fail_msg("expected exit %d, one stderr line and no stdout; got %d\nstdout: %s\nstderr: %s",
                 want, st, out, err);
    }
    free(out);
    free(err);
}

/* Runs a command expected to succeed; returns stdout (caller frees). */
static char *expect_ok(const struct srv *s, const char *const *argv)
{
    char *out = NULL, *err = NULL;
    int st = cli(s, &out, &err, argv);
    if (st != 0) {
        print_argv(argv);
        fail_msg("exit %d: %s", st, err);
    }
    free(err);
    return out;
}

/* Asserts out is one lowercase UUID and a newline; returns it (static). */
static const char *expect_id_line(const char *out)
{
    static char id[40];
    if (strlen(out) != 37 || out[36] != '\n') fail_msg("expected an id line, got '%s'", out);
    memcpy(id, out, 36);
    id[36] = '\0';
    assert_true(is_lower_uuid(id));
    return id;
}

/* Row counts of the tables a CLI command could write. */
static char *counts(const struct srv *s)
{
    return db_query(s, "SELECT (SELECT count(*) FROM auth_users), (SELECT count(*) FROM perfiles), "
                       "(SELECT count(*) FROM barberos), (SELECT count(*) FROM servicios)");
}

/* --- help and version ------------------------------------------------------------------- */

static void help_and_version_exit_0(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    char *out = NULL, *err = NULL;
    const char *help[] = {"--help", NULL};
    assert_int_equal(cli(&s, &out, &err, help), 0);
    assert_non_null(strstr(out, "Usage: barberia COMMAND"));
    assert_string_equal(err, "");
    free(out);
    free(err);
    const char *version[] = {"--version", NULL};
    assert_int_equal(cli(&s, &out, &err, version), 0);
    assert_true(!strncmp(out, "barberia ", 9));
    assert_int_equal(count_lines(out), 1);
    assert_string_equal(err, "");
    free(out);
    free(err);
    const char *version_and_more[] = {"--version", "extra", NULL};
    assert_int_equal(cli(&s, &out, &err, version_and_more), 2);
    assert_string_equal(out, "");
    assert_int_equal(count_lines(err), 1);
    free(out);
    free(err);
    static const char *const cmds[][4] = {
        {"serve", "--help", NULL},
        {"migrate", "--help", NULL},
        {"user", "--help", NULL},
        {"user", "add", "--help", NULL},
        {"user", "list", "--help", NULL},
        {"user", "password", "--help", NULL},
        {"barbero", "--help", NULL},
        {"barbero", "add", "--help", NULL},
        {"barbero", "list", "--help", NULL},
        {"servicio", "--help", NULL},
        {"servicio", "add", "--help", NULL},
        {"servicio", "list", "--help", NULL},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "Usage: barberia %s", cmds[i][0]);
        assert_int_equal(cli(&s, &out, &err, cmds[i]), 0);
        if (!strstr(out, want)) {
            print_argv(cmds[i]);
            fail_msg("no '%s' in: %s", want, out);
        }
        assert_string_equal(err, "");
        /* a number's range beside its default, so it is known before a refusal */
        if (!strcmp(cmds[i][0], "serve")) assert_non_null(strstr(out, "[default: 64, 1 to 4096]"));
        free(out);
        free(err);
    }
    /* --help writes nothing, not even with --data and other flags around it */
    const char *with_data[] = {"barbero", "add", "--nombre", "X", "--help", "--data", s.data, NULL};
    assert_int_equal(cli(&s, &out, &err, with_data), 0);
    free(out);
    free(err);
    assert_false(file_exists(s.data));
    srv_cleanup(&s);
}

/* --- bad arguments: exit 2, one line, nothing written -------------------------------------- */

/* Every bad command line, each given --data first so that a missing flag
 * value is really missing. */
static void bad_arguments(const struct srv *s)
{
    const char *d = s->data;
    char long_name[202], long_url[2050];
    memset(long_name, 'n', 201);
    long_name[201] = '\0';
    memset(long_url, 'u', 2049);
    long_url[2049] = '\0';
    const char *const cases[][14] = {
        /* unknown command and subcommand */
        {"frobnicate", "--data", d, NULL},
        {"barbero", "--data", d, "borrar", NULL},
        {"barbero", NULL},
        {"servicio", "quitar", "--data", d, NULL},
        {"user", "delete", "--data", d, NULL},
        /* unknown flag, stray argument */
        {"barbero", "add", "--data", d, "--nombre", "X", "--bogus", "1", NULL},
        {"barbero", "list", "--data", d, "--bogus", NULL},
        {"barbero", "add", "--data", d, "--nombre", "X", "extra", NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "30", "--precio", "1",
         "--iva", "21", NULL},
        {"user", "add", "--data", d, "--email", "x@test.example", "--password", "secreto1",
         "--admin", NULL},
        {"migrate", "--data", d, "--force", NULL},
        {"user", "list", "--data", d, "-x", NULL},
        /* missing required flag or its value */
        {"barbero", "add", "--data", d, NULL},
        {"barbero", "add", "--data", d, "--nombre", "", NULL},
        {"barbero", "add", "--data", d, "--nombre", NULL},
        {"barbero", "add", "--data", d, "--foto-url", "https://x.example/a.png", NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--precio", "1", NULL},
        {"servicio", "add", "--data", d, "--duracion-min", "30", "--precio", "1", NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "30", NULL},
        {"user", "add", "--data", d, "--email", "x@test.example", NULL},
        {"user", "add", "--data", d, "--password", "secreto1", NULL},
        {"user", "add", "--data", d, "--email", "x@test.example", "--password", NULL},
        /* numbers that are not numbers */
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "abc", "--precio", "1",
         NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "30m", "--precio", "1",
         NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "2.5", "--precio", "1",
         NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "", "--precio", "1",
         NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "0", "--precio", "1",
         NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "-5", "--precio", "1",
         NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "30", "--precio",
         "diez", NULL},
        {"servicio", "add", "--data", d, "--nombre", "X", "--duracion-min", "30", "--precio", "-1",
         NULL},
        /* names the API refuses: more than 200 bytes, not UTF-8 */
        {"barbero", "add", "--data", d, "--nombre", long_name, NULL},
        {"barbero", "add", "--data", d, "--nombre", "\xff\xfe", NULL},
        {"barbero", "add", "--data", d, "--nombre", "X", "--foto-url", long_url, NULL},
        {"barbero", "add", "--data", d, "--nombre", "X", "--foto-url", "", NULL},
        {"servicio", "add", "--data", d, "--nombre", long_name, "--duracion-min", "30", "--precio",
         "1", NULL},
        {"servicio", "add", "--data", d, "--nombre", "Corte \xc3", "--duracion-min", "30",
         "--precio", "1", NULL},
        /* values the identity provider refuses as given */
        {"user", "add", "--data", d, "--email", "no-es-email", "--password", "secreto1", NULL},
        {"user", "add", "--data", d, "--email", "corta@test.example", "--password", "abc", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_refusal(s, 2, cases[i]);
}

static void bad_arguments_exit_2_and_create_nothing(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    bad_arguments(&s);
    /* on a fresh folder: no database appeared */
    assert_false(db_exists(&s));
    srv_cleanup(&s);
}

/* A flag given twice took its last value without a word: `user add --email
 * a --email b` made b, `migrate --data x --data y` made y, `serve --listen
 * A --listen B` listened on B. Which one was meant is not the command's to
 * guess: exit 2, one line naming the flag, nothing made; a flag without a
 * value given twice says the same thing once more, and is taken. */
static void a_flag_given_twice_is_refused_naming_it(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    const char *d = s.data;
    char other[400];
    snprintf(other, sizeof other, "%s/other", s.dir);
    const char *const cases[][12] = {
        {"user", "add", "--data", d, "--email", "a@test.example", "--password", "secreto1",
         "--email", "b@test.example", NULL},
        {"barbero", "add", "--data", d, "--nombre", "A", "--nombre=B", NULL},
        {"migrate", "--data", d, "--data", other, NULL},
        {"migrate", "--data=", "--data", d, NULL},
        {"export", "--data", d, "--to", other, "--to", other, NULL},
        {"serve", "--data", d, "--listen", "127.0.0.1:0", "--listen", "127.0.0.1:0", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL, *err = NULL;
        int st = cli(&s, &out, &err, cases[i]);
        if (st != 2 || !strstr(err, "given twice") || count_lines(err) != 1) {
            print_argv(cases[i]);
            fail_msg("want exit 2 and one line saying \"given twice\"; got %d: %s", st, err);
        }
        free(out);
        free(err);
    }
    assert_false(db_exists(&s));
    assert_false(file_exists(other));
    /* --demo twice is --demo */
    const char *demo[] = {"--demo", "--demo", NULL};
    srv_start(&s, NULL, demo);
    srv_stop(&s);
    assert_int_equal(db_count(&s, "SELECT count(*) FROM barberos"), 3);
    srv_cleanup(&s);
}

static void bad_arguments_write_no_rows(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    const char *migrate[] = {"migrate", "--data", s.data, NULL};
    free(expect_ok(&s, migrate));
    char *before = counts(&s);
    assert_string_equal(before, "0\t0\t0\t0");
    bad_arguments(&s);
    char *after = counts(&s);
    assert_string_equal(after, before);
    free(before);
    free(after);
    srv_cleanup(&s);
}

/* --- refused operations: exit 1 ------------------------------------------------------------ */

static void user_add_with_a_registered_email_exits_1(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    char email[128];
    unique_email(email, sizeof email, "dup");
    const char *add[] = {"user", "add",        "--data",   s.data, "--email",
                         email,  "--password", "secreto1", NULL};
    char *out = expect_ok(&s, add);
    expect_id_line(out);
    free(out);
    char *before = counts(&s);
    expect_refusal(&s, 1, add);
    /* the same address in another case, with white space */
    char upper[160];
    snprintf(upper, sizeof upper, " %s ", email);
    for (char *p = upper; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    const char *add2[] = {"user",       "add",        "--data",   s.data, "--email", upper,
                          "--password", "otra-clave", "--nombre", "Otro", NULL};
    expect_refusal(&s, 1, add2);
    char *after = counts(&s);
    assert_string_equal(after, before);
    free(before);
    free(after);
    srv_cleanup(&s);
}

/* --- add and list -------------------------------------------------------------------------- */

/* A shop the user running the command may not read (the service's own
 * data folder, 0750, read by root's or another user's `barberia user
 * list`) was reported as "no shop at <folder> (no barberia.db there):
 * check --data", sending the operator after a typo that is not there. It
 * is said as it is: exit 1, the file and the system's reason. Run as
 * nobody (setpriv) when the tests run as root, whom no mode stops. */
static void a_shop_this_user_cannot_read_is_not_called_missing(void **state)
{
    (void)state;
    if (test_pg()) return; /* the check is the embedded database's */
    struct srv s = {0};
    srv_init(&s);
    const char *d = s.data;
    const char *migrate[] = {"migrate", "--data", d, NULL};
    free(expect_ok(&s, migrate));
    const char *ul[] = {"user", "list", "--data", d, NULL};
    char *out = NULL, *err = NULL;
    int st;
    if (geteuid() == 0) {
        /* nobody reaches a copy of the binary and the shop's parent, not
         * the shop: its folder is root's alone */
        char bin[600];
        snprintf(bin, sizeof bin, "%s/barberia", s.dir);
        size_t len = 0;
        char *bytes = read_file(BARBERIA_BIN, &len);
        assert_non_null(bytes);
        FILE *f = fopen(bin, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(bytes, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        free(bytes);
        assert_int_equal(chmod(bin, 0755), 0);
        assert_int_equal(chmod(s.dir, 0755), 0);
        assert_int_equal(chmod(d, 0700), 0);
        const char *as_nobody[] = {"/usr/bin/setpriv",
                                   "--reuid=65534",
                                   "--regid=65534",
                                   "--clear-groups",
                                   bin,
                                   "user",
                                   "list",
                                   "--data",
                                   d,
                                   NULL};
        st = run_program_as(&s, as_nobody, 60000, &out, &err);
    } else {
        assert_int_equal(chmod(d, 0), 0);
        st = cli(&s, &out, &err, ul);
        assert_int_equal(chmod(d, 0700), 0);
    }
    if (st != 1 || !strstr(err, "cannot read") || !strstr(err, "Permission denied") ||
        strstr(err, "no shop") || count_lines(err) != 1)
        fail_msg("want exit 1 and one line saying it cannot read the shop; got %d: %s", st, err);
    assert_string_equal(out, "");
    free(out);
    free(err);
    /* its owner lists it as ever */
    free(expect_ok(&s, ul));
    srv_cleanup(&s);
}

static void add_commands_print_ids_and_lists_print_tab_separated_rows(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    const char *d = s.data;
    /* empty lists print nothing */
    const char *bl[] = {"barbero", "list", "--data", d, NULL};
    const char *sl[] = {"servicio", "list", "--data", d, NULL};
    const char *ul[] = {"user", "list", "--data", d, NULL};
    if (!test_pg()) {
        /* a folder that holds no shop (a mistyped --data) is refused, and
         * left as it was: a list, fotos retype, an export or a backup never
         * makes one */
        char to[600];
        snprintf(to, sizeof to, "%s/copia", s.dir);
        const char *ex[] = {"export", "--data", d, "--to", to, NULL};
        const char *bk[] = {"backup", "--data", d, "--to", to, NULL};
        const char *fr[] = {"fotos", "retype", "--data", d, NULL};
        const char *const *reads[] = {ul, ex, bk, fr};
        for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
            char *o = NULL, *e = NULL;
            if (cli(&s, &o, &e, reads[i]) != 1 || !strstr(e, "no shop at")) {
                print_argv(reads[i]);
                fail_msg("expected exit 1 and \"no shop at\"; stdout: %s\nstderr: %s", o, e);
            }
            free(o);
            free(e);
            assert_false(db_exists(&s));
            assert_int_equal(access(d, F_OK), -1); /* not even the folder, nor storage/ */
            assert_int_equal(access(to, F_OK), -1);
        }
        const char *migrate[] = {"migrate", "--data", d, NULL};
        free(expect_ok(&s, migrate));
    }
    char *out = expect_ok(&s, bl);
    assert_string_equal(out, "");
    free(out);

    const char *b1[] = {"barbero", "add", "--data", d, "--nombre", "Zacarías", NULL};
    const char *b2[] = {"barbero",
                        "add",
                        "--data",
                        d,
                        "--nombre=Bruno",
                        "--foto-url",
                        "https://img.example/bruno.jpg",
                        NULL};
    const char *b3[] = {"barbero", "add", "--data", d, "--nombre", "Con\tTab", NULL};
    char id1[40], id2[40], id3[40];
    out = expect_ok(&s, b1);
    snprintf(id1, sizeof id1, "%s", expect_id_line(out));
    free(out);
    out = expect_ok(&s, b2);
    snprintf(id2, sizeof id2, "%s", expect_id_line(out));
    free(out);
    out = expect_ok(&s, b3);
    snprintf(id3, sizeof id3, "%s", expect_id_line(out));
    free(out);
    out = expect_ok(&s, bl);
    char want[1024];
    snprintf(want, sizeof want,
             "%s\tBruno\thttps://img.example/bruno.jpg\n%s\tCon\\tTab\t\n%s\tZacarías\t\n", id2,
             id3, id1);
    assert_string_equal(out, want);
    free(out);

    const char *s1[] = {"servicio",       "add", "--data",   d,      "--nombre", "Corte",
                        "--duracion-min", "30",  "--precio", "12.5", NULL};
    const char *s2[] = {"servicio",          "add",        "--data", d, "--nombre", "Afeitado",
                        "--duracion-min=20", "--precio=9", NULL};
    /* a price the API takes too, not in whole cents: listed as stored */
    const char *s3[] = {"servicio",       "add", "--data",   d,       "--nombre", "Tinte",
                        "--duracion-min", "45",  "--precio", "1.999", NULL};
    char sid1[40], sid2[40], sid3[40];
    out = expect_ok(&s, s1);
    snprintf(sid1, sizeof sid1, "%s", expect_id_line(out));
    free(out);
    out = expect_ok(&s, s2);
    snprintf(sid2, sizeof sid2, "%s", expect_id_line(out));
    free(out);
    out = expect_ok(&s, s3);
    snprintf(sid3, sizeof sid3, "%s", expect_id_line(out));
    free(out);
    out = expect_ok(&s, sl);
    snprintf(want, sizeof want,
             "%s\tAfeitado\t20\t9.00\n%s\tCorte\t30\t12.50\n%s\tTinte\t45\t1.999\n", sid2, sid1,
             sid3);
    assert_string_equal(out, want);
    free(out);
    assert_int_equal(db_count(&s,
                              "SELECT count(*) FROM servicios WHERE id = '%s' AND "
                              "duracion_min = 30 AND precio = 12.5",
                              sid1),
                     1);

    char email[128];
    unique_email(email, sizeof email, "lista");
    const char *u1[] = {"user",       "add",        "--data",   d,          "--email",
                        email,        "--password", "secreto1", "--nombre", "Lista Uno",
                        "--telefono", "600 1",      "--rol",    "barbero",  NULL};
    out = expect_ok(&s, u1);
    char uid[40];
    snprintf(uid, sizeof uid, "%s", expect_id_line(out));
    free(out);
    out = expect_ok(&s, ul);
    assert_int_equal(count_lines(out), 1);
    assert_int_equal(count_char(out, '\t'), 6);
    char *created = db_query(&s, "SELECT created_at FROM auth_users WHERE id = '%s'", uid);
    snprintf(want, sizeof want, "%s\t%s\tbarbero\tLista Uno\t600 1\t%s\t\n", uid, email, created);
    assert_string_equal(out, want);
    free(created);
    free(out);
    /* a role the shop does not know is stored as given (the API's PATCH
     * does the same), with a warning: the typo of a staff role shows now */
    unique_email(email, sizeof email, "rolraro");
    const char *u2[] = {"user",       "add",      "--data", d,       "--email", email,
                        "--password", "secreto1", "--rol",  "Admin", NULL};
    char *err = NULL;
    out = NULL;
    assert_int_equal(cli(&s, &out, &err, u2), 0);
    expect_id_line(out);
    assert_non_null(strstr(err, "warning: rol \"Admin\" is none of cliente, barbero, admin"));
    free(out);
    free(err);
    srv_cleanup(&s);
}

/* --- beside a running server ------------------------------------------------------------- */

/* A write that waits past BARBERIA_DB_LOCK_WAIT_MS for another process's
 * write lock is refused (exit 1, nothing added) with a line that says what
 * held it up and which setting bounds the wait, not the API's bare 503
 * text. SQLite's lock only: PostgreSQL's writers do not take one. */
static void a_write_held_up_past_the_lock_wait_says_why_and_a_read_goes_ahead(void **state)
{
    (void)state;
    if (test_pg()) skip();
    struct srv s = {0};
    srv_init(&s);
    const char *migrate[] = {"migrate", "--data", s.data, NULL};
    free(expect_ok(&s, migrate));
    char path[400];
    snprintf(path, sizeof path, "%s/barberia.db", s.data);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);

    const char *env[] = {"BARBERIA_DB_LOCK_WAIT_MS=200", NULL};
    const char *add[] = {"servicio", "add",      "--nombre", "Corte", "--duracion-min",
                         "30",       "--precio", "12",       NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(run_cli(&s, env, add, true, &out, &err), 1);
    assert_string_equal(out, "");
    /* the store's warning, then the command's one line */
    const char *last = strstr(err, "barberia: servicio add: Servicio ocupado (the data store");
    assert_non_null(last);
    assert_non_null(strstr(last, "BARBERIA_DB_LOCK_WAIT_MS"));
    assert_int_equal(count_lines(last), 1);
    free(out);
    free(err);
    /* a read goes ahead meanwhile (WAL): the schema is current, no lock is taken */
    const char *list[] = {"servicio", "list", NULL};
    assert_int_equal(run_cli(&s, env, list, true, &out, &err), 0);
    assert_string_equal(out, "");
    free(out);
    free(err);

    assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(db_count(&s, "SELECT count(*) FROM servicios"), 0);
    srv_cleanup(&s);
}

/* The front desk (desk) books a client it types in (cliente, JSON) with
 * barb at fecha, out of hours allowed. OUT: her id. */
static void desk_booking(const struct srv *s, const struct user *desk, const char *barb,
                         const char *serv, const char *fecha, const char *cliente, char id[40])
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
             "\"fuera_de_horario\":true,\"cliente\":%s}",
             barb, serv, fecha, cliente);
    struct resp r;
    http_json(s, "POST", "/api/agenda/citas", desk->token, body, &r);
    assert_int_equal(r.status, 201);
    snprintf(id, 40, "%s", jstr(json_object_get(r.json, "cita"), "cliente_id"));
    resp_free(&r);
}

static void cli_works_while_serve_runs_on_the_same_data(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, NULL, NULL);
    char *barb = make_barbero(&s, "Barbero En Vivo");
    assert_true(is_lower_uuid(barb));
    struct resp r;
    http_get(&s, "/api/barberos", NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *l = json_object_get(r.json, "barberos");
    assert_int_equal(json_array_size(l), 1);
    assert_string_equal(jstr(json_array_get(l, 0), "id"), barb);
    assert_string_equal(jstr(json_array_get(l, 0), "nombre"), "Barbero En Vivo");
    resp_free(&r);
    char *serv = make_servicio(&s, "Servicio En Vivo", 25, 11);
    http_get(&s, "/api/servicios", NULL, &r);
    assert_int_equal(json_array_size(json_object_get(r.json, "servicios")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "servicios"), 0), "id"), serv);
    resp_free(&r);

    /* user add: the id alone on stdout, and that user can sign in */
    char email[128], shouted[128];
    unique_email(email, sizeof email, "vivo");
    snprintf(shouted, sizeof shouted, "%s", email);
    for (char *p = shouted; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    char *out = NULL, *err = NULL;
    assert_int_equal(srv_cli(&s, &out, &err, "user", "add", "--email", shouted, "--password",
                             "clave-viva", "--nombre", "Vivo", "--telefono", "611", NULL),
                     0);
    char uid[40];
    snprintf(uid, sizeof uid, "%s", expect_id_line(out));
    free(out);
    free(err);
    char body[256];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"clave-viva\"}", email);
    http_json(&s, "POST", "/api/auth/login", NULL, body, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), uid);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "email"), email);
    char tok[64];
    snprintf(tok, sizeof tok, "%s", jstr(r.json, "token"));
    resp_free(&r);
    http_get(&s, "/api/auth/me", tok, &r);
    assert_int_equal(r.status, 200);
    json_t *p = json_object_get(r.json, "perfil");
    assert_string_equal(jstr(p, "rol"), "cliente"); /* the default role */
    assert_string_equal(jstr(p, "nombre"), "Vivo");
    assert_string_equal(jstr(p, "telefono"), "611");
    resp_free(&r);
    /* and book with what the CLI added */
    struct user u = {0};
    snprintf(u.id, sizeof u.id, "%s", uid);
    snprintf(u.token, sizeof u.token, "%s", tok);
    free(book(&s, &u, barb, serv, "2031-01-01T10:00:00Z", NULL));
    /* a client the desk made without an e-mail */
    struct user desk;
    make_user(&s, &desk, "Mostrador", "barbero");
    char sin[40];
    desk_booking(&s, &desk, barb, serv, "2031-01-02T10:00:00Z",
                 "{\"nombre\":\"Sin Correo\",\"telefono\":\"655 44 33 22\"}", sin);
    /* list commands read while serve runs; her e-mail is empty, not the
     * placeholder the database holds */
    assert_int_equal(srv_cli(&s, &out, &err, "user", "list", NULL), 0);
    assert_non_null(strstr(out, uid));
    char row[80];
    snprintf(row, sizeof row, "%s\t\tcliente\tSin Correo\t", sin);
    assert_non_null(strstr(out, row));
    assert_null(strstr(out, "sin-email:"));
    free(out);
    free(err);
    /* --password -: from standard input's first line, never on the
     * command line; that password signs her in */
    char piped[128], line[512];
    unique_email(piped, sizeof piped, "tuberia");
    snprintf(
        line, sizeof line,
        "printf 'clave-por-tuberia\\n' | \"$0\" user add --email %s --password - --data \"$1\"",
        piped);
    const char *sh[] = {"/bin/sh", "-c", line, BARBERIA_BIN, s.data, NULL};
    assert_int_equal(run_program_as(&s, sh, 60000, &out, &err), 0);
    snprintf(uid, sizeof uid, "%s", expect_id_line(out));
    free(out);
    free(err);
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"clave-por-tuberia\"}", piped);
    http_json(&s, "POST", "/api/auth/login", NULL, body, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), uid);
    resp_free(&r);
    /* nothing on standard input (here /dev/null): a usage error */
    unique_email(piped, sizeof piped, "sin-linea");
    assert_int_equal(
        srv_cli(&s, &out, &err, "user", "add", "--email", piped, "--password", "-", NULL), 2);
    assert_non_null(strstr(err, "--password -: no line on standard input"));
    free(out);
    free(err);
    /* the operator's user add with the address of a client the desk made
     * gives her that account, with the role asked for */
    char futura[40];
    desk_booking(&s, &desk, barb, serv, "2031-01-03T10:00:00Z",
                 "{\"nombre\":\"Futura Admin\",\"email\":\"futura@example.com\"}", futura);
    assert_int_equal(srv_cli(&s, &out, &err, "user", "add", "--email", "futura@example.com",
                             "--password", "clave-futura", "--rol", "admin", NULL),
                     0);
    assert_string_equal(expect_id_line(out), futura);
    free(out);
    free(err);
    assert_int_equal(
        db_count(&s, "SELECT count(*) FROM perfiles WHERE id = '%s' AND rol = 'admin'", futura), 1);
    free(barb);
    free(serv);
    srv_cleanup(&s);
}

/* --- the CLI and the API share one set of rules ---------------------------------------------- */

/* An empty --nombre or --telefono is none, as an empty one at sign-up is. */
static void user_add_takes_an_empty_profile_text_for_none(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    char email[128];
    unique_email(email, sizeof email, "vacia");
    const char *add[] = {"user",       "add",        "--data",   s.data,     "--email",
                         email,        "--password", "secreto1", "--nombre", "",
                         "--telefono", "",           NULL};
    char *out = expect_ok(&s, add);
    char id[40];
    snprintf(id, sizeof id, "%s", expect_id_line(out));
    free(out);
    assert_int_equal(db_count(&s,
                              "SELECT count(*) FROM perfiles WHERE id = '%s' AND nombre IS NULL "
                              "AND telefono IS NULL",
                              id),
                     1);
    srv_cleanup(&s);
}

/* n bytes of text: "ñ" (two bytes) repeated, and an "a" when n is odd, so
 * that a cap is seen to count bytes. Caller frees. */
static char *text_of(size_t n)
{
    char *t = malloc(n + 1);
    assert_non_null(t);
    for (size_t i = 0; i + 1 < n; i += 2)
        memcpy(t + i, "\xc3\xb1", 2);
    if (n % 2) t[n - 1] = 'a';
    t[n] = '\0';
    return t;
}

/* A foto_url given as "" (refused: no photo is no foto_url at all). */
#define URL_EMPTY ((size_t)-1)

/* One barber or service asked of both: the CLI's flags and the API's body
 * carry the same values. */
struct both_case {
    bool servicio;
    size_t nombre_len, url_len; /* url_len 0: no foto_url; URL_EMPTY: "" */
    const char *duracion, *precio;
    bool accepted;
};

static void cli_and_api_accept_and_refuse_the_same_catalog_values(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, NULL, NULL);
    struct user admin;
    make_user(&s, &admin, "Admin", "admin");
    static const struct both_case cases[] = {
        {false, 200, 0, NULL, NULL, true},         {false, 201, 0, NULL, NULL, false},
        {false, 1, 0, NULL, NULL, true},           {false, 20, 2048, NULL, NULL, true},
        {false, 20, 2049, NULL, NULL, false},      {false, 20, URL_EMPTY, NULL, NULL, false},
        {true, 200, 0, "30", "10", true},          {true, 201, 0, "30", "10", false},
        {true, 20, 0, "1440", "1000000000", true}, {true, 20, 0, "1441", "10", false},
        {true, 20, 0, "0", "10", false},           {true, 20, 0, "30", "1000000001", false},
        {true, 20, 0, "30", "-1", false},
    };
    long rows = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct both_case *c = &cases[i];
        char *nombre = text_of(c->nombre_len);
        char *url = c->url_len == URL_EMPTY ? text_of(0) : c->url_len ? text_of(c->url_len) : NULL;
        /* the API */
        json_t *body = json_pack("{s:s}", "nombre", nombre);
        if (url) json_object_set_new(body, "foto_url", json_string(url));
        if (c->servicio) {
            json_object_set_new(body, "duracion_min", json_integer(atoll(c->duracion)));
            json_object_set_new(body, "precio", json_integer(atoll(c->precio)));
        }
        char *text = json_dumps(body, 0);
        json_decref(body);
        struct resp r;
        http_json(&s, "POST", c->servicio ? "/api/admin/servicios" : "/api/admin/barberos",
                  admin.token, text, &r);
        free(text);
        if (r.status != (c->accepted ? 201 : 400))
            fail_msg("case %zu: the API answered %ld: %s", i, r.status, r.body);
        resp_free(&r);
        /* the CLI */
        const char *argv[12];
        int n = 0;
        argv[n++] = c->servicio ? "servicio" : "barbero";
        argv[n++] = "add";
        argv[n++] = "--nombre";
        argv[n++] = nombre;
        if (url) {
            argv[n++] = "--foto-url";
            argv[n++] = url;
        }
        if (c->servicio) {
            argv[n++] = "--duracion-min";
            argv[n++] = c->duracion;
            argv[n++] = "--precio";
            argv[n++] = c->precio;
        }
        argv[n] = NULL;
        char *out = NULL, *err = NULL;
        int st = run_cli(&s, NULL, argv, true, &out, &err);
        if (c->accepted) {
            if (st != 0) fail_msg("case %zu: the CLI exited %d: %s", i, st, err);
            expect_id_line(out);
            rows += 2;
        } else if (st != 2 || strcmp(out, "") || count_lines(err) != 1 ||
                   strncmp(err, "barberia: ", 10)) {
            fail_msg("case %zu: expected exit 2 and one stderr line; got %d\nstdout: %s\n"
                     "stderr: %s",
                     i, st, out, err);
        }
        free(out);
        free(err);
        free(nombre);
        free(url);
        /* whoever refused wrote nothing */
        assert_int_equal(db_count(&s, "SELECT (SELECT count(*) FROM barberos) + "
                                      "(SELECT count(*) FROM servicios)"),
                         rows);
    }
    srv_cleanup(&s);
}

/* --- migrate -------------------------------------------------------------------------------- */

static void migrate_on_an_empty_folder_creates_the_spec_tables(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    assert_int_equal(mkdir(s.data, 0755), 0);
    char *out = NULL, *err = NULL;
    const char *migrate[] = {"migrate", "--data", s.data, NULL};
    assert_int_equal(cli(&s, &out, &err, migrate), 0);
    assert_string_equal(out, "");
    free(out);
    free(err);
    assert_true(db_exists(&s));
    static const struct {
        const char *table, *cols;
    } spec[] = {
        {"perfiles", "created_at,id,nombre,rol,telefono"},
        {"citas", "barbero_id,cliente_id,estado,fecha_fin,fecha_inicio,google_event_id,id,notas,"
                  "servicio_id"},
        {"servicios", "duracion_min,id,nombre,precio"},
        {"barberos", "foto_url,id,nombre"},
        {"fotos_cita", "cita_id,cliente_id,created_at,id,storage_path,tipo,url"},
        {"historial_cortes", "barbero_id,cita_id,cliente_id,fecha,servicio_id"},
    };
    for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++) {
        /* every field of the specification is a column (extra columns allowed) */
        char *cols =
            test_pg() ? db_query(&s,
                                 "SELECT string_agg(column_name, ',' ORDER BY column_name) FROM "
                                 "information_schema.columns WHERE table_schema = 'public' AND "
                                 "table_name = '%s' AND ',%s,' LIKE '%%,' || column_name || ',%%'",
                                 spec[i].table, spec[i].cols)
                      : db_query(&s,
                                 "SELECT group_concat(name, ',') FROM (SELECT name FROM "
                                 "pragma_table_info('%s') WHERE ',%s,' LIKE '%%,' || name || ',%%' "
                                 "ORDER BY name)",
                                 spec[i].table, spec[i].cols);
        if (strcmp(cols, spec[i].cols))
            fail_msg("table %s: spec columns found: '%s', expected '%s'", spec[i].table, cols,
                     spec[i].cols);
        free(cols);
    }
    /* empty, and migrating again is harmless */
    char *c = counts(&s);
    assert_string_equal(c, "0\t0\t0\t0");
    free(c);
    free(expect_ok(&s, migrate));
    /* BARBERIA_DATA works as well as --data */
    char env_data[400];
    snprintf(env_data, sizeof env_data, "BARBERIA_DATA=%s", s.data);
    const char *env[] = {env_data, NULL};
    const char *add[] = {"barbero", "add", "--nombre", "Por Entorno", NULL};
    assert_int_equal(run_cli(&s, env, add, false, &out, &err), 0);
    expect_id_line(out);
    free(out);
    free(err);
    assert_int_equal(db_count(&s, "SELECT count(*) FROM barberos WHERE nombre = 'Por Entorno'"), 1);
    srv_cleanup(&s);
}

static void migrate_creates_a_missing_data_folder(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    char nested[400];
    snprintf(nested, sizeof nested, "%s/a/b", s.data);
    const char *migrate[] = {"migrate", "--data", nested, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(cli(&s, &out, &err, migrate), 0);
    free(out);
    free(err);
    char db[440];
    snprintf(db, sizeof db, "%s/barberia.db", nested);
    assert_true(file_exists(test_pg() ? nested : db)); /* the photos' folder on PostgreSQL */
    srv_cleanup(&s);
}

/* The photos' folder may be a link to another disk (the operator's
 * choice): the store makes its own folders there. Nothing beneath it is
 * followed (test_fotos_objetos). */
static void a_storage_folder_linked_to_another_disk_is_used(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_init(&s);
    if (s.s3) { /* the photos in S3: no folder store */
        srv_cleanup(&s);
        skip();
    }
    char data[400], disk[400], link[440], made[460];
    snprintf(data, sizeof data, "%s/datos", s.dir);
    snprintf(disk, sizeof disk, "%s/otro-disco", s.dir);
    snprintf(link, sizeof link, "%s/storage", data);
    assert_int_equal(mkdir(data, 0700), 0);
    assert_int_equal(mkdir(disk, 0700), 0);
    assert_int_equal(symlink(disk, link), 0);
    const char *add[] = {"barbero", "add", "--nombre", "Con Disco", "--data", data, NULL};
    char *out = NULL, *err = NULL;
    if (cli(&s, &out, &err, add) != 0) fail_msg("barbero add: %s", err ? err : "");
    free(out);
    free(err);
    snprintf(made, sizeof made, "%s/.tmp", disk);
    assert_true(file_exists(made));
    srv_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help_and_version_exit_0),
        cmocka_unit_test(bad_arguments_exit_2_and_create_nothing),
        cmocka_unit_test(bad_arguments_write_no_rows),
        cmocka_unit_test(a_flag_given_twice_is_refused_naming_it),
        cmocka_unit_test(user_add_with_a_registered_email_exits_1),
        cmocka_unit_test(add_commands_print_ids_and_lists_print_tab_separated_rows),
        cmocka_unit_test(a_shop_this_user_cannot_read_is_not_called_missing),
        cmocka_unit_test(cli_works_while_serve_runs_on_the_same_data),
        cmocka_unit_test(a_write_held_up_past_the_lock_wait_says_why_and_a_read_goes_ahead),
        cmocka_unit_test(cli_and_api_accept_and_refuse_the_same_catalog_values),
        cmocka_unit_test(user_add_takes_an_empty_profile_text_for_none),
        cmocka_unit_test(migrate_on_an_empty_folder_creates_the_spec_tables),
        cmocka_unit_test(migrate_creates_a_missing_data_folder),
        cmocka_unit_test(a_storage_folder_linked_to_another_disk_is_used),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
