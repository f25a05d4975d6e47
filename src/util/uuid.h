/*
 * uuid.h - identifiers: random (version 4) UUIDs in lowercase canonical form.
 */
#ifndef BR_UUID_H
#define BR_UUID_H

#include "common.h"

#define UUID_LEN 36 /* xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx */

/* A new random UUID from libsodium's CSPRNG (sodium_init() must have run). */
void uuid_v4(char out[UUID_LEN + 1]);

/* Checks that the n bytes at s are a UUID in canonical 8-4-4-4-12 form
 * (either case). OUT: its lowercase form. Returns false when it is not. */
bool uuid_parse(const char *s, size_t n, char out[UUID_LEN + 1]) WARN_UNUSED;

#endif
