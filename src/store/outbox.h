/*
 * store/outbox.h - part of the store (include store.h): the mail outbox
 * (src/store/outbox.c).
 */
#ifndef BR_STORE_OUTBOX_H
#define BR_STORE_OUTBOX_H

#include "store.h"

/* --- mail outbox ----------------------------------------------------------- */

/* Claims the oldest pending message due at `now` that no worker holds,
 * holding it until lease_until. OUT: *m (clear with outbox_clear).
 * BR_NOTFOUND when nothing is due. */
br_err store_outbox_claim(struct store *st, const char *now, const char *lease_until,
                          struct outbox_msg *m) STORE_WRITE WARN_UNUSED;
/* A message that left: marked sent whoever holds it now (a node that
 * claimed it after this one's lease ran out finds it done before it
 * sends). */
br_err store_outbox_sent(struct store *st, const char *id, const char *now) STORE_WRITE WARN_UNUSED;
/* The fate of a message the claim `claim` (its m->claim) handed out: a
 * failed attempt, retried at next_attempt_at, or one given up. BR_CONFLICT,
 * nothing written, when that claim no longer holds it (its lease ran out
 * and another claim took it, or it is done). */
br_err store_outbox_retry(struct store *st, const char *id, const char *claim, const char *error,
                          const char *next_attempt_at) STORE_WRITE WARN_UNUSED;
br_err store_outbox_drop(struct store *st, const char *id, const char *claim, const char *error,
                         const char *now) STORE_WRITE WARN_UNUSED;
/* OUT: how many messages wait (pending) and were given up (dropped). */
br_err store_outbox_counts(struct store *st, int64_t *pending, int64_t *dropped) WARN_UNUSED;
/* OUT: *next, the earliest next_attempt_at among pending messages ("" when
 * none), so the worker knows how long it may sleep. */
br_err store_outbox_next_due(struct store *st, br_ts next) WARN_UNUSED;
/* Where a claimed message goes now, with the generation of its client's
 * links, read in one statement: the row's recipient as the last change of
 * an address left it (her own, the desk's, an admin's of a barber's), or,
 * by WhatsApp, the number of her consent in force, which her messages
 * follow; and her links' generation (0 for none, or for a message without
 * a client), so that a link is never signed for an address it no longer
 * belongs to. OUT: *recipient (caller frees; NULL when the message waits
 * no more: sent, skipped or deleted meanwhile), *gen. */
br_err store_outbox_destino(struct store *st, const char *msg_id, char **recipient,
                            int64_t *gen) WARN_UNUSED;
/* OUT: *next, when the earliest message still waiting that announces m's
 * cita and time on m's channel (its confirmation or a reschedule's mail),
 * queued before m, is next tried ("" when none): a reminder waits for it. */
br_err store_outbox_anuncio_pendiente(struct store *st, const struct outbox_msg *m,
                                      br_ts next) WARN_UNUSED;
typedef br_err (*store_outbox_fn)(void *ud, const struct outbox_msg *m);
/* Messages in the given status (NULL: pending and dropped), oldest first. */
br_err store_outbox_each(struct store *st, const char *status, store_outbox_fn fn,
                         void *ud) WARN_UNUSED;

#endif
