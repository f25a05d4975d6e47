/*
 * google_int.h - what the files of the Google Calendar adapter share:
 * google.c (the events, the port's ops table, opening), google_auth.c (the
 * service account's key file and access token) and google_http.c (one
 * bounded exchange with Google). Only src/calendar/google*.c include it.
 */
#ifndef BR_CALENDAR_GOOGLE_INT_H
#define BR_CALENDAR_GOOGLE_INT_H

#include "calendar.h"
#include "../util/buf.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* the scope the access token is asked for */
#define GCAL_SCOPE   "https://www.googleapis.com/auth/calendar"
#define RESPONSE_MAX (64 * 1024)
#define REASON_MAX   160

struct gcal {
    struct calendar base; /* first: the port hands &base back to us */
    char *client_email;
    char *subject; /* NULL: the service account acts as itself (no "sub") */
    char *token_uri;
    char *events_url; /* <api>/calendars/<calendar id, percent-encoded>/events */
    EVP_PKEY *key;
    int64_t timeout_ms;
    bool lock_ready;
    /* Guards token and token_expiry, and is held while a token is fetched,
     * so that concurrent bookings do not each ask for one. */
    pthread_mutex_t lock;
    char *token;          /* NULL: none cached */
    int64_t token_expiry; /* clock_mono_ms() at which the token stops working */
    /* Google refused attendees from this account (forbiddenForServiceAccounts):
     * events go without them from now on. Only ever set without a subject. */
    atomic_bool no_invites;
    /* the warn line explaining events without attendees has been logged */
    atomic_bool explained;
};

/* One HTTP exchange with Google. */
struct call {
    const char *what;   /* names the call in error details: "token request" */
    const char *method; /* "POST" or "DELETE" */
    const char *url;
    struct curl_slist *headers; /* borrowed */
    const char *body;           /* NULL: none */
    size_t body_len;
    long status;     /* OUT: the HTTP status */
    struct buf resp; /* OUT: the answer's body, capped at RESPONSE_MAX */
    bool too_large;  /* OUT: the answer passed the cap */
};

/* --- google_http.c ---------------------------------------------------------------- */

/* RFC 3986 percent-encoding of everything but the unreserved characters:
 * safe both for a path segment (a calendar id holds '@', maybe '#' or '/')
 * and for a form value. Caller frees. */
char *gcal_pct_encode(const char *s);

/* True for a non-empty run of visible ASCII of at most max bytes: what may
 * go into a header line or a URL segment without smuggling anything else. */
bool gcal_visible_ascii(const char *s, size_t max);

/* BR_UPSTREAM for a call answered with a status it did not want, detailed
 * as "<what>: HTTP <status>: <Google's short error text>" (printable ASCII,
 * capped; nothing else of the answer). */
br_err gcal_refused(const struct call *c);

/* Performs c within what is left until deadline. A transport failure is
 * BR_TIMEOUT or BR_UPSTREAM; any HTTP status is BR_OK (the caller judges
 * it). c->resp must be initialised by the caller, who frees it. */
br_err gcal_http_call(int64_t deadline, struct call *c) WARN_UNUSED;

/* https, or plain http to this machine only (a local stand-in such as the
 * test double); false for what curl cannot parse as a URL. */
bool gcal_url_acceptable(const char *url);

/* --- google_auth.c ---------------------------------------------------------------- */

/* A usable access token: the cached one, or a new one when it is missing or
 * about to expire. OUT: *token, a copy (caller wipes and frees). */
br_err gcal_get_token(struct gcal *g, int64_t deadline, char **token) WARN_UNUSED;

/* Drops the cached token when it is still the one Google just refused, so
 * that the next attempt fetches a fresh one (best-effort within deadline). */
void gcal_forget_token(struct gcal *g, int64_t deadline, const char *refused);

/* Reads and checks the service-account key file at path into g (key,
 * client_email, token_uri). BR_CONFIG with a one-line detail. */
br_err gcal_load_key_file(struct gcal *g, const char *path) WARN_UNUSED;

/* BR_CONFIG with a one-line detail unless subject looks like the e-mail
 * address of the Workspace user the account acts for. */
br_err gcal_check_subject(const char *subject) WARN_UNUSED;

#endif
