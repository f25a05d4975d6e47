/*
 * informes.c - GET /api/admin/informes: the owner's reports
 * (core/informes.h) as JSON, or with formato=csv as a file a spreadsheet
 * opens as it is: UTF-8 with a byte order mark, ';' between cells, decimal
 * commas, CRLF line ends (what Excel in Spanish expects), cells quoted
 * where they must be, and names that a spreadsheet would take for a
 * formula ("=", "+", "-", "@", a tab or a carriage return first) kept as
 * text behind a "'".
 */
#include "api.h"
#include "../core/informes.h"
#include "../util/buf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSV_MAX (4u * 1024 * 1024) /* a report has at most a few hundred rows */

static int64_t minutos(const struct informe_grupo *g)
{
    return (g->segundos_reservados + 30) / 60;
}

/* The occupancy in ten-thousandths (booked minutes over open ones, rounded
 * half up); false when nothing was open. */
static bool ocupacion(const struct informe_grupo *g, int64_t *out)
{
    int64_t a = g->minutos_abiertos;
    if (a <= 0) return false;
    *out = (minutos(g) * 20000 + a) / (2 * a);
    return true;
}

/* --- JSON --------------------------------------------------------------------------- */

static void w_grupo(struct jw *w, const struct informe_grupo *g, bool con_clave)
{
    jw_obj_open(w);
    if (con_clave) {
        jw_kstr(w, "clave", g->clave);
        jw_kstr(w, "nombre", g->nombre);
    }
    jw_kint(w, "citas", g->citas);
    jw_kint(w, "confirmadas", g->confirmadas);
    jw_kint(w, "completadas", g->completadas);
    jw_kint(w, "no_presentados", g->no_presentados);
    jw_kint(w, "canceladas", g->canceladas);
    jw_kreal(w, "ingresos", (double)g->ingresos_cent / 100.0);
    jw_kreal(w, "ingresos_previstos", (double)g->previstos_cent / 100.0);
    jw_key(w, "precio_estimado");
    jw_bool(w, g->estimadas > 0);
    jw_kint(w, "citas_precio_estimado", g->estimadas);
    jw_kint(w, "minutos_reservados", minutos(g));
    jw_kint(w, "minutos_abiertos", g->minutos_abiertos);
    int64_t o;
    jw_key(w, "ocupacion");
    if (ocupacion(g, &o))
        jw_real(w, (double)o / 10000.0);
    else
        jw_null(w);
    jw_obj_close(w);
}

static void reply_json(struct http_req *r, const struct informe *inf)
{
    struct jw w;
    api_begin(&w);
    jw_kstr(&w, "desde", inf->desde);
    jw_kstr(&w, "hasta", inf->hasta);
    jw_kstr(&w, "agrupar", informe_agrupar_nombre(inf->agrupar));
    jw_kstr(&w, "zona", api_app(r)->cfg->tz);
    jw_key(&w, "grupos");
    jw_arr_open(&w);
    for (int i = 0; i < inf->ngrupos; i++)
        w_grupo(&w, &inf->grupos[i], true);
    jw_arr_close(&w);
    jw_key(&w, "total");
    w_grupo(&w, &inf->total, false);
    api_reply(r, 200, &w);
}

/* --- CSV ---------------------------------------------------------------------------- */

/* The length of the space that s starts with: an ASCII one, or one of
 * Unicode's (no-break, en to hair, narrow no-break, medium mathematical,
 * ideographic); 0 when it starts with none. */
static size_t space_len(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] == ' ') return 1;
    if (u[0] == 0xc2 && u[1] == 0xa0) return 2;
    if (u[0] == 0xe2 && u[1] == 0x80 && ((u[2] >= 0x80 && u[2] <= 0x8a) || u[2] == 0xaf)) return 3;
    if (u[0] == 0xe2 && u[1] == 0x81 && u[2] == 0x9f) return 3;
    if (u[0] == 0xe3 && u[1] == 0x80 && u[2] == 0x80) return 3;
    return 0;
}

/* A text cell: kept as text when a spreadsheet would read it as a formula,
 * quoted when it holds the separator, a quote, a line end or edge spaces. */
static br_err csv_text(struct buf *b, const char *s)
{
    /* after any spaces (Unicode's too): a spreadsheet that trims them on
     * import would read the rest as a formula */
    const char *f = s;
    for (size_t n; (n = space_len(f)) > 0;)
        f += n;
    bool formula =
        f[0] == '=' || f[0] == '+' || f[0] == '-' || f[0] == '@' || f[0] == '\t' || f[0] == '\r';
    size_t n = strlen(s);
    bool quote = strpbrk(s, ";\"\r\n") != NULL || (n && (s[0] == ' ' || s[n - 1] == ' '));
    br_err rc = BR_OK;
    if (quote) rc = buf_puts(b, "\"");
    if (!rc && formula) rc = buf_puts(b, "'");
    for (const char *p = s; *p && !rc; p++)
        rc = *p == '"' ? buf_puts(b, "\"\"") : buf_append(b, p, 1);
    if (!rc && quote) rc = buf_puts(b, "\"");
    return rc;
}

/* cents as "1234,56" */
static br_err csv_money(struct buf *b, int64_t cent)
{
    return buf_printf(b, ";%" PRId64 ",%02" PRId64, cent / 100, cent % 100);
}

static br_err csv_row(struct buf *b, const char *label, const struct informe_grupo *g)
{
    br_err rc = csv_text(b, label);
    if (!rc)
        rc = buf_printf(b, ";%" PRId64 ";%" PRId64 ";%" PRId64 ";%" PRId64 ";%" PRId64, g->citas,
                        g->confirmadas, g->completadas, g->no_presentados, g->canceladas);
    if (!rc) rc = csv_money(b, g->ingresos_cent);
    if (!rc) rc = csv_money(b, g->previstos_cent);
    if (!rc)
        rc = buf_printf(b, ";%" PRId64 ";%" PRId64 ";%" PRId64 ";", g->estimadas, minutos(g),
                        g->minutos_abiertos);
    int64_t a = g->minutos_abiertos;
    if (!rc && a > 0) {
        int64_t tenths = (minutos(g) * 2000 + a) / (2 * a); /* a percentage, one decimal */
        rc = buf_printf(b, "%" PRId64 ",%" PRId64, tenths / 10, tenths % 10);
    }
    if (!rc) rc = buf_puts(b, "\r\n");
    return rc;
}

static const char *const csv_group_titles[] = {"Barbero", "Servicio", "Día", "Mes"};

static void reply_csv(struct http_req *r, const struct informe *inf)
{
    struct buf b;
    buf_init(&b, CSV_MAX);
    br_err rc = buf_puts(&b, "\xEF\xBB\xBF");
    if (!rc) rc = buf_puts(&b, csv_group_titles[inf->agrupar]);
    if (!rc)
        rc = buf_puts(&b, ";Citas;Confirmadas;Completadas;No presentados;Canceladas;Ingresos;"
                          "Ingresos previstos;Citas con precio estimado;Minutos reservados;"
                          "Minutos abiertos;Ocupación (%)\r\n");
    for (int i = 0; i < inf->ngrupos && !rc; i++)
        rc = csv_row(&b, inf->grupos[i].nombre, &inf->grupos[i]);
    if (!rc) rc = csv_row(&b, "Total", &inf->total);
    if (rc) {
        buf_free(&b);
        api_fail(r, rc, API_ERROR_INTERNAL);
        return;
    }
    char disp[128];
    snprintf(disp, sizeof disp, "attachment; filename=\"informe-%s-%s-%s.csv\"",
             informe_agrupar_nombre(inf->agrupar), inf->desde, inf->hasta);
    http_add_header(r, "Content-Disposition", disp);
    size_t len;
    char *text = buf_steal(&b, &len);
    http_reply_text(r, 200, text, len, "text/csv; charset=utf-8");
}

void api_admin_informes_get(struct http_req *r)
{
    struct informe_pedido p = {
        .desde = http_req_query(r, "desde"),
        .hasta = http_req_query(r, "hasta"),
        .agrupar = api_query_opt(r, "agrupar"),
        .formato = api_query_opt(r, "formato"),
        .now_ms = clock_now_ms(),
    };
    bool csv = p.formato && !strcmp(p.formato, "csv");
    struct informe inf;
    br_err rc = informe_calcular(api_app(r), &p, &inf);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    if (csv)
        reply_csv(r, &inf);
    else
        reply_json(r, &inf);
    informe_clear(&inf);
}
