/*
 * plans.c - the plans the database chose for the statements the API runs
 * per request over growing tables (store_query_plans, for
 * tests/unit/test_plans.c). Each aggregate names its own
 * (identity_hot, fotos_hot, avisos_hot, citas_plans, informes_plans).
 */
#include "store_int.h"
#include "../util/buf.h"

/* --- query plans ----------------------------------------------------------------- */

struct plan_acc {
    struct buf text;
};

static br_err plan_row(void *ud, const struct db_val *c, int n)
{
    struct plan_acc *a = ud;
    /* EXPLAIN QUERY PLAN: id, parent, notused, detail */
    if (n < 4 || c[3].type != DB_TEXT) return BR_OK;
    br_err rc = buf_append(&a->text, c[3].s, c[3].n);
    if (!rc) rc = buf_append(&a->text, "\n", 1);
    return rc;
}

br_err plan_of(struct store *st, const char *name, const char *sql, const struct db_val *p, int n,
               store_plan_fn fn, void *ud)
{
    struct plan_acc a;
    buf_init(&a.text, 64 * 1024);
    br_err rc = run(st, sql, p, n, plan_row, &a, NULL);
    if (!rc) rc = fn(ud, name, buf_cstr(&a.text));
    buf_free(&a.text);
    return rc;
}

br_err plans_of(struct store *st, const struct hot_stmt *hot, store_plan_fn fn, void *ud)
{
    struct db_val p[] = {db_text("x"), db_text("y"), db_text("z"), db_text("w"),
                         db_text("v"), db_text("u"), db_int(10)};
    for (size_t i = 0; hot[i].name; i++) {
        br_err rc = plan_of(st, hot[i].name, hot[i].sql, p, hot[i].nparams, fn, ud);
        if (rc) return rc;
    }
    return BR_OK;
}

br_err store_query_plans(struct store *st, store_plan_fn fn, void *ud)
{
    /* the statements whose cost must not grow with the tables: every one
     * the API runs per request over data that grows */
    br_err rc = citas_plans(st, fn, ud);
    if (!rc) rc = plans_of(st, fotos_hot, fn, ud);
    if (!rc) rc = plans_of(st, identity_hot, fn, ud);
    if (!rc) rc = informes_plans(st, fn, ud);
    if (!rc) rc = plans_of(st, avisos_hot, fn, ud);
    return rc;
}
