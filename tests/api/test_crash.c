/*
 * test_crash.c - nothing half-done after a crash: rounds of SIGKILL at
 * random moments while client threads book (POST /api/citas), upload photos
 * and delete photos in parallel over HTTP. After each restart:
 * - every acknowledged booking is stored with its historial_cortes row, and
 *   no refused booking is (each booking asks for its own slot);
 * - every acknowledged upload is listed and its URL answers 200 with the
 *   same bytes, unless its deletion was acknowledged, and then it is gone;
 * - no listed record lacks its object, no record belongs to a refused
 *   upload (each upload's bytes carry its own tag);
 * - the history table matches the appointments;
 * - after the start-up sweep no object (nor its metadata) lacks its record,
 *   the object store's .tmp and the upload spool are empty and no intent is
 *   left.
 *
 * The short version runs in the test command (CRASH_ROUNDS, default 5;
 * CRASH_SEED picks the random moments, printed on each run); bench/crash
 * runs hundreds of rounds with the same program.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLIENTS    4
#define MAX_OPS    20000
#define NO_ANSWER  0 /* the connection was cut: the outcome is unknown */
#define FOTOS_DIR  "storage/fotos-citas"
#define FOTOS_META "storage/.meta/fotos-citas"

enum kind { BOOK, UPLOAD, DELETE };

struct op {
    enum kind kind;
    long status;    /* the HTTP answer, NO_ANSWER when cut */
    char id[40];    /* BOOK, UPLOAD: the new record's id when acknowledged */
    char slot[32];  /* BOOK: its fecha_inicio, unique to the booking */
    char cita[40];  /* UPLOAD */
    char tag[48];   /* UPLOAD: the text its bytes start with */
    size_t size;    /* UPLOAD */
    int upload;     /* DELETE: index of the upload it deletes */
    int deleted_by; /* UPLOAD: index of the DELETE that tried it, -1 */
    bool verified;  /* UPLOAD: its record was seen serving its bytes */
    bool retaken;   /* BOOK: asks for the slot of an acknowledged booking */
};

struct client {
    struct user u;
    int index;
    struct op *ops;
    int nops;
    unsigned seed;
    char base[64];
    atomic_bool *stop;
    int booked_citas[256]; /* indexes of acknowledged BOOK ops (last ones) */
    int nbooked;
};

static struct srv S;
static char *barbero, *servicio;
static struct client clients[CLIENTS];
static int round_no;
static atomic_long next_slot; /* every booking asks for an hour of its own */

/* --- HTTP from the client threads (no cmocka asserts off the main thread) -------------- */

struct sink {
    char *p;
    size_t n;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct sink *s = ud;
    size_t n = size * nmemb;
    char *p = realloc(s->p, s->n + n + 1);
    if (!p) return 0;
    memcpy(p + s->n, ptr, n);
    s->n += n;
    p[s->n] = '\0';
    s->p = p;
    return n;
}

/* One request; returns the status, NO_ANSWER when there was none. OUT:
 * *json, the body parsed (caller decrefs; may be NULL). */
static long call(const char *base, const char *method, const char *path, const char *token,
                 const char *json_body, curl_mime *(*mime)(CURL *, void *), void *mud,
                 json_t **json)
{
    CURL *c = curl_easy_init();
    char url[512], auth[256];
    snprintf(url, sizeof url, "%s%s", base, path);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    struct curl_slist *h = curl_slist_append(NULL, auth);
    if (json_body) h = curl_slist_append(h, "Content-Type: application/json");
    struct sink body = {0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    if (json_body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, json_body);
    curl_mime *m = mime ? mime(c, mud) : NULL;
    if (m) curl_easy_setopt(c, CURLOPT_MIMEPOST, m);
    long status = NO_ANSWER;
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (json) *json = status != NO_ANSWER && body.p ? json_loads(body.p, 0, NULL) : NULL;
    free(body.p);
    curl_mime_free(m);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return status;
}

/* The bytes of an upload: its tag, '|', then bytes drawn from the tag. */
static char *upload_bytes(const char *tag, size_t size)
{
    char *b = malloc(size);
    size_t t = strlen(tag);
    memcpy(b, tag, t);
    b[t] = '|';
    uint32_t x = 2166136261u;
    for (size_t i = 0; i < t; i++)
        x = (x ^ (unsigned char)tag[i]) * 16777619u;
    for (size_t i = t + 1; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b[i] = (char)(x & 0xff);
    }
    return b;
}

struct upload_form {
    const struct op *op;
    char *bytes;
};

static curl_mime *upload_mime(CURL *c, void *ud)
{
    struct upload_form *f = ud;
    curl_mime *m = curl_mime_init(c);
    curl_mimepart *p = curl_mime_addpart(m);
    curl_mime_name(p, "file");
    curl_mime_data(p, f->bytes, f->op->size);
    curl_mime_filename(p, "corte.png");
    curl_mime_type(p, "image/png");
    p = curl_mime_addpart(m);
    curl_mime_name(p, "cita_id");
    curl_mime_data(p, f->op->cita, CURL_ZERO_TERMINATED);
    p = curl_mime_addpart(m);
    curl_mime_name(p, "tipo");
    curl_mime_data(p, f->op->size % 2 ? "antes" : "despues", CURL_ZERO_TERMINATED);
    return m;
}

static void do_book(struct client *cl, struct op *op)
{
    if (cl->nbooked && rand_r(&cl->seed) % 8 == 0) {
        /* now and then a slot already taken: a refusal (409) that must store nothing */
        const struct op *prev = &cl->ops[cl->booked_citas[(cl->nbooked - 1) % 256]];
        snprintf(op->slot, sizeof op->slot, "%s", prev->slot);
        op->retaken = true;
    } else {
        time_t t = (time_t)1956528000 + (time_t)atomic_fetch_add(&next_slot, 1) * 3600;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(op->slot, sizeof op->slot, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
    }
    char body[512];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", barbero,
             servicio, op->slot);
    json_t *j = NULL;
    op->status = call(cl->base, "POST", "/api/citas", cl->u.token, body, NULL, NULL, &j);
    const char *id = jstr(json_object_get(j, "cita"), "id");
    if (op->status == 201 && id) {
        snprintf(op->id, sizeof op->id, "%s", id);
        cl->booked_citas[cl->nbooked++ % 256] = (int)(op - cl->ops);
    }
    json_decref(j);
}

static void do_upload(struct client *cl, struct op *op)
{
    /* one of the last few citas, so that most uploads fit under three per tipo */
    int n = cl->nbooked < 8 ? cl->nbooked : 8;
    int k = cl->nbooked - 1 - (int)(rand_r(&cl->seed) % (unsigned)n);
    const struct op *b = &cl->ops[cl->booked_citas[k % 256]];
    snprintf(op->cita, sizeof op->cita, "%s", b->id);
    snprintf(op->tag, sizeof op->tag, "crash-%d-%d-%d", cl->index, round_no, cl->nops);
    op->size = 1000 + (size_t)(rand_r(&cl->seed) % (300 * 1024));
    struct upload_form f = {op, upload_bytes(op->tag, op->size)};
    json_t *j = NULL;
    op->status = call(cl->base, "POST", "/api/fotos", cl->u.token, NULL, upload_mime, &f, &j);
    const char *id = jstr(json_object_get(j, "foto"), "id");
    if (op->status == 201 && id) snprintf(op->id, sizeof op->id, "%s", id);
    json_decref(j);
    free(f.bytes);
}

/* Deletes one of the client's acknowledged photos not deleted yet. False
 * when there is none. */
static bool do_delete(struct client *cl, struct op *op)
{
    int pick = -1, seen = 0;
    for (int i = cl->nops - 1; i >= 0 && seen < 16; i--) {
        const struct op *u = &cl->ops[i];
        if (u->kind != UPLOAD || u->status != 201 || u->deleted_by >= 0) continue;
        if (rand_r(&cl->seed) % (unsigned)++seen == 0) pick = i;
    }
    if (pick < 0) return false;
    op->upload = pick;
    cl->ops[pick].deleted_by = (int)(op - cl->ops);
    char path[128];
    snprintf(path, sizeof path, "/api/fotos?id=%s", cl->ops[pick].id);
    op->status = call(cl->base, "DELETE", path, cl->u.token, NULL, NULL, NULL, NULL);
    return true;
}

static void *client_run(void *arg)
{
    struct client *cl = arg;
    while (!atomic_load(cl->stop) && cl->nops < MAX_OPS) {
        struct op *op = &cl->ops[cl->nops];
        memset(op, 0, sizeof *op);
        op->upload = -1;
        op->deleted_by = -1;
        int r = rand_r(&cl->seed) % 10;
        if (cl->nbooked == 0 || r < 3) {
            op->kind = BOOK;
            do_book(cl, op);
        } else if (r < 6) {
            op->kind = UPLOAD;
            do_upload(cl, op);
        } else {
            op->kind = DELETE;
            if (!do_delete(cl, op)) continue;
        }
        cl->nops++;
        /* a cut connection means the server is gone: wait for the next round */
        if (op->status == NO_ANSWER) break;
    }
    return NULL;
}

/* --- checks after a restart ----------------------------------------------------------- */

/* A line-per-row query result split into rows of tab-separated columns. */
static char **rows_of(char *text, size_t *n)
{
    size_t cap = 16;
    char **rows = malloc(cap * sizeof *rows);
    *n = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (*n == cap) rows = realloc(rows, (cap *= 2) * sizeof *rows);
        rows[(*n)++] = l;
    }
    return rows;
}

/* How many rows have col0 as their first column. */
static int rows_with(char **rows, size_t n, const char *col0)
{
    size_t k = strlen(col0);
    int count = 0;
    for (size_t i = 0; i < n; i++)
        count += !strncmp(rows[i], col0, k) && (rows[i][k] == '\t' || rows[i][k] == '\0');
    return count;
}

static bool row_has(char **rows, size_t n, const char *col0)
{
    size_t k = strlen(col0);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(rows[i], col0, k) && (rows[i][k] == '\t' || rows[i][k] == '\0')) return true;
    return false;
}

/* The upload op whose tag ("crash-<client>-<round>-<op>") the bytes start
 * with, or NULL. */
static struct op *upload_by_bytes(const char *b, size_t len)
{
    char tag[48];
    const char *bar = memchr(b, '|', len < sizeof tag ? len : sizeof tag);
    if (!bar) return NULL;
    memcpy(tag, b, (size_t)(bar - b));
    tag[bar - b] = '\0';
    int c, r, i;
    if (sscanf(tag, "crash-%d-%d-%d", &c, &r, &i) != 3 || c < 0 || c >= CLIENTS || i < 0 ||
        i >= clients[c].nops)
        return NULL;
    struct op *op = &clients[c].ops[i];
    return op->kind == UPLOAD && !strcmp(op->tag, tag) ? op : NULL;
}

/* The outcome of the deletion tried on an upload: 200, NO_ANSWER, another
 * status, or -1 when none was tried. */
static long deletion(const struct client *cl, const struct op *up)
{
    return up->deleted_by >= 0 ? cl->ops[up->deleted_by].status : -1;
}

static int by_id(const void *a, const void *b)
{
    return strcmp((*(struct op *const *)a)->id, (*(struct op *const *)b)->id);
}

static bool id_seen(struct op **seen, size_t n, const char *id)
{
    if (!n) return false;
    struct op key;
    snprintf(key.id, sizeof key.id, "%s", id);
    struct op *k = &key;
    return bsearch(&k, seen, n, sizeof *seen, by_id) != NULL;
}

static size_t files_under(const char *sub)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", S.data, sub);
    return count_files(dir);
}

struct tally {
    int booked, book_refused, book_cut;
    int uploaded, upload_refused, upload_cut;
    int deleted, delete_cut;
};

static void check_everything(struct tally *t)
{
    memset(t, 0, sizeof *t);
    /* bookings */
    char *citas = db_query(&S, "SELECT fecha_inicio, id FROM citas");
    size_t ncitas;
    char **crow = rows_of(citas, &ncitas);
    for (int c = 0; c < CLIENTS; c++)
        for (int i = 0; i < clients[c].nops; i++) {
            const struct op *op = &clients[c].ops[i];
            if (op->kind != BOOK) continue;
            int stored = rows_with(crow, ncitas, op->slot);
            if (stored > 1) fail_msg("round %d: %d citas at %s", round_no, stored, op->slot);
            if (op->retaken && op->status != 409 && op->status != NO_ANSWER)
                fail_msg("round %d: booking a taken slot answered %ld", round_no, op->status);
            if (op->retaken) {
                if (op->status == 409)
                    t->book_refused++;
                else
                    t->book_cut++;
                continue; /* the slot's one cita is the first booking's */
            }
            if (op->status == 201) {
                t->booked++;
                char want[80];
                snprintf(want, sizeof want, "%s\t%s", op->slot, op->id);
                if (!row_has(crow, ncitas, want))
                    fail_msg("round %d: acknowledged booking %s at %s is not stored", round_no,
                             op->id, op->slot);
            } else if (op->status == NO_ANSWER) {
                t->book_cut++;
            } else {
                t->book_refused++;
                if (stored)
                    fail_msg("round %d: booking at %s was refused (%ld) but is stored", round_no,
                             op->slot, op->status);
            }
        }
    free(crow);
    free(citas);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM citas c WHERE NOT EXISTS (SELECT 1 FROM "
                              "historial_cortes h WHERE h.cita_id = c.id AND h.cliente_id = "
                              "c.cliente_id AND h.barbero_id = c.barbero_id AND "
                              "h.servicio_id = c.servicio_id AND h.fecha = %s)",
                              test_pg() ? "(c.fecha_inicio AT TIME ZONE 'UTC')::date"
                                        : "substr(c.fecha_inicio, 1, 10)"),
                     0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM historial_cortes"),
                     db_count(&S, "SELECT count(*) FROM citas"));

    /* photos: every record serves its upload's bytes */
    char *fotos = db_query(&S, "SELECT id, storage_path FROM fotos_cita");
    size_t nfotos;
    char **frow = rows_of(fotos, &nfotos);
    /* the uploads whose records were seen, by id: an object never changes,
     * so a record seen whole stays whole unless a deletion touched it (the
     * long runs would otherwise fetch every photo again after every kill) */
    size_t nseen = 0;
    struct op **seen = NULL;
    for (int c = 0; c < CLIENTS; c++)
        for (int i = 0; i < clients[c].nops; i++)
            if (clients[c].ops[i].verified && clients[c].ops[i].deleted_by < 0) {
                seen = realloc(seen, (nseen + 1) * sizeof *seen);
                seen[nseen++] = &clients[c].ops[i];
            }
    if (nseen) qsort(seen, nseen, sizeof *seen, by_id);
    for (size_t i = 0; i < nfotos; i++) {
        char *tab = strchr(frow[i], '\t');
        assert_non_null(tab);
        *tab = '\0';
        if (id_seen(seen, nseen, frow[i])) continue;
        char *enc = curl_easy_escape(NULL, tab + 1, 0);
        /* keep the '/' of the key as they are */
        char path[1024];
        size_t o = (size_t)snprintf(path, sizeof path, "/storage/v1/object/public/fotos-citas/");
        for (const char *p = enc; *p && o + 1 < sizeof path; p++) {
            if (!strncmp(p, "%2F", 3)) {
                path[o++] = '/';
                p += 2;
            } else {
                path[o++] = *p;
            }
        }
        path[o] = '\0';
        curl_free(enc);
        struct resp r;
        http_get(&S, path, NULL, &r);
        if (r.status != 200)
            fail_msg("round %d: listed photo %s (%s) answers %ld: a record without its object",
                     round_no, frow[i], tab + 1, r.status);
        struct op *up = upload_by_bytes(r.body, r.len);
        if (!up) fail_msg("round %d: photo %s holds bytes of no upload", round_no, frow[i]);
        if (up->status != 201 && up->status != NO_ANSWER)
            fail_msg("round %d: upload %s was refused (%ld) but is stored", round_no, up->tag,
                     up->status);
        if (up->status == 201 && strcmp(up->id, frow[i]) != 0)
            fail_msg("round %d: upload %s was acknowledged as %s but stored as %s", round_no,
                     up->tag, up->id, frow[i]);
        char *want = upload_bytes(up->tag, up->size);
        if (r.len != up->size || memcmp(r.body, want, up->size) != 0)
            fail_msg("round %d: photo %s does not hold the uploaded bytes", round_no, frow[i]);
        free(want);
        snprintf(up->id, sizeof up->id, "%s", frow[i]);
        up->verified = true;
        resp_free(&r);
    }
    free(seen);
    /* every acknowledged upload is there unless its deletion was acknowledged */
    for (int c = 0; c < CLIENTS; c++)
        for (int i = 0; i < clients[c].nops; i++) {
            const struct op *op = &clients[c].ops[i];
            if (op->kind == UPLOAD) {
                if (op->status == 201)
                    t->uploaded++;
                else if (op->status == NO_ANSWER)
                    t->upload_cut++;
                else
                    t->upload_refused++;
                if (op->status != 201) continue;
                bool listed = row_has(frow, nfotos, op->id);
                long del = deletion(&clients[c], op);
                if (del == 200 && listed)
                    fail_msg("round %d: photo %s is listed after its deletion was acknowledged",
                             round_no, op->id);
                /* only a deletion whose answer was cut may have removed it unacknowledged */
                if (del != 200 && del != NO_ANSWER && !listed)
                    fail_msg("round %d: acknowledged photo %s is gone", round_no, op->id);
            } else if (op->kind == DELETE) {
                if (op->status == 200)
                    t->deleted++;
                else if (op->status == NO_ANSWER)
                    t->delete_cut++;
                else
                    fail_msg("round %d: deleting a photo answered %ld", round_no, op->status);
            }
        }
    free(frow);
    free(fotos);

    /* after the start-up sweep: no object without its record, nothing left over */
    long records = db_count(&S, "SELECT count(*) FROM fotos_cita");
    size_t objects = files_under(FOTOS_DIR), metas = files_under(FOTOS_META);
    if ((long)objects != records || (long)metas != records)
        fail_msg("round %d: %ld records but %zu objects and %zu metadata files", round_no, records,
                 objects, metas);
    assert_int_equal(files_under("storage/.tmp"), 0);
    assert_int_equal(files_under("tmp"), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM obj_intents"), 0);
}

/* --- the rounds --------------------------------------------------------------------- */

static int rounds(void)
{
    const char *v = getenv("CRASH_ROUNDS");
    int n = v ? (int)strtol(v, NULL, 10) : 5;
    return n > 0 ? n : 5;
}

static const char *const env[] = {"BARBERIA_SWEEP_INTERVAL_MS=500", NULL};

static void acknowledged_work_survives_sigkill_at_any_moment(void **state)
{
    (void)state;
    const char *sv = getenv("CRASH_SEED");
    unsigned seed =
        sv ? (unsigned)strtoul(sv, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)getpid();
    fprintf(stderr, "crash test: seed %u (CRASH_SEED=%u reproduces the kill moments)\n", seed,
            seed);
    srand(seed);
    int n = rounds();
    struct tally t = {0};
    int64_t total_ops = 0;
    long swept = 0; /* leftovers the start-up sweeps removed */
    int64_t t0 = clock_mono_ms();
    for (round_no = 0; round_no < n; round_no++) {
        atomic_bool stop = false;
        pthread_t th[CLIENTS];
        for (int c = 0; c < CLIENTS; c++) {
            snprintf(clients[c].base, sizeof clients[c].base, "%s", S.base);
            clients[c].stop = &stop;
            clients[c].seed = seed + (unsigned)round_no * 131u + (unsigned)c;
            assert_int_equal(pthread_create(&th[c], NULL, client_run, &clients[c]), 0);
        }
        int before = 0;
        for (int c = 0; c < CLIENTS; c++)
            before += clients[c].nops;
        /* a random moment, once the clients are busy */
        sleep_ms(150 + rand() % 700);
        kill(S.pid, SIGKILL);
        assert_int_equal(srv_wait_exit(&S, 10000), 128 + SIGKILL);
        atomic_store(&stop, true);
        for (int c = 0; c < CLIENTS; c++)
            pthread_join(th[c], NULL);
        char *log = srv_log(&S);
        if (strstr(log, "Sanitizer") || strstr(log, "runtime error:"))
            fail_msg("round %d: the server's log holds a sanitizer report:\n%s", round_no, log);
        free(log);
        for (int c = 0; c < CLIENTS; c++)
            total_ops += clients[c].nops;
        total_ops -= before;

        srv_start(&S, env, NULL);
        /* the start-up pass runs before the server listens: its lines are in */
        char *started = srv_log(&S);
        for (const char *p = started; (p = strstr(p, "sweep: removed")) != NULL; p++)
            swept++;
        free(started);
        check_everything(&t);
        if (n > 5 && (round_no + 1) % 25 == 0)
            fprintf(stderr, "crash test: %d rounds done\n", round_no + 1);
    }
    double secs = (double)(clock_mono_ms() - t0) / 1e3;
    fprintf(stderr,
            "crash test: %d kills in %.1f s, %lld requests; bookings %d acknowledged, %d refused, "
            "%d cut; uploads %d acknowledged, %d refused, %d cut; deletions %d acknowledged, %d "
            "cut; %ld leftovers swept at restarts; %ld photos and %ld citas stored\n",
            n, secs, (long long)total_ops, t.booked, t.book_refused, t.book_cut, t.uploaded,
            t.upload_refused, t.upload_cut, t.deleted, t.delete_cut, swept,
            db_count(&S, "SELECT count(*) FROM fotos_cita"),
            db_count(&S, "SELECT count(*) FROM citas"));
    /* the sweeper really ran: at least one kill left something to finish */
    assert_true(t.booked > 0 && t.uploaded > 0 && t.deleted > 0);
}

/* The periodic pass: an intent of a process that is gone, recorded while
 * the server runs, is finished within an interval or two, and an intent of
 * this live server is left alone. */
static void periodic_sweep_finishes_a_gone_process_intent_and_spares_live_ones(void **state)
{
    (void)state;
    /* an orphan object, as a process that died mid-upload leaves it */
    char dir[512], file[600];
    snprintf(dir, sizeof dir, "%s/" FOTOS_DIR "/ghost/cita", S.data);
    char *mk = NULL;
    char *cmd[] = {"/bin/mkdir", "-p", dir, NULL};
    assert_int_equal(run_program((const char *const *)cmd, NULL, 5000, &mk, NULL), 0);
    free(mk);
    snprintf(file, sizeof file, "%s/antes-1.png", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("orphan", f);
    fclose(f);
    size_t before = files_under(FOTOS_DIR);
    /* pid 1 is alive but is not us; its lease never existed */
    free(db_query(&S,
                  "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
                  "VALUES ('00000000-0000-4000-8000-00000000a001', 'fotos-citas', "
                  "'ghost/cita/antes-1.png', 'put', "
                  "'another-node', 1, 'ffffffffffffffffffffffffffffffff', "
                  "'2030-01-01T00:00:00.000Z')"));
    bool gone = false;
    for (int i = 0; i < 100 && !gone; i++) {
        sleep_ms(50);
        gone = db_count(&S, "SELECT count(*) FROM obj_intents WHERE id = "
                            "'00000000-0000-4000-8000-00000000a001'") == 0;
    }
    assert_true(gone);
    assert_int_equal(files_under(FOTOS_DIR), before - 1);
    assert_true(srv_wait_log(&S, "sweep: removed fotos-citas/ghost/cita/antes-1.png", 2000));

    /* a live process's intent (a lease renewed just now) is left alone */
    free(db_query(&S,
                  "INSERT INTO proc_leases VALUES ('eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', "
                  "'another-node', 7, %s);"
                  "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
                  "VALUES ('00000000-0000-4000-8000-00000000a002', 'fotos-citas', "
                  "'live/cita/antes-1.png', 'put', "
                  "'another-node', 7, 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', "
                  "'2030-01-01T00:00:00.000Z')",
                  test_pg() ? "now(), now() + interval '1 hour'"
                            : "strftime('%Y-%m-%dT%H:%M:%fZ','now'), "
                              "strftime('%Y-%m-%dT%H:%M:%fZ','now', '+1 hour')"));
    /* nor is one of a live process on another machine that has this one's
     * host name (a cloned VM, containers named alike): its pid, dead here,
     * says nothing of it */
    char host[200];
    assert_int_equal(gethostname(host, sizeof host), 0);
    free(db_query(&S,
                  "INSERT INTO proc_leases VALUES ('dddddddddddddddddddddddddddddddd', "
                  "'%s', 999999, %s);"
                  "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
                  "VALUES ('00000000-0000-4000-8000-00000000a003', 'fotos-citas', "
                  "'twin/cita/antes-1.png', 'put', "
                  "'%s', 999999, 'dddddddddddddddddddddddddddddddd', "
                  "'2030-01-01T00:00:00.000Z')",
                  host,
                  test_pg() ? "now(), now() + interval '1 hour'"
                            : "strftime('%Y-%m-%dT%H:%M:%fZ','now'), "
                              "strftime('%Y-%m-%dT%H:%M:%fZ','now', '+1 hour')",
                  host));
    sleep_ms(1500); /* three intervals */
    assert_int_equal(
        db_count(
            &S,
            "SELECT count(*) FROM obj_intents WHERE id = '00000000-0000-4000-8000-00000000a002'"),
        1);
    assert_int_equal(
        db_count(
            &S,
            "SELECT count(*) FROM obj_intents WHERE id = '00000000-0000-4000-8000-00000000a003'"),
        1);
    free(db_query(&S, "DELETE FROM obj_intents; DELETE FROM proc_leases WHERE pid IN (7, 999999)"));
}

static int setup(void **state)
{
    (void)state;
    srv_start(&S, env, NULL);
    barbero = make_barbero(&S, "Barbero de choque");
    servicio = make_servicio(&S, "Corte rápido", 30, 12.0);
    for (int c = 0; c < CLIENTS; c++) {
        signup_user(&S, &clients[c].u, NULL);
        clients[c].index = c;
        clients[c].ops = calloc(MAX_OPS, sizeof *clients[c].ops);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    for (int c = 0; c < CLIENTS; c++)
        free(clients[c].ops);
    free(barbero);
    free(servicio);
    return 0;
}

int main(void)
{
    test_folder_store(); /* crashes at every instant, checked in the folder store's files */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acknowledged_work_survives_sigkill_at_any_moment),
        cmocka_unit_test(periodic_sweep_finishes_a_gone_process_intent_and_spares_live_ones),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
