/*
 * fuzz_mediatype.c - declared content types (src/util/mediatype.c).
 *
 * The input is a declared Content-Type. Properties:
 * - a text mediatype_parse() accepts holds, outside its quoted strings,
 *   only token characters, spaces, tabs, one '/' before any ';', and
 *   ';' '=' (a second type after ',' or any stray byte is refused); its
 *   result is the text's leading type/subtype lowercased, at most
 *   MEDIATYPE_MAX bytes of lowercase token characters with one '/', and
 *   parses to itself;
 * - mediatype_stored() gives either application/octet-stream or an
 *   image/ type, the parsed type exactly when the text parses to an image
 *   type, and is a fixed point (what is stored reads back the same);
 * - the raster list only holds image types;
 * - mediatype_param() finds a parameter only in a text mediatype_parse()
 *   accepts, and then right after its name (in any case) and '=', within
 *   the text, not empty.
 */
#include "fz.h"
#include "util/mediatype.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The shape every accepted text has, checked without the parser's code. */
static void check_accepted(const uint8_t *d, size_t n, const char *out)
{
    size_t len = strlen(out);
    if (len == 0 || len > MEDIATYPE_MAX) fz_fail("parsed to %zu bytes", len);
    const char *slash = strchr(out, '/');
    if (!slash || slash == out || !slash[1] || strchr(slash + 1, '/'))
        fz_fail("parsed to \"%s\": not type/subtype", out);
    for (const char *p = out; *p; p++)
        if (*p != '/' && (!tchar((unsigned char)*p) || (*p >= 'A' && *p <= 'Z')))
            fz_fail("parsed to \"%s\": byte 0x%02x", out, (unsigned char)*p);
    /* the result is the text's first type/subtype, lowercased */
    size_t i = 0;
    while (i < n && (d[i] == ' ' || d[i] == '\t'))
        i++;
    if (n - i < len) fz_fail("parsed to \"%s\", longer than the text", out);
    for (size_t k = 0; k < len; k++)
        if (lower((char)d[i + k]) != out[k]) fz_fail("parsed to \"%s\": not the text's type", out);
    /* outside quoted strings: tokens, whitespace, ';' and '=' after the type */
    bool quoted = false;
    for (size_t k = i + len; k < n; k++) {
        unsigned char c = d[k];
        if (quoted) {
            if (c == '\\')
                k++;
            else if (c == '"')
                quoted = false;
            else if (c < 0x20 && c != '\t')
                fz_fail("accepted control byte 0x%02x quoted", c);
            continue;
        }
        if (c == '"')
            quoted = true;
        else if (!tchar(c) && c != ' ' && c != '\t' && c != ';' && c != '=')
            fz_fail("accepted \"%.*s\" with byte 0x%02x after the type", (int)n, (const char *)d,
                    c);
    }
    if (quoted) fz_fail("accepted an unterminated quoted string");
    char again[MEDIATYPE_MAX + 1];
    if (!mediatype_parse(out, len, again) || strcmp(again, out) != 0)
        fz_fail("\"%s\" does not parse to itself", out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[MEDIATYPE_MAX + 1];
    bool ok = mediatype_parse((const char *)data, size, out);
    if (ok)
        check_accepted(data, size, out);
    else if (out[0])
        fz_fail("refused, yet wrote \"%s\"", out);

    size_t at = 0, len = 0;
    if (mediatype_param((const char *)data, size, "boundary", &at, &len)) {
        if (!ok) fz_fail("a parameter found in a refused text");
        if (at < 10 || len == 0 || at + len > size)
            fz_fail("a parameter at %zu, %zu bytes, in %zu", at, len, size);
        if (data[at - 1] != '=' || strncasecmp((const char *)data + at - 9, "boundary", 8) != 0 ||
            (data[at - 10] != ';' && data[at - 10] != ' ' && data[at - 10] != '\t'))
            fz_fail("a parameter at %zu that follows no \"boundary=\"", at);
    }

    /* the stored type is made from a C string: up to the first NUL */
    char *text = xstrndup((const char *)data, size);
    char stored[MEDIATYPE_MAX + 1], parsed[MEDIATYPE_MAX + 1], again[MEDIATYPE_MAX + 1];
    mediatype_stored(text, stored);
    bool image = mediatype_parse(text, strlen(text), parsed) && !strncmp(parsed, "image/", 6);
    if (image ? strcmp(stored, parsed) != 0 : strcmp(stored, MEDIATYPE_OCTET_STREAM) != 0)
        fz_fail("\"%s\" stored as \"%s\"", text, stored);
    mediatype_stored(stored, again);
    if (strcmp(again, stored) != 0) fz_fail("\"%s\" stored again as \"%s\"", stored, again);
    if (mediatype_raster(stored) && strncmp(stored, "image/", 6) != 0)
        fz_fail("\"%s\" is raster", stored);
    free(text);
    return 0;
}
