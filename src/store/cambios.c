/*
 * cambios.c - what happens to an appointment after its booking (see
 * store/citas.h): its detail, a cancel or a reschedule in one write
 * transaction that re-checks everything, a calendar event recorded later,
 * and the reminders the outbox worker queues as each becomes due.
 */
#include "store_int.h"

/* --- an appointment's detail, cancel, reschedule ------------------------------------ */

/* row_decode_fn: an appointment's detail the caller owns. */
static bool detail_decode(void *out, const struct db_val *c, int n)
{
    (void)n;
    struct cita_detail *d = out;
    struct cita ci;
    if (!cita_view(&ci, c)) return false;
    d->cita = ci;
    d->cita.estado = xstrdup(ci.estado);
    d->cita.notas = xstrdup_or_null(ci.notas);
    d->cita.google_event_id = xstrdup_or_null(ci.google_event_id);
    d->cliente_email = dup_or_null(&c[10]);
    if (d->cliente_email && !email_es_direccion(d->cliente_email)) {
        free(d->cliente_email); /* a front-desk client without an e-mail */
        d->cliente_email = NULL;
    }
    d->has_perfil = c[11].type != DB_NULL;
    d->cliente_nombre = dup_or_null(&c[12]);
    d->barbero_nombre = xstrdup(text_or_empty(&c[13]));
    d->servicio_nombre = xstrdup(text_or_empty(&c[14]));
    d->duracion_min = as_int(&c[15]);
    return true;
}

br_err store_cita_detail(struct store *st, const char *id, struct cita_detail *d)
{
    memset(d, 0, sizeof *d);
    br_err rc = run_one(st,
                        "SELECT " CITA_COLS ", u.email, p.id, p.nombre, b.nombre, s.nombre, "
                        "s.duracion_min FROM citas c "
                        "LEFT JOIN auth_users u ON u.id = c.cliente_id "
                        "LEFT JOIN perfiles p ON p.id = c.cliente_id "
                        "LEFT JOIN barberos b ON b.id = c.barbero_id "
                        "LEFT JOIN servicios s ON s.id = c.servicio_id WHERE c.id = ?",
                        DB_ARGS(db_text(id)), detail_decode, d, "no such cita");
    if (rc) cita_detail_clear(d);
    return rc;
}

/* The row a change starts from, read inside its transaction. */
struct change_row {
    br_id cliente_id;
    br_ts fecha_inicio, fecha_fin;
    br_id barbero_id, servicio_id;
    char *estado, *event_id;
};

/* row_decode_fn: the row a change starts from (its texts owned). */
static bool change_decode(void *out, const struct db_val *c, int n)
{
    (void)n;
    struct change_row *r = out;
    bool fits = true;
    COPY(r->cliente_id, &c[0]);
    COPY(r->fecha_inicio, &c[1]);
    COPY(r->barbero_id, &c[2]);
    COPY(r->fecha_fin, &c[5]);
    COPY(r->servicio_id, &c[6]);
    if (!fits) return false;
    r->estado = dup_or_null(&c[3]);
    r->event_id = dup_or_null(&c[4]);
    return true;
}

static const char sql_reminders_drop[] =
    "DELETE FROM mail_outbox WHERE cita_id = ? AND kind = 'recordatorio' AND status = 'pending'";

/* The overlap check of a reschedule: the cita itself does not count. */
static const char sql_overlap_but[] = MEETS_WINDOW("1", " AND id <> ?") " LIMIT 1";

struct change_args {
    struct cita_change *ch;
    bool avisos; /* the barber's notice too (store/avisos.h) */
};

/* A change through a personal link: her turn first (a correction that
 * ends her links takes it too), then her links' generation as it is now,
 * the link's or BR_NOTFOUND. */
static br_err link_still_open(struct db *db, struct db_conn *conn, const struct cita_change *ch)
{
    const char *cliente = ch->enlace_cliente;
    int64_t gen = 0;
    struct db_val pg[] = {db_text(cliente)};
    br_err rc = client_turn(db, conn, cliente);
    if (!rc)
        rc = EXEC(db, conn, "SELECT gen FROM enlaces_cliente WHERE cliente_id = ?", pg, one_int,
                  &gen, NULL);
    if (rc == BR_UNAUTH || (!rc && gen != ch->enlace_gen))
        return err_set(BR_NOTFOUND, "no such cita");
    return rc;
}

static br_err change_tx(struct db *db, struct db_conn *conn, void *ud)
{
    struct change_args *ca = ud;
    struct cita_change *ch = ca->ch;
    ch->why = CAMBIO_OK; /* the adapter may run this again (a deadlock) */
    ch->freed = false;
    free(ch->event_id);
    ch->event_id = NULL;
    br_err rc = ch->enlace_cliente ? link_still_open(db, conn, ch) : BR_OK;
    if (!rc) rc = lock_on(db, conn, "cita", ch->id);
    if (rc) return rc;
    struct change_row r = {.estado = NULL};
    struct db_val pi[] = {db_text(ch->id)};
    rc = EXEC_ONE(db, conn,
                  "SELECT cliente_id, fecha_inicio, barbero_id, estado, google_event_id, "
                  "fecha_fin, servicio_id FROM citas WHERE id = ?",
                  pi, change_decode, &r, "no such cita");
    if (!rc && ch->cliente_id && strcmp(r.cliente_id, ch->cliente_id) != 0)
        rc = err_set(BR_NOTFOUND, "no such cita");
    if (!rc && r.estado && !strcmp(r.estado, "cancelada")) {
        ch->why = CAMBIO_CANCELADA;
        rc = err_set(BR_CONFLICT, "cancelled");
    }
    if (!rc && r.estado &&
        (!strcmp(r.estado, "completada") || !strcmp(r.estado, "no_presentado"))) {
        /* it happened (or did not): history now, until its mark is undone */
        ch->why = CAMBIO_MARCADA;
        rc = err_set(BR_CONFLICT, "attendance marked");
    }
    if (!rc && ch->dentro_desde &&
        (strcmp(r.fecha_inicio, ch->dentro_desde) < 0 ||
         strcmp(r.fecha_inicio, ch->dentro_hasta) >= 0 ||
         (ch->dentro_barbero && strcmp(r.barbero_id, ch->dentro_barbero) != 0))) {
        /* moved off the dates (or to another barber) since it was listed */
        ch->why = CAMBIO_FUERA;
        rc = err_set(BR_CONFLICT, "no longer in the closure");
    }
    if (!rc && ch->cliente_id && ch->plazo && strcmp(r.fecha_inicio, ch->plazo) < 0) {
        ch->why = CAMBIO_PLAZO;
        rc = err_set(BR_CONFLICT, "past the cut-off");
    }
    if (!rc && ch->inicio) {
        /* reschedule: the new slot, then the move itself (on PostgreSQL
         * the exclusion constraint makes the update its own check) */
        bool taken = false;
        struct db_val po[] = {db_text(r.barbero_id), db_text(ch->inicio),   db_text(ch->fin),
                              db_text(ch->id),       db_text(r.barbero_id), db_text(ch->inicio),
                              db_text(ch->id),       db_text(ch->inicio)};
        /* the hours the clean-up margins (at most 120 minutes) may reach too */
        int64_t s0, e0;
        br_ts lo, hi;
        if (iso8601_parse(ch->inicio, strlen(ch->inicio), &s0) &&
            iso8601_parse(ch->fin, strlen(ch->fin), &e0)) {
            iso8601_format(s0 - (int64_t)120 * 60000, lo);
            iso8601_format(e0 + (int64_t)120 * 60000, hi);
            rc = lock_slot_hours(db, conn, r.barbero_id, lo, hi);
        }
        if (!rc) rc = EXEC(db, conn, sql_overlap_but, po, one_flag, &taken, NULL);
        if (!rc && taken) rc = err_set(BR_CONFLICT, "slot taken");
        if (!rc) {
            /* and the clean-up margins: this service's after it, the others' before */
            int64_t margen = 0;
            rc = EXEC(db, conn,
                      "SELECT coalesce(s.margen_min, 0) FROM citas c "
                      "LEFT JOIN servicios s ON s.id = c.servicio_id WHERE c.id = ?",
                      pi, one_int, &margen, NULL);
            if (!rc)
                rc = margin_taken(db, conn, r.barbero_id, ch->inicio, ch->fin, margen, ch->id,
                                  &taken);
            if (!rc && taken) rc = err_set(BR_CONFLICT, "margin taken");
        }
        if (!rc) {
            struct db_val pu[] = {db_text(ch->inicio), db_text(ch->fin), db_text(ch->id)};
            rc = EXEC(db, conn, "UPDATE citas SET fecha_inicio = ?, fecha_fin = ? WHERE id = ?", pu,
                      NULL, NULL, NULL);
        }
        if (rc == BR_CONFLICT) ch->why = CAMBIO_SOLAPE;
        /* the history record follows the haircut to its new date */
        char fecha[11];
        memcpy(fecha, ch->inicio, 10);
        fecha[10] = '\0';
        struct db_val ph[] = {db_text(fecha), db_text(ch->id)};
        if (!rc)
            rc = EXEC(db, conn, "UPDATE historial_cortes SET fecha = ? WHERE cita_id = ?", ph, NULL,
                      NULL, NULL);
        /* she waits no more for the day she moved it to, as a booking's */
        if (!rc && ch->dia)
            rc = espera_answered_drop(db, conn, r.cliente_id, ch->dia, r.servicio_id, r.barbero_id);
    } else if (!rc) {
        /* cancel: no haircut happens, so no history record either */
        rc = EXEC(db, conn, "UPDATE citas SET estado = 'cancelada' WHERE id = ?", pi, NULL, NULL,
                  NULL);
        if (!rc)
            rc = EXEC(db, conn, "DELETE FROM historial_cortes WHERE cita_id = ?", pi, NULL, NULL,
                      NULL);
    }
    /* what the caller read before may have moved meanwhile (another change
     * committed first): the stretch that frees and the time a cancellation
     * names are the row's, as read under the lock */
    if (!rc && ch->libera) {
        memcpy(ch->libera->inicio, r.fecha_inicio, sizeof r.fecha_inicio);
        memcpy(ch->libera->fin, r.fecha_fin, sizeof r.fecha_fin);
    }
    if (!rc && ch->mail && !ch->inicio) {
        memcpy(ch->mail->fecha_inicio, r.fecha_inicio, sizeof r.fecha_inicio);
        memcpy(ch->mail->fecha_fin, r.fecha_fin, sizeof r.fecha_fin);
    }
    /* a pending reminder is for the old time or for nothing now */
    if (!rc) rc = EXEC(db, conn, sql_reminders_drop, pi, NULL, NULL, NULL);
    if (!rc && ch->mail) rc = outbox_insert(db, conn, ch->mail);
    /* a stretch over already frees nothing (ISO texts of one form compare as times) */
    if (!rc && ch->libera && strcmp(ch->libera->fin, ch->libera->created_at) > 0) {
        rc = espera_liberacion_insert(db, conn, ch->libera);
        ch->freed = !rc;
    }
    if (!rc && ca->avisos) {
        br_ts now;
        iso8601_format(clock_now_ms(), now);
        rc = aviso_insert(db, conn, ch->id, ch->inicio ? "aviso_cambio" : "aviso_cancelacion", now);
    }
    if (!rc) {
        ch->event_id = r.event_id;
        r.event_id = NULL;
    }
    free(r.estado);
    free(r.event_id);
    return rc;
}

br_err store_cita_change(struct store *st, struct cita_change *ch)
{
    ch->event_id = NULL;
    struct change_args ca = {ch, st->avisos};
    br_err rc = in_tx(st, change_tx, &ca);
    if (rc) {
        free(ch->event_id);
        ch->event_id = NULL;
    }
    return rc;
}

br_err store_cita_set_event(struct store *st, const char *id, const char *event_id, const char *was,
                            bool *stored)
{
    int64_t n = 0;
    br_err rc = was ? run_write(st,
                                "UPDATE citas SET google_event_id = ? WHERE id = ? AND "
                                "google_event_id = ? AND estado <> 'cancelada'",
                                DB_ARGS(db_text(event_id), db_text(id), db_text(was)), &n)
                    : run_write(st,
                                "UPDATE citas SET google_event_id = ? WHERE id = ? AND "
                                "google_event_id IS NULL AND estado <> 'cancelada'",
                                DB_ARGS(db_text(event_id), db_text(id)), &n);
    *stored = !rc && n == 1;
    return rc;
}

/* Reminders are not queued at booking time: the outbox worker calls
 * store_reminders_queue as each becomes due, so a cancelled or moved cita
 * never leaves one behind, and a cita far ahead has no row yet. */
struct reminder_cand {
    br_id cita_id;
    br_ts inicio, fin, announced;
    char *notas, *recipient, *cliente, *barbero, *servicio;
    const char *canal;
};

struct reminder_scan {
    struct reminder_cand *c;
    int n, cap;
    int64_t window_ms;
};

static br_err reminder_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct reminder_scan *a = ud;
    if (a->n >= a->cap) return BR_OK;
    struct reminder_cand *k = &a->c[a->n];
    memset(k, 0, sizeof *k);
    bool fits = true;
    COPY(k->cita_id, &c[0]);
    COPY(k->inicio, &c[1]);
    COPY(k->fin, &c[2]);
    COPY(k->announced, &c[8]);
    if (!fits) return too_long();
    /* only a cita whose time was announced before its window opened: one
     * booked or moved closer to its start than that gets no reminder */
    int64_t start, ann;
    if (!iso8601_parse(k->inicio, strlen(k->inicio), &start) ||
        !iso8601_parse(k->announced, strlen(k->announced), &ann) || ann > start - a->window_ms)
        return BR_OK;
    k->notas = dup_or_null(&c[3]);
    k->recipient = dup_or_null(&c[4]);
    k->cliente = dup_or_null(&c[5]);
    k->barbero = dup_or_null(&c[6]);
    k->servicio = dup_or_null(&c[7]);
    k->canal = outbox_canal(text_or_null(&c[9]));
    a->n++;
    return BR_OK;
}

static void reminder_cands_free(struct reminder_scan *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->c[i].notas);
        free(a->c[i].recipient);
        free(a->c[i].cliente);
        free(a->c[i].barbero);
        free(a->c[i].servicio);
    }
    free(a->c);
}

struct reminder_insert {
    struct reminder_scan *scan;
    const char *now;
    int64_t window_ms;
    int queued;
};

static br_err reminder_insert_tx(struct db *db, struct db_conn *conn, void *ud)
{
    struct reminder_insert *a = ud;
    a->queued = 0;
    for (int i = 0; i < a->scan->n; i++) {
        struct reminder_cand *k = &a->scan->c[i];
        /* the lock a cancel or a reschedule of this cita takes: the cita is
         * still live at this start, or nothing is queued */
        br_err rc = lock_on(db, conn, "cita", k->cita_id);
        bool live = false;
        struct db_val pc[] = {db_text(k->cita_id), db_text(k->inicio)};
        if (!rc)
            rc = EXEC(db, conn,
                      "SELECT 1 FROM citas WHERE id = ? AND fecha_inicio = ? AND "
                      "estado <> 'cancelada'",
                      pc, one_flag, &live, NULL);
        if (rc) return rc;
        if (!live) continue;
        int64_t start = 0;
        if (!iso8601_parse(k->inicio, strlen(k->inicio), &start)) continue;
        br_id id;
        br_ts due;
        uuid_v4(id);
        iso8601_format(start - a->window_ms, due);
        int64_t n = 0;
        struct db_val pm[] = {db_text(id),           db_text(k->cita_id),
                              db_text(k->recipient), db_text(k->cliente),
                              db_text(k->barbero),   db_text(k->servicio),
                              db_text(k->inicio),    db_text(k->fin),
                              db_text(k->notas),     db_text(a->now),
                              db_text(a->now),       db_text(due),
                              db_text(k->canal),     db_int(a->window_ms / 60000)};
        rc = EXEC(db, conn,
                  "INSERT INTO mail_outbox (id, cita_id, recipient, cliente_nombre, "
                  "barbero_nombre, servicio_nombre, fecha_inicio, fecha_fin, notas, created_at, "
                  "status, attempts, next_attempt_at, kind, due_at, canal, antelacion_min) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, 'recordatorio', ?, ?, ?) "
                  "ON CONFLICT DO NOTHING",
                  pm, NULL, NULL, &n);
        if (rc) return rc;
        a->queued += (int)n;
    }
    return BR_OK;
}

#define REMINDER_BATCH 200

br_err store_reminders_queue(struct store *st, int64_t now_ms, int64_t window_ms, int64_t floor_ms,
                             int *queued)
{
    *queued = 0;
    br_ts now, horizon, floor;
    iso8601_format(now_ms, now);
    iso8601_format(now_ms + window_ms, horizon);
    iso8601_format(now_ms + floor_ms, floor);
    struct reminder_scan scan = {xcalloc(REMINDER_BATCH, sizeof *scan.c), 0, REMINDER_BATCH,
                                 window_ms};
    /* live citas starting within the window (and not yet within the next
     * smaller one), with the message of each channel that announced their
     * current time (its names and, by WhatsApp, its number), that have no
     * reminder by that channel for that time and offset yet. It goes to
     * her address, or the number of her WhatsApp consent, now: she may
     * have moved since, and the old mailbox or phone must not get the
     * appointment's link. */
    br_err rc = run(st,
                    "SELECT c.id, c.fecha_inicio, c.fecha_fin, c.notas, CASE WHEN o.canal = "
                    "'email' AND u.email IS NOT NULL THEN u.email WHEN o.canal = 'whatsapp' AND "
                    "w.telefono IS NOT NULL THEN w.telefono ELSE o.recipient END, "
                    "o.cliente_nombre, o.barbero_nombre, o.servicio_nombre, o.created_at, "
                    "o.canal FROM citas c JOIN mail_outbox o ON o.cita_id = c.id AND "
                    "o.kind IN ('confirmacion', 'reprogramacion') AND "
                    "o.fecha_inicio = c.fecha_inicio "
                    "LEFT JOIN auth_users u ON u.id = c.cliente_id AND u.eliminado_en IS NULL "
                    "LEFT JOIN whatsapp_consentimientos w ON w.cliente_id = c.cliente_id AND "
                    "w.retirado_en IS NULL "
                    "WHERE c.fecha_inicio > ? AND c.fecha_inicio <= ? AND "
                    "c.estado <> 'cancelada' AND NOT EXISTS (SELECT 1 FROM mail_outbox r "
                    "WHERE r.cita_id = c.id AND r.kind = 'recordatorio' AND "
                    "r.fecha_inicio = c.fecha_inicio AND r.canal = o.canal AND "
                    "r.antelacion_min = ?) "
                    "ORDER BY c.fecha_inicio, c.id LIMIT ?",
                    DB_ARGS(db_text(floor), db_text(horizon), db_int(window_ms / 60000),
                            db_int(REMINDER_BATCH)),
                    reminder_row, &scan, NULL);
    if (!rc && scan.n > 0) {
        struct reminder_insert a = {&scan, now, window_ms, 0};
        rc = in_tx_as(st, DB_TOUCH_NONE, reminder_insert_tx, &a);
        if (!rc) *queued = a.queued;
    }
    reminder_cands_free(&scan);
    return rc;
}

br_err store_reminder_next(struct store *st, const char *after, br_ts next)
{
    next[0] = '\0';
    return run(st,
               "SELECT min(fecha_inicio) FROM citas WHERE fecha_inicio > ? AND "
               "estado <> 'cancelada'",
               DB_ARGS(db_text(after)), one_ts, next, NULL);
}
