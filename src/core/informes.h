/*
 * informes.h - the owner's reports: for a period of the shop's local
 * dates, per barber, service, day or month, the appointments by estado,
 * the revenue at the prices they were booked at, the minutes booked, the
 * minutes the shop was open (the weekly schedules less closures and days
 * off) and the occupancy (GET /api/admin/informes).
 *
 * What counts (docs/decisions.md, "The owner's reports"): revenue is what
 * completed appointments and confirmed ones that have ended brought
 * (ingresos), and what confirmed ones still to come will (previstos);
 * no-shows and cancellations bring nothing. Booked minutes are those of
 * every appointment that is not cancelled. Open minutes are the active
 * barbers' schedules of today, day by day in real time (a day the clocks
 * change has its true length). Appointments booked before prices were
 * kept count at the service's price of today, and say so (estimadas).
 */
#ifndef BR_INFORMES_H
#define BR_INFORMES_H

#include "app.h"

#define INFORME_DIAS_MAX 366 /* the longest period: a year, a leap one too */

enum informe_agrupar { INFORME_BARBERO, INFORME_SERVICIO, INFORME_DIA, INFORME_MES };

/* "barbero", "servicio", "dia", "mes". */
const char *informe_agrupar_nombre(enum informe_agrupar a);

struct informe_pedido {
    const char *desde, *hasta; /* YYYY-MM-DD, the shop's local dates, both included */
    const char *agrupar;       /* NULL: "dia" */
    const char *formato;       /* NULL, "json" or "csv": how it is written, judged last */
    int64_t now_ms;
};

struct informe_grupo {
    char clave[40]; /* the barber's or service's id, YYYY-MM-DD, YYYY-MM */
    char *nombre;   /* the barber's or service's name, or the clave (owned) */
    int64_t citas, confirmadas, completadas, no_presentados, canceladas;
    int64_t ingresos_cent, previstos_cent;
    int64_t estimadas; /* counted in either at the price of today: none of their own */
    int64_t segundos_reservados;
    /* the open minutes the occupancy is of: the barber's, the day's or the
     * month's of every barber; by service the whole shop's (so a service's
     * occupancy is its share of the shop's open time) */
    int64_t minutos_abiertos;
};

struct informe {
    enum informe_agrupar agrupar;
    char desde[11], hasta[11];
    struct informe_grupo *grupos; /* by nombre (barbers, services) or in time order */
    int ngrupos;
    struct informe_grupo total;
};

/* Computes the report p asks for. Errors, BR_INVALID with the API's
 * message, checked in this order: "Faltan campos requeridos" (no desde or
 * hasta), "desde inválida", "hasta inválida" (also years outside 1971-9998),
 * "hasta es anterior a desde",
 * "El periodo no puede pasar de 366 días", "agrupar inválido: barbero,
 * servicio, dia o mes", "formato inválido: json o csv". Else the store's
 * errors. OUT: *out (informe_clear). */
br_err informe_calcular(struct app *app, const struct informe_pedido *p,
                        struct informe *out) WARN_UNUSED;
void informe_clear(struct informe *i);

#endif
