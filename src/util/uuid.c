/*
 * uuid.c - UUID generation and validation (see uuid.h).
 */
#include "uuid.h"

#include <sodium.h>

static const char hex[] = "0123456789abcdef";

void uuid_v4(char out[UUID_LEN + 1])
{
    unsigned char b[16];
    randombytes_buf(b, sizeof b);
    b[6] = (unsigned char)((b[6] & 0x0F) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3F) | 0x80); /* RFC 4122 variant */
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 0x0F];
    }
    out[o] = '\0';
}

bool uuid_parse(const char *s, size_t n, char out[UUID_LEN + 1])
{
    if (!s || n != UUID_LEN) return false;
    char tmp[UUID_LEN + 1];
    for (size_t i = 0; i < UUID_LEN; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-') return false;
        } else if (c >= '0' && c <= '9') {
        } else if (c >= 'a' && c <= 'f') {
        } else if (c >= 'A' && c <= 'F') {
            c = (char)(c - 'A' + 'a');
        } else {
            return false;
        }
        tmp[i] = c;
    }
    tmp[UUID_LEN] = '\0';
    for (size_t i = 0; i <= UUID_LEN; i++)
        out[i] = tmp[i];
    return true;
}
