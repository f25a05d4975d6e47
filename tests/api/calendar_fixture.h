/*
 * calendar_fixture.h - what the Google Calendar tests share
 * (test_calendar_event.c, test_calendar_failures.c), built into each. Two
 * gcal_double processes (D, an ordinary service account; DS, one with
 * domain-wide delegation acting for SUBJECT), the key files made for them,
 * and two shops (G with a wide bound, T with a short one), all started once
 * per test program by calendar_group_setup.
 */
#ifndef BR_TEST_CALENDAR_FIXTURE_H
#define BR_TEST_CALENDAR_FIXTURE_H

#include "harness.h"
#include "util/iso8601.h"

#define CLIENT_EMAIL     "barberia-test@barberia-test.iam.gserviceaccount.com"
#define CALENDAR_ID      "barberia@group.calendar.google.com"
#define CALENDAR_RAW     "barberia%40group.calendar.google.com"
#define ODD_CALENDAR_ID  "Sala 1 #norte/sur"
#define ODD_CALENDAR_RAW "Sala%201%20%23norte%2Fsur"
#define EVENTS_PREFIX    "/calendar/v3/calendars/"
#define SHORT_BOUND_MS   1500
/* happy paths get a wide bound: a slow machine must not turn them red */
#define LONG_BOUND_MS 30000
#define MARGIN_MS     8000
/* base64url of {"alg":"RS256","typ":"JWT"}: the start of every assertion */
#define JWT_HEADER_B64 "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9"
/* the Workspace user DS's account acts for (domain-wide delegation) */
#define SUBJECT "agenda@barberia-test.example"

struct shop {
    struct srv s;
    char *barbero, *servicio;
    struct user ana; /* her profile has a nombre */
    char env[5][512];
    const char *envp[6];
};

#define BARBERO_NOMBRE  "Carlos Méndez"
#define SERVICIO_NOMBRE "Corte clásico"
#define ANA_NOMBRE      "Ana Pérez"

struct racer {
    const struct srv *s;
    const char *token;
    char body[512];
    long status;
    json_t *cita; /* the answer's cita, or NULL */
    int64_t elapsed_ms;
};

/* --- the doubles -------------------------------------------------------------------------- */

extern struct gcal_dbl D;  /* an ordinary service account: no delegation, no "sub" */
extern struct gcal_dbl DS; /* domain-wide delegation, acting for SUBJECT */

extern char ROOT[256];  /* temporary folder of the group */
extern char KEY[320];   /* the account's private key (PEM) */
extern char CREDS[320]; /* the good service-account key file */
extern char CREDS_WRONG_EMAIL[320], CREDS_WRONG_KEY[320];
extern char CREDS_DS[320]; /* the same account, with DS's token_uri */

/* Starts a double whose files are <ROOT>/<name>.*; subject NULL: no
 * domain-wide delegation; port 0: any free one. */
void dbl_start_on(struct gcal_dbl *d, const char *name, const char *subject, int port);
void dbl_start(struct gcal_dbl *d, const char *name, const char *subject);
void double_control(const char *query); /* D's */
size_t dlog_mark(void);                 /* D's */
json_t *dlog_since(size_t mark);        /* D's */
bool is_token_entry(const json_t *e);
bool is_insert_entry(const json_t *e);
size_t count_tokens_since(size_t mark);
/* The events.insert entry that issued event id, borrowed from all. */
const json_t *insert_entry_for(const json_t *all, const char *event_id);
/* The events.insert entries of all, in order, as a new array (caller
 * decrefs). */
json_t *insert_entries(const json_t *all);
/* The event an entry's body holds (caller decrefs). */
json_t *entry_event(const json_t *e);
/* How many events.insert calls in ALL were for an event starting at FECHA. */
size_t inserts_at(const json_t *all, const char *fecha);

/* --- files ------------------------------------------------------------------------------ */

void write_text(const char *path, const char *text);

/* --- shops ------------------------------------------------------------------------------------ */

extern struct shop G; /* the main shop: good key, CALENDAR_ID, a wide bound */
extern struct shop T; /* short bound, for the failure modes */

/* Starts a shop that talks to double d. creds NULL: no calendar configured
 * at all. subject: BARBERIA_GOOGLE_SUBJECT (NULL: unset). */
void shop_start_on(struct shop *sh, const struct gcal_dbl *d, const char *creds,
                   const char *calendar_id, int bound_ms, const char *subject);
void shop_start(struct shop *sh, const char *creds, const char *calendar_id, int bound_ms);
void shop_stop(struct shop *sh);
/* A fresh slot every call: one hour apart from 2031-01-01. */
void next_slot(char out[ISO8601_LEN + 1]);
/* Books and asserts 201. Returns the cita (caller decrefs); OUT: *elapsed_ms
 * (may be NULL). notas NULL: no notas member. */
json_t *book_cita(const struct shop *sh, const struct user *u, const char *fecha, const char *notas,
                  int64_t *elapsed_ms);
/* Asserts that the server log holds exactly one line naming both a and b,
 * and returns a copy of it (caller frees). */
char *one_log_line(const struct srv *s, const char *a, const char *b);
/* Asserts that no access token either double ever issued, no assertion it
 * was sent and no private key appears in the server's log. */
void assert_log_holds_no_secret(const struct srv *s);

/* --- concurrent bookings -------------------------------------------------------------------- */

/* One booking from its own thread (race_threads: no cmocka here). */
void racer_run(void *item);
/* A racer booking fecha on sh as token. */
void racer_init(struct racer *r, const struct shop *sh, const char *token, const char *fecha);
/* Books n slots at once (fechas[i]) as u. rs[i] filled; caller decrefs
 * rs[i].cita. */
void book_concurrently(const struct shop *sh, const struct user *u, char (*fechas)[32], size_t n,
                       struct racer *rs);

/* --- set-up ------------------------------------------------------------------------------------
 */

/* The group's: keys, key files, D and DS, G and T (and their teardown). */
int calendar_group_setup(void **state);
int calendar_group_teardown(void **state);
/* Every test starts with a well-behaved Google. */
int calendar_reset_double(void **state);

#endif
