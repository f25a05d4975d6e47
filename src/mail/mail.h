/*
 * mail.h - the mail port: how a confirmation e-mail leaves the service.
 *
 * The booking never talks to a mail server. When a transport is configured
 * the confirmation is written to the outbox (mail_outbox, in the booking's
 * own transaction) and the outbox worker (core/outbox.h) hands it to the
 * transport, retrying with backoff. Adapters: "none" (nothing configured:
 * nothing is queued or sent) and "smtp" (mail/smtp.c, libcurl).
 *
 * Thread-safety: deliver() is called by one worker thread at a time per
 * mailer, but must not keep per-call state in the mailer.
 */
#ifndef BR_MAIL_H
#define BR_MAIL_H

#include "../domain/records.h"
#include "../util/err.h"

struct config;

struct mailer {
    const struct mail_ops *ops;
};

/* Every member but name is NULL for the "none" adapter: nothing is queued. */
struct mail_ops {
    const char *name;
    /* Delivers one confirmation, within the adapter's time bound. On
     * failure a one-line detail and: BR_UPSTREAM / BR_TIMEOUT for a failure
     * worth retrying; BR_INVALID for a permanent refusal (the server
     * rejected the recipient or the message with a 5xx reply other than an
     * authentication problem): the message is then dropped at once. */
    br_err (*deliver)(struct mailer *m, const struct outbox_msg *msg);
    /* Makes a deliver() in progress in another thread give up soon (the
     * service is stopping); NULL when deliveries are instant. */
    void (*cancel)(struct mailer *m);
    /* Delivers one message about the account (mail/cuenta.h), with
     * deliver()'s outcomes. */
    br_err (*deliver_cuenta)(struct mailer *m, const struct cuenta_mail *msg);
    void (*close)(struct mailer *m);
};

/* Opens the adapter the configuration names ("smtp" when smtp_url is set,
 * else "none"). BR_CONFIG for an unusable configuration. */
br_err mailer_open(const struct config *cfg, struct mailer **out) WARN_UNUSED;

/* False for the "none" adapter. */
static inline bool mailer_enabled(const struct mailer *m)
{
    return m && m->ops->deliver != NULL;
}

/* The calls into the mailer: the ops above, or BR_CONFIG ("no mail
 * transport configured") when no transport is configured. */
br_err mailer_deliver(struct mailer *m, const struct outbox_msg *msg) WARN_UNUSED;
br_err mailer_deliver_cuenta(struct mailer *m, const struct cuenta_mail *msg) WARN_UNUSED;

static inline void mailer_cancel(struct mailer *m)
{
    if (m && m->ops->cancel) m->ops->cancel(m);
}

static inline void mailer_close(struct mailer *m)
{
    if (m && m->ops->close) m->ops->close(m);
}

#endif
