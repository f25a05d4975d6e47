/*
 * fuzz_citas.c - POST /api/citas through the real server, as a signed-in
 * client.
 *
 * The payload is the JSON body (@BARBERO@ and @SERVICIO@ are real ones; the
 * service lasts 30 minutes). Properties: the answer is 201, 400, 404, 409,
 * 413, 429 or 503 - never a 500; a 201's cita belongs to the caller, is
 * `confirmada`, starts at the instant sent (as iso8601_parse reads it) and,
 * for the fixture's service, ends 30 minutes later, both in the API's UTC
 * form.
 */
#include "fz.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t instant(const char *what, const char *s)
{
    int64_t ms = 0;
    if (!s || strlen(s) != ISO8601_LEN || !iso8601_parse(s, strlen(s), &ms))
        fz_fail("%s '%s' is not in the API's form", what, s ? s : "(null)");
    char again[ISO8601_LEN + 1];
    iso8601_format(ms, again);
    if (strcmp(again, s)) fz_fail("%s '%s' is not in the API's form", what, s);
    return ms;
}

static void check_cita(const struct fz_fixture *fx, const struct fz_input *in, json_t *c)
{
    const char *cliente = json_string_value(json_object_get(c, "cliente_id"));
    const char *estado = json_string_value(json_object_get(c, "estado"));
    if (!cliente || strcmp(cliente, fx->client_id)) fz_fail("201 for another client");
    if (!estado || strcmp(estado, "confirmada")) fz_fail("201 with estado %s", estado);
    int64_t ini = instant("fecha_inicio", json_string_value(json_object_get(c, "fecha_inicio")));
    int64_t fin = instant("fecha_fin", json_string_value(json_object_get(c, "fecha_fin")));
    json_t *body = json_loadb(in->payload, in->len, 0, NULL);
    const char *sent = json_string_value(json_object_get(body, "fecha_inicio"));
    int64_t want = 0;
    if (!sent || !iso8601_parse(sent, strlen(sent), &want))
        fz_fail("201 for a fecha_inicio iso8601_parse refuses: %s", in->payload);
    if (want != ini) fz_fail("fecha_inicio %s stored as %lld", sent, (long long)ini);
    const char *serv = json_string_value(json_object_get(c, "servicio_id"));
    if (serv && !strcmp(serv, fx->servicio_id) && fin - ini != 30 * 60000)
        fz_fail("a 30-minute service booked for %lld ms", (long long)(fin - ini));
    json_decref(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct fz_fixture *fx = fz_start();
    struct fz_input in;
    fz_input_parse(data, size, &in);
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", fx->token);
    const char *hdr[] = {auth, "Content-Type: application/json", NULL};
    struct fz_req q = {"POST", "/api/citas", hdr, in.payload, in.len, in.cuts, in.ncuts};
    struct fz_resp r;
    if (fz_http(&q, true, &r)) {
        switch (r.status) {
        case 201:
            check_cita(fx, &in, json_object_get(r.json, "cita"));
            break;
        case 400:
        case 404:
        case 409:
        case 413:
        case 429:
        case 503:
            break;
        default:
            fz_fail("POST /api/citas answered %d: %s", r.status, r.body);
        }
        fz_resp_free(&r);
    }
    fz_input_free(&in);
    return 0;
}
