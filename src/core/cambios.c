/*
 * cambios.c - cancel, reschedule and reminders (see cambios.h).
 */
#include "cambios.h"
#include "booking.h"
#include "espera.h"
#include "gestion.h"
#include "outbox.h"
#include "../util/log.h"
#include "../util/metrics.h"
#include "../util/tz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cut-off as a person reads it: "2 horas", "1 hora", "90 minutos". */
static void cutoff_words(int min, char *out, size_t n)
{
    if (min > 0 && min % 60 == 0)
        snprintf(out, n, "%d %s", min / 60, min == 60 ? "hora" : "horas");
    else
        snprintf(out, n, "%d %s", min, min == 1 ? "minuto" : "minutos");
}

static br_err unexpected(br_err rc, const char *what)
{
    log_error("citas: %s: %s", what, err_msg());
    if (err_unavailable(rc)) return rc;
    return err_set(BR_INTERNAL, "Error interno del servidor");
}

/* After the commit: the calendar follows, best-effort. One log line per
 * failure; no calendar configured is no failure. */
static void calendar_follow(struct app *app, const struct cita_detail *d, const char *event_id,
                            bool reschedule, const char *start, const char *end)
{
    struct calendar *cal = app->cal;
    const char *id = d->cita.id;
    if (!reschedule) {
        if (!event_id) return;
        br_err rc = calendar_delete_event(cal, event_id);
        if (rc && rc != BR_CONFIG) {
            metric_inc(M_CAL_FAILURES);
            log_warn("calendar: could not delete the event of cancelled cita %s (%s): %s", id,
                     cal->ops->name, err_msg());
        }
        return;
    }
    const char *cliente = d->cliente_nombre && *d->cliente_nombre ? d->cliente_nombre
                          : d->cliente_email                      ? d->cliente_email
                                                                  : "";
    char *summary = NULL, *description = NULL, *made = NULL;
    booking_event_text(d->servicio_nombre, cliente, d->barbero_nombre, d->cita.notas, &summary,
                       &description);
    struct cal_event ev = {summary, description, start, end, d->cliente_email};
    /* moved; or, when it was deleted in the calendar by hand, made anew
     * (made) in the same bound. No event yet (the calendar failed at
     * booking time): made now. */
    br_err rc = event_id ? calendar_move_event(cal, event_id, &ev, &made)
                         : calendar_create_event(cal, &ev, &made);
    if (rc == BR_CONFIG) {
        /* nothing configured: nothing to say */
    } else if (rc && event_id) {
        metric_inc(M_CAL_FAILURES);
        log_warn("calendar: could not move the event of rescheduled cita %s (%s): %s", id,
                 cal->ops->name, err_msg());
    } else if (rc) {
        metric_inc(M_CAL_FAILURES);
        log_warn("calendar: no event for rescheduled cita %s (%s): %s", id, cal->ops->name,
                 err_msg());
    } else if (made) {
        /* recorded in place of the one it replaces (none, or the one gone) */
        bool stored = false;
        br_err src = store_cita_set_event(app->store, id, made, event_id, &stored);
        if (src == BR_INDOUBT) {
            /* it may be recorded: the event stays */
            log_warn("calendar: whether event %s of cita %s was recorded is unknown: %s", made, id,
                     err_msg());
        } else if (src != BR_OK || !stored) {
            /* cancelled or given an event meanwhile: this one goes again */
            if (calendar_delete_event(cal, made) != BR_OK)
                log_warn("calendar: could not delete the unrecorded event of cita %s: %s", id,
                         err_msg());
        }
    }
    free(made);
    free(summary);
    free(description);
}

/* Who makes a change: staff (any cita, any time), a client (her own, until
 * the cut-off), whoever holds a cita's personal link (that cita, with its
 * client's rules), or the shop cancelling because it or the barber is off
 * (as staff; the client's mail a "cierre" carrying the shop's message). */
enum actor { ACTOR_STAFF, ACTOR_CLIENT, ACTOR_LINK, ACTOR_SHOP };

static br_err apply(struct app *app, enum actor who, const char *client_id, const char *id,
                    const uint32_t *gen, bool reschedule, const char *fecha_inicio,
                    const char *mensaje, const struct cambio_dentro *dentro, br_id cita_id);

/* The appointment id text names, as who may see it (a client: hers only).
 * BR_NOTFOUND "Cita no encontrada" otherwise. OUT: *d (cita_detail_clear). */
static br_err cita_of(struct app *app, enum actor who, const char *client, const char *id,
                      struct cita_detail *d)
{
    br_id uid;
    if (!id || !uuid_parse(id, strlen(id), uid)) return err_set(BR_NOTFOUND, "Cita no encontrada");
    br_err rc = store_cita_detail(app->store, uid, d);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Cita no encontrada");
    if (rc) return unexpected(rc, "cita lookup");
    if (who == ACTOR_CLIENT && strcmp(client, d->cita.cliente_id) != 0) {
        cita_detail_clear(d);
        return err_set(BR_NOTFOUND, "Cita no encontrada");
    }
    return BR_OK;
}

/* The free slots of fecha for the appointment id names, as who may see it. */
static br_err huecos(struct app *app, enum actor who, const char *client, const char *id,
                     const char *fecha, struct cambio_huecos *out)
{
    memset(out, 0, sizeof *out);
    /* the request first, as a change judges its body before what it names */
    struct tz_date day;
    if (!fecha || !*fecha) return err_set(BR_INVALID, "Faltan campos requeridos");
    if (!tz_date_parse(fecha, &day)) return err_set(BR_INVALID, "fecha inválida");
    struct cita_detail d;
    br_err rc = cita_of(app, who, client, id, &d);
    if (rc) return rc;
    memcpy(out->cita_id, d.cita.id, sizeof out->cita_id);
    memcpy(out->servicio_id, d.cita.servicio_id, sizeof out->servicio_id);
    memcpy(out->barbero_id, d.cita.barbero_id, sizeof out->barbero_id);
    cita_detail_clear(&d);
    const struct agenda_query q = {.servicio_id = out->servicio_id,
                                   .fecha = fecha,
                                   .barbero_id = out->barbero_id,
                                   .sin_cita = out->cita_id,
                                   .now_ms = clock_now_ms()};
    return agenda_disponibilidad(app, &q, &out->dia);
}

br_err cambios_huecos(struct app *app, const struct principal *caller, const char *id,
                      const char *fecha, struct cambio_huecos *out)
{
    const char *client = booking_list_scope(caller);
    return huecos(app, client ? ACTOR_CLIENT : ACTOR_STAFF, client, id, fecha, out);
}

br_err cambios_huecos_link(struct app *app, const char *token, const char *fecha,
                           struct cambio_huecos *out)
{
    br_id id;
    uint32_t gen;
    br_err rc = gestion_cita(app, token, id, &gen);
    if (rc && rc != BR_NOTFOUND) return rc;
    return huecos(app, ACTOR_LINK, NULL, rc ? NULL : id, fecha, out);
}

br_err cambios_apply(struct app *app, const struct principal *caller, const char *id,
                     bool reschedule, const char *fecha_inicio, br_id cita_id)
{
    /* NULL: barbero or admin, who may change any cita at any time */
    const char *client = booking_list_scope(caller);
    return apply(app, client ? ACTOR_CLIENT : ACTOR_STAFF, client, id, NULL, reschedule,
                 fecha_inicio, NULL, NULL, cita_id);
}

br_err cambios_apply_link(struct app *app, const char *token, bool reschedule,
                          const char *fecha_inicio, br_id cita_id)
{
    br_id id;
    uint32_t gen;
    br_err rc = gestion_cita(app, token, id, &gen);
    if (rc && rc != BR_NOTFOUND) return rc;
    /* a token that is none names no cita (once the body is judged) */
    return apply(app, ACTOR_LINK, NULL, rc ? NULL : id, &gen, reschedule, fecha_inicio, NULL, NULL,
                 cita_id);
}

static br_err apply(struct app *app, enum actor who, const char *client, const char *id,
                    const uint32_t *gen, bool reschedule, const char *fecha_inicio,
                    const char *mensaje, const struct cambio_dentro *dentro, br_id cita_id)
{
    cita_id[0] = '\0';
    int64_t now = clock_now_ms();
    int64_t start_ms = 0;
    /* the body first: a bad request is refused whatever it names */
    if (reschedule) {
        if (!fecha_inicio || !*fecha_inicio) return err_set(BR_INVALID, "Faltan campos requeridos");
        if (!iso8601_parse(fecha_inicio, strlen(fecha_inicio), &start_ms))
            return err_set(BR_INVALID, "fecha_inicio inválida");
        if (start_ms < now) return err_set(BR_INVALID, "La fecha ya pasó");
    }
    struct cita_detail d;
    br_err rc = cita_of(app, who, client, id, &d);
    if (rc) return rc;
    if (who == ACTOR_LINK) client = d.cita.cliente_id; /* the link speaks for its client */

    br_ts start, end, plazo;
    memcpy(start, d.cita.fecha_inicio, sizeof start);
    memcpy(end, d.cita.fecha_fin, sizeof end);
    if (reschedule) {
        int64_t end_ms = start_ms + d.duracion_min * 60000;
        iso8601_format(start_ms, start);
        iso8601_format(end_ms, end);
        int64_t back;
        if (d.duracion_min <= 0 || !iso8601_parse(end, strlen(end), &back) || back != end_ms) {
            cita_detail_clear(&d);
            return err_set(BR_INVALID, "fecha_inicio inválida");
        }
    }
    iso8601_format(now + (int64_t)app->cfg->cancel_cutoff_min * 60000, plazo);

    /* the client's e-mail, queued with the change */
    bool wants_mail = d.cliente_email && *d.cliente_email && d.has_perfil;
    bool queue_mail = wants_mail && mailer_enabled(app->mailer);
    /* and by WhatsApp when she consented (the store looks) */
    bool queue_wa = d.has_perfil && app->whatsapp;
    struct outbox_msg msg;
    memset(&msg, 0, sizeof msg);
    if (queue_mail || queue_wa) {
        uuid_v4(msg.id);
        memcpy(msg.cita_id, d.cita.id, sizeof msg.cita_id);
        msg.recipient = queue_mail ? d.cliente_email : NULL;
        msg.wa_cliente_id = queue_wa ? d.cita.cliente_id : NULL;
        msg.cliente_nombre = d.cliente_nombre && *d.cliente_nombre ? d.cliente_nombre
                             : d.cliente_email                     ? d.cliente_email
                                                                   : "";
        msg.barbero_nombre = d.barbero_nombre;
        msg.servicio_nombre = d.servicio_nombre;
        memcpy(msg.fecha_inicio, start, sizeof start);
        memcpy(msg.fecha_fin, end, sizeof end);
        msg.notas = d.cita.notas;
        iso8601_format(now, msg.created_at);
        msg.kind = reschedule ? "reprogramacion" : "cancelacion";
        if (who == ACTOR_SHOP) {
            msg.kind = "cierre"; /* the shop's message instead of the notes */
            msg.notas = mensaje && *mensaje ? (char *)mensaje : NULL;
        }
    }

    /* the stretch it held frees with it: whoever waits for that day hears of it */
    struct espera_liberacion libera;
    bool frees =
        espera_liberacion_tramo(&libera, d.cita.barbero_id, d.cita.fecha_inicio, d.cita.fecha_fin);
    /* the waiting-list entries a reschedule answers go with it (the shop's date) */
    char dia[11];
    const char *espera = reschedule && tz_local_date(start_ms, dia, NULL) ? dia : NULL;
    struct cita_change ch = {
        .id = d.cita.id,
        .cliente_id = client,
        .plazo = plazo,
        .inicio = reschedule ? start : NULL,
        .fin = reschedule ? end : NULL,
        .mail = queue_mail || queue_wa ? &msg : NULL,
        .libera = frees ? &libera : NULL,
        /* a link's: still of her links' generation when the change is made */
        .enlace_cliente = gen ? d.cita.cliente_id : NULL,
        .enlace_gen = gen ? *gen : 0,
        /* a closure's: still on its dates when it is cancelled */
        .dentro_desde = dentro ? dentro->desde : NULL,
        .dentro_hasta = dentro ? dentro->hasta : NULL,
        .dentro_barbero = dentro ? dentro->barbero_id : NULL,
        .dia = espera,
    };
    rc = store_cita_change(app->store, &ch);
    if (rc == BR_NOTFOUND) {
        rc = err_set(BR_NOTFOUND, "Cita no encontrada");
    } else if (rc == BR_CONFLICT && ch.why == CAMBIO_CANCELADA) {
        rc = err_set(BR_CONFLICT, "La cita está cancelada");
    } else if (rc == BR_CONFLICT && ch.why == CAMBIO_MARCADA) {
        rc = err_set(BR_CONFLICT, CAMBIO_MARCADA_MSG);
    } else if (rc == BR_CONFLICT && ch.why == CAMBIO_FUERA) {
        rc = err_set(BR_CONFLICT, "La cita ya no cae en el cierre");
    } else if (rc == BR_CONFLICT && ch.why == CAMBIO_PLAZO) {
        char words[32];
        cutoff_words(app->cfg->cancel_cutoff_min, words, sizeof words);
        rc = err_set(BR_CONFLICT, "Ya no se puede cambiar: faltan menos de %s", words);
    } else if (rc == BR_CONFLICT) {
        rc = err_set(BR_CONFLICT, "El horario ya no está disponible");
    } else if (rc) {
        rc = unexpected(rc, reschedule ? "rescheduling" : "cancelling");
    }
    if (rc) {
        cita_detail_clear(&d);
        return rc;
    }
    log_info("citas: cita %s %s%s", d.cita.id, reschedule ? "rescheduled" : "cancelled",
             who == ACTOR_LINK ? " by its link" : "");
    if (ch.freed) espera_liberado(app);
    if (queue_mail || queue_wa) outbox_wake(app->outbox);
    if (!queue_mail && wants_mail)
        log_info("mail: no %s notice for cita %s: no mail transport configured",
                 reschedule ? "reschedule" : "cancellation", d.cita.id);
    calendar_follow(app, &d, ch.event_id, reschedule, start, end);
    memcpy(cita_id, d.cita.id, sizeof(br_id));
    free(ch.event_id);
    cita_detail_clear(&d);
    return BR_OK;
}

br_err cambios_cancelar_cierre(struct app *app, const char *id, const char *mensaje,
                               const struct cambio_dentro *dentro, br_id cita_id)
{
    return apply(app, ACTOR_SHOP, NULL, id, NULL, false, NULL, mensaje, dentro, cita_id);
}
