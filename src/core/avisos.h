/*
 * avisos.h - what a barber is told: the private calendar feed of the
 * barber's appointments (its token: issued, renewed, revoked; the
 * iCalendar text any calendar app subscribes to). The barber's e-mails
 * ride on the transactions of each booking, change and cancel
 * (store/avisos.h); their text is mail/compose.c's.
 */
#ifndef BR_CORE_AVISOS_H
#define BR_CORE_AVISOS_H

#include "app.h"

/* The feed's window around now: what a calendar app shows. */
#define AVISOS_FEED_DIAS_ATRAS    30
#define AVISOS_FEED_DIAS_ADELANTE 180
#define AVISOS_FEED_MAX           5000 /* events at most */

/* A new token for the barber's feed (256 random bits, base64url: 43
 * characters), only its hash stored; the previous one stops working.
 * OUT: *url, the subscription URL (public_url + path + ?token=; caller
 * frees). BR_NOTFOUND "Barbero no encontrado". */
br_err avisos_feed_renovar(struct app *app, const char *barbero_id, char **url) WARN_UNUSED;

/* Revokes the barber's feed (no token works). BR_NOTFOUND as above. */
br_err avisos_feed_revocar(struct app *app, const char *barbero_id) WARN_UNUSED;

/* The feed of barbero_id (path text) for token: VCALENDAR text in UTC
 * times, the appointments that are not cancelled and start within the
 * window, each a VEVENT with the UID of the mails. OUT: *text, *len
 * (caller frees). BR_NOTFOUND for an unknown barber, a malformed, wrong or
 * revoked token alike (nothing tells them apart). */
br_err avisos_feed(struct app *app, const char *barbero_id, const char *token, int64_t now_ms,
                   char **text, size_t *len) WARN_UNUSED;

#endif
