/*
 * test_pg_indoubt.c - writes whose COMMIT reached PostgreSQL and whose
 * answer never came back. The server talks to its database through
 * tests/tools/pgproxy.py, which relays a chosen COMMIT and closes the
 * server's connection before the answer: the service asks PostgreSQL on
 * another connection how the transaction ended and goes on as it says. An
 * upload that committed answers 201 and its URL serves the photo; a
 * booking 201 with its calendar event kept; a deletion 200 with its object
 * gone. When the outcome cannot be learnt (the proxy then refuses every
 * new connection) the answer is 503 with Retry-After and nothing is
 * undone: the photo the server did store is listed and served once the
 * database is reachable again. An intent a request could neither finish
 * nor disown is finished by a sweep once older than any request can run.
 * PostgreSQL runs only.
 */
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PGPROXY BARBERIA_TESTS_DIR "/tools/pgproxy.py"
#define PNG     "\x89PNG\r\n\x1a\nindoubt"

static struct srv S;
static struct gcal_dbl D;
static pid_t proxy_pid;
static char control[300], proxy_out[320];
static char db_direct[256]; /* the database's own URL (S.dburl goes through the proxy) */
static char *BARBERO, *SERVICIO;
static struct user ANA;

/* Starts the proxy in front of the cluster of S.dburl; S.dburl then
 * names the same database through it. */
static void proxy_start(void)
{
    snprintf(control, sizeof control, "%s/proxy", S.dir);
    snprintf(proxy_out, sizeof proxy_out, "%s/proxy.out", S.dir);
    if (mkdir(control, 0700) != 0) fail_msg("mkdir %s", control);
    /* postgresql://user@host:port/name */
    snprintf(db_direct, sizeof db_direct, "%s", S.dburl);
    char *at = strrchr(db_direct, '@'), *slash = at ? strchr(at, '/') : NULL;
    char *colon = at ? strchr(at, ':') : NULL;
    if (!at || !slash || !colon || colon > slash) fail_msg("unexpected URL %s", db_direct);
    char host[64], port[16];
    snprintf(host, sizeof host, "%.*s", (int)(colon - at - 1), at + 1);
    snprintf(port, sizeof port, "%.*s", (int)(slash - colon - 1), colon + 1);
    int fd = open(proxy_out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char errpath[320];
    snprintf(errpath, sizeof errpath, "%s/proxy.err", S.dir);
    int efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0 && efd >= 0);
    pid_t p = fork();
    if (p == 0) {
        dup2(fd, 1);
        dup2(efd, 2);
        execl("/usr/bin/python3", "python3", PGPROXY, host, port, control, (char *)NULL);
        _exit(127);
    }
    close(fd);
    close(efd);
    assert_true(p > 0);
    proxy_pid = p;
    int listen_port = 0;
    for (int waited = 0; waited < 30000 && !listen_port; waited += 20) {
        char *text = read_file(proxy_out, NULL);
        const char *pp = text ? strstr(text, "port ") : NULL;
        if (pp && strchr(pp, '\n')) listen_port = (int)strtol(pp + 5, NULL, 10);
        free(text);
        if (!listen_port) sleep_ms(20);
    }
    if (!listen_port) fail_msg("pgproxy did not print its port");
    snprintf(S.dburl, sizeof S.dburl, "%.*s:%d%s", (int)(colon - db_direct), db_direct, listen_port,
             slash);
}

static void proxy_stop(void)
{
    if (proxy_pid > 0) {
        kill(proxy_pid, SIGTERM);
        waitpid(proxy_pid, NULL, 0);
    }
    proxy_pid = 0;
}

/* The next COMMIT of a transaction that ran a statement holding match is
 * relayed and its answer lost; with refuse, no new connection is let
 * through afterwards until proxy_accept(). */
static void proxy_arm(const char *match, bool refuse)
{
    char path[340], text[200];
    snprintf(path, sizeof path, "%s/arm", control);
    snprintf(text, sizeof text, "match=%s\n%s", match, refuse ? "refuse\n" : "");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool proxy_fired(void)
{
    char path[340];
    snprintf(path, sizeof path, "%s/arm", control);
    return !file_exists(path);
}

static void proxy_accept(void)
{
    char path[340];
    snprintf(path, sizeof path, "%s/refusing", control);
    unlink(path);
}

static int group_setup(void **state)
{
    (void)state;
    if (!test_pg()) return 0;
    srv_init(&S);
    gcal_dbl_start(&D, S.dir);
    proxy_start();
    /* a lost COMMIT's outcome is asked about for the statement bound
     * (the lock bound plus 2 s): 3 s here */
    const char *env[] = {"BARBERIA_MIN_NOTICE_MIN=0",
                         "BARBERIA_DB_LOCK_WAIT_MS=1000",
                         D.env[0],
                         D.env[1],
                         D.env[2],
                         D.env[3],
                         NULL};
    srv_start(&S, env, NULL);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_user(&S, &ANA, "Ana López");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (!test_pg()) return 0;
    proxy_accept();
    srv_stop(&S);
    proxy_stop();
    snprintf(S.dburl, sizeof S.dburl, "%s", db_direct); /* dropped directly */
    srv_cleanup(&S);
    gcal_dbl_stop(&D);
    free(BARBERO);
    free(SERVICIO);
    return 0;
}

static char *new_cita(int hour)
{
    char fecha[48];
    snprintf(fecha, sizeof fecha, "2033-03-%02dT%02d:00:00.000Z", 1 + hour / 24, hour % 24);
    return book(&S, &ANA, BARBERO, SERVICIO, fecha, NULL);
}

static long upload(const char *cita, struct resp *r)
{
    struct part parts[] = {{"file", PNG, sizeof PNG - 1, "foto.png", "image/png"},
                           {"cita_id", cita, 0, NULL, NULL},
                           {"tipo", "antes", 0, NULL, NULL}};
    return http_multipart_try(&S, "/api/fotos", ANA.token, parts, 3, r);
}

static void an_upload_whose_commit_answer_is_lost_answers_201_and_serves_its_photo(void **state)
{
    (void)state;
    if (!test_pg()) skip();
    char *cita = new_cita(10);
    proxy_arm("INSERT INTO fotos_cita", false);
    struct resp r;
    upload(cita, &r);
    assert_true(proxy_fired());
    if (r.status != 201) fail_msg("upload: %ld %s", r.status, r.body);
    assert_true(srv_wait_log(&S, "was lost; it committed", 1000));
    json_t *foto = json_object_get(r.json, "foto");
    char *path = photo_path(foto);
    assert_true(obj_exists(&S, jstr(foto, "storage_path")));
    struct resp g;
    http_get(&S, path, NULL, &g);
    assert_int_equal(g.status, 200);
    assert_int_equal(g.len, sizeof PNG - 1);
    resp_free(&g);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita), 1);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM obj_intents"), 0);
    free(path);
    resp_free(&r);
    free(cita);
}

static void a_booking_whose_commit_answer_is_lost_answers_201_and_keeps_its_event(void **state)
{
    (void)state;
    if (!test_pg()) skip();
    size_t mark = gcal_dbl_mark(&D);
    proxy_arm("INSERT INTO citas", false);
    char body[256];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":"
             "\"2033-03-10T09:00:00.000Z\"}",
             BARBERO, SERVICIO);
    struct resp r;
    http_json(&S, "POST", "/api/citas", ANA.token, body, &r);
    assert_true(proxy_fired());
    if (r.status != 201) fail_msg("booking: %ld %s", r.status, r.body);
    json_t *cita = json_object_get(r.json, "cita");
    const char *event = jstr(cita, "google_event_id");
    assert_non_null(event);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM citas WHERE id = '%s' AND "
                              "google_event_id = '%s'",
                              jstr(cita, "id"), event),
                     1);
    /* the event was made and never deleted */
    json_t *log = gcal_dbl_since(&D, mark);
    size_t i, made = 0;
    json_t *e;
    json_array_foreach(log, i, e)
    {
        assert_string_not_equal(jstr(e, "method"), "DELETE");
        made += !strcmp(jstr(e, "method"), "POST") && strstr(jstr(e, "uri"), "/events");
    }
    assert_int_equal(made, 1);
    json_decref(log);
    resp_free(&r);
}

static void a_delete_whose_commit_answer_is_lost_answers_200_and_its_object_goes(void **state)
{
    (void)state;
    if (!test_pg()) skip();
    char *cita = new_cita(12);
    json_t *foto = upload_photo(&S, &ANA, cita, "antes", PNG, sizeof PNG - 1);
    const char *key = jstr(foto, "storage_path");
    assert_true(obj_exists(&S, key));
    proxy_arm("DELETE FROM fotos_cita", false);
    char path[200];
    snprintf(path, sizeof path, "/api/fotos?id=%s", jstr(foto, "id"));
    struct req_opts o = {.token = ANA.token};
    struct resp r;
    http_req(&S, "DELETE", path, &o, &r);
    assert_true(proxy_fired());
    if (r.status != 200) fail_msg("delete: %ld %s", r.status, r.body);
    assert_false(obj_exists(&S, key));
    assert_int_equal(db_count(&S, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM obj_intents"), 0);
    resp_free(&r);
    json_decref(foto);
    free(cita);
}

static void an_upload_whose_outcome_cannot_be_learnt_answers_503_and_undoes_nothing(void **state)
{
    (void)state;
    if (!test_pg()) skip();
    char *cita = new_cita(14);
    proxy_arm("INSERT INTO fotos_cita", true);
    struct resp r;
    upload(cita, &r);
    assert_true(proxy_fired());
    if (r.status != 503) fail_msg("upload: %ld %s", r.status, r.body);
    char ra[16];
    assert_non_null(resp_header(&r, "Retry-After", ra, sizeof ra));
    resp_free(&r);
    proxy_accept();
    /* the server committed it: listed, and its URL serves it */
    char q[200];
    snprintf(q, sizeof q, "/api/fotos?cita_id=%s", cita);
    struct resp l;
    http_get(&S, q, ANA.token, &l);
    assert_int_equal(l.status, 200);
    json_t *fotos = json_object_get(l.json, "fotos");
    assert_int_equal(json_array_size(fotos), 1);
    char *path = photo_path(json_array_get(fotos, 0));
    struct resp g;
    http_get(&S, path, NULL, &g);
    assert_int_equal(g.status, 200);
    resp_free(&g);
    free(path);
    resp_free(&l);
    free(cita);
    assert_true(srv_wait_log(&S, "its outcome is unknown", 1000));
}

struct gone {
    const char *key;
};

static bool object_gone(void *ud)
{
    return !obj_exists(&S, ((struct gone *)ud)->key);
}

/* An intent a request could neither finish nor disown stays this live
 * process's: once older than any request can run, a sweep finishes it; a
 * young one is left alone. */
static void an_own_intent_older_than_any_request_is_finished_by_a_sweep(void **state)
{
    (void)state;
    if (!test_pg()) skip();
    char *cita = new_cita(16);
    json_t *old = upload_photo(&S, &ANA, cita, "antes", PNG, sizeof PNG - 1);
    json_t *young = upload_photo(&S, &ANA, cita, "despues", PNG, sizeof PNG - 1);
    const char *ko = jstr(old, "storage_path"), *ky = jstr(young, "storage_path");
    /* their records gone, each object left under a delete intent of the
     * server's own, one made an hour ago, one now */
    char sql[2048];
    snprintf(sql, sizeof sql,
             "DELETE FROM fotos_cita WHERE cita_id = '%s';"
             "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
             "SELECT gen_random_uuid(), 'fotos-citas', '%s', 'delete', node, pid, instance, "
             "now() - interval '1 hour' FROM proc_leases;"
             "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
             "SELECT gen_random_uuid(), 'fotos-citas', '%s', 'delete', node, pid, instance, "
             "now() FROM proc_leases;",
             cita, ko, ky);
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM obj_intents"), 2);
    struct gone g = {ko};
    assert_true(wait_until(object_gone, &g, 10000));
    assert_true(srv_wait_log(&S, "outlived every request", 1000));
    sleep_ms(1000); /* a few more passes */
    assert_true(obj_exists(&S, ky));
    assert_int_equal(db_count(&S, "SELECT count(*) FROM obj_intents WHERE key = '%s'", ky), 1);
    snprintf(sql, sizeof sql, "DELETE FROM obj_intents WHERE key = '%s';", ky);
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    json_decref(old);
    json_decref(young);
    free(cita);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_upload_whose_commit_answer_is_lost_answers_201_and_serves_its_photo),
        cmocka_unit_test(a_booking_whose_commit_answer_is_lost_answers_201_and_keeps_its_event),
        cmocka_unit_test(a_delete_whose_commit_answer_is_lost_answers_200_and_its_object_goes),
        cmocka_unit_test(an_upload_whose_outcome_cannot_be_learnt_answers_503_and_undoes_nothing),
        cmocka_unit_test(an_own_intent_older_than_any_request_is_finished_by_a_sweep),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
