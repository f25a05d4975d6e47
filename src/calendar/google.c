/*
 * google.c - the Google Calendar adapter of the calendar port (see google.h
 * and docs/google-calendar.md).
 *
 * A booking's event costs one HTTP call (events.insert) while the cached
 * access token lasts (google_auth.c), and two when it must be renewed
 * first. Every attempt, token included, runs against one deadline computed
 * when it starts: each call gets only the time that is left
 * (google_http.c). Nothing secret ever reaches an error detail or the log;
 * the details carry HTTP statuses, curl's errors and Google's own short
 * error message.
 *
 * Attendees. An ordinary service account (no Google Workspace domain-wide
 * delegation) may create events but not invite anyone: Google answers an
 * events.insert that carries attendees with 403, reason
 * forbiddenForServiceAccounts. The adapter then sends the same event once
 * more without attendees, within the same deadline, and keeps that event's
 * id; it remembers the refusal (an atomic flag) so that later bookings go
 * straight to the attendee-less request, and explains it in one warn line,
 * once per process. With cfg->google_subject (BARBERIA_GOOGLE_SUBJECT) the
 * assertion carries "sub": the service account acts for that Workspace user
 * and, given domain-wide delegation, may invite; then the refusal is not
 * remembered (every booking tries to invite first), but still explained
 * once.
 */
#include "google.h"
#include "google_int.h"
#include "../util/cond.h"
#include "../config.h"
#include "../util/buf.h"
#include "../util/log.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define EVENT_ID_MAX 1024
/* Google's error reason for attendees sent by a service account without
 * domain-wide delegation, and the start of its message */
#define NO_INVITE_REASON  "forbiddenForServiceAccounts"
#define NO_INVITE_MESSAGE "Service accounts cannot invite attendees"
/* an answer that asks to be tried again later: the first pause (doubled,
 * with jitter, each time), the time a try needs to be worth it, and how
 * many tries at most, all within the attempt's one deadline */
#define RETRY_FIRST_MS 250
#define RETRY_MIN_LEFT 500
#define TRIES_MAX      4

/* --- the Calendar API ------------------------------------------------------------- */

/* One try of c with token, extra_header (may be NULL) and an Accept
 * header. */
static br_err call_with_token(int64_t deadline, struct call *c, const char *token,
                              const char *extra_header)
{
    br_err rc = BR_OK;
    char *auth = xasprintf("Authorization: Bearer %s", token);
    const char *lines[] = {auth, "Accept: application/json", "Expect:", extra_header};
    struct curl_slist *hdrs = NULL, *h;
    for (size_t i = 0; i < ARRAY_LEN(lines) && !rc; i++) {
        if (!lines[i]) continue;
        h = curl_slist_append(hdrs, lines[i]);
        if (!h)
            rc = err_set(BR_INTERNAL, "%s: out of memory", c->what);
        else
            hdrs = h;
    }
    wipe_free(auth);
    c->headers = hdrs;
    if (!rc) rc = gcal_http_call(deadline, c);
    c->headers = NULL;
    curl_slist_free_all(hdrs);
    /* a refusal may quote what it was sent: its text never holds the token */
    if (!rc && c->resp.p && (c->status < 200 || c->status > 299)) {
        secret_scrub(c->resp.p, c->resp.len + 1, token);
        c->resp.len = strlen(c->resp.p);
    }
    return rc;
}

/* Performs c with the access token. A 401 (a token revoked, or expired
 * while the cached one looked good, e.g. across a suspend that stopped the
 * monotonic clock) drops it, and c is tried once more with a fresh one
 * within the same deadline, as Google asks: nothing was done with the
 * refused token. */
static br_err authorized_call(struct gcal *g, int64_t deadline, struct call *c,
                              const char *extra_header)
{
    br_err rc = BR_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        char *token = NULL;
        /* -1: no token, the request never left (see try_again) */
        c->status = -1;
        rc = gcal_get_token(g, deadline, &token);
        if (rc) return rc;
        c->status = 0;
        c->too_large = false;
        buf_reset(&c->resp);
        rc = call_with_token(deadline, c, token, extra_header);
        bool refused = !rc && c->status == 401;
        if (refused) gcal_forget_token(g, deadline, token);
        wipe_free(token);
        if (!refused) break;
    }
    return rc;
}

/* True when one of Google's error reasons in body (error.errors[].reason)
 * is a rate limit: rateLimitExceeded or userRateLimitExceeded. */
static bool rate_limited(const struct buf *body)
{
    json_t *j = json_loadb(body->p ? body->p : "", body->len, 0, NULL);
    size_t i;
    const json_t *item;
    bool yes = false;
    json_array_foreach(json_object_get(json_object_get(j, "error"), "errors"), i, item)
    {
        const char *reason = json_string_value(json_object_get(item, "reason"));
        yes = yes || (reason && (!strcmp(reason, "rateLimitExceeded") ||
                                 !strcmp(reason, "userRateLimitExceeded")));
    }
    json_decref(j);
    return yes;
}

/* True when c's outcome (rc, c->status) is one Google asks to be tried
 * again with backoff: a 429, or a 403 for a rate limit (nothing was done);
 * and, when Google may see the request twice without harm (idempotent:
 * events.patch, events.delete), a 5xx or a failed transport too. A
 * timeout never is (it used up the deadline), nor a failed token request
 * (it has a verdict of its own). */
static bool try_again(br_err rc, const struct call *c, bool idempotent)
{
    if (rc) return idempotent && rc == BR_UPSTREAM && !c->too_large && c->status == 0;
    if (c->status == 429 || (c->status == 403 && rate_limited(&c->resp))) return true;
    return idempotent && c->status >= 500 && c->status <= 599;
}

/* authorized_call, tried again with exponential backoff and jitter while
 * Google asks for it (see try_again) and the deadline leaves a try its
 * chance. */
static br_err call_retrying(struct gcal *g, int64_t deadline, struct call *c,
                            const char *extra_header, bool idempotent)
{
    int64_t pause = RETRY_FIRST_MS;
    br_err rc = BR_OK;
    for (int tries = 1;; tries++) {
        rc = authorized_call(g, deadline, c, extra_header);
        if (tries >= TRIES_MAX || !try_again(rc, c, idempotent)) break;
        int64_t wait = pause / 2 + (int64_t)randombytes_uniform((uint32_t)(pause / 2 + 1));
        if (deadline - clock_mono_ms() < wait + RETRY_MIN_LEFT) break;
        struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        pause *= 2;
    }
    return rc;
}

/* The events.insert body, with or without the attendees member. Caller
 * frees; NULL when a text is not UTF-8. */
static char *event_json(const struct cal_event *ev, bool with_attendees)
{
    json_t *att = with_attendees ? json_array() : NULL;
    if (att && ev->attendee_email && *ev->attendee_email &&
        json_array_append_new(att, json_pack("{s:s}", "email", ev->attendee_email)) != 0) {
        json_decref(att);
        att = NULL;
    }
    /* json_object_set_new() takes its value even when it fails (and
     * refuses a NULL one), so every call runs and nothing leaks */
    json_t *o = json_object();
    int bad = 0;
    bad |= json_object_set_new(o, "summary", json_string(ev->summary));
    bad |= json_object_set_new(o, "description", json_string(ev->description));
    bad |= json_object_set_new(o, "start", json_pack("{s:s}", "dateTime", ev->start));
    bad |= json_object_set_new(o, "end", json_pack("{s:s}", "dateTime", ev->end));
    if (with_attendees) bad |= json_object_set_new(o, "attendees", att);
    char *text = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

/* True when a refusal's reason (one of error.errors[], or a
 * google.rpc.ErrorInfo in error.details[]) is forbiddenForServiceAccounts. */
static bool has_no_invite_reason(const json_t *list)
{
    size_t i;
    const json_t *item;
    json_array_foreach(list, i, item)
    {
        const char *reason = json_string_value(json_object_get(item, "reason"));
        if (reason && !strcmp(reason, NO_INVITE_REASON)) return true;
    }
    return false;
}

/* True when an events.insert answer's body is Google's refusal of
 * attendees from a service account without domain-wide delegation: the
 * Calendar API's {"error": {"errors": [{"reason":
 * "forbiddenForServiceAccounts", ...}], "code": 403, "message": ...}}, or
 * the newer shape with error.status PERMISSION_DENIED and the same message
 * or an ErrorInfo reason. Any other 403 is not. */
static bool refuses_attendees(const struct buf *body)
{
    json_t *j = json_loadb(body->p ? body->p : "", body->len, 0, NULL);
    const json_t *e = json_object_get(j, "error");
    bool yes = has_no_invite_reason(json_object_get(e, "errors")) ||
               has_no_invite_reason(json_object_get(e, "details"));
    if (!yes) {
        const char *status = json_string_value(json_object_get(e, "status"));
        const char *message = json_string_value(json_object_get(e, "message"));
        yes = message && !strncmp(message, NO_INVITE_MESSAGE, strlen(NO_INVITE_MESSAGE)) &&
              (!status || !strcmp(status, "PERMISSION_DENIED"));
    }
    json_decref(j);
    return yes;
}

/* One events.insert within deadline, with or without the attendees. OUT:
 * *event_id (caller frees) on success; *no_invites set when Google refused
 * it for its attendees (see refuses_attendees). */
static br_err insert_event(struct gcal *g, int64_t deadline, const struct cal_event *ev,
                           bool with_attendees, char **event_id, bool *no_invites)
{
    *event_id = NULL;
    *no_invites = false;
    const char *what = with_attendees ? "events.insert" : "events.insert without attendees";
    char *body = event_json(ev, with_attendees);
    if (!body) return err_set(BR_INTERNAL, "%s: cannot build the event", what);
    struct call c = {.what = what,
                     .method = "POST",
                     .url = g->events_url,
                     .body = body,
                     .body_len = strlen(body)};
    buf_init(&c.resp, RESPONSE_MAX);
    br_err rc = call_retrying(g, deadline, &c, "Content-Type: application/json", false);
    free(body);
    if (!rc && (c.status < 200 || c.status > 299)) {
        rc = gcal_refused(&c);
        *no_invites = with_attendees && c.status == 403 && refuses_attendees(&c.resp);
    }
    json_t *j = NULL;
    if (!rc) {
        j = json_loadb(c.resp.p ? c.resp.p : "", c.resp.len, 0, NULL);
        if (!json_is_object(j))
            rc = err_set(BR_UPSTREAM, "%s: HTTP %ld with a body that is not a JSON object", what,
                         c.status);
    }
    const char *id = json_string_value(json_object_get(j, "id"));
    if (!rc && (!id || !gcal_visible_ascii(id, EVENT_ID_MAX)))
        rc = err_set(BR_UPSTREAM, "%s: the answer has no usable event id", what);
    if (!rc) *event_id = xstrdup(id);
    json_decref(j);
    buf_free(&c.resp);
    return rc;
}

/* The one warn line (per process) saying why clients are not invited. */
static void explain_no_invites(struct gcal *g)
{
    if (atomic_exchange(&g->explained, true)) return;
    if (!g->subject)
        log_warn("calendar: the client is not invited to the event: Google refuses attendees "
                 "from service account %s (" NO_INVITE_REASON "), so events are created "
                 "without them from now on; inviting clients needs a Google Workspace "
                 "domain-wide delegation and BARBERIA_GOOGLE_SUBJECT set to the user to act "
                 "for (see docs/google-calendar.md)",
                 g->client_email);
    else
        log_warn("calendar: the client is not invited to the event: Google refuses attendees "
                 "from service account %s acting for %s (" NO_INVITE_REASON "), so the event "
                 "was created without them; check the domain-wide delegation of the account's "
                 "client id for the scope " GCAL_SCOPE " in the Workspace admin console "
                 "(logged once; every booking still tries to invite first)",
                 g->client_email, g->subject);
}

/* Creates ev within deadline (see gcal_create). */
static br_err create_until(struct gcal *g, int64_t deadline, const struct cal_event *ev,
                           char **event_id)
{
    *event_id = NULL;
    /* without a subject, a refusal is final: skip the doomed attempt */
    bool invite = g->subject || !atomic_load(&g->no_invites);
    bool refused = false;
    br_err rc = insert_event(g, deadline, ev, invite, event_id, &refused);
    if (rc && refused) {
        if (!g->subject) atomic_store(&g->no_invites, true);
        invite = false;
        /* once more without attendees, within what is left of the bound */
        rc = insert_event(g, deadline, ev, false, event_id, &refused);
    }
    if (!rc && !invite) explain_no_invites(g);
    return rc;
}

static br_err gcal_create(struct calendar *cal, const struct cal_event *ev, char **event_id)
{
    struct gcal *g = (struct gcal *)cal;
    return create_until(g, clock_mono_ms() + g->timeout_ms, ev, event_id);
}

static br_err gcal_delete(struct calendar *cal, const char *event_id)
{
    struct gcal *g = (struct gcal *)cal;
    int64_t deadline = clock_mono_ms() + g->timeout_ms;
    char *id = gcal_pct_encode(event_id);
    char *url = xasprintf("%s/%s", g->events_url, id);
    free(id);
    struct call c = {.what = "events.delete", .method = "DELETE", .url = url};
    buf_init(&c.resp, RESPONSE_MAX);
    br_err rc = call_retrying(g, deadline, &c, NULL, true);
    /* gone already (404, 410) is as good as deleted */
    if (!rc && c.status != 200 && c.status != 204 && c.status != 404 && c.status != 410)
        rc = gcal_refused(&c);
    buf_free(&c.resp);
    free(url);
    return rc;
}

/* True when an event in Google's answer has status "cancelled": deleted
 * (in the calendar's own pages, or through the API). */
static bool event_cancelled(const struct buf *body)
{
    json_t *j = json_loadb(body->p ? body->p : "", body->len, 0, NULL);
    const char *status = json_string_value(json_object_get(j, "status"));
    bool yes = status && !strcmp(status, "cancelled");
    json_decref(j);
    return yes;
}

/* events.patch of event_id with the JSON body, tried again as a patch may
 * be, until deadline. OUT: *c, its answer to judge (buf_free(&c->resp)). */
static br_err patch_event(struct gcal *g, int64_t deadline, const char *event_id, const char *body,
                          struct call *c)
{
    char *id = gcal_pct_encode(event_id);
    char *url = xasprintf("%s/%s", g->events_url, id);
    free(id);
    *c = (struct call){.what = "events.patch",
                       .method = "PATCH",
                       .url = url,
                       .body = body,
                       .body_len = strlen(body)};
    buf_init(&c->resp, RESPONSE_MAX);
    br_err rc = call_retrying(g, deadline, c, "Content-Type: application/json", true);
    c->url = NULL;
    free(url);
    return rc;
}

/* events.patch of a rescheduled appointment: only its start and end; an
 * event that is gone is made anew, within the same bound. */
static br_err gcal_move(struct calendar *cal, const char *event_id, const struct cal_event *ev,
                        char **made)
{
    struct gcal *g = (struct gcal *)cal;
    *made = NULL;
    int64_t deadline = clock_mono_ms() + g->timeout_ms;
    json_t *o =
        json_pack("{s:{s:s}, s:{s:s}}", "start", "dateTime", ev->start, "end", "dateTime", ev->end);
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) return err_set(BR_INTERNAL, "events.patch: cannot build the change");
    struct call c;
    br_err rc = patch_event(g, deadline, event_id, body, &c);
    if (!rc && (c.status == 404 || c.status == 410)) {
        rc = err_set(BR_NOTFOUND, "events.patch: HTTP %ld: the event is gone", c.status);
    } else if (!rc && (c.status < 200 || c.status > 299)) {
        rc = gcal_refused(&c);
    } else if (!rc && event_cancelled(&c.resp)) {
        /* Google keeps a deleted event (status "cancelled") and lets it be
         * patched: moved, it stays deleted */
        rc = err_set(BR_NOTFOUND, "events.patch: HTTP %ld: the event was deleted", c.status);
    }
    buf_free(&c.resp);
    free(body);
    if (rc == BR_NOTFOUND) {
        log_info("calendar: event %s is gone from the calendar (%s): making a new one", event_id,
                 err_msg());
        rc = create_until(g, deadline, ev, made);
    }
    return rc;
}

/* events.patch of the title, description and attendees (see
 * rewrite_event in calendar.h). */
static br_err gcal_rewrite(struct calendar *cal, const char *event_id, const struct cal_event *ev)
{
    struct gcal *g = (struct gcal *)cal;
    int64_t deadline = clock_mono_ms() + g->timeout_ms;
    json_t *att = json_array();
    if (ev->attendee_email && *ev->attendee_email)
        json_array_append_new(att, json_pack("{s:s}", "email", ev->attendee_email));
    json_t *o = json_object();
    int bad = 0;
    bad |= json_object_set_new(o, "summary", json_string(ev->summary));
    bad |= json_object_set_new(o, "description", json_string(ev->description));
    bad |= json_object_set_new(o, "attendees", att);
    char *body = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!body) return err_set(BR_INTERNAL, "events.patch: cannot build the change");
    struct call c;
    br_err rc = patch_event(g, deadline, event_id, body, &c);
    /* gone (404, 410) is as good as rewritten */
    if (!rc && c.status != 404 && c.status != 410 && (c.status < 200 || c.status > 299))
        rc = gcal_refused(&c);
    buf_free(&c.resp);
    free(body);
    return rc;
}

/* --- opening and closing ----------------------------------------------------------- */

static void gcal_free(struct gcal *g)
{
    if (!g) return;
    if (g->lock_ready) pthread_mutex_destroy(&g->lock);
    wipe_free(g->token);
    free(g->client_email);
    free(g->subject);
    free(g->token_uri);
    free(g->events_url);
    EVP_PKEY_free(g->key);
    free(g);
}

static void gcal_close(struct calendar *cal)
{
    gcal_free((struct gcal *)cal);
}

static const struct cal_ops gcal_ops = {
    .name = "google",
    .create_event = gcal_create,
    .delete_event = gcal_delete,
    .move_event = gcal_move,
    .rewrite_event = gcal_rewrite,
    .close = gcal_close,
};

static br_err build_events_url(struct gcal *g, const char *api_url, const char *calendar_id)
{
    if (!calendar_id || !*calendar_id)
        return err_set(BR_CONFIG, "BARBERIA_GOOGLE_CALENDAR_ID is empty");
    if (!api_url || !gcal_url_acceptable(api_url))
        return err_set(BR_CONFIG, "BARBERIA_GOOGLE_API_URL must be an https URL (plain http only "
                                  "to this machine)");
    size_t n = strlen(api_url);
    while (n && api_url[n - 1] == '/')
        n--;
    char *id = gcal_pct_encode(calendar_id);
    g->events_url = xasprintf("%.*s/calendars/%s/events", (int)n, api_url, id);
    free(id);
    return BR_OK;
}

br_err calendar_google_open(const struct config *cfg, struct calendar **out)
{
    *out = NULL;
    br_err rc = cfg->google_subject ? gcal_check_subject(cfg->google_subject) : BR_OK;
    if (rc) return rc;
    struct gcal *g = xcalloc(1, sizeof *g);
    g->base.ops = &gcal_ops;
    g->timeout_ms = cfg->calendar_timeout_ms > 0 ? cfg->calendar_timeout_ms : 5000;
    g->subject = cfg->google_subject ? xstrdup(cfg->google_subject) : NULL;
    atomic_init(&g->no_invites, false);
    atomic_init(&g->explained, false);
    rc = gcal_load_key_file(g, cfg->google_credentials);
    if (!rc) rc = build_events_url(g, cfg->google_api_url, cfg->google_calendar_id);
    if (!rc) {
        int e = pthread_mutex_init(&g->lock, NULL);
        if (e) rc = err_set(BR_INTERNAL, "calendar: cannot create a lock: %s", strerror(e));
        g->lock_ready = e == 0;
    }
    if (rc) {
        gcal_free(g);
        return rc;
    }
    log_info("calendar: Google Calendar \"%s\" as %s%s%s (bound %lld ms)", cfg->google_calendar_id,
             g->client_email, g->subject ? " acting for " : "", g->subject ? g->subject : "",
             (long long)g->timeout_ms);
    *out = &g->base;
    return BR_OK;
}
