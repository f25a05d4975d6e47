/*
 * espera.c - the waiting list (see espera.h).
 */
#include "espera.h"
#include "agenda.h"
#include "outbox.h"
#include "../util/log.h"
#include "../util/tz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shop's date of ms as YYYY-MM-DD; false when the C library cannot. */
static bool local_date(int64_t ms, char out[11], int64_t *days)
{
    struct tz_date d;
    int minute;
    if (!tz_utc_to_local(ms, &d, &minute)) return false;
    snprintf(out, 11, "%04u-%02u-%02u", (unsigned)d.y % 10000u, (unsigned)d.m % 100u,
             (unsigned)d.d % 100u);
    if (days) *days = tz_days_from_civil(&d);
    return true;
}

static void date_of_days(int64_t days, char out[11])
{
    struct tz_date d;
    tz_civil_from_days(days, &d);
    snprintf(out, 11, "%04u-%02u-%02u", (unsigned)d.y % 10000u, (unsigned)d.m % 100u,
             (unsigned)d.d % 100u);
}

static br_err unexpected(br_err rc, const char *what)
{
    log_error("lista de espera: %s: %s", what, err_msg());
    if (rc == BR_BUSY) return rc;
    return err_set(BR_INTERNAL, "Error interno del servidor");
}

static bool missing(const char *s)
{
    return !s || !*s;
}

br_err espera_add(struct app *app, const struct principal *caller, const struct espera_nueva *in,
                  struct espera *out)
{
    memset(out, 0, sizeof *out);
    if (missing(in->servicio_id) || missing(in->fecha))
        return err_set(BR_INVALID, "Faltan campos requeridos");
    struct tz_date day;
    if (!tz_date_parse(in->fecha, &day)) return err_set(BR_INVALID, "fecha inválida");
    char today[11];
    int64_t today_days;
    if (!local_date(clock_now_ms(), today, &today_days))
        return unexpected(err_set(BR_INTERNAL, "no local time"), "today");
    int64_t ahead = tz_days_from_civil(&day) - today_days;
    if (ahead < 0) return err_set(BR_INVALID, "La fecha ya pasó");
    if (ahead > app->cfg->max_days_ahead)
        return err_set(BR_INVALID, "Fecha fuera del plazo de reserva");

    struct servicio srv;
    memset(&srv, 0, sizeof srv);
    br_err rc = BR_NOTFOUND;
    if (uuid_parse(in->servicio_id, strlen(in->servicio_id), out->servicio_id))
        rc = store_servicio_get(app->store, out->servicio_id, &srv);
    if (!rc && !srv.activo) rc = BR_NOTFOUND;
    servicio_clear(&srv);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Servicio no encontrado");
    if (rc) return unexpected(rc, "service lookup");
    if (!missing(in->barbero_id)) {
        struct barbero bar;
        memset(&bar, 0, sizeof bar);
        rc = BR_NOTFOUND;
        if (uuid_parse(in->barbero_id, strlen(in->barbero_id), out->barbero_id))
            rc = store_barbero_get(app->store, out->barbero_id, &bar);
        if (!rc && !bar.activo) rc = BR_NOTFOUND;
        barbero_clear(&bar);
        if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Barbero no encontrado");
        if (rc) return unexpected(rc, "barber lookup");
    }
    uuid_v4(out->id);
    memcpy(out->cliente_id, caller->user_id, sizeof out->cliente_id);
    snprintf(out->fecha, sizeof out->fecha, "%s", in->fecha);
    iso8601_format(clock_now_ms(), out->created_at);
    rc = store_espera_add(app->store, out, today, ESPERA_MAX);
    if (rc == BR_CONFLICT) return err_set(BR_CONFLICT, ESPERA_DUP_MSG);
    if (rc == BR_TOOLARGE) return err_set(BR_INVALID, ESPERA_MAX_MSG);
    if (rc) return unexpected(rc, "adding");
    return BR_OK;
}

br_err espera_list(struct app *app, const struct principal *caller, store_espera_fn fn, void *ud)
{
    char today[11];
    if (!local_date(clock_now_ms(), today, NULL))
        return unexpected(err_set(BR_INTERNAL, "no local time"), "today");
    return store_espera_list(app->store, caller->user_id, today, ESPERA_MAX * 2, fn, ud);
}

br_err espera_delete(struct app *app, const struct principal *caller, const char *id)
{
    br_id uid;
    if (!id || !uuid_parse(id, strlen(id), uid)) return err_set(BR_NOTFOUND, "Aviso no encontrado");
    br_err rc = store_espera_delete(app->store, uid, caller->user_id);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Aviso no encontrado");
    if (rc) return unexpected(rc, "removing");
    return BR_OK;
}

br_err espera_sweep(struct app *app)
{
    char today[11];
    if (!local_date(clock_now_ms(), today, NULL)) return BR_OK;
    int64_t removed = 0;
    br_err rc = store_espera_sweep(app->store, today, &removed);
    if (!rc && removed)
        log_info("lista de espera: %lld past entr%s removed", (long long)removed,
                 removed == 1 ? "y" : "ies");
    return rc;
}

/* --- telling the waiting clients ------------------------------------------------- */

struct freed {
    struct app *app;
    const char *barbero_id; /* NULL: any */
    int64_t ini, fin;       /* the freed stretch (whole days for a day's change) */
    int told;
};

/* The first free slot of e's day that meets the freed stretch, with a
 * barber of it (the freed one when it is free then). */
static bool fitting_slot(struct freed *f, const struct espera *e, int64_t *ini, int64_t *fin,
                         br_id barbero)
{
    struct agenda_query q = {e->servicio_id, e->fecha, e->barbero_id[0] ? e->barbero_id : NULL,
                             clock_now_ms()};
    struct agenda_dia d;
    br_err rc = agenda_disponibilidad(f->app, &q, &d);
    if (rc) {
        if (rc != BR_NOTFOUND) /* a service or barber gone is nothing to tell */
            log_warn("lista de espera: free slots of %s: %s", e->fecha, err_msg());
        return false;
    }
    bool found = false;
    /* first the slots that start inside the freed stretch (the time that
     * was given up), then any that meets it */
    for (int i = 0; i < 2 * d.nhuecos && !found; i++) {
        const struct agenda_hueco *h = &d.huecos[i % d.nhuecos];
        if (h->inicio_ms >= f->fin || h->fin_ms <= f->ini) continue;
        if (i < d.nhuecos && h->inicio_ms < f->ini) continue;
        int pick = -1;
        for (int k = 0; k < h->nb; k++) {
            const char *id = d.ids[d.idx[h->first + k]];
            if (pick < 0 && (!f->barbero_id || !strcmp(id, f->barbero_id))) pick = k;
        }
        if (pick < 0 && f->barbero_id) continue; /* only other barbers are free then */
        if (pick < 0) pick = 0;
        memcpy(barbero, d.ids[d.idx[h->first + pick]], sizeof(br_id));
        *ini = h->inicio_ms;
        *fin = h->fin_ms;
        found = true;
    }
    agenda_dia_clear(&d);
    return found;
}

static br_err tell_one(void *ud, const struct espera *e)
{
    struct freed *f = ud;
    if (!e->email || !*e->email) return BR_OK;
    int64_t ini, fin;
    br_id barbero;
    if (!fitting_slot(f, e, &ini, &fin, barbero)) return BR_OK;
    struct servicio srv;
    struct barbero bar;
    memset(&srv, 0, sizeof srv);
    memset(&bar, 0, sizeof bar);
    if (store_servicio_get(f->app->store, e->servicio_id, &srv) != BR_OK ||
        store_barbero_get(f->app->store, barbero, &bar) != BR_OK) {
        log_warn("lista de espera: names for a notice: %s", err_msg());
        servicio_clear(&srv);
        barbero_clear(&bar);
        return BR_OK;
    }
    struct outbox_msg m;
    memset(&m, 0, sizeof m);
    uuid_v4(m.id);
    memcpy(m.cita_id, e->id, sizeof m.cita_id);
    m.recipient = (char *)e->email;
    m.cliente_nombre = (char *)(e->nombre && *e->nombre ? e->nombre : e->email);
    m.barbero_nombre = bar.nombre;
    m.servicio_nombre = srv.nombre;
    iso8601_format(ini, m.fecha_inicio);
    iso8601_format(fin, m.fecha_fin);
    iso8601_format(clock_now_ms(), m.created_at);
    m.kind = "aviso_espera";
    m.enlace = xasprintf("%s/reservar?servicio=%s&barbero=%s&fecha=%s&inicio=%s",
                         f->app->public_url ? f->app->public_url : "", e->servicio_id, barbero,
                         e->fecha, m.fecha_inicio);
    bool queued = false;
    if (store_espera_avisar(f->app->store, e->id, barbero, m.fecha_inicio, &m, &queued) != BR_OK)
        log_warn("lista de espera: queuing a notice for entry %s: %s", e->id, err_msg());
    else if (queued)
        f->told++;
    free(m.enlace);
    servicio_clear(&srv);
    barbero_clear(&bar);
    return BR_OK;
}

/* The candidates, copied out of the listing before anyone is told (no
 * connection is held while the slots are read and the notices written). */
struct cand_list {
    struct espera e[ESPERA_FANOUT];
    char email[ESPERA_FANOUT][256];
    char nombre[ESPERA_FANOUT][256];
    int n;
};

static br_err collect(void *ud, const struct espera *e)
{
    struct cand_list *l = ud;
    if (l->n >= ESPERA_FANOUT || !e->email) return BR_OK;
    l->e[l->n] = *e;
    snprintf(l->email[l->n], sizeof l->email[0], "%s", e->email);
    snprintf(l->nombre[l->n], sizeof l->nombre[0], "%s", e->nombre ? e->nombre : "");
    l->e[l->n].email = l->email[l->n];
    l->e[l->n].nombre = l->nombre[l->n];
    l->n++;
    return BR_OK;
}

static void tell(struct freed *f, const char *desde, const char *hasta)
{
    struct cand_list *l = xcalloc(1, sizeof *l);
    if (store_espera_candidatas(f->app->store, desde, hasta, f->barbero_id, ESPERA_FANOUT, collect,
                                l) != BR_OK) {
        log_warn("lista de espera: reading the entries of %s..%s: %s", desde, hasta, err_msg());
        free(l);
        return;
    }
    for (int i = 0; i < l->n; i++)
        (void)tell_one(f, &l->e[i]);
    free(l);
    if (f->told) {
        log_info("lista de espera: %d notice(s) of a freed slot queued", f->told);
        outbox_wake(f->app->outbox);
    }
}

void espera_liberado(struct app *app, const char *barbero_id, const char *inicio, const char *fin)
{
    int64_t ini, end;
    if (!iso8601_parse(inicio, strlen(inicio), &ini) || !iso8601_parse(fin, strlen(fin), &end))
        return;
    if (end <= clock_now_ms()) return; /* over already */
    char dia[11];
    if (!local_date(ini, dia, NULL)) return;
    struct freed f = {app, barbero_id, ini, end, 0};
    tell(&f, dia, dia);
}

void espera_liberado_dias(struct app *app, const char *barbero_id, const char *desde,
                          const char *hasta)
{
    char today[11], last[11];
    int64_t today_days;
    if (!local_date(clock_now_ms(), today, &today_days)) return;
    date_of_days(today_days + app->cfg->max_days_ahead, last);
    const char *lo = strcmp(desde, today) < 0 ? today : desde;
    const char *hi = strcmp(hasta, last) > 0 ? last : hasta;
    if (strcmp(lo, hi) > 0) return;
    struct freed f = {app, barbero_id, INT64_MIN, INT64_MAX, 0};
    tell(&f, lo, hi);
}
