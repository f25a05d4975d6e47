/*
 * test_objstore_s3.c - the S3 object store adapter (src/objstore/s3.c)
 * against a real S3-compatible server, the one scripts/s3-server starts
 * (scripts/test does): BARBERIA_TEST_S3_URL names it, and
 * BARBERIA_TEST_S3_ACCESS_KEY / BARBERIA_TEST_S3_SECRET_KEY the key pair it
 * accepts. Without BARBERIA_TEST_S3_URL every test is skipped.
 *
 * The server checks Signature V4 but, like S3 for a public bucket, serves
 * unsigned requests too; so "every call is signed" is proven by a wrong
 * secret: each operation must then fail, which an unsigned call would not.
 * Unreachable stores are a closed port (refused at once) and a socket that
 * listens but never answers (the per-call bound must end the call).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "objstore/objstore.h"
#include "util/procid.h"

struct fx {
    char dir[64];       /* the data folder (scratch files) */
    char bucket[64];    /* a bucket of this test only */
    struct config cfg;  /* strings borrowed from the environment or fx */
    struct objstore *o; /* with the right key pair */
};

static const char *env_or(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v && *v ? v : def;
}

static int rm_entry(const char *p, const struct stat *sb, int f, struct FTW *w)
{
    (void)sb;
    (void)f;
    (void)w;
    return remove(p);
}

static void base_config(struct fx *f, struct config *c, const char *url)
{
    memset(c, 0, sizeof *c);
    c->data_dir = f->dir;
    c->storage_url = (char *)url;
    c->storage_region = "us-east-1";
    c->storage_access_key = (char *)env_or("BARBERIA_TEST_S3_ACCESS_KEY", "barberia-test");
    c->storage_secret_key = (char *)env_or("BARBERIA_TEST_S3_SECRET_KEY", "barberia-test-secret");
    c->storage_path_style = "auto";
    c->storage_timeout_ms = 5000;
}

static int setup(void **state)
{
    const char *url = getenv("BARBERIA_TEST_S3_URL");
    if (!url || !*url) {
        *state = NULL;
        return 0;
    }
    static int n;
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/barberia-s3-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    unsigned char r[4];
    randombytes_buf(r, sizeof r);
    snprintf(f->bucket, sizeof f->bucket, "t-%ld-%d-%02x%02x%02x%02x", (long)getpid(), n++, r[0],
             r[1], r[2], r[3]);
    base_config(f, &f->cfg, url);
    if (objstore_open(&f->cfg, &f->o) != BR_OK) {
        fprintf(stderr, "objstore_open: %s\n", err_msg());
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    if (!f) return 0;
    obj_close(f->o);
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* The fixture, or a cmocka skip when no server was given. */
static struct fx *fixture(void **state)
{
    if (!*state) skip();
    return *state;
}

/* An unlinked file holding data (len bytes), at offset 0. */
static int file_with(const void *data, size_t len)
{
    char path[] = "/tmp/barberia-s3-up-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    return fd;
}

/* Bytes that hold every value, NULs included, distinct per seed. */
static char *pattern(size_t len, unsigned seed)
{
    char *p = malloc(len);
    for (size_t i = 0; i < len; i++)
        p[i] = (char)(i * 31 + seed * 7 + (i >> 8));
    return p;
}

static br_err put_bytes(struct objstore *o, const char *bucket, const char *key, const char *ct,
                        const void *data, size_t len)
{
    int fd = file_with(data, len);
    br_err rc = obj_put(o, bucket, key, ct, fd, len);
    close(fd);
    return rc;
}

/* Gets bucket/key and checks its bytes and type. */
static void expect_object(struct objstore *o, const char *bucket, const char *key, const char *ct,
                          const char *data, size_t len)
{
    struct obj_info info;
    br_err rc = obj_get(o, bucket, key, &info);
    if (rc) fail_msg("get %s: %d %s", key, rc, err_msg());
    assert_int_equal(info.size, len);
    assert_string_equal(info.content_type, ct);
    assert_int_equal(lseek(info.fd, 0, SEEK_CUR), 0);
    char *got = malloc(len + 1);
    size_t have = 0;
    ssize_t n;
    while ((n = read(info.fd, got + have, len + 1 - have)) > 0)
        have += (size_t)n;
    assert_int_equal(have, len);
    assert_memory_equal(got, data, len);
    /* the local copy has no name: nothing is left in the scratch folder */
    char link[64], target[512];
    snprintf(link, sizeof link, "/proc/self/fd/%d", info.fd);
    ssize_t tl = readlink(link, target, sizeof target - 1);
    assert_true(tl > 0);
    target[tl] = '\0';
    if (!strstr(target, "(deleted)") && !strstr(target, "/#"))
        fail_msg("the local copy %s still has a name", target);
    free(got);
    close(info.fd);
    free(info.content_type);
}

/* A store like f->o but with cfg changed by the caller. */
static struct objstore *open_with(const struct config *c)
{
    struct objstore *o = NULL;
    br_err rc = objstore_open(c, &o);
    if (rc) fail_msg("objstore_open: %s", err_msg());
    return o;
}

/* A loopback port nothing listens on (bound, then closed). */
static int closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    close(s);
    return ntohs(a.sin_port);
}

/* A loopback socket that listens and never answers: the kernel completes
 * connections, nothing reads them. OUT: *port. */
static int silent_listener(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s, 64), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return s;
}

/* --- tests ---------------------------------------------------------------------- */

static void a_missing_bucket_is_created_and_an_existing_one_accepted(void **state)
{
    struct fx *f = fixture(state);
    const char *d = "hola";
    /* no bucket yet: the store's NoSuchBucket comes back as a detail */
    assert_int_equal(put_bytes(f->o, f->bucket, "a.png", "image/png", d, 4), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "NoSuchBucket"));
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    /* another process (a fresh store) finds it there */
    struct objstore *o2 = open_with(&f->cfg);
    assert_int_equal(obj_ensure_bucket(o2, f->bucket, true, 0), BR_OK);
    obj_close(o2);
    assert_int_equal(put_bytes(f->o, f->bucket, "a.png", "image/png", d, 4), BR_OK);
    expect_object(f->o, f->bucket, "a.png", "image/png", d, 4);
    assert_int_equal(obj_ensure_bucket(f->o, "No_Such", true, 0), BR_OBJSTORE);
}

static void put_then_get_returns_the_exact_bytes_and_content_type(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    static const struct {
        const char *key;
        size_t len;
        const char *ct;
    } cases[] = {
        {"u1/c1/antes-1.png", 300, "image/png"},
        {"u1/c1/después 2 (copia).jpg", 1, "image/jpeg"},
        {"u1/c1/a+b=c&d?e#f%20.webp", 70000, "image/webp"},
        {"vacío.png", 0, "image/png"},
        /* several MiB: streamed both ways */
        {"u2/grande.png", 5u * 1024 * 1024 + 17, "image/png"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *d = pattern(cases[i].len, (unsigned)i);
        br_err rc = put_bytes(f->o, f->bucket, cases[i].key, cases[i].ct, d, cases[i].len);
        if (rc) fail_msg("put %s: %s", cases[i].key, err_msg());
        expect_object(f->o, f->bucket, cases[i].key, cases[i].ct, d, cases[i].len);
        free(d);
    }
}

static void an_existing_object_is_never_overwritten(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    assert_int_equal(put_bytes(f->o, f->bucket, "k/uno.png", "image/png", "primero", 7), BR_OK);
    assert_int_equal(put_bytes(f->o, f->bucket, "k/uno.png", "image/gif", "segundo!", 8),
                     BR_CONFLICT);
    expect_object(f->o, f->bucket, "k/uno.png", "image/png", "primero", 7);
}

static void get_of_a_missing_object_is_notfound_and_remove_makes_it_missing(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    struct obj_info info;
    assert_int_equal(obj_get(f->o, f->bucket, "no/hay.png", &info), BR_NOTFOUND);
    assert_int_equal(put_bytes(f->o, f->bucket, "x/y.png", "image/png", "abc", 3), BR_OK);
    assert_int_equal(obj_remove(f->o, f->bucket, "x/y.png"), BR_OK);
    assert_int_equal(obj_get(f->o, f->bucket, "x/y.png", &info), BR_NOTFOUND);
    /* removing what is not there succeeds */
    assert_int_equal(obj_remove(f->o, f->bucket, "x/y.png"), BR_OK);
    assert_int_equal(obj_remove(f->o, f->bucket, "nunca/existio.png"), BR_OK);
    /* a removed key can be used again */
    assert_int_equal(put_bytes(f->o, f->bucket, "x/y.png", "image/png", "otra", 4), BR_OK);
    expect_object(f->o, f->bucket, "x/y.png", "image/png", "otra", 4);
}

static void invalid_keys_and_types_are_refused_before_any_request(void **state)
{
    struct fx *f = fixture(state);
    /* a store whose every request would hang: a refusal must come at once */
    int port = 0;
    int lsn = silent_listener(&port);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    struct config c;
    base_config(f, &c, url);
    struct objstore *o = open_with(&c);
    static const char *const bad[] = {"",          "/a.png",      "a//b.png", "a/../b.png",
                                      "../a.png",  "./a.png",     "a/.",      "a\nb.png",
                                      "a\x7f.png", "\xff\xfe.png"};
    int64_t t0 = clock_mono_ms();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(put_bytes(o, f->bucket, bad[i], "image/png", "x", 1), BR_OBJSTORE);
        assert_non_null(strstr(err_msg(), "clave de objeto inválida"));
        struct obj_info info;
        assert_int_equal(obj_get(o, f->bucket, bad[i], &info), BR_NOTFOUND);
        assert_int_equal(obj_remove(o, f->bucket, bad[i]), BR_OK);
    }
    assert_int_equal(put_bytes(o, f->bucket, "ok.png", "image\npng", "x", 1), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "tipo de contenido"));
    assert_int_equal(put_bytes(o, "Bad_Bucket", "ok.png", "image/png", "x", 1), BR_OBJSTORE);
    assert_true(clock_mono_ms() - t0 < 1000);
    obj_close(o);
    close(lsn);
}

static void an_object_over_the_bucket_limit_is_refused_before_upload(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 1000), BR_OK);
    char *d = pattern(1001, 3);
    assert_int_equal(put_bytes(f->o, f->bucket, "big.png", "image/png", d, 1001), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "límite de 1000 bytes"));
    struct obj_info info;
    assert_int_equal(obj_get(f->o, f->bucket, "big.png", &info), BR_NOTFOUND);
    assert_int_equal(put_bytes(f->o, f->bucket, "fits.png", "image/png", d, 1000), BR_OK);
    free(d);
}

static void an_upload_shorter_than_announced_stores_nothing(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    int fd = file_with("corto", 5);
    assert_int_equal(obj_put(f->o, f->bucket, "short.png", "image/png", fd, 5000), BR_OBJSTORE);
    close(fd);
    assert_non_null(strstr(err_msg(), "shorter than announced"));
    struct obj_info info;
    assert_int_equal(obj_get(f->o, f->bucket, "short.png", &info), BR_NOTFOUND);
}

/* --- what older versions stored --------------------------------------------------------- */

struct raw {
    long status;
    char headers[4096]; /* the answer's header block, cut at its size */
    size_t hlen;
};

static size_t raw_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct raw *r = ud;
    size_t n = size * nmemb, room = sizeof r->headers - 1 - r->hlen;
    memcpy(r->headers + r->hlen, data, n < room ? n : room);
    r->hlen += n < room ? n : room;
    r->headers[r->hlen] = '\0';
    return n;
}

static size_t raw_discard(char *data, size_t size, size_t nmemb, void *ud)
{
    (void)data;
    (void)ud;
    return size * nmemb;
}

/* An unsigned call to bucket/key on the test server, as a reader or an
 * older version's write would make it: GET, or PUT of body as type. */
static void raw_call(const struct fx *f, const char *method, const char *key, const char *type,
                     const char *body, struct raw *r)
{
    memset(r, 0, sizeof *r);
    char url[512], header[320];
    snprintf(url, sizeof url, "%s/%s/%s", f->cfg.storage_url, f->bucket, key);
    CURL *c = curl_easy_init();
    struct curl_slist *hs = NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, raw_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, raw_discard);
    if (!strcmp(method, "PUT")) {
        snprintf(header, sizeof header, "Content-Type: %s", type);
        hs = curl_slist_append(hs, header);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(hs);
    curl_easy_cleanup(c);
}

/* Whether an answer's header block holds the line "Name: value". */
static bool has_header(const struct raw *r, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = r->headers; (p = strcasestr(p, line)) != NULL; p += n)
        if ((p == r->headers || p[-1] == '\n') && (p[n] == '\r' || p[n] == '\n')) return true;
    return false;
}

static void put_stores_the_canonical_type_and_an_attachment_for_non_raster(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    static const struct {
        const char *key, *declared, *stored;
        bool attachment;
    } cases[] = {
        {"a.png", "IMAGE/PNG; charset=x", "image/png", false},
        {"b.png", "image/png,text/javascript", "application/octet-stream", true},
        {"c.gif", "image/gif;a=b,text/html", "application/octet-stream", true},
        {"d.svg", "image/svg+xml", "image/svg+xml", true},
        {"e.heic", "image/heic", "image/heic", false},
        {"f.txt", "text/html", "application/octet-stream", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(put_bytes(f->o, f->bucket, cases[i].key, cases[i].declared, "x", 1),
                         BR_OK);
        expect_object(f->o, f->bucket, cases[i].key, cases[i].stored, "x", 1);
        /* what a reader of the store's own URL gets */
        struct raw r;
        raw_call(f, "GET", cases[i].key, NULL, NULL, &r);
        assert_int_equal(r.status, 200);
        char line[300];
        snprintf(line, sizeof line, "Content-Type: %s", cases[i].stored);
        if (!has_header(&r, line)) fail_msg("%s: no %s in\n%s", cases[i].key, line, r.headers);
        if (has_header(&r, "Content-Disposition: attachment") != cases[i].attachment)
            fail_msg("%s: Content-Disposition wrong in\n%s", cases[i].key, r.headers);
    }
}

/* The keys obj_each handed over. */
struct seen {
    char **keys;
    size_t n;
};

static br_err collect(void *ud, const char *key)
{
    struct seen *s = ud;
    s->keys = realloc(s->keys, (s->n + 1) * sizeof *s->keys);
    s->keys[s->n++] = strdup(key);
    return BR_OK;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static br_err stop_at_third(void *ud, const char *key)
{
    (void)key;
    return ++*(int *)ud == 3 ? err_set(BR_STORE, "stopped") : BR_OK;
}

static void each_walks_every_key_once_across_pages(void **state)
{
    struct fx *f = fixture(state);
    struct seen seen = {0};
    /* no bucket yet: nothing */
    assert_int_equal(obj_each(f->o, f->bucket, collect, &seen), BR_OK);
    assert_int_equal(seen.n, 0);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    assert_int_equal(obj_each(f->o, f->bucket, collect, &seen), BR_OK);
    assert_int_equal(seen.n, 0);
    /* more than one answer's worth (1000 keys), and keys XML must escape
     * (the test server escapes & < > ' twice: only '"' is tried here) */
    enum { N = 1003 };
    char **want = calloc(N + 2, sizeof *want);
    for (int i = 0; i < N; i++) {
        want[i] = malloc(32);
        snprintf(want[i], 32, "u/c/antes-%04d.png", i);
    }
    want[N] = strdup("u/c/comillas \"dobles\".png");
    want[N + 1] = strdup("u/c/ñandú 1.png");
    for (int i = 0; i < N + 2; i++)
        if (put_bytes(f->o, f->bucket, want[i], "image/png", "x", 1) != BR_OK)
            fail_msg("put %s: %s", want[i], err_msg());
    if (obj_each(f->o, f->bucket, collect, &seen) != BR_OK) fail_msg("each: %s", err_msg());
    assert_int_equal(seen.n, N + 2);
    qsort(seen.keys, seen.n, sizeof *seen.keys, by_text);
    qsort(want, N + 2, sizeof *want, by_text);
    for (size_t i = 0; i < seen.n; i++)
        assert_string_equal(seen.keys[i], want[i]);
    /* the callback's error ends the walk */
    int calls = 0;
    assert_int_equal(obj_each(f->o, f->bucket, stop_at_third, &calls), BR_STORE);
    assert_int_equal(calls, 3);
    for (size_t i = 0; i < seen.n; i++)
        free(seen.keys[i]);
    free(seen.keys);
    for (int i = 0; i < N + 2; i++)
        free(want[i]);
    free(want);
}

static void retype_rewrites_what_an_older_version_stored_once(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    assert_true(obj_retypes(f->o));
    /* stored as an older version stored them: the declared text, no disposition */
    static const struct {
        const char *key, *old, *stored;
        bool attachment;
    } cases[] = {
        {"u/c/list.png", "image/png,text/javascript", "application/octet-stream", true},
        {"u/c/html.gif", "image/gif;a=b,text/html", "application/octet-stream", true},
        {"u/c/upper.png", "IMAGE/PNG; charset=x", "image/png", false},
        {"u/c/svg.svg", "image/svg+xml", "image/svg+xml", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct raw r;
        raw_call(f, "PUT", cases[i].key, cases[i].old, "old bytes", &r);
        assert_int_equal(r.status, 200);
        bool changed = false;
        if (obj_retype(f->o, f->bucket, cases[i].key, &changed) != BR_OK)
            fail_msg("retype %s: %s", cases[i].key, err_msg());
        assert_true(changed);
        expect_object(f->o, f->bucket, cases[i].key, cases[i].stored, "old bytes", 9);
        raw_call(f, "GET", cases[i].key, NULL, NULL, &r);
        assert_int_equal(has_header(&r, "Content-Disposition: attachment"), cases[i].attachment);
        /* once is enough */
        assert_int_equal(obj_retype(f->o, f->bucket, cases[i].key, &changed), BR_OK);
        assert_false(changed);
    }
    /* what put stores today is left alone */
    assert_int_equal(put_bytes(f->o, f->bucket, "u/c/new.svg", "image/svg+xml", "new", 3), BR_OK);
    assert_int_equal(put_bytes(f->o, f->bucket, "u/c/new.png", "image/png", "new", 3), BR_OK);
    bool changed = true;
    assert_int_equal(obj_retype(f->o, f->bucket, "u/c/new.svg", &changed), BR_OK);
    assert_false(changed);
    assert_int_equal(obj_retype(f->o, f->bucket, "u/c/new.png", &changed), BR_OK);
    assert_false(changed);
    assert_int_equal(obj_retype(f->o, f->bucket, "u/c/missing.png", &changed), BR_NOTFOUND);
    assert_int_equal(obj_retype(f->o, f->bucket, "../x.png", &changed), BR_NOTFOUND);
}

static void a_wrong_secret_fails_every_call(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    assert_int_equal(put_bytes(f->o, f->bucket, "mine.png", "image/png", "mio", 3), BR_OK);

    static const char wrong_secret[] = "not-the-secret-9c1e";
    struct config c = f->cfg;
    c.storage_secret_key = (char *)wrong_secret;
    struct objstore *o = open_with(&c);
    /* the server serves unsigned calls: each failure proves a signature */
    char other[80];
    snprintf(other, sizeof other, "%s-x", f->bucket);
    assert_int_equal(obj_ensure_bucket(o, other, true, 0), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "HTTP 403")); /* a HEAD: no body, no code */
    assert_null(strstr(err_msg(), wrong_secret));
    assert_int_equal(put_bytes(o, f->bucket, "theirs.png", "image/png", "x", 1), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "SignatureDoesNotMatch"));
    struct obj_info info;
    assert_int_equal(obj_get(o, f->bucket, "mine.png", &info), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "SignatureDoesNotMatch"));
    assert_int_equal(obj_remove(o, f->bucket, "mine.png"), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "SignatureDoesNotMatch"));
    int calls = 0;
    assert_int_equal(obj_each(o, f->bucket, stop_at_third, &calls), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "SignatureDoesNotMatch"));
    assert_int_equal(calls, 0);
    bool changed = true;
    assert_int_equal(obj_retype(o, f->bucket, "mine.png", &changed), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "HTTP 403"));
    assert_false(changed);
    obj_close(o);
    /* nothing changed */
    expect_object(f->o, f->bucket, "mine.png", "image/png", "mio", 3);
    assert_int_equal(obj_get(f->o, f->bucket, "theirs.png", &info), BR_NOTFOUND);

    /* an access key the server does not know */
    c = f->cfg;
    c.storage_access_key = "nobody";
    o = open_with(&c);
    assert_int_equal(obj_get(o, f->bucket, "mine.png", &info), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "InvalidAccessKeyId"));
    obj_close(o);
}

static void a_stopped_store_fails_every_call_within_the_bound(void **state)
{
    struct fx *f = fixture(state);
    char url[64];
    struct config c;
    struct obj_info info;
    /* refused at once */
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
    base_config(f, &c, url);
    struct objstore *o = open_with(&c);
    int64_t t0 = clock_mono_ms();
    assert_int_equal(obj_ensure_bucket(o, f->bucket, true, 0), BR_OBJSTORE);
    assert_int_equal(put_bytes(o, f->bucket, "a.png", "image/png", "x", 1), BR_OBJSTORE);
    assert_non_null(strstr(err_msg(), "S3 HEAD"));
    assert_null(strstr(err_msg(), "127.0.0.1")); /* no host in what a client may see */
    assert_int_equal(obj_get(o, f->bucket, "a.png", &info), BR_OBJSTORE);
    assert_int_equal(obj_remove(o, f->bucket, "a.png"), BR_OBJSTORE);
    assert_true(clock_mono_ms() - t0 < 2000);
    obj_close(o);

    /* accepted by the kernel, never answered: each call ends at the bound */
    int port = 0;
    int lsn = silent_listener(&port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    base_config(f, &c, url);
    c.storage_timeout_ms = 300;
    o = open_with(&c);
    t0 = clock_mono_ms();
    assert_int_equal(put_bytes(o, f->bucket, "a.png", "image/png", "x", 1), BR_OBJSTORE);
    int64_t took = clock_mono_ms() - t0;
    assert_non_null(strstr(err_msg(), "no answer within 300 ms"));
    assert_true(took >= 250 && took < 3000);
    t0 = clock_mono_ms();
    assert_int_equal(obj_get(o, f->bucket, "a.png", &info), BR_OBJSTORE);
    assert_int_equal(obj_remove(o, f->bucket, "a.png"), BR_OBJSTORE);
    assert_true(clock_mono_ms() - t0 < 6000);
    obj_close(o);
    close(lsn);
}

static void public_url_points_at_the_store_only_when_configured(void **state)
{
    struct fx *f = fixture(state);
    assert_int_equal(obj_ensure_bucket(f->o, f->bucket, true, 0), BR_OK);
    assert_null(obj_public_url(f->o, f->bucket, "a b.png"));

    char base[256];
    snprintf(base, sizeof base, "%s/%s/", f->cfg.storage_url, f->bucket);
    struct config c = f->cfg;
    c.storage_public_url = base;
    struct objstore *o = open_with(&c);
    assert_int_equal(obj_ensure_bucket(o, f->bucket, true, 0), BR_OK);
    char *d = pattern(2000, 9);
    assert_int_equal(put_bytes(o, f->bucket, "p/a b.png", "image/png", d, 2000), BR_OK);
    char *url = obj_public_url(o, f->bucket, "p/a b.png");
    char want[512];
    snprintf(want, sizeof want, "%s/%s/p/a%%20b.png", f->cfg.storage_url, f->bucket);
    assert_string_equal(url, want);
    /* a private bucket has no public URL */
    char priv[80];
    snprintf(priv, sizeof priv, "%s-p", f->bucket);
    assert_int_equal(obj_ensure_bucket(o, priv, false, 0), BR_OK);
    assert_null(obj_public_url(o, priv, "p/a b.png"));
    obj_close(o);
    free(url);
    free(d);
}

/* --- virtual-hosted addressing ------------------------------------------------ */

/* s3rver cannot check a virtual-hosted request's signature (it signs the
 * path with the bucket in front, as for the old V2 scheme), so these
 * requests go to a recorder instead: a loopback listener that notes each
 * request's line, Host and Authorization and answers like a bucket that
 * exists and holds no object. */
struct recorder {
    int lsn, port;
    pthread_t th;
    pthread_mutex_t mu;
    char seen[16][1024]; /* "METHOD TARGET|HOST|AUTHORIZATION" */
    int n;
    int conns; /* connections accepted */
    /* 0: as above; 1: the first PUT of a key answers 500 InternalError, the
     * next ones 200; 2: the first answers 500 but stores it, the next ones
     * 412 (a HEAD of the key then finds it, 3 bytes) */
    int mode;
    int puts;
};

static const char *header_value(const char *head, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *l = strstr(head, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
        if (strncasecmp(l + 2, name, nl) || l[2 + nl] != ':') continue;
        const char *v = l + 3 + nl;
        while (*v == ' ')
            v++;
        size_t len = strcspn(v, "\r");
        if (len >= cap) len = cap - 1;
        memcpy(out, v, len);
        out[len] = '\0';
        return out;
    }
    out[0] = '\0';
    return out;
}

static void *recorder_run(void *arg)
{
    struct recorder *r = arg;
    for (;;) {
        int c = accept(r->lsn, NULL, NULL);
        if (c < 0) return NULL;
        pthread_mutex_lock(&r->mu);
        r->conns++;
        pthread_mutex_unlock(&r->mu);
        char buf[16384];
        size_t have = 0;
        for (;;) {
            ssize_t got = read(c, buf + have, sizeof buf - 1 - have);
            if (got <= 0) break;
            have += (size_t)got;
            buf[have] = '\0';
            char *end = strstr(buf, "\r\n\r\n");
            if (!end) continue;
            char host[256], auth[256], len[32];
            header_value(buf, "Host", host, sizeof host);
            header_value(buf, "Authorization", auth, sizeof auth);
            size_t body =
                (size_t)strtoul(header_value(buf, "Content-Length", len, sizeof len), NULL, 10);
            size_t head = (size_t)(end + 4 - buf);
            while (have < head + body) { /* the body is read and dropped */
                got = read(c, buf + head, sizeof buf - 1 - head);
                if (got <= 0) break;
                have += (size_t)got;
                if (have > head + body) break;
            }
            pthread_mutex_lock(&r->mu);
            if (r->n < 16)
                snprintf(r->seen[r->n++], sizeof r->seen[0], "%.*s|%s|%s", (int)strcspn(buf, "\r"),
                         buf, host, auth);
            pthread_mutex_unlock(&r->mu);
            /* the request-target names a key when it has a second '/' (path-style) or
             * anything after the first (virtual-hosted: "/" is the bucket) */
            const char *target = strchr(buf, ' ') + 1;
            size_t tlen = strcspn(target, " ");
            const char *second = memchr(target + 1, '/', tlen - 1);
            bool names_key = (r->mode ? second != NULL : tlen > 1);
            bool bucket_head = !strncmp(buf, "HEAD ", 5) && !names_key;
            bool key_put = !strncmp(buf, "PUT ", 4) && names_key;
            pthread_mutex_lock(&r->mu);
            int puts = key_put ? ++r->puts : r->puts;
            pthread_mutex_unlock(&r->mu);
            static const char failed[] =
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/xml\r\n"
                "Content-Length: 116\r\n\r\n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<Error><Code>InternalError</Code><Message>Please try again.</Message></Error>";
            const char *ans = !strncmp(buf, "HEAD ", 5) && !bucket_head
                                  ? (r->mode == 2 && puts > 0
                                         ? "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"
                                         : "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                              : key_put && r->mode && puts == 1 ? failed
                              : key_put && r->mode == 2
                                  ? "HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\n"
                                  : "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
            if (write(c, ans, strlen(ans)) < 0) break;
            have = 0;
        }
        close(c);
    }
}

static void
virtual_hosted_calls_name_the_bucket_in_the_host_sign_it_and_reuse_connections(void **state)
{
    struct fx *f = fixture(state);
    struct recorder *r = calloc(1, sizeof *r);
    r->lsn = silent_listener(&r->port);
    pthread_mutex_init(&r->mu, NULL);
    assert_int_equal(pthread_create(&r->th, NULL, recorder_run, r), 0);
    char url[128];
    snprintf(url, sizeof url, "http://s3.localhost:%d", r->port);
    struct config c = f->cfg;
    c.storage_url = url;
    c.storage_path_style = "0";
    struct objstore *v = open_with(&c);
    assert_int_equal(obj_ensure_bucket(v, f->bucket, true, 0), BR_OK);
    assert_int_equal(put_bytes(v, f->bucket, "vh/uno 1.png", "image/png", "uno", 3), BR_OK);
    obj_close(v);
    shutdown(r->lsn, SHUT_RDWR);
    close(r->lsn);
    pthread_join(r->th, NULL);

    char host[200], cred[200];
    snprintf(host, sizeof host, "|%s.s3.localhost:%d|", f->bucket, r->port);
    snprintf(cred, sizeof cred, "AWS4-HMAC-SHA256 Credential=%s/", c.storage_access_key);
    bool put_seen = false;
    assert_true(r->n > 0);
    for (int i = 0; i < r->n; i++) {
        const char *e = r->seen[i];
        /* the bucket is in the host, never in the path; every call signed,
         * the host among the signed headers */
        if (!strstr(e, host)) fail_msg("request %d not addressed to the bucket's host: %s", i, e);
        if (strstr(e, f->bucket) < strchr(e, '|'))
            fail_msg("request %d names the bucket in its path: %s", i, e);
        const char *auth = strrchr(e, '|') + 1;
        if (strncmp(auth, cred, strlen(cred)) || !strstr(auth, "SignedHeaders=") ||
            !strstr(auth, "host") || !strstr(auth, "Signature="))
            fail_msg("request %d is not signed for its host: %s", i, e);
        put_seen |= !strncmp(e, "PUT /vh/uno%201.png HTTP/1.1|", 29);
    }
    if (!put_seen) fail_msg("no PUT of /vh/uno%%201.png; first: %s", r->seen[0]);
    /* one after the other, the calls reuse one kept-alive connection */
    if (r->n < 3 || r->conns != 1) fail_msg("%d requests over %d connections", r->n, r->conns);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* A store's passing failure (500 InternalError; S3's documentation asks
 * for another try) does not fail the upload: the call is tried again. And
 * when the try that answered 500 stored the object after all, the retry's
 * 412 is not taken for somebody else's object. */
static void a_passing_failure_of_the_store_is_tried_again(void **state)
{
    struct fx *f = fixture(state);
    for (int mode = 1; mode <= 2; mode++) {
        struct recorder *r = calloc(1, sizeof *r);
        r->lsn = silent_listener(&r->port);
        r->mode = mode;
        pthread_mutex_init(&r->mu, NULL);
        assert_int_equal(pthread_create(&r->th, NULL, recorder_run, r), 0);
        char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%d", r->port);
        struct config c = f->cfg;
        c.storage_url = url;
        c.storage_path_style = "1";
        struct objstore *v = open_with(&c);
        assert_int_equal(obj_ensure_bucket(v, "bkt", false, 0), BR_OK);
        assert_int_equal(put_bytes(v, "bkt", "k/uno.png", "image/png", "uno", 3), BR_OK);
        obj_close(v);
        shutdown(r->lsn, SHUT_RDWR);
        close(r->lsn);
        pthread_join(r->th, NULL);
        assert_int_equal(r->puts, 2);
        pthread_mutex_destroy(&r->mu);
        free(r);
    }
}

static bool gone_if_odd(void *ud, long pid, const char *instance)
{
    (void)ud;
    (void)instance;
    return pid % 2 == 1;
}

static void sweep_removes_the_scratch_leftovers_of_gone_writers_only(void **state)
{
    struct fx *f = fixture(state);
    char path[256];
    const struct procid *me = procid_self();
    static const long pids[] = {1001, 1002};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/s3-scratch/obj-%ld-%s-abcdef", f->dir, pids[i],
                 me->instance);
        int fd = open(path, O_CREAT | O_WRONLY, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    assert_int_equal(obj_sweep_tmp(f->o, gone_if_odd, NULL, NULL), BR_OK);
    snprintf(path, sizeof path, "%s/s3-scratch/obj-1001-%s-abcdef", f->dir, me->instance);
    assert_int_not_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/s3-scratch/obj-1002-%s-abcdef", f->dir, me->instance);
    assert_int_equal(access(path, F_OK), 0);
}

static void unusable_settings_are_refused_at_open(void **state)
{
    struct fx *f = fixture(state);
    static const struct {
        const char *url, *region, *path_style, *public_url, *needle;
        bool no_keys;
    } cases[] = {
        {"http://h:1", "EU_West", "auto", NULL, "BARBERIA_STORAGE_REGION", false},
        {"http://h:1", "us-east-1", "auto", NULL, "BARBERIA_STORAGE_ACCESS_KEY", true},
        {"http://h:1", "us-east-1", "maybe", NULL, "BARBERIA_STORAGE_PATH_STYLE", false},
        {"http://127.0.0.1:1", "us-east-1", "0", NULL, "IP address", false},
        {"http://u:p@h:1", "us-east-1", "auto", NULL, "credentials", false},
        {"http://h:1/?a=b", "us-east-1", "auto", NULL, "query", false},
        {"ftp://h:1", "us-east-1", "auto", NULL, "unknown scheme", false},
        {"http://h:1", "us-east-1", "auto", "javascript:alert(1)", "PUBLIC_URL", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c;
        base_config(f, &c, cases[i].url);
        c.storage_region = (char *)cases[i].region;
        c.storage_path_style = (char *)cases[i].path_style;
        c.storage_public_url = (char *)cases[i].public_url;
        if (cases[i].no_keys) c.storage_access_key = NULL;
        struct objstore *o = NULL;
        assert_int_equal(objstore_open(&c, &o), BR_CONFIG);
        assert_null(o);
        if (!strstr(err_msg(), cases[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, err_msg(), cases[i].needle);
    }
    /* s3:// is https; alone, it is AWS in the region (virtual-hosted) */
    struct config c;
    base_config(f, &c, "s3://");
    c.storage_region = "eu-west-1";
    struct objstore *o = NULL;
    assert_int_equal(objstore_open(&c, &o), BR_OK);
    assert_string_equal(o->ops->name, "s3");
    obj_close(o);
}

int main(void)
{
    if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(a_missing_bucket_is_created_and_an_existing_one_accepted),
        T(put_then_get_returns_the_exact_bytes_and_content_type),
        T(an_existing_object_is_never_overwritten),
        T(get_of_a_missing_object_is_notfound_and_remove_makes_it_missing),
        T(invalid_keys_and_types_are_refused_before_any_request),
        T(an_object_over_the_bucket_limit_is_refused_before_upload),
        T(an_upload_shorter_than_announced_stores_nothing),
        T(put_stores_the_canonical_type_and_an_attachment_for_non_raster),
        T(each_walks_every_key_once_across_pages),
        T(retype_rewrites_what_an_older_version_stored_once),
        T(a_wrong_secret_fails_every_call),
        T(a_stopped_store_fails_every_call_within_the_bound),
        T(public_url_points_at_the_store_only_when_configured),
        T(virtual_hosted_calls_name_the_bucket_in_the_host_sign_it_and_reuse_connections),
        T(a_passing_failure_of_the_store_is_tried_again),
        T(sweep_removes_the_scratch_leftovers_of_gone_writers_only),
        T(unusable_settings_are_refused_at_open),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
