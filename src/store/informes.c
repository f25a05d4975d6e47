/*
 * informes.c - the owner's reports (see store/informes.h): each report is
 * one statement that reads the period's appointments from the covering
 * index citas_informe (start, barber, service, estado, end, price: no
 * seek into the table) and sums them per group, so a year of a busy shop
 * costs one pass over its own rows, never the history around it.
 *
 * Written once for both databases: unixepoch() is SQLite's own and a
 * function of the PostgreSQL schema; a price the appointment lacks (booked
 * before prices were kept) is looked up only then, by key.
 */
#include "store_int.h"

/* An appointment's price in cents: its own, else its service's of today. */
#define PRECIO_CENT                                                                                \
    "CAST(round(COALESCE(c.precio, (SELECT s.precio FROM servicios s WHERE s.id = "                \
    "c.servicio_id)) * 100) AS BIGINT)"
/* served: completed, or confirmed and over (? = now) */
#define SERVIDA      "(c.estado = 'completada' OR (c.estado = 'confirmada' AND c.fecha_fin <= ?))"
#define PREVISTA     "(c.estado = 'confirmada' AND c.fecha_fin > ?)"
#define CUENTA(cond) "CAST(sum(CASE WHEN " cond " THEN 1 ELSE 0 END) AS BIGINT)"

/* The figures of a group, in the order informe_row reads them. */
#define CONFIRMADAS    CUENTA("c.estado = 'confirmada'")
#define COMPLETADAS    CUENTA("c.estado = 'completada'")
#define NO_PRESENTADOS CUENTA("c.estado = 'no_presentado'")
#define CANCELADAS     CUENTA("c.estado = 'cancelada'")
#define RESERVADOS                                                                                 \
    "CAST(sum(CASE WHEN c.estado <> 'cancelada' THEN unixepoch(c.fecha_fin) - "                    \
    "unixepoch(c.fecha_inicio) ELSE 0 END) AS BIGINT)"
#define CENT(cond) "CAST(sum(CASE WHEN " cond " THEN " PRECIO_CENT " ELSE 0 END) AS BIGINT)"
#define ESTIMADAS  CUENTA("c.precio IS NULL AND c.estado IN ('completada', 'confirmada')")
#define FIGURAS                                                                                    \
    CONFIRMADAS ", " COMPLETADAS ", " NO_PRESENTADOS ", " CANCELADAS ", " RESERVADOS               \
                ", " CENT(SERVIDA) ", " CENT(PREVISTA) ", " ESTIMADAS

/* The group's key, then its figures; parameters: the key's, now, now,
 * then the period (desde, hasta). */
#define INFORME_SQL(key)                                                                           \
    "SELECT " key ", count(*), " FIGURAS " FROM citas c WHERE c.fecha_inicio >= ? AND "            \
    "c.fecha_inicio < ? GROUP BY 1"

/* By day: the local date from the offset of the start's stretch
 * (INFORME_TRAMOS_MAX of them: 5 limits, 6 offsets). */
#define OFF "CAST(? AS BIGINT)"
#define DIA_LOCAL                                                                                  \
    "(unixepoch(c.fecha_inicio) + CASE WHEN c.fecha_inicio < ? THEN " OFF                          \
    " WHEN c.fecha_inicio < ? THEN " OFF " WHEN c.fecha_inicio < ? THEN " OFF                      \
    " WHEN c.fecha_inicio < ? THEN " OFF " WHEN c.fecha_inicio < ? THEN " OFF " ELSE " OFF         \
    " END) / 86400"

#define SQL_POR_BARBERO  INFORME_SQL("c.barbero_id")
#define SQL_POR_SERVICIO INFORME_SQL("c.servicio_id")
#define SQL_POR_DIA      INFORME_SQL(DIA_LOCAL)
static const char *const sql_informe[] = {SQL_POR_BARBERO, SQL_POR_SERVICIO, SQL_POR_DIA};
static const char *const plan_informe[] = {"EXPLAIN QUERY PLAN " SQL_POR_BARBERO,
                                           "EXPLAIN QUERY PLAN " SQL_POR_SERVICIO,
                                           "EXPLAIN QUERY PLAN " SQL_POR_DIA};

#define NPARAMS_MAX (2 * INFORME_TRAMOS_MAX - 1 + 4)
/* a limit past every stored start: the stretches a period does not use */
#define NUNCA "9999-12-31T23:59:59.999Z"

struct informe_cb {
    store_informe_fn fn;
    void *ud;
    bool por_dia;
};

static br_err informe_row(void *ud, const struct db_val *c, int n)
{
    struct informe_cb *a = ud;
    if (n < 10) return err_set(BR_STORE, "a report's row without its figures");
    struct informe_fila f = {0};
    char id[sizeof(br_id)];
    if (a->por_dia) {
        f.dia = as_int(&c[0]);
    } else {
        bool fits = true;
        COPY(id, &c[0]);
        if (!fits) return too_long();
        f.id = id;
    }
    f.citas = as_int(&c[1]);
    f.confirmadas = as_int(&c[2]);
    f.completadas = as_int(&c[3]);
    f.no_presentados = as_int(&c[4]);
    f.canceladas = as_int(&c[5]);
    f.segundos_reservados = as_int(&c[6]);
    f.ingresos_cent = as_int(&c[7]);
    f.previstos_cent = as_int(&c[8]);
    f.estimadas = as_int(&c[9]);
    return a->fn(a->ud, &f);
}

/* The parameters of q's statement. OUT: p (NPARAMS_MAX); returns how many. */
static int informe_params(const struct informe_consulta *q, struct db_val *p)
{
    int k = 0;
    if (q->clave == INFORME_POR_DIA) {
        for (int i = 0; i < INFORME_TRAMOS_MAX; i++) {
            int t = i < q->ntramos ? i : q->ntramos - 1;
            if (i < INFORME_TRAMOS_MAX - 1)
                p[k++] = db_text(i < q->ntramos - 1 ? q->limites[i] : NUNCA);
            p[k++] = db_int(q->offsets[t]);
        }
    }
    p[k++] = db_text(q->ahora);
    p[k++] = db_text(q->ahora);
    p[k++] = db_text(q->desde);
    p[k++] = db_text(q->hasta);
    return k;
}

br_err store_informe(struct store *st, const struct informe_consulta *q, store_informe_fn fn,
                     void *ud)
{
    if (q->ntramos < 1 || q->ntramos > INFORME_TRAMOS_MAX)
        return err_set(BR_STORE, "a report's period of %d stretches", q->ntramos);
    if ((unsigned)q->clave >= ARRAY_LEN(sql_informe)) return err_set(BR_STORE, "no such report");
    struct db_val p[NPARAMS_MAX];
    int n = informe_params(q, p);
    struct informe_cb a = {fn, ud, q->clave == INFORME_POR_DIA};
    return run(st, sql_informe[q->clave], p, n, informe_row, &a, NULL);
}

br_err informes_plans(struct store *st, store_plan_fn fn, void *ud)
{
    static const struct {
        const char *name;
        enum informe_clave clave;
    } hot[] = {{"informe_barbero", INFORME_POR_BARBERO},
               {"informe_servicio", INFORME_POR_SERVICIO},
               {"informe_dia", INFORME_POR_DIA}};
    br_err rc = BR_OK;
    for (size_t i = 0; !rc && i < ARRAY_LEN(hot); i++) {
        struct informe_consulta q = {.clave = hot[i].clave,
                                     .desde = "2026-01-01T00:00:00.000Z",
                                     .hasta = "2027-01-01T00:00:00.000Z",
                                     .ahora = "2026-06-01T00:00:00.000Z",
                                     .ntramos = 1};
        struct db_val p[NPARAMS_MAX];
        int n = informe_params(&q, p);
        rc = plan_of(st, hot[i].name, plan_informe[hot[i].clave], p, n, fn, ud);
    }
    return rc;
}
