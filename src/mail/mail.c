/*
 * mail.c - choosing the mail adapter, and the "none" adapter used when no
 * mail server is configured (see mail.h).
 */
#include "mail.h"
#include "smtp.h"
#include "compose.h"
#include "../config.h"

static br_err none_deliver(struct mailer *m, const struct outbox_msg *msg)
{
    (void)m;
    (void)msg;
    return err_set(BR_CONFIG, "no mail transport configured (BARBERIA_SMTP_URL unset)");
}

static br_err none_deliver_cuenta(struct mailer *m, const struct cuenta_mail *msg)
{
    (void)m;
    (void)msg;
    return err_set(BR_CONFIG, "no mail transport configured (BARBERIA_SMTP_URL unset)");
}

static void none_close(struct mailer *m)
{
    (void)m;
}

static const struct mail_ops none_ops = {
    .name = "none",
    .enabled = false,
    .deliver = none_deliver,
    .cancel = NULL,
    .deliver_cuenta = none_deliver_cuenta,
    .close = none_close,
};

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
