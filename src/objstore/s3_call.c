/*
 * s3_call.c - one HTTP exchange with an S3-compatible store (see s3.c for
 * the operations made of them): the URL of a bucket or key, path-style or
 * virtual-hosted; the headers, signed with AWS Signature Version 4 by
 * libcurl itself (CURLOPT_AWS_SIGV4, service "s3"); an upload streamed
 * from a file with pread(2), an answer streamed into one or kept, capped,
 * in memory; the status judged by the caller. Each call uses its own curl
 * handle, bounded in time, and shares the store's kept connections.
 */
#define _GNU_SOURCE
#include "s3_int.h"
#include "../util/log.h"
#include "../util/objkey.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define ERROR_BODY_MAX    (16 * 1024) /* what is kept of an error answer */
#define S3_ATTEMPTS       3           /* a call's tries when the store answers a passing failure */
#define S3_RETRY_PAUSE_MS 100         /* before the second (then four times as long) */
#define UNSIGNED          "UNSIGNED-PAYLOAD"

/* The text between <tag> and </tag> in an XML answer, reduced to
 * printable ASCII and capped; "" when absent. */
static void xml_field(const struct buf *b, const char *tag, char *out, size_t n)
{
    out[0] = '\0';
    if (!b->p || n == 0) return;
    char open[32], close[32];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *start = strstr(b->p, open);
    if (!start) return;
    start += strlen(open);
    const char *end = strstr(start, close);
    if (!end) return;
    size_t o = 0;
    for (const char *p = start; p < end && o + 1 < n; p++)
        out[o++] = (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f ? *p : '?';
    out[o] = '\0';
}

/* See s3_int.h. */
void s3_call_reason(const struct s3_call *c, char *out, size_t n)
{
    char code[64], msg[REASON_MAX];
    xml_field(&c->resp, "Code", code, sizeof code);
    xml_field(&c->resp, "Message", msg, sizeof msg);
    snprintf(out, n, "HTTP %ld%s%s%s%s", c->status, code[0] ? " " : "", code, msg[0] ? ": " : "",
             msg);
}

/* See s3_int.h. */
bool s3_call_has_code(const struct s3_call *c, const char *code)
{
    char got[64];
    xml_field(&c->resp, "Code", got, sizeof got);
    return !strcmp(got, code);
}

/* The URL of bucket/key (key NULL: of the bucket), with query appended. */
static char *call_url(const struct s3_store *s, const char *bucket, const char *key,
                      const char *query)
{
    char *enc = key ? objkey_url_encode(key) : xstrdup("");
    const char *q = query ? "?" : "", *qs = query ? query : "";
    char *url;
    if (s->path_style)
        url = xasprintf("%s%s%s/%s%s%s%s%s", s->origin_head, s->host, s->origin_tail, bucket,
                        key ? "/" : "", enc, q, qs);
    else
        url = xasprintf("%s%s.%s%s/%s%s%s", s->origin_head, bucket, s->host, s->origin_tail, enc, q,
                        qs);
    free(enc);
    return url;
}

/* --- HTTP ------------------------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct s3_call *c = ud;
    size_t n = size * nmemb;
    long status = 0;
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
    if (c->dst_fd < 0 || status < 200 || status > 299) {
        /* an error answer: what fits under the cap is kept for its <Code> */
        if (buf_append(&c->resp, data, n) != BR_OK) c->resp_truncated = true; /* dropped */
        return n;
    }
    if (c->dst_max && c->received + n > c->dst_max) {
        c->dst_too_large = true;
        return 0;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = write(c->dst_fd, data + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            c->io_errno = w < 0 ? errno : ENOSPC;
            c->dst_failed = true;
            return 0;
        }
        off += (size_t)w;
    }
    c->received += n;
    return n;
}

/* Keeps the answer's Content-Disposition (curl_easy_header is newer than
 * the libcurl we support). A status line starts a new answer (after a 100
 * Continue, say): only the final one's header counts. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct s3_call *c = ud;
    size_t n = size * nmemb;
    static const char name[] = "Content-Disposition:";
    if (n >= 5 && !strncmp(data, "HTTP/", 5)) {
        free(c->disposition_out);
        c->disposition_out = NULL;
    } else if (n > sizeof name - 1 && !strncasecmp(data, name, sizeof name - 1)) {
        size_t i = sizeof name - 1, end = n;
        while (i < end && (data[i] == ' ' || data[i] == '\t'))
            i++;
        while (end > i && (data[end - 1] == '\r' || data[end - 1] == '\n' || data[end - 1] == ' ' ||
                           data[end - 1] == '\t'))
            end--;
        free(c->disposition_out);
        c->disposition_out = xstrndup(data + i, end - i);
    }
    return n;
}

/* Feeds an upload from c->src_fd (pread from where the last call stopped). */
static size_t on_read(char *dest, size_t size, size_t nmemb, void *ud)
{
    struct s3_call *c = ud;
    size_t room = size * nmemb;
    uint64_t left = c->src_size - c->src_off;
    if (left == 0) return 0;
    size_t want = left < room ? (size_t)left : room;
    for (;;) {
        ssize_t n = pread(c->src_fd, dest, want, (off_t)c->src_off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            /* a file shorter than announced must not become a short object */
            c->io_errno = n < 0 ? errno : 0;
            c->src_short = true;
            return CURL_READFUNC_ABORT;
        }
        c->src_off += (uint64_t)n;
        return (size_t)n;
    }
}

/* Rewinds the upload when curl must send it again (a redirect or an
 * authentication round: neither is expected, but the answer must be right). */
static int on_seek(void *ud, curl_off_t offset, int origin)
{
    struct s3_call *c = ud;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > c->src_size)
        return CURL_SEEKFUNC_CANTSEEK;
    c->src_off = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

#define SETOPT(opt, val)                                                                           \
    do {                                                                                           \
        if (cc == CURLE_OK) cc = curl_easy_setopt(h, opt, val);                                    \
    } while (0)

static struct curl_slist *add_header(struct curl_slist *list, const char *line, bool *oom)
{
    struct curl_slist *l = curl_slist_append(list, line);
    if (!l) *oom = true;
    return l ? l : list;
}

/* The headers of c; NULL with *oom set when curl could not allocate. */
static struct curl_slist *call_headers(const struct s3_call *c, bool *oom)
{
    struct curl_slist *hs = NULL;
    char line[320];
    /* curl 7.88 signs what this header says; a body in memory is hashed,
     * a streamed one is sent unsigned (over TLS in production) */
    if (c->body) {
        unsigned char h[crypto_hash_sha256_BYTES];
        char hex[2 * sizeof h + 1];
        crypto_hash_sha256(h, (const unsigned char *)c->body, c->body_len);
        sodium_bin2hex(hex, sizeof hex, h, sizeof h);
        snprintf(line, sizeof line, "x-amz-content-sha256: %s", hex);
    } else {
        snprintf(line, sizeof line, "x-amz-content-sha256: " UNSIGNED);
    }
    hs = add_header(hs, line, oom);
    if (c->content_type) {
        snprintf(line, sizeof line, "Content-Type: %s", c->content_type);
        hs = add_header(hs, line, oom);
    }
    if (c->disposition) {
        snprintf(line, sizeof line, "Content-Disposition: %s", c->disposition);
        hs = add_header(hs, line, oom);
    }
    if (c->copy_source) {
        char *copy = xasprintf("x-amz-copy-source: %s", c->copy_source);
        hs = add_header(hs, copy, oom);
        free(copy);
        hs = add_header(hs, "x-amz-metadata-directive: REPLACE", oom);
    }
    if (c->if_none_match) hs = add_header(hs, "If-None-Match: *", oom);
    return hs;
}

/* One exchange of c, given timeout_ms in all. */
static br_err perform_once(struct s3_store *s, struct s3_call *c, long timeout_ms)
{
    buf_init(&c->resp, c->resp_max ? c->resp_max : ERROR_BODY_MAX);
    c->resp_truncated = false;
    c->disposition_out = NULL;
    c->status = 0;
    c->received = 0;
    c->src_off = 0;
    c->length_out = -1;
    c->content_type_out = NULL;
    int64_t t0 = clock_mono_ms();
    CURL *h = curl_easy_init();
    if (!h) return err_set(BR_OBJSTORE, "S3 %s: cannot create a curl handle", c->method);
    c->h = h;
    char *url = call_url(s, c->bucket, c->key, c->query);
    bool oom = false;
    struct curl_slist *headers = call_headers(c, &oom);
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';
    CURLcode cc = oom ? CURLE_OUT_OF_MEMORY : CURLE_OK;
    SETOPT(CURLOPT_URL, url);
    SETOPT(CURLOPT_ERRORBUFFER, errbuf);
    /* request threads must never get SIGALRM from curl's resolver */
    SETOPT(CURLOPT_NOSIGNAL, 1L);
    SETOPT(CURLOPT_TIMEOUT_MS, timeout_ms);
    SETOPT(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
#if LIBCURL_VERSION_NUM >= 0x075500
    SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SETOPT(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    SETOPT(CURLOPT_USERAGENT, "barberia/" BARBERIA_VERSION);
    /* certificates are always verified (curl's default): against this
     * file when set, for a store with a private certificate authority */
    if (s->ca_file) SETOPT(CURLOPT_CAINFO, s->ca_file);
    if (s->share) SETOPT(CURLOPT_SHARE, s->share);
    SETOPT(CURLOPT_AWS_SIGV4, s->sigv4);
    SETOPT(CURLOPT_USERNAME, s->access_key);
    SETOPT(CURLOPT_PASSWORD, s->secret_key);
    SETOPT(CURLOPT_HTTPHEADER, headers);
    SETOPT(CURLOPT_WRITEFUNCTION, on_body);
    SETOPT(CURLOPT_WRITEDATA, c);
    SETOPT(CURLOPT_HEADERFUNCTION, on_header);
    SETOPT(CURLOPT_HEADERDATA, c);
    if (!strcmp(c->method, "HEAD")) {
        SETOPT(CURLOPT_NOBODY, 1L);
    } else if (c->src_fd >= 0) {
        SETOPT(CURLOPT_UPLOAD, 1L); /* PUT */
        SETOPT(CURLOPT_READFUNCTION, on_read);
        SETOPT(CURLOPT_READDATA, c);
        SETOPT(CURLOPT_SEEKFUNCTION, on_seek);
        SETOPT(CURLOPT_SEEKDATA, c);
        SETOPT(CURLOPT_INFILESIZE_LARGE, (curl_off_t)c->src_size);
    } else if (c->body) {
        SETOPT(CURLOPT_POSTFIELDS, c->body);
        SETOPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);
        SETOPT(CURLOPT_CUSTOMREQUEST, c->method);
    } else if (strcmp(c->method, "GET") != 0) {
        SETOPT(CURLOPT_CUSTOMREQUEST, c->method);
    }
    const char *slash = c->key ? "/" : "", *what_key = c->key ? c->key : "";
    br_err rc = BR_OK;
    if (cc != CURLE_OK) {
        rc = err_set(BR_OBJSTORE, "S3 %s: %s", c->method, curl_easy_strerror(cc));
    } else {
        cc = curl_easy_perform(h);
        errbuf[strcspn(errbuf, "\r\n")] = '\0'; /* the log line must stay one line */
        if (cc != CURLE_OK) {
            char cause[128];
            if (c->src_short)
                snprintf(cause, sizeof cause, "the upload is shorter than announced%s%s",
                         c->io_errno ? ": " : "", c->io_errno ? strerror(c->io_errno) : "");
            else if (c->dst_too_large)
                snprintf(cause, sizeof cause, "the object is larger than %llu bytes",
                         (unsigned long long)c->dst_max);
            else if (c->dst_failed)
                snprintf(cause, sizeof cause, "cannot write the local copy: %s",
                         strerror(c->io_errno));
            else if (cc == CURLE_OPERATION_TIMEDOUT)
                snprintf(cause, sizeof cause, "no answer within %ld ms", s->timeout_ms);
            else
                snprintf(cause, sizeof cause, "%s", curl_easy_strerror(cc));
            rc = err_set(BR_OBJSTORE, "S3 %s: %s", c->method, cause);
            log_warn("storage: %s %s%s%s failed after %lld ms: %s (%s)", c->method, c->bucket,
                     slash, what_key, (long long)(clock_mono_ms() - t0), cause,
                     errbuf[0] ? errbuf : curl_easy_strerror(cc));
        } else if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->status) != CURLE_OK) {
            rc = err_set(BR_OBJSTORE, "S3 %s: no HTTP status", c->method);
            log_warn("storage: %s %s%s%s: no HTTP status", c->method, c->bucket, slash, what_key);
        }
        char *ct = NULL;
        if (!rc && curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
            c->content_type_out = xstrdup(ct);
        curl_off_t cl = -1;
        if (!rc && curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK)
            c->length_out = (int64_t)cl;
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    c->h = NULL;
    free(url);
    return rc;
}

/* Whether an answer is the store's own passing failure, which S3's
 * documentation asks clients to try again: 500 InternalError, 503 SlowDown
 * or ServiceUnavailable. */
static bool passing(const struct s3_call *c)
{
    return c->status == 500 || c->status == 503;
}

/* See s3_int.h. */
br_err s3_call_perform(struct s3_store *s, struct s3_call *c)
{
    int64_t t0 = clock_mono_ms(), pause = S3_RETRY_PAUSE_MS;
    c->retried = false;
    for (int attempt = 1;; attempt++) {
        long left = s->timeout_ms - (long)(clock_mono_ms() - t0);
        br_err rc = perform_once(s, c, left > 0 ? left : 1);
        left = s->timeout_ms - (long)(clock_mono_ms() - t0);
        if (rc || !passing(c) || attempt >= S3_ATTEMPTS || left <= pause + 100) return rc;
        char why[REASON_MAX + 96];
        s3_call_reason(c, why, sizeof why);
        log_warn("storage: %s %s%s%s: %s; trying again in %lld ms", c->method, c->bucket,
                 c->key ? "/" : "", c->key ? c->key : "", why, (long long)pause);
        s3_call_done(c);
        c->retried = true;
        /* what a 2xx answer wrote to dst_fd: none yet (a 5xx body is kept in resp) */
        struct timespec ts = {pause / 1000, (pause % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        pause *= 4;
    }
}

/* See s3_int.h. */
void s3_call_done(struct s3_call *c)
{
    buf_free(&c->resp);
    free(c->content_type_out);
    c->content_type_out = NULL;
    free(c->disposition_out);
    c->disposition_out = NULL;
}

/* See s3_int.h. */
br_err s3_call_failed(const struct s3_call *c)
{
    char why[REASON_MAX + 96];
    s3_call_reason(c, why, sizeof why);
    log_warn("storage: %s %s%s%s%s%s: %s", c->method, c->bucket, c->key ? "/" : "",
             c->key ? c->key : "", c->query ? "?" : "", c->query ? c->query : "", why);
    return err_set(BR_OBJSTORE, "S3 %s: %s", c->method, why);
}

/* See s3_int.h. */
struct s3_call s3_call_new(const char *method, const char *bucket, const char *key)
{
    return (struct s3_call){
        .method = method, .bucket = bucket, .key = key, .src_fd = -1, .dst_fd = -1};
}
