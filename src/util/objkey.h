/*
 * objkey.h - the naming rules of the object stores (keys, bucket names,
 * content types: every adapter checks them before anything else happens),
 * and how a key is written into a URL.
 *
 * A key is a '/'-separated path of segments. It is refused when it is empty,
 * longer than OBJKEY_MAX bytes, not well-formed UTF-8, or when any segment is
 * empty, "." or "..", longer than 255 bytes (a file name's limit), or holds a
 * control character (U+0000-U+001F, U+007F). With those rules a key can
 * never name anything outside its bucket's folder.
 */
#ifndef BR_OBJKEY_H
#define BR_OBJKEY_H

#include "common.h"

#define OBJKEY_MAX         1024
#define OBJKEY_SEGMENT_MAX 255

bool objkey_valid(const char *key, size_t n) WARN_UNUSED;

/* The key percent-encoded for a URL path: every byte except RFC 3986
 * unreserved characters and '/' becomes %XX. Caller frees. */
char *objkey_url_encode(const char *key);

/* True when ct is a content type an object may carry: 1-255 printable
 * ASCII characters with a '/'. */
bool obj_content_type_valid(const char *ct);

/* True for an S3-style bucket name: 3-63 of [a-z0-9.-], starting and
 * ending with a letter or digit. */
bool obj_bucket_valid(const char *bucket);

#endif
