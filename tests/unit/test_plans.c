/*
 * test_plans.c - the query plans SQLite chooses for every statement the API
 * runs over tables that grow (appointments, photos, users). Each must find
 * its rows through an index and read them in the answer's order: no scan of
 * a whole table (but for the listings of everything, which walk an index
 * in order) and no sort. A change that loses an index fails here, long
 * before a shop with a million appointments notices.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "store/store.h"

static int rm_entry(const char *p, const struct stat *sb, int f, struct FTW *w)
{
    (void)sb, (void)f, (void)w;
    return remove(p);
}

struct expect {
    const char *name;
    const char *must;  /* a line that must be in the plan */
    bool full_listing; /* walks a whole index in order (a listing of everything) */
    const char *also;  /* another line that must be in it (NULL: none) */
    bool groups;       /* a report: sums its period's rows per group, which sorts them (only
                        * them: never the table, never the history around the period) */
};

/* The owner's reports read their period from the covering index, a price
 * an appointment lacks by key. */
#define INFORME_RANGE                                                                              \
    "SEARCH c USING COVERING INDEX citas_informe (fecha_inicio>? AND fecha_inicio<?)"

/* What meets a slot of a barber (store_int.h, MEETS_WINDOW): the appointments
 * that start inside it, and the last one that starts before it (read
 * backwards from the slot's start, one row: the subquery `prev`, whose one
 * row is then "scanned") - never the calendar past the slot. */
#define MEETS_INSIDE                                                                               \
    "SEARCH citas USING COVERING INDEX citas_barbero_inicio (barbero_id=? AND fecha_inicio>? AND " \
    "fecha_inicio<?)"
#define MEETS_BEFORE                                                                               \
    "SEARCH citas USING COVERING INDEX citas_barbero_inicio (barbero_id=? AND fecha_inicio<?)"

/* the listing has one statement per set of filters (client, estado, a
 * lower bound from desde or a cursor, an upper bound from hasta) */
static const struct expect expected[] = {
    {"overlap", MEETS_INSIDE, false, MEETS_BEFORE},
    /* the free slots of a day: one barber's appointments from the same index */
    {"busy", MEETS_INSIDE, false, MEETS_BEFORE},
    /* the same with the clean-up margins: a bounded stretch of the same index,
     * each appointment's service by its key */
    {"busy_margen",
     "SEARCH c USING INDEX citas_barbero_inicio (barbero_id=? AND fecha_inicio>? AND "
     "fecha_inicio<?)",
     false},
    {"fotos_count",
     "SEARCH fotos_cita USING COVERING INDEX fotos_cita_cita_tipo (cita_id=? AND tipo=?)", false},
    {"fotos_each", "SEARCH fotos_cita USING INDEX fotos_cita_cita_creado (cita_id=?)", false},
    /* one uploader's photo bytes, from the index alone */
    {"fotos_quota", "SEARCH fotos_cita USING COVERING INDEX fotos_cita_cliente (cliente_id=?)",
     false},
    /* one client's upcoming appointments */
    {"citas_upcoming",
     "SEARCH citas USING INDEX citas_cliente_inicio (cliente_id=? AND fecha_inicio>?)", false},
    {"usuarios", "SCAN p USING INDEX perfiles_created", true},
    {"usuarios_after", "SEARCH p USING INDEX perfiles_created ((created_at,id)<(?,?))", false},
    {"citas", "SCAN c USING INDEX citas_inicio", true},
    {"citas_cliente", "SEARCH c USING INDEX citas_cliente_inicio (cliente_id=?)", false},
    {"citas_estado", "SEARCH c USING INDEX citas_estado_inicio (estado=?)", false},
    {"citas_cliente_estado",
     "SEARCH c USING INDEX citas_cliente_estado_inicio (cliente_id=? AND estado=?)", false},
    {"citas_after", "SEARCH c USING INDEX citas_inicio ((fecha_inicio,id)>(?,?))", false},
    {"citas_cliente_after",
     "SEARCH c USING INDEX citas_cliente_inicio (cliente_id=? AND (fecha_inicio,id)>(?,?))", false},
    {"citas_estado_after",
     "SEARCH c USING INDEX citas_estado_inicio (estado=? AND (fecha_inicio,id)>(?,?))", false},
    {"citas_cliente_estado_after",
     "SEARCH c USING INDEX citas_cliente_estado_inicio (cliente_id=? AND estado=? AND "
     "(fecha_inicio,id)>(?,?))",
     false},
    {"citas_hasta", "SEARCH c USING INDEX citas_inicio (fecha_inicio<?)", false},
    {"citas_cliente_hasta",
     "SEARCH c USING INDEX citas_cliente_inicio (cliente_id=? AND fecha_inicio<?)", false},
    {"citas_estado_hasta", "SEARCH c USING INDEX citas_estado_inicio (estado=? AND fecha_inicio<?)",
     false},
    {"citas_cliente_estado_hasta",
     "SEARCH c USING INDEX citas_cliente_estado_inicio (cliente_id=? AND estado=? AND "
     "fecha_inicio<?)",
     false},
    /* a barber's calendar feed, the appointments a day off or a closure meets */
    {"feed",
     "SEARCH c USING INDEX citas_barbero_inicio (barbero_id=? AND fecha_inicio>? AND "
     "fecha_inicio<?)",
     false},
    {"afectadas",
     "SEARCH c USING INDEX citas_barbero_inicio (barbero_id=? AND fecha_inicio>? AND "
     "fecha_inicio<?)",
     false},
    {"afectadas_tienda",
     "SEARCH c USING INDEX citas_estado_inicio (estado=? AND fecha_inicio>? AND fecha_inicio<?)",
     false},
    {"citas_after_hasta",
     "SEARCH c USING INDEX citas_inicio ((fecha_inicio,id)>(?,?) AND fecha_inicio<?)", false},
    {"citas_cliente_after_hasta",
     "SEARCH c USING INDEX citas_cliente_inicio (cliente_id=? AND (fecha_inicio,id)>(?,?) AND "
     "fecha_inicio<?)",
     false},
    {"citas_estado_after_hasta",
     "SEARCH c USING INDEX citas_estado_inicio (estado=? AND (fecha_inicio,id)>(?,?) AND "
     "fecha_inicio<?)",
     false},
    {"citas_cliente_estado_after_hasta",
     "SEARCH c USING INDEX citas_cliente_estado_inicio (cliente_id=? AND estado=? AND "
     "(fecha_inicio,id)>(?,?) AND fecha_inicio<?)",
     false},
    {"informe_barbero", INFORME_RANGE, false, NULL, true},
    {"informe_servicio", INFORME_RANGE, false, NULL, true},
    {"informe_dia", INFORME_RANGE, false, NULL, true},
};

static int seen, leans;

static br_err check_plan(void *ud, const char *name, const char *plan)
{
    (void)ud;
    /* a listing read with the names held ("+names": the catalog's
     * version in place of two joins) must read its rows as the joined one */
    const char *lean = strstr(name, "+names");
    size_t nlen = lean && !lean[6] ? (size_t)(lean - name) : strlen(name);
    const struct expect *e = NULL;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        if (strlen(expected[i].name) == nlen && !strncmp(expected[i].name, name, nlen))
            e = &expected[i];
    if (!e) fail_msg("a plan nobody expects: %s", name);
    seen++;
    if (lean) {
        leans++;
        if (!strstr(plan, "catalogo_version USING INTEGER PRIMARY KEY"))
            fail_msg("%s: expected the catalog's version read by key:\n%s", name, plan);
        if (strstr(plan, "barberos") || strstr(plan, "servicios"))
            fail_msg("%s joins what the names give:\n%s", name, plan);
    }
    const char *sorts = strstr(plan, "TEMP B-TREE");
    if (sorts && !(e->groups && !strncmp(sorts, "TEMP B-TREE FOR GROUP BY\n", 25) &&
                   !strstr(sorts + 1, "TEMP B-TREE")))
        fail_msg("%s sorts its rows:\n%s", name, plan);
    if (!strstr(plan, e->must))
        fail_msg("%s: expected \"%s\" in its plan:\n%s", name, e->must, plan);
    if (e->also && !strstr(plan, e->also))
        fail_msg("%s: expected \"%s\" in its plan:\n%s", name, e->also, plan);
    /* every other step finds its rows by key */
    for (const char *line = plan; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        bool allowed = (e->full_listing && !strncmp(line, e->must, strlen(e->must))) ||
                       (e->also && len == 9 && !strncmp(line, "SCAN prev", 9));
        if (!strncmp(line, "SCAN", 4) && !allowed)
            fail_msg("%s scans: %.*s\nwhole plan:\n%s", name, (int)len, line, plan);
        line += len + (nl ? 1 : 0);
    }
    return BR_OK;
}

static void every_hot_statement_uses_its_index_and_never_sorts(void **state)
{
    (void)state;
    char dir[] = "/tmp/barberia-plans-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct config cfg = {.data_dir = dir};
    struct store *st;
    assert_int_equal(store_open(&cfg, 1, &st), BR_OK);
    assert_int_equal(store_migrate(st), BR_OK);
    seen = leans = 0;
    assert_int_equal(store_query_plans(st, check_plan, NULL), BR_OK);
    assert_int_equal(leans, 16); /* every variant of the listing, both ways */
    assert_int_equal(seen, (int)(sizeof expected / sizeof expected[0]) + leans);
    store_close(st);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_hot_statement_uses_its_index_and_never_sorts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
