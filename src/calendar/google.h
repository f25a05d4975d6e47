/*
 * google.h - the Google Calendar adapter of the calendar port.
 *
 * Service-account flow: an RS256 JWT assertion signed with the key file's
 * private key is exchanged at the key's token_uri for an access token, which
 * is cached (shared by every thread) and renewed shortly before it expires;
 * events are inserted with events.insert on the configured calendar. The
 * whole attempt, token included, is bounded by calendar_timeout_ms.
 * See docs/integrations.md.
 */
#ifndef BR_CALENDAR_GOOGLE_H
#define BR_CALENDAR_GOOGLE_H

#include "calendar.h"

/* Reads and checks the key file named by cfg->google_credentials (JSON with
 * client_email, private_key, token_uri). BR_CONFIG with a one-line detail
 * when it cannot be used. OUT: *out, released with calendar_close(). */
br_err calendar_google_open(const struct config *cfg, struct calendar **out) WARN_UNUSED;

#endif
