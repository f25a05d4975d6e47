/*
 * test_cambios.c - POST /api/citas/{id}/cancelar and /reprogramar over HTTP against the real
 * server, with the Google Calendar double (tests/doubles/gcal_double.c) and the real SMTP sink
 * behind it: who may change which cita and until when, every error of the
 * contract, the answer's shape, the slot a cancel frees, the history
 * record, a race of reschedules and bookings for one slot (exactly one
 * wins), a closure's cancels that leave alone an appointment moved off its
 * day meanwhile, the event deleted or moved in the calendar, and the
 * e-mail of each change with its kind.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define UNKNOWN_ID   "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"
#define NO_CITA      "Cita no encontrada"
#define CANCELADA    "La cita está cancelada"
#define PLAZO        "Ya no se puede cambiar: faltan menos de 2 horas"
#define TAKEN        "El horario ya no está disponible"
#define WAIT_MAIL_MS 60000
#define ANA_NOMBRE   "Ana Pérez"
#define BARB_NOMBRE  "Carlos Méndez"
#define SERV_NOMBRE  "Corte clásico"
#define SERV_MIN     30

static struct srv S;
static struct smtp_sink K;
static struct gcal_dbl D;
static char *BARBERO, *SERVICIO;
static struct user ANA, BEA, BARB, ADMIN;

static int group_setup(void **state)
{
    (void)state;
    srv_init(&S);
    gcal_dbl_start(&D, S.dir);
    /* MIN_NOTICE: bookings a moment ahead must be possible wherever the
     * booking rules (minimum notice, horizon) apply */
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid",
                         "BARBERIA_SMTP_FROM=citas@barberia.test",
                         "BARBERIA_MIN_NOTICE_MIN=0",
                         D.env[0],
                         D.env[1],
                         D.env[2],
                         D.env[3],
                         NULL};
    srv_start_mailing(&S, &K, env);
    BARBERO = make_barbero(&S, BARB_NOMBRE);
    SERVICIO = make_servicio(&S, SERV_NOMBRE, SERV_MIN, 15.0);
    signup_user(&S, &ANA, ANA_NOMBRE);
    signup_user(&S, &BEA, "Bea Ruiz");
    make_user(&S, &BARB, "Barbero Uno", "barbero");
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    smtp_sink_stop(&K);
    gcal_dbl_stop(&D);
    free(BARBERO);
    free(SERVICIO);
    return 0;
}

static int reset_double(void **state)
{
    (void)state;
    gcal_dbl_control(&D, "reset=1");
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

/* A fresh slot every call, an hour apart from 2032-03-01 (no overlaps). */
static void next_slot(char out[ISO8601_LEN + 1])
{
    static int n;
    int64_t base = iso8601_days_from_civil(2032, 3, 1) * 86400000LL;
    iso8601_format(base + (int64_t)(n++) * 3600000LL, out);
}

/* now + minutes, canonical. */
static void from_now(int64_t minutes, char out[ISO8601_LEN + 1])
{
    iso8601_format(clock_now_ms() + minutes * 60000, out);
}

static void cambio(const struct user *u, const char *id, const char *accion, const char *body,
                   struct resp *r)
{
    char path[160];
    snprintf(path, sizeof path, "/api/citas/%s/%s", id, accion);
    http_json(&S, "POST", path, u ? u->token : NULL, body, r);
}

static void cambio_expect(const struct user *u, const char *id, const char *accion,
                          const char *body, long status, const char *msg)
{
    struct resp r;
    cambio(u, id, accion, body, &r);
    if (r.status != status) fprintf(stderr, "%s %s: %ld %s\n", accion, id, r.status, r.body);
    expect_error(&r, status, msg);
    resp_free(&r);
}

static char *fecha_body(const char *fecha)
{
    char *b = NULL;
    if (asprintf(&b, "{\"fecha_inicio\":\"%s\"}", fecha) < 0) fail_msg("asprintf");
    return b;
}

/* Changes and asserts 200; returns the answer's cita (caller decrefs). */
static json_t *cambio_ok(const struct user *u, const char *id, const char *accion,
                         const char *fecha)
{
    char *body = fecha ? fecha_body(fecha) : NULL;
    struct resp r;
    cambio(u, id, accion, body, &r);
    free(body);
    if (r.status != 200) fail_msg("%s %s: %ld %s", accion, id, r.status, r.body);
    json_t *c = json_incref(json_object_get(r.json, "cita"));
    resp_free(&r);
    assert_non_null(c);
    return c;
}

/* The cita as the owner's GET /api/citas lists it (caller decrefs). */
static json_t *listed(const struct user *u, const char *id)
{
    struct resp r;
    http_get(&S, "/api/citas", u->token, &r);
    assert_int_equal(r.status, 200);
    json_t *found = NULL;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r.json, "citas"), i, c)
    {
        if (!strcmp(jstr(c, "id"), id)) found = json_incref(c);
    }
    resp_free(&r);
    if (!found) fail_msg("cita %s is not listed", id);
    return found;
}

static long live_in_slot(const char *fecha)
{
    return db_count(&S,
                    "SELECT count(*) FROM citas WHERE barbero_id = '%s' AND estado <> 'cancelada' "
                    "AND fecha_inicio = '%s'",
                    BARBERO, fecha);
}

/* --- who ------------------------------------------------------------------------------ */

static void without_a_session_both_are_401(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    cambio_expect(NULL, id, "cancelar", NULL, 401, "No autenticado");
    cambio_expect(NULL, id, "reprogramar", "{\"fecha_inicio\":\"2033-01-01T10:00:00Z\"}", 401,
                  "No autenticado");
    /* the session before the body */
    cambio_expect(NULL, id, "reprogramar", "junk", 401, "No autenticado");
    cambio_expect(NULL, id, "cancelar", "junk", 401, "No autenticado");
    json_t *c = listed(&ANA, id);
    assert_string_equal(jstr(c, "estado"), "confirmada");
    json_decref(c);
    free(id);
}

/* The cita's id in the path is read as every id in a path is: a UUID in
 * either case names it; a segment that is not a UUID is a cita not found,
 * once the body has been judged; any other shape is no resource. */
static void the_path_names_the_cita_by_uuid_in_either_case(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char up[64];
    snprintf(up, sizeof up, "%s", id);
    for (char *c = up; *c; c++)
        if (*c >= 'a' && *c <= 'f') *c = (char)(*c - 'a' + 'A');
    /* the body first, whatever the id */
    cambio_expect(&ANA, "no-es-un-id", "reprogramar", "{}", 400, "Faltan campos requeridos");
    cambio_expect(&ANA, up, "reprogramar", "{}", 400, "Faltan campos requeridos");
    cambio_expect(&ANA, "no-es-un-id", "reprogramar", "junk", 400, "JSON inválido");
    cambio_expect(&ANA, "no-es-un-id", "cancelar", "junk", 404, NO_CITA);
    char more[64];
    snprintf(more, sizeof more, "%s0", id);
    cambio_expect(&ANA, more, "cancelar", NULL, 404, NO_CITA);
    /* other shapes are no resource, whatever the method */
    char path[200];
    const struct {
        const char *before, *after;
        bool with_id;
    } shapes[] = {
        {"/api/citas/", "/cancelar/", true},     {"/api/citas/", "/x/cancelar", true},
        {"/api/citas/", "/cancelar", false},     {"/api/citas/", "/reprogramar/", true},
        {"/api/citas/x/", "/reprogramar", true},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        snprintf(path, sizeof path, "%s%s%s", shapes[i].before, shapes[i].with_id ? id : "",
                 shapes[i].after);
        struct resp r;
        http_json(&S, "POST", path, ANA.token, NULL, &r);
        expect_error(&r, 404, "No encontrado");
        resp_free(&r);
        http_get(&S, path, ANA.token, &r);
        expect_error(&r, 404, "No encontrado");
        resp_free(&r);
    }
    /* and the capitals name the cita */
    struct resp r;
    cambio(&ANA, up, "cancelar", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "id"), id);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "estado"), "cancelada");
    resp_free(&r);
    free(id);
}

static void unknown_malformed_and_other_clients_citas_are_404_and_unchanged(void **state)
{
    (void)state;
    char f[32], g[32];
    next_slot(f);
    next_slot(g);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char *body = fecha_body(g);
    cambio_expect(&ANA, UNKNOWN_ID, "cancelar", NULL, 404, NO_CITA);
    cambio_expect(&ANA, "no-es-un-id", "cancelar", NULL, 404, NO_CITA);
    cambio_expect(&ANA, UNKNOWN_ID, "reprogramar", body, 404, NO_CITA);
    /* another client's: as if it did not exist */
    cambio_expect(&BEA, id, "cancelar", NULL, 404, NO_CITA);
    cambio_expect(&BEA, id, "reprogramar", body, 404, NO_CITA);
    /* no such action, no such path */
    cambio_expect(&ANA, id, "borrar", NULL, 404, "No encontrado");
    cambio_expect(&ANA, id, "", NULL, 404, "No encontrado");
    /* an unknown path under /api/citas/ is 404 whatever the method and the
     * caller (the contract); a known one with another method is 405 */
    cambio_expect(NULL, id, "borrar", NULL, 404, "No encontrado");
    struct resp r;
    char path[160];
    snprintf(path, sizeof path, "/api/citas/%s", id);
    http_get(&S, path, ANA.token, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    http_json(&S, "POST", path, NULL, NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", id);
    http_get(&S, path, ANA.token, &r);
    expect_error(&r, 405, "Método no permitido");
    char allow[64];
    assert_non_null(resp_header(&r, "Allow", allow, sizeof allow));
    assert_string_equal(allow, "POST");
    resp_free(&r);
    json_t *c = listed(&ANA, id);
    assert_string_equal(jstr(c, "estado"), "confirmada");
    assert_string_equal(jstr(c, "fecha_inicio"), f);
    json_decref(c);
    free(body);
    free(id);
}

static void client_cancels_her_own_cita_and_gets_the_listed_row(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, "sin prisa");
    assert_int_equal(db_count(&S, "SELECT count(*) FROM historial_cortes WHERE cita_id = '%s'", id),
                     1);
    json_t *c = cambio_ok(&ANA, id, "cancelar", NULL);
    /* the full row of GET /api/citas */
    json_t *l = listed(&ANA, id);
    assert_true(json_equal(c, l));
    assert_string_equal(jstr(c, "estado"), "cancelada");
    assert_string_equal(jstr(c, "fecha_inicio"), f);
    assert_string_equal(jstr(c, "notas"), "sin prisa");
    assert_string_equal(jstr(json_object_get(c, "perfil"), "nombre"), ANA_NOMBRE);
    assert_string_equal(jstr(json_object_get(c, "barbero"), "nombre"), BARB_NOMBRE);
    assert_string_equal(jstr(json_object_get(c, "servicio"), "nombre"), SERV_NOMBRE);
    json_decref(l);
    json_decref(c);
    /* no haircut, no history record */
    assert_int_equal(db_count(&S, "SELECT count(*) FROM historial_cortes WHERE cita_id = '%s'", id),
                     0);
    /* a cancelled cita stays cancelled */
    cambio_expect(&ANA, id, "cancelar", NULL, 409, CANCELADA);
    cambio_expect(&ADMIN, id, "cancelar", NULL, 409, CANCELADA);
    char g[32];
    next_slot(g);
    char *body = fecha_body(g);
    cambio_expect(&ANA, id, "reprogramar", body, 409, CANCELADA);
    free(body);
    /* cancelar takes no body: whatever is sent is ignored, not judged */
    cambio_expect(&ANA, id, "cancelar", "junk", 409, CANCELADA);
    cambio_expect(&ANA, id, "cancelar", "[]", 409, CANCELADA);
    /* but bounded, as every body */
    char *big = malloc(70 * 1024 + 1);
    assert_non_null(big);
    memset(big, 'x', 70 * 1024);
    big[70 * 1024] = '\0';
    cambio_expect(&ANA, id, "cancelar", big, 413, "Cuerpo demasiado grande");
    free(big);
    static const char *const ignored[] = {"{}", "junk", "[]"};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) {
        char h[32];
        next_slot(h);
        char *id2 = book(&S, &ANA, BARBERO, SERVICIO, h, NULL);
        struct resp r;
        cambio(&ANA, id2, "cancelar", ignored[i], &r);
        if (r.status != 200) fail_msg("cancelar with %s: %ld %s", ignored[i], r.status, r.body);
        assert_string_equal(jstr(json_object_get(r.json, "cita"), "estado"), "cancelada");
        resp_free(&r);
        json_t *row = listed(&ANA, id2);
        assert_string_equal(jstr(row, "estado"), "cancelada");
        json_decref(row);
        free(id2);
    }
    free(id);
}

static void a_cancel_frees_the_slot_for_another_booking(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    struct resp r;
    char body[256];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", BARBERO,
             SERVICIO, f);
    http_json(&S, "POST", "/api/citas", BEA.token, body, &r);
    expect_error(&r, 409, TAKEN);
    resp_free(&r);
    json_decref(cambio_ok(&ANA, id, "cancelar", NULL));
    char *id2 = book(&S, &BEA, BARBERO, SERVICIO, f, NULL);
    assert_int_equal(live_in_slot(f), 1);
    free(id2);
    free(id);
}

static void inside_the_cutoff_only_barbero_and_admin_may_change(void **state)
{
    (void)state;
    char f[32], soon[32], later[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    /* staff moves it to an hour from now: inside the client's 2 hours */
    from_now(60, soon);
    json_t *c = cambio_ok(&BARB, id, "reprogramar", soon);
    json_decref(c);
    from_now(90, later);
    char *body = fecha_body(later);
    cambio_expect(&ANA, id, "cancelar", NULL, 409, PLAZO);
    cambio_expect(&ANA, id, "reprogramar", body, 409, PLAZO);
    /* another client still learns nothing */
    cambio_expect(&BEA, id, "cancelar", NULL, 404, NO_CITA);
    c = listed(&ANA, id);
    assert_string_equal(jstr(c, "estado"), "confirmada");
    json_decref(c);
    /* staff: any time */
    c = cambio_ok(&ADMIN, id, "reprogramar", later);
    json_decref(c);
    c = cambio_ok(&BARB, id, "cancelar", NULL);
    assert_string_equal(jstr(c, "estado"), "cancelada");
    json_decref(c);
    free(body);
    free(id);
}

/* --- reschedule ---------------------------------------------------------------------- */

static void reschedule_errors_follow_the_contract(void **state)
{
    (void)state;
    char f[32], g[32];
    next_slot(f);
    next_slot(g);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char *other = book(&S, &BEA, BARBERO, SERVICIO, g, NULL);
    cambio_expect(&ANA, id, "reprogramar", NULL, 400, "Faltan campos requeridos");
    cambio_expect(&ANA, id, "reprogramar", "{}", 400, "Faltan campos requeridos");
    cambio_expect(&ANA, id, "reprogramar", "{\"fecha_inicio\":\"\"}", 400,
                  "Faltan campos requeridos");
    cambio_expect(&ANA, id, "reprogramar", "{\"fecha_inicio\":null}", 400,
                  "Faltan campos requeridos");
    cambio_expect(&ANA, id, "reprogramar", "{\"fecha_inicio\":\"mañana\"}", 400,
                  "fecha_inicio inválida");
    cambio_expect(&ANA, id, "reprogramar", "{\"fecha_inicio\":12}", 400, "fecha_inicio inválida");
    cambio_expect(&ANA, id, "reprogramar", "[1]", 400, "JSON inválido");
    cambio_expect(&ANA, id, "reprogramar", "junk", 400, "JSON inválido");
    cambio_expect(&ANA, id, "reprogramar", "[]", 400, "JSON inválido");
    cambio_expect(&ANA, id, "reprogramar", "{\"fecha_inicio\":\"2020-01-01T10:00:00Z\"}", 400,
                  "La fecha ya pasó");
    /* onto Bea's cita, or overlapping it by a minute */
    char *body = fecha_body(g);
    cambio_expect(&ANA, id, "reprogramar", body, 409, TAKEN);
    free(body);
    int64_t gms;
    assert_true(iso8601_parse(g, strlen(g), &gms));
    char near[32];
    iso8601_format(gms - (SERV_MIN - 1) * 60000LL, near);
    body = fecha_body(near);
    cambio_expect(&ANA, id, "reprogramar", body, 409, TAKEN);
    free(body);
    json_t *c = listed(&ANA, id);
    assert_string_equal(jstr(c, "fecha_inicio"), f);
    json_decref(c);
    free(other);
    free(id);
}

static void reschedule_moves_the_cita_its_end_and_its_history_and_frees_the_old_slot(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    /* a quarter of an hour later: overlapping only itself */
    int64_t ms;
    assert_true(iso8601_parse(f, strlen(f), &ms));
    char g[32], gend[32];
    iso8601_format(ms + 15 * 60000, g);
    iso8601_format(ms + (15 + SERV_MIN) * 60000, gend);
    json_t *c = cambio_ok(&ANA, id, "reprogramar", g);
    assert_string_equal(jstr(c, "fecha_inicio"), g);
    assert_string_equal(jstr(c, "fecha_fin"), gend);
    assert_string_equal(jstr(c, "estado"), "confirmada");
    json_t *l = listed(&ANA, id);
    assert_true(json_equal(c, l));
    json_decref(l);
    json_decref(c);
    /* a non-canonical time is stored canonically; a new day moves the
     * history record's fecha */
    c = cambio_ok(&ANA, id, "reprogramar", "2034-07-09T10:00:00+02:00");
    assert_string_equal(jstr(c, "fecha_inicio"), "2034-07-09T08:00:00.000Z");
    json_decref(c);
    char *fecha = db_query(&S, "SELECT fecha FROM historial_cortes WHERE cita_id = '%s'", id);
    assert_string_equal(fecha, "2034-07-09");
    free(fecha);
    /* the old slot is free again */
    char *id2 = book(&S, &BEA, BARBERO, SERVICIO, f, NULL);
    free(id2);
    free(id);
}

struct racer {
    const char *token;
    char path[160];
    char body[512];
    long status;
};

static void racer_run(void *item)
{
    struct racer *r = item;
    struct req_opts o = {.token = r->token, .body = r->body, .content_type = "application/json"};
    struct resp resp;
    r->status = http_try(&S, "POST", r->path, &o, &resp);
    resp_free(&resp);
}

static void reschedules_and_bookings_racing_for_one_slot_leave_exactly_one_winner(void **state)
{
    (void)state;
    enum { MOVERS = 8, BOOKERS = 4 };
    char target[32];
    next_slot(target);
    char *ids[MOVERS];
    struct racer rs[MOVERS + BOOKERS];
    for (int i = 0; i < MOVERS; i++) {
        char f[32];
        next_slot(f);
        ids[i] = book(&S, i % 2 ? &BEA : &ANA, BARBERO, SERVICIO, f, NULL);
        memset(&rs[i], 0, sizeof rs[i]);
        rs[i].token = i % 2 ? BEA.token : ANA.token;
        snprintf(rs[i].path, sizeof rs[i].path, "/api/citas/%s/reprogramar", ids[i]);
        snprintf(rs[i].body, sizeof rs[i].body, "{\"fecha_inicio\":\"%s\"}", target);
    }
    for (int i = MOVERS; i < MOVERS + BOOKERS; i++) {
        memset(&rs[i], 0, sizeof rs[i]);
        rs[i].token = ADMIN.token;
        snprintf(rs[i].path, sizeof rs[i].path, "/api/citas");
        snprintf(rs[i].body, sizeof rs[i].body,
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", BARBERO,
                 SERVICIO, target);
    }
    race_threads(MOVERS + BOOKERS, racer_run, rs, sizeof rs[0]);
    int won = 0, lost = 0;
    for (int i = 0; i < MOVERS + BOOKERS; i++) {
        if (rs[i].status == 200 || rs[i].status == 201)
            won++;
        else if (rs[i].status == 409)
            lost++;
        else
            fail_msg("racer %d: unexpected status %ld", i, rs[i].status);
    }
    assert_int_equal(won, 1);
    assert_int_equal(lost, MOVERS + BOOKERS - 1);
    assert_int_equal(live_in_slot(target), 1);
    for (int i = 0; i < MOVERS; i++)
        free(ids[i]);
}

/* A cancel racing reschedules of the same appointment cancels it where
 * the last of them put it, and its message names that time, not the one
 * it read before the others committed. */
static void a_cancel_racing_reschedules_names_the_time_it_cancelled(void **state)
{
    (void)state;
    enum { CITAS = 8, MOVES = 3, PER = MOVES + 1 };
    char *ids[CITAS];
    struct racer rs[CITAS * PER];
    for (int c = 0; c < CITAS; c++) {
        char f[32];
        next_slot(f);
        ids[c] = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
        for (int k = 0; k < PER; k++) {
            struct racer *r = &rs[c * PER + k];
            memset(r, 0, sizeof *r);
            r->token = ANA.token;
            if (k < MOVES) {
                char g[32];
                next_slot(g);
                snprintf(r->path, sizeof r->path, "/api/citas/%s/reprogramar", ids[c]);
                snprintf(r->body, sizeof r->body, "{\"fecha_inicio\":\"%s\"}", g);
            } else {
                snprintf(r->path, sizeof r->path, "/api/citas/%s/cancelar", ids[c]);
                snprintf(r->body, sizeof r->body, "{}");
            }
        }
    }
    race_threads(CITAS * PER, racer_run, rs, sizeof rs[0]);
    for (int c = 0; c < CITAS; c++) {
        char *estado = db_query(&S, "SELECT estado FROM citas WHERE id = '%s'", ids[c]);
        if (!strcmp(estado, "cancelada")) {
            char *at = db_query(&S, "SELECT fecha_inicio FROM citas WHERE id = '%s'", ids[c]);
            char *said = db_query(&S,
                                  "SELECT fecha_inicio FROM mail_outbox WHERE cita_id = '%s' AND "
                                  "kind = 'cancelacion'",
                                  ids[c]);
            if (strcmp(at, said) != 0)
                fail_msg("cita %s cancelled at %s, its message says %s", ids[c], at, said);
            free(at);
            free(said);
        }
        free(estado);
        free(ids[c]);
    }
}

/* --- a closure's cancels ---------------------------------------------------------------- */

static bool cancelled(void *id)
{
    char *estado = db_query(&S, "SELECT estado FROM citas WHERE id = '%s'", (const char *)id);
    bool yes = !strcmp(estado, "cancelada");
    free(estado);
    return yes;
}

/* A closure cancels what it meets as it cancels it: an appointment moved
 * off its dates while the earlier ones were being cancelled (each waits on
 * the calendar) is no longer its to cancel. */
static void a_closure_never_cancels_an_appointment_moved_off_its_day(void **state)
{
    (void)state;
    /* 10:00 and 11:00 in Madrid (CEST) on 2032-05-04; the move: the 5th */
    char *first = book(&S, &BEA, BARBERO, SERVICIO, "2032-05-04T08:00:00Z", NULL);
    char *moved = book(&S, &ANA, BARBERO, SERVICIO, "2032-05-04T09:00:00Z", NULL);
    char body[200];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"desde\":\"2032-05-04\",\"hasta\":\"2032-05-04\"}", BARBERO);
    struct resp r;
    http_json(&S, "POST", "/api/admin/ausencias", ADMIN.token, body, &r);
    assert_int_equal(r.status, 201);
    assert_int_equal(json_array_size(json_object_get(r.json, "afectadas")), 2);
    char path[160];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s/cancelar-citas",
             jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
    /* each cancel's calendar delete takes a while (the calendar's bound) */
    gcal_dbl_control(&D, "mode=hang&target=events");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct resp c;
        http_json(&S, "POST", path, ADMIN.token, "{}", &c);
        bool ok = c.status == 200 && json_array_size(json_object_get(c.json, "canceladas")) == 1;
        _exit(ok ? 0 : 1);
    }
    /* the first is cancelled, its event being deleted: she moves hers */
    if (!wait_until(cancelled, first, 30000)) fail_msg("the closure cancelled nothing");
    json_t *c = cambio_ok(&ANA, moved, "reprogramar", "2032-05-05T09:00:00Z");
    json_decref(c);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char *estado = db_query(&S, "SELECT estado FROM citas WHERE id = '%s'", moved);
    char *inicio = db_query(&S, "SELECT fecha_inicio FROM citas WHERE id = '%s'", moved);
    assert_string_equal(estado, "confirmada");
    assert_string_equal(inicio, "2032-05-05T09:00:00.000Z");
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND "
                              "kind = 'cierre'",
                              moved),
                     0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    free(estado);
    free(inicio);
    free(first);
    free(moved);
}

/* --- the calendar ---------------------------------------------------------------------- */

static const json_t *entry(const json_t *all, const char *method, const char *event_id)
{
    size_t i;
    const json_t *e;
    json_array_foreach(all, i, e)
    {
        const char *ev = jstr(e, "event_id");
        if (!strcmp(jstr(e, "method"), method) && ev && !strcmp(ev, event_id)) return e;
    }
    return NULL;
}

static void cancel_deletes_the_event_and_reschedule_patches_its_times(void **state)
{
    (void)state;
    char f[32], g[32], gend[32];
    next_slot(f);
    next_slot(g);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    json_t *c = listed(&ANA, id);
    char *event = strdup(jstr(c, "google_event_id"));
    json_decref(c);
    assert_non_null(event);

    size_t mark = gcal_dbl_mark(&D);
    c = cambio_ok(&ANA, id, "reprogramar", g);
    assert_string_equal(jstr(c, "google_event_id"), event);
    snprintf(gend, sizeof gend, "%s", jstr(c, "fecha_fin"));
    json_decref(c);
    json_t *all = gcal_dbl_since(&D, mark);
    const json_t *p = entry(all, "PATCH", event);
    if (!p) fail_msg("no events.patch of %s reached the double", event);
    assert_int_equal(json_integer_value(json_object_get(p, "status")), 200);
    assert_string_equal(jstr(p, "verdict"), "ok");
    json_t *sent = json_loads(jstr(p, "body"), 0, NULL);
    assert_string_equal(jstr(json_object_get(sent, "start"), "dateTime"), g);
    assert_string_equal(jstr(json_object_get(sent, "end"), "dateTime"), gend);
    json_decref(sent);
    json_decref(all);

    mark = gcal_dbl_mark(&D);
    json_decref(cambio_ok(&ANA, id, "cancelar", NULL));
    all = gcal_dbl_since(&D, mark);
    const json_t *d = entry(all, "DELETE", event);
    if (!d) fail_msg("no events.delete of %s reached the double", event);
    assert_int_equal(json_integer_value(json_object_get(d, "status")), 204);
    json_decref(all);
    free(event);
    free(id);
}

static void
a_failing_calendar_never_fails_the_change_and_a_reschedule_makes_a_missing_event(void **state)
{
    (void)state;
    char f[32], g[32], h[32];
    next_slot(f);
    next_slot(g);
    next_slot(h);
    /* booked while Google fails: no event */
    gcal_dbl_control(&D, "mode=500");
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    json_t *c = listed(&ANA, id);
    assert_true(json_is_null(json_object_get(c, "google_event_id")));
    json_decref(c);
    /* still failing: the reschedule is done, the calendar logged */
    c = cambio_ok(&ANA, id, "reprogramar", g);
    assert_true(json_is_null(json_object_get(c, "google_event_id")));
    json_decref(c);
    assert_true(srv_wait_log(&S, "no event for rescheduled cita", 10000));
    /* Google back: the next reschedule makes the event */
    gcal_dbl_control(&D, "reset=1");
    size_t mark = gcal_dbl_mark(&D);
    json_decref(cambio_ok(&ANA, id, "reprogramar", h));
    c = listed(&ANA, id);
    const char *event = jstr(c, "google_event_id");
    assert_non_null(event);
    json_t *all = gcal_dbl_since(&D, mark);
    size_t i, inserts = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        const char *issued = jstr(e, "issued_id");
        inserts += issued && !strcmp(issued, event);
    }
    assert_int_equal(inserts, 1);
    json_decref(all);
    /* Google failing the patch: the change stands, one log line */
    gcal_dbl_control(&D, "mode=500");
    char j[32];
    next_slot(j);
    json_decref(cambio_ok(&ADMIN, id, "reprogramar", j));
    assert_true(srv_wait_log(&S, "could not move the event of rescheduled cita", 10000));
    gcal_dbl_control(&D, "reset=1");
    json_decref(c);
    free(id);
}

/* Someone deleted the event in Google Calendar's own pages: the
 * reschedule finds it gone and makes the appointment a new one. */
static void a_reschedule_whose_event_was_deleted_in_the_calendar_makes_a_new_one(void **state)
{
    (void)state;
    char f[32], g[32];
    next_slot(f);
    next_slot(g);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    json_t *c = listed(&ANA, id);
    char *old = strdup(jstr(c, "google_event_id"));
    json_decref(c);
    char q[128];
    snprintf(q, sizeof q, "drop=%s", old);
    gcal_dbl_control(&D, q);
    size_t mark = gcal_dbl_mark(&D);
    json_decref(cambio_ok(&ANA, id, "reprogramar", g));
    c = listed(&ANA, id);
    const char *now = jstr(c, "google_event_id");
    assert_non_null(now);
    assert_string_not_equal(now, old);
    json_t *all = gcal_dbl_since(&D, mark);
    const json_t *p = entry(all, "PATCH", old);
    if (!p) fail_msg("no events.patch of %s reached the double", old);
    /* Google patches a deleted event, which stays deleted */
    assert_int_equal(json_integer_value(json_object_get(p, "status")), 200);
    size_t i, inserts = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        const char *issued = jstr(e, "issued_id");
        inserts += issued && !strcmp(issued, now);
    }
    assert_int_equal(inserts, 1);
    json_decref(all);
    json_decref(c);
    free(old);
    free(id);
}

/* A client deletes her account: her future appointments' events go, and
 * those of her past ones stop naming her (her name, e-mail and notes
 * leave Google too, as they leave the store). */
static void a_deleted_account_leaves_no_name_or_notes_in_the_calendar(void **state)
{
    (void)state;
    struct user carla;
    signup_user(&S, &carla, "Carla Pinto");
    char f[32], g[32];
    next_slot(f);
    next_slot(g);
    char *past = book(&S, &carla, BARBERO, SERVICIO, f, "alergia al tinte");
    char *future = book(&S, &carla, BARBERO, SERVICIO, g, NULL);
    char *past_event = db_query(&S, "SELECT google_event_id FROM citas WHERE id = '%s'", past);
    char *future_event = db_query(&S, "SELECT google_event_id FROM citas WHERE id = '%s'", future);
    assert_true(past_event && *past_event && future_event && *future_event);
    char sql[300];
    snprintf(sql, sizeof sql,
             "UPDATE citas SET fecha_inicio = '2020-01-07T10:00:00.000Z', fecha_fin = "
             "'2020-01-07T10:30:00.000Z' WHERE id = '%s'",
             past);
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    size_t mark = gcal_dbl_mark(&D);
    char *text = xasprintf("{\"password\": \"%s\"}", carla.password);
    struct resp r;
    http_json(&S, "DELETE", "/api/auth/me", carla.token, text, &r);
    free(text);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    json_t *all = gcal_dbl_since(&D, mark);
    const json_t *d = entry(all, "DELETE", future_event);
    if (!d) fail_msg("no events.delete of %s reached the double", future_event);
    const json_t *p = entry(all, "PATCH", past_event);
    if (!p) fail_msg("no events.patch of %s reached the double", past_event);
    assert_int_equal(json_integer_value(json_object_get(p, "status")), 200);
    const char *body = jstr(p, "body");
    if (strstr(body, "Carla") || strstr(body, "tinte") || strstr(body, carla.email))
        fail_msg("the rewritten event still names her: %s", body);
    json_t *sent = json_loads(body, 0, NULL);
    assert_non_null(strstr(jstr(sent, "summary"), "Cliente eliminado"));
    assert_int_equal(json_array_size(json_object_get(sent, "attendees")), 0);
    json_decref(sent);
    json_decref(all);
    free(past_event);
    free(future_event);
    free(past);
    free(future);
}

/* --- e-mail ------------------------------------------------------------------------------ */

static void each_change_mails_the_client_with_its_kind(void **state)
{
    (void)state;
    char f[32], g[32];
    next_slot(f);
    next_slot(g);
    /* a barber makes the changes: the client gets the mail */
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    json_decref(cambio_ok(&BARB, id, "reprogramar", g));
    json_decref(cambio_ok(&BARB, id, "cancelar", NULL));
    if (!smtp_sink_wait_messages(&K, NULL, id, 3, WAIT_MAIL_MS))
        fail_msg("three mails did not arrive");
    json_t *all = smtp_sink_messages(&K, NULL, id);
    assert_int_equal(json_array_size(all), 3);
    bool seen[3] = {false, false, false};
    long long seq_cambio = -1, seq_cancel = -1;
    size_t i;
    json_t *m;
    json_array_foreach(all, i, m)
    {
        json_t *problems = json_object_get(m, "problems");
        if (json_array_size(problems) > 0) fail_msg("a message breaks the rules");
        assert_string_equal(json_string_value(json_array_get(json_object_get(m, "rcpt_tos"), 0)),
                            ANA.email);
        const char *subject = jstr(m, "subject");
        const char *text = jstr(m, "text");
        if (strstr(subject, "Cita confirmada")) {
            seen[0] = true;
        } else if (strstr(subject, "Cita cambiada")) {
            seen[1] = true;
            assert_non_null(strstr(text, "ha cambiado de hora"));
            assert_string_equal(ics_value(m, "METHOD"), "PUBLISH");
            char dt[17];
            snprintf(dt, sizeof dt, "%.4s%.2s%.2sT%.2s%.2s%.2sZ", g, g + 5, g + 8, g + 11, g + 14,
                     g + 17);
            assert_string_equal(ics_value(m, "DTSTART"), dt);
            assert_string_not_equal(ics_value(m, "SEQUENCE"), "0");
            seq_cambio = strtoll(ics_value(m, "SEQUENCE"), NULL, 10);
        } else if (strstr(subject, "Cita cancelada")) {
            seen[2] = true;
            seq_cancel = strtoll(ics_value(m, "SEQUENCE"), NULL, 10);
            assert_non_null(strstr(text, "ha sido cancelada"));
            assert_string_equal(ics_value(m, "METHOD"), "CANCEL");
            assert_string_equal(ics_value(m, "STATUS"), "CANCELLED");
        } else {
            fail_msg("unexpected subject %s", subject);
        }
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    /* queued in that order, however close together: the later one's
     * SEQUENCE is higher, so a calendar keeps it */
    if (seq_cancel <= seq_cambio)
        fail_msg("SEQUENCE %lld of the cancellation is not above %lld of the change", seq_cancel,
                 seq_cambio);
    json_decref(all);
    /* the outbox names each kind */
    char *kinds = db_query(&S,
                           "SELECT kind FROM mail_outbox WHERE cita_id = '%s' AND status = 'sent' "
                           "ORDER BY kind",
                           id);
    assert_string_equal(kinds, "cancelacion\nconfirmacion\nreprogramacion");
    free(kinds);
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(without_a_session_both_are_401, reset_double),
        cmocka_unit_test_setup(unknown_malformed_and_other_clients_citas_are_404_and_unchanged,
                               reset_double),
        cmocka_unit_test_setup(the_path_names_the_cita_by_uuid_in_either_case, reset_double),
        cmocka_unit_test_setup(client_cancels_her_own_cita_and_gets_the_listed_row, reset_double),
        cmocka_unit_test_setup(a_cancel_frees_the_slot_for_another_booking, reset_double),
        cmocka_unit_test_setup(inside_the_cutoff_only_barbero_and_admin_may_change, reset_double),
        cmocka_unit_test_setup(reschedule_errors_follow_the_contract, reset_double),
        cmocka_unit_test_setup(
            reschedule_moves_the_cita_its_end_and_its_history_and_frees_the_old_slot, reset_double),
        cmocka_unit_test_setup(
            reschedules_and_bookings_racing_for_one_slot_leave_exactly_one_winner, reset_double),
        cmocka_unit_test_setup(a_cancel_racing_reschedules_names_the_time_it_cancelled,
                               reset_double),
        cmocka_unit_test_setup(a_closure_never_cancels_an_appointment_moved_off_its_day,
                               reset_double),
        cmocka_unit_test_setup(cancel_deletes_the_event_and_reschedule_patches_its_times,
                               reset_double),
        cmocka_unit_test_setup(
            a_failing_calendar_never_fails_the_change_and_a_reschedule_makes_a_missing_event,
            reset_double),
        cmocka_unit_test_setup(a_reschedule_whose_event_was_deleted_in_the_calendar_makes_a_new_one,
                               reset_double),
        cmocka_unit_test_setup(a_deleted_account_leaves_no_name_or_notes_in_the_calendar,
                               reset_double),
        cmocka_unit_test_setup(each_change_mails_the_client_with_its_kind, reset_double),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
