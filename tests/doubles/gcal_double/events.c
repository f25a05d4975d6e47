/*
 * events.c - the Google Calendar double's events endpoint: events.insert,
 * events.delete and events.patch, each checked against the contract, with
 * the calendar id percent-encoded in the raw request line (see gcal_double.h).
 */
#define _GNU_SOURCE
#include "gcal_double.h"

#include "util/buf.h"
#include "util/iso8601.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define NO_INVITE_MESSAGE                                                                          \
    "Service accounts cannot invite attendees without Domain-Wide Delegation of Authority."

/* --- the events endpoint -------------------------------------------------------------- */

/* True when auth carries a token this double issued, did not revoke, and
 * that has not expired. OUT: *delegated, whether it was issued for a
 * "sub". */
static bool token_valid(const char *auth, bool *delegated)
{
    *delegated = false;
    if (!auth || strncmp(auth, "Bearer ", 7) != 0) return false;
    bool found = false;
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < S.ntokens && !found; i++)
        if (!strcmp(S.tokens[i].text, auth + 7) && time(NULL) < S.tokens[i].expires) {
            found = true;
            *delegated = S.tokens[i].delegated;
        }
    pthread_mutex_unlock(&S.lock);
    return found;
}

/* A strict RFC 3339 date-time; OUT: *ms. */
static bool rfc3339(const char *s, int64_t *ms)
{
    /* YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM) */
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    size_t n = strlen(s);
    if (n < sizeof shape) return false;
    for (size_t i = 0; i < sizeof shape - 1; i++)
        if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i]) return false;
    size_t i = sizeof shape - 1;
    if (s[i] == '.') {
        size_t k = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == k) return false;
    }
    if (!strcmp(s + i, "Z")) return iso8601_parse(s, n, ms);
    if ((s[i] == '+' || s[i] == '-') && n - i == 6 && s[i + 3] == ':')
        return iso8601_parse(s, n, ms);
    return false;
}

/* Exactly the named members (NULL-terminated), or false. */
static bool exact_members(const json_t *o, const char *const *names)
{
    if (!json_is_object(o)) return false;
    size_t n = 0;
    for (; names[n]; n++)
        if (!json_object_get(o, names[n])) return false;
    return json_object_size(o) == n;
}

/* Checks an events.insert body. NULL when good, else why not. */
static const char *check_event(const json_t *ev)
{
    static const char *const top[] = {"summary", "description", "start", "end", "attendees", NULL};
    /* the same without attendees: what is sent when Google refuses them */
    static const char *const top_alone[] = {"summary", "description", "start", "end", NULL};
    static const char *const when[] = {"dateTime", NULL};
    static const char *const who[] = {"email", NULL};
    if (!exact_members(ev, top) && !exact_members(ev, top_alone))
        return "the event must have exactly summary, description, "
               "start, end, attendees (or all of them but attendees)";
    if (!json_is_string(json_object_get(ev, "summary"))) return "summary is not a string";
    if (!json_is_string(json_object_get(ev, "description"))) return "description is not a string";
    const json_t *start = json_object_get(ev, "start"), *end = json_object_get(ev, "end");
    if (!exact_members(start, when) || !exact_members(end, when))
        return "start and end must be exactly {dateTime}";
    int64_t s_ms, e_ms;
    const char *s = json_string_value(json_object_get(start, "dateTime"));
    const char *e = json_string_value(json_object_get(end, "dateTime"));
    if (!s || !rfc3339(s, &s_ms)) return "start.dateTime is not RFC 3339";
    if (!e || !rfc3339(e, &e_ms)) return "end.dateTime is not RFC 3339";
    if (e_ms <= s_ms) return "The specified time range is empty.";
    const json_t *att = json_object_get(ev, "attendees");
    if (!att) return NULL;
    if (!json_is_array(att)) return "attendees is not an array";
    size_t i;
    const json_t *a;
    json_array_foreach(att, i, a)
    {
        if (!exact_members(a, who)) return "an attendee must be exactly {email}";
        const char *m = json_string_value(json_object_get(a, "email"));
        const char *at = m ? strchr(m, '@') : NULL;
        if (!at || at == m || !at[1] || strchr(at + 1, '@') || strpbrk(m, " \t\r\n<>"))
            return "Invalid attendee email.";
    }
    return NULL;
}

/* Splits the raw events path: calendar id and (for DELETE) event id, both
 * decoded, each required to be percent-encoded in the raw URI. */
static const char *parse_events_path(const char *raw, char **cal, char **event)
{
    *cal = *event = NULL;
    if (strchr(raw, '?')) return "unexpected query string";
    if (strncmp(raw, EVENTS_PREFIX, strlen(EVENTS_PREFIX)) != 0) return "not an events path";
    const char *p = raw + strlen(EVENTS_PREFIX);
    const char *slash = strchr(p, '/');
    if (!slash || slash == p) return "no calendar id";
    const char *rest = slash + 1;
    if (strncmp(rest, "events", 6) != 0 || (rest[6] != '\0' && rest[6] != '/'))
        return "no events segment after the calendar id";
    *cal = pct_decode(p, (size_t)(slash - p), false, true);
    if (!*cal) return "calendar id not percent-encoded";
    if (rest[6] == '/') {
        const char *id = rest + 7;
        if (!*id || strchr(id, '/')) return "bad event id segment";
        *event = pct_decode(id, strlen(id), false, true);
        if (!*event) return "event id not percent-encoded";
    }
    return NULL;
}

/* Checks an events.patch body: a non-empty subset of the members an event
 * may have, each as events.insert wants it. NULL when good. */
static const char *check_patch(const json_t *ev)
{
    static const char *const allowed[] = {"summary", "description", "start", "end", "attendees"};
    static const char *const who[] = {"email", NULL};
    static const char *const when[] = {"dateTime", NULL};
    if (!json_is_object(ev) || json_object_size(ev) == 0) return "the patch is not a JSON object";
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)ev, key, v)
    {
        bool known = false;
        for (size_t i = 0; i < ARRAY_LEN(allowed); i++)
            known = known || !strcmp(key, allowed[i]);
        if (!known) return "the patch has a member an event does not have";
    }
    const json_t *start = json_object_get(ev, "start"), *end = json_object_get(ev, "end");
    if ((start && !exact_members(start, when)) || (end && !exact_members(end, when)))
        return "start and end must be exactly {dateTime}";
    int64_t s_ms = 0, e_ms = 0;
    const char *s = start ? json_string_value(json_object_get(start, "dateTime")) : NULL;
    const char *e = end ? json_string_value(json_object_get(end, "dateTime")) : NULL;
    if (start && (!s || !rfc3339(s, &s_ms))) return "start.dateTime is not RFC 3339";
    if (end && (!e || !rfc3339(e, &e_ms))) return "end.dateTime is not RFC 3339";
    if (start && end && e_ms <= s_ms) return "The specified time range is empty.";
    const json_t *att = json_object_get(ev, "attendees");
    if (att && !json_is_array(att)) return "attendees is not an array";
    size_t i;
    const json_t *a;
    json_array_foreach(att, i, a)
    {
        if (!exact_members(a, who)) return "an attendee must be exactly {email}";
    }
    return NULL;
}

/* events.patch: an unknown event is 404; a deleted one is patched but
 * stays deleted, answered 200 with status "cancelled", as Google keeps a
 * deleted event (its get always returns it) and lets it be updated. */
static void on_patch(struct MHD_Connection *conn, struct req *q, struct reply *r, const char *event)
{
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    json_error_t jerr;
    json_t *ev =
        q->body.len ? json_loadb(q->body.p, q->body.len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    const char *why = !media_type_is(ct, "application/json") ? "content type is not "
                                                               "application/json"
                      : !ev                                  ? "body is not JSON"
                                                             : check_patch(ev);
    int found = 0; /* 0 unknown, 1 live, 2 deleted */
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < S.nevents && !found; i++)
        if (!strcmp(S.events[i].id, event)) found = S.events[i].deleted ? 2 : 1;
    pthread_mutex_unlock(&S.lock);
    if (why) {
        reply_set(r, 400, api_error(400, "invalid", why, "INVALID_ARGUMENT"), "%s", why);
    } else if (found == 0) {
        reply_set(r, 404, api_error(404, "notFound", "Not Found", "NOT_FOUND"), "ok");
    } else {
        json_t *answer = json_deep_copy(ev);
        json_object_set_new(answer, "kind", json_string("calendar#event"));
        json_object_set_new(answer, "id", json_string(event));
        json_object_set_new(answer, "status", json_string(found == 2 ? "cancelled" : "confirmed"));
        reply_set(r, 200, answer, "ok");
    }
    json_decref(ev);
}

/* The failure POST /control?fail=N&status=S set, while any is left. */
static bool injected_failure(struct reply *r)
{
    pthread_mutex_lock(&S.lock);
    bool inject = S.fail_left > 0;
    unsigned status = S.fail_status;
    if (inject) S.fail_left--;
    pthread_mutex_unlock(&S.lock);
    if (!inject) return false;
    if (status == 429 || status == 403)
        reply_set(r, status,
                  json_pack("{s:{s:[{s:s, s:s, s:s}], s:i, s:s}}", "error", "errors", "domain",
                            "usageLimits", "reason", "rateLimitExceeded", "message",
                            "Rate Limit Exceeded", "code", (int)status, "message",
                            "Rate Limit Exceeded"),
                  "injected");
    else
        reply_set(r, status, api_error((int)status, "backendError", "Backend Error", "INTERNAL"),
                  "injected");
    json_object_set_new(r->extra, "mode", json_string("fail"));
    return true;
}

void on_events(struct MHD_Connection *conn, const char *method, struct req *q, struct reply *r)
{
    char *cal = NULL, *event = NULL;
    const char *bad = parse_events_path(q->raw_uri, &cal, &event);
    if (cal) json_object_set_new(r->extra, "calendar_id", json_string(cal));
    if (event) json_object_set_new(r->extra, "event_id", json_string(event));
    bool insert = !strcmp(method, "POST") && !event;
    bool del = !strcmp(method, "DELETE") && event;
    bool patch = !strcmp(method, "PATCH") && event;
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    bool delegated = false;
    if (bad) {
        reply_set(r, 400, api_error(400, "invalid", bad, "INVALID_ARGUMENT"), "%s", bad);
    } else if (!insert && !del && !patch) {
        reply_set(
            r, 405,
            api_error(405, "httpMethodNotAllowed", "Method Not Allowed", "METHOD_NOT_ALLOWED"),
            "method %s on %s", method, event ? "an event" : "the events collection");
    } else if (!token_valid(auth, &delegated)) {
        reply_set(r, 401,
                  api_error(401, "authError",
                            "Request had invalid authentication credentials. Expected OAuth 2 "
                            "access token, login cookie or other valid authentication "
                            "credential.",
                            "UNAUTHENTICATED"),
                  "bearer token not issued by this double, revoked or expired");
    } else if (S.calendar_id && strcmp(cal, S.calendar_id) != 0) {
        reply_set(r, 404, api_error(404, "notFound", "Not Found", "NOT_FOUND"), "unknown calendar");
    } else if (injected_failure(r)) {
        /* a rate limit or a backend error: nothing done */
    } else if (apply_mode("events", r)) {
        /* the mode answers */
    } else if (patch) {
        on_patch(conn, q, r, event);
    } else if (del) {
        if (q->body.len) {
            reply_set(r, 400, api_error(400, "invalid", "Unexpected body", "INVALID_ARGUMENT"),
                      "DELETE with a body");
        } else {
            int found = 0; /* 0 unknown, 1 live, 2 deleted */
            pthread_mutex_lock(&S.lock);
            for (size_t i = 0; i < S.nevents && !found; i++)
                if (!strcmp(S.events[i].id, event)) {
                    found = S.events[i].deleted ? 2 : 1;
                    S.events[i].deleted = true;
                }
            pthread_mutex_unlock(&S.lock);
            if (found == 1)
                reply_set(r, 204, NULL, "ok");
            else if (found == 2)
                reply_set(r, 410, api_error(410, "deleted", "Resource has been deleted", "GONE"),
                          "ok");
            else
                reply_set(r, 404, api_error(404, "notFound", "Not Found", "NOT_FOUND"), "ok");
        }
    } else {
        const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
        json_error_t jerr;
        json_t *ev =
            q->body.len ? json_loadb(q->body.p, q->body.len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
        const char *why = !media_type_is(ct, "application/json") ? "content type is not "
                                                                   "application/json"
                          : !ev                                  ? "body is not JSON"
                                                                 : check_event(ev);
        char mode[16];
        mode_of("events", mode);
        if (ev)
            json_object_set_new(r->extra, "attendees",
                                json_boolean(json_object_get(ev, "attendees") != NULL));
        if (why) {
            reply_set(r, 400, api_error(400, "invalid", why, "INVALID_ARGUMENT"), "%s", why);
        } else if (!strcmp(mode, "forbidden") &&
                   json_array_size(json_object_get(ev, "attendees")) && !delegated) {
            reply_set(r, 403, calendar_error(403, "forbiddenForServiceAccounts", NO_INVITE_MESSAGE),
                      "ok");
            json_object_set_new(r->extra, "mode", json_string(mode));
        } else {
            char id[27];
            random_text(id, 26, "0123456789abcdefghijklmnopqrstuv");
            pthread_mutex_lock(&S.lock);
            S.events = xrealloc(S.events, (S.nevents + 1) * sizeof *S.events);
            S.events[S.nevents].id = xstrdup(id);
            S.events[S.nevents++].deleted = false;
            int delay = S.delay_ms;
            pthread_mutex_unlock(&S.lock);
            json_t *answer = json_deep_copy(ev);
            json_object_set_new(answer, "kind", json_string("calendar#event"));
            json_object_set_new(answer, "id", json_string(id));
            json_object_set_new(answer, "status", json_string("confirmed"));
            char link[96];
            snprintf(link, sizeof link, "https://www.google.com/calendar/event?eid=%s", id);
            json_object_set_new(answer, "htmlLink", json_string(link));
            reply_set(r, 200, answer, "ok");
            json_object_set_new(r->extra, "issued_id", json_string(id));
            if (delay > 0) pause_ms(delay);
        }
        json_decref(ev);
    }
    free(cal);
    free(event);
}
