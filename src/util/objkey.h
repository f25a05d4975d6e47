/*
 * objkey.h - object keys: what the object stores accept, and how a key is
 * written into a URL.
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

#endif
