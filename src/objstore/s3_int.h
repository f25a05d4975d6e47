/*
 * s3_int.h - what the S3 adapter's two files share (src/objstore only):
 * the store's settings (struct s3_store, made by objstore_s3_open in s3.c)
 * and one HTTP exchange with the store (struct s3_call, performed and
 * signed in s3_call.c).
 */
#ifndef BARBERIA_OBJSTORE_S3_INT_H
#define BARBERIA_OBJSTORE_S3_INT_H

#include "objstore.h"
#include "../util/buf.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define REASON_MAX  160 /* the store's code and message, in a detail */
#define BUCKETS_MAX 8   /* buckets whose limit one process remembers */

struct bucket_limit {
    char name[64];
    uint64_t limit; /* 0: none */
    bool public_read;
};

struct s3_store {
    struct objstore base; /* first: the port hands &base back to us */
    char *origin_head;    /* "https://" */
    char *host;           /* "minio.example.com", "[::1]" */
    char *origin_tail;    /* ":9000/prefix" (port and path prefix; may be "") */
    bool path_style;      /* <host>/<bucket>/<key>, else <bucket>.<host>/<key> */
    char *sigv4;          /* "aws:amz:<region>:s3" */
    char *region;
    char *access_key;
    char *secret_key;  /* wiped when closed */
    char *public_base; /* NULL: objects are served by the service */
    char *scratch;     /* local folder of the temporary files of get */
    char *ca_file;     /* NULL: the system's CA store */
    long timeout_ms;
    pthread_mutex_t lock; /* guards buckets */
    struct bucket_limit buckets[BUCKETS_MAX];
    size_t nbuckets;
    /* what every call shares: open connections (kept alive between calls),
     * DNS answers and TLS sessions, each guarded by its own lock */
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    bool share_locks_made;
};

/* One HTTP exchange with the store. */
struct s3_call {
    const char *method; /* "GET", "HEAD", "PUT", "DELETE" */
    const char *bucket;
    const char *key;          /* NULL: the bucket itself */
    const char *query;        /* NULL, or a sub-resource such as "policy=" */
    const char *content_type; /* NULL: none sent */
    const char *disposition;  /* Content-Disposition to store (NULL: none sent) */
    const char *copy_source;  /* a copy of this "/<bucket>/<encoded key>" onto the key, its
                                 metadata replaced by what this call sends (NULL: none) */
    bool if_none_match;       /* `If-None-Match: *` */
    const char *body;         /* a small body held in memory, or NULL */
    size_t body_len;          /* its length */
    int src_fd;               /* or a body read from this file (-1: none) */
    uint64_t src_size;        /* its length */
    int dst_fd;               /* a 2xx answer's body goes here (-1: kept in resp) */
    uint64_t dst_max;         /* the most dst_fd may receive (0: no cap) */
    size_t resp_max;          /* the most resp keeps (0: ERROR_BODY_MAX) */
    /* OUT */
    long status;
    struct buf resp;        /* an error answer's body (or a 2xx one without dst_fd), capped */
    uint64_t received;      /* bytes written to dst_fd */
    char *content_type_out; /* the answer's Content-Type (caller frees) */
    char *disposition_out;  /* the answer's Content-Disposition (caller frees) */
    bool resp_truncated;    /* resp reached its cap: the rest was dropped */
    bool retried;           /* an earlier try got a passing failure (500, 503) */
    int64_t length_out;     /* the answer's Content-Length (-1: none) */
    /* what went wrong in a callback */
    CURL *h;
    uint64_t src_off;
    int io_errno;
    bool src_short, dst_failed, dst_too_large;
};

/* A call of method on bucket/key (key NULL: the bucket itself), no body. */
struct s3_call s3_call_new(const char *method, const char *bucket, const char *key);

/* Performs c against the store, bounded by the store's timeout in all: a
 * 500 or 503 answer (the store's passing failure) is tried again, up to
 * three tries, after 100 ms then 400 ms, while the bound leaves time (one
 * warn line each). A transport failure is BR_OBJSTORE with a detail (and
 * one warn line); any HTTP status is BR_OK, for the caller to judge (see
 * s3_call_failed). c->resp is
 * initialised here; the caller frees it with s3_call_done(). */
br_err s3_call_perform(struct s3_store *s, struct s3_call *c);

/* Frees what s3_call_perform kept of the answer. */
void s3_call_done(struct s3_call *c);

/* An answer with an unexpected status: BR_OBJSTORE with the status and the
 * store's own code and message, and one warn line. */
br_err s3_call_failed(const struct s3_call *c);

/* "HTTP 403 SignatureDoesNotMatch: The request signature ..." for a call
 * answered with an error status. */
void s3_call_reason(const struct s3_call *c, char *out, size_t n);

/* True when the store's error code of the answer is code. */
bool s3_call_has_code(const struct s3_call *c, const char *code);

#endif
