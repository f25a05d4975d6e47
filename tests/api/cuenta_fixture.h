/*
 * cuenta_fixture.h - what the client's account tests share
 * (test_cuenta_acceso.c, test_cuenta_datos.c), built into each.
 * One server per test program, mailing the SMTP sink K, with a barber and a
 * service; helpers that book, post, and read the links of her mail.
 */
#ifndef BR_TEST_CUENTA_FIXTURE_H
#define BR_TEST_CUENTA_FIXTURE_H

#include "harness.h"
#include "util/iso8601.h"

#define WAIT_MAIL_MS 60000
#define LINK_BAD     "El enlace no es válido o ha caducado"
#define TOKEN_LEN    43

extern struct srv S;
extern char *BARBERO, *SERVICIO;

int cuenta_group_setup(void **state);
int cuenta_group_teardown(void **state);
void next_slot(char out[ISO8601_LEN + 1]);
char *book_one(const struct user *u);
void post(const char *path, const char *token, const char *json, struct resp *r);

struct mail_wait {
    const char *to;
    const char *needle; /* a text the message must hold, or NULL */
};

/* The delivered messages to an address, as mail_to_json.py reads them
 * (a JSON array; caller decrefs). */
json_t *mails_to(const char *to);
bool has_mail(void *ud);
bool account_outbox_settled(void *ud);
/* Waits for the message to `to` holding needle and returns its text
 * (caller frees). */
char *wait_mail(const char *to, const char *needle);
/* The token of the last link to page (".../<page>#token=") in text. */
void link_token(const char *text, const char *page, char out[TOKEN_LEN + 1]);
size_t mail_count(const char *to);
void recuperar(const char *email, struct resp *r);
void restablecer(const char *token, const char *pw, struct resp *r);
long login_status(const char *email, const char *pw);
long me_status(const char *token);
/* A reset link for u's address, from the delivered e-mail. */
void reset_link(const struct user *u, char token[TOKEN_LEN + 1]);
/* Asks, as u, to change her address to `to`; OUT: the link's token, from
 * the e-mail delivered there. */
void email_change_link(const struct user *u, const char *to, char tok[TOKEN_LEN + 1]);

#endif
