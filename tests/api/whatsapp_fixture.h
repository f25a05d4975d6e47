/*
 * whatsapp_fixture.h - what the WhatsApp tests share (test_whatsapp_envio.c,
 * test_whatsapp_avisos.c), built into each: the Graph API double D (wa_sink.h),
 * the shop a test starts (start_shop, ended by whatsapp_teardown) with its
 * server S, SMTP sink, barber, service and accounts, and the checks of the
 * requests the double got and of the messages the shop keeps.
 */
#ifndef BR_TEST_WHATSAPP_FIXTURE_H
#define BR_TEST_WHATSAPP_FIXTURE_H

#include "harness.h"
#include "util/iso8601.h"
#include "wa_sink.h"

#define WAIT_MS  60000
#define HOUR_MS  3600000LL
#define TOKEN    "EAAJtestTOKENwhatsapp0123456789abcdef"
#define PHONE_ID "106540352242922"
#define VERIFY   "verificame-por-favor"
/* the Meta app's secret: signs the webhook's deliveries */
#define APP_SECRET "3f1c9a7e5b2d4c6e8a0b1c2d3e4f5a6b"

/* The double (wa_sink.h), and its address for the control calls. */
struct wa_dbl {
    struct wa_sink s;
    struct srv http; /* only .base */
};

extern struct wa_dbl D;
extern struct srv S;
extern struct smtp_sink K;
extern char *BARBERO, *SERVICIO;
extern struct user ANA, BEA, ADMIN;
extern char ENV_SMTP[64], ENV_API[128], ENV_QUIET[64];
extern const char *ENV[32]; /* the server's settings, to start it again */

void dbl_start(struct wa_dbl *d, const char *root);
/* An appointment's personal link: base + "/c/" + its token, which opens
 * it without signing in (GET /api/gestion/<token>). */
void link_opens(const char *link, const char *base);
/* POST /control?query; the answer's JSON (caller decrefs). */
json_t *dbl_control(const char *query);
/* Every request the double logged, as a JSON array (caller decrefs). */
json_t *dbl_requests(void);
/* The message body of a logged request (caller decrefs). */
json_t *req_message(const json_t *e);
const char *msg_template(const json_t *m);
/* Parameter i (0-based) of a message's body. */
const char *msg_param(const json_t *m, size_t i);
/* How many requests for template tpl were answered status. */
size_t count_requests(const char *tpl, long status);
void wait_requests(const char *tpl, long status, size_t want);
void signup_with_phone(struct user *u, const char *nombre, const char *telefono);
/* Starts the double, an SMTP sink and the server with extra settings. */
void start_shop(const char *const *extra);
int whatsapp_teardown(void **state);
void at(int64_t ms, char out[ISO8601_LEN + 1]);
void consent(const struct user *u, const char *body, long want, struct resp *r);
/* GET /api/admin/citas/{id}/mensajes as the admin: the array (caller decrefs). */
json_t *mensajes(const char *id);
/* The message of canal and tipo in a listing (borrowed), or NULL. */
json_t *mensaje(json_t *list, const char *canal, const char *tipo);
long wa_rows(const char *id, const char *kind, const char *status);

struct row_q {
    const char *id, *kind, *status;
};

bool row_there(void *ud);

#endif
