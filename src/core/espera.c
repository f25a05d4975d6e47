/*
 * espera.c - the waiting list (see espera.h).
 */
#include "espera.h"
#include "agenda.h"
#include "catalog.h"
#include "mostrador.h"
#include "outbox.h"
#include "../domain/roles.h"
#include "../util/log.h"
#include "../util/tz.h"
#include "../util/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void date_of_days(int64_t days, char out[11])
{
    struct tz_date d;
    tz_civil_from_days(days, &d);
    tz_date_format(&d, out);
}

static br_err unexpected(br_err rc, const char *what)
{
    log_error("lista de espera: %s: %s", what, err_msg());
    if (err_unavailable(rc)) return rc;
    return err_set(BR_INTERNAL, "Error interno del servidor");
}

static bool missing(const char *s)
{
    return !s || !*s;
}

/* Whose entries a call is about (see espera.h). */
struct espera_para {
    br_id cliente_id;
    bool desk;      /* staff act for the client named */
    bool has_email; /* desk: she has an e-mail address */
};

/* An address a notice can go to: not a front-desk client's placeholder,
 * not a deleted account's. */
static bool deliverable(const char *email)
{
    return email_es_direccion(email) && !email_es_eliminado(email);
}

/* The one place that resolves the caller and the client named: OUT *t. */
static br_err espera_para_of(struct app *app, const struct principal *caller,
                             const char *cliente_id, struct espera_para *t)
{
    memset(t, 0, sizeof *t);
    if (missing(cliente_id) || !principal_is_staff(caller)) {
        memcpy(t->cliente_id, caller->user_id, sizeof t->cliente_id);
        return BR_OK;
    }
    struct cliente_view cv;
    br_err rc = mostrador_solo_cliente(app, cliente_id, &cv);
    if (rc == BR_NOTFOUND) return rc;
    if (rc) return unexpected(rc, "client lookup");
    memcpy(t->cliente_id, cv.perfil.id, sizeof t->cliente_id);
    t->desk = true;
    t->has_email = deliverable(cv.email);
    cliente_view_clear(&cv);
    return BR_OK;
}

/* Whether the notice of a freed slot can reach the client t names: an
 * address, or WhatsApp configured and her consent in force (what the
 * notice's fan-out writes to). */
static br_err reachable(struct app *app, const struct espera_para *t)
{
    if (!t->desk || t->has_email) return BR_OK;
    if (app->whatsapp) {
        struct wa_consent c;
        memset(&c, 0, sizeof c);
        br_err rc = store_whatsapp_consent_get(app->store, t->cliente_id, &c);
        if (rc && rc != BR_NOTFOUND) return unexpected(rc, "WhatsApp consent");
        if (!rc && c.found && !c.retirado_en[0]) return BR_OK;
    }
    return err_set(BR_INVALID, ESPERA_SIN_CANAL_MSG);
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
    if (!tz_local_date(clock_now_ms(), today, &today_days))
        return unexpected(err_set(BR_INTERNAL, "no local time"), "today");
    int64_t ahead = tz_days_from_civil(&day) - today_days;
    if (ahead < 0) return err_set(BR_INVALID, "La fecha ya pasó");
    if (ahead > app->cfg->max_days_ahead)
        return err_set(BR_INVALID, "Fecha fuera del plazo de reserva");
    struct espera_para para;
    br_err rc = espera_para_of(app, caller, in->cliente_id, &para);
    if (!rc) rc = reachable(app, &para);
    if (rc) return rc;

    struct servicio srv;
    rc = catalog_servicio_activo(app, in->servicio_id, &srv);
    memcpy(out->servicio_id, srv.id, sizeof out->servicio_id);
    servicio_clear(&srv);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Servicio no encontrado");
    if (rc) return unexpected(rc, "service lookup");
    if (!missing(in->barbero_id)) {
        struct barbero bar;
        rc = catalog_barbero_activo(app, in->barbero_id, &bar);
        memcpy(out->barbero_id, bar.id, sizeof out->barbero_id);
        barbero_clear(&bar);
        if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Barbero no encontrado");
        if (rc) return unexpected(rc, "barber lookup");
    }
    uuid_v4(out->id);
    memcpy(out->cliente_id, para.cliente_id, sizeof out->cliente_id);
    snprintf(out->fecha, sizeof out->fecha, "%s", in->fecha);
    iso8601_format(clock_now_ms(), out->created_at);
    rc = mostrador_cliente_cerrado(store_espera_add(app->store, out, today, ESPERA_MAX), para.desk);
    if (rc == BR_UNAUTH || rc == BR_NOTFOUND) return rc;
    if (rc == BR_CONFLICT) return err_set(BR_CONFLICT, ESPERA_DUP_MSG);
    if (rc == BR_TOOLARGE) return err_set(BR_INVALID, ESPERA_MAX_MSG);
    if (rc) return unexpected(rc, "adding");
    return BR_OK;
}

br_err espera_list(struct app *app, const struct principal *caller, const char *cliente_id,
                   store_espera_fn fn, void *ud)
{
    struct espera_para para;
    br_err rc = espera_para_of(app, caller, cliente_id, &para);
    if (rc) return rc;
    char today[11];
    if (!tz_local_date(clock_now_ms(), today, NULL))
        return unexpected(err_set(BR_INTERNAL, "no local time"), "today");
    return store_espera_list(app->store, para.cliente_id, today, ESPERA_MAX * 2, fn, ud);
}

br_err espera_delete(struct app *app, const struct principal *caller, const char *cliente_id,
                     const char *id)
{
    struct espera_para para;
    br_err rc = espera_para_of(app, caller, cliente_id, &para);
    if (rc) return rc;
    br_id uid;
    if (!id || !uuid_parse(id, strlen(id), uid)) return err_set(BR_NOTFOUND, "Aviso no encontrado");
    rc = store_espera_delete(app->store, uid, para.cliente_id);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Aviso no encontrado");
    if (rc) return unexpected(rc, "removing");
    return BR_OK;
}

br_err espera_sweep(struct app *app)
{
    char today[11];
    if (!tz_local_date(clock_now_ms(), today, NULL)) return BR_OK;
    int64_t removed = 0;
    br_err rc = store_espera_sweep(app->store, today, &removed);
    if (!rc && removed)
        log_info("lista de espera: %lld past entr%s removed", (long long)removed,
                 removed == 1 ? "y" : "ies");
    return rc;
}

/* --- telling the waiting clients ------------------------------------------------- */

#define LEASE_MS       60000 /* a freed slot held by one worker while it tells */
#define RETRY_PAUSE_MS 5000  /* a freed slot whose telling failed: taken again after */
#define PASS_MAX       100   /* freed slots told in one pass, at most */

bool espera_liberacion_tramo(struct espera_liberacion *l, const char *barbero_id,
                             const char *inicio, const char *fin)
{
    memset(l, 0, sizeof *l);
    int64_t ini, end;
    if (!barbero_id || !inicio || !fin || !iso8601_parse(inicio, strlen(inicio), &ini) ||
        !iso8601_parse(fin, strlen(fin), &end) || end <= ini)
        return false;
    int64_t now = clock_now_ms();
    uuid_v4(l->id);
    snprintf(l->barbero_id, sizeof l->barbero_id, "%s", barbero_id);
    iso8601_format(ini, l->inicio);
    iso8601_format(end, l->fin);
    iso8601_format(now, l->created_at);
    return true;
}

/* desde..hasta clipped to today and the horizon; false when nothing is left. */
static bool clip_days(const struct app *app, const char *desde, const char *hasta, char lo[11],
                      char hi[11])
{
    char today[11], last[11];
    int64_t today_days;
    if (!tz_local_date(clock_now_ms(), today, &today_days)) return false;
    date_of_days(today_days + app->cfg->max_days_ahead, last);
    snprintf(lo, 11, "%s", strcmp(desde, today) < 0 ? today : desde);
    snprintf(hi, 11, "%s", strcmp(hasta, last) > 0 ? last : hasta);
    return strcmp(lo, hi) <= 0;
}

bool espera_liberacion_dias(const struct app *app, struct espera_liberacion *l,
                            const char *barbero_id, const char *desde, const char *hasta)
{
    memset(l, 0, sizeof *l);
    struct tz_date d;
    if ((desde && !tz_date_parse(desde, &d)) || (hasta && !tz_date_parse(hasta, &d))) return false;
    /* no bound: from today, up to the horizon (clip_days compares text) */
    if (!clip_days(app, desde ? desde : "", hasta ? hasta : "9999-12-31", l->desde, l->hasta))
        return false;
    uuid_v4(l->id);
    if (barbero_id) snprintf(l->barbero_id, sizeof l->barbero_id, "%s", barbero_id);
    iso8601_format(clock_now_ms(), l->created_at);
    return true;
}

size_t espera_liberaciones_semana(const struct app *app, const char *barbero_id, unsigned dias,
                                  struct espera_liberacion **l)
{
    *l = NULL;
    char today[11];
    int64_t first;
    if (!tz_local_date(clock_now_ms(), today, &first)) return 0;
    size_t n = 0, cap = 0;
    bool in_run = false;
    for (int64_t day = first; day <= first + app->cfg->max_days_ahead; day++) {
        struct tz_date d;
        tz_civil_from_days(day, &d);
        if (!(dias & (1u << tz_iso_weekday(&d)))) {
            in_run = false;
            continue;
        }
        if (!in_run) { /* a run starts: a range of its own */
            VEC_RESERVE(*l, n, cap, 8);
            struct espera_liberacion *r = &(*l)[n++];
            memset(r, 0, sizeof *r);
            uuid_v4(r->id);
            snprintf(r->barbero_id, sizeof r->barbero_id, "%s", barbero_id);
            iso8601_format(clock_now_ms(), r->created_at);
            tz_date_format(&d, r->desde);
            in_run = true;
        }
        tz_date_format(&d, (*l)[n - 1].hasta);
    }
    return n;
}

struct freed {
    struct app *app;
    const char *barbero_id; /* NULL: any */
    int64_t ini, fin;       /* the freed stretch (whole days for a day's change) */
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

/* The free slot found for an entry's day, service and barber (or any):
 * entries that share them share it, so each is read once per freed slot. */
struct slot_memo {
    br_id servicio, barbero_pedido;
    char fecha[11];
    bool found;
    int64_t ini, fin;
    br_id barbero;
};

/* The candidates, copied out of the listing before anyone is told (no
 * connection is held while the slots are read), and their notices. */
struct cand_list {
    struct espera e[ESPERA_CANDIDATAS];
    char email[ESPERA_CANDIDATAS][256];
    char nombre[ESPERA_CANDIDATAS][256];
    int n;
    struct espera_aviso v[ESPERA_CANDIDATAS];
    br_id barbero[ESPERA_CANDIDATAS];
    const char *cliente[ESPERA_CANDIDATAS]; /* whose notice v[i] is */
    int64_t inicio[ESPERA_CANDIDATAS];      /* and the start it names */
    int nv;
    struct slot_memo memo[ESPERA_CANDIDATAS];
    int nmemo;
};

static br_err collect(void *ud, const struct espera *e)
{
    struct cand_list *l = ud;
    if (l->n >= ESPERA_CANDIDATAS) return BR_OK;
    l->e[l->n] = *e;
    snprintf(l->email[l->n], sizeof l->email[0], "%s", e->email ? e->email : "");
    snprintf(l->nombre[l->n], sizeof l->nombre[0], "%s", e->nombre ? e->nombre : "");
    l->e[l->n].email = l->email[l->n];
    l->e[l->n].nombre = l->nombre[l->n];
    l->n++;
    return BR_OK;
}

/* fitting_slot, read once for each day, service and barber asked. */
static bool fitting_slot_memo(struct freed *f, struct cand_list *l, const struct espera *e,
                              int64_t *ini, int64_t *fin, br_id barbero)
{
    for (int i = 0; i < l->nmemo; i++) {
        const struct slot_memo *k = &l->memo[i];
        if (strcmp(k->servicio, e->servicio_id) || strcmp(k->fecha, e->fecha) ||
            strcmp(k->barbero_pedido, e->barbero_id))
            continue;
        *ini = k->ini;
        *fin = k->fin;
        memcpy(barbero, k->barbero, sizeof(br_id));
        return k->found;
    }
    bool found = fitting_slot(f, e, ini, fin, barbero);
    if (l->nmemo < ESPERA_CANDIDATAS) {
        struct slot_memo *k = &l->memo[l->nmemo++];
        memset(k, 0, sizeof *k);
        memcpy(k->servicio, e->servicio_id, sizeof k->servicio);
        memcpy(k->barbero_pedido, e->barbero_id, sizeof k->barbero_pedido);
        snprintf(k->fecha, sizeof k->fecha, "%s", e->fecha);
        k->found = found;
        if (found) {
            k->ini = *ini;
            k->fin = *fin;
            memcpy(k->barbero, barbero, sizeof(br_id));
        }
    }
    return found;
}

/* An address to write to: not empty, not a front-desk client's placeholder. */
static bool has_email(const char *email)
{
    return email && *email && strncmp(email, EMAIL_NINGUNO_PREFIX, strlen(EMAIL_NINGUNO_PREFIX));
}

/* Writes the notice of the slot that fits entry i, when one does: by
 * e-mail when she has an address, by WhatsApp when it is configured (the
 * store queues it when her consent holds). False when a name could not be
 * read (the freed slot is then tried again). */
static bool notice_of(struct freed *f, struct cand_list *l, int i)
{
    const struct espera *e = &l->e[i];
    bool mail = has_email(e->email) && mailer_enabled(f->app->mailer),
         wa = f->app->whatsapp != NULL;
    if (!mail && !wa) return true;
    int64_t ini, fin;
    br_id barbero;
    if (!fitting_slot_memo(f, l, e, &ini, &fin, barbero)) return true;
    /* her other entry of this day has this very slot told already */
    for (int k = 0; k < l->nv; k++)
        if (!strcmp(l->cliente[k], e->cliente_id) && l->inicio[k] == ini &&
            !strcmp(l->barbero[k], barbero))
            return true;
    struct servicio srv;
    struct barbero bar;
    memset(&srv, 0, sizeof srv);
    memset(&bar, 0, sizeof bar);
    br_err rc = store_servicio_get(f->app->store, e->servicio_id, &srv);
    if (!rc) rc = store_barbero_get(f->app->store, barbero, &bar);
    if (rc) {
        log_warn("lista de espera: names for a notice: %s", err_msg());
        servicio_clear(&srv);
        barbero_clear(&bar);
        return rc == BR_NOTFOUND; /* gone meanwhile: nothing to tell */
    }
    struct espera_aviso *v = &l->v[l->nv];
    memcpy(l->barbero[l->nv], barbero, sizeof(br_id));
    l->cliente[l->nv] = e->cliente_id;
    l->inicio[l->nv] = ini;
    l->nv++;
    struct outbox_msg *m = &v->m;
    memset(m, 0, sizeof *m);
    uuid_v4(m->id);
    memcpy(m->cita_id, e->id, sizeof m->cita_id);
    m->recipient = mail ? xstrdup(e->email) : NULL;
    m->wa_cliente_id = wa ? e->cliente_id : NULL;
    m->cliente_nombre = xstrdup(*e->nombre ? e->nombre : mail ? e->email : "");
    m->barbero_nombre = bar.nombre;
    m->servicio_nombre = srv.nombre;
    bar.nombre = NULL;
    srv.nombre = NULL;
    iso8601_format(ini, m->fecha_inicio);
    iso8601_format(fin, m->fecha_fin);
    iso8601_format(clock_now_ms(), m->created_at);
    m->kind = "aviso_espera";
    m->enlace = xasprintf(ESPERA_LINK_FMT, f->app->public_url ? f->app->public_url : "",
                          e->servicio_id, barbero, e->fecha, m->fecha_inicio);
    v->entrada_id = e->id;
    v->barbero_id = l->barbero[l->nv - 1];
    v->inicio = m->fecha_inicio;
    servicio_clear(&srv);
    barbero_clear(&bar);
    return true;
}

static void notices_clear(struct cand_list *l)
{
    for (int i = 0; i < l->nv; i++) {
        struct outbox_msg *m = &l->v[i].m;
        free(m->recipient);
        free(m->cliente_nombre);
        free(m->barbero_nombre);
        free(m->servicio_nombre);
        free(m->enlace);
    }
    l->nv = 0;
}

/* Tells the entries the freed slot l may suit and deletes it, or puts it
 * back on a failure. OUT: *queued. */
static br_err tell(struct app *app, const struct espera_liberacion *lib, int *queued)
{
    *queued = 0;
    struct freed f = {app, lib->barbero_id[0] ? lib->barbero_id : NULL, INT64_MIN, INT64_MAX};
    char desde[11] = "", hasta[11] = "";
    bool any = true;
    if (lib->inicio[0]) { /* a stretch of one day */
        any = iso8601_parse(lib->inicio, strlen(lib->inicio), &f.ini) &&
              iso8601_parse(lib->fin, strlen(lib->fin), &f.fin) && f.fin > clock_now_ms() &&
              tz_local_date(f.ini, desde, NULL);
        snprintf(hasta, sizeof hasta, "%s", desde);
    } else {
        any = clip_days(app, lib->desde, lib->hasta, desde, hasta);
    }
    struct cand_list *l = xcalloc(1, sizeof *l);
    br_err rc = BR_OK;
    if (any) {
        rc = store_espera_candidatas(app->store, desde, hasta, f.barbero_id, ESPERA_CANDIDATAS,
                                     collect, l);
        if (rc)
            log_warn("lista de espera: reading the entries of %s..%s: %s", desde, hasta, err_msg());
    }
    for (int i = 0; !rc && i < l->n; i++)
        if (!notice_of(&f, l, i)) rc = err_set(BR_STORE, "a notice's names could not be read");
    /* the notices (to the ESPERA_FANOUT oldest entries not told of it
     * before) and the end of the freed slot, together */
    if (!rc) rc = store_espera_avisar(app->store, lib->id, l->v, l->nv, ESPERA_FANOUT, queued);
    if (rc) log_warn("lista de espera: telling of freed slot %s: %s", lib->id, err_msg());
    notices_clear(l);
    free(l);
    return rc;
}

br_err espera_avisar_pendientes(struct app *app, int *queued)
{
    int total = 0;
    br_err first = BR_OK;
    for (int pass = 0; pass < PASS_MAX; pass++) {
        int64_t now = clock_now_ms();
        br_ts now_ts, lease;
        iso8601_format(now, now_ts);
        iso8601_format(now + LEASE_MS, lease);
        struct espera_liberacion lib;
        br_err rc = store_espera_liberacion_take(app->store, now_ts, lease, &lib);
        if (rc == BR_NOTFOUND) break;
        if (rc) {
            log_error("lista de espera: taking a freed slot: %s", err_msg());
            first = rc;
            break;
        }
        int n = 0;
        rc = tell(app, &lib, &n);
        if (rc) {
            if (!first) first = rc;
            br_ts later;
            iso8601_format(clock_now_ms() + RETRY_PAUSE_MS, later);
            if (store_espera_liberacion_release(app->store, lib.id, later) != BR_OK)
                log_error("lista de espera: putting back freed slot %s: %s", lib.id, err_msg());
            break; /* the others wait for the next pass */
        }
        total += n;
    }
    if (total) {
        log_info("lista de espera: %d notice(s) of a freed slot queued", total);
        outbox_wake(app->outbox);
    }
    if (queued) *queued = total;
    return first;
}

static void avisar_task(void *ud)
{
    if (espera_avisar_pendientes(ud, NULL) != BR_OK) {
        /* logged; the freed slot is taken again on a later pass */
    }
}

void espera_liberado(struct app *app)
{
    if (app->outbox)
        outbox_wake_task(app->outbox, avisar_task, app);
    else
        avisar_task(app);
}

/* --- a notice about to leave -------------------------------------------------------- */

/* The value of name= in a notice's link query q, copied into out (n
 * bytes); false when it is missing, empty or longer. */
static bool link_param(const char *q, const char *name, char *out, size_t n)
{
    size_t ln = strlen(name);
    for (const char *p = q; p && *p; p = strchr(p, '&'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, ln) != 0 || p[ln] != '=') continue;
        size_t len = strcspn(p + ln + 1, "&");
        if (!len || len >= n) return false;
        memcpy(out, p + ln + 1, len);
        out[len] = '\0';
        return true;
    }
    return false;
}

br_err espera_aviso_vigente(struct app *app, const struct outbox_msg *m, const char **why)
{
    *why = NULL;
    bool listed = false;
    br_err rc = store_espera_existe(app->store, m->cita_id, &listed);
    if (rc) return rc;
    if (!listed) { /* she left the list, or her day went by */
        *why = ESPERA_AVISO_SIN_ENTRADA;
        return BR_OK;
    }
    /* the query follows the last "/reservar?" (the public URL comes before it) */
    const char *q = NULL;
    for (const char *p = m->enlace; p && (p = strstr(p, "/reservar?")) != NULL; p++)
        q = p + strlen("/reservar?");
    br_id servicio, barbero;
    char fecha[11];
    int64_t inicio;
    if (!q || !link_param(q, "servicio", servicio, sizeof servicio) ||
        !link_param(q, "barbero", barbero, sizeof barbero) ||
        !link_param(q, "fecha", fecha, sizeof fecha) ||
        !iso8601_parse(m->fecha_inicio, strlen(m->fecha_inicio), &inicio)) {
        log_warn("lista de espera: notice %s: no slot in its link to check", m->id);
        return BR_OK;
    }
    struct agenda_query aq = {servicio, fecha, barbero, clock_now_ms()};
    struct agenda_dia d;
    rc = agenda_disponibilidad(app, &aq, &d);
    if (rc == BR_NOTFOUND) {
        *why = "el servicio o el barbero ya no se ofrecen";
        return BR_OK;
    }
    if (rc == BR_INVALID) { /* a day that is not one: no free slot on it */
        *why = "la hora anunciada ya no está libre";
        return BR_OK;
    }
    if (rc) return rc;
    bool free_then = false;
    for (int i = 0; i < d.nhuecos && !free_then; i++) {
        const struct agenda_hueco *h = &d.huecos[i];
        for (int k = 0; h->inicio_ms == inicio && k < h->nb && !free_then; k++)
            free_then = !strcmp(d.ids[d.idx[h->first + k]], barbero);
    }
    agenda_dia_clear(&d);
    if (!free_then) *why = "la hora anunciada ya no está libre";
    return BR_OK;
}
