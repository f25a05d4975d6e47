/*
 * test_quota.c - what one client may keep, over HTTP: the photo quota
 * (BARBERIA_PHOTO_QUOTA_BYTES) and the cap on upcoming appointments
 * (BARBERIA_MAX_UPCOMING_CITAS).
 *
 * The specification does not check a photo's tipo, so without a quota one
 * client could store without bound by varying it. Past the quota an upload
 * answers 400 "Cuota de fotos superada" and stores nothing (no record, no
 * object); every error of the specification still answers first; a deleted
 * photo frees its share; sizes count in whole 4 KiB, so tiny photos are
 * bounded too; racing uploads of one client never pass it. Past the cap a
 * booking answers 400 "Máximo de citas pendientes alcanzado" and stores
 * nothing; the specification's errors (400, 404, 409) still come first; a
 * cancelled or past appointment does not count; racing bookings of one
 * client at the cap give exactly the cap; by default there is no cap.
 */
#include "harness.h"

extern char **environ;

#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK        4096
#define QUOTA        (10 * BLOCK) /* the server's photo quota: ten blocks */
#define CAP          3            /* the server's cap on upcoming appointments */
#define CUOTA        "Cuota de fotos superada"
#define TOPE         "Máximo de citas pendientes alcanzado"
#define NO_SUCH_UUID "3f8e2a51-4b7c-4d2e-9a10-5c6b7d8e9f01"

static struct fixture F;
/* (a lock wait long enough for every racer to queue behind a held row) */
static const char *const quota_env[] = {"BARBERIA_PHOTO_QUOTA_BYTES=40960",
                                        "BARBERIA_MAX_UPCOMING_CITAS=3",
                                        "BARBERIA_DB_LOCK_WAIT_MS=60000", NULL};

/* --- helpers ---------------------------------------------------------------------- */

/* A free future start: each call its own hour of its own day, never
 * overlapping another. */
static void next_slot(char *out, size_t n)
{
    static int k;
    int i = k++;
    snprintf(out, n, "2032-%02d-%02dT%02d:00:00.000Z", 1 + (i / 200) % 12, 1 + (i / 10) % 20,
             8 + i % 10);
}

/* A start long past, each call its own: such an appointment is no longer
 * upcoming, so a client may have any number. */
static void past_slot(char *out, size_t n)
{
    static int k;
    int i = k++;
    snprintf(out, n, "2022-%02d-%02dT%02d:00:00.000Z", 1 + (i / 200) % 12, 1 + (i / 10) % 20,
             8 + i % 10);
}

static char *new_cita(const struct user *u)
{
    char when[40];
    next_slot(when, sizeof when);
    return book(&F.s, u, F.barbero, F.servicio, when, NULL);
}

/* len bytes of a photo (the values vary with seed). Caller frees. */
static char *photo_bytes(size_t len, unsigned seed)
{
    char *b = malloc(len ? len : 1);
    assert_non_null(b);
    for (size_t i = 0; i < len; i++)
        b[i] = (char)(i * 7 + seed);
    return b;
}

static void upload(const struct user *u, const char *cita, const char *tipo, const char *type,
                   const char *data, size_t len, struct resp *r)
{
    struct part parts[3];
    size_t n = 0;
    if (data) parts[n++] = (struct part){"file", data, len, "f.png", type};
    if (cita) parts[n++] = (struct part){"cita_id", cita, 0, NULL, NULL};
    if (tipo) parts[n++] = (struct part){"tipo", tipo, 0, NULL, NULL};
    http_multipart(&F.s, "/api/fotos", u ? u->token : NULL, parts, n, r);
}

/* Uploads len bytes as tipo and expects status (and, unless NULL, the
 * error msg). Returns the photo's id on 201 (caller frees), else NULL. */
static char *upload_expect(const struct user *u, const char *cita, const char *tipo, size_t len,
                           long status, const char *msg)
{
    char *data = photo_bytes(len, (unsigned)len);
    struct resp r;
    upload(u, cita, tipo, "image/png", data, len, &r);
    free(data);
    char *id = NULL;
    if (status == 201) {
        if (r.status != 201)
            fail_msg("upload of %zu bytes: expected 201, got %ld: %s", len, r.status, r.body);
        id = strdup(jstr(json_object_get(r.json, "foto"), "id"));
    } else {
        expect_error(&r, status, msg);
    }
    resp_free(&r);
    return id;
}

/* The uploader's photo records of the cita, and her objects under it. */
static long records_of(const struct user *u, const char *cita)
{
    return db_count(&F.s,
                    "SELECT count(*) FROM fotos_cita WHERE cliente_id = '%s' AND cita_id = '%s'",
                    u->id, cita);
}

static size_t objects_of(const struct user *u, const char *cita)
{
    char prefix[200];
    snprintf(prefix, sizeof prefix, "%s/%s", u->id, cita);
    return obj_count(&F.s, prefix);
}

/* How many of the cita's listed photos the user uploaded. */
static size_t listed_photos(const struct user *u, const char *cita)
{
    char path[200];
    snprintf(path, sizeof path, "/api/fotos?cita_id=%s", cita);
    struct resp r;
    http_get(&F.s, path, u->token, &r);
    assert_int_equal(r.status, 200);
    size_t n = 0, i;
    json_t *f;
    json_array_foreach(json_object_get(r.json, "fotos"), i, f) n +=
        !strcmp(jstr(f, "cliente_id"), u->id);
    resp_free(&r);
    return n;
}

/* The photos stored are exactly those the API lists: a refused upload left
 * no object behind, nor anything in the folder store's scratch folder. */
static void expect_stored(const struct user *u, const char *cita, long n)
{
    assert_int_equal(records_of(u, cita), n);
    assert_int_equal(listed_photos(u, cita), n);
    assert_int_equal(objects_of(u, cita), n);
    if (!F.s.s3) {
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s/storage/.tmp", F.s.data);
        assert_int_equal(count_files(tmp), 0);
    }
}

static void delete_photo(const struct user *u, const char *id)
{
    char path[120];
    snprintf(path, sizeof path, "/api/fotos?id=%s", id);
    struct resp r;
    http_req(&F.s, "DELETE", path, &(struct req_opts){.token = u->token}, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

/* POST /api/citas with a body of the given fields (NULL: left out). */
static void book_try(const struct srv *s, const struct user *u, const char *barbero,
                     const char *servicio, const char *when, struct resp *r)
{
    json_t *b = json_object();
    if (barbero) json_object_set_new(b, "barbero_id", json_string(barbero));
    if (servicio) json_object_set_new(b, "servicio_id", json_string(servicio));
    if (when) json_object_set_new(b, "fecha_inicio", json_string(when));
    char *body = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    http_json(s, "POST", "/api/citas", u ? u->token : NULL, body, r);
    free(body);
}

static long citas_of(const struct srv *s, const struct user *u)
{
    return db_count(s, "SELECT count(*) FROM citas WHERE cliente_id = '%s'", u->id);
}

/* --- setup -------------------------------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    fixture_start(&F, quota_env, "Barbero Cuota", "Corte Cuota", 30, 12.5);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_stop(&F);
    return 0;
}

/* --- the photo quota ------------------------------------------------------------------ */

static void uploads_under_ever_new_tipos_stop_at_the_quota_and_store_nothing_more(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Ulises");
    char *cita = new_cita(&u);
    /* four photos of two blocks each, every one of its own tipo */
    char *ids[5];
    for (int i = 0; i < 4; i++) {
        char tipo[16];
        snprintf(tipo, sizeof tipo, "tipo-%d", i);
        ids[i] = upload_expect(&u, cita, tipo, 2 * BLOCK, 201, NULL);
    }
    /* 8 blocks used: one of three blocks would pass the quota */
    free(upload_expect(&u, cita, "tipo-x", 2 * BLOCK + 1, 400, CUOTA));
    expect_stored(&u, cita, 4);
    /* one of two reaches it exactly: allowed */
    ids[4] = upload_expect(&u, cita, "tipo-4", 2 * BLOCK, 201, NULL);
    /* full: even a single byte counts one block */
    for (int i = 0; i < 5; i++) {
        char tipo[16];
        snprintf(tipo, sizeof tipo, "otro-%d", i);
        free(upload_expect(&u, cita, tipo, 1, 400, CUOTA));
    }
    expect_stored(&u, cita, 5);
    /* the quota is the uploader's: another cita is no way round it */
    char *other = new_cita(&u);
    free(upload_expect(&u, other, "antes", 1, 400, CUOTA));
    expect_stored(&u, other, 0);
    /* and another client is not concerned */
    struct user v;
    signup_user(&F.s, &v, "Vera");
    free(upload_expect(&v, cita, "antes", 2 * BLOCK, 201, NULL));
    for (int i = 0; i < 5; i++)
        free(ids[i]);
    free(other);
    free(cita);
}

static void tiny_photos_count_whole_blocks(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Tina");
    char *cita = new_cita(&u);
    for (int i = 0; i < QUOTA / BLOCK; i++) {
        char tipo[16];
        snprintf(tipo, sizeof tipo, "t%d", i);
        free(upload_expect(&u, cita, tipo, 1 + (size_t)i, 201, NULL));
    }
    free(upload_expect(&u, cita, "uno-mas", 1, 400, CUOTA));
    expect_stored(&u, cita, QUOTA / BLOCK);
    free(cita);
}

static void the_specifications_errors_answer_before_the_quota(void **state)
{
    (void)state;
    struct user u, w;
    signup_user(&F.s, &u, "Llena");
    signup_user(&F.s, &w, "Otra");
    char *cita = new_cita(&u);
    /* the quota used up */
    free(upload_expect(&u, cita, "todo", (size_t)QUOTA, 201, NULL));
    free(upload_expect(&u, cita, "despues", 1, 400, CUOTA));
    /* a tipo of another cita already full (three photos of another uploader) */
    char *full = new_cita(&w);
    for (int i = 0; i < 3; i++)
        free(upload_expect(&w, full, "antes", 10, 201, NULL));

    struct resp r;
    char *data = photo_bytes(5 * 1024 * 1024 + 1, 9);
    upload(NULL, cita, "x", "image/png", data, 10, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    upload(&u, cita, NULL, "image/png", data, 10, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    upload(&u, cita, "x", "image/png", data, 5 * 1024 * 1024 + 1, &r);
    expect_error(&r, 400, "Máximo 5MB por imagen");
    resp_free(&r);
    upload(&u, cita, "x", "text/plain", data, 10, &r);
    expect_error(&r, 400, "Solo se permiten imágenes");
    resp_free(&r);
    upload(&u, NO_SUCH_UUID, "x", "image/png", data, 10, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    upload(&u, full, "antes", "image/png", data, 10, &r);
    expect_error(&r, 400, "Máximo 3 fotos por tipo");
    resp_free(&r);
    free(data);
    expect_stored(&u, cita, 1);
    expect_stored(&u, full, 0);
    free(full);
    free(cita);
}

static void deleting_a_photo_frees_its_share(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Dora");
    char *cita = new_cita(&u);
    char *a = upload_expect(&u, cita, "a", 6 * BLOCK, 201, NULL);
    char *b = upload_expect(&u, cita, "b", 4 * BLOCK, 201, NULL);
    free(upload_expect(&u, cita, "c", 3 * BLOCK, 400, CUOTA));
    delete_photo(&u, a);
    free(upload_expect(&u, cita, "c", 3 * BLOCK, 201, NULL));
    free(upload_expect(&u, cita, "d", 3 * BLOCK, 201, NULL));
    free(upload_expect(&u, cita, "e", 1, 400, CUOTA));
    expect_stored(&u, cita, 3);
    free(a);
    free(b);
    free(cita);
}

/* --- racers ------------------------------------------------------------------------------
 * On SQLite the writers take turns anyway: racers that passed the first
 * check all at once are counted again, one after the other, in their
 * transactions. On PostgreSQL transactions run side by side, and only the
 * per-client lock makes them take turns. To make the race certain there,
 * another session holds the client's auth_users row while the racers run:
 * every insert (a photo record, an appointment, both referring to her)
 * waits for it inside its transaction, after that transaction's count.
 * Once every racer waits, the row is let go. Without the per-client lock
 * every racer would have counted before any committed; with it, one waits
 * on the row and the others on the lock. */

enum { RACERS = 12 };

struct row_holder {
    pid_t pid;
    int in; /* psql's stdin */
    pthread_t releaser;
    int waited; /* racers seen waiting at the release */
};

static void send_all(int fd, const char *text)
{
    for (size_t len = strlen(text); len;) {
        ssize_t k = write(fd, text, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        text += k;
        len -= (size_t)k;
    }
}

static bool marker_present(void *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Sessions of the server's database waiting for a lock, or -1. */
static int lock_waiters(void)
{
    char *out = NULL;
    int rc = db_exec(&F.s,
                     "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                     "AND wait_event_type = 'Lock'",
                     &out);
    int n = rc == 0 && out ? (int)strtol(out, NULL, 10) : -1;
    free(out);
    return n;
}

static bool all_racers_wait(void *ud)
{
    struct row_holder *h = ud;
    h->waited = lock_waiters();
    return h->waited >= RACERS;
}

/* The releaser (no cmocka: a thread of its own): once every racer waits,
 * or after a minute, ends the holder's transaction. */
static void *release_when_all_wait(void *ud)
{
    struct row_holder *h = ud;
    wait_until(all_racers_wait, h, 60000);
    send_all(h->in, "ROLLBACK;\n\\q\n");
    close(h->in);
    h->in = -1;
    return NULL;
}

/* On PostgreSQL: holds u's auth_users row (FOR UPDATE) and starts the
 * releaser; elsewhere nothing. */
static void hold_row_of(const struct user *u, struct row_holder *h)
{
    memset(h, 0, sizeof *h);
    h->in = -1;
    if (!F.s.dburl[0]) return;
    char marker[400];
    snprintf(marker, sizeof marker, "%s/row-held-%s", F.s.dir, u->id);
    int pfd[2];
    if (pipe(pfd) != 0) fail_msg("pipe: %s", strerror(errno));
    /* posix_spawn, not fork: this process has threads (an earlier race's),
     * and a forked child could block on a lock one of them held (the
     * sanitizers' allocator) before it ever ran psql */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[0], 0);
    posix_spawn_file_actions_addclose(&fa, pfd[1]);
    char *const argv[] = {"psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", F.s.dburl, NULL};
    pid_t pid;
    int err = posix_spawnp(&pid, "psql", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[0]);
    if (err) fail_msg("posix_spawnp psql: %s", strerror(err));
    h->pid = pid;
    h->in = pfd[1];
    char script[1200];
    snprintf(script, sizeof script,
             "BEGIN;\nSELECT 1 FROM auth_users WHERE id = '%s' FOR UPDATE;\n\\! touch %s\n", u->id,
             marker);
    send_all(h->in, script);
    if (!wait_until(marker_present, marker, 60000)) fail_msg("psql could not hold the row");
    if (pthread_create(&h->releaser, NULL, release_when_all_wait, h) != 0)
        fail_msg("pthread_create failed");
}

/* After the race: the releaser saw every racer waiting, and psql is gone. */
static void row_released(struct row_holder *h)
{
    if (!h->pid) return;
    pthread_join(h->releaser, NULL);
    int st = 0;
    waitpid(h->pid, &st, 0);
    h->pid = 0;
    if (h->waited < RACERS) fail_msg("only %d of %d racers waited for the row", h->waited, RACERS);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* --- racing uploads of one client ----------------------------------------------------- */

struct racer {
    const struct srv *s;
    const char *token, *cita, *barbero, *servicio;
    char arg[48]; /* a photo's tipo, or a booking's start */
    const char *data;
    size_t len;
    long status;
    char body[512];
};

static void upload_racer(void *item)
{
    struct racer *x = item;
    const struct part parts[] = {
        {.name = "file", .data = x->data, .len = x->len, .filename = "r.png", .type = "image/png"},
        {.name = "cita_id", .data = x->cita},
        {.name = "tipo", .data = x->arg},
    };
    struct resp r;
    long st = http_multipart_try(x->s, "/api/fotos", x->token, parts, 3, &r);
    x->status = st ? st : -1;
    snprintf(x->body, sizeof x->body, "%s", r.body ? r.body : "");
    resp_free(&r);
}

/* Counts the answers: 201s, and refusals with exactly the error msg; any
 * other answer fails. */
static int count_answers(const struct racer *x, int n, const char *msg, int *refused)
{
    char want[200];
    snprintf(want, sizeof want, "{\"error\":\"%s\"}", msg);
    int ok = 0;
    *refused = 0;
    for (int i = 0; i < n; i++) {
        if (x[i].status == 201)
            ok++;
        else if (x[i].status == 400 && !strcmp(x[i].body, want))
            (*refused)++;
        else
            fail_msg("racer %d: unexpected answer %ld %s", i, x[i].status, x[i].body);
    }
    return ok;
}

static void racing_uploads_of_one_client_never_pass_the_quota(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Rápida");
    /* each upload to a cita of its own: nothing but the quota is shared */
    char *citas[RACERS];
    for (int i = 0; i < RACERS; i++) {
        char when[40];
        past_slot(when, sizeof when);
        citas[i] = book(&F.s, &u, F.barbero, F.servicio, when, NULL);
    }
    /* three blocks each: three fit in ten blocks */
    char *data = photo_bytes(3 * BLOCK, 5);
    struct racer x[RACERS];
    for (int i = 0; i < RACERS; i++) {
        x[i] = (struct racer){
            .s = &F.s, .token = u.token, .cita = citas[i], .data = data, .len = 3 * BLOCK};
        snprintf(x[i].arg, sizeof x[i].arg, "carrera-%d", i);
    }
    struct row_holder h;
    hold_row_of(&u, &h);
    race_threads(RACERS, upload_racer, x, sizeof *x);
    row_released(&h);
    int refused;
    assert_int_equal(count_answers(x, RACERS, CUOTA, &refused), 3);
    assert_int_equal(refused, RACERS - 3);
    for (int i = 0; i < RACERS; i++) {
        expect_stored(&u, citas[i], x[i].status == 201);
        free(citas[i]);
    }
    free(data);
}

/* --- the cap on upcoming appointments --------------------------------------------------- */

static void booking_past_the_cap_is_400_and_stores_nothing(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Pilar");
    /* one long past: not upcoming, not counted */
    struct resp r;
    book_try(&F.s, &u, F.barbero, F.servicio, "2021-03-01T10:00:00.000Z", &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    char *ids[CAP];
    for (int i = 0; i < CAP; i++)
        ids[i] = new_cita(&u);
    char when[40];
    next_slot(when, sizeof when);
    book_try(&F.s, &u, F.barbero, F.servicio, when, &r);
    expect_error(&r, 400, TOPE);
    resp_free(&r);
    assert_int_equal(citas_of(&F.s, &u), 1 + CAP);
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM historial_cortes WHERE cliente_id = '%s'", u.id),
        1 + CAP);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE fecha_inicio = '%s'", when),
                     0);
    /* the slot stayed free: another client books it */
    struct user v;
    signup_user(&F.s, &v, "Vicente");
    free(book(&F.s, &v, F.barbero, F.servicio, when, NULL));
    /* a cancelled appointment no longer counts */
    char path[160];
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", ids[0]);
    http_json(&F.s, "POST", path, u.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char *again = new_cita(&u);
    next_slot(when, sizeof when);
    book_try(&F.s, &u, F.barbero, F.servicio, when, &r);
    expect_error(&r, 400, TOPE);
    resp_free(&r);
    free(again);
    for (int i = 0; i < CAP; i++)
        free(ids[i]);
}

static void the_specifications_errors_answer_before_the_cap(void **state)
{
    (void)state;
    struct user u, v;
    signup_user(&F.s, &u, "Tope");
    signup_user(&F.s, &v, "Vecina");
    for (int i = 0; i < CAP; i++)
        free(new_cita(&u));
    char taken[40], free_slot[40];
    next_slot(taken, sizeof taken);
    free(book(&F.s, &v, F.barbero, F.servicio, taken, NULL));
    next_slot(free_slot, sizeof free_slot);

    struct resp r;
    book_try(&F.s, NULL, F.barbero, F.servicio, free_slot, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    book_try(&F.s, &u, F.barbero, NULL, free_slot, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    book_try(&F.s, &u, F.barbero, NO_SUCH_UUID, free_slot, &r);
    expect_error(&r, 404, "Servicio no encontrado");
    resp_free(&r);
    book_try(&F.s, &u, NO_SUCH_UUID, F.servicio, free_slot, &r);
    expect_error(&r, 404, "Barbero no encontrado");
    resp_free(&r);
    book_try(&F.s, &u, F.barbero, F.servicio, taken, &r);
    expect_error(&r, 409, "El horario ya no está disponible");
    resp_free(&r);
    book_try(&F.s, &u, F.barbero, F.servicio, free_slot, &r);
    expect_error(&r, 400, TOPE);
    resp_free(&r);
    assert_int_equal(citas_of(&F.s, &u), CAP);
}

static void book_racer(void *item)
{
    struct racer *x = item;
    json_t *b = json_pack("{s:s, s:s, s:s}", "barbero_id", x->barbero, "servicio_id", x->servicio,
                          "fecha_inicio", x->arg);
    char *body = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    struct req_opts o = {.token = x->token, .content_type = "application/json", .body = body};
    struct resp r;
    long st = http_try(x->s, "POST", "/api/citas", &o, &r);
    x->status = st ? st : -1;
    snprintf(x->body, sizeof x->body, "%s", r.body ? r.body : "");
    resp_free(&r);
    free(body);
}

static void racing_bookings_of_one_client_give_exactly_the_cap(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Carrera");
    free(new_cita(&u)); /* one held already */
    struct racer x[RACERS];
    for (int i = 0; i < RACERS; i++) {
        x[i] = (struct racer){
            .s = &F.s, .token = u.token, .barbero = F.barbero, .servicio = F.servicio};
        next_slot(x[i].arg, sizeof x[i].arg);
    }
    struct row_holder h;
    hold_row_of(&u, &h);
    race_threads(RACERS, book_racer, x, sizeof *x);
    row_released(&h);
    int refused;
    assert_int_equal(count_answers(x, RACERS, TOPE, &refused), CAP - 1);
    assert_int_equal(refused, RACERS - (CAP - 1));
    assert_int_equal(citas_of(&F.s, &u), CAP);
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM historial_cortes WHERE cliente_id = '%s'", u.id), CAP);
}

/* --- without the settings ----------------------------------------------------------------- */

static void by_default_there_is_no_cap_and_a_quota_of_0_is_no_limit(void **state)
{
    (void)state;
    struct fixture d = {0};
    static const char *const env[] = {"BARBERIA_PHOTO_QUOTA_BYTES=0", NULL};
    fixture_start(&d, env, "Barbero Libre", "Corte Libre", 30, 10);
    struct user u;
    signup_user(&d.s, &u, "Libre");
    char *first = NULL;
    for (int i = 0; i < 2 * CAP; i++) {
        char when[40];
        next_slot(when, sizeof when);
        char *id = book(&d.s, &u, d.barbero, d.servicio, when, NULL);
        if (!first)
            first = id;
        else
            free(id);
    }
    assert_int_equal(citas_of(&d.s, &u), 2 * CAP);
    char *data = photo_bytes((size_t)QUOTA, 3);
    for (int i = 0; i < 3; i++) {
        char tipo[16];
        snprintf(tipo, sizeof tipo, "libre-%d", i);
        json_decref(upload_photo(&d.s, &u, first, tipo, data, (size_t)QUOTA));
    }
    free(data);
    free(first);
    fixture_stop(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uploads_under_ever_new_tipos_stop_at_the_quota_and_store_nothing_more),
        cmocka_unit_test(tiny_photos_count_whole_blocks),
        cmocka_unit_test(the_specifications_errors_answer_before_the_quota),
        cmocka_unit_test(deleting_a_photo_frees_its_share),
        cmocka_unit_test(racing_uploads_of_one_client_never_pass_the_quota),
        cmocka_unit_test(booking_past_the_cap_is_400_and_stores_nothing),
        cmocka_unit_test(the_specifications_errors_answer_before_the_cap),
        cmocka_unit_test(racing_bookings_of_one_client_give_exactly_the_cap),
        cmocka_unit_test(by_default_there_is_no_cap_and_a_quota_of_0_is_no_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
