/*
 * mediatype.c - parsing and canonicalising declared media types (see
 * mediatype.h).
 */
#include "mediatype.h"

#include <stdio.h>
#include <string.h>

/* tchar of RFC 9110 section 5.6.2: the bytes of a token. */
static bool tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool ows_byte(char c)
{
    return c == ' ' || c == '\t';
}

/* The index after the run of tchar starting at i. */
static size_t skip_token(const char *s, size_t i, size_t n)
{
    while (i < n && tchar((unsigned char)s[i]))
        i++;
    return i;
}

static size_t skip_ows(const char *s, size_t i, size_t n)
{
    while (i < n && ows_byte(s[i]))
        i++;
    return i;
}

/* A quoted-string starting at s[i] (the opening DQUOTE): the index after
 * its closing DQUOTE, or 0 when it is unterminated or holds a byte that
 * neither qdtext nor a quoted-pair allows (RFC 9110 section 5.6.4). */
static size_t skip_quoted(const char *s, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') return i + 1;
        if (c == '\\') {
            if (++i >= n) return 0;
            c = (unsigned char)s[i];
            if (c != '\t' && (c < 0x20 || c == 0x7f)) return 0; /* HTAB / SP / VCHAR / obs-text */
            continue;
        }
        /* qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text */
        if (c != '\t' && (c < 0x20 || c == 0x7f)) return 0;
    }
    return 0;
}

static bool same_name(const char *s, size_t n, const char *name)
{
    if (strlen(name) != n) return false;
    for (size_t i = 0; i < n; i++) {
        char a = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
        char b = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];
        if (a != b) return false;
    }
    return true;
}

/* The parameter walk() looks for (want; NULL: none) and where it is. */
struct param_hit {
    const char *want; /* the name, any case */
    size_t at;        /* where the first such parameter's value starts */
    size_t len;       /* its value's length, quotes included */
    bool found;
};

/* Parses text[0, n) as one media type (mediatype_parse); OUT: *start,
 * *end, where type/subtype lies, and the parameter hit->want in *hit. */
static bool walk(const char *text, size_t n, size_t *start_out, size_t *end_out,
                 struct param_hit *hit)
{
    /* the whitespace around a field's value is the field's, not the type's */
    size_t i = skip_ows(text, 0, n);
    while (n > i && ows_byte(text[n - 1]))
        n--;
    size_t start = i;
    i = skip_token(text, i, n);
    if (i == start || i >= n || text[i] != '/') return false;
    size_t sub = ++i;
    i = skip_token(text, i, n);
    if (i == sub) return false;
    size_t end = i;
    /* *( OWS ";" OWS [ parameter ] ) */
    for (;;) {
        i = skip_ows(text, i, n);
        if (i == n) break;
        if (text[i] != ';') return false;
        i = skip_ows(text, i + 1, n);
        if (i == n || text[i] == ';') continue; /* an empty parameter */
        size_t name = i;
        i = skip_token(text, i, n);
        if (i == name || i >= n || text[i] != '=') return false;
        size_t value = ++i;
        if (i < n && text[i] == '"') {
            i = skip_quoted(text, i, n);
            if (i == 0) return false;
        } else {
            i = skip_token(text, i, n);
            if (i == value) return false;
        }
        if (hit && hit->want && !hit->found && same_name(text + name, value - 1 - name, hit->want))
            *hit = (struct param_hit){hit->want, value, i - value, true};
    }
    if (end - start > MEDIATYPE_MAX) return false;
    *start_out = start;
    *end_out = end;
    return true;
}

bool mediatype_parse(const char *text, size_t n, char out[MEDIATYPE_MAX + 1])
{
    out[0] = '\0';
    size_t start, end;
    if (!text || !walk(text, n, &start, &end, NULL)) return false;
    for (size_t k = start; k < end; k++) {
        char c = text[k];
        out[k - start] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    out[end - start] = '\0';
    return true;
}

bool mediatype_param(const char *text, size_t n, const char *name, size_t *at, size_t *len)
{
    struct param_hit hit = {.want = name};
    size_t start, end;
    if (!text || !walk(text, n, &start, &end, &hit) || !hit.found) return false;
    *at = hit.at;
    *len = hit.len;
    return true;
}

void mediatype_stored(const char *text, char out[MEDIATYPE_MAX + 1])
{
    if (!text || !mediatype_parse(text, strlen(text), out) || strncmp(out, "image/", 6) != 0)
        snprintf(out, MEDIATYPE_MAX + 1, "%s", MEDIATYPE_OCTET_STREAM);
}

bool mediatype_raster(const char *type)
{
    // clang-format off
    static const char *const raster[] = {
        "image/jpeg", "image/pjpeg", "image/jpg",                /* JPEG */
        "image/png", "image/apng", "image/x-png",                /* PNG, animated PNG */
        "image/gif",
        "image/webp",
        "image/avif",
        "image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence",
        "image/bmp", "image/x-ms-bmp",
        "image/tiff",
        "image/x-icon", "image/vnd.microsoft.icon",              /* icons */
    };
    // clang-format on
    if (!type) return false;
    for (size_t i = 0; i < ARRAY_LEN(raster); i++)
        if (!strcmp(type, raster[i])) return true;
    return false;
}
