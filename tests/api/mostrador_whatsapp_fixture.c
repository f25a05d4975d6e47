/*
 * mostrador_whatsapp_fixture.c - what the tests of the front desk with
 * WhatsApp share (see mostrador_whatsapp_fixture.h).
 */
#define _GNU_SOURCE
#include "mostrador_whatsapp_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct srv S;
struct smtp_sink K;
char *SERVICIO;
char *BARBERO;
struct user ADMIN, BARB;

/* --- the Graph API double (wa_sink.h) ------------------------------------------------------ */

struct wa_sink D;

/* --- the server -------------------------------------------------------------------------- */

static struct wa_env E;

void desk_wa_shop_start(const char *token)
{
    srv_init(&S);
    wa_shop_start(&S, &K, &D, &E, token, WA_PHONE_ID, NULL);
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    make_user(&S, &BARB, "Barbero Uno", "barbero");
}

int desk_wa_group_teardown(void **state)
{
    (void)state;
    wa_shop_stop(&S, &K, &D);
    free(SERVICIO);
    free(BARBERO);
    return 0;
}

void entry_body(char *out, size_t n, const char *fecha, const char *barbero, const char *cliente_id)
{
    int k = snprintf(out, n, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\"", SERVICIO, fecha);
    if (barbero) k += snprintf(out + k, n - (size_t)k, ",\"barbero_id\":\"%s\"", barbero);
    if (cliente_id) k += snprintf(out + k, n - (size_t)k, ",\"cliente_id\":\"%s\"", cliente_id);
    snprintf(out + k, n - (size_t)k, "}");
}

char *desk_client(const char *nombre, const char *telefono, const char *fecha, const char *hhmm)
{
    char body[600];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%sT%s:00Z\","
             "\"cliente\":{\"nombre\":\"%s\",\"telefono\":\"%s\"}}",
             BARBERO, SERVICIO, fecha, hhmm, nombre, telefono);
    struct resp r;
    http_json(&S, "POST", "/api/agenda/citas", BARB.token, body, &r);
    if (r.status != 201) fail_msg("desk booking: %ld %s", r.status, r.body);
    char *id = strdup(jstr(json_object_get(r.json, "cita"), "cliente_id"));
    resp_free(&r);
    return id;
}
