/*
 * config.h - the service's configuration, parsed once at start.
 *
 * Every setting is an environment variable BARBERIA_<NAME> and also a flag
 * --<name> (lowercase, '_' -> '-'); a flag wins over the variable. The
 * result is an immutable struct handed to whoever needs it: nothing deeper in
 * the code calls getenv().
 */
#ifndef BR_CONFIG_H
#define BR_CONFIG_H

#include "util/err.h"

struct config {
    /* the HTTP service */
    char *listen;     /* "host:port", "[v6]:port" or ":port" */
    char *public_url; /* base of handed-out URLs; NULL: derived from listen */
    int max_connections;
    int max_per_ip;
    int io_threads;
    int read_workers;
    int workers;
    int queue_max;
    int header_timeout_ms;
    int body_timeout_ms;
    int body_min_rate;
    int idle_timeout_s;
    int shutdown_grace_ms;
    /* data */
    char *data_dir;
    char *database_url; /* NULL: SQLite in data_dir */
    char *storage_url;  /* NULL: folder store in data_dir */
    /* the S3-compatible store (objstore/s3.c), when storage_url names one */
    char *storage_region;     /* SigV4 region */
    char *storage_access_key; /* SigV4 credentials */
    char *storage_secret_key;
    char *storage_path_style; /* "auto", "1" or "0" */
    char *storage_public_url; /* NULL: photos served by the service */
    int storage_timeout_ms;   /* bound on each call to the store */
    char *storage_ca_file;    /* NULL: the system's CA store */
    int db_pool;              /* connections to the data store */
    int db_wait_ms;           /* longest wait for a free connection: then 503 */
    int db_lock_wait_ms;      /* longest wait for another writer's lock: then 503 */
    int health_timeout_ms;    /* bound on GET /healthz's database check */
    int memo;                 /* 0: nothing remembered between requests (store.h) */
    char *metrics_token;      /* NULL: GET /metrics for loopback clients only */
    char *cors_origins;       /* NULL: same-origin only */
    char *trusted_proxies;    /* NULL: the client is the connection's peer */
    /* identity: password hashing and sign-in throttling */
    int hash_max;                /* password hashes at once; 0: the number of cores */
    int hash_wait_ms;            /* longest wait for a hashing slot: then 503 */
    int login_max_failures;      /* failed sign-ins of one account before it is locked */
    int login_addr_max_failures; /* failed sign-ins from one address before it is locked */
    int login_window_s;          /* failures older than this are forgotten */
    int login_lock_s;            /* first lock; each next one doubles */
    int login_lock_max_s;        /* longest lock */
    int sweep_interval_ms;       /* between passes of the crash sweeper (core/sweeper.h) */
    int photo_quota_bytes;       /* photo bytes one uploader may keep (core/photos.h); 0: any */
    /* calendar */
    char *google_credentials;
    char *google_subject; /* Workspace user to act for (domain-wide delegation) */
    char *google_calendar_id;
    char *google_api_url;
    int calendar_timeout_ms;
    /* mail */
    char *smtp_url;
    char *smtp_user;
    char *smtp_password;
    char *smtp_from;
    char *smtp_ca_file;
    char *smtp_tls; /* "try" or "require": STARTTLS over smtp:// (mail/smtp.c) */
    int smtp_timeout_ms;
    int smtp_retry_for_s; /* give up on a message this long after it was queued */
    /* bookable hours: the shop's zone and the booking rules */
    char *tz;              /* IANA zone name of the shop (times of schedules, e-mails) */
    char *shop_name;       /* what the web app calls the shop */
    char *shop_address;    /* where it is (NULL: not shown) */
    char *shop_phone;      /* whom to call (NULL: not shown) */
    int slot_min;          /* the free-slot grid, minutes from each interval's start */
    int min_notice_min;    /* earliest bookable start: now + this many minutes */
    int max_days_ahead;    /* furthest bookable date: today + this many days */
    int max_upcoming;      /* live future appointments one client may hold (0: any) */
    int cancel_cutoff_min; /* a client may cancel/reschedule until this long before */
    int reminder_hours;    /* reminder e-mail this long before the start (0: none) */
    /* reminders (both channels) and WhatsApp (mail/whatsapp.h) */
    char *reminder_offsets;      /* "24h,2h" (domain/avisos.h) */
    char *whatsapp_token;        /* Graph API access token; NULL: no WhatsApp */
    char *whatsapp_phone_id;     /* the business phone number's id */
    char *whatsapp_api_url;      /* base of the Graph API, with its version */
    char *whatsapp_app_secret;   /* signs the webhook's deliveries */
    char *whatsapp_verify_token; /* the webhook's verification handshake */
    char *whatsapp_country;      /* country code for national numbers */
    char *whatsapp_language;     /* the templates' language code */
    char *whatsapp_tpl_confirmacion;
    char *whatsapp_tpl_cancelacion;
    char *whatsapp_tpl_reprogramacion;
    char *whatsapp_tpl_recordatorio;
    char *whatsapp_tpl_espera;
    char *whatsapp_quiet_hours; /* "21:00-09:00" shop time */
    int whatsapp_timeout_ms;
    int whatsapp_max_per_day; /* messages one number gets in 24 hours (0: no cap) */
};

/* Which settings a command accepts. */
enum config_scope {
    CONFIG_DATA = 1,  /* data_dir, database_url, storage_url: every command */
    CONFIG_SERVE = 2, /* everything else: `serve` only */
};

/* Fills cfg from the environment and argv, starting at argv[*idx] and
 * consuming the flags it knows of the given scopes; stops at the first
 * argument it does not know and leaves *idx there. On a bad value returns
 * BR_CONFIG with a one-line detail. cfg is owned by the caller and released
 * with config_free() whatever the result. */
br_err config_load(struct config *cfg, unsigned scopes, int argc, char **argv,
                   int *idx) WARN_UNUSED;

void config_free(struct config *cfg);

/* The I/O threads to run: io_threads, or by default one per core (two on
 * PostgreSQL, where GET requests wait for the database's round trip). */
int config_io_threads(const struct config *cfg);
/* The database pool `serve` opens: db_pool, or when it is 0 one connection
 * for every thread that may query (the write workers, the I/O threads,
 * where reads and the session check run and must never wait behind a burst
 * of writers for a connection, the read workers and the background
 * threads). */
int config_db_pool(const struct config *cfg);

/* Calls fn with the name of each BARBERIA_* variable of the environment
 * that names no setting (a typo such as BARBERIA_LISTN, otherwise silently
 * ignored), for `serve` to warn of. */
void config_unknown_env(void (*fn)(void *ud, const char *name), void *ud);

/* Prints the settings of the given scopes as help text (flag, variable,
 * default, meaning), one per line. */
void config_print_help(unsigned scopes, void *file);

#endif
