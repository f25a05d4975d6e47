/*
 * objkey.c - object key validation and URL encoding (see objkey.h).
 */
#include "objkey.h"

#include <string.h>

bool objkey_valid(const char *key, size_t n)
{
    if (!key || n == 0 || n > OBJKEY_MAX || !utf8_valid(key, n)) return false;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || key[i] == '/') {
            size_t len = i - start;
            const char *seg = key + start;
            if (len == 0 || len > OBJKEY_SEGMENT_MAX) return false;
            if (len == 1 && seg[0] == '.') return false;
            if (len == 2 && seg[0] == '.' && seg[1] == '.') return false;
            start = i + 1;
        } else {
            unsigned char c = (unsigned char)key[i];
            if (c < 0x20 || c == 0x7f) return false;
        }
    }
    return true;
}

char *objkey_url_encode(const char *key)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(key);
    char *out = xmalloc(n * 3 + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)key[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

bool obj_content_type_valid(const char *ct)
{
    if (!ct) return false;
    size_t n = strlen(ct);
    if (n == 0 || n > 255 || !strchr(ct, '/')) return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)ct[i] < 0x20 || (unsigned char)ct[i] > 0x7e) return false;
    return true;
}

bool obj_bucket_valid(const char *b)
{
    size_t n = strlen(b);
    if (n < 3 || n > 63) return false;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '-' || c == '.') && i > 0 && i < n - 1)) return false;
    }
    return true;
}
