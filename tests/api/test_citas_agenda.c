/*
 * test_citas_agenda.c - the appointments' slots and listing over HTTP
 * against the real server: the overlap rule, parallel clients racing for
 * one slot, and GET /api/citas (who sees which appointments, in which
 * order, with what embedded). Booking one is test_citas_alta.c's.
 */
#define _GNU_SOURCE
#include "citas_fixture.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- 6. overlap ----------------------------------------------------------------------- */

static void overlapping_slot_of_the_same_barber_is_409(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Solape");
    char *s60 = make_servicio(&F.s, "Largo 60", 60, 30);
    char *s10 = make_servicio(&F.s, "Corto 10", 10, 5);
    json_t *c = book_json(&U, barb, F.servicio, "2031-09-01T10:00:00Z", NULL); /* 10:00-10:30 */
    struct user other;
    signup_user(&F.s, &other, "Otro Cliente");
    /* same start, inside, straddling either end, enclosing; any client */
    book_expect(&U, barb, F.servicio, "2031-09-01T10:00:00Z", 409, TAKEN);
    book_expect(&other, barb, F.servicio, "2031-09-01T10:00:00Z", 409, TAKEN);
    book_expect(&U, barb, F.servicio, "2031-09-01T10:15:00Z", 409, TAKEN);
    book_expect(&U, barb, F.servicio, "2031-09-01T09:45:00Z", 409, TAKEN);
    book_expect(&U, barb, F.servicio, "2031-09-01T10:29:59.999Z", 409, TAKEN);
    book_expect(&U, barb, F.servicio, "2031-09-01T09:30:00.001Z", 409, TAKEN);
    book_expect(&U, barb, s60, "2031-09-01T09:45:00Z", 409, TAKEN);
    book_expect(&U, barb, s10, "2031-09-01T10:10:00Z", 409, TAKEN);
    /* the same instant written with an offset */
    book_expect(&U, barb, F.servicio, "2031-09-01T12:15:00+02:00", 409, TAKEN);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb), 1);
    json_decref(c);
    free(barb);
    free(s60);
    free(s10);
}

static void touching_slots_are_free_on_both_sides(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Contiguo");
    json_t *mid = book_json(&U, barb, F.servicio, "2031-09-02T10:00:00Z", NULL);
    json_t *before = book_json(&U, barb, F.servicio, "2031-09-02T09:30:00Z", NULL);
    json_t *after = book_json(&U, barb, F.servicio, "2031-09-02T10:30:00Z", NULL);
    assert_string_equal(jstr(before, "fecha_fin"), jstr(mid, "fecha_inicio"));
    assert_string_equal(jstr(after, "fecha_inicio"), jstr(mid, "fecha_fin"));
    /* with an offset too */
    json_t *after2 = book_json(&U, barb, F.servicio, "2031-09-02T13:00:00+02:00", NULL);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb), 4);
    json_decref(mid);
    json_decref(before);
    json_decref(after);
    json_decref(after2);
    free(barb);
}

static void another_barber_never_conflicts(void **state)
{
    (void)state;
    char *b1 = make_barbero(&F.s, "Barbero Uno");
    char *b2 = make_barbero(&F.s, "Barbero Dos");
    char *b3 = make_barbero(&F.s, "Barbero Tres");
    json_t *c1 = book_json(&U, b1, F.servicio, "2031-09-03T10:00:00Z", NULL);
    /* the same slot and an overlapping one, each with another barber */
    json_t *c2 = book_json(&U, b2, F.servicio, "2031-09-03T10:00:00Z", NULL);
    json_t *c3 = book_json(&U, b3, F.servicio, "2031-09-03T09:45:00Z", NULL);
    /* while the first barber stays taken */
    book_expect(&U, b1, F.servicio, "2031-09-03T09:45:00Z", 409, TAKEN);
    json_decref(c1);
    json_decref(c2);
    json_decref(c3);
    free(b1);
    free(b2);
    free(b3);
}

static void cancelled_cita_does_not_block_its_slot(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Cancelado");
    json_t *c = book_json(&U, barb, F.servicio, "2031-09-04T10:00:00Z", NULL);
    book_expect(&U, barb, F.servicio, "2031-09-04T10:00:00Z", 409, TAKEN);
    /* cancelled by someone else while serve runs */
    char *out = db_query(&F.s,
                         "UPDATE citas SET estado = 'cancelada' WHERE id = '%s'; "
                         "SELECT changes();",
                         jstr(c, "id"));
    assert_string_equal(out, "1");
    free(out);
    json_t *again = book_json(&U, barb, F.servicio, "2031-09-04T10:00:00Z", NULL);
    book_expect(&U, barb, F.servicio, "2031-09-04T10:15:00Z", 409, TAKEN);
    /* any other estado still blocks */
    out =
        db_query(&F.s, "UPDATE citas SET estado = 'completada' WHERE id = '%s'; SELECT changes();",
                 jstr(again, "id"));
    assert_string_equal(out, "1");
    free(out);
    book_expect(&U, barb, F.servicio, "2031-09-04T10:00:00Z", 409, TAKEN);
    out = db_query(&F.s, "UPDATE citas SET estado = 'Cancelada' WHERE id = '%s'; SELECT changes();",
                   jstr(again, "id"));
    free(out);
    book_expect(&U, barb, F.servicio, "2031-09-04T10:00:00Z", 409, TAKEN);
    json_decref(again);
    json_decref(c);
    free(barb);
}

/* --- GET /api/citas --------------------------------------------------------------------- */

static void get_without_session_is_401(void **state)
{
    (void)state;
    struct resp r;
    http_get(&F.s, "/api/citas", NULL, &r);
    expect_error(&r, 401, NO_AUTH);
    resp_free(&r);
    http_get(&F.s, "/api/citas?estado=confirmada", "garbage", &r);
    expect_error(&r, 401, NO_AUTH);
    resp_free(&r);
    struct req_opts o = {.cookie = "barberia_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"};
    http_req(&F.s, "GET", "/api/citas", &o, &r);
    expect_error(&r, 401, NO_AUTH);
    resp_free(&r);
}

static void client_sees_only_own_citas_by_start(void **state)
{
    (void)state;
    struct user a, b;
    signup_user(&F.s, &a, "Ana");
    signup_user(&F.s, &b, "Beto");
    char *barb = make_barbero(&F.s, "Barbero Listas");
    /* booked out of order; the offsets make the input text order differ from UTC order */
    json_t *a2 = book_json(&a, barb, F.servicio, "2031-10-02T10:00:00Z", NULL);
    json_t *b1 = book_json(&b, barb, F.servicio, "2031-10-01T12:00:00Z", NULL);
    json_t *a3 = book_json(&a, barb, F.servicio, "2031-10-02T13:00:00+02:00", NULL); /* 11:00Z */
    json_t *a1 = book_json(&a, barb, F.servicio, "2031-10-01T08:00:00Z", NULL);
    json_t *la = get_citas(a.token, NULL);
    assert_int_equal(json_array_size(la), 3);
    assert_string_equal(jstr(json_array_get(la, 0), "id"), jstr(a1, "id"));
    assert_string_equal(jstr(json_array_get(la, 1), "id"), jstr(a2, "id"));
    assert_string_equal(jstr(json_array_get(la, 2), "id"), jstr(a3, "id"));
    size_t i;
    json_t *e;
    json_array_foreach(la, i, e) assert_string_equal(jstr(e, "cliente_id"), a.id);
    json_t *lb = get_citas(b.token, NULL);
    assert_int_equal(json_array_size(lb), 1);
    assert_string_equal(jstr(json_array_get(lb, 0), "id"), jstr(b1, "id"));
    /* a client with no appointments gets an empty list */
    struct user c;
    signup_user(&F.s, &c, "Carla");
    json_t *lc = get_citas(c.token, NULL);
    assert_int_equal(json_array_size(lc), 0);
    json_decref(la);
    json_decref(lb);
    json_decref(lc);
    json_decref(a1);
    json_decref(a2);
    json_decref(a3);
    json_decref(b1);
    free(barb);
}

static void admin_and_barbero_roles_see_all_citas(void **state)
{
    (void)state;
    struct user a, b, admin, barbero, otro;
    signup_user(&F.s, &a, "Dario");
    signup_user(&F.s, &b, "Elena");
    make_user(&F.s, &admin, "Admin Citas", "admin");
    make_user(&F.s, &barbero, "Barbero Rol", "barbero");
    make_user(&F.s, &otro, "Rol Raro", "recepcion");
    char *barb = make_barbero(&F.s, "Barbero Todos");
    json_t *ca = book_json(&a, barb, F.servicio, "2031-10-05T10:00:00Z", NULL);
    json_t *cb = book_json(&b, barb, F.servicio, "2031-10-05T09:00:00Z", NULL);
    long total = db_count(&F.s, "SELECT count(*) FROM citas");
    const struct user *wide[] = {&admin, &barbero};
    for (int k = 0; k < 2; k++) {
        json_t *l = get_citas(wide[k]->token, NULL);
        assert_int_equal((long)json_array_size(l), total);
        assert_true(list_has(l, jstr(ca, "id")));
        assert_true(list_has(l, jstr(cb, "id")));
        assert_sorted_by_start(l);
        json_decref(l);
    }
    /* any other role is an ordinary client */
    json_t *l = get_citas(otro.token, NULL);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    json_decref(ca);
    json_decref(cb);
    free(barb);
}

static void estado_filter_is_exact_and_empty_means_none(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Filtro");
    char *barb = make_barbero(&F.s, "Barbero Filtro");
    json_t *c1 = book_json(&u, barb, F.servicio, "2031-10-10T10:00:00Z", NULL);
    json_t *c2 = book_json(&u, barb, F.servicio, "2031-10-10T11:00:00Z", NULL);
    json_t *c3 = book_json(&u, barb, F.servicio, "2031-10-10T12:00:00Z", NULL);
    char *out = db_query(&F.s,
                         "UPDATE citas SET estado = 'cancelada' WHERE id = '%s'; "
                         "SELECT changes();",
                         jstr(c2, "id"));
    assert_string_equal(out, "1");
    free(out);
    json_t *l = get_citas(u.token, "?estado=confirmada");
    assert_int_equal(json_array_size(l), 2);
    assert_string_equal(jstr(json_array_get(l, 0), "id"), jstr(c1, "id"));
    assert_string_equal(jstr(json_array_get(l, 1), "id"), jstr(c3, "id"));
    json_decref(l);
    l = get_citas(u.token, "?estado=cancelada");
    assert_int_equal(json_array_size(l), 1);
    assert_string_equal(jstr(json_array_get(l, 0), "id"), jstr(c2, "id"));
    assert_string_equal(jstr(json_array_get(l, 0), "estado"), "cancelada");
    json_decref(l);
    /* exact: no case folding, no prefixes, no trimming */
    const char *none[] = {"?estado=Confirmada", "?estado=confirm", "?estado=confirmada%20",
                          "?estado=xyz"};
    for (size_t i = 0; i < 4; i++) {
        l = get_citas(u.token, none[i]);
        assert_int_equal(json_array_size(l), 0);
        json_decref(l);
    }
    /* an empty estado is no filter */
    l = get_citas(u.token, "?estado=");
    assert_int_equal(json_array_size(l), 3);
    json_decref(l);
    l = get_citas(u.token, NULL);
    assert_int_equal(json_array_size(l), 3);
    json_decref(l);
    json_decref(c1);
    json_decref(c2);
    json_decref(c3);
    free(barb);
}

static void listed_citas_embed_perfil_barbero_and_servicio(void **state)
{
    (void)state;
    struct user u;
    signup_with(&u, "Fede Lista", "+34 600 111 222");
    char *out = NULL, *err = NULL;
    assert_int_equal(srv_cli(&F.s, &out, &err, "barbero", "add", "--nombre", "Barbero Foto",
                             "--foto-url", "https://img.example/b.jpg", NULL),
                     0);
    out[strcspn(out, "\n")] = '\0';
    char *barb = out;
    free(err);
    char *serv = make_servicio(&F.s, "Corte Lista", 45, 22.5);
    json_t *c = book_json(&u, barb, serv, "2031-11-01T10:00:00Z", "\"notas\":\"Nota lista\"");
    json_t *l = get_citas(u.token, NULL);
    assert_int_equal(json_array_size(l), 1);
    json_t *e = json_array_get(l, 0);
    expect_keys(e, "id", "cliente_id", "barbero_id", "servicio_id", "fecha_inicio", "fecha_fin",
                "estado", "notas", "google_event_id", "perfil", "barbero", "servicio", NULL);
    /* the appointment fields equal those of the creation answer */
    const char *same[] = {"id",           "cliente_id", "barbero_id", "servicio_id",
                          "fecha_inicio", "fecha_fin",  "estado",     "notas"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        assert_string_equal(jstr(e, same[i]), jstr(c, same[i]));
    assert_string_equal(jstr(e, "fecha_fin"), "2031-11-01T10:45:00.000Z");
    assert_true(json_is_null(json_object_get(e, "google_event_id")));
    json_t *p = json_object_get(e, "perfil");
    expect_keys(p, "nombre", "telefono", NULL);
    assert_string_equal(jstr(p, "nombre"), "Fede Lista");
    assert_string_equal(jstr(p, "telefono"), "+34 600 111 222");
    json_t *b = json_object_get(e, "barbero");
    expect_keys(b, "nombre", "foto_url", NULL);
    assert_string_equal(jstr(b, "nombre"), "Barbero Foto");
    assert_string_equal(jstr(b, "foto_url"), "https://img.example/b.jpg");
    json_t *s = json_object_get(e, "servicio");
    expect_keys(s, "nombre", "duracion_min", "precio", NULL);
    assert_string_equal(jstr(s, "nombre"), "Corte Lista");
    assert_true(json_is_integer(json_object_get(s, "duracion_min")));
    assert_int_equal(json_integer_value(json_object_get(s, "duracion_min")), 45);
    assert_true(json_is_number(json_object_get(s, "precio")));
    assert_true(json_number_value(json_object_get(s, "precio")) == 22.5);
    json_decref(l);
    json_decref(c);

    /* null telefono, null foto_url, a whole-number price */
    struct user v;
    signup_with(&v, "Sin Telefono", NULL);
    char *barb2 = make_barbero(&F.s, "Barbero Sin Foto");
    char *serv2 = make_servicio(&F.s, "Corte Entero", 20, 12);
    c = book_json(&v, barb2, serv2, "2031-11-02T10:00:00Z", NULL);
    l = get_citas(v.token, NULL);
    assert_int_equal(json_array_size(l), 1);
    e = json_array_get(l, 0);
    assert_true(json_is_null(json_object_get(e, "notas")));
    p = json_object_get(e, "perfil");
    expect_keys(p, "nombre", "telefono", NULL);
    assert_true(json_is_null(json_object_get(p, "telefono")));
    b = json_object_get(e, "barbero");
    expect_keys(b, "nombre", "foto_url", NULL);
    assert_true(json_is_null(json_object_get(b, "foto_url")));
    s = json_object_get(e, "servicio");
    assert_true(json_is_number(json_object_get(s, "precio")));
    assert_true(json_number_value(json_object_get(s, "precio")) == 12.0);
    assert_true(json_is_integer(json_object_get(s, "duracion_min")));
    assert_int_equal(json_integer_value(json_object_get(s, "duracion_min")), 20);
    json_decref(l);
    json_decref(c);
    free(barb);
    free(serv);
    free(barb2);
    free(serv2);
}

/* --- concurrency ------------------------------------------------------------------------ */

struct racer {
    const char *token;
    char *body;
    long status;     /* 0: the request failed (error says why) */
    char error[128]; /* the answer's body, or the transport failure */
};

/* One client of the race, from its own thread (race_threads: no cmocka). */
static void race(void *item)
{
    struct racer *x = item;
    struct req_opts o = {.token = x->token, .body = x->body};
    struct resp r;
    x->status = http_try(&F.s, "POST", "/api/citas", &o, &r);
    snprintf(x->error, sizeof x->error, "%s", r.body ? r.body : "");
    resp_free(&r);
}

#define RACERS 16

/* Runs n clients at once; each body books fechas[i] with the service. */
static void run_race(struct user *users, const char *barb, const char *serv,
                     const char *const *fechas, struct racer *x, int n)
{
    for (int i = 0; i < n; i++) {
        memset(&x[i], 0, sizeof x[i]);
        x[i].token = users[i].token;
        x[i].body = cita_body(barb, serv, fechas[i]);
    }
    race_threads((size_t)n, race, x, sizeof *x);
    for (int i = 0; i < n; i++) {
        free(x[i].body);
        if (x[i].status == 0) fail_msg("racer %d: %s", i, x[i].error);
    }
}

static struct user RU[RACERS];

static void make_racers(void)
{
    if (RU[0].token[0]) return;
    for (int i = 0; i < RACERS; i++)
        signup_user(&F.s, &RU[i], "Corredor");
}

static void parallel_clients_booking_one_slot_get_one_201(void **state)
{
    (void)state;
    make_racers();
    for (int round = 0; round < 5; round++) {
        char nombre[64];
        snprintf(nombre, sizeof nombre, "Barbero Carrera %d", round);
        char *barb = make_barbero(&F.s, nombre);
        const char *fechas[RACERS];
        for (int i = 0; i < RACERS; i++)
            fechas[i] = "2031-12-01T10:00:00Z";
        struct racer x[RACERS];
        run_race(RU, barb, F.servicio, fechas, x, RACERS);
        int created = 0, taken = 0;
        for (int i = 0; i < RACERS; i++) {
            if (x[i].status == 201) {
                created++;
            } else if (x[i].status == 409) {
                assert_string_equal(x[i].error, "{\"error\":\"" TAKEN "\"}");
                taken++;
            } else {
                fail_msg("racer %d: unexpected %ld %s", i, x[i].status, x[i].error);
            }
        }
        assert_int_equal(created, 1);
        assert_int_equal(taken, RACERS - 1);
        assert_int_equal(db_count(&F.s,
                                  "SELECT count(*) FROM citas WHERE barbero_id = '%s' AND "
                                  "fecha_inicio = '2031-12-01T10:00:00.000Z'",
                                  barb),
                         1);
        assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb),
                         1);
        assert_int_equal(
            db_count(&F.s, "SELECT count(*) FROM historial_cortes WHERE barbero_id = '%s'", barb),
            1);
        free(barb);
    }
}

static bool overlaps(int a_start, int a_len, int b_start, int b_len)
{
    return a_start < b_start + b_len && a_start + a_len > b_start;
}

static void parallel_overlapping_slots_leave_no_overlap(void **state)
{
    (void)state;
    make_racers();
    /* (a) six starts five minutes apart: all pairwise overlapping, one wins */
    {
        char *barb = make_barbero(&F.s, "Barbero Carrera Escalonada");
        static const char *const f6[] = {
            "2031-12-02T10:00:00Z",      "2031-12-02T10:05:00Z",      "2031-12-02T10:10:00Z",
            "2031-12-02T10:15:00Z",      "2031-12-02T10:20:00Z",      "2031-12-02T10:25:00Z",
            "2031-12-02T10:00:00Z",      "2031-12-02T10:05:00Z",      "2031-12-02T10:10:00Z",
            "2031-12-02T10:15:00Z",      "2031-12-02T10:20:00Z",      "2031-12-02T10:25:00Z",
            "2031-12-02T12:10:00+02:00", "2031-12-02T09:40:00-00:30", "2031-12-02T10:29:00Z",
            "2031-12-02T10:01:00Z",
        };
        struct racer x[RACERS];
        run_race(RU, barb, F.servicio, f6, x, RACERS);
        int created = 0;
        for (int i = 0; i < RACERS; i++) {
            if (x[i].status == 201)
                created++;
            else if (x[i].status != 409)
                fail_msg("racer %d: unexpected %ld %s", i, x[i].status, x[i].error);
        }
        assert_int_equal(created, 1);
        assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb),
                         1);
        free(barb);
    }
    /* (b) a chain of starts 15 minutes apart (30-minute service), two clients per
     * start: whatever the order, the stored set never overlaps and every
     * refusal faced a stored appointment */
    for (int round = 0; round < 3; round++) {
        char nombre[64];
        snprintf(nombre, sizeof nombre, "Barbero Carrera Cadena %d", round);
        char *barb = make_barbero(&F.s, nombre);
        char fbuf[RACERS][32];
        const char *f[RACERS];
        int start_min[RACERS];
        for (int i = 0; i < RACERS; i++) {
            start_min[i] = 600 + (i % 8) * 15;
            snprintf(fbuf[i], sizeof fbuf[i], "2031-12-03T%02d:%02d:00Z", start_min[i] / 60,
                     start_min[i] % 60);
            f[i] = fbuf[i];
        }
        struct racer x[RACERS];
        run_race(RU, barb, F.servicio, f, x, RACERS);
        int created = 0;
        bool won[RACERS] = {false};
        for (int i = 0; i < RACERS; i++) {
            if (x[i].status == 201) {
                created++;
                won[i] = true;
            } else if (x[i].status != 409) {
                fail_msg("racer %d: unexpected %ld %s", i, x[i].status, x[i].error);
            }
        }
        /* the winners are pairwise free of overlap */
        for (int i = 0; i < RACERS; i++)
            for (int j = i + 1; j < RACERS; j++)
                if (won[i] && won[j] && overlaps(start_min[i], 30, start_min[j], 30))
                    fail_msg("both %s and %s were booked", f[i], f[j]);
        /* every loser overlaps a winner */
        for (int i = 0; i < RACERS; i++) {
            if (won[i]) continue;
            bool blocked = false;
            for (int j = 0; j < RACERS; j++)
                if (won[j] && overlaps(start_min[i], 30, start_min[j], 30)) blocked = true;
            if (!blocked) fail_msg("%s was refused though nothing overlapped it", f[i]);
        }
        assert_true(created >= 3); /* a maximal set of the chain holds at least 3 */
        assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb),
                         created);
        assert_int_equal(
            db_count(&F.s,
                     "SELECT count(*) FROM citas a JOIN citas b ON a.id < b.id "
                     "AND a.barbero_id = b.barbero_id WHERE a.barbero_id = '%s' "
                     "AND a.fecha_inicio < b.fecha_fin AND a.fecha_fin > b.fecha_inicio",
                     barb),
            0);
        free(barb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(overlapping_slot_of_the_same_barber_is_409),
        cmocka_unit_test(touching_slots_are_free_on_both_sides),
        cmocka_unit_test(another_barber_never_conflicts),
        cmocka_unit_test(cancelled_cita_does_not_block_its_slot),
        cmocka_unit_test(get_without_session_is_401),
        cmocka_unit_test(client_sees_only_own_citas_by_start),
        cmocka_unit_test(admin_and_barbero_roles_see_all_citas),
        cmocka_unit_test(estado_filter_is_exact_and_empty_means_none),
        cmocka_unit_test(listed_citas_embed_perfil_barbero_and_servicio),
        cmocka_unit_test(parallel_clients_booking_one_slot_get_one_201),
        cmocka_unit_test(parallel_overlapping_slots_leave_no_overlap),
    };
    return cmocka_run_group_tests(tests, citas_group_setup, citas_group_teardown);
}
