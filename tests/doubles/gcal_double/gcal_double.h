/*
 * gcal_double.h - what the files of the Google Calendar double share
 * (tests/doubles/gcal_double.c, its main, and the files in gcal_double/): the state
 * the handler threads share, a request and its reply.
 */
#ifndef BR_GCAL_DOUBLE_H
#define BR_GCAL_DOUBLE_H

#include "util/buf.h"

#include <jansson.h>
#include <microhttpd.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define BODY_MAX      (1024 * 1024)
#define SCOPE         "https://www.googleapis.com/auth/calendar"
#define GRANT_TYPE    "urn:ietf:params:oauth:grant-type:jwt-bearer"
#define EVENTS_PREFIX "/calendar/v3/calendars/"
#define HANG_MS       (10 * 60 * 1000)
#define CLOCK_SKEW_S  300
#define ASSERTION_TTL 3600

struct event {
    char *id;
    bool deleted;
};

struct token {
    char *text;
    bool delegated; /* issued for an assertion with "sub" */
    time_t expires; /* refused from then on, as Google refuses an expired token */
};

/* Everything the handler threads share, behind lock. */
struct state {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* broadcast when stopping: ends hangs and delays */
    bool stopping;
    const char *client_email;
    const char *calendar_id; /* NULL: any */
    const char *subject;     /* NULL: no delegation, a "sub" is refused */
    EVP_PKEY *pub;
    FILE *log;
    char token_url[96];
    char events_mode[16], token_mode[16];
    int delay_ms, token_delay_ms;
    int fail_left;        /* the next event requests answered fail_status */
    unsigned fail_status; /* 429, 403 (a rate limit) or 5xx */
    long expires_in;
    unsigned long seq;
    struct token *tokens; /* issued and not revoked */
    size_t ntokens;
    struct event *events;
    size_t nevents;
};

/* One request, from its request line to its end. */
struct req {
    char *raw_uri; /* exactly as sent: MHD hands the handler a decoded path */
    bool started;
    struct buf body;
    bool too_large;
};

/* The answer being built, and what the log line says about it. */
struct reply {
    unsigned status;
    char *body;               /* owned; NULL: empty */
    const char *content_type; /* NULL: application/json; charset=UTF-8 */
    char *verdict;            /* owned; "ok" or why the request was refused */
    bool hang;
    json_t *extra; /* members added to the log line */
};

extern struct state S;

/* Sets r: status, body (taken; NULL: none) and the verdict for the log. */
void reply_set(struct reply *r, unsigned status, json_t *body, const char *verdict_fmt, ...)
    PRINTF_LIKE(4, 5);

/* Google's error bodies */
json_t *oauth_error(const char *code, const char *desc);
json_t *api_error(int code, const char *reason, const char *message, const char *status);
json_t *calendar_error(int code, const char *reason, const char *message);

/* requests */
bool unreserved(unsigned char c);
char *pct_decode(const char *s, size_t n, bool plus, bool strict);
bool media_type_is(const char *header, const char *type);
void random_text(char *out, size_t n, const char *alphabet);
void pause_ms(int64_t ms);

/* the failure modes (POST /control) */
void mode_of(const char *target, char out[16]);
bool apply_mode(const char *target, struct reply *r);

/* the endpoints */
void on_token(struct MHD_Connection *conn, const char *method, struct req *q, struct reply *r);
void on_events(struct MHD_Connection *conn, const char *method, struct req *q, struct reply *r);

#endif
