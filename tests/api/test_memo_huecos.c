/*
 * test_memo_huecos.c - the free slots of a day the server remembers are
 * never stale (memo_fixture.h). They are remembered on SQLite across
 * everything that does not change them, and each change shows at the next
 * request, as a second node that remembers nothing answers it: any client's
 * booking, a cancel, a reschedule, a schedule, a day off or a closure, a
 * service's length, a barber leaving, a write through another node or by
 * SQL, a setting changed by a restart - and the clock passing a slot's
 * start. What else the server remembers is test_memo_lecturas.c's.
 */
#define _GNU_SOURCE
#include "memo_fixture.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- the free slots of a day ------------------------------------------------------------ */

/* The body of GET path on s (no session), owned by the caller. */
static char *body_at(const struct srv *s, const char *path)
{
    struct resp r;
    http_get(s, path, NULL, &r);
    if (r.status != 200) fail_msg("GET %s: %ld %s", path, r.status, r.body);
    char *b = strdup(r.body);
    resp_free(&r);
    return b;
}

/* The UTC date `days` from now as YYYY-MM-DD: a few days ahead, it is
 * inside the offer in the shop's zone too. */
static void date_ahead(int days, char out[11])
{
    time_t t = (time_t)(clock_now_ms() / 1000) + (time_t)days * 86400;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 11, "%Y-%m-%d", &tm);
}

/* A shop of three barbers working from inicio to fin (HH:MM) every day,
 * a service of 30 minutes, an administrator and two clients; a date three
 * days ahead and the paths that ask for its free slots. */
struct shop {
    struct user admin, ana, beto;
    char *b[3];
    char *sv;
    char fecha[11];
    char any[300], one[300]; /* any barber; the first one */
};

static void put_week(const struct srv *s, const struct shop *h, const char *who, const char *inicio,
                     const char *fin)
{
    char path[160], body[1024];
    size_t n = (size_t)snprintf(body, sizeof body, "{\"horario\":[");
    for (int d = 1; d <= 7; d++)
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"dia\":%d,\"inicio\":\"%s\",\"fin\":\"%s\"}", d > 1 ? "," : "",
                              d, inicio, fin);
    snprintf(body + n, sizeof body - n, "]}");
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", who);
    struct resp r;
    http_json(s, "PUT", path, h->admin.token, body, &r);
    if (r.status != 200) fail_msg("PUT %s: %ld %s", path, r.status, r.body);
    resp_free(&r);
}

static void shop_open(struct shop *h, const char *name)
{
    memset(h, 0, sizeof *h);
    char n[96];
    snprintf(n, sizeof n, "Admin %s", name);
    make_user(&S, &h->admin, n, "admin");
    signup_user(&S, &h->ana, "Ana Huecos");
    signup_user(&S, &h->beto, "Beto Huecos");
    for (int i = 0; i < 3; i++) {
        snprintf(n, sizeof n, "%s %d", name, i);
        h->b[i] = make_barbero(&S, n);
        put_week(&S, h, h->b[i], "09:00", "12:00");
    }
    snprintf(n, sizeof n, "Servicio %s", name);
    h->sv = make_servicio(&S, n, 30, 15.0);
    date_ahead(3, h->fecha);
    snprintf(h->any, sizeof h->any, "/api/disponibilidad?servicio_id=%s&fecha=%s", h->sv, h->fecha);
    snprintf(h->one, sizeof h->one, "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s",
             h->sv, h->fecha, h->b[0]);
}

static void shop_close(struct shop *h)
{
    for (int i = 0; i < 3; i++)
        free(h->b[i]);
    free(h->sv);
}

/* A second node on S's data that remembers nothing (BARBERIA_MEMO=0): its
 * answers are the ones S must give. */
static void oracle_start(struct srv *o, const char *const *more_env)
{
    const char *env[8] = {"BARBERIA_MEMO=0"};
    for (size_t i = 0; more_env && more_env[i] && i < 6; i++)
        env[i + 1] = more_env[i];
    srv_init_peer(o, &S);
    srv_start(o, env, NULL);
}

/* It never remembered anything, then it stops. */
static void oracle_stop(struct srv *o)
{
    assert_int_equal(memo_count_of(o, "disponibilidad", true), 0);
    assert_int_equal(memo_count_of(o, "disponibilidad", false), 0);
    srv_cleanup(o);
}

/* Asks S twice for path: the second answer is the first, remembered (on
 * SQLite one more hit). Returns it (caller frees). */
static char *remembered(const char *path)
{
    char *first = body_of(path, NULL);
    long h0 = memo_count("disponibilidad", true);
    char *again = body_of(path, NULL);
    if (!test_pg()) assert_int_equal(memo_count("disponibilidad", true), h0 + 1);
    assert_string_equal(again, first);
    free(again);
    return first;
}

/* S's answer to path now: the oracle's, and not was (the change shows).
 * Returns it (caller frees). */
static char *fresh(const struct srv *o, const char *path, const char *was)
{
    char *got = body_of(path, NULL), *want = body_at(o, path);
    if (strcmp(got, want)) fail_msg("GET %s:\n  this node   %s\n  the oracle  %s", path, got, want);
    if (was && !strcmp(got, was)) fail_msg("GET %s: the change does not show: %s", path, got);
    free(want);
    return got;
}

/* The start of the i-th free slot of an answer (caller frees). */
static char *slot_at(const char *body, size_t i)
{
    json_t *j = json_loads(body, 0, NULL);
    assert_non_null(j);
    const char *s = jstr(json_array_get(json_object_get(j, "huecos"), i), "inicio");
    if (!s) fail_msg("no slot %zu in %s", i, body);
    char *copy = strdup(s);
    json_decref(j);
    return copy;
}

/* Whether an answer offers a slot that starts at inicio. */
static bool offers(const char *body, const char *inicio)
{
    char k[64];
    snprintf(k, sizeof k, "\"inicio\":\"%s\"", inicio);
    return strstr(body, k) != NULL;
}

static void post_ok(const char *path, const char *token, const char *body)
{
    struct resp r;
    http_json(&S, "POST", path, token, body, &r);
    if (r.status != 200 && r.status != 201) fail_msg("POST %s: %ld %s", path, r.status, r.body);
    resp_free(&r);
}

/* Remembers path, runs change, and expects the change at the next answer;
 * was is replaced by it. */
#define CHANGE_SHOWS(o, path, was, change)                                                         \
    do {                                                                                           \
        free(was);                                                                                 \
        (was) = remembered(path);                                                                  \
        change;                                                                                    \
        char *now_ = fresh(o, path, was);                                                          \
        free(was);                                                                                 \
        (was) = now_;                                                                              \
    } while (0)

static void free_slots_show_bookings_cancels_and_reschedules_at_once(void **state)
{
    (void)state;
    struct shop h;
    shop_open(&h, "Huecos Reservas");
    struct srv O;
    oracle_start(&O, NULL);
    char path[160], body[160];

    /* another client books the first barber's first slot */
    char *one = remembered(h.one), *any = remembered(h.any);
    char *first = slot_at(one, 0), *cita = NULL;
    CHANGE_SHOWS(&O, h.one, one, cita = book(&S, &h.beto, h.b[0], h.sv, first, NULL));
    char *now = slot_at(one, 0);
    assert_string_not_equal(now, first);
    free(now);
    char *before_any = any;
    any = fresh(&O, h.any, before_any); /* one barber fewer at that slot */
    free(before_any);

    /* she cancels: the slot is free again */
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", cita);
    CHANGE_SHOWS(&O, h.one, one, post_ok(path, h.beto.token, "{}"));
    now = slot_at(one, 0);
    assert_string_equal(now, first);
    free(now);
    free(cita);

    /* booked again, then moved to a later slot */
    CHANGE_SHOWS(&O, h.one, one, cita = book(&S, &h.beto, h.b[0], h.sv, first, NULL));
    char *later = slot_at(one, 3);
    snprintf(path, sizeof path, "/api/citas/%s/reprogramar", cita);
    snprintf(body, sizeof body, "{\"fecha_inicio\":\"%s\"}", later);
    CHANGE_SHOWS(&O, h.one, one, post_ok(path, h.beto.token, body));
    now = slot_at(one, 0);
    assert_string_equal(now, first);
    free(now);
    assert_false(offers(one, later));

    free(later);
    free(cita);
    free(first);
    free(one);
    free(any);
    oracle_stop(&O);
    shop_close(&h);
}

static void json_send(const char *method, const char *path, const char *token, const char *body,
                      char **id)
{
    struct resp r;
    if (body)
        http_json(&S, method, path, token, body, &r);
    else
        http_req(&S, method, path, &(struct req_opts){.token = token}, &r);
    if (r.status != 200 && r.status != 201)
        fail_msg("%s %s: %ld %s", method, path, r.status, r.body);
    if (id) *id = strdup(jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
}

static void free_slots_show_schedules_absences_and_the_catalog_at_once(void **state)
{
    (void)state;
    struct shop h;
    shop_open(&h, "Huecos Agenda");
    struct srv O;
    oracle_start(&O, NULL);
    char *one = NULL, *any = NULL, path[200], body[300], *off = NULL;

    /* a shorter day for the first barber */
    CHANGE_SHOWS(&O, h.one, one, put_week(&S, &h, h.b[0], "09:00", "10:00"));
    assert_null(strstr(one, "\"10:00\""));

    /* a day off, and back */
    snprintf(body, sizeof body, "{\"barbero_id\":\"%s\",\"desde\":\"%s\",\"hasta\":\"%s\"}", h.b[0],
             h.fecha, h.fecha);
    CHANGE_SHOWS(&O, h.one, one,
                 json_send("POST", "/api/admin/ausencias", h.admin.token, body, &off));
    assert_non_null(strstr(one, "\"huecos\":[]"));
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", off);
    CHANGE_SHOWS(&O, h.one, one, json_send("DELETE", path, h.admin.token, NULL, NULL));
    assert_null(strstr(one, "\"huecos\":[]"));
    free(off);

    /* the whole shop closed that day, and open again */
    snprintf(body, sizeof body, "{\"barbero_id\":null,\"desde\":\"%s\",\"hasta\":\"%s\"}", h.fecha,
             h.fecha);
    CHANGE_SHOWS(&O, h.any, any,
                 json_send("POST", "/api/admin/ausencias", h.admin.token, body, &off));
    assert_non_null(strstr(any, "\"huecos\":[]"));
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", off);
    CHANGE_SHOWS(&O, h.any, any, json_send("DELETE", path, h.admin.token, NULL, NULL));
    free(off);

    /* a longer service: fewer slots */
    snprintf(path, sizeof path, "/api/admin/servicios/%s", h.sv);
    CHANGE_SHOWS(&O, h.one, one, json_patch(path, h.admin.token, "{\"duracion_min\":60}"));
    assert_null(strstr(one, "\"09:15\""));

    /* a barber leaves the catalog, and comes back */
    snprintf(path, sizeof path, "/api/admin/barberos/%s", h.b[2]);
    CHANGE_SHOWS(&O, h.any, any, json_patch(path, h.admin.token, "{\"activo\":false}"));
    assert_null(strstr(any, h.b[2]));
    CHANGE_SHOWS(&O, h.any, any, json_patch(path, h.admin.token, "{\"activo\":true}"));
    assert_non_null(strstr(any, h.b[2]));

    free(one);
    free(any);
    oracle_stop(&O);
    shop_close(&h);
}

static void free_slots_show_writes_of_another_node_or_process_at_once(void **state)
{
    (void)state;
    struct shop h;
    shop_open(&h, "Huecos Fuera");
    struct srv O;
    oracle_start(&O, NULL);
    char *one = NULL, q[256], *cita = NULL;

    /* a booking through another node on the same data */
    one = remembered(h.one);
    char *first = slot_at(one, 0);
    CHANGE_SHOWS(&O, h.one, one, cita = book(&O, &h.ana, h.b[0], h.sv, first, NULL));
    assert_false(offers(one, first));

    /* cancelled by SQL (sqlite3; psql on PostgreSQL), between two bookings
     * of this node's on another day */
    char other[11], when[64];
    date_ahead(5, other);
    snprintf(when, sizeof when, "%sT10:00:00.000Z", other);
    free(book(&S, &h.beto, h.b[1], h.sv, when, NULL));
    snprintf(q, sizeof q, "UPDATE citas SET estado = 'cancelada' WHERE id = '%s';", cita);
    snprintf(when, sizeof when, "%sT11:00:00.000Z", other);
    CHANGE_SHOWS(&O, h.one, one, {
        sql(q);
        free(book(&S, &h.beto, h.b[1], h.sv, when, NULL));
    });
    assert_true(offers(one, first));

    /* a setting changed by a restart: a node of 30-minute steps, then 15 */
    struct srv P;
    srv_init_peer(&P, &S);
    const char *env30[] = {"BARBERIA_SLOT_MIN=30", NULL};
    srv_start(&P, env30, NULL);
    char *was = body_at(&P, h.one);
    free(body_at(&P, h.one));
    srv_stop(&P);
    srv_start(&P, NULL, NULL);
    char *is = body_at(&P, h.one);
    assert_string_not_equal(is, was);
    assert_string_equal(is, one);
    free(was);
    free(is);
    srv_cleanup(&P);

    free(first);
    free(cita);
    free(one);
    oracle_stop(&O);
    shop_close(&h);
}

/* Remembered while nothing they show changes: across a photo (bookkeeping
 * to the remembered answers); and the bookings that drop them leave the
 * catalog remembered. */
static void free_slots_stay_remembered_while_nothing_they_show_changes(void **state)
{
    (void)state;
    struct shop h;
    shop_open(&h, "Huecos Quietos");
    char *one = remembered(h.one);
    char *first = slot_at(one, 0);
    char *cita = book(&S, &h.ana, h.b[1], h.sv, first, NULL);
    free(one);
    one = remembered(h.one);
    static const char png[] = "\x89PNG\r\n\x1a\nhuecos";
    json_decref(upload_photo(&S, &h.ana, cita, "antes", png, sizeof png - 1));
    long h0 = memo_count("disponibilidad", true);
    char *again = body_of(h.one, NULL);
    assert_string_equal(again, one);
    if (!test_pg()) assert_int_equal(memo_count("disponibilidad", true), h0 + 1);
    free(again);

    free(body_of("/api/servicios", NULL));
    long c0 = memo_count("catalog", true);
    char other[11], when[64];
    date_ahead(6, other);
    snprintf(when, sizeof when, "%sT10:00:00.000Z", other);
    free(book(&S, &h.beto, h.b[2], h.sv, when, NULL));
    free(body_of("/api/servicios", NULL));
    if (!test_pg()) assert_int_equal(memo_count("catalog", true), c0 + 1);
    free(first);
    free(cita);
    free(one);
    shop_close(&h);
}

/* A node in UTC offering every minute with no notice: a barber whose day
 * is the next few minutes. The first free slot goes as soon as the clock
 * passes its start, never before - checked at every answer until it has
 * gone (within a minute). */
struct clock_watch {
    const struct srv *s;
    const char *path;
    int64_t first_ms;
    char first[32];
    int early, late, answers;
};

static bool first_slot_gone(void *ud)
{
    struct clock_watch *w = ud;
    int64_t t0 = clock_now_ms();
    char *b = body_at(w->s, w->path);
    int64_t t1 = clock_now_ms();
    bool offered = offers(b, w->first);
    free(b);
    w->answers++;
    if (t1 <= w->first_ms && !offered) w->early++; /* asked before its start: offered */
    if (t0 > w->first_ms && offered) w->late++;    /* asked after: gone */
    return t0 > w->first_ms;
}

/* The instant of a slot's start on the UTC day that begins at day_ms. */
static int64_t slot_ms(int64_t day_ms, const char *inicio)
{
    int hh = -1, mm = -1;
    if (strlen(inicio) < 16 || sscanf(inicio + 11, "%2d:%2d", &hh, &mm) != 2)
        fail_msg("not a slot start: %s", inicio);
    return day_ms + (int64_t)hh * 3600000 + (int64_t)mm * 60000;
}

/* Not within the last ten minutes of a UTC day. */
static bool far_from_midnight(void *ud)
{
    (void)ud;
    return clock_now_ms() / 60000 % 1440 <= 1430;
}

static void a_free_slot_goes_as_the_clock_passes_it(void **state)
{
    (void)state;
    struct shop h;
    memset(&h, 0, sizeof h);
    make_user(&S, &h.admin, "Admin Reloj", "admin");
    /* the barber's day must not cross midnight (UTC) */
    assert_true(wait_until(far_from_midnight, NULL, 15 * 60000));
    int64_t now = clock_now_ms(), day_ms = now / 86400000 * 86400000;
    int m0 = (int)(now / 60000 % 1440);
    time_t t = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char *b = make_barbero(&S, "Barbero Reloj"), *sv = make_servicio(&S, "Un minuto", 1, 1.0);
    char path[300], body[200];
    snprintf(body, sizeof body,
             "{\"horario\":[{\"dia\":%d,\"inicio\":\"%02d:%02d\",\"fin\":\"%02d:%02d\"}]}",
             tm.tm_wday ? tm.tm_wday : 7, m0 / 60, m0 % 60, (m0 + 6) / 60, (m0 + 6) % 60);
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", b);
    struct resp r;
    http_json(&S, "PUT", path, h.admin.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    struct srv T;
    srv_init_peer(&T, &S);
    const char *env[] = {"BARBERIA_TZ=UTC", "BARBERIA_SLOT_MIN=1", "BARBERIA_MIN_NOTICE_MIN=0",
                         NULL};
    srv_start(&T, env, NULL);
    char fecha[11];
    strftime(fecha, sizeof fecha, "%Y-%m-%d", &tm);
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s", sv,
             fecha, b);
    char *first = body_at(&T, path), *start = slot_at(first, 0);
    struct clock_watch w = {.s = &T, .path = path};
    snprintf(w.first, sizeof w.first, "%s", start);
    w.first_ms = slot_ms(day_ms, start);
    long h0 = memo_count_of(&T, "disponibilidad", true);
    assert_true(wait_until(first_slot_gone, &w, 90000));
    assert_int_equal(w.early, 0);
    assert_int_equal(w.late, 0);
    if (!test_pg()) assert_true(memo_count_of(&T, "disponibilidad", true) > h0);
    /* and the next one is offered */
    char *after = body_at(&T, path), *next = slot_at(after, 0);
    assert_true(slot_ms(day_ms, next) == w.first_ms + 60000);
    free(after);
    free(next);
    free(first);
    free(start);
    free(b);
    free(sv);
    srv_cleanup(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(free_slots_show_bookings_cancels_and_reschedules_at_once),
        cmocka_unit_test(free_slots_show_schedules_absences_and_the_catalog_at_once),
        cmocka_unit_test(free_slots_show_writes_of_another_node_or_process_at_once),
        cmocka_unit_test(free_slots_stay_remembered_while_nothing_they_show_changes),
        cmocka_unit_test(a_free_slot_goes_as_the_clock_passes_it),
    };
    return cmocka_run_group_tests(tests, memo_group_setup, memo_group_teardown);
}
