/*
 * cierres.c - days off and closures that meet bookings (see cierres.h).
 *
 * The dates of a day off are the shop's local dates, both included: the
 * appointments that start from the first one's local midnight to the
 * midnight after the last (util/tz.h, correct across daylight-saving
 * changes). Each cancel is its own transaction through cambios.c, so a
 * crash halfway leaves some cancelled (each with its e-mails queued) and
 * the rest confirmed, and calling again finishes the work.
 */
#include "cierres.h"
#include "cambios.h"
#include "../domain/rules.h"
#include "../util/log.h"
#include "../util/tz.h"

#include <stdlib.h>
#include <string.h>

/* The UTC instants of a's dates: [desde 00:00, the day after hasta 00:00),
 * each midnight the clocks skip (America/Santiago's spring) taken as the
 * first minute of its day that exists. */
static bool window(const struct ausencia *a, br_ts desde, br_ts hasta)
{
    struct tz_date d, h;
    int64_t ms0, ms1;
    if (!tz_date_parse(a->desde, &d) || !tz_date_parse(a->hasta, &h)) return false;
    tz_civil_from_days(tz_days_from_civil(&h) + 1, &h);
    if (!tz_local_instant(&d, 0, &ms0) || !tz_local_instant(&h, 0, &ms1)) return false;
    iso8601_format(ms0, desde);
    iso8601_format(ms1, hasta);
    return true;
}

br_err cierres_afectadas(struct app *app, const struct ausencia *a, int64_t now_ms,
                         store_cita_aviso_fn fn, void *ud)
{
    br_ts desde, hasta, now;
    if (!window(a, desde, hasta)) return BR_OK; /* never stored so */
    iso8601_format(now_ms, now);
    return store_citas_afectadas(app->store, a->barbero_id[0] ? a->barbero_id : NULL, desde, hasta,
                                 now, CIERRES_MAX, fn, ud);
}

/* The appointments to cancel, copied out of the listing (the cancels
 * write, so they cannot run inside its read). */
#define LISTA_TEXTOS 5

struct lista {
    struct cita_aviso *v;
    char **strs; /* LISTA_TEXTOS per row: cliente, barbero, servicio, notas, telefono */
    int n;
};

static br_err collect(void *ud, const struct cita_aviso *c)
{
    struct lista *l = ud;
    if (l->n >= CIERRES_MAX) return BR_OK;
    struct cita_aviso *k = &l->v[l->n];
    *k = *c;
    char **s = &l->strs[LISTA_TEXTOS * l->n];
    k->cliente_nombre = s[0] = xstrdup(c->cliente_nombre);
    k->barbero_nombre = s[1] = xstrdup(c->barbero_nombre);
    k->servicio_nombre = s[2] = xstrdup(c->servicio_nombre);
    k->notas = s[3] = xstrdup_or_null(c->notas);
    k->cliente_telefono = s[4] = xstrdup_or_null(c->cliente_telefono);
    l->n++;
    return BR_OK;
}

static void lista_free(struct lista *l)
{
    for (int i = 0; i < LISTA_TEXTOS * l->n; i++)
        free(l->strs[i]);
    free(l->strs);
    free(l->v);
}

br_err cierres_cancelar(struct app *app, const char *id, const char *mensaje,
                        store_cita_aviso_fn fn, void *ud)
{
    if (!rule_mensaje_ok(mensaje)) return err_set(BR_INVALID, "Campo inválido: mensaje");
    br_id aid;
    if (!id || !uuid_parse(id, strlen(id), aid))
        return err_set(BR_NOTFOUND, "Ausencia no encontrada");
    struct ausencia a;
    br_err rc = store_ausencia_get(app->store, aid, &a);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Ausencia no encontrada");
    if (rc) return rc;
    /* each is cancelled only while it still falls on the dates: one moved
     * off them since it was listed is no longer the closure's */
    br_ts desde, hasta;
    bool dentro_ok = window(&a, desde, hasta);
    struct cambio_dentro dentro = {desde, hasta, a.barbero_id[0] ? a.barbero_id : NULL};
    int done = 0;
    /* CIERRES_MAX at a time, listed again after each batch (those cancelled
     * are listed no more) until one is not full: every appointment the day
     * off meets, never only the first CIERRES_MAX of a long closure; a
     * batch that cancels nothing (each moved meanwhile) ends it too */
    bool full = true;
    while (!rc && dentro_ok && full) {
        struct lista l = {xcalloc(CIERRES_MAX, sizeof *l.v),
                          xcalloc(LISTA_TEXTOS * CIERRES_MAX, sizeof(char *)), 0};
        rc = cierres_afectadas(app, &a, clock_now_ms(), collect, &l);
        int batch = 0;
        for (int i = 0; i < l.n && !rc; i++) {
            br_id cita_id;
            br_err c = cambios_cancelar_cierre(app, l.v[i].id, mensaje, &dentro, cita_id);
            if (c == BR_CONFLICT || c == BR_NOTFOUND) continue; /* cancelled or moved meanwhile */
            if (c) {
                rc = c;
                break;
            }
            batch++;
            rc = fn(ud, &l.v[i]);
        }
        full = l.n >= CIERRES_MAX && batch > 0;
        done += batch;
        lista_free(&l);
    }
    if (done)
        log_info("agenda: ausencia %s: %d cita%s cancelled", a.id, done, done == 1 ? "" : "s");
    free(a.motivo);
    return rc;
}
