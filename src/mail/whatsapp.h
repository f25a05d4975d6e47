/*
 * whatsapp.h - how a WhatsApp message leaves the service: an approved
 * template message sent through the WhatsApp Business Cloud API (Meta's
 * Graph API, POST {api}/{phone-number-id}/messages with a Bearer token).
 *
 * The outbox worker (core/outbox.h) hands each queued WhatsApp message of
 * the outbox here, as it hands e-mails to the mail port. Every template
 * takes the same six body parameters, in this order:
 *   {{1}} the client's name   {{2}} the service   {{3}} the barber
 *   {{4}} day and hour in the shop's zone ("sábado 21 de noviembre de
 *         2026, 10:30 (Europe/Madrid)")
 *   {{5}} where: the shop's name and address   {{6}} the link to manage
 *         or cancel the appointment (a waiting-list notice's: the link
 *         that opens the booking on the freed slot)
 * (docs/operations.md: the templates an operator creates in Meta's manager).
 *
 * The access token is held here only, sent in the Authorization header and
 * never written to a log line or an error detail.
 *
 * Thread-safety: send() is called by one worker thread at a time.
 */
#ifndef BR_WHATSAPP_H
#define BR_WHATSAPP_H

#include "../domain/records.h"
#include "../util/err.h"

struct config;
struct whatsapp;

/* Opens the sender the configuration describes: *out NULL (not an error)
 * when no token is set. BR_CONFIG with a one-line detail for an unusable
 * configuration (a token without a phone-number id or the other way round,
 * a bad URL, default country, quiet hours or language). */
br_err whatsapp_open(const struct config *cfg, struct whatsapp **out) WARN_UNUSED;
void whatsapp_close(struct whatsapp *w);

/* The longest link parameter sent whole: beside the five others, within
 * WHATSAPP_PARAMS_BUDGET (below), it leaves them 251 characters; it takes
 * a public URL of 300 bytes (core/outbox.h). A longer one would be cut. */
#define WHATSAPP_LINK_MAX 449

/* Sends msg (recipient: E.164 digits) as its kind's template, link as
 * parameter {{6}}. OUT: id, the Graph API's message id ("wamid..."; "" when
 * the API accepted it without one). On failure a one-line detail and:
 * BR_UPSTREAM or BR_TIMEOUT for what is worth retrying (no answer, 5xx,
 * 429 and the rate-limit codes, an expired or refused token: the operator
 * renews it); BR_INVALID for a refusal for good (a number that is not on
 * WhatsApp, a template that does not exist, a bad parameter). */
br_err whatsapp_send(struct whatsapp *w, const struct outbox_msg *msg, const char *link,
                     char id[128]) WARN_UNUSED;

/* Makes a send() in progress in another thread give up soon. */
void whatsapp_cancel(struct whatsapp *w);

/* The parameter text the Graph API accepts: control characters become
 * spaces, runs of spaces one, trimmed, at most n - 1 bytes (whole UTF-8
 * characters), "-" when nothing is left. OUT: out (n bytes). */
void whatsapp_param_text(const char *in, char *out, size_t n);

/* Meta refuses a template message whose body, its parameters put in,
 * passes 1,024 characters (error 132005, for good). The parameters of one
 * message keep within WHATSAPP_PARAMS_BUDGET characters together, which
 * leaves a template's own text 324 (docs/operations.md). */
#define WHATSAPP_PARAMS_BUDGET 700

/* Shortens the n texts of t (each as whatsapp_param_text left it, in a
 * buffer of at least its length + 3 bytes) so that, with `fixed` more
 * characters (the link, which is whole or useless), they hold at most
 * budget characters (UTF-8 code points) together: the longest are cut
 * first, to one length, each cut ending in "…"; none below 8 characters,
 * so a very long fixed part may leave the total above budget. */
void whatsapp_params_fit(char *const *t, size_t n, size_t fixed, size_t budget);

#endif
