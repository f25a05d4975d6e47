/*
 * app.c - opening and closing the ports (see app.h).
 */
#include "app.h"
#include "gestion.h"
#include "outbox.h"
#include "../util/log.h"
#include "../util/tz.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Creates the data folder and its missing parents (mkdir -p). */
static br_err ensure_data_dir(const char *dir)
{
    char *path = xstrdup(dir);
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        int r = mkdir(path, 0750);
        *p = c;
        if (r != 0 && errno != EEXIST) {
            br_err e = err_set(BR_CONFIG, "cannot create data folder %s: %s", dir, strerror(errno));
            free(path);
            return e;
        }
        if (!c) break;
    }
    free(path);
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return err_set(BR_CONFIG, "data folder %s is not a folder", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return err_set(BR_CONFIG, "data folder %s is not writable: %s", dir, strerror(errno));
    return BR_OK;
}

br_err app_open(struct app *app, const struct config *cfg, int pool_size)
{
    memset(app, 0, sizeof *app);
    app->cfg = cfg;
    /* the integrations first: a configuration they cannot use stops the
     * start before anything is written */
    br_err rc = BR_OK;
    /* the shop's zone (serve): before any thread starts, and a wrong name
     * stops the start with one line */
    if (cfg->tz) rc = tz_use(cfg->tz);
    if (!rc) rc = calendar_open(cfg, &app->cal);
    if (!rc) rc = mailer_open(cfg, &app->mailer);
    if (!rc) rc = whatsapp_open(cfg, &app->whatsapp);
    if (!rc) rc = outbox_check(cfg);
    /* then the backends that live elsewhere, so that one this build cannot
     * use is refused before the data folder is touched; the embedded ones
     * live in the data folder */
    if (!rc && cfg->database_url) rc = store_open(cfg, pool_size, &app->store);
    if (!rc && (cfg->storage_url || cfg->storage_public_url)) rc = objstore_open(cfg, &app->obj);
    if (!rc && (!app->store || !app->obj)) rc = ensure_data_dir(cfg->data_dir);
    if (!rc && !app->store) rc = store_open(cfg, pool_size, &app->store);
    if (!rc && !app->obj) rc = objstore_open(cfg, &app->obj);
    if (!rc) rc = store_migrate(app->store);
    if (!rc) rc = ident_open(app->store, cfg, &app->ident);
    if (!rc) rc = gestion_key_load(app);
    /* the barbers' notices ride on the changes' transactions when there is
     * a transport to send them (as the clients' mails) */
    if (!rc) store_avisos_enable(app->store, mailer_enabled(app->mailer));
    if (rc) {
        /* keep the detail: closing must not overwrite it */
        struct err_kept why;
        err_keep(&why);
        app_close(app);
        return err_restore(rc, &why);
    }
    return BR_OK;
}

void app_close(struct app *app)
{
    mailer_close(app->mailer);
    whatsapp_close(app->whatsapp);
    calendar_close(app->cal);
    ident_close(app->ident);
    obj_close(app->obj);
    store_close(app->store);
    sodium_memzero(app, sizeof *app);
}
