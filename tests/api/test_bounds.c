/*
 * test_bounds.c - the service against bad input over HTTP: a huge upload
 * is refused without the server holding more than about 5 MiB of it (in
 * memory, in its spool folder, in any open file), malformed forms, form
 * fields over their cap, garbage session tokens, non-UUID ids, tipo values
 * and file names made to escape the photo bucket, JSON bodies over 64 KiB
 * and request headers over the limit - and the server keeps serving.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB          (1024 * 1024)
#define SPOOL_LIMIT  (5 * MIB + 64 * 1024) /* the cap plus one read of slack */
#define BOUNDARY     "----barberia-bounds-42"
#define NO_SUCH_UUID "9b2c7e10-5d4a-4f3b-8c21-0a1b2c3d4e5f"

static struct fixture F; /* the server, a barber and a service */
static struct user U, V;
static char *cita;

/* --- helpers ------------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    fixture_start(&F, NULL, "Barbero Límites", "Corte Límites", 30, 10);
    signup_user(&F.s, &U, "Uno");
    signup_user(&F.s, &V, "Dos");
    cita = book(&F.s, &U, F.barbero, F.servicio, "2032-03-04T10:00:00Z", NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(cita);
    fixture_stop(&F);
    return 0;
}

/* Asserts a raw reply is status with the JSON body {"error": msg}. */
static void expect_raw_error(long status, const char *reply, long want, const char *msg)
{
    if (status != want) fail_msg("expected %ld, got %ld: %.300s", want, status, reply ? reply : "");
    json_t *j = json_loads(raw_body(reply), 0, NULL);
    const char *got = jstr(j, "error");
    bool ok = got && !strcmp(got, msg) && json_object_size(j) == 1;
    json_decref(j);
    if (!ok) fail_msg("expected {\"error\":\"%s\"}, got: %.300s", msg, reply);
}

/* --- every path under the test's temporary folder ---------------------------------------- */

struct tree {
    char **paths;
    size_t n, cap;
};

static __thread struct tree *walking;
static __thread size_t walk_root_len;

static int walk_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    const char *rel = path + walk_root_len;
    if (*rel == '/') rel++;
    if (!*rel) return 0;
    /* the harness's own files and the database change on their own */
    if (!strchr(rel, '/') && strncmp(rel, "data", 4) != 0) return 0;
    if (!strncmp(rel, "data/barberia.db", 16)) return 0;
    struct tree *t = walking;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->paths = realloc(t->paths, t->cap * sizeof *t->paths);
    }
    char *e = NULL;
    if (asprintf(&e, "%s%s", rel, flag == FTW_D ? "/" : "") < 0) fail_msg("out of memory");
    t->paths[t->n++] = e;
    return 0;
}

static void tree_walk(struct tree *t, const char *root)
{
    memset(t, 0, sizeof *t);
    walking = t;
    walk_root_len = strlen(root);
    nftw(root, walk_entry, 16, FTW_PHYS);
}

static bool tree_has(const struct tree *t, const char *p)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->paths[i], p)) return true;
    return false;
}

static void tree_free(struct tree *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->paths[i]);
    free(t->paths);
    memset(t, 0, sizeof *t);
}

/* Inside the photo bucket (or its metadata mirror): the only place an upload may add to. */
static bool in_bucket(const char *rel)
{
    return !strncmp(rel, "data/storage/fotos-citas/", 25) ||
           !strncmp(rel, "data/storage/.meta/fotos-citas/", 31) ||
           !strcmp(rel, "data/storage/.buckets/fotos-citas"); /* made with the first object */
}

/* Entries of /tmp whose name holds marker. */
static int tmp_entries_with(const char *marker)
{
    DIR *d = opendir("/tmp");
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, marker)) n++;
    closedir(d);
    return n;
}

/* --- what the server holds of an upload ---------------------------------------------------- */

struct watch {
    pid_t pid;
    char spool[400];
    long rss0, rss_max;
    long long fd_max;    /* largest regular file the server has open */
    long long spool_max; /* largest file in the spool folder */
    bool saw_spool_fd;   /* an (unlinked) spool file was seen open */
    int samples;
};

static void watch_sample(struct watch *w)
{
    long rss = proc_rss_kib(w->pid);
    if (rss > w->rss_max) w->rss_max = rss;
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)w->pid);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char p[128], target[PATH_MAX];
            if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p) continue;
            struct stat sb;
            if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
            if ((long long)sb.st_size > w->fd_max) w->fd_max = (long long)sb.st_size;
            ssize_t k = readlink(p, target, sizeof target - 1);
            if (k > 0) {
                target[k] = '\0';
                if (strstr(target, "/tmp/upload-")) w->saw_spool_fd = true;
            }
        }
        closedir(d);
    }
    d = opendir(w->spool);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            char p[700];
            snprintf(p, sizeof p, "%s/%s", w->spool, e->d_name);
            struct stat sb;
            if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && (long long)sb.st_size > w->spool_max)
                w->spool_max = (long long)sb.st_size;
        }
        closedir(d);
    }
    w->samples++;
}

struct stream {
    size_t total, sent, next_sample;
    struct watch *w;
};

/* The file part's bytes, made as they are sent; the server is watched every 2 MiB. */
static size_t stream_read(char *buf, size_t size, size_t nitems, void *arg)
{
    struct stream *st = arg;
    size_t want = size * nitems;
    if (want > st->total - st->sent) want = st->total - st->sent;
    for (size_t i = 0; i < want; i++)
        buf[i] = (char)((st->sent + i) % 253);
    st->sent += want;
    if (st->sent >= st->next_sample) {
        watch_sample(st->w);
        st->next_sample += 2 * MIB;
    }
    return want;
}

/* --- a huge upload ------------------------------------------------------------------------------
 */

static void a_50mb_upload_is_refused_without_the_server_holding_more_than_5mib(void **state)
{
    (void)state;
    struct watch w = {.pid = F.s.pid};
    snprintf(w.spool, sizeof w.spool, "%s/tmp", F.s.data);
    expect_healthy(&F.s);
    w.rss0 = proc_rss_kib(F.s.pid);
    assert_true(w.rss0 > 0);

    struct stream st = {.total = 50u * 1000 * 1000, .next_sample = 2 * MIB, .w = &w};
    CURL *c = curl_easy_init();
    char url[128], auth[256];
    snprintf(url, sizeof url, "%s/api/fotos", F.s.base);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", U.token);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 300L);
    struct curl_slist *h = curl_slist_append(NULL, auth);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_mime *m = curl_mime_init(c);
    curl_mimepart *p = curl_mime_addpart(m);
    curl_mime_name(p, "cita_id");
    curl_mime_data(p, cita, CURL_ZERO_TERMINATED);
    p = curl_mime_addpart(m);
    curl_mime_name(p, "tipo");
    curl_mime_data(p, "antes", CURL_ZERO_TERMINATED);
    p = curl_mime_addpart(m);
    curl_mime_name(p, "file");
    curl_mime_filename(p, "enorme.jpg");
    curl_mime_type(p, "image/jpeg");
    curl_mime_data_cb(p, (curl_off_t)st.total, stream_read, NULL, NULL, &st);
    curl_easy_setopt(c, CURLOPT_MIMEPOST, m);
    char *body = NULL;
    size_t blen = 0;
    FILE *sink = open_memstream(&body, &blen);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
    CURLcode cc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    fclose(sink);
    curl_mime_free(m);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (cc != CURLE_OK) {
        free(body);
        fail_msg("upload failed: %s", curl_easy_strerror(cc));
    }

    json_t *j = json_loads(body, 0, NULL);
    bool right =
        status == 400 && jstr(j, "error") && !strcmp(jstr(j, "error"), "Máximo 5MB por imagen");
    json_decref(j);
    if (!right) fail_msg("expected 400 Máximo 5MB por imagen, got %ld: %s", status, body);
    free(body);

    print_message("50 MB upload: %d samples, server RSS %ld -> max %ld KiB, largest open file "
                  "%lld bytes, largest spool file %lld bytes\n",
                  w.samples, w.rss0, w.rss_max, w.fd_max, w.spool_max);
    /* the whole body went through, and the server was watched all along */
    assert_int_equal(st.sent, st.total);
    assert_true(w.samples >= 20);
    assert_true(w.saw_spool_fd);
    if (w.fd_max > SPOOL_LIMIT) fail_msg("the server had a %lld-byte file open", w.fd_max);
    if (w.spool_max > SPOOL_LIMIT) fail_msg("the spool folder held a %lld-byte file", w.spool_max);
    if (!built_with_asan()) {
        long growth = w.rss_max - w.rss0;
        if (growth >= 24 * 1024)
            fail_msg("the server's memory grew by %ld KiB during the upload", growth);
    }
    /* nothing stored, nothing left open */
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM fotos_cita"), 0);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/tmp", F.s.data);
    assert_int_equal(count_files(dir), 0);
    expect_healthy(&F.s);
}

static void a_form_declaring_more_than_256mib_is_refused_before_its_body(void **state)
{
    (void)state;
    /* only the head is sent: an answer proves the body was never waited for */
    char head[512];
    int n = snprintf(head, sizeof head,
                     "POST /api/fotos HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Authorization: Bearer %s\r\n"
                     "Content-Type: multipart/form-data; boundary=" BOUNDARY "\r\n"
                     "Content-Length: %llu\r\n\r\n",
                     U.token, 300ull * MIB);
    char *reply = NULL;
    long st = raw_http(&F.s, head, (size_t)n, 30000, &reply);
    expect_raw_error(st, reply, 400, "Máximo 5MB por imagen");
    free(reply);
    expect_healthy(&F.s);
}

/* --- malformed forms
 * ------------------------------------------------------------------------------- */

static void malformed_multipart_is_400_formulario_invalido_and_creates_no_file(void **state)
{
    (void)state;
    char *full = NULL;
    int fl = asprintf(&full,
                      "--" BOUNDARY "\r\n"
                      "Content-Disposition: form-data; name=\"cita_id\"\r\n\r\n%s\r\n"
                      "--" BOUNDARY "\r\n"
                      "Content-Disposition: form-data; name=\"tipo\"\r\n\r\nantes\r\n"
                      "--" BOUNDARY "\r\n"
                      "Content-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n"
                      "Content-Type: image/png\r\n\r\nPNG-BYTES-PNG-BYTES\r\n"
                      "--" BOUNDARY "--\r\n",
                      cita);
    assert_true(fl > 0);
    static const char garbage[] = "\x00\xff\x10garbage\r\n\r\n--\r\n--x--\r\n\x7f";
    const struct {
        const char *what, *ct, *body;
        size_t len;
    } cases[] = {
        {"truncated in the file part", "multipart/form-data; boundary=" BOUNDARY, full,
         (size_t)fl - 30},
        {"truncated in the part headers", "multipart/form-data; boundary=" BOUNDARY, full, 60},
        {"cut before the closing boundary", "multipart/form-data; boundary=" BOUNDARY, full,
         (size_t)fl - strlen("--" BOUNDARY "--\r\n")},
        {"a boundary other than the declared one", "multipart/form-data; boundary=other", full,
         (size_t)fl},
        {"no boundary declared", "multipart/form-data", full, (size_t)fl},
        {"garbage", "multipart/form-data; boundary=" BOUNDARY, garbage, sizeof garbage - 1},
    };
    struct tree before, after;
    tree_walk(&before, F.s.dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].body);
        struct req_opts o = {
            .token = U.token, .content_type = cases[i].ct, .body = cases[i].body, .len = len};
        struct resp r;
        http_req(&F.s, "POST", "/api/fotos", &o, &r);
        const char *e = jstr(r.json, "error");
        if (r.status != 400 || !e || strcmp(e, "Formulario inválido") != 0)
            fail_msg("%s: expected 400 Formulario inválido, got %ld %s", cases[i].what, r.status,
                     r.body);
        resp_free(&r);
    }
    /* the well-formed body itself is fine: the cita exists */
    struct req_opts o = {.token = U.token,
                         .content_type = "multipart/form-data; boundary=" BOUNDARY,
                         .body = full,
                         .len = (size_t)fl};
    struct resp r;
    http_req(&F.s, "POST", "/api/fotos", &o, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    free(full);

    tree_walk(&after, F.s.dir);
    for (size_t i = 0; i < after.n; i++)
        if (!tree_has(&before, after.paths[i]) && !in_bucket(after.paths[i]) &&
            strcmp(after.paths[i], "data/storage/fotos-citas/") != 0 &&
            strcmp(after.paths[i], "data/storage/.meta/fotos-citas/") != 0)
            fail_msg("a malformed form left %s", after.paths[i]);
    tree_free(&before);
    tree_free(&after);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita),
                     1);
    assert_int_equal(db_exec(&F.s, "DELETE FROM fotos_cita;", NULL), 0);
}

static void an_upload_cut_off_midway_leaves_no_file_and_no_open_spool(void **state)
{
    (void)state;
    char head[512];
    int n = snprintf(head, sizeof head,
                     "POST /api/fotos HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Authorization: Bearer %s\r\n"
                     "Content-Type: multipart/form-data; boundary=" BOUNDARY "\r\n"
                     "Content-Length: 100000\r\n\r\n"
                     "--" BOUNDARY "\r\n"
                     "Content-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n"
                     "Content-Type: image/png\r\n\r\npartial-bytes",
                     U.token);
    /* the client goes away before the body is in: no reply is expected */
    long st = raw_http(&F.s, head, (size_t)n, 300, NULL);
    (void)st;
    expect_healthy(&F.s);
    /* the request ends, its spool file goes with it */
    struct watch w = {.pid = F.s.pid};
    snprintf(w.spool, sizeof w.spool, "%s/tmp", F.s.data);
    for (int i = 0; i < 1000; i++) {
        w.saw_spool_fd = false;
        watch_sample(&w);
        if (!w.saw_spool_fd) break;
        sleep_ms(20);
    }
    assert_false(w.saw_spool_fd);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/tmp", F.s.data);
    assert_int_equal(count_files(dir), 0);
    snprintf(dir, sizeof dir, "%s/storage/.tmp", F.s.data);
    assert_int_equal(count_files(dir), 0);
}

/* A field longer than the 1 KiB a field may keep is not a malformed form:
 * the specification judges what it reads and ignores the rest. A cita_id
 * that long names no appointment (404, in the specification's order); a
 * tipo that long fits no storage key (500, as any key the store refuses);
 * a part the service does not read is ignored, whatever its size. */
static void a_form_field_over_1kib_is_judged_not_refused(void **state)
{
    (void)state;
    char field[1026];
    memset(field, 'a', sizeof field - 1);
    field[1025] = '\0';
    struct part parts[3] = {
        {"file", "x", 1, "a.png", "image/png"},
        {"cita_id", field, 0, NULL, NULL},
        {"tipo", "antes", 0, NULL, NULL},
    };
    struct resp r;
    for (int len = 1025; len >= 1024; len--) {
        field[len] = '\0';
        http_multipart(&F.s, "/api/fotos", U.token, parts, 3, &r);
        expect_error(&r, 404, "Cita no encontrada");
        resp_free(&r);
    }
    /* a NUL cuts a field short too: an existing cita's id before it is not
     * the id sent */
    char with_nul[64];
    int wl = snprintf(with_nul, sizeof with_nul, "%s", cita);
    memcpy(with_nul + wl, "\0x", 3);
    struct part nul_id[3] = {
        {"file", "x", 1, "a.png", "image/png"},
        {"cita_id", with_nul, (size_t)wl + 2, NULL, NULL},
        {"tipo", "antes", 0, NULL, NULL},
    };
    http_multipart(&F.s, "/api/fotos", U.token, nul_id, 3, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    /* still after the specification's earlier checks: no file part */
    http_multipart(&F.s, "/api/fotos", U.token, parts + 1, 2, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);

    char big[4096];
    memset(big, 'n', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    struct part extra[5] = {
        {"notas", big, 0, NULL, NULL},          {"otro", big, 0, "o.txt", "text/plain"},
        {"file", "x", 1, "a.png", "image/png"}, {"cita_id", cita, 0, NULL, NULL},
        {"tipo", "antes", 0, NULL, NULL},
    };
    http_multipart(&F.s, "/api/fotos", U.token, extra, 5, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    /* however many parts the service does not read come first */
    struct part many[23];
    char names[20][8];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof names[i], "x%d", i);
        many[i] = (struct part){names[i], "1", 0, NULL, NULL};
    }
    many[20] = extra[2];
    many[21] = extra[3];
    many[22] = (struct part){"tipo", "despues", 0, NULL, NULL};
    http_multipart(&F.s, "/api/fotos", U.token, many, 23, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    extra[4].data = big; /* tipo */
    http_multipart(&F.s, "/api/fotos", U.token, extra, 5, &r);
    expect_error(&r, 500, "Error al subir imagen: clave de objeto inválida");
    resp_free(&r);
    extra[4].data = "antes\0x";
    extra[4].len = 7;
    http_multipart(&F.s, "/api/fotos", U.token, extra, 5, &r);
    expect_error(&r, 500, "Error al subir imagen: clave de objeto inválida");
    resp_free(&r);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita),
                     2);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM obj_intents"), 0);
}

/* --- sessions and ids ----------------------------------------------------------------------------
 */

static void garbage_tokens_are_401_json(void **state)
{
    (void)state;
    char too_long[8192];
    memset(too_long, 'A', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = '\0';
    char almost[128]; /* a real token with one character changed */
    snprintf(almost, sizeof almost, "%s", U.token);
    almost[0] = almost[0] == 'A' ? 'B' : 'A';
    char longer[128];
    snprintf(longer, sizeof longer, "%sx", U.token);
    const char *const tokens[] = {"",      "x",    too_long, "!!!!$$$$%%%%",
                                  "a b c", "====", almost,   longer};
    static const char *const paths[] = {"/api/fotos?cita_id=" NO_SUCH_UUID, "/api/citas",
                                        "/api/auth/me"};
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
            char auth[8300];
            snprintf(auth, sizeof auth, "Authorization: Bearer %s", tokens[i]);
            const char *hdr[] = {auth, NULL};
            struct req_opts o = {.headers = hdr};
            struct resp r;
            http_req(&F.s, "GET", paths[p], &o, &r);
            expect_error(&r, 401, "No autenticado");
            expect_header(&r, "Content-Type", "application/json; charset=utf-8");
            resp_free(&r);
            /* the same as the session cookie */
            char cookie[8300];
            snprintf(cookie, sizeof cookie, "barberia_session=%s", tokens[i]);
            o = (struct req_opts){.cookie = cookie};
            http_req(&F.s, "GET", paths[p], &o, &r);
            expect_error(&r, 401, "No autenticado");
            resp_free(&r);
        }
    }
    /* what libcurl will not send: "Bearer" alone, NUL and control bytes */
    static const struct {
        const char *value;
        size_t len;
    } raw[] = {
        {"Bearer", 6},
        {"Bearer ", 7},
        {"Bearer \x01\x02\x03", 10},
        {"Bearer ab\0cd", 12},
        {"Bearer \x7f\x7f", 9},
        {"Bearer \xff\xfe\xfd", 10},
        {"Basic dXNlcjpwYXNz", 18},
        {"bearer", 6},
    };
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        char req[256];
        int n = snprintf(req, sizeof req,
                         "GET /api/fotos?cita_id=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         "Connection: close\r\nAuthorization: ",
                         cita);
        memcpy(req + n, raw[i].value, raw[i].len);
        n += (int)raw[i].len;
        memcpy(req + n, "\r\n\r\n", 4);
        n += 4;
        char *reply = NULL;
        long st = raw_http(&F.s, req, (size_t)n, 30000, &reply);
        expect_raw_error(st, reply, 401, "No autenticado");
        free(reply);
    }
    /* a token on the upload, with a body */
    struct part parts[3] = {
        {"file", "x", 1, "a.png", "image/png"},
        {"cita_id", cita, 0, NULL, NULL},
        {"tipo", "antes", 0, NULL, NULL},
    };
    struct resp r;
    http_multipart(&F.s, "/api/fotos", too_long, parts, 3, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    expect_healthy(&F.s);
}

static void non_uuid_ids_are_plain_not_found(void **state)
{
    (void)state;
    static const char *const ids[] = {"x",
                                      "123",
                                      "not-a-uuid",
                                      "%27%20OR%20%271%27%3D%271",
                                      "..%2F..%2Fetc%2Fpasswd",
                                      "9B2C7E10-5D4A-4F3B-8C21-0A1B2C3D4E5F0",
                                      "%01",
                                      "%FF%FE"};
    char path[256];
    struct resp r;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        snprintf(path, sizeof path, "/api/fotos?cita_id=%s", ids[i]);
        http_get(&F.s, path, U.token, &r);
        if (r.status != 200 || json_array_size(json_object_get(r.json, "fotos")) != 0)
            fail_msg("GET %s: expected 200 and no photos, got %ld %s", path, r.status, r.body);
        resp_free(&r);
        snprintf(path, sizeof path, "/api/fotos?id=%s", ids[i]);
        struct req_opts o = {.token = U.token};
        http_req(&F.s, "DELETE", path, &o, &r);
        expect_error(&r, 404, "Foto no encontrada");
        resp_free(&r);
    }
    struct part parts[3] = {
        {"file", "x", 1, "a.png", "image/png"},
        {"cita_id", "' OR '1'='1", 0, NULL, NULL},
        {"tipo", "antes", 0, NULL, NULL},
    };
    http_multipart(&F.s, "/api/fotos", U.token, parts, 3, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    char body[256];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"no-uuid\",\"fecha_inicio\":"
             "\"2032-05-05T10:00:00Z\"}",
             F.barbero);
    http_json(&F.s, "POST", "/api/citas", U.token, body, &r);
    expect_error(&r, 404, "Servicio no encontrado");
    resp_free(&r);
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"no-uuid\",\"servicio_id\":\"%s\",\"fecha_inicio\":"
             "\"2032-05-05T10:00:00Z\"}",
             F.servicio);
    http_json(&F.s, "POST", "/api/citas", U.token, body, &r);
    expect_error(&r, 404, "Barbero no encontrado");
    resp_free(&r);

    /* object paths that try to leave the bucket, sent exactly as written */
    static const char *const objs[] = {
        "/storage/v1/object/public/fotos-citas/../../barberia.db",
        "/storage/v1/object/public/fotos-citas/%2e%2e/%2e%2e/barberia.db",
        "/storage/v1/object/public/fotos-citas/..%2F..%2Fbarberia.db",
        "/storage/v1/object/public/fotos-citas//etc/passwd",
        "/storage/v1/object/public/fotos-citas/./x",
        "/storage/v1/object/public/.meta/fotos-citas/x",
        "/storage/v1/object/public/.buckets/fotos-citas",
        "/storage/v1/object/public/fotos-citas/%00",
    };
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
        char req[512];
        int n =
            snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", objs[i]);
        char *reply = NULL;
        long st = raw_http(&F.s, req, (size_t)n, 30000, &reply);
        if (st != 404 || strstr(reply, "SQLite format"))
            fail_msg("GET %s: expected 404, got %ld: %.200s", objs[i], st, reply);
        expect_raw_error(st, reply, 404, "No encontrado");
        free(reply);
    }
}

/* --- tipo and file names made to escape
 * ------------------------------------------------------------ */

/* The validity rule of an object key, as the contract states it. */
static bool key_valid(const char *k)
{
    if (!*k) return false;
    const char *seg = k;
    for (const char *p = k;; p++) {
        if (*p == '/' || !*p) {
            size_t n = (size_t)(p - seg);
            if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
                return false;
            if (!*p) break;
            seg = p + 1;
        } else if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            return false;
        }
    }
    return true;
}

static void odd_tipo_values_and_file_names_never_reach_outside_the_bucket(void **state)
{
    (void)state;
    char marker[64], deep[160];
    snprintf(marker, sizeof marker, "barberia-escape-%d", (int)getpid());
    snprintf(deep, sizeof deep, "../../../../../../../../../../../../tmp/%s", marker);
    /* expected status: 201 when the key is valid, 500 with the store's refusal
     * when it is not, 400 when tipo is empty */
    const struct {
        const char *tipo, *filename;
        long status;
    } cases[] = {
        {"../x", "a.png", 500},
        {"a/../../b", "a.png", 500},
        {"..", "a.png", 201}, /* "..-<ms>.png" is an ordinary name */
        {".", "a.png", 201},  /* ".-<ms>.png" too */
        {"", "a.png", 400},
        {"a\001b", "a.png", 500},
        {"a\nb", "a.png", 500},
        {"a\x7f", "a.png", 500},
        {"\xff\xfe", "a.png", 500},
        {"\xc3\x28", "a.png", 500},
        {"x/y", "a.png", 201}, /* a sub-folder inside the bucket */
        {"/abs", "a.png", 500},
        {"trail/", "a.png", 201}, /* "trail/-<ms>.png" */
        {deep, "a.png", 500},
        {"sl1", "../../x", 201}, /* extension "/x": a sub-folder */
        {"sl2", "a./../b", 201}, /* extension "/b" */
        {"sl3", "x.\x01", 500},
        {"sl4", "dir/photo.png", 201},
        {"sl5", "x./..", 201}, /* ends with a dot: no extension, "jpg" */
        {"sl6", "x./", 500},
        {"sl7", "x.\xff", 500},
        {"sl8", "../../../../../../../../../../x.png", 201}, /* only the extension counts */
        {"sl9", "x./../../../../../../../../../../../../tmp/y", 201}, /* "/tmp/y": inside */
        {"sl10", "x.a//b", 500},                                      /* an empty segment */
    };
    struct tree before, after;
    tree_walk(&before, F.s.dir);
    char bucket_real[PATH_MAX], bucket[512];
    snprintf(bucket, sizeof bucket, "%s/storage/fotos-citas", F.s.data);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct part parts[3] = {
            {"file", "odd", 3, cases[i].filename, "image/png"},
            {"cita_id", cita, 0, NULL, NULL},
            {"tipo", cases[i].tipo, 0, NULL, NULL},
        };
        struct resp r;
        /* an empty tipo is sent as an empty part (len 0 means strlen) */
        http_multipart(&F.s, "/api/fotos", V.token, parts, 3, &r);
        if (r.status != cases[i].status)
            fail_msg("case %zu (tipo \"%s\", file \"%s\"): expected %ld, got %ld %s", i,
                     cases[i].tipo, cases[i].filename, cases[i].status, r.status, r.body);
        if (r.status == 500) {
            const char *e = jstr(r.json, "error");
            if (!e || strcmp(e, "Error al subir imagen: clave de objeto inválida") != 0)
                fail_msg("case %zu: unclear 500: %s", i, r.body);
        } else if (r.status == 400) {
            const char *e = jstr(r.json, "error");
            if (!e || strcmp(e, "Faltan campos requeridos") != 0)
                fail_msg("case %zu: unclear 400: %s", i, r.body);
        } else {
            const char *key = jstr(json_object_get(r.json, "foto"), "storage_path");
            if (!key || !key_valid(key)) fail_msg("case %zu: 201 with key %s", i, key ? key : "?");
            char file[1024], real[PATH_MAX];
            snprintf(file, sizeof file, "%s/%s", bucket, key);
            if (!realpath(bucket, bucket_real) || !realpath(file, real))
                fail_msg("case %zu: no object file at %s", i, file);
            size_t bl = strlen(bucket_real);
            if (strncmp(real, bucket_real, bl) != 0 || real[bl] != '/')
                fail_msg("case %zu: object %s is outside the bucket", i, real);
            char *got = read_file(file, NULL);
            assert_non_null(got);
            assert_string_equal(got, "odd");
            free(got);
            /* and the service serves it back */
            char *enc = strdup(jstr(json_object_get(r.json, "foto"), "url"));
            struct resp g;
            http_get(&F.s, enc + strlen(F.s.base), NULL, &g);
            assert_int_equal(g.status, 200);
            assert_string_equal(g.body, "odd");
            resp_free(&g);
            free(enc);
        }
        resp_free(&r);
    }
    tree_walk(&after, F.s.dir);
    for (size_t i = 0; i < after.n; i++)
        if (!tree_has(&before, after.paths[i]) && !in_bucket(after.paths[i]))
            fail_msg("an upload created %s outside the bucket", after.paths[i]);
    for (size_t i = 0; i < before.n; i++)
        if (!tree_has(&after, before.paths[i])) fail_msg("an upload removed %s", before.paths[i]);
    tree_free(&before);
    tree_free(&after);
    assert_int_equal(tmp_entries_with(marker), 0);
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/storage/.tmp", F.s.data);
    assert_int_equal(count_files(tmp), 0);
    assert_int_equal(db_exec(&F.s, "DELETE FROM fotos_cita;", NULL), 0);
}

/* --- sizes of JSON bodies and headers -----------------------------------------------------------
 */

/* A login body of exactly n bytes (n >= 64). */
static char *login_body(size_t n)
{
    static const char head[] = "{\"email\":\"nadie@test.example\",\"password\":\"";
    static const char tail[] = "\"}";
    size_t pad = n - (sizeof head - 1) - (sizeof tail - 1);
    char *b = malloc(n + 1);
    memcpy(b, head, sizeof head - 1);
    memset(b + sizeof head - 1, 'p', pad);
    memcpy(b + sizeof head - 1 + pad, tail, sizeof tail);
    assert_int_equal(strlen(b), n);
    return b;
}

static void json_body_over_64kib_is_413(void **state)
{
    (void)state;
    char *exact = login_body(64 * 1024);
    char *over = login_body(64 * 1024 + 1);
    char *huge = login_body(3 * MIB);
    struct resp r;
    /* exactly 64 KiB is read: the credentials are just wrong */
    http_json(&F.s, "POST", "/api/auth/login", NULL, exact, &r);
    expect_error(&r, 401, "Credenciales inválidas");
    resp_free(&r);
    http_json(&F.s, "POST", "/api/auth/login", NULL, over, &r);
    expect_error(&r, 413, "Cuerpo demasiado grande");
    resp_free(&r);
    http_json(&F.s, "POST", "/api/auth/login", NULL, huge, &r);
    expect_error(&r, 413, "Cuerpo demasiado grande");
    resp_free(&r);
    http_json(&F.s, "POST", "/api/citas", U.token, over, &r);
    expect_error(&r, 413, "Cuerpo demasiado grande");
    resp_free(&r);

    /* without a Content-Length: chunked */
    static const char *const chunked[] = {"Transfer-Encoding: chunked", NULL};
    struct req_opts o = {.body = over, .headers = chunked};
    http_req(&F.s, "POST", "/api/auth/login", &o, &r);
    expect_error(&r, 413, "Cuerpo demasiado grande");
    resp_free(&r);
    o = (struct req_opts){.token = U.token, .body = over, .headers = chunked};
    http_req(&F.s, "POST", "/api/citas", &o, &r);
    expect_error(&r, 413, "Cuerpo demasiado grande");
    resp_free(&r);
    o = (struct req_opts){.body = exact, .headers = chunked};
    http_req(&F.s, "POST", "/api/auth/login", &o, &r);
    expect_error(&r, 401, "Credenciales inválidas");
    resp_free(&r);
    /* a chunked body far past the cap: refused, not read to the end */
    char *req = NULL;
    int hn = asprintf(&req,
                      "POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "%zx\r\n",
                      (size_t)(3 * MIB));
    assert_true(hn > 0);
    char *msg = malloc((size_t)hn + 3 * MIB);
    memcpy(msg, req, (size_t)hn);
    memcpy(msg + hn, huge, 3 * MIB);
    char *reply = NULL;
    long st = raw_http(&F.s, msg, (size_t)hn + 3 * MIB, 30000, &reply);
    /* the service hangs up after a bounded drain; when the answer arrives it is 413 */
    if (st != 0) expect_raw_error(st, reply, 413, "Cuerpo demasiado grande");
    free(reply);
    free(msg);
    free(req);
    free(exact);
    free(over);
    free(huge);
    expect_healthy(&F.s);
}

static void request_headers_over_the_limit_get_a_4xx_and_the_server_keeps_serving(void **state)
{
    (void)state;
    /* one huge header */
    size_t big = 100 * 1024;
    char *req = malloc(big + 256);
    int n = snprintf(req, 256,
                     "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Big: ");
    memset(req + n, 'h', big);
    memcpy(req + n + big, "\r\n\r\n", 4);
    char *reply = NULL;
    long st = raw_http(&F.s, req, (size_t)n + big + 4, 30000, &reply);
    if (st < 400 || st > 499) fail_msg("a 100 KiB header got %ld: %.200s", st, reply);
    free(reply);
    free(req);

    /* many headers */
    size_t cap = 4000 * 40 + 256;
    req = malloc(cap);
    size_t len = (size_t)snprintf(
        req, cap, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (int i = 0; i < 4000; i++)
        len += (size_t)snprintf(req + len, cap - len, "X-H%d: vvvvvvvvvvvvvvvvvvvvvv\r\n", i);
    len += (size_t)snprintf(req + len, cap - len, "\r\n");
    st = raw_http(&F.s, req, len, 30000, &reply);
    if (st < 400 || st > 499) fail_msg("4000 headers got %ld: %.200s", st, reply);
    free(reply);
    free(req);

    /* a huge URL */
    req = malloc(big + 256);
    n = snprintf(req, 256, "GET /api/fotos?cita_id=");
    memset(req + n, 'q', big);
    len = (size_t)n + big;
    len += (size_t)snprintf(req + len, 256,
                            " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    st = raw_http(&F.s, req, len, 30000, &reply);
    if (st < 400 || st > 499) fail_msg("a 100 KiB URL got %ld: %.200s", st, reply);
    free(reply);
    free(req);

    /* the service is still there, for everyone */
    expect_healthy(&F.s);
    struct resp r;
    http_get(&F.s, "/api/auth/me", U.token, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

int main(void)
{
    test_folder_store(); /* checks that nothing but the photo files changes in the data folder */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_50mb_upload_is_refused_without_the_server_holding_more_than_5mib),
        cmocka_unit_test(a_form_declaring_more_than_256mib_is_refused_before_its_body),
        cmocka_unit_test(malformed_multipart_is_400_formulario_invalido_and_creates_no_file),
        cmocka_unit_test(an_upload_cut_off_midway_leaves_no_file_and_no_open_spool),
        cmocka_unit_test(a_form_field_over_1kib_is_judged_not_refused),
        cmocka_unit_test(garbage_tokens_are_401_json),
        cmocka_unit_test(non_uuid_ids_are_plain_not_found),
        cmocka_unit_test(odd_tipo_values_and_file_names_never_reach_outside_the_bucket),
        cmocka_unit_test(json_body_over_64kib_is_413),
        cmocka_unit_test(request_headers_over_the_limit_get_a_4xx_and_the_server_keeps_serving),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
