/*
 * test_agenda.c - the free slots of a day as the clock moves (core/agenda.c
 * on a real SQLite file, the clock given to it): each answer says until
 * when it holds (agenda_dia.vigente_hasta_ms), and it does hold at every
 * instant before that on the same local date and no longer at that instant;
 * the key that goes with it (agenda_disponibilidad_clave) changes with the
 * shop's date and with every field of the query, and with nothing else.
 * GET /api/disponibilidad remembers an answer under that key for that span
 * (tests/api/test_memo_huecos.c checks the whole at the real clock).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core/agenda.h"
#include "util/iso8601.h"
#include "util/tz.h"

struct fx {
    char dir[64];
    struct config cfg;
    struct store *st;
    struct app app;
    br_id user, b1, b2, servicio;
};

static int rm_entry(const char *p, const struct stat *sb, int f, struct FTW *w)
{
    (void)sb;
    (void)f;
    (void)w;
    return remove(p);
}

static void add_barbero(struct fx *f, br_id id, const char *nombre)
{
    struct barbero b = {.nombre = (char *)nombre};
    uuid_v4(b.id);
    assert_int_equal(store_barbero_add(f->st, &b), BR_OK); /* with the default week */
    memcpy(id, b.id, sizeof b.id);
}

static int64_t at(const char *iso)
{
    int64_t ms = 0;
    assert_true(iso8601_parse(iso, strlen(iso), &ms));
    return ms;
}

static void book(struct fx *f, const char *barbero, const char *inicio, const char *fin)
{
    struct cita c = {.estado = "confirmada"};
    uuid_v4(c.id);
    memcpy(c.cliente_id, f->user, sizeof c.cliente_id);
    memcpy(c.barbero_id, barbero, sizeof c.barbero_id);
    memcpy(c.servicio_id, f->servicio, sizeof c.servicio_id);
    snprintf(c.fecha_inicio, sizeof c.fecha_inicio, "%s", inicio);
    snprintf(c.fecha_fin, sizeof c.fecha_fin, "%s", fin);
    snprintf(c.created_at, sizeof c.created_at, "2031-01-01T00:00:00.000Z");
    assert_int_equal(store_cita_book(f->st, &c, NULL), BR_OK);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/barberia-agenda-XXXXXX");
    if (!mkdtemp(f->dir) || sodium_init() < 0) return -1;
    f->cfg.data_dir = f->dir;
    f->cfg.tz = "Europe/Madrid";
    f->cfg.slot_min = 15;
    f->cfg.min_notice_min = 120;
    f->cfg.max_days_ahead = 90;
    if (store_open(&f->cfg, 2, &f->st) != BR_OK || store_migrate(f->st) != BR_OK) return -1;
    f->app.cfg = &f->cfg;
    f->app.store = f->st;
    uuid_v4(f->user);
    struct new_user u = {.id = f->user,
                         .email = "a@example.com",
                         .password_hash = "h",
                         .created_at = "2031-01-01T00:00:00.000Z",
                         .rol = "cliente",
                         .nombre = "N"};
    assert_int_equal(store_user_create(f->st, &u), BR_OK);
    add_barbero(f, f->b1, "Ana");
    add_barbero(f, f->b2, "Beto");
    struct servicio s = {.nombre = "Corte", .duracion_min = 30, .precio = 15};
    uuid_v4(s.id);
    assert_int_equal(store_servicio_add(f->st, &s), BR_OK);
    memcpy(f->servicio, s.id, sizeof s.id);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->st);
    nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* The answer for q at now, as text (slots and their barbers), and until
 * when it says it holds. Caller frees. */
static char *answer(struct fx *f, struct agenda_query q, int64_t now, int64_t *hasta)
{
    q.now_ms = now;
    struct agenda_dia d;
    assert_int_equal(agenda_disponibilidad(&f->app, &q, &d), BR_OK);
    size_t cap = 64 + (size_t)d.nhuecos * (ISO8601_LEN + 2 + 2 * (UUID_LEN + 1)), n = 0;
    char *out = calloc(1, cap);
    for (int i = 0; i < d.nhuecos; i++) {
        br_ts a;
        iso8601_format(d.huecos[i].inicio_ms, a);
        n += (size_t)snprintf(out + n, cap - n, "%s", a);
        for (int k = 0; k < d.huecos[i].nb; k++)
            n += (size_t)snprintf(out + n, cap - n, ",%s", d.ids[d.idx[d.huecos[i].first + k]]);
        n += (size_t)snprintf(out + n, cap - n, ";");
    }
    if (hasta) *hasta = d.vigente_hasta_ms;
    agenda_dia_clear(&d);
    return out;
}

/* The first instant after now on another local date. */
static int64_t next_midnight(int64_t now)
{
    struct tz_date d;
    int minute;
    assert_true(tz_utc_to_local(now, &d, &minute));
    tz_civil_from_days(tz_days_from_civil(&d) + 1, &d);
    int64_t ms = 0;
    assert_true(tz_local_to_utc(&d, 0, &ms)); /* Madrid's midnight always exists */
    return ms;
}

static void expect_same(struct fx *f, struct agenda_query q, int64_t t, const char *want,
                        int64_t since)
{
    char *got = answer(f, q, t, NULL);
    if (strcmp(got, want)) {
        br_ts a, b;
        iso8601_format(since, a);
        iso8601_format(t, b);
        fail_msg("the answer of %s changed at %s, before it said:\n  %s\n  %s", a, b, want, got);
    }
    free(got);
}

/* Walks the clock from `from` to `to`, answer by answer: each holds at
 * every whole minute (and the millisecond before it) up to when it said,
 * or the local date's end, and differs at the instant it said. Returns how
 * many answers it went through. */
static int walk(struct fx *f, struct agenda_query q, int64_t from, int64_t to)
{
    int answers = 0;
    for (int64_t now = from; now < to;) {
        int64_t hasta = 0;
        char *a = answer(f, q, now, &hasta);
        assert_true(hasta > now);
        int64_t end = next_midnight(now), limit = hasta < end ? hasta : end;
        expect_same(f, q, now + 1 < limit ? now + 1 : now, a, now);
        for (int64_t t = (now / 60000 + 1) * 60000; t < limit; t += 60000) {
            expect_same(f, q, t - 1, a, now);
            expect_same(f, q, t, a, now);
        }
        expect_same(f, q, limit - 1, a, now);
        if (hasta < end) { /* exactly then, not later */
            char *b = answer(f, q, hasta, NULL);
            if (!strcmp(a, b)) {
                br_ts h;
                iso8601_format(hasta, h);
                fail_msg("the answer did not change at %s, when it said it would: %s", h, a);
            }
            free(b);
        }
        free(a);
        answers++;
        now = limit;
    }
    return answers;
}

static void an_answer_holds_until_the_notice_passes_its_first_slot(void **state)
{
    struct fx *f = *state;
    /* Wednesday 2031-03-05 (UTC+1): the default week, 09:00-14:00 and
     * 16:00-20:00; Ana busy 10:00-10:30 and Beto 09:00-11:00 local */
    book(f, f->b1, "2031-03-05T09:00:00.000Z", "2031-03-05T09:30:00.000Z");
    book(f, f->b2, "2031-03-05T08:00:00.000Z", "2031-03-05T10:00:00.000Z");
    struct agenda_query any = {.servicio_id = f->servicio, .fecha = "2031-03-05"};
    struct agenda_query ana = {
        .servicio_id = f->servicio, .fecha = "2031-03-05", .barbero_id = f->b1};
    /* from the day before (whole offer) to the evening (nothing left) */
    int64_t from = at("2031-03-03T23:00:00.000Z"), to = at("2031-03-05T19:00:00.000Z");
    int n = walk(f, any, from, to);
    assert_true(n > 20); /* one answer per slot passed, roughly */
    assert_true(walk(f, ana, from, to) > 20);

    /* the first slot offered is what expires it: 2 h (the notice) before
     * 09:00 local, then 09:15 ... */
    int64_t hasta = 0;
    free(answer(f, any, at("2031-03-05T05:00:00.000Z"), &hasta));
    assert_int_equal(hasta, at("2031-03-05T06:00:00.001Z"));
    free(answer(f, ana, at("2031-03-05T06:00:00.001Z"), &hasta));
    assert_int_equal(hasta, at("2031-03-05T06:15:00.001Z"));
    /* ... and a slot nobody is free for does not: once 09:30 local is
     * past the notice, Ana's next free slot is 10:30 (Beto's 11:00) */
    free(answer(f, ana, at("2031-03-05T06:30:00.001Z"), &hasta));
    assert_int_equal(hasta, at("2031-03-05T07:30:00.001Z"));
    free(answer(f, any, at("2031-03-05T06:30:00.001Z"), &hasta));
    assert_int_equal(hasta, at("2031-03-05T07:30:00.001Z"));
    /* nothing left to pass: it holds for the rest of the date */
    free(answer(f, any, at("2031-03-05T18:00:00.000Z"), &hasta));
    assert_true(hasta == INT64_MAX);
    /* a date past, or beyond the furthest: until the date changes */
    struct agenda_query past = {.servicio_id = f->servicio, .fecha = "2031-03-04"};
    free(answer(f, past, at("2031-03-05T05:00:00.000Z"), &hasta));
    assert_true(hasta == INT64_MAX);
}

static char *key_of(const char *s, const char *fecha, const char *b, const char *now)
{
    struct agenda_query q = {.servicio_id = s, .fecha = fecha, .barbero_id = b, .now_ms = at(now)};
    char key[200];
    assert_true(agenda_disponibilidad_clave(&q, key, sizeof key));
    return strdup(key);
}

static void expect_keys(const char *a, const char *b, bool same)
{
    if (same != !strcmp(a, b))
        fail_msg("keys %s and %s should %sbe equal", a, b, same ? "" : "not ");
}

static void the_key_is_the_query_and_the_shops_date(void **state)
{
    (void)state;
    const char *s = "0baae043-cc74-4aab-9b48-3e9135317eed";
    /* Madrid's 2031-03-05 runs from 2031-03-04T23:00Z to 2031-03-05T23:00Z */
    char *k = key_of(s, "2031-03-06", NULL, "2031-03-04T23:00:00.000Z");
    char *same = key_of(s, "2031-03-06", NULL, "2031-03-05T22:59:59.999Z");
    char *before = key_of(s, "2031-03-06", NULL, "2031-03-04T22:59:59.999Z");
    char *after = key_of(s, "2031-03-06", NULL, "2031-03-05T23:00:00.000Z");
    expect_keys(k, same, true);
    expect_keys(k, before, false);
    expect_keys(k, after, false);
    free(same);
    free(before);
    free(after);
    /* every field, wherever one ends and the next begins */
    const char *now = "2031-03-05T12:00:00.000Z";
    char *keys[] = {
        key_of(s, "2031-03-06", NULL, now), key_of(s, "2031-03-07", NULL, now),
        key_of(s, "2031-03-06", s, now),    key_of("a", "b c", NULL, now),
        key_of("a b", "c", NULL, now),      key_of("a", "b", "c", now),
        key_of("a", "bc", NULL, now),       key_of("a 1 b", "", NULL, now),
        key_of("a", "1 b", NULL, now),      key_of(NULL, "2031-03-06", NULL, now),
        key_of("", "2031-03-06", "x", now), key_of(s, NULL, NULL, now),
    };
    size_t n = sizeof keys / sizeof keys[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            expect_keys(keys[i], keys[j], false);
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    /* what the answer treats alike: no field and an empty one */
    char *none = key_of("", "", NULL, now), *empty = key_of(NULL, NULL, NULL, now);
    expect_keys(none, empty, true);
    free(none);
    free(empty);
    free(k);
}

int main(void)
{
    /* the zone is the process's: set before any thread starts */
    if (tz_use("Europe/Madrid") != BR_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(an_answer_holds_until_the_notice_passes_its_first_slot,
                                        setup, teardown),
        cmocka_unit_test(the_key_is_the_query_and_the_shops_date),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
