/*
 * serve.c - `barberia serve`: wires the ports, sweeps what a crash left
 * half-done, starts the HTTP service, the crash sweeper's thread and the mail
 * outbox worker, and stops them gracefully on SIGINT/SIGTERM.
 * With --demo, an empty database first gets a few barbers, services and
 * an administrator whose generated password is printed once.
 */
#include "cli.h"
#include "../api/api.h"
#include "../core/catalog.h"
#include "../core/photos.h"
#include "../core/sweeper.h"
#include "../core/outbox.h"
#include "../core/cuenta.h"
#include "../util/log.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JSON_MAX        (64 * 1024)
#define MULTIPART_MAX   (256ull * 1024 * 1024)
#define DEMO_ADMIN      "admin@barberia.local"
#define ACCESS_FLUSH_MS 100 /* the access log is at most this late */

static const char help[] =
    "Usage: barberia serve [--demo] [settings]\n"
    "Runs the HTTP service until SIGINT or SIGTERM, then stops gracefully (requests in\n"
    "flight finish). The schema is created or upgraded on start. What a crash left\n"
    "half-done (unfinished uploads and deletions, temporary files) is finished or undone\n"
    "before serving, then every --sweep-interval-ms. Logs go to stderr.\n"
    "  --demo   on an empty database, first create demo barbers, services and an\n"
    "           administrator (" DEMO_ADMIN ") whose password is printed once\n";

static int demo_data(struct app *app)
{
    bool empty = false;
    if (store_is_empty(app->store, &empty) != BR_OK) {
        cli_error("serve --demo: %s", err_msg());
        return EXIT_REFUSED;
    }
    if (!empty) {
        log_info("demo: the database already holds data; nothing added (admin: " DEMO_ADMIN ")");
        return 0;
    }
    static const char *const barberos[] = {"Carlos Méndez", "Lucía Ortega", "Mateo Ruiz"};
    static const struct {
        const char *nombre;
        int min;
        double precio;
    } servicios[] = {
        {"Corte clásico", 30, 15.0},
        {"Corte y barba", 45, 22.5},
        {"Arreglo de barba", 20, 10.0},
        {"Afeitado a navaja", 30, 14.0},
    };
    /* the administrator first: of several nodes starting on one empty
     * database, the one whose sign-up wins seeds the catalog, the others
     * find the address taken and add nothing */
    unsigned char raw[12];
    char password[24];
    randombytes_buf(raw, sizeof raw);
    sodium_bin2base64(password, sizeof password, raw, sizeof raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    struct ident_signup in = {DEMO_ADMIN, password, "Administración", NULL, "admin"};
    struct ident_session s;
    br_err rc = ident_signup(app->ident, &in, false, &s);
    if (rc == BR_CONFLICT) {
        sodium_memzero(password, sizeof password);
        log_info("demo: another process is adding the demo data; nothing added here");
        return 0;
    }
    if (!rc) ident_session_clear(&s);
    for (size_t i = 0; i < ARRAY_LEN(barberos) && !rc; i++) {
        struct barbero b = {.nombre = (char *)barberos[i]};
        rc = catalog_barbero_add(app, &b);
    }
    for (size_t i = 0; i < ARRAY_LEN(servicios) && !rc; i++) {
        struct servicio sv = {.nombre = (char *)servicios[i].nombre,
                              .duracion_min = servicios[i].min,
                              .precio = servicios[i].precio};
        rc = catalog_servicio_add(app, &sv);
    }
    if (rc) {
        sodium_memzero(password, sizeof password);
        cli_error("serve --demo: %s", err_msg());
        return EXIT_REFUSED;
    }
    printf("Demo data created: %zu barbers, %zu services and an administrator.\n"
           "  email:    %s\n"
           "  password: %s\n"
           "(the password is shown only this once)\n",
           ARRAY_LEN(barberos), ARRAY_LEN(servicios), DEMO_ADMIN, password);
    fflush(stdout);
    sodium_memzero(password, sizeof password);
    return 0;
}

static char *trim_slash(const char *url)
{
    char *u = xstrdup(url);
    size_t n = strlen(u);
    while (n && u[n - 1] == '/')
        u[--n] = '\0';
    return u;
}

static void unknown_setting(void *ud, const char *name)
{
    (void)ud;
    log_warn("%s is not a setting of barberia: ignored (barberia serve --help lists them)", name);
}

int cli_serve(int argc, char **argv)
{
    bool demo = false;
    struct cli_flag flags[] = {{"demo", NULL, &demo}, {NULL, NULL, NULL}};
    struct config cfg;
    bool done;
    int rc = cli_parse("serve", argc, argv, CONFIG_DATA | CONFIG_SERVE, &cfg, flags, help, &done);
    if (rc || done) {
        config_free(&cfg);
        return rc;
    }

    /* Signals are taken by sigwait() in this thread only; every thread
     * started from here on inherits the mask. A closed client socket must
     * not kill the process. */
    /* glibc gives memory back after every free that leaves more than the
     * trim threshold at a heap's top: with dozens of worker threads each on
     * its own arena, requests paid page faults and TLB flushes over and over
     * (a quarter of a booking's CPU). Keep 16 MiB per heap instead; blocks
     * from 128 KiB up (a password hash's 64 MiB) are still mapped apart and
     * returned at once. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 16 * 1024 * 1024);

    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* The listening socket first: a malformed address is a bad argument and
     * a port in use a refusal, and neither may leave anything written. */
    struct app app = {0};
    struct http_server *srv = NULL;
    struct sweeper *sweeper = NULL;
    char *public_url = NULL;
    char *spool = xasprintf("%s/tmp", cfg.data_dir);
    struct http_options ho = {
        .listen = cfg.listen,
        .max_connections = cfg.max_connections,
        .max_per_ip = cfg.max_per_ip,
        .io_threads = config_io_threads(&cfg),
        .read_workers = cfg.read_workers,
        .workers = cfg.workers,
        .queue_max = cfg.queue_max,
        .header_timeout_ms = cfg.header_timeout_ms,
        .body_timeout_ms = cfg.body_timeout_ms,
        .body_min_rate = cfg.body_min_rate,
        .idle_timeout_s = cfg.idle_timeout_s,
        .shutdown_grace_ms = cfg.shutdown_grace_ms,
        .spool_dir = spool,
        .json_max = JSON_MAX,
        .file_max = PHOTO_MAX_BYTES,
        .multipart_max = MULTIPART_MAX,
        .too_large_msg = "Máximo 5MB por imagen",
        .file_field = "file",
        .form_fields = api_form_fields,
        .cors_origins = cfg.cors_origins,
        .trusted_proxies = cfg.trusted_proxies,
        .public_url = cfg.public_url,
        .routes = api_routes,
        .nroutes = api_nroutes,
        .authorize = api_authorize,
        .app = &app,
    };
    br_err e = http_bind(&ho, &srv);
    if (e) {
        cli_error("serve: %s", err_msg());
        rc = e == BR_INVALID ? EXIT_USAGE : EXIT_REFUSED;
        goto out;
    }
    rc = EXIT_REFUSED;
    if (app_open(&app, &cfg, config_db_pool(&cfg)) != BR_OK) {
        cli_error("serve: %s", err_msg());
        goto out;
    }
    app.memo = memo_new(app.store);
    if (mkdir(spool, 0700) != 0 && errno != EEXIST) {
        cli_error("serve: cannot create %s: %s", spool, strerror(errno));
        goto out;
    }
    struct stat spool_st; /* something else in its place: uploads would all fail */
    if (stat(spool, &spool_st) != 0 || !S_ISDIR(spool_st.st_mode) ||
        access(spool, W_OK | X_OK) != 0) {
        cli_error("serve: %s is not a writable folder", spool);
        goto out;
    }
    public_url = trim_slash(cfg.public_url ? cfg.public_url : http_bound_url(srv));
    app.public_url = public_url;
    /* before serving: what a crashed predecessor left half-done is
     * finished or undone, and the spool emptied */
    if (sweep_start(&app, spool, cfg.sweep_interval_ms, &sweeper) != BR_OK) {
        cli_error("serve: %s", err_msg());
        goto out;
    }
    if (demo && demo_data(&app) != 0) goto out;
    if ((mailer_enabled(app.mailer) || app.whatsapp) &&
        outbox_start(&app,
                     &(struct outbox_links){public_url, app.link_key_ok ? app.link_key : NULL},
                     &app.outbox) != BR_OK) {
        cli_error("serve: %s", err_msg());
        goto out;
    }
    if (mailer_enabled(app.mailer) &&
        cuenta_correo_start(app.store, app.mailer, &cfg, &app.correo) != BR_OK) {
        cli_error("serve: %s", err_msg());
        goto out;
    }
    /* access lines in one write per 64 KiB or per ACCESS_FLUSH_MS, not per request */
    if (log_buffer_start(ACCESS_FLUSH_MS) != BR_OK) {
        cli_error("serve: %s", err_msg());
        goto out;
    }
    if (http_serve(srv) != BR_OK) {
        cli_error("serve: %s", err_msg());
        goto out;
    }
    log_info("barberia %s listening on %s (public URL %s; data %s; store %s; objects %s; "
             "calendar %s; mail %s)",
             BARBERIA_VERSION, http_bound_url(srv), public_url, cfg.data_dir,
             store_backend(app.store), app.obj->ops->name, app.cal->ops->name,
             app.mailer->ops->name);
    log_info("http: %s", http_capacity(srv));
    config_unknown_env(unknown_setting, NULL);
    if (!cfg.public_url && http_listens_everywhere(srv))
        /* the links of every e-mail and the URL of every photo stored
         * would name this machine's loopback, which no client reaches */
        log_warn("listening on every address, but links and photo URLs say %s: set "
                 "BARBERIA_PUBLIC_URL to the address clients use",
                 public_url);

    int sig = 0;
    sigwait(&stop, &sig);
    log_info("received %s; stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    rc = 0;
out:
    http_stop(srv);
    log_buffer_stop();
    sweep_stop(sweeper);
    outbox_stop(app.outbox);
    app.outbox = NULL;
    cuenta_correo_stop(app.correo);
    app.correo = NULL;
    memo_free(app.memo);
    app.memo = NULL;
    app_close(&app);
    free(public_url);
    free(spool);
    config_free(&cfg);
    if (rc == 0) log_info("stopped");
    return rc;
}
