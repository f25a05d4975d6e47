/*
 * booking.c - appointments (see booking.h).
 *
 * The slot is checked twice. First a plain read, in the specification's
 * place (step 6), so that a taken slot answers 409 before anything is sent
 * to the calendar. Then again inside the write transaction that stores the
 * appointment: BEGIN IMMEDIATE (and, on PostgreSQL, a per-barber lock)
 * serialises bookings, so of two requests racing for one slot exactly one
 * commits. The calendar call sits between the two checks on purpose: it can
 * take seconds, and no lock or connection is held while it runs. A request
 * that loses the race after its calendar event was made deletes that event
 * again (best-effort) before answering 409, and so does one the store fails
 * to record (500): no event outlives a booking that does not exist.
 *
 * The client's cap on upcoming appointments (BARBERIA_MAX_UPCOMING_CITAS)
 * is checked the same two ways, after the overlap: a count before the
 * calendar call, and again in the write transaction, where one client's
 * bookings take turns (a per-client lock on PostgreSQL), so that racing
 * bookings of one client never pass it together.
 */
#include "booking.h"
#include "mostrador.h"
#include "catalog.h"
#include "../domain/roles.h"
#include "outbox.h"
#include "../util/log.h"
#include "../util/metrics.h"
#include "../util/tz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool missing(const char *s)
{
    return !s || !*s;
}

void booking_event_text(const char *servicio, const char *cliente, const char *barbero,
                        const char *notas, char **summary, char **description)
{
    *summary = xasprintf("%s \u2014 %s", servicio, cliente);
    if (notas && *notas)
        *description = xasprintf("Cliente: %s\nBarbero: %s\nServicio: %s\nNotas: %s", cliente,
                                 barbero, servicio, notas);
    else
        *description =
            xasprintf("Cliente: %s\nBarbero: %s\nServicio: %s", cliente, barbero, servicio);
}

/* A store failure in a lookup: the generic 500, except a full pool or a
 * write lock held too long, which stays BR_BUSY (503 with Retry-After). */
static br_err unexpected(br_err rc, const char *what)
{
    log_error("citas: %s: %s", what, err_msg());
    if (err_unavailable(rc)) return rc;
    return err_set(BR_INTERNAL, "Error interno del servidor");
}

br_err booking_create(struct app *app, const struct principal *caller,
                      const struct booking_input *in, struct cita *out)
{
    const char *cliente = caller->has_perfil && caller->perfil.nombre && *caller->perfil.nombre
                              ? caller->perfil.nombre
                              : caller->email;
    struct booking_para para = {
        .cliente_id = caller->user_id,
        .email = caller->email,
        .nombre = cliente,
        .has_perfil = caller->has_perfil,
    };
    return booking_create_para(app, &para, in, out);
}

br_err booking_create_para(struct app *app, const struct booking_para *para,
                           const struct booking_input *in, struct cita *out)
{
    memset(out, 0, sizeof *out);
    /* 2. required fields */
    if (missing(in->barbero_id) || missing(in->servicio_id) || missing(in->fecha_inicio))
        return err_set(BR_INVALID, "Faltan campos requeridos");

    struct servicio srv;
    struct barbero bar;
    memset(&bar, 0, sizeof bar);
    char *summary = NULL, *description = NULL, *event_id = NULL;
    br_err rc;

    /* 3. the service */
    rc = catalog_servicio_activo(app, in->servicio_id, &srv);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Servicio no encontrado");
    if (rc) return unexpected(rc, "service lookup");

    /* 4. fecha_fin */
    int64_t start_ms;
    if (!iso8601_parse(in->fecha_inicio, strlen(in->fecha_inicio), &start_ms)) {
        rc = err_set(BR_INVALID, "fecha_inicio inválida");
        goto out;
    }
    int64_t end_ms = start_ms + srv.duracion_min * 60000;
    br_ts start, end;
    iso8601_format(start_ms, start);
    iso8601_format(end_ms, end);
    int64_t back;
    if (!iso8601_parse(end, strlen(end), &back) || back != end_ms) {
        /* the end would fall past year 9999 */
        rc = err_set(BR_INVALID, "fecha_inicio inválida");
        goto out;
    }

    /* 5. the barber (the caller's profile came with the session) */
    rc = catalog_barbero_activo(app, in->barbero_id, &bar);
    if (rc == BR_NOTFOUND) {
        rc = err_set(BR_NOTFOUND, "Barbero no encontrado");
        goto out;
    }
    if (rc) {
        rc = unexpected(rc, "barber lookup");
        goto out;
    }

    /* what the front desk checks besides (working hours, a walk-in's start) */
    if (para->check) {
        rc = para->check(para->check_ud, app, &srv, &bar, start_ms, end_ms);
        if (rc) goto out;
    }

    /* 6. overlap */
    bool taken = false;
    rc = store_cita_overlaps(app->store, bar.id, start, end, &taken);
    if (rc) {
        rc = unexpected(rc, "overlap check");
        goto out;
    }
    if (!taken && para->staff) {
        /* the desk keeps the services' clean-up margins free too */
        rc = store_cita_margin_taken(app->store, bar.id, start, end, srv.margen_min, &taken);
        if (rc) {
            rc = unexpected(rc, "margin check");
            goto out;
        }
    }
    if (taken) {
        rc = err_set(BR_CONFLICT, "El horario ya no está disponible");
        goto out;
    }

    /* the client's cap on upcoming appointments, once the specification's
     * checks have passed and before the calendar is asked */
    int64_t cap = para->staff ? 0 : app->cfg->max_upcoming;
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    if (cap > 0) {
        int64_t held = 0;
        rc = store_citas_upcoming(app->store, para->cliente_id, now, cap, &held);
        if (rc) {
            rc = unexpected(rc, "upcoming count");
            goto out;
        }
        if (held >= cap) {
            rc = err_set(BR_INVALID, BOOKING_CAP_MSG);
            goto out;
        }
    }

    /* 7. calendar attempt */
    const char *notas = missing(in->notas) ? NULL : in->notas;
    const char *cliente = para->nombre ? para->nombre : "";
    booking_event_text(srv.nombre, cliente, bar.nombre, notas, &summary, &description);
    struct cal_event ev = {summary, description, start, end, para->email};
    uuid_v4(out->id);
    br_err crc = calendar_create_event(app->cal, &ev, &event_id);
    if (crc == BR_CONFIG) {
        log_info("calendar: no event for cita %s: %s", out->id, err_msg());
        event_id = NULL;
    } else if (crc) {
        metric_inc(M_CAL_FAILURES);
        log_warn("calendar: no event for cita %s (%s): %s", out->id, app->cal->ops->name,
                 err_msg());
        event_id = NULL;
    }

    /* 8.-9. store the appointment and its history record (and queue 10.) */
    snprintf(out->cliente_id, sizeof out->cliente_id, "%s", para->cliente_id);
    memcpy(out->barbero_id, bar.id, sizeof out->barbero_id);
    memcpy(out->servicio_id, srv.id, sizeof out->servicio_id);
    memcpy(out->fecha_inicio, start, sizeof start);
    memcpy(out->fecha_fin, end, sizeof end);
    out->estado = xstrdup("confirmada");
    out->notas = xstrdup_or_null(notas);
    out->google_event_id = event_id;
    event_id = NULL;
    iso8601_format(clock_now_ms(), out->created_at);

    bool wants_mail = para->email && *para->email && para->has_perfil;
    bool queue_mail = wants_mail && mailer_enabled(app->mailer);
    /* and by WhatsApp when she consented (the store looks) */
    bool queue_wa = para->has_perfil && app->whatsapp;
    struct outbox_msg msg;
    memset(&msg, 0, sizeof msg);
    if (queue_mail || queue_wa) {
        uuid_v4(msg.id);
        memcpy(msg.cita_id, out->id, sizeof msg.cita_id);
        msg.recipient = queue_mail ? (char *)para->email : NULL;
        msg.wa_cliente_id = queue_wa ? para->cliente_id : NULL;
        msg.cliente_nombre = (char *)cliente;
        msg.barbero_nombre = bar.nombre;
        msg.servicio_nombre = srv.nombre;
        memcpy(msg.fecha_inicio, start, sizeof start);
        memcpy(msg.fecha_fin, end, sizeof end);
        msg.notas = (char *)notas;
        memcpy(msg.created_at, out->created_at, sizeof msg.created_at);
    }
    struct outbox_msg *queued = queue_mail || queue_wa ? &msg : NULL;
    /* the waiting-list entries it answers go with it (the shop's date) */
    char dia[11];
    const char *espera = tz_local_date(start_ms, dia, NULL) ? dia : NULL;
    rc = para->staff
             ? store_cita_book_desk(app->store, out, queued, para->quien, srv.margen_min, espera)
             : store_cita_book_capped(app->store, out, queued, now, cap, espera);
    if (rc == BR_INDOUBT) {
        /* the appointment may be stored: its event stays with it (an event
         * without its appointment is the lesser harm: a confirmed booking
         * pointing at no event would lose its calendar entry) */
        struct err_kept why;
        err_keep(&why);
        log_error("citas: whether cita %s was stored is unknown (its event %s kept): %s", out->id,
                  out->google_event_id ? out->google_event_id : "none", why.msg);
        cita_clear(out);
        rc = err_restore(BR_INDOUBT, &why);
        goto out;
    }
    if (rc == BR_CONFLICT || rc == BR_BUSY || rc == BR_TOOLARGE || rc == BR_UNAUTH) {
        /* nothing was stored: the event goes too (what the store said is
         * read first: the calendar call may set a detail of its own) */
        int retry = err_retry_after();
        bool email_taken =
            rc == BR_CONFLICT && para->quien &&
            (!strcmp(err_msg(), "email taken") || !strcmp(err_msg(), "client exists"));
        if (email_taken && para->existe) *para->existe = true;
        if (out->google_event_id && calendar_delete_event(app->cal, out->google_event_id) != BR_OK)
            log_warn("calendar: could not delete event of lost booking %s: %s", out->id, err_msg());
        /* BR_UNAUTH: the client's account closed while she booked */
        rc = rc == BR_UNAUTH     ? mostrador_cliente_cerrado(rc, para->staff)
             : rc == BR_BUSY     ? err_set_retry(BR_BUSY, retry, "Servicio ocupado")
             : rc == BR_TOOLARGE ? err_set(BR_INVALID, BOOKING_CAP_MSG)
             : email_taken       ? err_set(BR_CONFLICT, "El email ya está registrado")
                                 : err_set(BR_CONFLICT, "El horario ya no está disponible");
        cita_clear(out);
        goto out;
    }
    if (rc) {
        /* the detail is the answer (the store's message): keep it across
         * the calendar call */
        struct err_kept why;
        err_keep(&why);
        log_error("citas: storing cita %s failed: %s", out->id, why.msg);
        /* no booking, so no event either */
        if (out->google_event_id && calendar_delete_event(app->cal, out->google_event_id) != BR_OK)
            log_warn("calendar: could not delete event of unstored booking %s: %s", out->id,
                     err_msg());
        rc = err_set(BR_STORE, "%s", why.msg);
        cita_clear(out);
        goto out;
    }

    /* 10. e-mail attempt */
    if (queue_mail || queue_wa) outbox_wake(app->outbox);
    if (!queue_mail && wants_mail)
        log_info("mail: no confirmation for cita %s: no mail transport configured", out->id);

out:
    free(summary);
    free(description);
    free(event_id);
    servicio_clear(&srv);
    barbero_clear(&bar);
    return rc;
}

const char *booking_list_scope(const struct principal *caller)
{
    return principal_is_staff(caller) ? NULL : caller->user_id;
}

br_err booking_list(struct app *app, const struct cita_range *q, store_cita_fn fn, void *ud)
{
    struct cita_range r = *q;
    if (r.estado && !*r.estado) r.estado = NULL;
    return store_citas_range(app->store, &r, fn, ud);
}
