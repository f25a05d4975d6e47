/*
 * cli.c - the data commands: migrate, user, barbero, servicio, outbox,
 * fotos, export, import, backup, restore.
 * They open the same ports as the server (one data store connection) and
 * go through the same core code: `barberia user add` and POST
 * /api/auth/signup share ident_signup().
 */
#include "cli.h"
#include "../core/app.h"
#include "../core/backup.h"
#include "../core/catalog.h"
#include "../core/photos.h"
#include "../core/transfer.h"
#include "../core/users.h"
#include "../domain/roles.h"
#include "../domain/rules.h"
#include "../util/jsonw.h"
#include "../util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

static void error_line(const char *fmt, va_list ap) PRINTF_LIKE(1, 0);

static void error_line(const char *fmt, va_list ap)
{
    fputs("barberia: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_line(fmt, ap);
    va_end(ap);
}

/* Settings flags and command flags may come in any order. config_load()
 * reads settings flags from the start of argv up to the first one it does
 * not know; that one is taken here as a command flag and removed from argv,
 * and the settings are read again from the start. argv is rearranged. */
int cli_parse(const char *cmd, int argc, char **argv, unsigned scopes, struct config *cfg,
              const struct cli_flag *flags, const char *help, bool *done)
{
    *done = false;
    int i = 0;
    for (;;) {
        if (config_load(cfg, scopes, argc, argv, &i) != BR_OK) {
            cli_error("%s: %s", cmd, err_msg());
            return EXIT_USAGE;
        }
        if (i >= argc) break;
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help, stdout);
            fputs("\nData settings (flag or environment variable):\n", stdout);
            config_print_help(CONFIG_DATA, stdout);
            if (scopes & CONFIG_SERVE) {
                fputs("\nService settings (flag or environment variable):\n", stdout);
                config_print_help(CONFIG_SERVE, stdout);
            }
            *done = true;
            return 0;
        }
        const struct cli_flag *f = NULL;
        if (!strncmp(a, "--", 2)) {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t n = eq ? (size_t)(eq - name) : strlen(name);
            for (const struct cli_flag *g = flags; g && g->name; g++)
                if (strlen(g->name) == n && !strncmp(g->name, name, n)) f = g;
            if (f && f->present) {
                if (eq) {
                    cli_error("%s: --%s takes no value", cmd, f->name);
                    return EXIT_USAGE;
                }
                *f->present = true; /* twice says the same */
                i++;
            } else if (f) {
                if (*f->value) {
                    /* which of two values was meant is not ours to guess */
                    cli_error("%s: --%s given twice", cmd, f->name);
                    return EXIT_USAGE;
                }
                if (eq) {
                    *f->value = eq + 1;
                    i++;
                } else if (i + 1 < argc) {
                    *f->value = argv[i + 1];
                    i += 2;
                } else {
                    cli_error("%s: --%s needs a value", cmd, f->name);
                    return EXIT_USAGE;
                }
            }
        }
        if (!f) {
            cli_error("%s: unknown argument '%s' (see barberia %s --help)", cmd, a, cmd);
            return EXIT_USAGE;
        }
        config_free(cfg);
        int consumed = f->present ? 1 : (strchr(a, '=') ? 1 : 2);
        int at = i - consumed;
        for (int k = at; k + consumed < argc; k++)
            argv[k] = argv[k + consumed];
        argc -= consumed;
        i = 0;
    }
    return 0;
}

/* Prints the thread's last error, after "cmd: " unless cmd is NULL. A busy
 * store (the API's 503 "Servicio ocupado") also says what held it up and
 * what to do. */
static void say_error(const char *cmd)
{
    const char *sep = cmd ? ": " : "";
    if (err_retry_after() > 0)
        cli_error("%s%s%s (the data store stayed busy: another writer, such as serve under load "
                  "or an import, held it past BARBERIA_DB_LOCK_WAIT_MS; run it again)",
                  cmd ? cmd : "", sep, err_msg());
    else
        cli_error("%s%s%s", cmd ? cmd : "", sep, err_msg());
}

static int open_app(struct app *app, const struct config *cfg)
{
    if (app_open(app, cfg, 1) != BR_OK) {
        say_error(NULL);
        return EXIT_REFUSED;
    }
    app->public_url = cfg->public_url ? cfg->public_url : "";
    return 0;
}

/* One data command ("user add", "export"...): its flags are parsed with the
 * data settings, its arguments checked before anything is opened, then it
 * acts on the opened app. check and run return 0 or an exit status, after
 * printing their one-line error. */
struct data_command {
    const char *name; /* as its messages name it */
    const char *help;
    const struct cli_flag *flags;            /* NULL: none of its own */
    int (*check)(void *args);                /* NULL: nothing to check */
    int (*run)(struct app *app, void *args); /* NULL: opening is all (migrate) */
    void *args;                              /* where the flags' values land */
    bool existing; /* reads a shop that must be there: a data folder without a
                    * database is refused, not made */
    bool fills;    /* fills a new shop: what it made of the data folder goes
                    * again when it fails */
    bool embedded; /* the embedded database's alone: refused on PostgreSQL
                    * before anything is opened (it has tools of its own) */
};

static int data_command_run(const struct data_command *c, int argc, char **argv)
{
    struct config cfg;
    bool done;
    int rc = cli_parse(c->name, argc, argv, CONFIG_DATA, &cfg, c->flags, c->help, &done);
    if (!rc && !done && c->check) rc = c->check(c->args);
    if (!rc && !done && c->existing && !cfg.database_url) {
        /* a mistyped --data would otherwise become a new, empty shop (and
         * a backup of it, empty, would look like one) */
        char *db = xasprintf("%s/barberia.db", cfg.data_dir);
        struct stat sb;
        if (stat(db, &sb) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
            cli_error("%s: no shop at %s (no barberia.db there): check --data", c->name,
                      cfg.data_dir);
            rc = EXIT_REFUSED;
        } else if (access(db, R_OK) != 0) {
            /* a shop this user may not read (the service's folder, read by
             * another user) is not a mistyped --data */
            bool denied = errno == EACCES || errno == EPERM;
            cli_error("%s: cannot read %s: %s%s", c->name, db, strerror(errno),
                      denied ? " (run it as the user the data folder belongs to)" : "");
            rc = EXIT_REFUSED;
        }
        free(db);
    }
    if (!rc && !done && c->embedded && cfg.database_url) {
        cli_error("%s: PostgreSQL has its own %s tools (see docs/operations.md, Backups)", c->name,
                  c->name);
        rc = EXIT_REFUSED;
    }
    if (!rc && !done) {
        struct transfer_target made;
        if (c->fills)
            transfer_target_make(cfg.data_dir, !cfg.database_url, !cfg.storage_url, &made);
        struct app app;
        rc = open_app(&app, &cfg);
        if (!rc) {
            if (c->run) rc = c->run(&app, c->args);
            app_close(&app);
        }
        if (rc && c->fills) transfer_target_undo(cfg.data_dir, &made);
    }
    config_free(&cfg);
    return rc;
}

/* A bad argument: one line, and the usage exit status. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_line(fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

/* cmd failed with the error at hand: one line, and status. */
static int failed(const char *cmd, int status)
{
    say_error(cmd);
    return status;
}

/* 0 when e is BR_OK, else EXIT_REFUSED after printing cmd's error. */
static int refused_unless_ok(const char *cmd, br_err e)
{
    return e != BR_OK ? failed(cmd, EXIT_REFUSED) : 0;
}

/* What an add that failed with e exits with: its arguments were refused,
 * or the store refused it. */
static int add_status(br_err e)
{
    return e == BR_INVALID ? EXIT_USAGE : EXIT_REFUSED;
}

/* Prints a value for a tab-separated row: tabs, newlines and backslashes
 * escaped, NULL as an empty field. */
static void field(const char *s, bool last)
{
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '\t':
            fputs("\\t", stdout);
            break;
        case '\n':
            fputs("\\n", stdout);
            break;
        case '\r':
            fputs("\\r", stdout);
            break;
        case '\\':
            fputs("\\\\", stdout);
            break;
        default:
            putchar(*p);
        }
    }
    putchar(last ? '\n' : '\t');
}

/* Reads the sub-command of `barberia <cmd> SUB ...` among subs ("add",
 * "list"; NULL-terminated). Returns its index, or -1 after printing help
 * (*status 0) or a one-line error (*status EXIT_USAGE). */
static int subcommand(const char *cmd, int argc, char **argv, const char *const *subs,
                      const char *help, int *status)
{
    const char *sub = argc > 0 ? argv[0] : NULL;
    for (int i = 0; sub && subs[i]; i++)
        if (!strcmp(sub, subs[i])) return i;
    if (sub && (!strcmp(sub, "--help") || !strcmp(sub, "-h"))) {
        fputs(help, stdout);
        *status = 0;
        return -1;
    }
    char names[128] = "";
    size_t o = 0;
    for (int i = 0; subs[i] && o < sizeof names; i++)
        o += (size_t)snprintf(names + o, sizeof names - o, "%s'%s'",
                              !i            ? ""
                              : subs[i + 1] ? ", "
                                            : " or ",
                              subs[i]);
    cli_error("%s: expected %s (see barberia %s --help)", cmd, names, cmd);
    *status = EXIT_USAGE;
    return -1;
}

/* `barberia <cmd> add|list ...`: one of the two commands, by the first
 * argument; --help there prints add's help (the command's). */
static int add_or_list(const char *cmd, int argc, char **argv, const struct data_command *add,
                       const struct data_command *list)
{
    static const char *const subs[] = {"add", "list", NULL};
    int status;
    int which = subcommand(cmd, argc, argv, subs, add->help, &status);
    if (which < 0) return status;
    return data_command_run(which == 0 ? add : list, argc - 1, argv + 1);
}

int cli_migrate(int argc, char **argv)
{
    const struct data_command migrate = {
        .name = "migrate",
        .help = "Usage: barberia migrate [--data DIR]\n"
                "Creates or upgrades the schema of the data store.\n",
    };
    return data_command_run(&migrate, argc, argv);
}

static br_err print_user(void *ud, const struct user *u, const struct perfil *p)
{
    (void)ud;
    field(u->id, false);
    /* a desk client may have none; a deleted account's is no address */
    field(email_es_direccion(u->email) && !email_es_eliminado(u->email) ? u->email : NULL, false);
    field(p ? p->rol : NULL, false);
    field(p ? p->nombre : NULL, false);
    field(p ? p->telefono : NULL, false);
    field(u->created_at, false);
    field(u->last_sign_in_at, true);
    return BR_OK;
}

struct user_args {
    const char *email, *password, *nombre, *telefono, *rol;
    char typed[RULE_PASSWORD_MAX + 3]; /* --password -: the line read, its end, NUL */
};

/* --password -: the password is the first line of standard input, read
 * without echo from a terminal, so that it is in no process list and no
 * shell history. False (said) when none came. */
static bool password_from_stdin(char *buf, size_t n)
{
    bool tty = isatty(STDIN_FILENO) == 1;
    struct termios old, quiet;
    if (tty && tcgetattr(STDIN_FILENO, &old) == 0) {
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        fputs("Password: ", stderr);
        fflush(stderr);
        tty = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
    } else {
        tty = false;
    }
    bool got = fgets(buf, (int)n, stdin) != NULL;
    if (tty) {
        (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        fputc('\n', stderr);
    }
    if (!got) {
        cli_error("user: --password -: no line on standard input");
        return false;
    }
    buf[strcspn(buf, "\r\n")] = '\0'; /* a line too long stays too long */
    return true;
}

/* Bad arguments are refused before anything is opened or written. */
static int user_add_check(void *args)
{
    struct user_args *a = args;
    if (!a->email || !*a->email || !a->password || !*a->password)
        return usage_error("user add: --email and --password are required");
    if (!strcmp(a->password, "-")) {
        if (!password_from_stdin(a->typed, sizeof a->typed)) return EXIT_USAGE;
        a->password = a->typed;
    }
    struct ident_signup check = {a->email, a->password, NULL, NULL, NULL};
    if (ident_signup_check(&check) != BR_OK) return failed("user add", EXIT_USAGE);
    if (a->rol && *a->rol && !rol_is_known(a->rol))
        /* stored as given, as the API stores it; a typo of a staff role is
         * said now, not found at the user's first 403 */
        cli_error("user add: warning: rol \"%s\" is none of cliente, barbero, admin: the "
                  "user is an ordinary client",
                  a->rol);
    return 0;
}

static int user_add(struct app *app, void *args)
{
    const struct user_args *a = args;
    struct ident_signup in = {a->email, a->password, a->nombre, a->telefono,
                              a->rol && *a->rol ? a->rol : NULL};
    struct ident_session s;
    br_err e = ident_signup(app->ident, &in, false, &s);
    if (e) return failed("user add", add_status(e));
    printf("%s\n", s.user_id);
    ident_session_clear(&s);
    return 0;
}

/* user password: the same flags' checks as add's, but for an existing
 * account (its e-mail and password rules) */
static int user_password_check(void *args)
{
    struct user_args *a = args;
    if (!a->email || !*a->email || !a->password || !*a->password)
        return usage_error("user password: --email and --password are required");
    if (a->nombre || a->telefono || a->rol)
        return usage_error("user password: takes --email and --password only");
    if (!strcmp(a->password, "-")) {
        if (!password_from_stdin(a->typed, sizeof a->typed)) return EXIT_USAGE;
        a->password = a->typed;
    }
    struct ident_signup check = {a->email, a->password, NULL, NULL, NULL};
    if (ident_signup_check(&check) != BR_OK) return failed("user password", EXIT_USAGE);
    return 0;
}

static int user_password(struct app *app, void *args)
{
    const struct user_args *a = args;
    br_id id;
    br_err e = users_password_set(app, a->email, a->password, id);
    if (e) return failed("user password", add_status(e));
    printf("%s\n", id);
    return 0;
}

static int user_list(struct app *app, void *args)
{
    (void)args;
    return refused_unless_ok("user list", store_users_each(app->store, print_user, NULL));
}

int cli_user(int argc, char **argv)
{
    static const char help[] =
        "Usage: barberia user add --email E --password P [--nombre N] [--telefono T] [--rol R]\n"
        "       barberia user list\n"
        "       barberia user password --email E --password P\n"
        "Each takes --data DIR (BARBERIA_DATA) and the data store's settings, as every\n"
        "command does (docs/operations.md). --password - reads the password from the\n"
        "first line of standard input (without echo from a terminal), so that it shows\n"
        "in no process list or shell history.\n"
        "add: creates an identity user and its profile (rol default: cliente; admin and\n"
        "     barbero are staff; any other rol is kept, with a warning, and is a client)\n"
        "     and prints the new user id. The address of a client the front desk made\n"
        "     (no password yet) gives her account the password and the rol, and prints\n"
        "     her id.\n"
        "list: one tab-separated row per user: id, email (empty for a client the front\n"
        "      desk made without one, and for a deleted account), rol, nombre, telefono,\n"
        "      created_at, last sign-in.\n"
        "password: sets the password of the account at that address (a lost\n"
        "      administrator's, say), ends its sessions and the reset links asked for\n"
        "      before, and prints its id; an address no account has is refused (exit 1).\n";
    struct user_args a = {0};
    const struct cli_flag flags[] = {{"email", &a.email, NULL},   {"password", &a.password, NULL},
                                     {"nombre", &a.nombre, NULL}, {"telefono", &a.telefono, NULL},
                                     {"rol", &a.rol, NULL},       {NULL, NULL, NULL}};
    const struct data_command add = {"user add", help, flags, user_add_check, user_add, &a};
    const struct data_command list = {"user list", help, NULL, NULL, user_list, NULL, true};
    const struct data_command password = {"user password", help, flags, user_password_check,
                                          user_password,   &a,   true};
    static const char *const subs[] = {"add", "list", "password", NULL};
    int status;
    int which = subcommand("user", argc, argv, subs, help, &status);
    if (which >= 0) {
        const struct data_command *c[] = {&add, &list, &password};
        status = data_command_run(c[which], argc - 1, argv + 1);
    }
    sodium_memzero(a.typed, sizeof a.typed);
    return status;
}

/* What rule_nombre_ok asks of --nombre, as the CLI says it. */
#define NOMBRE_RULE "--nombre must be UTF-8 text of at most %d bytes"

static br_err print_barbero(void *ud, const struct barbero *b)
{
    (void)ud;
    field(b->id, false);
    field(b->nombre, false);
    field(b->foto_url, true);
    return BR_OK;
}

struct barbero_args {
    const char *nombre, *foto;
};

/* The rules POST /api/admin/barberos applies, before anything is opened. */
static int barbero_add_check(void *args)
{
    const struct barbero_args *a = args;
    if (!a->nombre || !*a->nombre) return usage_error("barbero add: --nombre is required");
    if (!rule_nombre_ok(a->nombre))
        return usage_error("barbero add: " NOMBRE_RULE, RULE_NOMBRE_MAX);
    if (a->foto && !rule_foto_url_ok(a->foto))
        return usage_error("barbero add: --foto-url must be UTF-8 text of 1 to %d bytes",
                           RULE_URL_MAX);
    return 0;
}

static int barbero_add(struct app *app, void *args)
{
    const struct barbero_args *a = args;
    struct barbero b = {.nombre = (char *)a->nombre, .foto_url = (char *)a->foto};
    br_err e = catalog_barbero_add(app, &b);
    if (e) return failed("barbero add", add_status(e));
    printf("%s\n", b.id);
    return 0;
}

static int barbero_list(struct app *app, void *args)
{
    (void)args;
    return refused_unless_ok("barbero list", store_barberos_each(app->store, print_barbero, NULL));
}

int cli_barbero(int argc, char **argv)
{
    static const char help[] =
        "Usage: barberia barbero add --nombre N [--foto-url U]\n"
        "       barberia barbero list\n"
        "Both take --data DIR (BARBERIA_DATA) and the data store's settings, as every\n"
        "command does (docs/operations.md).\n"
        "add: adds a barber and prints the new id (N: at most 200 bytes, U: 1 to 2048\n"
        "     bytes, as the API's POST /api/admin/barberos accepts).\n"
        "list: one tab-separated row per barber: id, nombre, foto_url.\n";
    struct barbero_args a = {0};
    const struct cli_flag flags[] = {
        {"nombre", &a.nombre, NULL}, {"foto-url", &a.foto, NULL}, {NULL, NULL, NULL}};
    const struct data_command add = {"barbero add",     help,        flags,
                                     barbero_add_check, barbero_add, &a};
    const struct data_command list = {"barbero list", help, NULL, NULL, barbero_list, NULL, true};
    return add_or_list("barbero", argc, argv, &add, &list);
}

static br_err print_servicio(void *ud, const struct servicio *s)
{
    (void)ud;
    char dur[32], precio[JW_REAL_MAX];
    snprintf(dur, sizeof dur, "%lld", (long long)s->duracion_min);
    /* a price in whole cents with two decimals (9.00, 12.50); any other
     * exactly as stored (1.999, never rounded to 2.00) */
    if (s->precio < 1e13 && (double)(int64_t)(s->precio * 100 + 0.5) / 100 == s->precio)
        snprintf(precio, sizeof precio, "%.2f", s->precio);
    else if (jw_real_text(s->precio, precio) < 0)
        precio[0] = '\0';
    field(s->id, false);
    field(s->nombre, false);
    field(dur, false);
    field(precio, true);
    return BR_OK;
}

struct servicio_args {
    const char *nombre, *dur, *precio;
    struct servicio s; /* what they say, once checked */
};

/* The rules POST /api/admin/servicios applies, before anything is opened. */
static int servicio_add_check(void *args)
{
    struct servicio_args *a = args;
    char *end;
    if (!a->nombre || !*a->nombre || !a->dur || !a->precio)
        return usage_error("servicio add: --nombre, --duracion-min and --precio are required");
    if (!rule_nombre_ok(a->nombre))
        return usage_error("servicio add: " NOMBRE_RULE, RULE_NOMBRE_MAX);
    errno = 0;
    long d = strtol(a->dur, &end, 10);
    if (errno || end == a->dur || *end || !rule_duracion_ok(d))
        return usage_error("servicio add: --duracion-min must be a whole number of minutes, 1-%d",
                           RULE_DURACION_MAX);
    errno = 0;
    double p = strtod(a->precio, &end);
    if (errno || end == a->precio || *end || !rule_precio_ok(p))
        return usage_error("servicio add: --precio must be a number >= 0");
    a->s.nombre = (char *)a->nombre;
    a->s.duracion_min = d;
    a->s.precio = p;
    return 0;
}

static int servicio_add(struct app *app, void *args)
{
    struct servicio_args *a = args;
    br_err e = catalog_servicio_add(app, &a->s);
    if (e) return failed("servicio add", add_status(e));
    printf("%s\n", a->s.id);
    return 0;
}

static int servicio_list(struct app *app, void *args)
{
    (void)args;
    return refused_unless_ok("servicio list",
                             store_servicios_each(app->store, print_servicio, NULL));
}

int cli_servicio(int argc, char **argv)
{
    static const char help[] =
        "Usage: barberia servicio add --nombre N --duracion-min M --precio P\n"
        "       barberia servicio list\n"
        "Both take --data DIR (BARBERIA_DATA) and the data store's settings, as every\n"
        "command does (docs/operations.md).\n"
        "add: adds a service (N: at most 200 bytes; M: whole minutes, 1-1440; P: a price\n"
        "     from 0 to 1e9, as the API's POST /api/admin/servicios accepts) and prints the id.\n"
        "list: one tab-separated row per service: id, nombre, duracion_min, precio (whole\n"
        "      cents with two decimals, any other price as stored).\n";
    struct servicio_args a = {0};
    const struct cli_flag flags[] = {{"nombre", &a.nombre, NULL},
                                     {"duracion-min", &a.dur, NULL},
                                     {"precio", &a.precio, NULL},
                                     {NULL, NULL, NULL}};
    const struct data_command add = {"servicio add",     help,         flags,
                                     servicio_add_check, servicio_add, &a};
    const struct data_command list = {"servicio list", help, NULL, NULL, servicio_list, NULL, true};
    return add_or_list("servicio", argc, argv, &add, &list);
}

/* One row of `outbox list`; a pending message already tried is
 * "retrying". want: the state asked for (NULL: any). */
struct outbox_row {
    const char *id, *status, *created_at, *next_attempt_at, *recipient, *cita_id, *last_error,
        *kind, *canal;
    int64_t attempts;
};

static br_err print_outbox_row(const char *want, const struct outbox_row *m)
{
    const char *state = m->status;
    if (!strcmp(state, "pending") && m->attempts > 0) state = "retrying";
    if (want && !strcmp(want, "retrying") && strcmp(state, want) != 0) return BR_OK;
    char attempts[32];
    snprintf(attempts, sizeof attempts, "%lld", (long long)m->attempts);
    field(m->id, false);
    field(state, false);
    field(attempts, false);
    field(m->created_at, false);
    field(!strcmp(m->status, "pending") ? m->next_attempt_at : "", false);
    field(m->recipient, false);
    field(m->cita_id, false);
    field(m->last_error, false);
    field(m->kind, false);
    field(m->canal, true);
    return BR_OK;
}

static br_err print_outbox(void *ud, const struct outbox_msg *m)
{
    const struct outbox_row r = {m->id,        m->status,  m->created_at, m->next_attempt_at,
                                 m->recipient, m->cita_id, m->last_error, m->kind,
                                 m->canal,     m->attempts};
    return print_outbox_row(ud, &r);
}

static br_err print_cuenta_correo(void *ud, const struct cuenta_correo_view *m)
{
    const struct outbox_row r = {m->id,        m->status,  m->created_at, m->next_attempt_at,
                                 m->recipient, "",         m->last_error, m->kind,
                                 "email",      m->attempts};
    return print_outbox_row(ud, &r);
}

static int outbox_check(void *args)
{
    const char *status = *(const char **)args;
    /* the outbox's states, and retrying: a pending message already tried */
    if (!status || word_in(outbox_estados(), status) || !strcmp(status, "retrying")) return 0;
    return usage_error("outbox list: --status must be pending, retrying, sent, dropped or skipped");
}

static int outbox_list(struct app *app, void *args)
{
    const char *want = *(const char **)args;
    /* retrying is pending, told apart row by row */
    const char *status = want && !strcmp(want, "retrying") ? "pending" : want;
    br_err rc = store_outbox_each(app->store, status, print_outbox, (void *)want);
    if (!rc) rc = store_cuenta_correo_each(app->store, status, print_cuenta_correo, (void *)want);
    return refused_unless_ok("outbox list", rc);
}

int cli_outbox(int argc, char **argv)
{
    static const char help[] =
        "Usage: barberia outbox list [--status pending|retrying|sent|dropped|skipped]\n"
        "Lists the messages of the outbox (to clients and barbers, by e-mail and WhatsApp),\n"
        "oldest first, then the account's e-mails (password resets, address changes),\n"
        "oldest first (default: every message not delivered, i.e. pending, retrying,\n"
        "dropped and skipped). One tab-separated row each: id, state (pending, retrying,\n"
        "sent, dropped, skipped: not to be sent any more, as a withdrawn consent or a\n"
        "cancelled appointment), attempts, queued at, next attempt, recipient, cita id\n"
        "(for aviso_espera the waiting-list entry's id; empty for the account's), last\n"
        "error, kind (confirmacion, cancelacion, reprogramacion, recordatorio, cierre,\n"
        "aviso_espera, aviso_cita, aviso_cambio, aviso_cancelacion; restablecer,\n"
        "email_confirmar, email_aviso, whatsapp_aviso), channel (email, whatsapp).\n";
    static const char *const list_only[] = {"list", NULL};
    int exit_status;
    if (subcommand("outbox", argc, argv, list_only, help, &exit_status) < 0) return exit_status;
    const char *status = NULL;
    const struct cli_flag flags[] = {{"status", &status, NULL}, {NULL, NULL, NULL}};
    const struct data_command list = {"outbox list", help,    flags, outbox_check,
                                      outbox_list,   &status, true};
    return data_command_run(&list, argc - 1, argv + 1);
}

static void print_retyped(void *ud, const char *key)
{
    (void)ud;
    fputs("retyped\t", stdout);
    field(key, true);
}

static int fotos_retype(struct app *app, void *args)
{
    (void)args;
    bool applies = false;
    struct photos_retype_stats st;
    if (photos_retype(app, print_retyped, NULL, &applies, &st) != BR_OK)
        return failed("fotos retype", EXIT_REFUSED);
    if (!applies)
        printf("the folder store's photos are served only by the service, which decides their "
               "type: nothing to do\n");
    else
        printf("checked %lld photos: %lld retyped, %lld removed (deleted meanwhile), %lld objects "
               "without a photo record left alone\n",
               (long long)st.checked, (long long)st.fixed, (long long)st.removed,
               (long long)st.skipped);
    return 0;
}

int cli_fotos(int argc, char **argv)
{
    static const char help[] =
        "Usage: barberia fotos retype [--data DIR]\n"
        "Rewrites, in an S3 object store, the stored type of every photo an older version\n"
        "stored with the type its client declared (such as image/png,text/javascript):\n"
        "the store then serves each with its canonical type (image/<subtype>, else\n"
        "application/octet-stream), and a type that is not a raster image as an\n"
        "attachment - what uploads get now. Only the metadata changes (a copy of each\n"
        "object onto itself); objects already right are left alone, so it may be run\n"
        "again, and beside `serve`. Prints one row per rewritten object, then a summary.\n"
        "The folder store needs nothing: its photos reach readers only through the\n"
        "service, which decides the type when serving.\n";
    static const char *const retype_only[] = {"retype", NULL};
    int exit_status;
    if (subcommand("fotos", argc, argv, retype_only, help, &exit_status) < 0) return exit_status;
    /* it reads the photos of a shop that is there: a mistyped --data makes none */
    const struct data_command retype = {
        .name = "fotos retype", .help = help, .run = fotos_retype, .existing = true};
    return data_command_run(&retype, argc - 1, argv + 1);
}

typedef br_err (*transfer_fn)(struct app *app, const char *dir, struct transfer_stats *st);

struct transfer_args {
    const char *cmd, *flag, *done_word;
    transfer_fn fn;
    const char *dir;
};

static int transfer_check(void *args)
{
    const struct transfer_args *a = args;
    if (!a->dir || !*a->dir) return usage_error("%s: --%s DIR is required", a->cmd, a->flag);
    /* a source that is not there is refused before the target is opened
     * (which would create and migrate an empty one) */
    struct stat sb;
    if (!strcmp(a->flag, "from") && (stat(a->dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        cli_error("%s: %s is not a folder", a->cmd, a->dir);
        return EXIT_REFUSED;
    }
    /* nor one that holds no export (its manifest) or no backup (its
     * database): a mix-up of the two is said before anything is made */
    const char *needs = !strcmp(a->cmd, "import")    ? "manifest.json"
                        : !strcmp(a->cmd, "restore") ? "barberia.db"
                                                     : NULL;
    if (needs) {
        char *path = xasprintf("%s/%s", a->dir, needs);
        bool there = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
        free(path);
        if (!there) {
            cli_error("%s: %s holds no %s (no %s there)", a->cmd, a->dir,
                      !strcmp(a->cmd, "import") ? "export" : "backup", needs);
            return EXIT_REFUSED;
        }
    }
    return 0;
}

static int transfer_run(struct app *app, void *args)
{
    const struct transfer_args *a = args;
    struct transfer_stats st = {0};
    if (a->fn(app, a->dir, &st) != BR_OK) return failed(a->cmd, EXIT_REFUSED);
    printf("%s: %lld row%s, %lld photo%s (%lld bytes)\n", a->done_word, (long long)st.rows,
           st.rows == 1 ? "" : "s", (long long)st.objects, st.objects == 1 ? "" : "s",
           (long long)st.bytes);
    return 0;
}

/* export, import, backup, restore: one folder argument each */
static int transfer(const char *cmd, const char *flag, transfer_fn fn, const char *done_word,
                    int argc, char **argv, const char *help)
{
    struct transfer_args a = {.cmd = cmd, .flag = flag, .done_word = done_word, .fn = fn};
    const struct cli_flag flags[] = {{flag, &a.dir, NULL}, {NULL, NULL, NULL}};
    /* export and backup read the shop the settings name; import and
     * restore fill a new one */
    const struct data_command c = {.name = cmd,
                                   .help = help,
                                   .flags = flags,
                                   .check = transfer_check,
                                   .run = transfer_run,
                                   .args = &a,
                                   .existing = !strcmp(flag, "to"),
                                   .fills = !strcmp(flag, "from"),
                                   .embedded = fn == backup_write || fn == backup_restore};
    return data_command_run(&c, argc, argv);
}

int cli_export(int argc, char **argv)
{
    return transfer("export", "to", transfer_export, "exported", argc, argv,
                    "Usage: barberia export --to DIR [--data DIR]\n"
                    "Writes the shop's data (users, profiles, sessions, barbers and their\n"
                    "contacts, services, appointments, history, photos' records, the outbox,\n"
                    "schedules, days off and closures, consents, the waiting list, the\n"
                    "links' key and each client's links' generation) and its photos to DIR,\n"
                    "a new folder, from one snapshot of the database, with a manifest\n"
                    "(format version 6) of row counts and\n"
                    "SHA-256 checksums. Reads the data store the settings name (SQLite,\n"
                    "PostgreSQL; folder or S3); may run beside `serve`. DIR is private to\n"
                    "the user who runs it (0700, files 0600): it holds password hashes.\n");
}

int cli_import(int argc, char **argv)
{
    return transfer("import", "from", transfer_import, "imported", argc, argv,
                    "Usage: barberia import --from DIR [--data DIR]\n"
                    "Loads an export into the data store the settings name, which must hold no\n"
                    "data yet and no running serve (refused while a serve's lease is live):\n"
                    "checks every file against the manifest first (nothing is written\n"
                    "on a mismatch), stores the photos, then inserts every row in one\n"
                    "transaction (on failure the photos it stored are removed again; after a\n"
                    "crash, by serve's sweeper or by the next import). An\n"
                    "export of version 1 (before the schedules) loads with every barber and\n"
                    "service active and every barber on the default week.\n");
}

int cli_backup(int argc, char **argv)
{
    return transfer("backup", "to", backup_write, "backed up", argc, argv,
                    "Usage: barberia backup --to DIR [--data DIR]\n"
                    "Backs the embedded database up while `serve` runs: DIR (a new folder)\n"
                    "becomes a data folder of its own, with barberia.db (SQLite's online copy:\n"
                    "one consistent snapshot) and storage/ (every photo the copy names, from\n"
                    "the object store the settings name), private to the user who runs it\n"
                    "(0700; barberia.db 0600). On PostgreSQL use pg_dump (see\n"
                    "docs/operations.md, Backups) or barberia export.\n");
}

int cli_restore(int argc, char **argv)
{
    return transfer("restore", "from", backup_restore, "restored", argc, argv,
                    "Usage: barberia restore --from DIR [--data DIR]\n"
                    "Restores a backup into the data folder the settings name, which must hold\n"
                    "no data yet (stop serve first: refused while its lease is live): checks\n"
                    "every row as import checks an\n"
                    "export's, stores the photos into the object store, then\n"
                    "the database in one step (on a failure the photos are removed again;\n"
                    "after a crash, by serve's sweeper or by the next restore).\n");
}
