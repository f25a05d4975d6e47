/*
 * store/catalog.h - part of the store (include store.h): barbers,
 * services, weekly schedules and days off (src/store/catalog.c).
 */
#ifndef BR_STORE_CATALOG_H
#define BR_STORE_CATALOG_H

#include "store.h"

/* --- catalog --------------------------------------------------------------- */

br_err store_barbero_add(struct store *st, const struct barbero *b) STORE_WRITE WARN_UNUSED;
/* OUT: *b (clear with barbero_clear). BR_NOTFOUND when none. */
br_err store_barbero_get(struct store *st, const char *id, struct barbero *b) WARN_UNUSED;
typedef br_err (*store_barbero_fn)(void *ud, const struct barbero *b);
/* By nombre. */
br_err store_barberos_each(struct store *st, store_barbero_fn fn, void *ud) WARN_UNUSED;

br_err store_servicio_add(struct store *st, const struct servicio *s) STORE_WRITE WARN_UNUSED;
br_err store_servicio_get(struct store *st, const char *id, struct servicio *s) WARN_UNUSED;
typedef br_err (*store_servicio_fn)(void *ud, const struct servicio *s);
br_err store_servicios_each(struct store *st, store_servicio_fn fn, void *ud) WARN_UNUSED;

/* --- catalog administration, schedules, days off ------------------------------------- */

/* Every barber / service, active or not, by nombre (the public listings
 * above give the active ones only). */
br_err store_barberos_all(struct store *st, store_barbero_fn fn, void *ud) WARN_UNUSED;
br_err store_servicios_all(struct store *st, store_servicio_fn fn, void *ud) WARN_UNUSED;

/* What to change; NULL / false / -1 leaves a field alone. */
struct barbero_patch {
    const char *nombre;
    bool set_foto_url;
    const char *foto_url; /* with set_foto_url: NULL stores NULL */
    int activo;           /* 1, 0, or -1 */
    /* the barber's notices (store/avisos.h); with set_*: NULL clears */
    bool set_email;
    const char *email;
    bool set_usuario;
    const char *usuario_id; /* a user of rol barbero */
};
/* In one transaction. BR_NOTFOUND when there is no such barber;
 * BR_CONFLICT when usuario_id is linked to another barber. */
br_err store_barbero_update(struct store *st, const char *id,
                            const struct barbero_patch *p) STORE_WRITE WARN_UNUSED;

struct servicio_patch {
    const char *nombre;
    int64_t duracion_min; /* 0: unchanged */
    bool set_precio;
    double precio;
    int activo;         /* 1, 0, or -1 */
    int64_t margen_min; /* -1: unchanged */
};
br_err store_servicio_update(struct store *st, const char *id,
                             const struct servicio_patch *p) STORE_WRITE WARN_UNUSED;

/* One interval of a weekly schedule: ISO weekday (1 Monday ... 7 Sunday),
 * minutes from the shop's local midnight, [inicio, fin). */
struct horario_tramo {
    int dia, inicio, fin;
};
typedef br_err (*store_tramo_fn)(void *ud, const char *barbero_id, const char *barbero_nombre,
                                 const struct horario_tramo *t);
/* A barber's week, by dia and inicio (nothing when the barber is unknown). */
br_err store_horario_each(struct store *st, const char *barbero_id, store_tramo_fn fn,
                          void *ud) WARN_UNUSED;
/* The intervals of weekday dia of the active barbers (only barbero_id's
 * when not NULL), by barber nombre, id, then inicio. */
br_err store_horario_dia(struct store *st, int dia, const char *barbero_id, store_tramo_fn fn,
                         void *ud) WARN_UNUSED;
/* Replaces a barber's week with the n intervals, in one transaction that
 * also records the nl ranges of days it may free for the waiting list
 * (libera, store/espera.h). BR_NOTFOUND when there is no such barber
 * (nothing written). */
struct espera_liberacion;
br_err store_horario_set(struct store *st, const char *barbero_id, const struct horario_tramo *t,
                         int n, const struct espera_liberacion *libera,
                         size_t nl) STORE_WRITE WARN_UNUSED;

/* A day off of one barber, or (barbero_id "") a closure of the whole shop,
 * for the local dates desde to hasta, both included. */
struct ausencia {
    br_id id;
    br_id barbero_id; /* "": the whole shop */
    char desde[11], hasta[11];
    char *motivo; /* nullable; borrowed in callbacks */
    br_ts created_at;
};
typedef br_err (*store_ausencia_fn)(void *ud, const struct ausencia *a);
br_err store_ausencia_add(struct store *st, const struct ausencia *a) STORE_WRITE WARN_UNUSED;
/* All of them, by desde then id. */
br_err store_ausencias_each(struct store *st, store_ausencia_fn fn, void *ud) WARN_UNUSED;
/* Those that cover the date fecha (YYYY-MM-DD). */
br_err store_ausencias_on(struct store *st, const char *fecha, store_ausencia_fn fn,
                          void *ud) WARN_UNUSED;
/* Removes it, in one transaction that also records the days it frees
 * for the waiting list (libera, nullable). BR_NOTFOUND when there is no
 * such one (nothing written). */
br_err store_ausencia_delete(struct store *st, const char *id,
                             const struct espera_liberacion *libera) STORE_WRITE WARN_UNUSED;

#endif
