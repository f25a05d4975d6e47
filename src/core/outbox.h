/*
 * outbox.h - the worker that delivers queued confirmation e-mails: a core
 * use case that claims messages from the store, hands each to the mail
 * port (mail/mail.h, which composes and sends it) and records the outcome,
 * and queues the reminders as they fall due.
 *
 * Bookings write their confirmation into mail_outbox in their own
 * transaction and wake the worker; the worker claims due messages one at a
 * time (a lease in the table keeps two workers - two `serve` nodes - from
 * sending the same message), hands each to the mailer, and records the
 * outcome: sent; or a retry after an exponential backoff (1 s, 2 s, 4 s ...
 * capped at 5 min); or, once a message has been failing for longer than
 * smtp_retry_for seconds since it was queued - or at once when the server
 * refused it for good - dropped with a log line.
 * Messages left by a stopped process are picked up on the next start.
 */
#ifndef BR_OUTBOX_H
#define BR_OUTBOX_H

#include "app.h"

struct outbox;

/* What the worker needs to write the personal link of a message about a
 * cita (core/gestion.h) when it sends it: the public URL (no trailing '/')
 * and the link key (APP_LINK_KEY_BYTES octets; NULL: no links). Copied. */
struct outbox_links {
    const char *base;
    const unsigned char *key;
};

/* Starts the worker thread on app's ports (app outlives it): e-mails go
 * through app->mailer (when enabled), WhatsApp messages through
 * app->whatsapp (NULL: none), with app->cfg's settings; a message about a
 * cita carries its personal link (links), in an e-mail and as a WhatsApp
 * template's parameter. A WhatsApp message is checked as it is claimed:
 * one for a cancelled cita (but the cancellation) or a withdrawn consent is
 * skipped; one claimed in the quiet hours (but a cancellation) waits for
 * their end without counting an attempt. A waiting-list notice, by either
 * channel, is skipped at every attempt once the slot it announces is no
 * longer free (core/espera.h, espera_aviso_vigente). OUT: *out, stopped
 * with outbox_stop(). */
br_err outbox_start(struct app *app, const struct outbox_links *links,
                    struct outbox **out) WARN_UNUSED;

/* Checks the reminder settings (BARBERIA_REMINDER_OFFSETS, _HOURS) and,
 * with WhatsApp configured, that the public URL (without a trailing '/')
 * leaves every link a WhatsApp message carries whole: at most
 * WHATSAPP_LINK_MAX less what a waiting-list notice's link adds
 * (core/espera.h), 300 bytes. BR_CONFIG with a one-line detail when they
 * do not hold. */
br_err outbox_check(const struct config *cfg) WARN_UNUSED;

/* Tells the worker a message was queued (NULL: does nothing). */
void outbox_wake(struct outbox *o);

/* Wakes the worker, which runs task(ud) on its thread before it looks at
 * the queue (the waiting list queues its notices so, core/espera.h). One
 * task at a time: asked again before it ran, it runs once (task is the
 * same; a different one replaces it). ud must outlive the worker. */
void outbox_wake_task(struct outbox *o, void (*task)(void *ud), void *ud);

/* Stops the worker; a delivery in progress is cancelled and its message
 * stays queued, due at once, for the next start - never dropped because of
 * the stop, even past its retry window (NULL: nothing). */
void outbox_stop(struct outbox *o);

/* The delay before retry number `attempts` + 1 (attempts >= 1), in ms. */
int64_t outbox_backoff_ms(int64_t attempts);

/* --- the queues a worker thread delivers (this one, the account's: cuenta.h) --- */

struct worker;

struct outbox_queue {
    const char *name; /* as the log names it: "the outbox" */
    struct store *st; /* where next_due reads */
    int64_t lease_ms; /* how long a claim keeps the message from the other nodes */
    /* Claims the message due at now_ts, leased until lease, and delivers
     * it, recording the outcome; BR_NOTFOUND when none is due. */
    br_err (*deliver_next)(void *ud, const char *now_ts, const char *lease);
    /* When the next queued message falls due; "" when none is queued. */
    br_err (*next_due)(struct store *st, br_ts next);
    void *ud; /* deliver_next's */
};

/* One turn of q's worker wk at now (wall clock, ms): delivers the message
 * due, or else naps until the next one falls due, idle_until at the latest
 * (wall clock), or for a pause of 5 s when the queue cannot be read (logged
 * as "mail: reading <name> failed: ..."). A wake-up ends the nap. */
void outbox_queue_turn(struct worker *wk, const struct outbox_queue *q, int64_t now,
                       int64_t idle_until);

#endif
