/*
 * informes.c - the owner's reports (see informes.h).
 *
 * The appointments are summed by the database in one statement (store
 * informes.c); what is computed here is small and bounded by the period,
 * never by the appointments: the period's instants (each local midnight,
 * and where the zone's offset changes inside it, so that the database can
 * tell an appointment's local date), and the open minutes, day by day, of
 * each active barber's weekly schedule less the shop's closures and the
 * barber's days off.
 */
#include "informes.h"
#include "agenda.h"
#include "../domain/rules.h"
#include "../util/log.h"
#include "../util/tz.h"
#include "../util/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const agrupar_nombres[] = {"barbero", "servicio", "dia", "mes"};

const char *informe_agrupar_nombre(enum informe_agrupar a)
{
    return (unsigned)a < ARRAY_LEN(agrupar_nombres) ? agrupar_nombres[a] : "";
}

/* --- the period's instants ------------------------------------------------------------ */

/* The instant of local minute (0 to 1440) of the day days (since 1970). */
static bool local_instant(int64_t days, int minute, int64_t *ms)
{
    struct tz_date d;
    tz_civil_from_days(days, &d);
    return tz_local_instant(&d, minute, ms);
}

/* The zone's offset at an instant, in seconds east of UTC (to the minute). */
static bool offset_at(int64_t ms, int64_t *off)
{
    struct tz_date d;
    int minute;
    if (!tz_utc_to_local(ms, &d, &minute)) return false;
    int64_t utc_min = ms >= 0 ? ms / 60000 : -((-ms + 59999) / 60000);
    *off = ((tz_days_from_civil(&d) * 1440 + minute) - utc_min) * 60;
    return true;
}

static br_err no_time(void)
{
    return err_set(BR_INTERNAL, "a local time the zone cannot convert");
}

/* The period's stretches of one offset (store informe_consulta): where the
 * offset at a day's midnight differs from the next one's, the change is
 * found to the minute inside that day. mid: the ndays + 1 midnights. */
static br_err stretches(const int64_t *mid, int ndays, struct informe_consulta *q)
{
    int64_t a;
    if (!offset_at(mid[0], &a)) return no_time();
    q->ntramos = 1;
    q->offsets[0] = a;
    for (int i = 0; i < ndays; i++) {
        int64_t b;
        if (!offset_at(mid[i + 1], &b)) return no_time();
        if (b == a) continue;
        int64_t lo = mid[i], hi = mid[i + 1]; /* offset a at lo, b at hi */
        while (hi - lo > 60000) {
            int64_t m = lo + (hi - lo) / 120000 * 60000;
            if (m <= lo) m = lo + 60000;
            int64_t o;
            if (!offset_at(m, &o)) return no_time();
            if (o == a)
                lo = m;
            else
                hi = m;
        }
        if (q->ntramos == INFORME_TRAMOS_MAX)
            return err_set(BR_INTERNAL, "the zone changes its offset too often in the period");
        iso8601_format(hi, q->limites[q->ntramos - 1]);
        q->offsets[q->ntramos++] = b;
        a = b;
    }
    return BR_OK;
}

/* --- the catalog: barbers, services, schedules, days off ------------------------------------ */

struct item {
    br_id id;
    char *nombre;
    bool activo;
};

struct items {
    struct item *v;
    int n, cap;
};

static void items_add(struct items *l, const char *id, const char *nombre, bool activo)
{
    VEC_RESERVE(l->v, l->n, l->cap, 16);
    struct item *it = &l->v[l->n++];
    snprintf(it->id, sizeof it->id, "%s", id);
    it->nombre = xstrdup(nombre ? nombre : "");
    it->activo = activo;
}

static int items_find(const struct items *l, const char *id)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].id, id)) return i;
    return -1;
}

static void items_free(struct items *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i].nombre);
    free(l->v);
}

static br_err on_barbero(void *ud, const struct barbero *b)
{
    items_add(ud, b->id, b->nombre, b->activo);
    return BR_OK;
}

static br_err on_servicio(void *ud, const struct servicio *s)
{
    items_add(ud, s->id, s->nombre, s->activo);
    return BR_OK;
}

/* One interval of an active barber's week. */
struct tramo {
    int barbero; /* index into the barbers */
    int inicio, fin;
};

struct semana {
    const struct items *barberos;
    struct tramo *t[8]; /* by ISO weekday 1-7 */
    int n[8], cap[8];
    int dia; /* the weekday being read */
};

static br_err on_tramo(void *ud, const char *id, const char *nombre, const struct horario_tramo *t)
{
    (void)nombre;
    struct semana *s = ud;
    int b = items_find(s->barberos, id);
    if (b < 0 || s->dia < 1 || s->dia > 7) return BR_OK; /* added meanwhile: not in this report */
    int d = s->dia;
    VEC_RESERVE(s->t[d], s->n[d], s->cap[d], 16);
    s->t[d][s->n[d]++] = (struct tramo){b, t->inicio, t->fin};
    return BR_OK;
}

struct ausencias {
    const char *desde, *hasta; /* the period */
    struct ausencia *v;        /* those that meet it (motivo dropped) */
    int n, cap;
};

static br_err on_ausencia(void *ud, const struct ausencia *a)
{
    struct ausencias *l = ud;
    if (strcmp(a->hasta, l->desde) < 0 || strcmp(a->desde, l->hasta) > 0) return BR_OK;
    VEC_RESERVE(l->v, l->n, l->cap, 16);
    l->v[l->n] = *a;
    l->v[l->n++].motivo = NULL;
    return BR_OK;
}

/* Whether barbero_id ("" : the shop) is off on fecha. */
static bool off_on(const struct ausencias *l, const char *barbero_id, const char *fecha)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].barbero_id, barbero_id) && strcmp(l->v[i].desde, fecha) <= 0 &&
            strcmp(l->v[i].hasta, fecha) >= 0)
            return true;
    return false;
}

/* --- the report --------------------------------------------------------------------------- */

struct calculo {
    struct informe *inf;
    const struct items *ids; /* by barber or service: the groups' ids, in their order */
    int64_t dia0;            /* the period's first day (since 1970) */
    struct tz_date mes0;     /* its month */
};

static void sumar(struct informe_grupo *g, const struct informe_fila *f)
{
    g->citas += f->citas;
    g->confirmadas += f->confirmadas;
    g->completadas += f->completadas;
    g->no_presentados += f->no_presentados;
    g->canceladas += f->canceladas;
    g->ingresos_cent += f->ingresos_cent;
    g->previstos_cent += f->previstos_cent;
    g->estimadas += f->estimadas;
    g->segundos_reservados += f->segundos_reservados;
}

static int mes_index(const struct calculo *c, int64_t dia)
{
    struct tz_date d;
    tz_civil_from_days(dia, &d);
    return (d.y - c->mes0.y) * 12 + (d.m - c->mes0.m);
}

static br_err on_fila(void *ud, const struct informe_fila *f)
{
    struct calculo *c = ud;
    struct informe *inf = c->inf;
    int g = -1;
    switch (inf->agrupar) {
    case INFORME_BARBERO:
    case INFORME_SERVICIO:
        g = items_find(c->ids, f->id);
        break;
    case INFORME_DIA:
        g = (int)(f->dia - c->dia0);
        break;
    case INFORME_MES:
        g = mes_index(c, f->dia);
        break;
    }
    if (g < 0 || g >= inf->ngrupos) {
        /* a barber or service added after the catalog was read: counted
         * in the total only */
        log_warn("informes: a row outside the report's groups (%s)",
                 informe_agrupar_nombre(inf->agrupar));
    } else {
        sumar(&inf->grupos[g], f);
    }
    sumar(&inf->total, f);
    return BR_OK;
}

static void grupo_init(struct informe_grupo *g, const char *clave, const char *nombre)
{
    memset(g, 0, sizeof *g);
    snprintf(g->clave, sizeof g->clave, "%s", clave);
    g->nombre = xstrdup(nombre);
}

static br_err internal(br_err rc, const char *what)
{
    log_error("informes: %s: %s", what, err_msg());
    if (err_unavailable(rc)) return rc;
    return err_set(BR_INTERNAL, "Error interno del servidor");
}

static bool parse_agrupar(const char *s, enum informe_agrupar *out)
{
    if (!s) s = "dia";
    for (size_t i = 0; i < ARRAY_LEN(agrupar_nombres); i++)
        if (!strcmp(s, agrupar_nombres[i])) {
            *out = (enum informe_agrupar)i;
            return true;
        }
    return false;
}

br_err informe_calcular(struct app *app, const struct informe_pedido *p, struct informe *out)
{
    memset(out, 0, sizeof *out);
    if (!p->desde || !*p->desde || !p->hasta || !*p->hasta)
        return err_set(BR_INVALID, "Faltan campos requeridos");
    br_err bad = agenda_range_check(p->desde, p->hasta);
    if (bad) return bad;
    /* dates whose local midnights are instants the API can write (years
     * 1971 to 9998: a zone's day may start in the year before or end in
     * the one after) */
    struct tz_date d0, d1;
    if (!tz_date_parse(p->desde, &d0) || d0.y < 1971 || d0.y > 9998)
        return err_set(BR_INVALID, "desde inválida");
    if (!tz_date_parse(p->hasta, &d1) || d1.y < 1971 || d1.y > 9998)
        return err_set(BR_INVALID, "hasta inválida");
    int64_t dia0 = tz_days_from_civil(&d0);
    int64_t span = tz_days_from_civil(&d1) - dia0 + 1;
    if (span > INFORME_DIAS_MAX)
        return err_set(BR_INVALID, "El periodo no puede pasar de 366 días");
    enum informe_agrupar agrupar;
    if (!parse_agrupar(p->agrupar, &agrupar))
        return err_set(BR_INVALID, "agrupar inválido: barbero, servicio, dia o mes");
    if (p->formato && strcmp(p->formato, "json") && strcmp(p->formato, "csv"))
        return err_set(BR_INVALID, "formato inválido: json o csv");
    int ndays = (int)span;

    out->agrupar = agrupar;
    memcpy(out->desde, p->desde, 10);
    memcpy(out->hasta, p->hasta, 10);

    /* every local midnight of the period, the day after its last included */
    int64_t *mid = xcalloc((size_t)ndays + 1, sizeof *mid);
    struct informe_consulta q = {0};
    br_ts desde_utc, hasta_utc, ahora;
    struct items barberos = {0}, servicios = {0};
    struct semana sem = {.barberos = &barberos};
    struct ausencias aus = {.desde = p->desde, .hasta = p->hasta};
    int64_t *abierto_barbero = NULL, *abierto_dia = NULL;
    br_err rc = BR_OK;
    for (int i = 0; i <= ndays && !rc; i++)
        if (!local_instant(dia0 + i, 0, &mid[i])) rc = internal(no_time(), "midnight");
    if (!rc) rc = stretches(mid, ndays, &q);
    if (rc) goto out;
    iso8601_format(mid[0], desde_utc);
    iso8601_format(mid[ndays], hasta_utc);
    iso8601_format(p->now_ms, ahora);

    /* the catalog, the week of every active barber, the days off */
    rc = store_barberos_all(app->store, on_barbero, &barberos);
    if (!rc && agrupar == INFORME_SERVICIO)
        rc = store_servicios_all(app->store, on_servicio, &servicios);
    for (int d = 1; d <= 7 && !rc; d++) {
        sem.dia = d;
        rc = store_horario_dia(app->store, d, NULL, on_tramo, &sem);
    }
    if (!rc) rc = store_ausencias_each(app->store, on_ausencia, &aus);
    if (rc) {
        rc = internal(rc, "catalog read");
        goto out;
    }

    /* the open minutes, day by day: a day without a change of the clocks
     * is 1440 real minutes long, and its schedule's minutes are real ones */
    abierto_barbero = xcalloc((size_t)barberos.n + 1, sizeof *abierto_barbero);
    abierto_dia = xcalloc((size_t)ndays, sizeof *abierto_dia);
    for (int i = 0; i < ndays; i++) {
        struct tz_date d;
        tz_civil_from_days(dia0 + i, &d);
        char fecha[11];
        tz_date_format(&d, fecha);
        if (off_on(&aus, "", fecha)) continue;
        bool regular = mid[i + 1] - mid[i] == ISO8601_DAY_MS;
        int w = tz_iso_weekday(&d);
        for (int k = 0; k < sem.n[w]; k++) {
            const struct tramo *t = &sem.t[w][k];
            if (!barberos.v[t->barbero].activo || off_on(&aus, barberos.v[t->barbero].id, fecha))
                continue;
            int64_t min = t->fin - t->inicio;
            if (!regular) {
                int64_t a, b;
                if (!local_instant(dia0 + i, t->inicio, &a) ||
                    !local_instant(dia0 + i, t->fin, &b)) {
                    rc = internal(no_time(), "schedule");
                    goto out;
                }
                min = b > a ? (b - a) / 60000 : 0;
            }
            abierto_barbero[t->barbero] += min;
            abierto_dia[i] += min;
        }
    }

    /* the groups, in their order, each with its open minutes */
    int64_t abierto = 0;
    for (int i = 0; i < ndays; i++)
        abierto += abierto_dia[i];
    struct calculo c = {.inf = out, .dia0 = dia0, .mes0 = d0};
    switch (agrupar) {
    case INFORME_BARBERO:
    case INFORME_SERVICIO: {
        const struct items *l = agrupar == INFORME_BARBERO ? &barberos : &servicios;
        c.ids = l;
        out->grupos = xcalloc((size_t)l->n + 1, sizeof *out->grupos);
        out->ngrupos = l->n;
        for (int i = 0; i < l->n; i++) {
            grupo_init(&out->grupos[i], l->v[i].id, l->v[i].nombre);
            out->grupos[i].minutos_abiertos =
                agrupar == INFORME_BARBERO ? abierto_barbero[i] : abierto;
        }
        break;
    }
    case INFORME_DIA:
        out->grupos = xcalloc((size_t)ndays, sizeof *out->grupos);
        out->ngrupos = ndays;
        for (int i = 0; i < ndays; i++) {
            struct tz_date d;
            tz_civil_from_days(dia0 + i, &d);
            char fecha[11];
            tz_date_format(&d, fecha);
            grupo_init(&out->grupos[i], fecha, fecha);
            out->grupos[i].minutos_abiertos = abierto_dia[i];
        }
        break;
    case INFORME_MES: {
        int nmeses = (d1.y - d0.y) * 12 + (d1.m - d0.m) + 1;
        out->grupos = xcalloc((size_t)nmeses, sizeof *out->grupos);
        out->ngrupos = nmeses;
        for (int i = 0; i < nmeses; i++) {
            int y = d0.y + (d0.m - 1 + i) / 12, m = (d0.m - 1 + i) % 12 + 1;
            char mes[16];
            snprintf(mes, sizeof mes, "%04d-%02d", y, m);
            grupo_init(&out->grupos[i], mes, mes);
        }
        for (int i = 0; i < ndays; i++)
            out->grupos[mes_index(&c, dia0 + i)].minutos_abiertos += abierto_dia[i];
        break;
    }
    }
    grupo_init(&out->total, "total", "Total");
    out->total.minutos_abiertos = abierto;

    /* the appointments, summed by the database */
    q.clave = agrupar == INFORME_BARBERO    ? INFORME_POR_BARBERO
              : agrupar == INFORME_SERVICIO ? INFORME_POR_SERVICIO
                                            : INFORME_POR_DIA;
    q.desde = desde_utc;
    q.hasta = hasta_utc;
    q.ahora = ahora;
    rc = store_informe(app->store, &q, on_fila, &c);
    if (rc) {
        rc = internal(rc, "appointments");
        goto out;
    }

    /* barbers and services taken off the catalog show only where they
     * had appointments in the period */
    if (agrupar == INFORME_BARBERO || agrupar == INFORME_SERVICIO) {
        int k = 0;
        for (int i = 0; i < out->ngrupos; i++) {
            if (c.ids->v[i].activo || out->grupos[i].citas > 0)
                out->grupos[k++] = out->grupos[i];
            else
                free(out->grupos[i].nombre);
        }
        out->ngrupos = k;
    }

out:
    free(mid);
    free(abierto_barbero);
    free(abierto_dia);
    for (int d = 0; d < 8; d++)
        free(sem.t[d]);
    free(aus.v);
    items_free(&barberos);
    items_free(&servicios);
    if (rc) informe_clear(out);
    return rc;
}

void informe_clear(struct informe *inf)
{
    for (int i = 0; i < inf->ngrupos; i++)
        free(inf->grupos[i].nombre);
    free(inf->grupos);
    free(inf->total.nombre);
    memset(inf, 0, sizeof *inf);
}
