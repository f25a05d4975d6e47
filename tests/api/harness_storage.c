/*
 * harness_storage.c - the photo store of a test's server, the folder or the S3 test server
 * as the run says: where the photos go and what is in it (see harness.h).
 */
#define _GNU_SOURCE
#include "harness_internal.h"
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- which store -------------------------------------------------------------------------- */

bool test_s3_env(const char **env, size_t *n)
{
    static char url[300], ak[160], sk[160];
    const char *s3 = getenv("BARBERIA_TEST_S3_URL");
    if (!s3 || !*s3) return false;
    const char *a = getenv("BARBERIA_TEST_S3_ACCESS_KEY");
    const char *k = getenv("BARBERIA_TEST_S3_SECRET_KEY");
    snprintf(url, sizeof url, "BARBERIA_STORAGE_URL=%s", s3);
    snprintf(ak, sizeof ak, "BARBERIA_STORAGE_ACCESS_KEY=%s", a && *a ? a : "barberia-test");
    snprintf(sk, sizeof sk, "BARBERIA_STORAGE_SECRET_KEY=%s", k && *k ? k : "barberia-test-secret");
    env[(*n)++] = url;
    env[(*n)++] = ak;
    env[(*n)++] = sk;
    return true;
}

static bool folder_only;

void test_folder_store(void)
{
    folder_only = true;
}

bool test_s3_all(void)
{
    const char *st = getenv("BARBERIA_TEST_STORAGE");
    const char *url = getenv("BARBERIA_TEST_S3_URL");
    return !folder_only && st && !strcmp(st, "s3") && url && *url;
}

/* --- the photo bucket ---------------------------------------------------------------------- */

#define PHOTO_BUCKET "fotos-citas"

/* The room keep_body gives a body of len bytes (and its NUL): doubling, so
 * that a 5 MiB object is not copied again at every 16 KiB chunk (under ASan,
 * on a busy machine, that alone took longer than the call's 10 s bound). */
static size_t body_room(size_t len)
{
    size_t room = 4096;
    while (room < len + 1)
        room *= 2;
    return room;
}

static size_t keep_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct resp *r = ud;
    size_t n = size * nmemb;
    char *b = r->body;
    if (!b || body_room(r->len + n) > body_room(r->len)) b = realloc(b, body_room(r->len + n));
    if (!b) return 0;
    memcpy(b + r->len, data, n);
    r->body = b;
    r->len += n;
    b[r->len] = '\0';
    return n;
}

/* One anonymous call to the S3 test server (it serves unsigned requests,
 * docs/testing.md): the bucket's path plus rest. OUT: *r. Its bound is
 * generous: a loaded machine makes s3rver slow, never wrong (a 5 MiB read
 * took over 10 s in a sanitizer run beside other builds). */
static void s3_call(const char *method, const char *rest, struct resp *r)
{
    memset(r, 0, sizeof *r);
    const char *base = getenv("BARBERIA_TEST_S3_URL");
    if (!base || !*base) fail_msg("no S3 test server (BARBERIA_TEST_S3_URL)");
    harness_curl_once();
    char *url = NULL;
    if (asprintf(&url, "%s/%s/%s", base, PHOTO_BUCKET, rest) < 0) fail_msg("out of memory");
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
    if (!strcmp(method, "HEAD")) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    CURLcode cc = curl_easy_perform(c);
    if (cc != CURLE_OK) fail_msg("S3 %s %s: %s", method, url, curl_easy_strerror(cc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    free(url);
}

/* key with each byte outside [A-Za-z0-9/._~-] percent-encoded. */
static char *key_escaped(const char *key)
{
    size_t n = strlen(key);
    char *out = malloc(n * 3 + 1), *w = out;
    for (const unsigned char *k = (const unsigned char *)key; *k; k++) {
        if ((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ||
            strchr("/._~-", *k))
            *w++ = (char)*k;
        else
            w += snprintf(w, 4, "%%%02X", *k);
    }
    *w = '\0';
    return out;
}

static void folder_object(const struct srv *s, const char *key, char *out, size_t n)
{
    if (snprintf(out, n, "%s/storage/" PHOTO_BUCKET "/%s", s->data, key) >= (int)n)
        fail_msg("path too long");
}

bool obj_exists(const struct srv *s, const char *key)
{
    if (!s->s3) {
        char path[1024];
        folder_object(s, key, path, sizeof path);
        return file_exists(path);
    }
    char *k = key_escaped(key);
    struct resp r;
    s3_call("HEAD", k, &r);
    free(k);
    long st = r.status;
    resp_free(&r);
    if (st != 200 && st != 404) fail_msg("S3 HEAD %s: HTTP %ld", key, st);
    return st == 200;
}

char *obj_read(const struct srv *s, const char *key, size_t *len)
{
    if (!s->s3) {
        char path[1024];
        folder_object(s, key, path, sizeof path);
        return read_file(path, len);
    }
    char *k = key_escaped(key);
    struct resp r;
    s3_call("GET", k, &r);
    free(k);
    if (r.status == 404) {
        resp_free(&r);
        return NULL;
    }
    if (r.status != 200) fail_msg("S3 GET %s: HTTP %ld", key, r.status);
    char *body = r.body ? r.body : strdup("");
    if (len) *len = r.len;
    r.body = NULL;
    resp_free(&r);
    return body;
}

size_t obj_count(const struct srv *s, const char *prefix)
{
    if (!s->s3) {
        char path[1024];
        folder_object(s, prefix, path, sizeof path);
        return count_files(path);
    }
    /* ListObjectsV2 of up to 1000 keys under the prefix: enough here */
    char *p = key_escaped(prefix);
    char *rest = NULL;
    if (asprintf(&rest, "?list-type=2&max-keys=1000&prefix=%s%%2F", p) < 0)
        fail_msg("out of memory");
    free(p);
    struct resp r;
    s3_call("GET", rest, &r);
    free(rest);
    if (r.status == 404) { /* no bucket yet: nothing in it */
        resp_free(&r);
        return 0;
    }
    if (r.status != 200) fail_msg("S3 list %s: HTTP %ld", prefix, r.status);
    size_t n = 0;
    for (const char *k = r.body; (k = strstr(k, "<Key>")) != NULL; k += 5)
        n++;
    resp_free(&r);
    return n;
}

void obj_set_raw_type(const struct srv *s, const char *key, const char *content_type)
{
    if (!s->s3) {
        /* the folder store keeps an object's type in <storage>/.meta/<bucket>/<key> */
        char path[1024];
        if (snprintf(path, sizeof path, "%s/storage/.meta/" PHOTO_BUCKET "/%s", s->data, key) >=
            (int)sizeof path)
            fail_msg("path too long");
        FILE *f = fopen(path, "w");
        if (!f) fail_msg("cannot write %s: %s", path, strerror(errno));
        bool ok = fputs(content_type, f) >= 0;
        if (fclose(f) != 0 || !ok) fail_msg("cannot write %s", path);
        return;
    }
    /* the same bytes put again, anonymously, with exactly that header */
    size_t len = 0;
    char *bytes = obj_read(s, key, &len);
    if (!bytes) fail_msg("no object %s to retype", key);
    const char *base = getenv("BARBERIA_TEST_S3_URL");
    char *k = key_escaped(key), *url = NULL, *header = NULL;
    if (asprintf(&url, "%s/%s/%s", base, PHOTO_BUCKET, k) < 0 ||
        asprintf(&header, "Content-Type: %s", content_type) < 0)
        fail_msg("out of memory");
    struct curl_slist *hs = curl_slist_append(NULL, header);
    struct resp r;
    memset(&r, 0, sizeof r);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, bytes);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    CURLcode cc = curl_easy_perform(c);
    if (cc != CURLE_OK) fail_msg("S3 PUT %s: %s", url, curl_easy_strerror(cc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    if (r.status != 200) fail_msg("S3 PUT %s: HTTP %ld %s", url, r.status, r.body ? r.body : "");
    curl_easy_cleanup(c);
    curl_slist_free_all(hs);
    resp_free(&r);
    free(header);
    free(url);
    free(k);
    free(bytes);
}

/* --- the folder store ----------------------------------------------------------------------- */

void photo_aside(const struct srv *s, bool aside)
{
    char *key = db_query(s, "SELECT storage_path FROM fotos_cita ORDER BY id LIMIT 1");
    char obj[700], moved[720];
    snprintf(obj, sizeof obj, "%s/storage/fotos-citas/%s", s->data, key);
    snprintf(moved, sizeof moved, "%s.aside", obj);
    if (aside ? rename(obj, moved) : rename(moved, obj))
        fail_msg("photo %s: %s", key, strerror(errno));
    free(key);
}
