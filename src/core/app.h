/*
 * app.h - the service's wired parts: configuration and the ports, chosen
 * once at start. Core rules receive a struct app and talk only to the
 * ports in it; they never know which adapter sits behind a port.
 */
#ifndef BR_APP_H
#define BR_APP_H

#include "../config.h"
#include "../store/store.h"
#include "../objstore/objstore.h"
#include "../identity/identity.h"
#include "../calendar/calendar.h"
#include "../mail/mail.h"
#include "../mail/whatsapp.h"

struct outbox;
struct memo;
struct cuenta_correo;

#define APP_LINK_KEY_BYTES CLAVE_BYTES

struct app {
    const struct config *cfg;
    const char *public_url; /* base of handed-out URLs, no trailing '/' */
    struct store *store;
    struct objstore *obj;
    struct ident *ident;
    struct calendar *cal;
    struct mailer *mailer;
    struct outbox *outbox;        /* NULL outside `serve` or without mail */
    struct cuenta_correo *correo; /* the account's e-mails: as outbox */
    struct memo *memo;            /* the API's remembered answers (memo/memo.h): `serve`'s */
    /* the key the appointments' personal links are signed with (gestion.h) */
    unsigned char link_key[APP_LINK_KEY_BYTES];
    bool link_key_ok;
    struct whatsapp *whatsapp; /* NULL: no WhatsApp configured */
};

/* Opens every port the configuration names, with pool_size data store
 * connections, and migrates the schema. On failure everything opened so
 * far is closed and *app is left zeroed. */
br_err app_open(struct app *app, const struct config *cfg, int pool_size) WARN_UNUSED;
void app_close(struct app *app);

#endif
