/*
 * mediatype.h - the content type a stored object carries: the declared
 * text parsed as one RFC 9110 media type, reduced to its canonical form,
 * and whether browsers only ever show that type as a picture.
 *
 * The declared text is never stored or echoed: a client that declares
 * `image/png,text/javascript` or `image/gif;a=b,text/html` would otherwise
 * choose how a browser treats the object (Chromium takes the last type of a
 * list). Everything that stores or serves an object's type goes through
 * mediatype_stored(), so the stores and the service agree byte for byte.
 *
 * Also where a parameter lies (mediatype_param), for the HTTP layer's
 * multipart boundary. Pure functions, no allocation; thread-safe.
 */
#ifndef BR_MEDIATYPE_H
#define BR_MEDIATYPE_H

#include "common.h"

/* The longest canonical type kept (what an object store accepts). */
#define MEDIATYPE_MAX 255
/* What an object whose declared type is not one well-formed image type is
 * stored and served as. */
#define MEDIATYPE_OCTET_STREAM "application/octet-stream"

/* Parses text[0, n) as exactly one media type (RFC 9110 section 8.3.1):
 *   type "/" subtype *( OWS ";" OWS [ parameter ] )
 *   parameter = token "=" ( token / quoted-string )
 * where type, subtype and names are tokens (tchar), OWS is spaces and tabs,
 * and whitespace before or after the whole (an HTTP field's own) is
 * ignored. Any other byte anywhere - a second type after a comma, a NUL, a
 * parameter without '=' - makes it fail. OUT: out, "type/subtype"
 * lowercased (parameters dropped), NUL-terminated; "" on failure. Returns
 * false when text is not such a media type or type/subtype is longer than
 * MEDIATYPE_MAX. */
bool mediatype_parse(const char *text, size_t n, char out[MEDIATYPE_MAX + 1]);

/* Where parameter `name` of the media type text[0, n) is: the type as
 * mediatype_parse() accepts it, the parameter's name matched in any case
 * (RFC 9110: parameter names are case-insensitive), the first one when it
 * is repeated. OUT: *at and *len, where its value is, as written (a token,
 * or a quoted-string with its quotes). False
 * when text is no such media type or has no such parameter. */
bool mediatype_param(const char *text, size_t n, const char *name, size_t *at, size_t *len);

/* The type an object declared as text (NUL-terminated; NULL: none) is
 * stored and served with: "image/<subtype>", lowercased and without
 * parameters, when text is exactly one well-formed image media type, else
 * MEDIATYPE_OCTET_STREAM. Idempotent: its own output maps to itself. OUT:
 * out, NUL-terminated. */
void mediatype_stored(const char *text, char out[MEDIATYPE_MAX + 1]);

/* True when type (canonical: lowercase, no parameters) is a raster image
 * browsers only ever show as a picture - JPEG, PNG, GIF, WebP, AVIF,
 * HEIC/HEIF, BMP, TIFF and icons, under their registered and common
 * names. Every other type (SVG, application/octet-stream, an unknown
 * image/ type) may be rendered as a document, so it is served as an
 * attachment. */
bool mediatype_raster(const char *type);

#endif
