/*
 * mail/cuenta.h - the e-mails about the account itself (a password-reset
 * link, the link that confirms a new address, the notice to the old one,
 * the notice that WhatsApp messages go to a new number)
 * as bytes: a short RFC 5322 message, text/plain in UTF-8 and base64, in
 * Spanish.
 */
#ifndef BR_MAIL_CUENTA_H
#define BR_MAIL_CUENTA_H

#include "compose.h"

/* Builds the message for m. OUT: *out (caller frees; it holds the link:
 * wipe it) and *len. BR_INVALID for an unusable sender or recipient, an
 * unknown kind or a link message without its link. */
br_err mail_compose_cuenta(const struct mail_compose_opts *o, const struct cuenta_mail *m,
                           char **out, size_t *len) WARN_UNUSED;

/* Whether a message of kind carries a link (which expires). */
bool mail_cuenta_has_link(const char *kind);

#endif
