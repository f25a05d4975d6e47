/*
 * agenda.h - bookable hours: weekly schedules, days off and
 * closures (their writes, checked with domain/rules.h), and the free slots
 * of a day (GET /api/disponibilidad).
 *
 * Times of a schedule are the shop's local minutes (BARBERIA_TZ, set by
 * util/tz.h at start); slots are UTC instants. Errors carry the API's
 * Spanish message (BR_INVALID 400, BR_NOTFOUND 404).
 */
#ifndef BR_AGENDA_H
#define BR_AGENDA_H

#include "app.h"

/* Checks a week (any order) with the rules of domain/rules.h: dia 1-7,
 * 0 <= inicio < fin <= 1440, intervals of one day that do not overlap
 * (touching is fine), at most RULE_TRAMOS_MAX. Sorts t by dia and inicio.
 * BR_INVALID with the message. */
br_err agenda_horario_check(struct horario_tramo *t, int n) WARN_UNUSED;

/* Replaces barbero_id's week with the n intervals of t, once
 * agenda_horario_check has passed them (t is sorted). BR_INVALID with the
 * message; BR_NOTFOUND when there is no such barber (nothing written); the
 * store's errors. */
br_err agenda_horario_set(struct app *app, const char *barbero_id, struct horario_tramo *t,
                          int n) WARN_UNUSED;

/* A day off of a barber, or a closure of the whole shop, as asked for. */
struct ausencia_nueva {
    const char *barbero_id;    /* NULL: the whole shop */
    const char *desde, *hasta; /* YYYY-MM-DD, both included */
    const char *motivo;        /* nullable */
};

/* A period a request gives (desde, hasta: "YYYY-MM-DD", both days
 * included): BR_INVALID with the API's message when a date is not one or
 * hasta comes before desde. */
br_err agenda_range_check(const char *desde, const char *hasta) WARN_UNUSED;

/* Records a day off or a closure, checked in this order: the dates
 * (BR_INVALID "desde inválida", "hasta inválida", "hasta es anterior a
 * desde"), the motivo ("Campo inválido: motivo"), the barber (BR_NOTFOUND
 * "Barbero no encontrado"). OUT: *out, the stored record (its motivo
 * borrows in->motivo). The store's errors as it gives them. */
br_err agenda_ausencia_add(struct app *app, const struct ausencia_nueva *in,
                           struct ausencia *out) WARN_UNUSED;

/* Removes one. BR_NOTFOUND when there is no such one; the store's errors. */
br_err agenda_ausencia_delete(struct app *app, const char *id) WARN_UNUSED;

/* One free slot: when, and which barbers are free then. */
struct agenda_hueco {
    int64_t inicio_ms, fin_ms;
    int local_min; /* the start in local minutes of the day */
    int first, nb; /* barbers: agenda_dia.barberos[first .. first + nb) of idx */
};

struct agenda_dia {
    char fecha[11];
    /* The answer is the same for every clock reading in [the query's now_ms,
     * vigente_hasta_ms) that has the shop's date of now_ms (see
     * agenda_disponibilidad_clave): the first instant at which the minimum
     * notice passes one of its slots, or INT64_MAX. */
    int64_t vigente_hasta_ms;
    struct agenda_hueco *huecos;
    int nhuecos;
    int *idx;   /* indices into ids, per hueco (see agenda_hueco) */
    br_id *ids; /* the barbers considered, by nombre */
    int nids;
};

struct agenda_query {
    const char *servicio_id; /* required */
    const char *fecha;       /* required: YYYY-MM-DD */
    const char *barbero_id;  /* NULL: any active barber */
    int64_t now_ms;
    const char *sin_cita; /* NULL, or an appointment that does not hold its time (the one being
                             moved) */
    bool sin_aviso;       /* the front desk's: no minimum notice, every slot from now on */
};

/* The free slots of a date. OUT: *out (release with agenda_dia_clear);
 * canonical ids in out->ids. Errors: 400 Faltan campos requeridos, 400
 * fecha inválida, 404 Servicio no encontrado, 404 Barbero no encontrado. */
br_err agenda_disponibilidad(struct app *app, const struct agenda_query *q,
                             struct agenda_dia *out) WARN_UNUSED;
void agenda_dia_clear(struct agenda_dia *d);

/* What the answer to q depends on besides the database and the clock's
 * advance within a day (agenda_dia.vigente_hasta_ms): q's fields as given
 * and the shop's date at q->now_ms, written as a key into out (n bytes).
 * False when it does not fit, or for a query with sin_cita (one person's,
 * never remembered) or sin_aviso (the desk's). */
bool agenda_disponibilidad_clave(const struct agenda_query *q, char *out, size_t n);

#endif
