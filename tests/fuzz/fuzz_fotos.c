/*
 * fuzz_fotos.c - POST /api/fotos (multipart/form-data) through the real
 * server, as a signed-in client: libmicrohttpd's post processor is driven
 * exactly as the server drives it, with the body arriving in the pieces the
 * input's cuts make.
 *
 * The payload is the body of a form with boundary "fuzzb" (@CITA@ is a real
 * booking). Each input is sent twice: in one piece, then cut. Properties:
 * - each answer is 201, 400, 404, 413, 429 or 503, or 500 "Error al subir
 *   imagen: ..." (the object store refusing a key made of a strange tipo or
 *   extension) - never another 500;
 * - both sends get the same answer (a body is parsed the same however it is
 *   segmented); after two 201s the two stored objects hold the same bytes,
 *   with the same content type, and those bytes appear in the body sent;
 * - a stored photo can be fetched from its URL and deleted (which keeps the
 *   three-per-tipo limit out of the way); it is served with a canonical
 *   type (an image/ type or application/octet-stream, never the declared
 *   text), as an attachment unless that type is a raster image.
 */
#define _GNU_SOURCE
#include "fz.h"
#include "util/mediatype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct outcome {
    int status;
    char *error;
    char *object; /* the stored bytes after a 201 */
    size_t len;
    char *type; /* their content type */
    char *tipo;
};

static char auth[128];

static void fetch_and_delete(const struct fz_fixture *fx, json_t *foto, struct outcome *o)
{
    const char *url = json_string_value(json_object_get(foto, "url"));
    const char *id = json_string_value(json_object_get(foto, "id"));
    const char *tipo = json_string_value(json_object_get(foto, "tipo"));
    size_t bl = strlen(fx->base);
    if (!url || !id || !tipo || strncmp(url, fx->base, bl)) fz_fail("201 without url, id or tipo");
    o->tipo = xstrdup(tipo);
    struct fz_req get = {"GET", url + bl, NULL, NULL, 0, NULL, 0};
    struct fz_resp g;
    if (!fz_http(&get, false, &g) || g.status != 200)
        fz_fail("GET %s of a stored photo: %d", url + bl, g.status);
    char v[256];
    o->type = xstrdup(fz_resp_header(&g, "Content-Type", v, sizeof v) ? v : "");
    char canonical[MEDIATYPE_MAX + 1];
    mediatype_stored(o->type, canonical);
    if (strcmp(canonical, o->type) != 0) fz_fail("photo served as \"%s\"", o->type);
    bool attachment = fz_resp_header(&g, "Content-Disposition", v, sizeof v) != NULL;
    if (attachment != !mediatype_raster(o->type) || (attachment && strcmp(v, "attachment") != 0))
        fz_fail("photo of type %s served %s", o->type, attachment ? v : "inline");
    o->object = g.body;
    o->len = g.len;
    g.body = NULL;
    fz_resp_free(&g);

    char target[128];
    snprintf(target, sizeof target, "/api/fotos?id=%s", id);
    const char *hdr[] = {auth, NULL};
    struct fz_req del = {"DELETE", target, hdr, NULL, 0, NULL, 0};
    struct fz_resp d;
    if (!fz_http(&del, true, &d) || d.status != 200)
        fz_fail("DELETE of a stored photo: %d", d.status);
    fz_resp_free(&d);
}

static void upload(const struct fz_fixture *fx, const struct fz_input *in, bool cut,
                   struct outcome *o)
{
    memset(o, 0, sizeof *o);
    const char *hdr[] = {auth, "Content-Type: multipart/form-data; boundary=fuzzb", NULL};
    struct fz_req q = {"POST",
                       "/api/fotos",
                       hdr,
                       in->payload,
                       in->len,
                       cut ? in->cuts : NULL,
                       cut ? in->ncuts : 0};
    struct fz_resp r;
    if (!fz_http(&q, true, &r)) fz_fail("the server hung up on an upload");
    o->status = r.status;
    o->error = xstrdup(fz_resp_error(&r));
    switch (r.status) {
    case 201:
        fetch_and_delete(fx, json_object_get(r.json, "foto"), o);
        if (o->len && !memmem(in->payload, in->len, o->object, o->len))
            fz_fail("stored %zu bytes that are not in the body", o->len);
        break;
    case 500:
        if (strncmp(o->error, "Error al subir imagen: ", 23))
            fz_fail("upload answered 500: %s", r.body);
        break;
    case 400:
    case 404:
    case 413:
    case 429:
    case 503:
        break;
    default:
        fz_fail("upload answered %d: %s", r.status, r.body);
    }
    fz_resp_free(&r);
}

static void outcome_free(struct outcome *o)
{
    free(o->error);
    free(o->object);
    free(o->type);
    free(o->tipo);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct fz_fixture *fx = fz_start();
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", fx->token);
    struct fz_input in;
    fz_input_parse(data, size, &in);
    struct outcome whole, cut;
    upload(fx, &in, false, &whole);
    if (in.ncuts) {
        upload(fx, &in, true, &cut);
        /* a body parses the same however it was cut into reads */
        if (whole.status != cut.status || strcmp(whole.error, cut.error))
            fz_fail("in one piece: %d %s; cut: %d %s", whole.status, whole.error, cut.status,
                    cut.error);
        if (whole.status == 201 &&
            (whole.len != cut.len || memcmp(whole.object, cut.object, whole.len) ||
             strcmp(whole.type, cut.type) || strcmp(whole.tipo, cut.tipo)))
            fz_fail("in one piece: %zu bytes (%s, tipo %s); cut: %zu bytes (%s, tipo %s)",
                    whole.len, whole.type, whole.tipo, cut.len, cut.type, cut.tipo);
        outcome_free(&cut);
    }
    outcome_free(&whole);
    fz_input_free(&in);
    return 0;
}
