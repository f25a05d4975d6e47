/*
 * mail.c - choosing the mail adapter, the "none" adapter used when no mail
 * server is configured, and the calls that answer for it (see mail.h).
 */
#include "mail.h"
#include "smtp.h"
#include "compose.h"
#include "../config.h"

/* The "none" adapter: no ops; the calls below answer for it. */
static const struct mail_ops none_ops = {.name = "none"};

static struct mailer none_mailer = {&none_ops};

br_err mailer_open(const struct config *cfg, struct mailer **out)
{
    if (cfg->smtp_url) return mailer_smtp_open(cfg, out);
    /* checked even while mail is off, so a wrong zone shows at once */
    br_err rc = mail_tz_use(cfg->tz ? cfg->tz : "UTC");
    if (rc) return rc;
    *out = &none_mailer;
    return BR_OK;
}

/* What the "none" adapter answers. */
static br_err transport_missing(void)
{
    return err_set(BR_CONFIG, "no mail transport configured (BARBERIA_SMTP_URL unset)");
}

br_err mailer_deliver(struct mailer *m, const struct outbox_msg *msg)
{
    if (!m->ops->deliver) return transport_missing();
    return m->ops->deliver(m, msg);
}

br_err mailer_deliver_cuenta(struct mailer *m, const struct cuenta_mail *msg)
{
    if (!m->ops->deliver_cuenta) return transport_missing();
    return m->ops->deliver_cuenta(m, msg);
}
