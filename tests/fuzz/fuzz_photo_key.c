/*
 * fuzz_photo_key.c - a photo's extension, object key and public URL
 * (photo_ext, photo_key, photo_public_url in src/core/photos.c).
 *
 * The input is the uploaded file name, then optionally a newline and the
 * tipo. Properties:
 * - the extension is the text after the file name's last dot with ASCII
 *   letters lowercased, or "jpg" when there is no dot or nothing after it;
 * - the key is `<user_id>/<cita_id>/<tipo>-<epoch_ms>.<ext>`; when the
 *   object stores accept it (objkey_valid), its first two segments are the
 *   user and the cita and no segment is "." or "..";
 * - the public URL is the bucket's base followed by the key, and
 *   percent-decoding that tail gives the key back.
 */
#include "fz.h"
#include "core/photos.h"
#include "util/objkey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USER   "3f2a1c4e-0b5d-4e8f-9a7b-6c5d4e3f2a1b"
#define CITA   "9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
#define BASE   "http://127.0.0.1:8080"
#define PREFIX BASE "/storage/v1/object/public/" PHOTO_BUCKET "/"

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void check_ext(const char *filename, const char *ext)
{
    const char *dot = strrchr(filename, '.');
    const char *want = dot && dot[1] ? dot + 1 : "jpg";
    if (strlen(want) != strlen(ext)) fz_fail("ext of '%s' is '%s'", filename, ext);
    for (size_t i = 0; want[i]; i++) {
        char c = want[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (ext[i] != c) fz_fail("ext of '%s' is '%s'", filename, ext);
    }
}

static void check_key(const char *key, const char *tipo, const char *ext)
{
    char *want = xasprintf("%s/%s/%s-1700000000123.%s", USER, CITA, tipo, ext);
    if (strcmp(key, want)) fz_fail("key '%s', expected '%s'", key, want);
    free(want);
    if (!objkey_valid(key, strlen(key))) return;
    if (strncmp(key, USER "/" CITA "/", strlen(USER) + strlen(CITA) + 2))
        fz_fail("valid key '%s' outside its cita's folder", key);
    for (const char *s = key;;) {
        size_t len = strcspn(s, "/");
        if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
            fz_fail("valid key '%s' with a dot segment", key);
        if (!s[len]) break;
        s += len + 1;
    }
}

static void check_url(const char *url, const char *key)
{
    if (strncmp(url, PREFIX, strlen(PREFIX))) fz_fail("url '%s'", url);
    const char *p = url + strlen(PREFIX);
    char *dec = xmalloc(strlen(p) + 1);
    size_t o = 0;
    for (; *p; p++) {
        if (*p == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
            dec[o++] = (char)(hexval(p[1]) * 16 + hexval(p[2]));
            p += 2;
        } else if (*p == '?' || *p == '#' || *p == '%' || (unsigned char)*p <= 0x20) {
            fz_fail("url '%s' holds a raw '%c'", url, *p);
        } else {
            dec[o++] = *p;
        }
    }
    dec[o] = '\0';
    if (strcmp(dec, key)) fz_fail("url '%s' decodes to '%s', not the key", url, dec);
    free(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xstrndup((const char *)data, size); /* C strings, as the server hands them */
    char *nl = strchr(text, '\n');
    const char *tipo = "antes";
    if (nl) {
        *nl = '\0';
        tipo = nl + 1;
    }
    char *ext = photo_ext(text);
    check_ext(text, ext);
    char *key = photo_key(USER, CITA, tipo, 1700000000123, ext);
    check_key(key, tipo, ext);
    char *url = photo_public_url(BASE, key);
    check_url(url, key);
    free(url);
    free(key);
    free(ext);
    free(text);
    return 0;
}
