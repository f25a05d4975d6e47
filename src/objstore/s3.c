/*
 * s3.c - the S3-compatible object store adapter (AWS S3, MinIO, Ceph RGW,
 * Garage, s3rver...), chosen by BARBERIA_STORAGE_URL (see objstore.c and
 * docs/operations.md).
 *
 * Every operation is one or two plain HTTP calls made with libcurl and
 * signed with AWS Signature Version 4 by libcurl itself (CURLOPT_AWS_SIGV4,
 * service "s3"; see s3_call.c); payloads are streamed, never held whole in
 * memory:
 * - put reads the upload with pread(2) from offset 0 as curl asks for it,
 *   after a HEAD that refuses an existing key; the PUT carries
 *   `If-None-Match: *` too, so a store that honours it refuses a racing
 *   writer as well (HTTP 412 -> BR_CONFLICT);
 * - get writes the object into an unlinked temporary file in a local
 *   scratch folder (<data>/s3-scratch) and hands that file back, positioned
 *   at 0, so that the HTTP layer serves it like a folder-store object.
 * Each call is bounded (connect and total time, BARBERIA_STORAGE_TIMEOUT_MS)
 * and never raises signals (CURLOPT_NOSIGNAL). A call that fails logs one
 * warn line (method, bucket, key, the HTTP status and the store's own error
 * code and message, or curl's error, and how long it took); the error detail
 * handed to the caller, which may reach a client, carries the status and
 * the store's code and message but no host name. The secret key never
 * reaches a log line or a detail, and is wiped when the store is closed.
 *
 * The bucket's per-object size limit is ours to enforce (S3 has none): it
 * is remembered from ensure_bucket and checked before any byte is sent.
 *
 * Thread-safety: the store's settings are read-only after open; the table
 * of bucket limits has its own mutex. Each call uses its own curl handle.
 */
#define _GNU_SOURCE
#include "s3_int.h"
#include "../config.h"
#include "../util/log.h"
#include "../util/mediatype.h"
#include "../util/objkey.h"
#include "../util/procid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define REGION_MAX    64
#define LIST_PAGE     1000              /* keys per listing answer (S3's most) */
#define LIST_BODY_MAX (4 * 1024 * 1024) /* what one such answer may take */

/* --- small helpers -------------------------------------------------------------- */

/* True for a non-empty run of printable ASCII without spaces. */
static bool visible_ascii(const char *s)
{
    if (!s || !*s) return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f) return false;
    return true;
}

/* --- buckets -------------------------------------------------------------------- */

static void remember_bucket(struct s3_store *s, const char *bucket, bool public_read,
                            uint64_t limit)
{
    pthread_mutex_lock(&s->lock);
    size_t i = 0;
    while (i < s->nbuckets && strcmp(s->buckets[i].name, bucket) != 0)
        i++;
    if (i == s->nbuckets && s->nbuckets < BUCKETS_MAX) {
        snprintf(s->buckets[i].name, sizeof s->buckets[i].name, "%s", bucket);
        s->nbuckets++;
    }
    if (i < s->nbuckets) {
        s->buckets[i].limit = limit;
        s->buckets[i].public_read = public_read;
    }
    pthread_mutex_unlock(&s->lock);
}

/* What ensure_bucket said of bucket. False when it was never ensured here. */
static bool bucket_known(struct s3_store *s, const char *bucket, struct bucket_limit *out)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->nbuckets && !found; i++) {
        if (!strcmp(s->buckets[i].name, bucket)) {
            *out = s->buckets[i];
            found = true;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* Lets anyone read the bucket's objects (s3:GetObject for "*"). Never a
 * failure of the upload that made the bucket: a later upload would find
 * the bucket there and skip this step, so failing once would only make
 * the outcome depend on which upload came first. A store without bucket
 * policies (HTTP 501 NotImplemented, or 405) is one warn line; a refused
 * or failed policy is a warn line while the service serves the photos
 * itself (it reads with its key), an error line with
 * BARBERIA_STORAGE_PUBLIC_URL, whose URLs then need the operator (see
 * docs/operations.md). */
static void set_public_policy(struct s3_store *s, const char *bucket)
{
    char *policy =
        xasprintf("{\"Version\":\"2012-10-17\",\"Statement\":[{\"Sid\":\"PublicRead\","
                  "\"Effect\":\"Allow\",\"Principal\":\"*\",\"Action\":[\"s3:GetObject\"],"
                  "\"Resource\":[\"arn:aws:s3:::%s/*\"]}]}",
                  bucket);
    struct s3_call c = s3_call_new("PUT", bucket, NULL);
    c.query = "policy=";
    c.body = policy;
    c.body_len = strlen(policy);
    c.content_type = "application/json";
    br_err rc = s3_call_perform(s, &c);
    char why[REASON_MAX + 96];
    if (!rc) s3_call_reason(&c, why, sizeof why);
    const char *after = s->public_base ? "BARBERIA_STORAGE_PUBLIC_URL must serve its objects to "
                                         "anyone: make the bucket readable there by hand"
                                       : "photos are served through the service";
    if (!rc && (c.status == 501 || c.status == 405 || s3_call_has_code(&c, "NotImplemented"))) {
        log_warn("storage: the store does not support bucket policies (%s): bucket %s stays as "
                 "the store makes it; %s",
                 why, bucket, after);
    } else if (rc || c.status < 200 || c.status > 299) {
        if (rc) snprintf(why, sizeof why, "%s", err_msg());
        if (s->public_base)
            log_error("storage: bucket %s could not be made public (%s); %s", bucket, why, after);
        else
            log_warn("storage: bucket %s could not be made public (%s); %s", bucket, why, after);
        err_clear();
    }
    s3_call_done(&c);
    free(policy);
}

static br_err s3_ensure_bucket(struct objstore *o, const char *bucket, bool public_read,
                               uint64_t size_limit)
{
    struct s3_store *s = (struct s3_store *)o;
    struct s3_call c = s3_call_new("HEAD", bucket, NULL);
    br_err rc = s3_call_perform(s, &c);
    bool exists = !rc && c.status == 200;
    if (!rc && !exists && c.status != 404) rc = s3_call_failed(&c);
    s3_call_done(&c);
    bool created = false;
    if (!rc && !exists) {
        /* outside us-east-1 the region must be named in the body */
        char *conf = strcmp(s->region, "us-east-1") != 0
                         ? xasprintf("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/"
                                     "doc/2006-03-01/\"><LocationConstraint>%s</LocationConstraint>"
                                     "</CreateBucketConfiguration>",
                                     s->region)
                         : NULL;
        c = s3_call_new("PUT", bucket, NULL);
        /* an empty body still says Content-Length: 0 */
        c.body = conf ? conf : "";
        c.body_len = strlen(c.body);
        c.content_type = "application/xml";
        rc = s3_call_perform(s, &c);
        created = !rc && c.status >= 200 && c.status <= 299;
        /* a racing request or node made it first (BucketAlreadyOwnedByYou;
         * some stores say BucketAlreadyExists for their own too): as good
         * when it now answers us, which another owner's would not */
        bool raced = !rc && c.status == 409;
        if (!rc && !created && !raced) rc = s3_call_failed(&c);
        if (raced) {
            s3_call_done(&c);
            c = s3_call_new("HEAD", bucket, NULL);
            rc = s3_call_perform(s, &c);
            if (!rc && c.status != 200) rc = s3_call_failed(&c);
        }
        s3_call_done(&c);
        free(conf);
    }
    if (!rc && created) {
        log_info("storage: created bucket %s (limit %llu bytes per object, enforced here)", bucket,
                 (unsigned long long)size_limit);
        if (public_read) set_public_policy(s, bucket);
    }
    if (!rc) remember_bucket(s, bucket, public_read, size_limit);
    return rc;
}

/* --- objects -------------------------------------------------------------------- */

static br_err s3_put(struct objstore *o, const char *bucket, const char *key,
                     const char *content_type, int fd, uint64_t size)
{
    struct s3_store *s = (struct s3_store *)o;
    struct bucket_limit b;
    if (bucket_known(s, bucket, &b) && b.limit && size > b.limit)
        return err_set(BR_OBJSTORE, "el objeto supera el límite de %llu bytes del bucket",
                       (unsigned long long)b.limit);
    /* a file shorter than announced must not become a short object: not
     * every store checks the body against Content-Length when curl stops
     * mid-way (s3rver keeps what arrived), so look before sending; one
     * that shrinks during the upload still aborts it (on_read) */
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return err_set(BR_OBJSTORE, "cannot read the upload: %s", strerror(errno));
    if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size < size)
        return err_set(BR_OBJSTORE, "the upload is shorter than announced");
    /* a store that ignores If-None-Match would overwrite: look first */
    struct s3_call c = s3_call_new("HEAD", bucket, key);
    br_err rc = s3_call_perform(s, &c);
    if (!rc && c.status == 200) rc = err_set(BR_CONFLICT, "el objeto ya existe");
    /* 403: a key without s3:ListBucket cannot tell a missing object from a
     * forbidden one; If-None-Match still guards the write */
    else if (!rc && c.status != 404 && c.status != 403)
        rc = s3_call_failed(&c);
    s3_call_done(&c);
    if (rc) return rc;

    /* the store serves the object itself, with what it stored, to anyone
     * who asks it (the bucket is public-read; BARBERIA_STORAGE_PUBLIC_URL
     * hands such URLs out): the canonical type only, and a type that is not
     * a raster image as an attachment */
    char type[MEDIATYPE_MAX + 1];
    mediatype_stored(content_type, type);
    c = s3_call_new("PUT", bucket, key);
    c.content_type = type;
    c.disposition = mediatype_raster(type) ? NULL : "attachment";
    c.if_none_match = true;
    c.src_fd = fd;
    c.src_size = size;
    rc = s3_call_perform(s, &c);
    /* 412: the key exists; 409 ConditionalRequestConflict: a racing
     * conditional write to it */
    bool exists = !rc && (c.status == 412 ||
                          (c.status == 409 && s3_call_has_code(&c, "ConditionalRequestConflict")));
    bool retried = c.retried;
    if (exists)
        rc = err_set(BR_CONFLICT, "el objeto ya existe");
    else if (!rc && (c.status < 200 || c.status > 299))
        rc = s3_call_failed(&c);
    s3_call_done(&c);
    if (exists && retried) {
        /* the try that answered 500 stored it after all: the key is this
         * upload's alone (its intent reserved it), so an object of its
         * size there is the one it sent */
        c = s3_call_new("HEAD", bucket, key);
        if (s3_call_perform(s, &c) == BR_OK && c.status == 200 && c.length_out >= 0 &&
            (uint64_t)c.length_out == size) {
            err_clear();
            rc = BR_OK;
        }
        s3_call_done(&c);
    }
    return rc;
}

/* An unlinked temporary file in the scratch folder: O_TMPFILE where the
 * file system has it, else a file named after its writer (as fs.c's .tmp
 * files are, so a sweep can tell a crash's leftover) and unlinked at once.
 * -1 with errno on failure. */
static int scratch_file(const struct s3_store *s)
{
    int fd = open(s->scratch, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
    const struct procid *me = procid_self();
    char *path = xasprintf("%s/obj-%ld-%s-XXXXXX", s->scratch, me->pid, me->instance);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) unlink(path);
    free(path);
    return fd;
}

static br_err s3_get(struct objstore *o, const char *bucket, const char *key, struct obj_info *out)
{
    struct s3_store *s = (struct s3_store *)o;
    int fd = scratch_file(s);
    if (fd < 0)
        return err_set(BR_OBJSTORE, "cannot create a temporary file in %s: %s", s->scratch,
                       strerror(errno));
    struct bucket_limit b;
    struct s3_call c = s3_call_new("GET", bucket, key);
    c.dst_fd = fd;
    /* never more than the bucket lets in */
    c.dst_max = bucket_known(s, bucket, &b) ? b.limit : 0;
    br_err rc = s3_call_perform(s, &c);
    if (!rc && c.status == 404)
        rc = err_set(BR_NOTFOUND, "no such object");
    else if (!rc && c.status != 200)
        rc = s3_call_failed(&c);
    if (!rc && lseek(fd, 0, SEEK_SET) != 0)
        rc = err_set(BR_OBJSTORE, "cannot rewind the local copy: %s", strerror(errno));
    if (!rc) {
        const char *ct = c.content_type_out;
        out->fd = fd;
        out->size = c.received;
        out->content_type = xstrdup(obj_content_type_valid(ct) ? ct : "application/octet-stream");
    } else {
        close(fd);
    }
    s3_call_done(&c);
    return rc;
}

static br_err s3_remove(struct objstore *o, const char *bucket, const char *key)
{
    struct s3_store *s = (struct s3_store *)o;
    struct s3_call c = s3_call_new("DELETE", bucket, key);
    br_err rc = s3_call_perform(s, &c);
    /* S3 answers 204 whether or not the key existed; some stores say 404 */
    if (!rc && (c.status < 200 || c.status > 299) && c.status != 404) rc = s3_call_failed(&c);
    s3_call_done(&c);
    return rc;
}

/* --- what older versions stored ------------------------------------------------- */

/* text[0, n) with XML's five predefined entities decoded; NULL when it
 * holds any other reference (a character reference stands for a control
 * character in a key, which no key of ours holds). Caller frees. */
static char *xml_unescape(const char *text, size_t n)
{
    static const struct {
        const char *ref;
        char c;
    } refs[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    char *out = xmalloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] != '&') {
            out[o++] = text[i];
            continue;
        }
        size_t k = 0;
        while (k < ARRAY_LEN(refs) && strncmp(text + i, refs[k].ref, strlen(refs[k].ref)) != 0)
            k++;
        if (k == ARRAY_LEN(refs) || strlen(refs[k].ref) > n - i) {
            free(out);
            return NULL;
        }
        out[o++] = refs[k].c;
        i += strlen(refs[k].ref) - 1;
    }
    out[o] = '\0';
    return out;
}

/* The decoded text of the first <tag> from *from on in an XML answer, with
 * *from moved past its end; NULL when there is none (or it cannot be
 * decoded). Caller frees. */
static char *xml_next(const char **from, const char *tag)
{
    char open[40], close[40];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *start = strstr(*from, open);
    const char *end = start ? strstr(start + strlen(open), close) : NULL;
    if (!end) return NULL;
    start += strlen(open);
    *from = end + strlen(close);
    return xml_unescape(start, (size_t)(end - start));
}

/* v percent-encoded for a query string as SigV4 signs it: every byte but
 * RFC 3986's unreserved ones as %XX. Caller frees. */
static char *query_encode(const char *v)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = xmalloc(strlen(v) * 3 + 1), *w = out;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            *w++ = (char)*p;
        } else {
            *w++ = '%';
            *w++ = hex[*p >> 4];
            *w++ = hex[*p & 15];
        }
    }
    *w = '\0';
    return out;
}

/* One page of a bucket's listing (ListObjects, version 1: every
 * S3-compatible store has it), from the key after marker (NULL: the
 * start): fn per key. OUT: *next, the marker of the next page (NULL after
 * the last): the page's last key, as S3 documents for a listing without a
 * delimiter. */
static br_err list_page(struct s3_store *s, const char *bucket, const char *marker, obj_key_fn fn,
                        void *ud, char **next)
{
    *next = NULL;
    char *enc = marker ? query_encode(marker) : NULL;
    /* parameters in the order SigV4 signs them */
    char *query = enc ? xasprintf("marker=%s&max-keys=%d", enc, LIST_PAGE)
                      : xasprintf("max-keys=%d", LIST_PAGE);
    free(enc);
    struct s3_call c = s3_call_new("GET", bucket, NULL);
    c.query = query;
    c.resp_max = LIST_BODY_MAX;
    br_err rc = s3_call_perform(s, &c);
    bool no_bucket = !rc && c.status == 404 && s3_call_has_code(&c, "NoSuchBucket");
    if (!rc && c.status != 200 && !no_bucket) rc = s3_call_failed(&c);
    if (!rc && c.resp_truncated)
        rc = err_set(BR_OBJSTORE, "S3 GET: a listing of %s over %d bytes", bucket, LIST_BODY_MAX);
    const char *at = !rc && !no_bucket && c.resp.p ? c.resp.p : "";
    char *last = NULL;
    while (!rc) {
        const char *was = at;
        char *key = xml_next(&at, "Key");
        if (!key && at == was) break; /* no more keys */
        if (key && objkey_valid(key, strlen(key)))
            rc = fn(ud, key);
        else
            log_warn("storage: listing bucket %s: skipped a key that is not an object key of ours",
                     bucket);
        if (key) {
            free(last);
            last = key;
        }
    }
    if (!rc && !no_bucket) {
        const char *from = c.resp.p ? c.resp.p : "";
        char *truncated = xml_next(&from, "IsTruncated");
        if (truncated && !strcmp(truncated, "true")) {
            if (last)
                *next = xstrdup(last);
            else
                rc =
                    err_set(BR_OBJSTORE, "S3 GET: a listing of %s cut short without a key", bucket);
        }
        free(truncated);
    }
    free(last);
    s3_call_done(&c);
    free(query);
    return rc;
}

static br_err s3_each(struct objstore *o, const char *bucket, obj_key_fn fn, void *ud)
{
    struct s3_store *s = (struct s3_store *)o;
    char *marker = NULL;
    br_err rc;
    do {
        char *next = NULL;
        rc = list_page(s, bucket, marker, fn, ud, &next);
        free(marker);
        marker = next;
    } while (!rc && marker);
    free(marker);
    return rc;
}

/* Compares what the store holds of the object with what s3_put stores
 * today (the canonical type; a non-raster one as an attachment) and, when
 * they differ, rewrites the metadata: a copy of the object onto itself
 * with its metadata replaced, the bytes untouched. */
static br_err s3_retype(struct objstore *o, const char *bucket, const char *key, bool *changed)
{
    struct s3_store *s = (struct s3_store *)o;
    struct s3_call c = s3_call_new("HEAD", bucket, key);
    br_err rc = s3_call_perform(s, &c);
    if (!rc && c.status == 404)
        rc = err_set(BR_NOTFOUND, "no such object");
    else if (!rc && c.status != 200)
        rc = s3_call_failed(&c);
    char type[MEDIATYPE_MAX + 1];
    const char *disposition = NULL;
    bool right = false;
    if (!rc) {
        mediatype_stored(c.content_type_out, type);
        disposition = mediatype_raster(type) ? NULL : "attachment";
        right = c.content_type_out && !strcmp(c.content_type_out, type) &&
                (disposition ? c.disposition_out && !strcmp(c.disposition_out, disposition)
                             : !c.disposition_out);
    }
    s3_call_done(&c);
    if (rc || right) return rc;

    char *enc = objkey_url_encode(key);
    char *source = xasprintf("/%s/%s", bucket, enc);
    free(enc);
    c = s3_call_new("PUT", bucket, key);
    c.copy_source = source;
    c.content_type = type;
    c.disposition = disposition;
    c.body = ""; /* no body, but a Content-Length: 0 */
    c.body_len = 0;
    rc = s3_call_perform(s, &c);
    /* a copy may fail after its 200 has been sent: the body then says so */
    if (!rc && c.status == 404)
        rc = err_set(BR_NOTFOUND, "no such object");
    else if (!rc && (c.status != 200 || (c.resp.p && strstr(c.resp.p, "<Error>"))))
        rc = s3_call_failed(&c);
    if (!rc) *changed = true;
    s3_call_done(&c);
    free(source);
    return rc;
}

static br_err s3_sweep_tmp(struct objstore *o, obj_writer_gone_fn gone, obj_removed_fn removed,
                           void *ud)
{
    /* the store itself keeps no temporary objects; the scratch folder may
     * hold a named local copy of a crashed process (no O_TMPFILE) */
    struct s3_store *s = (struct s3_store *)o;
    return obj_tmp_sweep(s->scratch, gone, removed, ud);
}

static char *s3_public_url(struct objstore *o, const char *bucket, const char *key)
{
    struct s3_store *s = (struct s3_store *)o;
    struct bucket_limit b;
    if (!s->public_base || !bucket_known(s, bucket, &b) || !b.public_read) return NULL;
    char *enc = objkey_url_encode(key);
    char *url = xasprintf("%s/%s", s->public_base, enc);
    free(enc);
    return url;
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
    (void)h;
    (void)access;
    struct s3_store *s = ud;
    pthread_mutex_lock(&s->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
    (void)h;
    struct s3_store *s = ud;
    pthread_mutex_unlock(&s->share_locks[data]);
}

/* Connections to the store are kept and reused by every thread's calls (a
 * call on a connection the store has meanwhile closed is retried by curl on
 * a fresh one). Without it, each call would pay a TCP (and TLS) handshake. */
static br_err share_make(struct s3_store *s)
{
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) {
        int e = pthread_mutex_init(&s->share_locks[i], NULL);
        if (e) {
            while (i-- > 0)
                pthread_mutex_destroy(&s->share_locks[i]);
            return err_set(BR_INTERNAL, "storage: cannot create a lock: %s", strerror(e));
        }
    }
    s->share_locks_made = true;
    s->share = curl_share_init();
    if (!s->share) return err_set(BR_INTERNAL, "storage: cannot create a curl share");
    CURLSHcode sc = curl_share_setopt(s->share, CURLSHOPT_LOCKFUNC, share_lock);
    if (sc == CURLSHE_OK) sc = curl_share_setopt(s->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    if (sc == CURLSHE_OK) sc = curl_share_setopt(s->share, CURLSHOPT_USERDATA, s);
    if (sc == CURLSHE_OK) sc = curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    if (sc == CURLSHE_OK) sc = curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    if (sc != CURLSHE_OK)
        return err_set(BR_INTERNAL, "storage: curl share: %s", curl_share_strerror(sc));
    return BR_OK;
}

static void s3_free(struct s3_store *s)
{
    if (!s) return;
    if (s->share) curl_share_cleanup(s->share); /* closes the kept connections */
    if (s->share_locks_made)
        for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
            pthread_mutex_destroy(&s->share_locks[i]);
    free(s->origin_head);
    free(s->host);
    free(s->origin_tail);
    free(s->sigv4);
    free(s->region);
    wipe_free(s->access_key);
    wipe_free(s->secret_key);
    free(s->public_base);
    free(s->scratch);
    free(s->ca_file);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static void s3_close(struct objstore *o)
{
    s3_free((struct s3_store *)o);
}

static const struct obj_ops s3_ops = {
    .name = "s3",
    .ensure_bucket = s3_ensure_bucket,
    .put = s3_put,
    .get = s3_get,
    .remove = s3_remove,
    .sweep_tmp = s3_sweep_tmp,
    .public_url = s3_public_url,
    .each = s3_each,
    .retype = s3_retype,
    .close = s3_close,
};

/* --- opening ---------------------------------------------------------------------- */

static bool is_aws_host(const char *host)
{
    size_t n = strlen(host);
    const char *suffix = ".amazonaws.com";
    size_t k = strlen(suffix);
    return n > k && !strcasecmp(host + n - k, suffix);
}

/* An IP literal cannot carry a bucket name in front of it. */
static bool is_ip_literal(const char *host)
{
    return host[0] == '[' || strspn(host, "0123456789.") == strlen(host);
}

static br_err parse_path_style(const char *v, const char *host, bool *out)
{
    if (!v || !strcasecmp(v, "auto")) {
        *out = !is_aws_host(host);
        return BR_OK;
    }
    if (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "true")) {
        *out = true;
        return BR_OK;
    }
    if (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "false")) {
        *out = false;
        return BR_OK;
    }
    return err_set(BR_CONFIG, "BARBERIA_STORAGE_PATH_STYLE: expected auto, 1 or 0, got '%s'", v);
}

static bool region_valid(const char *r)
{
    size_t n = strlen(r);
    return n > 0 && n <= REGION_MAX && strspn(r, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

/* Splits the endpoint into the store's origin pieces. s3://HOST is
 * https://HOST; s3:// alone is AWS S3 in the region. */
static br_err parse_endpoint(struct s3_store *s, const char *url, const char *path_style)
{
    char *full;
    if (!strncasecmp(url, "s3://", 5)) {
        const char *rest = url + 5;
        full = rest[0] && strcmp(rest, "/") != 0
                   ? xasprintf("https://%s", rest)
                   : xasprintf("https://s3.%s.amazonaws.com", s->region);
    } else {
        full = xstrdup(url);
    }
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *user = NULL, *query = NULL,
         *frag = NULL;
    br_err rc = BR_OK;
    if (!u || curl_url_set(u, CURLUPART_URL, full, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        rc = err_set(BR_CONFIG, "BARBERIA_STORAGE_URL: not a URL curl can use");
    if (!rc) {
        curl_url_get(u, CURLUPART_PORT, &port, 0);
        curl_url_get(u, CURLUPART_PATH, &path, 0);
        curl_url_get(u, CURLUPART_USER, &user, 0);
        curl_url_get(u, CURLUPART_QUERY, &query, 0);
        curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
        if (user)
            rc = err_set(BR_CONFIG, "BARBERIA_STORAGE_URL: credentials do not belong in the URL "
                                    "(it is shown in logs); use BARBERIA_STORAGE_ACCESS_KEY and "
                                    "BARBERIA_STORAGE_SECRET_KEY");
        else if (query || frag)
            rc = err_set(BR_CONFIG, "BARBERIA_STORAGE_URL: no query or fragment allowed");
        else if (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0)
            rc = err_set(BR_CONFIG, "BARBERIA_STORAGE_URL: expected s3://, http:// or https://");
        else if (!visible_ascii(host) || (path && !visible_ascii(path)))
            rc = err_set(BR_CONFIG, "BARBERIA_STORAGE_URL: unusable host or path");
    }
    if (!rc) rc = parse_path_style(path_style, host, &s->path_style);
    if (!rc && !s->path_style && is_ip_literal(host))
        rc = err_set(BR_CONFIG, "BARBERIA_STORAGE_PATH_STYLE=0 needs a host name in "
                                "BARBERIA_STORAGE_URL, not an IP address");
    if (!rc) {
        size_t plen = path ? strlen(path) : 0;
        while (plen && path[plen - 1] == '/')
            plen--;
        s->origin_head = xasprintf("%s://", scheme);
        s->host = xstrdup(host);
        s->origin_tail =
            xasprintf("%s%s%.*s", port ? ":" : "", port ? port : "", (int)plen, path ? path : "");
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(user);
    curl_free(query);
    curl_free(frag);
    curl_url_cleanup(u);
    free(full);
    return rc;
}

static br_err parse_public_base(struct s3_store *s, const char *url)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *part = NULL;
    bool ok = u && visible_ascii(url) && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
              (!strcasecmp(scheme, "http") || !strcasecmp(scheme, "https"));
    /* a base that keys follow: a query or a fragment would end up inside
     * every photo URL stored */
    if (ok && curl_url_get(u, CURLUPART_QUERY, &part, 0) != CURLUE_NO_QUERY) ok = false;
    curl_free(part);
    part = NULL;
    if (ok && curl_url_get(u, CURLUPART_FRAGMENT, &part, 0) != CURLUE_NO_FRAGMENT) ok = false;
    curl_free(part);
    curl_free(scheme);
    curl_url_cleanup(u);
    if (!ok)
        return err_set(BR_CONFIG, "BARBERIA_STORAGE_PUBLIC_URL: expected an http(s) URL without "
                                  "a query or a fragment (the photos' keys follow it)");
    size_t n = strlen(url);
    while (n && url[n - 1] == '/')
        n--;
    s->public_base = xstrndup(url, n);
    return BR_OK;
}

br_err objstore_s3_open(const struct config *cfg, struct objstore **out)
{
    *out = NULL;
    const char *region = cfg->storage_region ? cfg->storage_region : "us-east-1";
    if (!region_valid(region))
        return err_set(BR_CONFIG, "BARBERIA_STORAGE_REGION: expected a region name such as "
                                  "eu-west-1 (lowercase letters, digits and '-')");
    if (!visible_ascii(cfg->storage_access_key) || !visible_ascii(cfg->storage_secret_key))
        return err_set(BR_CONFIG, "the S3 store needs BARBERIA_STORAGE_ACCESS_KEY and "
                                  "BARBERIA_STORAGE_SECRET_KEY (printable, without spaces)");
    struct s3_store *s = xcalloc(1, sizeof *s);
    s->base.ops = &s3_ops;
    int e = pthread_mutex_init(&s->lock, NULL);
    if (e) {
        free(s);
        return err_set(BR_INTERNAL, "storage: cannot create a lock: %s", strerror(e));
    }
    s->region = xstrdup(region);
    s->sigv4 = xasprintf("aws:amz:%s:s3", region);
    s->access_key = xstrdup(cfg->storage_access_key);
    s->secret_key = xstrdup(cfg->storage_secret_key);
    s->timeout_ms = cfg->storage_timeout_ms > 0 ? cfg->storage_timeout_ms : 30000;
    s->scratch = xasprintf("%s/s3-scratch", cfg->data_dir);
    br_err rc = parse_endpoint(s, cfg->storage_url, cfg->storage_path_style);
    if (!rc && cfg->storage_ca_file) {
        if (access(cfg->storage_ca_file, R_OK) != 0)
            rc = err_set(BR_CONFIG, "BARBERIA_STORAGE_CA_FILE: cannot read %s: %s",
                         cfg->storage_ca_file, strerror(errno));
        else
            s->ca_file = xstrdup(cfg->storage_ca_file);
    }
    if (!rc) rc = share_make(s);
    if (!rc && cfg->storage_public_url) rc = parse_public_base(s, cfg->storage_public_url);
    /* the last step: nothing is written for a configuration that is refused */
    if (!rc && dirs_make(s->scratch, 0750, true) != 0)
        rc = err_set(BR_CONFIG, "cannot create the S3 scratch folder %s: %s", s->scratch,
                     strerror(errno));
    if (rc) {
        s3_free(s);
        return rc;
    }
    log_info("storage: S3 at %s%s%s (%s-style, region %s, bound %ld ms per call%s%s)",
             s->origin_head, s->host, s->origin_tail, s->path_style ? "path" : "virtual-hosted",
             region, s->timeout_ms, s->public_base ? ", public URL " : "",
             s->public_base ? s->public_base : "");
    *out = &s->base;
    return BR_OK;
}
