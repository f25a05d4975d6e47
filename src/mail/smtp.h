/*
 * smtp.h - the SMTP adapter of the mail port (libcurl).
 *
 * Delivers the confirmation composed by compose.h to smtp:// (STARTTLS
 * when the server offers it, or always with credentials or
 * BARBERIA_SMTP_TLS=require) or smtps:// servers, with optional
 * credentials, within smtp_timeout_ms. See docs/email.md.
 */
#ifndef BR_SMTP_H
#define BR_SMTP_H

#include "mail.h"

/* Checks the configuration (URL scheme, sender address, BARBERIA_SMTP_TLS,
 * time zone).
 * BR_CONFIG with a one-line detail when it cannot be used. OUT: *out. */
br_err mailer_smtp_open(const struct config *cfg, struct mailer **out) WARN_UNUSED;

#endif
