/*
 * test_feed.c - a barber's private calendar feed over HTTP against the
 * real server: GET /api/barberos/{id}/agenda.ics?token= with no session,
 * POST /api/admin/barberos/{id}/feed (a new link; the old one stops
 * working) and DELETE (revoked): the text/calendar answer (CRLF, lines of
 * at most 75 octets, RFC 5545 escaping, UTC times, the mails' UIDs), the
 * window, nothing but the client's name and the service, every wrong
 * token the same 404, only the admin handing links out, and the token
 * never in the log.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNKNOWN_ID "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"

static struct srv S;
static char *BARBERO, *OTRO, *SERVICIO;
static struct user ANA, BEA, BARB, ADMIN;

static int group_setup(void **state)
{
    (void)state;
    srv_init(&S);
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", "BARBERIA_MIN_NOTICE_MIN=0",
                         "BARBERIA_PUBLIC_URL=https://barberia.test", NULL};
    srv_start(&S, env, NULL);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    OTRO = make_barbero(&S, "Luis");
    SERVICIO = make_servicio(&S, "Corte, barba; y \\ más", 30, 15.0);
    signup_user(&S, &ANA, "Ana \"la\" Pérez, hija; de\\Luis con un nombre largo que pasa de línea");
    signup_user(&S, &BEA, "Bea Ruiz");
    make_user(&S, &BARB, "Barbero Uno", "barbero");
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    free(BARBERO);
    free(OTRO);
    free(SERVICIO);
    return 0;
}

/* POST the feed link as u: the answer (caller frees r). */
static void feed_post(const struct user *u, const char *id, struct resp *r)
{
    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s/feed", id);
    http_json(&S, "POST", path, u ? u->token : NULL, NULL, r);
}

/* A new link's path and query (from its URL): caller frees. */
static char *new_link(const char *id)
{
    struct resp r;
    feed_post(&ADMIN, id, &r);
    if (r.status != 200) fail_msg("feed: %ld %s", r.status, r.body);
    expect_keys(r.json, "url", NULL);
    const char *url = jstr(r.json, "url");
    const char *base = "https://barberia.test/api/barberos/";
    assert_int_equal(strncmp(url, base, strlen(base)), 0);
    const char *tok = strstr(url, "?token=");
    assert_non_null(tok);
    assert_int_equal(strlen(tok + 7), 43); /* 256 bits, base64url */
    char *path = strdup(url + strlen("https://barberia.test"));
    resp_free(&r);
    return path;
}

static void expect_404(const char *path)
{
    struct resp r;
    http_get(&S, path, NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
}

static void book_at(const struct user *u, const char *barbero, int64_t ms, char **id)
{
    char f[32];
    iso8601_format(ms, f);
    *id = book(&S, u, barbero, SERVICIO, f, NULL);
}

static bool has_line(const char *body, const char *line)
{
    char *want = NULL;
    if (asprintf(&want, "\r\n%s\r\n", line) < 0) fail_msg("asprintf");
    bool ok = strstr(body, want) != NULL;
    free(want);
    return ok;
}

/* The body unfolded (CRLF SP removed), for looking up whole values. */
static char *unfold(const char *body)
{
    char *out = strdup(body), *o = out;
    for (const char *p = body; *p; p++) {
        if (p[0] == '\r' && p[1] == '\n' && p[2] == ' ') {
            p += 2;
            continue;
        }
        *o++ = *p;
    }
    *o = '\0';
    return out;
}

static void the_feed_lists_the_barbers_live_appointments_in_the_window(void **state)
{
    (void)state;
    int64_t now = clock_now_ms();
    char *a, *b, *c, *d, *e;
    book_at(&ANA, BARBERO, now + 2 * 86400000LL, &a);   /* in the window */
    book_at(&BEA, BARBERO, now + 3 * 86400000LL, &b);   /* cancelled below */
    book_at(&BEA, BARBERO, now + 200 * 86400000LL, &c); /* past the window */
    book_at(&BEA, OTRO, now + 2 * 86400000LL, &d);      /* another barber's */
    book_at(&BEA, BARBERO, now + 4 * 86400000LL, &e);   /* in the window */
    char path[128];
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", b);
    struct resp r;
    http_json(&S, "POST", path, BARB.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    char *link = new_link(BARBERO);
    http_get(&S, link, NULL, &r); /* no session */
    assert_int_equal(r.status, 200);
    char ct[128];
    assert_string_equal(resp_header(&r, "Content-Type", ct, sizeof ct),
                        "text/calendar; charset=utf-8");
    /* the iCalendar rules: CRLF lines of at most 75 octets */
    assert_int_equal(strncmp(r.body, "BEGIN:VCALENDAR\r\n", 17), 0);
    const char *p = r.body;
    while (*p) {
        const char *eol = strstr(p, "\r\n");
        assert_non_null(eol);
        assert_true(eol - p <= 75);
        assert_null(memchr(p, '\n', (size_t)(eol - p)));
        p = eol + 2;
    }
    assert_true(has_line(r.body, "END:VCALENDAR") || strstr(r.body, "END:VCALENDAR\r\n"));
    char *u = unfold(r.body);
    char uid[80];
    snprintf(uid, sizeof uid, "UID:%s@barberia", a);
    assert_true(has_line(u, uid));
    snprintf(uid, sizeof uid, "UID:%s@barberia", e);
    assert_true(has_line(u, uid));
    assert_null(strstr(u, b));
    assert_null(strstr(u, c));
    assert_null(strstr(u, d));
    /* times in UTC, text escaped */
    char dt[40], f[32];
    iso8601_format(now + 2 * 86400000LL, f);
    snprintf(dt, sizeof dt, "DTSTART:%.4s%.2s%.2sT%.2s%.2s%.2sZ", f, f + 5, f + 8, f + 11, f + 14,
             f + 17);
    assert_true(has_line(u, dt));
    assert_non_null(strstr(u, "SUMMARY:Corte\\, barba\\; y \\\\ más \u2014 Ana \"la\" Pérez\\, "
                              "hija\\; de\\\\Luis con un nombre largo que pasa de línea\r\n"));
    /* nothing of the client but her name */
    assert_null(strstr(u, ANA.email));
    assert_null(strstr(u, BEA.email));
    assert_null(strstr(u, "mailto:"));
    free(u);
    resp_free(&r);
    /* the token never reaches the log */
    const char *tok = strstr(link, "token=") + 6;
    char *log = srv_log(&S);
    assert_null(strstr(log, tok));
    free(log);
    free(link);
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
}

static void a_wrong_renewed_or_revoked_token_is_the_same_404(void **state)
{
    (void)state;
    char *old = new_link(BARBERO);
    /* renewed (an empty JSON body is fine too): the old one stops */
    struct resp r0;
    char fp[128];
    snprintf(fp, sizeof fp, "/api/admin/barberos/%s/feed", BARBERO);
    http_json(&S, "POST", fp, ADMIN.token, "{}", &r0);
    assert_int_equal(r0.status, 200);
    resp_free(&r0);
    expect_404(old);
    char *link = new_link(BARBERO);
    expect_404(old);
    struct resp r;
    http_get(&S, link, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* another barber's path with this token, no token, a malformed one */
    char *q = strchr(link, '?');
    char path[256];
    snprintf(path, sizeof path, "/api/barberos/%s/agenda.ics%s", OTRO, q);
    expect_404(path);
    snprintf(path, sizeof path, "/api/barberos/%s/agenda.ics%s", UNKNOWN_ID, q);
    expect_404(path);
    snprintf(path, sizeof path, "/api/barberos/%s/agenda.ics", BARBERO);
    expect_404(path);
    snprintf(path, sizeof path, "/api/barberos/%s/agenda.ics?token=x", BARBERO);
    expect_404(path);
    snprintf(path, sizeof path, "/api/barberos/no-uuid/agenda.ics%s", q);
    expect_404(path);
    /* one character changed */
    char *bad = strdup(link);
    char *last = bad + strlen(bad) - 1;
    *last = *last == 'A' ? 'B' : 'A';
    expect_404(bad);
    free(bad);
    /* revoked */
    snprintf(path, sizeof path, "/api/admin/barberos/%s/feed", BARBERO);
    http_json(&S, "DELETE", path, ADMIN.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    expect_404(link);
    /* only the hash is stored */
    const char *tok = strstr(old, "token=") + 6;
    char *stored =
        db_query(&S, "SELECT count(*) FROM barbero_contactos WHERE feed_hash = '%s'", tok);
    assert_string_equal(stored, "0");
    free(stored);
    free(old);
    free(link);
}

static void only_the_admin_hands_links_out(void **state)
{
    (void)state;
    struct resp r;
    feed_post(&ANA, BARBERO, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    feed_post(&BARB, BARBERO, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    feed_post(NULL, BARBERO, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    feed_post(&ADMIN, UNKNOWN_ID, &r);
    expect_error(&r, 404, "Barbero no encontrado");
    resp_free(&r);
    feed_post(&ADMIN, "no-uuid", &r);
    expect_error(&r, 404, "Barbero no encontrado");
    resp_free(&r);
    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s/feed", UNKNOWN_ID);
    http_json(&S, "DELETE", path, ADMIN.token, NULL, &r);
    expect_error(&r, 404, "Barbero no encontrado");
    resp_free(&r);
    /* the admin's listing tells whether a link is live, never a token or its hash */
    char *link = new_link(OTRO);
    http_get(&S, "/api/admin/barberos", ADMIN.token, &r);
    assert_null(strstr(r.body, "token"));
    assert_null(strstr(r.body, strstr(link, "token=") + 6));
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(r.json, "barberos"), i, b)
    {
        if (!strcmp(jstr(b, "id"), OTRO)) assert_true(json_is_true(json_object_get(b, "feed")));
    }
    resp_free(&r);
    free(link);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_feed_lists_the_barbers_live_appointments_in_the_window),
        cmocka_unit_test(a_wrong_renewed_or_revoked_token_is_the_same_404),
        cmocka_unit_test(only_the_admin_hands_links_out),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
