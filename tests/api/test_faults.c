/*
 * test_faults.c - faults of the service's dependencies, broken on purpose:
 * the database write-locked by another process (the sqlite3 tool in a
 * transaction, as an operator poking at the file would), and a mail server
 * that is slow or speaks garbage. For each: the answers are the
 * specification's (201, or 500 with the store's message) or a clear JSON
 * error, within a bound - never a hang; nothing half-done is stored or
 * lost; and the service recovers by itself once the dependency does.
 *
 * Elsewhere: a mail server that is down, then back (test_mail.c:
 * booking_is_answered_while_the_mail_server_is_down_and_mail_arrives_later),
 * and the calendar dead, slow or answering garbage (test_calendar_failures.c).
 *
 * Bounds only ever bound from above, with a wide margin, so a slow machine
 * makes the tests slower, never red.
 */
#include "harness.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 10000 /* how long a write waits for the lock (BARBERIA_DB_LOCK_WAIT_MS) */
#define MARGIN_MS       15000
#define WAIT_MAIL_MS    60000

static struct fixture F;
static struct smtp_sink K;

static int teardown(void **state)
{
    (void)state;
    smtp_sink_stop(&K);
    memset(&K, 0, sizeof K);
    fixture_stop(&F);
    return 0;
}

/* The answer is a clear JSON error: {"error": "<something>"} and nothing
 * else. */
static void expect_json_error(long status, const char *body, const json_t *j)
{
    if (!json_is_object(j) || json_object_size(j) != 1 || !jstr(j, "error") || !jstr(j, "error")[0])
        fail_msg("status %ld without a JSON error: %s", status, body);
}

/* --- the database locked by another process -------------------------------------------- */

struct booker {
    const struct srv *s;
    const char *token;
    char body[512];
    char fecha[32];
    long status;
    char answer[512];
    char cita_id[40];     /* on 201 */
    char retry_after[16]; /* the Retry-After header, "" when absent */
    int64_t elapsed_ms;
};

/* One booking from its own thread (race_threads: no cmocka here). */
static void booker_run(void *item)
{
    struct booker *b = item;
    struct req_opts o = {.token = b->token, .body = b->body};
    struct resp r;
    int64_t t0 = clock_mono_ms();
    b->status = http_try(b->s, "POST", "/api/citas", &o, &r);
    b->elapsed_ms = clock_mono_ms() - t0;
    snprintf(b->answer, sizeof b->answer, "%s", r.body ? r.body : "");
    if (!resp_header(&r, "Retry-After", b->retry_after, sizeof b->retry_after))
        b->retry_after[0] = '\0';
    const char *id = jstr(json_object_get(r.json, "cita"), "id");
    snprintf(b->cita_id, sizeof b->cita_id, "%s", id ? id : "");
    resp_free(&r);
}

static void booker_init(struct booker *b, const struct user *u, const char *fecha)
{
    memset(b, 0, sizeof *b);
    b->s = &F.s;
    b->token = u->token;
    snprintf(b->fecha, sizeof b->fecha, "%s", fecha);
    snprintf(b->body, sizeof b->body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", F.barbero,
             F.servicio, fecha);
}

/* Every cita has its one history record, and the history nothing else. */
static void expect_history_matches_citas(void)
{
    long citas = db_count(&F.s, "SELECT count(*) FROM citas");
    long matched = db_count(&F.s, "SELECT count(*) FROM citas c JOIN historial_cortes h ON "
                                  "h.cita_id = c.id AND h.cliente_id = c.cliente_id AND "
                                  "h.barbero_id = c.barbero_id AND h.servicio_id = c.servicio_id");
    long history = db_count(&F.s, "SELECT count(*) FROM historial_cortes");
    assert_int_equal(matched, citas);
    assert_int_equal(history, citas);
}

enum { LOCKED_BOOKERS = 4 };

static void
a_write_lock_held_past_the_busy_timeout_gives_store_errors_in_time_and_no_trace(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* the sqlite3 tool's write lock: nothing to take on PostgreSQL */
    fixture_start(&F, NULL, "Barbero Bloqueo", "Corte Bloqueo", 30, 10);
    struct user u[LOCKED_BOOKERS];
    for (int i = 0; i < LOCKED_BOOKERS; i++)
        signup_user(&F.s, &u[i], "Cliente Bloqueado");
    static const char *const fechas[LOCKED_BOOKERS] = {
        "2034-01-10T09:00:00Z", "2034-01-10T10:00:00Z", "2034-01-10T11:00:00Z",
        "2034-01-10T12:00:00Z"};
    /* the other process also writes a cita of its own, never committed */
    char sql[1024];
    snprintf(sql, sizeof sql,
             "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, "
             "fecha_fin, created_at) VALUES ('00000000-0000-4000-8000-000000000001', '%s', "
             "'%s', '%s', '2034-01-10T09:00:00.000Z', '2034-01-10T09:30:00.000Z', "
             "'2034-01-01T00:00:00.000Z');",
             u[0].id, F.barbero, F.servicio);
    /* a cita to attach a photo to while the lock is held */
    char *cita = book(&F.s, &u[0], F.barbero, F.servicio, "2034-01-11T09:00:00Z", NULL);
    struct db_locker lk;
    db_lock_take(&F.s, &lk, sql);

    /* reads go on beside the writer (WAL), and do not see its write */
    struct resp r;
    int64_t t0 = clock_mono_ms();
    http_get(&F.s, "/api/citas", u[0].token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "citas")), 1);
    resp_free(&r);
    expect_healthy(&F.s);
    if (clock_mono_ms() - t0 > MARGIN_MS) fail_msg("reads waited for the writer");

    /* writes wait for the lock, then give up with the store's message */
    struct booker b[LOCKED_BOOKERS];
    for (int i = 0; i < LOCKED_BOOKERS; i++)
        booker_init(&b[i], &u[i], fechas[i]);
    race_threads(LOCKED_BOOKERS, booker_run, b, sizeof *b);
    int store_errors = 0;
    for (int i = 0; i < LOCKED_BOOKERS; i++) {
        if (b[i].elapsed_ms > BUSY_TIMEOUT_MS + MARGIN_MS)
            fail_msg("booking %d took %lld ms with the database locked", i,
                     (long long)b[i].elapsed_ms);
        if (b[i].status != 500 && b[i].status != 503)
            fail_msg("booking %d under a foreign write lock: %ld %s", i, b[i].status, b[i].answer);
        json_t *j = json_loads(b[i].answer, 0, NULL);
        expect_json_error(b[i].status, b[i].answer, j);
        /* the specification's store failure: the store's own message */
        if (b[i].status == 500 && !strstr(jstr(j, "error"), "locked"))
            fail_msg("booking %d: not the store's message: %s", i, b[i].answer);
        /* or the service's own "try again": 503 with Retry-After */
        if (b[i].status == 503 && !b[i].retry_after[0])
            fail_msg("booking %d: 503 without Retry-After", i);
        store_errors += b[i].status == 500;
        json_decref(j);
    }
    /* a store failure is logged */
    if (store_errors) assert_true(srv_wait_log(&F.s, "storing cita", 10000));

    /* a photo whose record cannot be stored: a JSON error in time, and its
     * object is not left behind */
    static const char png[] = "\x89PNG\r\n\x1a\n(bloqueada)";
    const struct part parts[] = {
        {.name = "file",
         .data = png,
         .len = sizeof png - 1,
         .filename = "a.png",
         .type = "image/png"},
        {.name = "cita_id", .data = cita},
        {.name = "tipo", .data = "antes"},
    };
    t0 = clock_mono_ms();
    http_multipart(&F.s, "/api/fotos", u[0].token, parts, 3, &r);
    if (clock_mono_ms() - t0 > BUSY_TIMEOUT_MS + MARGIN_MS)
        fail_msg("the upload took %lld ms with the database locked",
                 (long long)(clock_mono_ms() - t0));
    if (r.status != 500 && r.status != 503)
        fail_msg("upload under a foreign write lock: %ld %s", r.status, r.body);
    expect_json_error(r.status, r.body, r.json);
    resp_free(&r);
    char bucket[400];
    snprintf(bucket, sizeof bucket, "%s/storage/fotos-citas", F.s.data);
    assert_int_equal(count_files(bucket), 0);

    /* the other process dies in its transaction: its write is undone, the
     * lock is free, and booking works again at once */
    db_lock_kill(&lk);
    expect_healthy(&F.s);
    for (int i = 0; i < LOCKED_BOOKERS; i++) {
        char *id = book(&F.s, &u[i], F.barbero, F.servicio, fechas[i], NULL);
        free(id);
    }
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas"), LOCKED_BOOKERS + 1);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM fotos_cita"), 0);
    /* and the photo can be attached now */
    http_multipart(&F.s, "/api/fotos", u[0].token, parts, 3, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    assert_int_equal(count_files(bucket), 1);
    free(cita);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE id = "
                                    "'00000000-0000-4000-8000-000000000001'"),
                     0);
    expect_history_matches_citas();
}

/* A short lock: the bookings made meanwhile wait for it and succeed. */
struct short_lock {
    struct booker b; /* a booking, or (releaser) nothing */
    struct db_locker *lk;
    int release_after_ms;
    int released; /* the tool's exit status */
};

static void short_lock_run(void *item)
{
    struct short_lock *x = item;
    if (x->lk) {
        sleep_ms(x->release_after_ms);
        x->released = db_lock_release(x->lk, false);
        return;
    }
    booker_run(&x->b);
}

enum { WAITERS = 3 };

static void bookings_made_during_a_short_write_lock_wait_for_it_and_are_stored_once(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* the sqlite3 tool's write lock: nothing to take on PostgreSQL */
    fixture_start(&F, NULL, "Barbero Espera", "Corte Espera", 30, 10);
    struct user u;
    signup_user(&F.s, &u, "Cliente Paciente");
    static const char *const fechas[WAITERS] = {"2034-02-10T09:00:00Z", "2034-02-10T10:00:00Z",
                                                "2034-02-10T09:15:00Z"}; /* overlaps the 1st */
    struct db_locker lk;
    db_lock_take(&F.s, &lk, NULL);
    struct short_lock x[WAITERS + 1];
    memset(x, 0, sizeof x);
    for (int i = 0; i < WAITERS; i++)
        booker_init(&x[i].b, &u, fechas[i]);
    x[WAITERS].lk = &lk;
    x[WAITERS].release_after_ms = 2000;
    race_threads(WAITERS + 1, short_lock_run, x, sizeof *x);
    assert_int_equal(x[WAITERS].released, 0);

    /* 201 for the two free slots; the overlapping pair: one 201, one 409 */
    int created = 0, taken = 0;
    for (int i = 0; i < WAITERS; i++) {
        struct booker *b = &x[i].b;
        if (b->elapsed_ms > BUSY_TIMEOUT_MS + MARGIN_MS)
            fail_msg("booking %d took %lld ms", i, (long long)b->elapsed_ms);
        if (b->status == 201) {
            created++;
            assert_int_equal(
                db_count(&F.s, "SELECT count(*) FROM citas WHERE id = '%s'", b->cita_id), 1);
        } else if (b->status == 409) {
            assert_string_equal(b->answer, "{\"error\":\"El horario ya no está disponible\"}");
            taken++;
        } else {
            fail_msg("booking %d: unexpected %ld %s", i, b->status, b->answer);
        }
    }
    assert_int_equal(x[1].b.status, 201);
    assert_int_equal(created, 2);
    assert_int_equal(taken, 1);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas"), 2);
    expect_history_matches_citas();
}

/* --- the mail server slow or speaking garbage ------------------------------------------- */

/* The outbox row of a cita: its attempts so far (-1: no row). */
static long outbox_attempts(const char *cita_id)
{
    char *v = db_query(&F.s,
                       "SELECT coalesce(max(attempts), -1) FROM mail_outbox "
                       "WHERE cita_id = '%s'",
                       cita_id);
    long n = strtol(v, NULL, 10);
    free(v);
    return n;
}

struct attempts_goal {
    const char *cita_id;
    long n;
};

static bool attempts_reached(void *ud)
{
    const struct attempts_goal *g = ud;
    return outbox_attempts(g->cita_id) >= g->n;
}

static bool outbox_sent(void *ud)
{
    char *st =
        db_query(&F.s, "SELECT status FROM mail_outbox WHERE cita_id = '%s'", (const char *)ud);
    bool sent = !strcmp(st, "sent");
    free(st);
    return sent;
}

/* Books as a new client and asserts the answer came at once. Returns the
 * cita id (caller frees). OUT: *u. */
static char *book_at_once(struct user *u, const char *fecha)
{
    signup_user(&F.s, u, "Cliente Correo");
    int64_t t0 = clock_mono_ms();
    char *id = book(&F.s, u, F.barbero, F.servicio, fecha, NULL);
    int64_t took = clock_mono_ms() - t0;
    if (took > 5000) fail_msg("the booking took %lld ms: it waited on mail", (long long)took);
    return id;
}

/* A mail server is back on port: the queued message arrives exactly once,
 * to u, naming the cita, and the outbox records it as sent. */
static void expect_delivered_once(int port, const struct user *u, const char *cita_id)
{
    smtp_sink_start(&K, F.s.dir, port, NULL);
    /* retries back off (1 s, 2 s, 4 s ...): the next one is within the
     * minute */
    if (!wait_until(outbox_sent, (void *)cita_id, WAIT_MAIL_MS)) {
        char *log = srv_log(&F.s);
        fail_msg("the queued message was not delivered; server log:\n%s", log);
    }
    char **paths;
    size_t n = smtp_sink_files(&K, &paths);
    assert_int_equal(n, 1);
    json_t *m = smtp_sink_message(paths[0]);
    smtp_sink_free_paths(paths, n);
    json_t *rcpt = json_object_get(m, "rcpt_tos");
    assert_int_equal(json_array_size(rcpt), 1);
    assert_string_equal(json_string_value(json_array_get(rcpt, 0)), u->email);
    if (!strstr(jstr(m, "text"), cita_id)) fail_msg("the message does not name the cita");
    json_decref(m);
    expect_healthy(&F.s);
}

static void
a_slow_mail_server_costs_no_booking_and_the_message_waits_for_a_working_one(void **state)
{
    (void)state;
    int port = 0;
    int hole = silent_listener(&port);
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", port);
    const char *env[] = {url, "BARBERIA_SMTP_TIMEOUT_MS=1500", "BARBERIA_SMTP_RETRY_FOR=3600",
                         NULL};
    fixture_start(&F, env, "Barbero Lento", "Corte Lento", 30, 10);
    struct user u;
    char *id = book_at_once(&u, "2034-03-10T09:00:00Z");
    /* an attempt ends at the bound, as a timeout, and is retried */
    struct attempts_goal g = {id, 2};
    if (!wait_until(attempts_reached, &g, WAIT_MAIL_MS)) {
        close(hole);
        fail_msg("the slow server was not retried; server log:\n%s", srv_log(&F.s));
    }
    assert_true(srv_wait_log(&F.s, "failed (attempt 1)", 10000));
    char *log = srv_log(&F.s);
    if (!strstr(log, "Timeout")) fail_msg("no timeout was logged:\n%s", log);
    free(log);
    /* bookings go on meanwhile */
    struct user v;
    free(book_at_once(&v, "2034-03-10T10:00:00Z"));
    close(hole);
    /* the second client's message is queued too: both arrive; the first is
     * checked */
    smtp_sink_start(&K, F.s.dir, port, NULL);
    assert_true(wait_until(outbox_sent, id, WAIT_MAIL_MS));
    assert_true(smtp_sink_wait(&K, 2, WAIT_MAIL_MS));
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM mail_outbox WHERE status <> 'sent'"), 0);
    assert_int_equal(smtp_sink_count(&K), 2);
    free(id);
}

/* A server that speaks garbage: each connection gets the next of these,
 * and then the connection is closed. */
static const char *const GARBAGE[] = {
    "HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>nope</html>\r\n",
    "\x16\x03\x01\x02\x01\x01\x02\x01\xfc\x03\x03 binary junk \xff\xfe\r\n",
    "220 sink.test ESMTP\r\nthis is not a reply\r\n\r\n",
};

struct garbage_server {
    int fd;
    pthread_t thread;
    atomic_int served;
    atomic_bool stop;
};

static void *garbage_run(void *arg)
{
    struct garbage_server *g = arg;
    while (!atomic_load(&g->stop)) {
        struct pollfd p = {g->fd, POLLIN, 0};
        if (poll(&p, 1, 50) != 1) continue;
        int c = accept(g->fd, NULL, NULL);
        if (c < 0) continue;
        int k = atomic_load(&g->served);
        const char *say = GARBAGE[k % (int)ARRAY_LEN(GARBAGE)];
        if (send(c, say, strlen(say), MSG_NOSIGNAL) < 0) {
            /* the client left first: counted all the same */
        }
        /* read what the client says for a moment, then hang up on it */
        char buf[512];
        struct pollfd q = {c, POLLIN, 0};
        while (poll(&q, 1, 300) == 1 && recv(c, buf, sizeof buf, 0) > 0)
            continue;
        /* hang up with a reset: no FIN_WAIT or TIME_WAIT is left on the port,
         * which a working server takes over afterwards */
        struct linger hard = {1, 0};
        setsockopt(c, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
        close(c);
        atomic_fetch_add(&g->served, 1);
    }
    return NULL;
}

static void a_mail_server_speaking_garbage_costs_no_booking_and_the_message_is_kept(void **state)
{
    (void)state;
    struct garbage_server g = {0};
    int port = 0;
    g.fd = silent_listener(&port);
    assert_int_equal(pthread_create(&g.thread, NULL, garbage_run, &g), 0);
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", port);
    const char *env[] = {url, "BARBERIA_SMTP_TIMEOUT_MS=3000", "BARBERIA_SMTP_RETRY_FOR=3600",
                         NULL};
    fixture_start(&F, env, "Barbero Basura", "Corte Basura", 30, 10);
    struct user u;
    char *id = book_at_once(&u, "2034-04-10T09:00:00Z");
    /* every kind of garbage was met once, each a failed attempt */
    struct attempts_goal goal = {id, (long)ARRAY_LEN(GARBAGE)};
    bool met = wait_until(attempts_reached, &goal, WAIT_MAIL_MS);
    atomic_store(&g.stop, true);
    pthread_join(g.thread, NULL);
    close(g.fd);
    if (!met) fail_msg("the garbage server was not retried; server log:\n%s", srv_log(&F.s));
    assert_true(atomic_load(&g.served) >= (int)ARRAY_LEN(GARBAGE));
    for (size_t i = 1; i <= ARRAY_LEN(GARBAGE); i++) {
        char want[64];
        snprintf(want, sizeof want, "failed (attempt %zu)", i);
        if (!srv_wait_log(&F.s, want, 10000))
            fail_msg("no log line for attempt %zu:\n%s", i, srv_log(&F.s));
    }
    char *state_now = db_query(&F.s, "SELECT status FROM mail_outbox WHERE cita_id = '%s'", id);
    assert_string_equal(state_now, "pending");
    free(state_now);
    expect_healthy(&F.s);
    /* a real mail server takes the port: delivered once */
    expect_delivered_once(port, &u, id);
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(
            a_write_lock_held_past_the_busy_timeout_gives_store_errors_in_time_and_no_trace,
            teardown),
        cmocka_unit_test_teardown(
            bookings_made_during_a_short_write_lock_wait_for_it_and_are_stored_once, teardown),
        cmocka_unit_test_teardown(
            a_slow_mail_server_costs_no_booking_and_the_message_waits_for_a_working_one, teardown),
        cmocka_unit_test_teardown(
            a_mail_server_speaking_garbage_costs_no_booking_and_the_message_is_kept, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
