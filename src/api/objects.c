/*
 * objects.c - GET and HEAD /storage/v1/object/public/<bucket>/<key>: the
 * stored photos, served by the service itself with their uploaded content
 * type - its canonical form, decided here from what the store hands back
 * (util/mediatype.h), so an object an older version stored with the
 * declared text (`image/png,text/javascript`) is served as
 * application/octet-stream. The content never runs in the service's
 * origin: `nosniff` stops type guessing (a file named .html sent as
 * image/png stays a PNG), the Content-Security-Policy forbids everything
 * and sandboxes the document without `allow-scripts` (an image/svg+xml
 * opened on its own runs no script, in a unique origin), and any type
 * other than a raster image (SVG, application/octet-stream, an image/ type
 * a browser might treat as a document) comes as
 * `Content-Disposition: attachment`, to be saved rather than shown.
 * Objects never change, so they may be cached for a year.
 */
#include "api.h"
#include "../core/photos.h"
#include "../util/mediatype.h"

#include <stdlib.h>
#include <string.h>

#define PREFIX "/storage/v1/object/public/"

void api_object_get(struct http_req *r)
{
    const char *rest = http_req_path(r) + strlen(PREFIX);
    const char *slash = strchr(rest, '/');
    if (!slash || slash == rest || !slash[1]) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    /* only the photo bucket is public */
    size_t blen = (size_t)(slash - rest);
    struct obj_info info;
    br_err rc = BR_NOTFOUND;
    if (blen == strlen(PHOTO_BUCKET) && !memcmp(rest, PHOTO_BUCKET, blen))
        rc = obj_get(api_app(r)->obj, PHOTO_BUCKET, slash + 1, &info);
    if (api_reply_if_failed(r, rc, "No encontrado")) return;
    char type[MEDIATYPE_MAX + 1];
    mediatype_stored(info.content_type, type);
    free(info.content_type);
    http_add_header(r, "X-Content-Type-Options", "nosniff");
    http_add_header(r, "Content-Security-Policy", "default-src 'none'; sandbox");
    http_add_header(r, "Cache-Control", "public, max-age=31536000, immutable");
    if (!mediatype_raster(type)) http_add_header(r, "Content-Disposition", "attachment");
    http_reply_fd(r, 200, info.fd, info.size, type);
}
