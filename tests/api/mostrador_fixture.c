/*
 * mostrador_fixture.c - what the front desk's tests share (see
 * mostrador_fixture.h): the group's server, and the desk's requests.
 */
#define _GNU_SOURCE
#include "mostrador_fixture.h"

#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERV_MIN 30

struct srv S;
static struct smtp_sink K;
char *BARBERO, *SERVICIO, *BARBERO2;
struct user ANA, BARB, ADMIN;

int mostrador_group_setup(void **state)
{
    (void)state;
    /* the shop's zone UTC: the working hours below are UTC times */
    const char *env[] = {"BARBERIA_MIN_NOTICE_MIN=0", "BARBERIA_TZ=UTC",
                         "BARBERIA_MAX_DAYS_AHEAD=3660", NULL};
    srv_start_mailing(&S, &K, env);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", SERV_MIN, 15.0);
    BARBERO2 = make_barbero(&S, "Diego Sanz");
    signup_user(&S, &ANA, "Ana Pérez");
    make_user(&S, &BARB, "Barbero Uno", "barbero");
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    return 0;
}

int mostrador_group_teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    smtp_sink_stop(&K);
    free(BARBERO);
    free(BARBERO2);
    free(SERVICIO);
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

void next_slot(char out[ISO8601_LEN + 1])
{
    static int n;
    int k = n++;
    int64_t day = iso8601_days_from_civil(2032, 3, 1) + (int64_t)(k / 10) * 7;
    iso8601_format(day * 86400000LL + (9 * 60 + (k % 10) * 30) * 60000LL, out);
}

void from_now(int64_t minutes, char out[ISO8601_LEN + 1])
{
    iso8601_format(clock_now_ms() + minutes * 60000, out);
}

void desk(const struct user *u, const char *body, struct resp *r)
{
    http_json(&S, "POST", "/api/agenda/citas", u ? u->token : NULL, body, r);
}

char *desk_ok(const struct user *u, const char *body, char cliente[40])
{
    struct resp r;
    desk(u, body, &r);
    if (r.status != 201) fprintf(stderr, "desk: %ld %s\n", r.status, r.body);
    assert_int_equal(r.status, 201);
    json_t *c = json_object_get(r.json, "cita");
    assert_non_null(c);
    assert_string_equal(jstr(c, "estado"), "confirmada");
    if (cliente) snprintf(cliente, 40, "%s", jstr(c, "cliente_id"));
    char *id = strdup(jstr(c, "id"));
    resp_free(&r);
    return id;
}

char *body_for(const char *cliente_id, const char *fecha, const char *extra)
{
    char *b = NULL;
    if (asprintf(&b,
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
                 "\"cliente_id\":\"%s\"%s}",
                 BARBERO, SERVICIO, fecha, cliente_id, extra ? extra : "") < 0)
        fail_msg("asprintf");
    return b;
}

char *body_new(const char *cliente_json, const char *fecha, const char *extra)
{
    char *b = NULL;
    if (asprintf(&b,
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
                 "\"cliente\":%s%s}",
                 BARBERO, SERVICIO, fecha, cliente_json, extra ? extra : "") < 0)
        fail_msg("asprintf");
    return b;
}

void asistencia(const struct user *u, const char *id, const char *estado, struct resp *r)
{
    char path[160], body[96];
    snprintf(path, sizeof path, "/api/citas/%s/asistencia", id);
    snprintf(body, sizeof body, "{\"estado\":\"%s\"}", estado);
    http_json(&S, "POST", path, u ? u->token : NULL, body, r);
}

void asistencia_expect(const struct user *u, const char *id, const char *estado, long status,
                       const char *msg)
{
    struct resp r;
    asistencia(u, id, estado, &r);
    if (r.status != status) fprintf(stderr, "asistencia %s: %ld %s\n", estado, r.status, r.body);
    if (msg)
        expect_error(&r, status, msg);
    else
        assert_int_equal(r.status, status);
    resp_free(&r);
}

const char *estado_of(const char *cita)
{
    static char buf[64];
    char *v = db_query(&S, "SELECT estado FROM citas WHERE id = '%s'", cita);
    snprintf(buf, sizeof buf, "%s", v ? v : "");
    free(v);
    char *nl = strchr(buf, '\n');
    if (nl) *nl = '\0';
    return buf;
}

json_t *find_in(const char *path, const struct user *u, const char *key, const char *id,
                struct resp *r)
{
    http_get(&S, path, u->token, r);
    assert_int_equal(r->status, 200);
    json_t *list = json_object_get(r->json, key);
    assert_true(json_is_array(list));
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (!strcmp(jstr(e, "id"), id)) return e;
    }
    return NULL;
}
