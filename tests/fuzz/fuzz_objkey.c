/*
 * fuzz_objkey.c - object keys (src/util/objkey.c).
 *
 * The input is a key. Properties:
 * - a key objkey_valid() accepts is 1-1024 bytes of well-formed UTF-8 and
 *   never holds an empty, "." or ".." segment, a segment over 255 bytes,
 *   or a control character (so it cannot leave its bucket's folder);
 * - objkey_url_encode() writes only unreserved characters, '/' and %XX,
 *   and percent-decoding its result gives the key back.
 */
#include "fz.h"
#include "util/objkey.h"

#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void check_valid(const uint8_t *k, size_t n)
{
    if (n == 0 || n > OBJKEY_MAX) fz_fail("valid key of %zu bytes", n);
    if (!utf8_valid((const char *)k, n)) fz_fail("valid key that is not UTF-8");
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && k[i] != '/') {
            if (k[i] < 0x20 || k[i] == 0x7f) fz_fail("valid key with control byte 0x%02x", k[i]);
            continue;
        }
        size_t len = i - start;
        const uint8_t *seg = k + start;
        if (len == 0) fz_fail("valid key %.*s with an empty segment", (int)n, k);
        if (len > OBJKEY_SEGMENT_MAX) fz_fail("valid key with a %zu-byte segment", len);
        if ((len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
            fz_fail("valid key %.*s with a '%.*s' segment", (int)n, k, (int)len, seg);
        start = i + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (objkey_valid((const char *)data, size)) check_valid(data, size);

    /* URL encoding works on C strings: up to the first NUL */
    char *key = xstrndup((const char *)data, size);
    size_t n = strlen(key);
    char *enc = objkey_url_encode(key);
    char *dec = xmalloc(strlen(enc) + 1);
    size_t o = 0;
    for (const char *p = enc; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (hi < 0 || lo < 0) fz_fail("encoded %s: bad escape", enc);
            dec[o++] = (char)(hi * 16 + lo);
            p += 2;
        } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                   c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            dec[o++] = (char)c;
        } else {
            fz_fail("encoded key holds 0x%02x", c);
        }
    }
    if (o != n || memcmp(dec, key, n)) fz_fail("url encoding does not decode back");
    free(dec);
    free(enc);
    free(key);
    return 0;
}
