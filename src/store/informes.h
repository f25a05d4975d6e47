/*
 * store/informes.h - part of the store (include store.h): the owner's
 * reports over the appointments of a period (src/store/informes.c), each
 * one aggregated statement over the covering index citas_informe.
 */
#ifndef BR_STORE_INFORMES_H
#define BR_STORE_INFORMES_H

#include "store.h"

/* What the rows of a report are grouped by. */
enum informe_clave {
    INFORME_POR_BARBERO,  /* the appointment's barbero_id */
    INFORME_POR_SERVICIO, /* its servicio_id */
    INFORME_POR_DIA,      /* the shop's local date of its start (see informe_consulta) */
};

/* The most stretches of one UTC offset a report's period may span (a
 * year has two changes of the clocks in most zones). */
#define INFORME_TRAMOS_MAX 6

/* A report's appointments: those that start in [desde, hasta) (canonical
 * UTC timestamps), grouped by clave. By day, an appointment's local date
 * is (its start's seconds since 1970 + the offset of its stretch) / 86400,
 * in days since 1970: the stretch of offsets[i] runs up to limites[i]
 * (excluded; offsets[ntramos - 1] to the end). */
struct informe_consulta {
    enum informe_clave clave;
    const char *desde, *hasta;
    const char *ahora; /* what has passed: a confirmed appointment that ended by then is served */
    int ntramos;       /* 1 to INFORME_TRAMOS_MAX */
    br_ts limites[INFORME_TRAMOS_MAX - 1];
    int64_t offsets[INFORME_TRAMOS_MAX]; /* seconds east of UTC */
};

/* One group's figures. */
struct informe_fila {
    const char *id; /* by barber or service: its id (borrowed); by day: NULL */
    int64_t dia;    /* by day: days since 1970 of the local date */
    int64_t citas;  /* every appointment, whatever its estado */
    int64_t confirmadas, completadas, no_presentados, canceladas;
    int64_t segundos_reservados; /* of every appointment but the cancelled */
    /* cents: completed ones and confirmed ones that have ended (served),
     * and confirmed ones still to come; each at its price when booked, or
     * the service's price of today for an appointment without one */
    int64_t ingresos_cent, previstos_cent;
    int64_t estimadas; /* of those counted in either: how many had no price of their own */
};
typedef br_err (*store_informe_fn)(void *ud, const struct informe_fila *f);

/* Hands fn one row per group that has appointments in q's period, in no
 * particular order. One statement. */
br_err store_informe(struct store *st, const struct informe_consulta *q, store_informe_fn fn,
                     void *ud) WARN_UNUSED;

#endif
