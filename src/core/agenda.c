/*
 * agenda.c - bookable hours (see agenda.h).
 *
 * The free slots of a date: for each barber considered (one, or every
 * active one by nombre) that works that weekday and is not off, each
 * interval of its schedule gives the grid inicio, inicio + paso, ... in
 * local minutes; each grid time is mapped to UTC through the zone (a time
 * in the spring-forward gap does not exist and is skipped; a repeated one
 * is its first occurrence); a slot is free when the whole service ends by
 * the interval's end (in real time), it starts at least antelación from
 * now, and it intersects none of the barber's non-cancelled appointments
 * (read once per barber, for the span of its day). Dates outside today ..
 * today + dias_max (in the shop's zone) have no slots.
 *
 * The clock enters only through today's date and the notice, so an answer
 * says how long it holds (vigente_hasta_ms) and under what it may be kept
 * (agenda_disponibilidad_clave): GET /api/disponibilidad remembers it so.
 */
#include "agenda.h"
#include "catalog.h"
#include "espera.h"
#include "../domain/rules.h"
#include "../util/log.h"
#include "../util/tz.h"
#include "../util/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRAMOS_DIA_MAX 48 /* intervals of one barber on one day */

/* --- schedules ---------------------------------------------------------------------- */

static int tramo_cmp(const void *a, const void *b)
{
    const struct horario_tramo *x = a, *y = b;
    if (x->dia != y->dia) return x->dia < y->dia ? -1 : 1;
    return x->inicio < y->inicio ? -1 : x->inicio > y->inicio;
}

br_err agenda_horario_check(struct horario_tramo *t, int n)
{
    if (n > RULE_TRAMOS_MAX) return err_set(BR_INVALID, "Demasiados tramos de horario");
    for (int i = 0; i < n; i++) {
        if (!rule_dia_ok(t[i].dia)) return err_set(BR_INVALID, "Horario inválido: dia");
        if (!rule_tramo_ok(t[i].inicio, t[i].fin))
            return err_set(BR_INVALID, "Horario inválido: inicio debe ser anterior a fin");
    }
    qsort(t, (size_t)n, sizeof *t, tramo_cmp);
    for (int i = 1; i < n; i++)
        if (rule_tramos_overlap(t[i - 1].dia, t[i - 1].inicio, t[i - 1].fin, t[i].dia, t[i].inicio,
                                t[i].fin))
            return err_set(BR_INVALID, "Horario inválido: tramos solapados");
    return BR_OK;
}

struct semana {
    struct horario_tramo t[RULE_TRAMOS_MAX];
    int n;
};

static br_err semana_add(void *ud, const char *id, const char *nombre,
                         const struct horario_tramo *t)
{
    (void)id;
    (void)nombre;
    struct semana *w = ud;
    if (w->n < RULE_TRAMOS_MAX) w->t[w->n++] = *t;
    return BR_OK;
}

/* The days (bit 1u << dia) on which the week t (n intervals) holds a
 * minute the week old does not: time added, which may free a slot. */
static unsigned semana_ampliada(const struct semana *old, const struct horario_tramo *t, int n)
{
    unsigned dias = 0;
    for (int i = 0; i < n; i++) {
        /* walk t[i] from its start over old's intervals of that day */
        int at = t[i].inicio;
        bool moved = true;
        while (at < t[i].fin && moved) {
            moved = false;
            for (int k = 0; k < old->n; k++)
                if (old->t[k].dia == t[i].dia && old->t[k].inicio <= at && old->t[k].fin > at) {
                    at = old->t[k].fin;
                    moved = true;
                }
        }
        if (at < t[i].fin) dias |= 1u << t[i].dia;
    }
    return dias;
}

#define SEMANA_ENTERA 0xFEu /* bits 1 to 7: every day of the week */

br_err agenda_horario_set(struct app *app, const char *barbero_id, struct horario_tramo *t, int n)
{
    br_err rc = agenda_horario_check(t, n);
    if (rc) return rc;
    /* hours widened on a day of the week may free slots someone waits for
     * on the dates of that day; the same hours, or fewer, free none (the
     * week as it was is read first: a failed read counts as every day
     * widened, a notice too many rather than one missed) */
    struct semana *old = xcalloc(1, sizeof *old);
    unsigned dias = store_horario_each(app->store, barbero_id, semana_add, old) != BR_OK
                        ? SEMANA_ENTERA
                        : semana_ampliada(old, t, n);
    free(old);
    struct espera_liberacion *libera = NULL;
    size_t nl = dias ? espera_liberaciones_semana(app, barbero_id, dias, &libera) : 0;
    rc = store_horario_set(app->store, barbero_id, t, n, libera, nl);
    if (!rc && nl) espera_liberado(app);
    free(libera);
    return rc;
}

/* --- days off and closures -------------------------------------------------------------- */

br_err agenda_range_check(const char *desde, const char *hasta)
{
    static const char *const why[] = {
        [RULE_RANGE_DESDE] = "desde inválida",
        [RULE_RANGE_HASTA] = "hasta inválida",
        [RULE_RANGE_REVERSED] = "hasta es anterior a desde",
    };
    enum rule_range r = rule_date_range(desde, hasta);
    return r == RULE_RANGE_OK ? BR_OK : err_set(BR_INVALID, "%s", why[r]);
}

br_err agenda_ausencia_add(struct app *app, const struct ausencia_nueva *in, struct ausencia *out)
{
    memset(out, 0, sizeof *out);
    br_err bad = agenda_range_check(in->desde, in->hasta);
    if (bad) return bad;
    if (!rule_motivo_ok(in->motivo)) return err_set(BR_INVALID, "Campo inválido: motivo");
    if (in->barbero_id) {
        struct barbero b;
        memset(&b, 0, sizeof b);
        br_err rc = uuid_parse(in->barbero_id, strlen(in->barbero_id), out->barbero_id)
                        ? store_barbero_get(app->store, out->barbero_id, &b)
                        : BR_NOTFOUND;
        barbero_clear(&b);
        if (rc == BR_NOTFOUND) rc = err_set(BR_NOTFOUND, "Barbero no encontrado");
        if (rc) {
            memset(out, 0, sizeof *out);
            return rc;
        }
    }
    uuid_v4(out->id);
    memcpy(out->desde, in->desde, sizeof out->desde);
    memcpy(out->hasta, in->hasta, sizeof out->hasta);
    out->motivo = (char *)in->motivo;
    iso8601_format(clock_now_ms(), out->created_at);
    return store_ausencia_add(app->store, out);
}

/* Finds the absence id among all (they are few), for what its removal frees. */
struct ausencia_find {
    const char *id;
    bool found;
    br_id barbero_id;
    char desde[11], hasta[11];
};

static br_err find_ausencia(void *ud, const struct ausencia *a)
{
    struct ausencia_find *f = ud;
    if (f->found || strcmp(a->id, f->id) != 0) return BR_OK;
    f->found = true;
    memcpy(f->barbero_id, a->barbero_id, sizeof f->barbero_id);
    memcpy(f->desde, a->desde, sizeof f->desde);
    memcpy(f->hasta, a->hasta, sizeof f->hasta);
    return BR_OK;
}

br_err agenda_ausencia_delete(struct app *app, const char *id)
{
    struct ausencia_find f = {.id = id};
    if (store_ausencias_each(app->store, find_ausencia, &f) != BR_OK) f.found = false;
    /* the days it closed may have slots someone waits for */
    struct espera_liberacion libera;
    bool frees =
        f.found && espera_liberacion_dias(app, &libera, f.barbero_id[0] ? f.barbero_id : NULL,
                                          f.desde, f.hasta);
    br_err rc = store_ausencia_delete(app->store, id, frees ? &libera : NULL);
    if (!rc && frees) espera_liberado(app);
    return rc;
}

/* --- free slots ------------------------------------------------------------------------ */

struct busy {
    int64_t ini, fin; /* fin with its service's clean-up margin */
};

struct barber_day {
    br_id id;
    struct horario_tramo t[TRAMOS_DIA_MAX];
    int nt;
    bool off;
    struct busy *busy;
    int nbusy, capbusy;
};

struct collect {
    struct barber_day *b;
    int nb, cap;
    bool closed; /* the whole shop */
};

static br_err on_tramo(void *ud, const char *id, const char *nombre, const struct horario_tramo *t)
{
    (void)nombre;
    struct collect *c = ud;
    if (c->nb == 0 || strcmp(c->b[c->nb - 1].id, id) != 0) {
        VEC_RESERVE(c->b, c->nb, c->cap, 8);
        struct barber_day *b = &c->b[c->nb++];
        memset(b, 0, sizeof *b);
        memcpy(b->id, id, sizeof b->id);
    }
    struct barber_day *b = &c->b[c->nb - 1];
    if (b->nt < TRAMOS_DIA_MAX) b->t[b->nt++] = *t;
    return BR_OK;
}

static br_err on_ausencia(void *ud, const struct ausencia *a)
{
    struct collect *c = ud;
    if (!a->barbero_id[0]) {
        c->closed = true;
        return BR_OK;
    }
    for (int i = 0; i < c->nb; i++)
        if (!strcmp(c->b[i].id, a->barbero_id)) c->b[i].off = true;
    return BR_OK;
}

static br_err on_busy(void *ud, const char *inicio, const char *fin, int64_t margen_min)
{
    struct barber_day *b = ud;
    int64_t i, f;
    if (!iso8601_parse(inicio, strlen(inicio), &i) || !iso8601_parse(fin, strlen(fin), &f))
        return err_set(BR_STORE, "a stored appointment time does not parse");
    VEC_RESERVE(b->busy, b->nbusy, b->capbusy, 16);
    b->busy[b->nbusy++] = (struct busy){i, f + margen_min * 60000};
    return BR_OK;
}

struct cand {
    int64_t ini;
    int local_min;
    int barber;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->ini != y->ini) return x->ini < y->ini ? -1 : 1;
    return x->barber < y->barber ? -1 : x->barber > y->barber;
}

static br_err internal(br_err rc, const char *what)
{
    log_error("disponibilidad: %s: %s", what, err_msg());
    if (err_unavailable(rc)) return rc;
    return err_set(BR_INTERNAL, "Error interno del servidor");
}

br_err agenda_disponibilidad(struct app *app, const struct agenda_query *q, struct agenda_dia *out)
{
    memset(out, 0, sizeof *out);
    out->vigente_hasta_ms = INT64_MAX;
    if (!q->servicio_id || !*q->servicio_id || !q->fecha || !*q->fecha)
        return err_set(BR_INVALID, "Faltan campos requeridos");
    struct tz_date day;
    if (!tz_date_parse(q->fecha, &day)) return err_set(BR_INVALID, "fecha inválida");
    memcpy(out->fecha, q->fecha, 11);

    struct servicio srv;
    br_err rc = catalog_servicio_activo(app, q->servicio_id, &srv);
    int64_t dur_ms = srv.duracion_min * 60000;
    int64_t margen_ms = srv.margen_min * 60000; /* kept free after the new appointment */
    servicio_clear(&srv);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Servicio no encontrado");
    if (rc) return internal(rc, "service lookup");
    br_id bid;
    if (q->barbero_id) {
        struct barbero bar;
        rc = catalog_barbero_activo(app, q->barbero_id, &bar);
        memcpy(bid, bar.id, sizeof bid);
        barbero_clear(&bar);
        if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Barbero no encontrado");
        if (rc) return internal(rc, "barber lookup");
    }

    /* the window of bookable dates, from today in the shop's zone */
    const struct config *cfg = app->cfg;
    struct tz_date today;
    int now_min;
    if (!tz_utc_to_local(q->now_ms, &today, &now_min))
        return internal(err_set(BR_INTERNAL, "no local time"), "today");
    int64_t ahead = tz_days_from_civil(&day) - tz_days_from_civil(&today);
    if (ahead < 0 || ahead > cfg->max_days_ahead) return BR_OK;

    struct collect c = {0};
    rc = store_horario_dia(app->store, tz_iso_weekday(&day), q->barbero_id ? bid : NULL, on_tramo,
                           &c);
    if (!rc) rc = store_ausencias_on(app->store, q->fecha, on_ausencia, &c);
    struct cand *cand = NULL;
    int ncand = 0, capcand = 0;
    int64_t notice_ms = q->sin_aviso ? 0 : (int64_t)cfg->min_notice_min * 60000;
    int64_t earliest = q->now_ms + notice_ms;
    int64_t step = cfg->slot_min > 0 ? cfg->slot_min : 15;
    for (int i = 0; !rc && !c.closed && i < c.nb; i++) {
        struct barber_day *b = &c.b[i];
        if (b->off || b->nt == 0) continue;
        int64_t lo, hi;
        if (!tz_local_instant(&day, b->t[0].inicio, &lo) ||
            !tz_local_instant(&day, b->t[b->nt - 1].fin, &hi))
            continue;
        br_ts lo_s, hi_s;
        /* what may reach the day with its margin: what starts up to a day
         * and the longest margin before it, and up to the longest margin
         * after it */
        iso8601_format(lo - (int64_t)(RULE_DURACION_MAX + RULE_MARGEN_MAX) * 60000, lo_s);
        iso8601_format(hi + (int64_t)RULE_MARGEN_MAX * 60000, hi_s);
        rc = store_citas_busy_margen(app->store, b->id, lo_s, hi_s, q->sin_cita, on_busy, b);
        for (int k = 0; !rc && k < b->nt; k++) {
            int64_t end_limit;
            if (!tz_local_instant(&day, b->t[k].fin, &end_limit)) continue;
            for (int m = b->t[k].inicio; m < b->t[k].fin; m += (int)step) {
                int64_t s;
                if (!tz_local_to_utc(&day, m, &s)) continue; /* in the spring gap */
                int64_t e = s + dur_ms;
                if (e > end_limit) break;
                if (s < earliest) continue;
                bool taken = false;
                for (int j = 0; j < b->nbusy && !taken; j++)
                    taken = b->busy[j].ini < e + margen_ms && b->busy[j].fin > s;
                if (taken) continue;
                VEC_RESERVE(cand, ncand, capcand, 64);
                cand[ncand++] = (struct cand){s, m, i};
            }
        }
    }
    if (rc) {
        rc = internal(rc, "schedule read");
    } else if (ncand) {
        qsort(cand, (size_t)ncand, sizeof *cand, cand_cmp);
        /* as the clock moves on, the notice passes the slots one by one,
         * the first one offered first; nothing else here depends on it */
        out->vigente_hasta_ms = cand[0].ini - notice_ms + 1;
        out->ids = xcalloc((size_t)c.nb, sizeof *out->ids);
        out->nids = c.nb;
        for (int i = 0; i < c.nb; i++)
            memcpy(out->ids[i], c.b[i].id, sizeof out->ids[i]);
        out->idx = xcalloc((size_t)ncand, sizeof *out->idx);
        out->huecos = xcalloc((size_t)ncand, sizeof *out->huecos);
        for (int i = 0; i < ncand; i++) {
            out->idx[i] = cand[i].barber;
            if (out->nhuecos && out->huecos[out->nhuecos - 1].inicio_ms == cand[i].ini) {
                out->huecos[out->nhuecos - 1].nb++;
                continue;
            }
            out->huecos[out->nhuecos++] =
                (struct agenda_hueco){cand[i].ini, cand[i].ini + dur_ms, cand[i].local_min, i, 1};
        }
    }
    free(cand);
    for (int i = 0; i < c.nb; i++)
        free(c.b[i].busy);
    free(c.b);
    return rc;
}

void agenda_dia_clear(struct agenda_dia *d)
{
    free(d->huecos);
    free(d->idx);
    free(d->ids);
    memset(d, 0, sizeof *d);
}

bool agenda_disponibilidad_clave(const struct agenda_query *q, char *out, size_t n)
{
    struct tz_date today;
    int minute;
    if (q->sin_cita || q->sin_aviso || !tz_utc_to_local(q->now_ms, &today, &minute)) return false;
    const char *s = q->servicio_id ? q->servicio_id : "", *f = q->fecha ? q->fecha : "";
    const char *b = q->barbero_id ? q->barbero_id : "";
    /* lengths first, so that no two queries write the same key */
    int k = snprintf(out, n, "%04d-%02d-%02d %zu %s%zu %s%s", today.y, today.m, today.d, strlen(s),
                     s, strlen(f), f, b);
    return k >= 0 && (size_t)k < n;
}
