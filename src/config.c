/*
 * config.c - settings from the environment and flags (see config.h).
 *
 * One table describes every setting; parsing, defaults and --help all come
 * from it, so they cannot disagree.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum kind { K_STR, K_INT };

struct setting {
    const char *name; /* the variable's suffix: BARBERIA_<name> */
    unsigned scope;
    enum kind kind;
    size_t off;
    const char *def; /* NULL: unset */
    long min, max;   /* for K_INT */
    const char *help;
};

#define S(n, sc, f, d, h)                                                                          \
    {                                                                                              \
        n, sc, K_STR, offsetof(struct config, f), d, 0, 0, h                                       \
    }
#define I(n, sc, f, d, lo, hi, h)                                                                  \
    {                                                                                              \
        n, sc, K_INT, offsetof(struct config, f), d, lo, hi, h                                     \
    }

static const struct setting settings[] = {
    S("DATA", CONFIG_DATA, data_dir, "./data", "folder of the SQLite database and the photo store"),
    S("DATABASE_URL", CONFIG_DATA, database_url, NULL,
      "postgresql://user:password@host:port/db selects PostgreSQL instead of SQLite"),
    S("STORAGE_URL", CONFIG_DATA, storage_url, NULL,
      "s3://, http:// or https:// selects an S3-compatible store (unset: a folder in DATA)"),
    S("STORAGE_REGION", CONFIG_DATA, storage_region, "us-east-1",
      "S3 region the requests are signed for"),
    S("STORAGE_ACCESS_KEY", CONFIG_DATA, storage_access_key, NULL, "S3 access key id"),
    S("STORAGE_SECRET_KEY", CONFIG_DATA, storage_secret_key, NULL, "S3 secret access key"),
    S("STORAGE_PATH_STYLE", CONFIG_DATA, storage_path_style, "auto",
      "1: <host>/<bucket>/<key>, 0: <bucket>.<host>/<key>, auto: 0 on AWS, else 1"),
    S("STORAGE_PUBLIC_URL", CONFIG_DATA, storage_public_url, NULL,
      "public base URL of the S3 photo bucket: photo URLs point there (unset: served by us)"),
    I("STORAGE_TIMEOUT_MS", CONFIG_DATA, storage_timeout_ms, "30000", 100, 600000,
      "bound on each call to the S3 store (connect and transfer)"),
    S("STORAGE_CA_FILE", CONFIG_DATA, storage_ca_file, NULL,
      "CA bundle to verify an https S3 store with (default: the system's)"),
    S("LISTEN", CONFIG_SERVE, listen, "127.0.0.1:8080",
      "address:port to listen on (:0 = any free port)"),
    S("PUBLIC_URL", CONFIG_SERVE, public_url, NULL,
      "base of public URLs (default http://<listen address>)"),
    I("MAX_CONNECTIONS", CONFIG_SERVE, max_connections, "10000", 16, 1000000,
      "open HTTP connections in all (the open-file limit is raised to fit)"),
    I("MAX_CONNECTIONS_PER_IP", CONFIG_SERVE, max_per_ip, "128", 0, 1000000,
      "open connections per client address (0: no cap; use 0 behind a proxy)"),
    I("IO_THREADS", CONFIG_SERVE, io_threads, "0", 0, 256,
      "threads reading and writing sockets (0: one per core, four per core on PostgreSQL)"),
    I("READ_WORKERS", CONFIG_SERVE, read_workers, "0", 0, 1024,
      "threads running GET/HEAD requests (0: none, reads run on the I/O threads)"),
    I("WORKERS", CONFIG_SERVE, workers, "64", 1, 4096,
      "threads running requests that write (database, calendar, hashing)"),
    I("QUEUE_MAX", CONFIG_SERVE, queue_max, "10000", 1, 1000000,
      "requests waiting for a worker, per pool, before 503 Servicio ocupado"),
    I("HEADER_TIMEOUT_MS", CONFIG_SERVE, header_timeout_ms, "10000", 100, 600000,
      "time for a request's line and headers to arrive in full"),
    I("BODY_TIMEOUT_MS", CONFIG_SERVE, body_timeout_ms, "30000", 100, 3600000,
      "time for a request body to arrive, plus its size at BODY_MIN_RATE"),
    I("BODY_MIN_RATE", CONFIG_SERVE, body_min_rate, "8192", 1, 1000000000,
      "slowest body upload allowed, in bytes per second"),
    I("IDLE_TIMEOUT", CONFIG_SERVE, idle_timeout_s, "30", 1, 3600,
      "seconds a silent connection is kept open"),
    I("SHUTDOWN_GRACE_MS", CONFIG_SERVE, shutdown_grace_ms, "10000", 0, 600000,
      "how long a stop waits for in-flight requests"),
    I("DB_POOL", CONFIG_SERVE, db_pool, "0", 0, 4096,
      "connections to the data store (0: one per thread that may use one)"),
    I("DB_WAIT_MS", CONFIG_SERVE, db_wait_ms, "5000", 1, 600000,
      "longest wait for a free database connection (then 503)"),
    I("DB_LOCK_WAIT_MS", CONFIG_SERVE, db_lock_wait_ms, "10000", 1, 600000,
      "longest wait for the database's write lock held by another writer (then 503)"),
    I("MEMO", CONFIG_SERVE, memo, "1", 0, 1,
      "1: remember sessions, the catalog, clients' listings and days' free slots while they "
      "hold (SQLite), and the catalog's names for listings (both databases); 0: read "
      "everything afresh"),
    I("HEALTH_TIMEOUT_MS", CONFIG_SERVE, health_timeout_ms, "1000", 1, 60000,
      "bound on the database check of GET /healthz (then 503)"),
    S("METRICS_TOKEN", CONFIG_SERVE, metrics_token, NULL,
      "bearer token GET /metrics asks for (unset: loopback clients only)"),
    S("CORS_ORIGINS", CONFIG_SERVE, cors_origins, NULL,
      "origins a browser app may call the API from, comma-separated (unset: same-origin only)"),
    S("TRUSTED_PROXIES", CONFIG_SERVE, trusted_proxies, NULL,
      "addresses of the reverse proxies in front, comma-separated: from them the client is the "
      "last X-Forwarded-For address that is none of them (unset: the connection's address)"),
    I("HASH_MAX", CONFIG_SERVE, hash_max, "0", 0, 1024,
      "password hashes at once, 64 MiB each (0: the number of cores); sign-ups use all but one"),
    I("HASH_WAIT_MS", CONFIG_SERVE, hash_wait_ms, "2000", 1, 600000,
      "longest wait for a password-hashing slot (then 503)"),
    I("LOGIN_MAX_FAILURES", CONFIG_SERVE, login_max_failures, "5", 1, 100000,
      "failed sign-ins of one account within the window before it is locked (then 429)"),
    I("LOGIN_ADDR_MAX_FAILURES", CONFIG_SERVE, login_addr_max_failures, "50", 1, 1000000,
      "failed sign-ins from one client address within the window before it is locked"),
    I("LOGIN_WINDOW_S", CONFIG_SERVE, login_window_s, "900", 1, 86400,
      "seconds after which a failed sign-in is forgotten"),
    I("LOGIN_LOCK_S", CONFIG_SERVE, login_lock_s, "30", 1, 86400,
      "seconds of the first lock; each next lock doubles"),
    I("LOGIN_LOCK_MAX_S", CONFIG_SERVE, login_lock_max_s, "300", 1, 86400,
      "seconds of the longest lock"),
    I("SWEEP_INTERVAL_MS", CONFIG_SERVE, sweep_interval_ms, "10000", 100, 3600000,
      "how often leftovers of crashed processes are swept (a lease lapses after 3)"),
    I("PHOTO_QUOTA_BYTES", CONFIG_SERVE, photo_quota_bytes, "209715200", 0, INT_MAX,
      "bytes of photos one uploader may keep, each counted in whole 4 KiB (0: no limit)"),
    S("GOOGLE_CREDENTIALS", CONFIG_SERVE, google_credentials, NULL,
      "service-account key file; unset: no calendar"),
    S("GOOGLE_SUBJECT", CONFIG_SERVE, google_subject, NULL,
      "Workspace user the service account acts for (domain-wide delegation)"),
    S("GOOGLE_CALENDAR_ID", CONFIG_SERVE, google_calendar_id, "primary", "calendar to write to"),
    S("GOOGLE_API_URL", CONFIG_SERVE, google_api_url, "https://www.googleapis.com/calendar/v3",
      "base of the Calendar API"),
    I("CALENDAR_TIMEOUT_MS", CONFIG_SERVE, calendar_timeout_ms, "5000", 100, 60000,
      "bound on the whole calendar attempt"),
    S("SMTP_URL", CONFIG_SERVE, smtp_url, NULL,
      "smtp://host:port or smtps://host:port; unset: no e-mail"),
    S("SMTP_USER", CONFIG_SERVE, smtp_user, NULL, "SMTP user name"),
    S("SMTP_PASSWORD", CONFIG_SERVE, smtp_password, NULL, "SMTP password"),
    S("SMTP_FROM", CONFIG_SERVE, smtp_from, "no-reply@localhost", "sender address"),
    S("SMTP_CA_FILE", CONFIG_SERVE, smtp_ca_file, NULL,
      "CA bundle to verify the mail server with (default: the system's)"),
    S("SMTP_TLS", CONFIG_SERVE, smtp_tls, "try",
      "STARTTLS over smtp://: try (used when the server offers it) or require (a server that "
      "offers none gets nothing; the message waits and is retried); smtps:// is TLS throughout"),
    I("SMTP_TIMEOUT_MS", CONFIG_SERVE, smtp_timeout_ms, "15000", 100, 600000,
      "bound on one delivery attempt"),
    I("SMTP_RETRY_FOR", CONFIG_SERVE, smtp_retry_for_s, "86400", 0, 30 * 86400,
      "seconds a failing message is retried before it is dropped"),
    /* bookable hours */
    S("SHOP_NAME", CONFIG_SERVE, shop_name, "Barbería",
      "the shop's name, as the web app shows it (the confirmation's \"Dónde\")"),
    S("SHOP_ADDRESS", CONFIG_SERVE, shop_address, NULL,
      "the shop's address, shown with its name in the appointment messages and the .ics"),
    S("SHOP_PHONE", CONFIG_SERVE, shop_phone, NULL,
      "the shop's phone, shown on an appointment's page once it can no longer be changed there"),
    S("TZ", CONFIG_SERVE, tz, "UTC",
      "the shop's time zone (IANA name): schedules, free slots and e-mail times"),
    I("SLOT_MIN", CONFIG_SERVE, slot_min, "15", 1, 1440,
      "minutes between the free slots offered, from each working interval's start"),
    I("MIN_NOTICE_MIN", CONFIG_SERVE, min_notice_min, "120", 0, 525600,
      "minutes of notice a free slot needs from now"),
    I("MAX_DAYS_AHEAD", CONFIG_SERVE, max_days_ahead, "90", 0, 3660,
      "days ahead (from today in the shop's zone) that free slots are offered"),
    I("MAX_UPCOMING_CITAS", CONFIG_SERVE, max_upcoming, "0", 0, 1000000,
      "appointments not cancelled and not yet started one client may hold (0: no limit)"),
    I("CANCEL_CUTOFF_MIN", CONFIG_SERVE, cancel_cutoff_min, "120", 0, 525600,
      "minutes before the start after which a client can no longer cancel or reschedule"),
    I("REMINDER_HOURS", CONFIG_SERVE, reminder_hours, "-1", -1, 8760,
      "one reminder this many hours before the start instead of REMINDER_OFFSETS (0: no "
      "reminders; -1: REMINDER_OFFSETS decides)"),
    S("REMINDER_OFFSETS", CONFIG_SERVE, reminder_offsets, "24h,2h",
      "when reminders go (e-mail and WhatsApp), before the start: d, h or m each, comma-separated "
      "(\"no\": none)"),
    S("WHATSAPP_TOKEN", CONFIG_SERVE, whatsapp_token, NULL,
      "WhatsApp Business Cloud API access token (never logged); unset: no WhatsApp"),
    S("WHATSAPP_PHONE_NUMBER_ID", CONFIG_SERVE, whatsapp_phone_id, NULL,
      "the id of the business phone number messages are sent from"),
    S("WHATSAPP_API_URL", CONFIG_SERVE, whatsapp_api_url, "https://graph.facebook.com/v21.0",
      "base of the Graph API, with its version"),
    S("WHATSAPP_APP_SECRET", CONFIG_SERVE, whatsapp_app_secret, NULL,
      "the Meta app's secret: checks the signature of the webhook's status deliveries"),
    S("WHATSAPP_VERIFY_TOKEN", CONFIG_SERVE, whatsapp_verify_token, NULL,
      "the token the webhook's verification handshake must present"),
    S("WHATSAPP_DEFAULT_COUNTRY", CONFIG_SERVE, whatsapp_country, "34",
      "country calling code put in front of a phone number written without one"),
    S("WHATSAPP_LANGUAGE", CONFIG_SERVE, whatsapp_language, "es",
      "language code of the approved templates"),
    S("WHATSAPP_TEMPLATE_CONFIRMACION", CONFIG_SERVE, whatsapp_tpl_confirmacion,
      "barberia_confirmacion", "template of a booking's confirmation"),
    S("WHATSAPP_TEMPLATE_CANCELACION", CONFIG_SERVE, whatsapp_tpl_cancelacion,
      "barberia_cancelacion", "template of a cancellation"),
    S("WHATSAPP_TEMPLATE_REPROGRAMACION", CONFIG_SERVE, whatsapp_tpl_reprogramacion,
      "barberia_reprogramacion", "template of a change of time"),
    S("WHATSAPP_TEMPLATE_RECORDATORIO", CONFIG_SERVE, whatsapp_tpl_recordatorio,
      "barberia_recordatorio", "template of a reminder"),
    S("WHATSAPP_TEMPLATE_ESPERA", CONFIG_SERVE, whatsapp_tpl_espera, "barberia_hueco_libre",
      "template of a waiting-list notice (a slot freed)"),
    S("WHATSAPP_QUIET_HOURS", CONFIG_SERVE, whatsapp_quiet_hours, "21:00-09:00",
      "shop hours in which no WhatsApp message leaves but a cancellation; others wait for the end "
      "(\"no\": none)"),
    I("WHATSAPP_TIMEOUT_MS", CONFIG_SERVE, whatsapp_timeout_ms, "15000", 100, 600000,
      "bound on one call to the Graph API"),
    I("WHATSAPP_MAX_PER_DAY", CONFIG_SERVE, whatsapp_max_per_day, "20", 0, 100000,
      "WhatsApp messages about one client in 24 hours at most, to any number; past it they are "
      "skipped (the e-mail still goes; 0: no cap)"),
};

static char **str_field(struct config *cfg, const struct setting *s)
{
    return (char **)((char *)cfg + s->off);
}

static int *int_field(struct config *cfg, const struct setting *s)
{
    return (int *)((char *)cfg + s->off);
}

static void flag_name(const struct setting *s, char *out, size_t n)
{
    size_t o = 0;
    for (const char *p = s->name; *p && o + 1 < n; p++)
        out[o++] = *p == '_' ? '-' : (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    out[o] = '\0';
}

static br_err set_value(struct config *cfg, const struct setting *s, const char *v,
                        const char *origin)
{
    if (s->kind == K_STR) {
        char **f = str_field(cfg, s);
        free(*f);
        *f = xstrdup(v);
        return BR_OK;
    }
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < s->min || n > s->max)
        return err_set(BR_CONFIG, "%s: expected a whole number from %ld to %ld, got '%s'", origin,
                       s->min, s->max, v);
    *int_field(cfg, s) = (int)n;
    return BR_OK;
}

br_err config_load(struct config *cfg, unsigned scopes, int argc, char **argv, int *idx)
{
    memset(cfg, 0, sizeof *cfg);
    br_err rc = BR_OK;
    for (size_t i = 0; i < ARRAY_LEN(settings) && !rc; i++) {
        const struct setting *s = &settings[i];
        char var[64];
        snprintf(var, sizeof var, "BARBERIA_%s", s->name);
        const char *v = getenv(var);
        if (v && !*v) v = NULL; /* an empty variable counts as unset */
        if (!v) v = s->def;
        if (v) rc = set_value(cfg, s, v, var);
        /* a setting of another command (serve's), in an environment the
         * commands share: a value that command would refuse stops it, not
         * this one, which keeps the default */
        if (rc && !(s->scope & scopes)) {
            err_clear();
            rc = s->def ? set_value(cfg, s, s->def, var) : BR_OK;
        }
    }
    bool given[ARRAY_LEN(settings)] = {false};
    while (!rc && *idx < argc) {
        const char *arg = argv[*idx];
        if (strncmp(arg, "--", 2) != 0) break;
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const struct setting *found = NULL;
        for (size_t i = 0; i < ARRAY_LEN(settings); i++) {
            char fl[64];
            flag_name(&settings[i], fl, sizeof fl);
            if ((settings[i].scope & scopes) && strlen(fl) == nlen && !memcmp(fl, name, nlen)) {
                found = &settings[i];
                break;
            }
        }
        if (!found) break;
        /* which of two values was meant is not ours to guess */
        if (given[found - settings])
            return err_set(BR_CONFIG, "--%.*s given twice", (int)nlen, name);
        given[found - settings] = true;
        const char *v;
        if (eq) {
            v = eq + 1;
            (*idx)++;
        } else {
            if (*idx + 1 >= argc) return err_set(BR_CONFIG, "%s needs a value", arg);
            v = argv[*idx + 1];
            *idx += 2;
        }
        rc = set_value(cfg, found, v, arg);
    }
    if (!rc && (!cfg->data_dir || !*cfg->data_dir))
        rc = err_set(BR_CONFIG, "the data folder must not be empty");
    return rc;
}

int config_io_threads(const struct config *cfg)
{
    if (cfg->io_threads > 0) return cfg->io_threads;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = (int)(ncpu > 0 ? ncpu : 1);
    /* a read on PostgreSQL waits for the server (a round trip, its CPU on
     * the same machine or another): four times as many keep the cores busy */
    return cfg->database_url ? 4 * cores : cores;
}

int config_db_pool(const struct config *cfg)
{
    if (cfg->db_pool > 0) return cfg->db_pool;
    return cfg->workers + config_io_threads(cfg) + cfg->read_workers + 4;
}

extern char **environ;

void config_unknown_env(void (*fn)(void *ud, const char *name), void *ud)
{
    static const char prefix[] = "BARBERIA_";
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, prefix, sizeof prefix - 1) != 0) continue;
        const char *name = *e + sizeof prefix - 1;
        size_t len = strcspn(name, "=");
        bool known = false;
        for (size_t i = 0; i < ARRAY_LEN(settings) && !known; i++)
            known = strlen(settings[i].name) == len && !memcmp(settings[i].name, name, len);
        if (known) continue;
        char var[128];
        snprintf(var, sizeof var, "%.*s", (int)(len + sizeof prefix - 1), *e);
        fn(ud, var);
    }
}

void config_free(struct config *cfg)
{
    for (size_t i = 0; i < ARRAY_LEN(settings); i++) {
        if (settings[i].kind == K_STR) {
            char **f = str_field(cfg, &settings[i]);
            free(*f);
            *f = NULL;
        }
    }
}

void config_print_help(unsigned scopes, void *file)
{
    FILE *f = file;
    for (size_t i = 0; i < ARRAY_LEN(settings); i++) {
        const struct setting *s = &settings[i];
        if (!(s->scope & scopes)) continue;
        char fl[64], left[128];
        flag_name(s, fl, sizeof fl);
        snprintf(left, sizeof left, "--%s (BARBERIA_%s)", fl, s->name);
        fprintf(f, "  %-44s %s", left, s->help);
        if (s->kind == K_INT)
            fprintf(f, " [%s%s%s%ld to %ld]", s->def ? "default: " : "", s->def ? s->def : "",
                    s->def ? ", " : "", s->min, s->max);
        else if (s->def)
            fprintf(f, " [default: %s]", s->def);
        fputc('\n', f);
    }
}
