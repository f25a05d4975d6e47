/*
 * test_disponibilidad.c - GET /api/disponibilidad: the free slots
 * of a date honour the barber's weekly schedule and its breaks, days off
 * and shop closures, the service's length, the appointments already made
 * (cancelled ones do not block), the slot grid, the minimum notice and the
 * furthest date; with no barber named, each slot lists the barbers free
 * then, by name; on Europe/Madrid's changeover days the local times go
 * through the zone's rules. GET /api/citas/{id}/huecos: where an
 * appointment could move, its own time not counted as taken. Dates are computed from today, so the
 * tests hold whenever they run (the expected UTC times come from this file's own reading of the EU
 * summer-time rule, not from the service's code).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- dates, independently of the service --------------------------------------------------- */

struct ymd {
    int y, m, d;
};

static long days_from_civil(struct ymd t)
{
    long y = t.y - (t.m <= 2);
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * ((t.m + 9) % 12) + 2) / 5 + t.d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static struct ymd civil(long z)
{
    z += 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    struct ymd r = {(int)(yoe + era * 400), (int)(mp < 10 ? mp + 3 : mp - 9),
                    (int)(doy - (153 * mp + 2) / 5 + 1)};
    if (r.m <= 2) r.y++;
    return r;
}

static int iso_wday(long days)
{
    return (int)((days % 7 + 7 + 3) % 7) + 1; /* 1970-01-01 was a Thursday */
}

static long last_sunday(int y, int m)
{
    long d = days_from_civil((struct ymd){y, m, 31});
    while (iso_wday(d) != 7)
        d--;
    return d;
}

/* Europe/Madrid: UTC+2 from 01:00 UTC of March's last Sunday to 01:00 UTC
 * of October's, else UTC+1. */
static int madrid_offset_h(long long utc_s)
{
    long day = (long)(utc_s / 86400);
    int y = civil(day).y;
    long long on = (long long)last_sunday(y, 3) * 86400 + 3600;
    long long off = (long long)last_sunday(y, 10) * 86400 + 3600;
    return utc_s >= on && utc_s < off ? 2 : 1;
}

static long today(void)
{
    long long s = clock_now_ms() / 1000;
    return (long)((s + madrid_offset_h(s) * 3600) / 86400);
}

static void fmt_date(long days, char out[11])
{
    struct ymd t = civil(days);
    snprintf(out, 11, "%04d-%02d-%02d", t.y, t.m, t.d);
}

/* The first date at least `after` days from today that is weekday wd. */
static long next_weekday(int wd, long after)
{
    long d = today() + after;
    while (iso_wday(d) != wd)
        d++;
    return d;
}

/* The UTC instant (s) of local hh:mm on date days (outside changeover hours). */
static long long utc_s_of(long days, int hh, int mm)
{
    long long guess = (long long)days * 86400 + hh * 3600 + mm * 60 - 3600;
    int off = madrid_offset_h(guess);
    return (long long)days * 86400 + hh * 3600 + mm * 60 - off * 3600;
}

/* Its UTC text. */
static void utc_of(long days, int hh, int mm, char out[32])
{
    long long s = utc_s_of(days, hh, mm);
    struct ymd t = civil((long)(s / 86400));
    long sec = (long)(s % 86400);
    snprintf(out, 32, "%04d-%02d-%02dT%02ld:%02ld:00.000Z", t.y, t.m, t.d, sec / 3600,
             sec / 60 % 60);
}

/* --- the service ------------------------------------------------------------------------- */

static struct srv S;
static struct user ADMIN, ANA;
static char *SERVICIO; /* 30 minutes */

static int setup(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", "BARBERIA_MAX_DAYS_AHEAD=1000", NULL};
    srv_start(&S, env, NULL);
    make_user(&S, &ADMIN, "Admin", "admin");
    signup_user(&S, &ANA, "Ana");
    SERVICIO = make_servicio(&S, "Corte", 30, 15);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(SERVICIO);
    srv_cleanup(&S);
    return 0;
}

static json_t *huecos(const struct srv *s, const char *servicio, long day, const char *barbero,
                      struct resp *r)
{
    char date[11], path[300];
    fmt_date(day, date);
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s%s%s", servicio, date,
             barbero ? "&barbero_id=" : "", barbero ? barbero : "");
    http_get(s, path, NULL, r);
    if (r->status != 200) fail_msg("%s: %ld %s", path, r->status, r->body);
    assert_string_equal(jstr(r->json, "fecha"), date);
    assert_string_equal(jstr(r->json, "zona"), "Europe/Madrid");
    json_t *h = json_object_get(r->json, "huecos");
    assert_true(json_is_array(h));
    return h;
}

/* The huecos' local times joined by spaces ("09:00 09:15 ..."). Caller frees. */
static char *locals(const json_t *h)
{
    size_t n = json_array_size(h), cap = n * 6 + 1, len = 0;
    char *out = calloc(1, cap);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "",
                                jstr(json_array_get(h, i), "local"));
    return out;
}

static void expect_locals(const struct srv *s, const char *servicio, long day, const char *barbero,
                          const char *want)
{
    struct resp r;
    char *got = locals(huecos(s, servicio, day, barbero, &r));
    if (strcmp(got, want)) fail_msg("huecos:\n  got  %s\n  want %s", got, want);
    free(got);
    resp_free(&r);
}

/* The desk's free slots (GET /api/agenda/huecos) of date day, as a staff
 * member with token reads them: their local times, as locals(). */
static void expect_desk_locals(const struct srv *s, const char *token, const char *servicio,
                               long day, const char *want)
{
    char date[11], path[300];
    fmt_date(day, date);
    snprintf(path, sizeof path, "/api/agenda/huecos?servicio_id=%s&fecha=%s", servicio, date);
    struct resp r;
    http_get(s, path, token, &r);
    if (r.status != 200) fail_msg("%s: %ld %s", path, r.status, r.body);
    assert_string_equal(jstr(r.json, "fecha"), date);
    assert_string_equal(jstr(r.json, "zona"), "Europe/Madrid");
    assert_true(json_is_null(json_object_get(r.json, "barbero_id")));
    char *got = locals(json_object_get(r.json, "huecos"));
    if (strcmp(got, want)) fail_msg("desk huecos:\n  got  %s\n  want %s", got, want);
    free(got);
    resp_free(&r);
}

static void put_horario(const struct srv *s, const char *barbero, const char *json)
{
    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", barbero);
    struct resp r;
    http_json(s, "PUT", path, ADMIN.token, json, &r);
    if (r.status != 200) fail_msg("PUT horario: %ld %s", r.status, r.body);
    resp_free(&r);
}

static char *json_id(const struct resp *r, const char *obj)
{
    return strdup(jstr(json_object_get(r->json, obj), "id"));
}

/* --- the tests ------------------------------------------------------------------------------ */

static void bad_requests_are_refused(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Validación");
    char path[400];
    struct resp r;
    http_get(&S, "/api/disponibilidad?fecha=2030-01-02", NULL, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s", SERVICIO);
    http_get(&S, path, NULL, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    static const char *const bad[] = {"2030-13-01", "2030-02-30", "30-01-01", "2030-01-01T10:00",
                                      "mañana"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s", SERVICIO,
                 bad[i]);
        http_get(&S, path, NULL, &r);
        expect_error(&r, 400, "fecha inválida");
        resp_free(&r);
    }
    http_get(
        &S, "/api/disponibilidad?servicio_id=00000000-0000-4000-8000-000000000000&fecha=2030-01-02",
        NULL, &r);
    expect_error(&r, 404, "Servicio no encontrado");
    resp_free(&r);
    http_get(&S, "/api/disponibilidad?servicio_id=nada&fecha=2030-01-02", NULL, &r);
    expect_error(&r, 404, "Servicio no encontrado");
    resp_free(&r);
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=2030-01-02&barbero_id=%s",
             SERVICIO, "00000000-0000-4000-8000-000000000000");
    http_get(&S, path, NULL, &r);
    expect_error(&r, 404, "Barbero no encontrado");
    resp_free(&r);
    /* a deactivated barber or service is no longer offered */
    snprintf(path, sizeof path, "/api/admin/barberos/%s", b);
    http_json(&S, "PATCH", path, ADMIN.token, "{\"activo\":false}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=2030-01-02&barbero_id=%s",
             SERVICIO, b);
    http_get(&S, path, NULL, &r);
    expect_error(&r, 404, "Barbero no encontrado");
    resp_free(&r);
    char *off = make_servicio(&S, "Retirado", 30, 10);
    snprintf(path, sizeof path, "/api/admin/servicios/%s", off);
    http_json(&S, "PATCH", path, ADMIN.token, "{\"activo\":false}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=2030-01-02", off);
    http_get(&S, path, NULL, &r);
    expect_error(&r, 404, "Servicio no encontrado");
    resp_free(&r);
    free(off);
    free(b);
}

static const char DEFAULT_WED[] =
    "09:00 09:15 09:30 09:45 10:00 10:15 10:30 10:45 11:00 11:15 11:30 11:45 12:00 12:15 12:30 "
    "12:45 13:00 13:15 13:30 16:00 16:15 16:30 16:45 17:00 17:15 17:30 17:45 18:00 18:15 18:30 "
    "18:45 19:00 19:15 19:30";

static void the_default_week_with_its_break_and_the_utc_times(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Semana Normal");
    long wed = next_weekday(3, 7);
    expect_locals(&S, SERVICIO, wed, b, DEFAULT_WED);
    struct resp r;
    json_t *h = huecos(&S, SERVICIO, wed, b, &r);
    char want[32];
    utc_of(wed, 9, 0, want);
    json_t *first = json_array_get(h, 0);
    assert_string_equal(jstr(first, "inicio"), want);
    utc_of(wed, 9, 30, want);
    assert_string_equal(jstr(first, "fin"), want);
    json_t *bs = json_object_get(first, "barberos");
    assert_int_equal(json_array_size(bs), 1);
    assert_string_equal(json_string_value(json_array_get(bs, 0)), b);
    assert_string_equal(jstr(r.json, "barbero_id"), b);
    assert_string_equal(jstr(r.json, "servicio_id"), SERVICIO);
    resp_free(&r);
    /* Saturday mornings only; Sunday nothing */
    expect_locals(&S, SERVICIO, next_weekday(6, 7), b,
                  "09:00 09:15 09:30 09:45 10:00 10:15 10:30 10:45 11:00 11:15 11:30 11:45 12:00 "
                  "12:15 12:30 12:45 13:00 13:15 13:30");
    expect_locals(&S, SERVICIO, next_weekday(7, 7), b, "");
    free(b);
}

static void the_grid_starts_at_each_interval_and_the_service_must_fit(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Rejilla");
    put_horario(&S, b,
                "{\"horario\":[{\"dia\":2,\"inicio\":\"09:10\",\"fin\":\"10:00\"},"
                "{\"dia\":2,\"inicio\":\"10:20\",\"fin\":\"10:50\"}]}");
    char *veinte = make_servicio(&S, "Veinte", 20, 8);
    char *hora = make_servicio(&S, "Hora", 60, 30);
    long tue = next_weekday(2, 7);
    expect_locals(&S, veinte, tue, b, "09:10 09:25 09:40 10:20");
    expect_locals(&S, SERVICIO, tue, b, "09:10 09:25 10:20");
    expect_locals(&S, hora, tue, b, "");
    expect_locals(&S, SERVICIO, next_weekday(3, 7), b, ""); /* no Wednesday any more */
    free(veinte);
    free(hora);
    free(b);
}

static void days_off_and_closures_empty_the_day(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Vacaciones");
    long thu = next_weekday(4, 7);
    char d1[11], d2[11], body[300];
    fmt_date(thu - 1, d1);
    fmt_date(thu, d2);
    struct resp r;
    snprintf(body, sizeof body, "{\"barbero_id\":\"%s\",\"desde\":\"%s\",\"hasta\":\"%s\"}", b, d1,
             d2);
    http_json(&S, "POST", "/api/admin/ausencias", ADMIN.token, body, &r);
    assert_int_equal(r.status, 201);
    char *off = json_id(&r, "ausencia");
    resp_free(&r);
    expect_locals(&S, SERVICIO, thu, b, "");
    expect_locals(&S, SERVICIO, thu - 1, b, "");
    expect_locals(&S, SERVICIO, thu + 1, b, DEFAULT_WED); /* Friday: as a Wednesday */
    char path[128];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", off);
    http_req(&S, "DELETE", path, &(struct req_opts){.token = ADMIN.token}, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    expect_locals(&S, SERVICIO, thu, b, DEFAULT_WED);

    /* the whole shop closed that day: nobody works */
    snprintf(body, sizeof body, "{\"barbero_id\":null,\"desde\":\"%s\",\"hasta\":\"%s\"}", d2, d2);
    http_json(&S, "POST", "/api/admin/ausencias", ADMIN.token, body, &r);
    assert_int_equal(r.status, 201);
    char *closed = json_id(&r, "ausencia");
    resp_free(&r);
    expect_locals(&S, SERVICIO, thu, b, "");
    expect_locals(&S, SERVICIO, thu, NULL, "");
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", closed);
    http_req(&S, "DELETE", path, &(struct req_opts){.token = ADMIN.token}, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    expect_locals(&S, SERVICIO, thu, b, DEFAULT_WED);
    free(off);
    free(closed);
    free(b);
}

static void appointments_block_their_slots_and_cancelled_ones_do_not(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Ocupado");
    put_horario(&S, b, "{\"horario\":[{\"dia\":1,\"inicio\":\"09:00\",\"fin\":\"11:00\"}]}");
    long mon = next_weekday(1, 7);
    char at[32];
    utc_of(mon, 10, 0, at);
    char *cita = book(&S, &ANA, b, SERVICIO, at, NULL);
    /* 09:45 would end 10:15 and 10:15 start before 10:30; 09:30 ends as it starts: free */
    expect_locals(&S, SERVICIO, mon, b, "09:00 09:15 09:30 10:30");
    db_exec(&S, "UPDATE citas SET estado = 'cancelada' WHERE estado = 'confirmada'", NULL);
    expect_locals(&S, SERVICIO, mon, b, "09:00 09:15 09:30 09:45 10:00 10:15 10:30");
    free(cita);
    free(b);
}

/* GET /api/citas/<id>/huecos?fecha=<day> as token (NULL: none). */
static void cita_huecos(const char *cita, const char *fecha, const char *token, struct resp *r)
{
    char path[300];
    snprintf(path, sizeof path, "/api/citas/%s/huecos%s%s", cita, fecha ? "?fecha=" : "",
             fecha ? fecha : "");
    http_get(&S, path, token, r);
}

static void a_move_is_offered_the_time_its_own_appointment_holds(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Mover");
    put_horario(&S, b, "{\"horario\":[{\"dia\":1,\"inicio\":\"09:00\",\"fin\":\"11:00\"}]}");
    long mon = next_weekday(1, 7);
    char at[32], date[11];
    fmt_date(mon, date);
    struct user bea;
    signup_user(&S, &bea, "Bea");
    utc_of(mon, 10, 0, at);
    char *cita = book(&S, &ANA, b, SERVICIO, at, NULL);
    utc_of(mon, 9, 0, at);
    char *other = book(&S, &bea, b, SERVICIO, at, NULL);
    const char *open = "09:30 10:30", *hers = "09:30 09:45 10:00 10:15 10:30";
    expect_locals(&S, SERVICIO, mon, b, open);
    /* hers, and staff's: her own half hour is free to move into; Bea's is not */
    const char *who[] = {ANA.token, ADMIN.token};
    struct resp r;
    for (size_t i = 0; i < 2; i++) {
        cita_huecos(cita, date, who[i], &r);
        assert_int_equal(r.status, 200);
        assert_string_equal(jstr(r.json, "fecha"), date);
        assert_string_equal(jstr(r.json, "zona"), "Europe/Madrid");
        assert_string_equal(jstr(r.json, "servicio_id"), SERVICIO);
        assert_string_equal(jstr(r.json, "barbero_id"), b);
        char *got = locals(json_object_get(r.json, "huecos"));
        assert_string_equal(got, hers);
        free(got);
        resp_free(&r);
    }
    /* nobody else's answer changed (nothing of hers is remembered for others) */
    expect_locals(&S, SERVICIO, mon, b, open);
    /* the request first, then the appointment, as a change judges them */
    static const struct {
        const char *cita, *fecha;
        int who; /* 0 none, 1 Ana, 2 Bea */
        long status;
        const char *msg;
    } bad[] = {
        {NULL, "x", 0, 401, "No autenticado"},
        {NULL, NULL, 1, 400, "Faltan campos requeridos"},
        {NULL, "", 1, 400, "Faltan campos requeridos"},
        {"00000000-0000-4000-8000-000000000000", "2030-02-30", 1, 400, "fecha inválida"},
        {NULL, "mañana", 2, 400, "fecha inválida"},
        {NULL, "d", 2, 404, "Cita no encontrada"},
        {"00000000-0000-4000-8000-000000000000", "d", 1, 404, "Cita no encontrada"},
        {"nada", "d", 1, 404, "Cita no encontrada"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *tok = bad[i].who == 1 ? ANA.token : bad[i].who == 2 ? bea.token : NULL;
        const char *f = bad[i].fecha && !strcmp(bad[i].fecha, "d") ? date : bad[i].fecha;
        cita_huecos(bad[i].cita ? bad[i].cita : cita, f, tok, &r);
        expect_error(&r, bad[i].status, bad[i].msg);
        resp_free(&r);
    }
    /* a path of another shape is no resource; this one takes GET only */
    char path[300];
    snprintf(path, sizeof path, "/api/citas/%s/huecos/x?fecha=%s", cita, date);
    http_get(&S, path, ANA.token, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    snprintf(path, sizeof path, "/api/citas/%s/huecos", cita);
    http_json(&S, "DELETE", path, ANA.token, NULL, &r);
    expect_error(&r, 405, "Método no permitido");
    char allow[64];
    assert_non_null(resp_header(&r, "Allow", allow, sizeof allow));
    assert_string_equal(allow, "GET, HEAD");
    resp_free(&r);
    /* and what is offered can be taken: a quarter of an hour later */
    utc_of(mon, 10, 15, at);
    char body[96];
    snprintf(body, sizeof body, "{\"fecha_inicio\":\"%s\"}", at);
    snprintf(path, sizeof path, "/api/citas/%s/reprogramar", cita);
    http_json(&S, "POST", path, ANA.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    expect_locals(&S, SERVICIO, mon, b, "09:30 09:45"); /* 10:15-10:45 now */
    free(other);
    free(cita);
    free(b);
}

static void notice_and_the_furthest_date_bound_the_offer_but_not_the_desks(void **state)
{
    (void)state;
    /* a server whose notice ends at 12:00 (local) three days from now */
    long day = today() + 3;
    int64_t noon_ms = utc_s_of(day, 12, 0) * 1000;
    char notice[64], env_days[64];
    snprintf(notice, sizeof notice, "BARBERIA_MIN_NOTICE_MIN=%lld",
             (long long)((noon_ms - clock_now_ms()) / 60000 + 1));
    snprintf(env_days, sizeof env_days, "BARBERIA_MAX_DAYS_AHEAD=%d", 10);
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", notice, env_days, NULL};
    struct fixture f;
    memset(&f, 0, sizeof f);
    fixture_start(&f, env, "Todos los días", "Corte", 30, 15);
    struct user admin;
    make_user(&f.s, &admin, "Admin", "admin");
    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", f.barbero);
    char body[1024];
    size_t len = (size_t)snprintf(body, sizeof body, "{\"horario\":[");
    for (int d = 1; d <= 7; d++)
        len += (size_t)snprintf(body + len, sizeof body - len,
                                "%s{\"dia\":%d,\"inicio\":\"11:00\",\"fin\":\"13:00\"}",
                                d > 1 ? "," : "", d);
    snprintf(body + len, sizeof body - len, "]}");
    struct resp r;
    http_json(&f.s, "PUT", path, admin.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    expect_locals(&f.s, f.servicio, day, NULL, "12:15 12:30");
    expect_locals(&f.s, f.servicio, day - 1, NULL, "");
    expect_locals(&f.s, f.servicio, today() - 1, NULL, "");
    const char *full = "11:00 11:15 11:30 11:45 12:00 12:15 12:30";
    expect_locals(&f.s, f.servicio, day + 1, NULL, full);
    expect_locals(&f.s, f.servicio, today() + 10, NULL, full);
    expect_locals(&f.s, f.servicio, today() + 11, NULL, "");
    /* the desk is offered what the notice holds back (not the clients' answer
     * just remembered), on the same dates; a client is refused */
    struct user barbero, cli;
    make_user(&f.s, &barbero, "Barbero", "barbero");
    signup_user(&f.s, &cli, "Cliente");
    expect_desk_locals(&f.s, barbero.token, f.servicio, day, full);
    expect_desk_locals(&f.s, admin.token, f.servicio, day - 1, full);
    expect_desk_locals(&f.s, admin.token, f.servicio, today() - 1, "");
    expect_desk_locals(&f.s, admin.token, f.servicio, today() + 11, "");
    expect_locals(&f.s, f.servicio, day, NULL, "12:15 12:30");
    char desk[300];
    snprintf(desk, sizeof desk, "/api/agenda/huecos?servicio_id=%s&fecha=2030-01-02", f.servicio);
    http_get(&f.s, desk, cli.token, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    http_get(&f.s, desk, NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    http_get(&f.s, "/api/agenda/huecos?fecha=2030-01-02", admin.token, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    fixture_stop(&f);
}

static void any_barber_lists_who_is_free_by_name(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", NULL};
    struct fixture f;
    memset(&f, 0, sizeof f);
    fixture_start(&f, env, "Beatriz", "Corte", 30, 15);
    char *alberto = make_barbero(&f.s, "Alberto");
    struct user admin, cli;
    make_user(&f.s, &admin, "Admin", "admin");
    signup_user(&f.s, &cli, "Cliente");
    long mon = next_weekday(1, 7);
    char at[32];
    utc_of(mon, 9, 0, at);
    free(book(&f.s, &cli, alberto, f.servicio, at, NULL));
    struct resp r;
    json_t *h = huecos(&f.s, f.servicio, mon, NULL, &r);
    assert_true(json_is_null(json_object_get(r.json, "barbero_id")));
    json_t *first = json_array_get(h, 0), *third = json_array_get(h, 2);
    assert_string_equal(jstr(first, "local"), "09:00");
    json_t *b0 = json_object_get(first, "barberos");
    assert_int_equal(json_array_size(b0), 1);
    assert_string_equal(json_string_value(json_array_get(b0, 0)), f.barbero);
    assert_string_equal(jstr(third, "local"), "09:30");
    json_t *b2 = json_object_get(third, "barberos");
    assert_int_equal(json_array_size(b2), 2);
    assert_string_equal(json_string_value(json_array_get(b2, 0)), alberto);
    assert_string_equal(json_string_value(json_array_get(b2, 1)), f.barbero);
    resp_free(&r);
    /* Beatriz off the catalog: 09:00 has nobody */
    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s", f.barbero);
    http_json(&f.s, "PATCH", path, admin.token, "{\"activo\":false}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    h = huecos(&f.s, f.servicio, mon, NULL, &r);
    assert_string_equal(jstr(json_array_get(h, 0), "local"), "09:30");
    resp_free(&r);
    free(alberto);
    fixture_stop(&f);
}

/* The next changeover day of the given month (3 or 10) at least 2 days ahead. */
static long next_changeover(int month)
{
    int y = civil(today()).y;
    while (last_sunday(y, month) < today() + 2)
        y++;
    return last_sunday(y, month);
}

static void utc_text(long long s, char out[32])
{
    struct ymd t = civil((long)(s / 86400));
    long sec = (long)(s % 86400);
    snprintf(out, 32, "%04d-%02d-%02dT%02ld:%02ld:00.000Z", t.y, t.m, t.d, sec / 3600,
             sec / 60 % 60);
}

static void expect_hueco(const json_t *h, size_t i, const char *local, long long utc_s)
{
    char want[32];
    utc_text(utc_s, want);
    json_t *e = json_array_get(h, i);
    assert_string_equal(jstr(e, "local"), local);
    assert_string_equal(jstr(e, "inicio"), want);
}

static void changeover_days_follow_the_zone(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Madrugador");
    put_horario(&S, b, "{\"horario\":[{\"dia\":7,\"inicio\":\"01:00\",\"fin\":\"05:00\"}]}");
    /* spring: 02:00-02:59 does not exist */
    long spring = next_changeover(3);
    long long base = (long long)spring * 86400; /* 00:00 UTC = 01:00 local (UTC+1) */
    expect_locals(&S, SERVICIO, spring, b,
                  "01:00 01:15 01:30 01:45 03:00 03:15 03:30 03:45 04:00 04:15 04:30");
    struct resp r;
    json_t *h = huecos(&S, SERVICIO, spring, b, &r);
    expect_hueco(h, 0, "01:00", base);
    expect_hueco(h, 3, "01:45", base + 45 * 60);
    expect_hueco(h, 4, "03:00", base + 3600); /* UTC+2 from here */
    expect_hueco(h, 10, "04:30", base + 2 * 3600 + 30 * 60);
    resp_free(&r);
    /* autumn: 02:00-02:59 happens twice; the first one is offered */
    long autumn = next_changeover(10);
    base = (long long)autumn * 86400; /* 00:00 UTC = 02:00 local (still UTC+2) */
    expect_locals(&S, SERVICIO, autumn, b,
                  "01:00 01:15 01:30 01:45 02:00 02:15 02:30 02:45 03:00 03:15 03:30 03:45 "
                  "04:00 04:15 04:30");
    h = huecos(&S, SERVICIO, autumn, b, &r);
    expect_hueco(h, 0, "01:00", base - 3600);
    expect_hueco(h, 4, "02:00", base);
    expect_hueco(h, 7, "02:45", base + 45 * 60);
    expect_hueco(h, 8, "03:00", base + 2 * 3600); /* UTC+1 from 01:00 UTC */
    expect_hueco(h, 14, "04:30", base + 3 * 3600 + 30 * 60);
    resp_free(&r);
    free(b);
}

/* The front desk reads the hours as the free slots do: on the spring day
 * an interval that starts or ends in the hour the clocks skip still holds
 * every slot offered, first and last (each booked at the desk). */
static void the_desk_books_the_first_and_last_slot_offered_on_the_spring_day(void **state)
{
    (void)state;
    static const char *const weeks[] = {
        "{\"horario\":[{\"dia\":7,\"inicio\":\"02:30\",\"fin\":\"05:00\"}]}",
        "{\"horario\":[{\"dia\":7,\"inicio\":\"00:00\",\"fin\":\"02:30\"}]}"};
    long spring = next_changeover(3);
    for (size_t w = 0; w < 2; w++) {
        char *b = make_barbero(&S, w ? "Trasnochador" : "Tempranero");
        put_horario(&S, b, weeks[w]);
        struct resp r;
        json_t *h = huecos(&S, SERVICIO, spring, b, &r);
        size_t n = json_array_size(h);
        assert_true(n >= 2);
        const char *pick[] = {jstr(json_array_get(h, 0), "inicio"),
                              jstr(json_array_get(h, n - 1), "inicio")};
        for (size_t i = 0; i < 2; i++) {
            char body[400];
            snprintf(body, sizeof body,
                     "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
                     "\"cliente_id\":\"%s\"}",
                     b, SERVICIO, pick[i], ANA.id);
            struct resp d;
            http_json(&S, "POST", "/api/agenda/citas", ADMIN.token, body, &d);
            if (d.status != 201) fail_msg("%s at %s: %ld %s", weeks[w], pick[i], d.status, d.body);
            resp_free(&d);
        }
        resp_free(&r);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_requests_are_refused),
        cmocka_unit_test(the_default_week_with_its_break_and_the_utc_times),
        cmocka_unit_test(the_grid_starts_at_each_interval_and_the_service_must_fit),
        cmocka_unit_test(days_off_and_closures_empty_the_day),
        cmocka_unit_test(appointments_block_their_slots_and_cancelled_ones_do_not),
        cmocka_unit_test(a_move_is_offered_the_time_its_own_appointment_holds),
        cmocka_unit_test(notice_and_the_furthest_date_bound_the_offer_but_not_the_desks),
        cmocka_unit_test(any_barber_lists_who_is_free_by_name),
        cmocka_unit_test(changeover_days_follow_the_zone),
        cmocka_unit_test(the_desk_books_the_first_and_last_slot_offered_on_the_spring_day),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
