/*
 * google.h - the Google Calendar adapter of the calendar port.
 *
 * Service-account flow: an RS256 JWT assertion signed with the key file's
 * private key is exchanged at the key's token_uri for an access token, which
 * is cached (shared by every thread) and renewed shortly before it expires;
 * events are inserted with events.insert on the configured calendar. The
 * whole attempt, token included, is bounded by calendar_timeout_ms.
 *
 * Attendees: Google lets a service account invite people only when it acts
 * for a Workspace user (domain-wide delegation; cfg->google_subject goes
 * into the assertion as "sub"). Without that, Google refuses an event with
 * attendees (403 forbiddenForServiceAccounts); the adapter then creates the
 * same event without the attendee, within the same bound, says so once in
 * the log, and sends later events without attendees straight away.
 *
 * create_event and delete_event may run on any number of threads at once.
 * Besides the port's BR_UPSTREAM (Google refused or garbled the answer) and
 * BR_TIMEOUT (the bound ran out, also while waiting for another thread's
 * token fetch), they may return BR_INTERNAL for a local failure (signing,
 * building the request). Details are one line and never hold the private
 * key, the assertion or the access token. token_uri and the API URL must be
 * https (plain http only to 127.0.0.1, localhost or [::1]).
 * See docs/google-calendar.md (set-up, failure behaviour, token caching).
 */
#ifndef BR_CALENDAR_GOOGLE_H
#define BR_CALENDAR_GOOGLE_H

#include "calendar.h"

/* Reads and checks the key file named by cfg->google_credentials (JSON with
 * client_email, private_key, token_uri). BR_CONFIG with a one-line detail
 * when it cannot be used. OUT: *out, released with calendar_close(). */
br_err calendar_google_open(const struct config *cfg, struct calendar **out) WARN_UNUSED;

#endif
