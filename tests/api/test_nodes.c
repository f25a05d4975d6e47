/*
 * test_nodes.c - two `barberia serve` nodes on one database and one object
 * store, as behind a load balancer: any node answers any request.
 *
 * Clients race for the same slots through both nodes (exactly one 201 per
 * slot); a session opened on one node works on the other, and a logout on
 * one ends it on both at once; a photo uploaded through one node is served
 * and deleted through the other; with both nodes delivering the outbox,
 * each confirmation is sent exactly once. Runs on SQLite (two processes on
 * one file) and on PostgreSQL (api-pg/test_nodes), with the photos in the
 * S3 test server when there is one (else in the shared folder).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fixture F; /* node A, with the barber and the service */
static struct srv B;     /* node B, on A's data */
static struct smtp_sink K;

static int setup(void **state)
{
    (void)state;
    srv_init(&F.s);
    smtp_sink_start(&K, F.s.dir, 0, NULL);
    static char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    static const char *env[5];
    size_t n = 0;
    env[n++] = url;
    /* with an S3 test server, the photos live there, shared by both */
    test_s3_env(env, &n);
    env[n] = NULL;
    fixture_start(&F, env, "Barbero Nodos", "Corte Nodos", 30, 12.0);
    srv_init_peer(&B, &F.s);
    srv_start(&B, env, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    srv_cleanup(&B);
    smtp_sink_stop(&K);
    fixture_stop(&F);
    return 0;
}

static const struct srv *node(int i)
{
    return i % 2 ? &B : &F.s;
}

/* --- one slot, many clients, two nodes ------------------------------------------------ */

enum { SLOTS = 6, RACERS = 8 };

struct racer {
    const struct srv *s;
    const char *token;
    char body[512];
    long status;
    char cita[40];
};

static void race_book(void *item)
{
    struct racer *r = item;
    struct req_opts o = {.token = r->token, .content_type = "application/json", .body = r->body};
    struct resp res;
    r->status = http_try(r->s, "POST", "/api/citas", &o, &res);
    const char *id = jstr(json_object_get(res.json, "cita"), "id");
    if (r->status == 201 && id) snprintf(r->cita, sizeof r->cita, "%s", id);
    resp_free(&res);
}

static void a_slot_is_booked_once_whatever_node_each_client_uses(void **state)
{
    (void)state;
    struct user users[RACERS];
    for (int i = 0; i < RACERS; i++)
        signup_user(node(i), &users[i], "Corredor");
    for (int slot = 0; slot < SLOTS; slot++) {
        struct racer rs[RACERS];
        char fecha[32];
        snprintf(fecha, sizeof fecha, "2032-03-%02dT10:%02d:00.000Z", 1 + slot, slot % 2 ? 15 : 0);
        for (int i = 0; i < RACERS; i++) {
            rs[i] = (struct racer){.s = node(i), .token = users[i].token};
            snprintf(rs[i].body, sizeof rs[i].body,
                     "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}",
                     F.barbero, F.servicio, fecha);
        }
        race_threads(RACERS, race_book, rs, sizeof rs[0]);
        int won = 0;
        for (int i = 0; i < RACERS; i++) {
            if (rs[i].status == 201)
                won++;
            else if (rs[i].status != 409)
                fail_msg("slot %d racer %d: status %ld", slot, i, rs[i].status);
        }
        assert_int_equal(won, 1);
        if (test_pg() && slot == 0) {
            /* and the schema refuses an overlap whoever writes it */
            char *out = NULL;
            char sql[768];
            snprintf(sql, sizeof sql,
                     "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, "
                     "fecha_fin, estado, created_at) VALUES (gen_random_uuid(), '%s', '%s', '%s', "
                     "'%s'::timestamptz + interval '10 minutes', '%s'::timestamptz + interval "
                     "'40 minutes', 'confirmada', now())",
                     users[0].id, F.barbero, F.servicio, fecha, fecha);
            assert_int_not_equal(db_exec(&F.s, sql, &out), 0);
            free(out);
        }
        assert_int_equal(db_count(&F.s,
                                  "SELECT count(*) FROM citas WHERE barbero_id = '%s' AND "
                                  "fecha_inicio = '%s'",
                                  F.barbero, fecha),
                         1);
    }
}

/* --- sessions --------------------------------------------------------------------------- */

static void a_session_opened_on_one_node_works_on_the_other_and_ends_on_both(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Viajera");
    struct resp r;
    http_get(&B, "/api/auth/me", u.token, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), u.id);
    resp_free(&r);
    /* a booking through B, listed through A */
    char *cita = book(&B, &u, F.barbero, F.servicio, "2032-04-01T09:00:00.000Z", NULL);
    http_get(&F.s, "/api/citas", u.token, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "citas"), 0), "id"), cita);
    resp_free(&r);
    free(cita);
    /* logout on B: A refuses the token at once */
    http_json(&B, "POST", "/api/auth/logout", u.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_get(&F.s, "/api/auth/me", u.token, &r);
    assert_int_equal(r.status, 401);
    resp_free(&r);
}

/* --- photos ----------------------------------------------------------------------------- */

static void a_photo_uploaded_through_one_node_is_served_and_deleted_through_the_other(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Fotos");
    char *cita = book(&F.s, &u, F.barbero, F.servicio, "2032-05-01T09:00:00.000Z", NULL);
    char img[256];
    for (size_t i = 0; i < sizeof img; i++)
        img[i] = (char)(i * 13 + 1);
    json_t *foto = upload_photo(&F.s, &u, cita, "antes", img, sizeof img);
    char id[40];
    snprintf(id, sizeof id, "%s", jstr(foto, "id"));
    char *path = photo_path(foto);
    json_decref(foto);
    struct resp r;

    http_get(&B, path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, sizeof img);
    assert_memory_equal(r.body, img, sizeof img);
    resp_free(&r);

    char q[128];
    snprintf(q, sizeof q, "/api/fotos?id=%s", id);
    struct req_opts o = {.token = u.token};
    http_req(&B, "DELETE", q, &o, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_get(&F.s, path, NULL, &r);
    assert_int_equal(r.status, 404);
    resp_free(&r);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita),
                     0);
    free(path);
    free(cita);
}

/* --- the outbox ------------------------------------------------------------------------- */

static bool all_sent(void *ud)
{
    (void)ud;
    return db_count(&F.s, "SELECT count(*) FROM mail_outbox WHERE status <> 'sent'") == 0;
}

static void each_confirmation_is_sent_once_with_both_nodes_delivering(void **state)
{
    (void)state;
    enum { N = 12 };
    struct user u;
    signup_user(&F.s, &u, "Correo");
    size_t before = smtp_sink_count(&K);
    long queued_before = db_count(&F.s, "SELECT count(*) FROM mail_outbox");
    for (int i = 0; i < N; i++) {
        char fecha[32];
        snprintf(fecha, sizeof fecha, "2032-06-%02dT11:00:00.000Z", 1 + i);
        free(book(node(i), &u, F.barbero, F.servicio, fecha, NULL));
    }
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM mail_outbox") - queued_before, N);
    assert_true(smtp_sink_wait(&K, before + N, 60000));
    assert_true(wait_until(all_sent, NULL, 60000));
    sleep_ms(1500); /* a second delivery would come now */
    assert_int_equal(smtp_sink_count(&K), before + N);
    /* each message once: one file per outbox row */
    char **paths = NULL;
    size_t n = smtp_sink_files(&K, &paths);
    assert_int_equal(n, before + N);
    smtp_sink_free_paths(paths, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_slot_is_booked_once_whatever_node_each_client_uses),
        cmocka_unit_test(a_session_opened_on_one_node_works_on_the_other_and_ends_on_both),
        cmocka_unit_test(a_photo_uploaded_through_one_node_is_served_and_deleted_through_the_other),
        cmocka_unit_test(each_confirmation_is_sent_once_with_both_nodes_delivering),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
