/*
 * harness_db.c - the database of a test's server: which backend the run uses, its
 * rows through the sqlite3 tool (psql on PostgreSQL), and another process
 * holding SQLite's write lock (see harness.h).
 */
#define _GNU_SOURCE
#include "harness_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- the backend ------------------------------------------------------------------------ */

bool test_pg(void)
{
    const char *b = getenv("BARBERIA_TEST_BACKEND");
    return b && !strcmp(b, "postgresql");
}

__attribute__((constructor)) static void backend_check(void)
{
    const char *url = getenv("BARBERIA_TEST_PG");
    if (test_pg() && (!url || !*url)) {
        fprintf(stderr, "skipped: a PostgreSQL run needs BARBERIA_TEST_PG (scripts/pg-server)\n");
        exit(77);
    }
}

/* Runs psql on the database at url: -c sql, unaligned, tuples only,
 * tab-separated (as db_exec's sqlite3), stopping at the first error; with
 * tags, command tags ("UPDATE 1") are printed too. Foreign keys are not
 * checked, as in the sqlite3 tool (session_replication_role). */
static int psql(const char *url, const char *sql, bool tags, const char *opath, const char *epath)
{
    static const char *const pg[] = {
        "PGOPTIONS=-c TimeZone=UTC -c DateStyle=ISO -c session_replication_role=replica", NULL};
    struct child_envp ce;
    envp_with(&ce, pg);
    const char *argv[] = {"psql", "-X", tags ? "-A" : "-q", "-A", "-t", "-F",
                          "\t",   "-v", "ON_ERROR_STOP=1",  "-d", url,  "-c",
                          sql,    NULL};
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execvpe("psql", (char *const *)argv, ce.v);
        _exit(127);
    }
    envp_free(&ce);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* psql's output o in the sqlite3 tool's form: timestamps as the API
 * writes them ("2031-03-10 10:00:00+00" -> "2031-03-10T10:00:00.000Z"),
 * booleans as 1 and 0; with tag, only the count of the last command tag.
 * Frees o; the caller frees the result. */
static char *psql_output_as_sqlite(char *o, bool tag)
{
    if (tag) {
        char *last = NULL;
        char *save = NULL;
        for (char *line = strtok_r(o, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
            last = line;
        const char *num = last ? strrchr(last, ' ') : NULL;
        char *r = NULL;
        if (asprintf(&r, "%s\n", num ? num + 1 : "0") < 0) fail_msg("out of memory");
        free(o);
        return r;
    }
    char *res = malloc(strlen(o) * 2 + 1), *out = res;
    for (const char *f = o; *f;) {
        size_t len = strcspn(f, "\t\n");
        bool ts = len >= 22 && f[4] == '-' && f[10] == ' ' && f[13] == ':' &&
                  !strncmp(f + len - 3, "+00", 3);
        if (ts) {
            memmove(out, f, 10);
            out[10] = 'T';
            memmove(out + 11, f + 11, 8);
            char ms[4] = "000";
            if (f[19] == '.')
                for (int i = 0; i < 3 && f[20 + i] >= '0' && f[20 + i] <= '9'; i++)
                    ms[i] = f[20 + i];
            out[19] = '.';
            memcpy(out + 20, ms, 3);
            out[23] = 'Z';
            out += 24;
        } else if (len == 1 && (*f == 't' || *f == 'f')) {
            *out++ = *f == 't' ? '1' : '0';
        } else {
            memmove(out, f, len);
            out += len;
        }
        f += len;
        if (*f) *out++ = *f++;
    }
    *out = '\0';
    free(o);
    return res;
}

/* Creates (or drops) the database of a server on a PostgreSQL run. */
void pg_database(const struct srv *s, bool create)
{
    const char *name = strrchr(s->dburl, '/') + 1;
    char sql[256], opath[400], epath[400];
    snprintf(sql, sizeof sql, create ? "CREATE DATABASE %s" : "DROP DATABASE %s WITH (FORCE)",
             name);
    snprintf(opath, sizeof opath, "%s/pg.out", s->dir);
    snprintf(epath, sizeof epath, "%s/pg.err", s->dir);
    char url[512];
    snprintf(url, sizeof url, "%spostgres", getenv("BARBERIA_TEST_PG"));
    int rc = psql(url, sql, false, opath, epath);
    if (rc != 0) {
        char *e = read_file(epath, NULL);
        fprintf(stderr, "%s failed (%d): %s\n", sql, rc, e ? e : "");
        free(e);
        if (create) fail_msg("cannot create the test database");
    }
}

void srv_pg_locale(const struct srv *s, const char *icu)
{
    if (!s->dburl[0]) return;
    pg_database(s, false);
    const char *name = strrchr(s->dburl, '/') + 1;
    char sql[512], opath[400], epath[400], url[512];
    snprintf(sql, sizeof sql,
             "CREATE DATABASE %s TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '%s' "
             "LOCALE 'C'",
             name, icu);
    snprintf(opath, sizeof opath, "%s/pg.out", s->dir);
    snprintf(epath, sizeof epath, "%s/pg.err", s->dir);
    snprintf(url, sizeof url, "%spostgres", getenv("BARBERIA_TEST_PG"));
    if (psql(url, sql, false, opath, epath) != 0) {
        char *e = read_file(epath, NULL);
        fail_msg("cannot make a database with the ICU locale %s: %s", icu, e ? e : "");
    }
}

/* --- the database through the sqlite3 tool, and shape checks --------------------------- */

int db_exec(const struct srv *s, const char *sql, char **out)
{
    static int counter;
    int k = __atomic_add_fetch(&counter, 1, 0);
    char db[400], opath[400], epath[400];
    snprintf(db, sizeof db, "%s/barberia.db", s->data);
    snprintf(opath, sizeof opath, "%s/sql-%d.out", s->dir, k);
    snprintf(epath, sizeof epath, "%s/sql-%d.err", s->dir, k);
    if (s->dburl[0]) {
        /* "...; SELECT changes();" (SQLite's count of the rows the last
         * statement touched): psql prints that as the command's tag */
        static const char changes[] = "SELECT changes();";
        char *text = strdup(sql);
        size_t n = strlen(text);
        bool tag = n >= strlen(changes) && !strcmp(text + n - strlen(changes), changes);
        if (tag) text[n - strlen(changes)] = '\0';
        int rc = psql(s->dburl, text, tag, opath, epath);
        free(text);
        char *o = read_file(opath, NULL), *e = read_file(epath, NULL);
        if (o) o = psql_output_as_sqlite(o, tag);
        remove(opath);
        remove(epath);
        if (rc != 0) fprintf(stderr, "psql failed (%d) on: %s\n%s\n", rc, sql, e ? e : "");
        free(e);
        if (out)
            *out = o ? o : strdup("");
        else
            free(o);
        return rc;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execlp("sqlite3", "sqlite3", "-batch", "-bail", "-noheader", "-separator", "\t", "-cmd",
               ".timeout 30000", db, sql, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char *o = read_file(opath, NULL);
    char *e = read_file(epath, NULL);
    remove(opath);
    remove(epath);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (rc != 0) fprintf(stderr, "sqlite3 failed (%d) on: %s\n%s\n", rc, sql, e ? e : "");
    free(e);
    if (out)
        *out = o ? o : strdup("");
    else
        free(o);
    return rc;
}

int db_forced_failure(const struct srv *s, const char *table, bool on)
{
    char sql[600];
    if (!on)
        snprintf(sql, sizeof sql, "DROP TRIGGER IF EXISTS %s_fallo_forzado%s%s;", table,
                 s->dburl[0] ? " ON " : "", s->dburl[0] ? table : "");
    else if (s->dburl[0])
        snprintf(sql, sizeof sql,
                 "CREATE OR REPLACE FUNCTION fallo_forzado() RETURNS trigger LANGUAGE plpgsql "
                 "AS $$BEGIN RAISE EXCEPTION 'fallo forzado'; END$$; "
                 "CREATE TRIGGER %s_fallo_forzado BEFORE INSERT ON %s FOR EACH ROW "
                 "EXECUTE FUNCTION fallo_forzado();",
                 table, table);
    else
        snprintf(sql, sizeof sql,
                 "CREATE TRIGGER %s_fallo_forzado BEFORE INSERT ON %s "
                 "BEGIN SELECT RAISE(ABORT, 'fallo forzado'); END;",
                 table, table);
    char *out = NULL;
    int rc = db_exec(s, sql, &out);
    free(out);
    return rc;
}

static char *db_vquery(const struct srv *s, const char *fmt, va_list ap)
{
    char *sql = NULL;
    if (vasprintf(&sql, fmt, ap) < 0) fail_msg("out of memory");
    char *out = NULL;
    int rc = db_exec(s, sql, &out);
    if (rc != 0) {
        free(out);
        fail_msg("sqlite3 exited with %d on: %s", rc, sql);
    }
    free(sql);
    size_t n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
        out[--n] = '\0';
    return out;
}

char *db_query(const struct srv *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = db_vquery(s, fmt, ap);
    va_end(ap);
    return out;
}

long db_count(const struct srv *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = db_vquery(s, fmt, ap);
    va_end(ap);
    char *end;
    long v = strtol(out, &end, 10);
    bool ok = end != out && *end == '\0';
    if (!ok) {
        fprintf(stderr, "not a number: '%s'\n", out);
        free(out);
        fail_msg("a count query did not answer one integer");
    }
    free(out);
    return v;
}

/* --- another process holding the database's write lock ------------------------------------- */

static bool file_present(void *ud)
{
    return access((const char *)ud, F_OK) == 0;
}

static void write_all(int fd, const char *text)
{
    for (size_t len = strlen(text); len;) {
        ssize_t k = write(fd, text, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return; /* the tool is gone: its exit status tells */
        text += k;
        len -= (size_t)k;
    }
}

void db_lock_take(const struct srv *s, struct db_locker *l, const char *sql)
{
    if (s->dburl[0]) skip(); /* the sqlite3 tool's lock: nothing to take on PostgreSQL */
    static int counter;
    memset(l, 0, sizeof *l);
    snprintf(l->marker, sizeof l->marker, "%s/db-locked-%d", s->dir,
             __atomic_add_fetch(&counter, 1, 0));
    char db[400];
    snprintf(db, sizeof db, "%s/barberia.db", s->data);
    int pfd[2];
    if (pipe(pfd) != 0) fail_msg("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[0], 0);
        close(pfd[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        /* -bail: a failed BEGIN IMMEDIATE ends the tool before the marker */
        execlp("sqlite3", "sqlite3", "-batch", "-bail", "-cmd", ".timeout 30000", db, (char *)NULL);
        _exit(127);
    }
    close(pfd[0]);
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    l->pid = pid;
    l->in = pfd[1];
    char *script = NULL;
    if (asprintf(&script, "BEGIN IMMEDIATE;\n%s%s.system touch %s\n", sql ? sql : "",
                 sql ? "\n" : "", l->marker) < 0)
        fail_msg("out of memory");
    write_all(l->in, script);
    free(script);
    if (!wait_until(file_present, l->marker, 60000)) {
        db_lock_kill(l);
        fail_msg("the sqlite3 tool could not take the write lock within 60 s");
    }
}

int db_lock_release(struct db_locker *l, bool commit)
{
    if (l->pid <= 0) return -1;
    write_all(l->in, commit ? "COMMIT;\n.quit\n" : "ROLLBACK;\n.quit\n");
    close(l->in);
    l->in = -1;
    int rc = wait_child(l->pid, 60000);
    l->pid = 0;
    return rc;
}

void db_lock_kill(struct db_locker *l)
{
    if (l->pid <= 0) return;
    kill(l->pid, SIGKILL);
    int st;
    waitpid(l->pid, &st, 0);
    l->pid = 0;
    if (l->in >= 0) close(l->in);
    l->in = -1;
}
