/*
 * test_metrics.c - GET /metrics: the Prometheus text exposition, parsed
 * strictly (format 0.0.4: HELP and TYPE before a family's samples, each
 * family in one block, metric and label names, label values' escapes,
 * float values, histograms cumulative with +Inf equal to _count), and
 * counting what happened: requests by route and status, photos stored,
 * the outbox. Loopback clients only, or the bearer token when one is set.
 */
#include "harness.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- a strict parser ------------------------------------------------------------------ */

struct sample {
    char name[128];
    char labels[512]; /* as written, between the braces */
    double value;
};

struct expo {
    struct sample *v;
    size_t n;
};

static bool name_char(int c, bool first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

/* Parses {a="x",b="y"} at *p into out (without the braces). */
static bool parse_labels(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    if (*s != '{') {
        out[0] = '\0';
        return true;
    }
    s++;
    size_t w = 0;
    while (*s != '}') {
        if (!name_char((unsigned char)*s, true)) return false;
        while (name_char((unsigned char)*s, false))
            s++;
        if (*s++ != '=' || *s++ != '"') return false;
        while (*s != '"') {
            if (!*s || *s == '\n') return false;
            if (*s == '\\') {
                s++;
                if (*s != '\\' && *s != '"' && *s != 'n') return false;
            }
            s++;
        }
        s++;
        if (*s == ',')
            s++;
        else if (*s != '}')
            return false;
    }
    w = (size_t)(s - *p) - 1;
    if (w >= cap) return false;
    memcpy(out, *p + 1, w);
    out[w] = '\0';
    *p = s + 1;
    return true;
}

static const char *base_of(const char *name, const char *type)
{
    static char b[128];
    snprintf(b, sizeof b, "%s", name);
    if (type && !strcmp(type, "histogram")) {
        const char *tails[] = {"_bucket", "_sum", "_count"};
        for (int i = 0; i < 3; i++) {
            size_t n = strlen(b), t = strlen(tails[i]);
            if (n > t && !strcmp(b + n - t, tails[i])) {
                b[n - t] = '\0';
                break;
            }
        }
    }
    return b;
}

/* Fails the test on anything the format does not allow. */
static void parse_expo(const char *text, struct expo *e)
{
    memset(e, 0, sizeof *e);
    char family[128] = "", type[32] = "";
    char seen[256][128];
    size_t nseen = 0;
    bool help = false;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) fail_msg("the exposition does not end with a newline");
        char l[1024];
        size_t len = (size_t)(end - line);
        if (len >= sizeof l) fail_msg("line too long");
        memcpy(l, line, len);
        l[len] = '\0';
        line = end + 1;
        if (!strncmp(l, "# HELP ", 7) || !strncmp(l, "# TYPE ", 7)) {
            char name[128];
            if (sscanf(l + 7, "%127s", name) != 1) fail_msg("bad comment: %s", l);
            if (!name_char((unsigned char)name[0], true)) fail_msg("bad name: %s", l);
            if (strcmp(name, family)) {
                for (size_t i = 0; i < nseen; i++)
                    if (!strcmp(seen[i], name)) fail_msg("family %s in two blocks", name);
                snprintf(family, sizeof family, "%s", name);
                snprintf(seen[nseen++], sizeof seen[0], "%s", name);
                type[0] = '\0';
                help = false;
            }
            if (l[2] == 'H') {
                if (help) fail_msg("two HELP lines for %s", name);
                help = true;
            } else {
                if (type[0]) fail_msg("two TYPE lines for %s", name);
                if (sscanf(l + 7 + strlen(name), " %31s", type) != 1) fail_msg("bad TYPE: %s", l);
                if (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "histogram") &&
                    strcmp(type, "summary") && strcmp(type, "untyped"))
                    fail_msg("bad type: %s", l);
            }
            continue;
        }
        if (l[0] == '#') continue;
        if (!l[0]) fail_msg("empty line");
        struct sample s = {0};
        const char *p = l;
        if (!name_char((unsigned char)*p, true)) fail_msg("bad sample: %s", l);
        size_t k = 0;
        while (name_char((unsigned char)*p, false) && k < sizeof s.name - 1)
            s.name[k++] = *p++;
        if (!type[0] || strcmp(base_of(s.name, type), family))
            fail_msg("sample %s outside its family's block (TYPE first)", s.name);
        if (!parse_labels(&p, s.labels, sizeof s.labels)) fail_msg("bad labels: %s", l);
        if (*p++ != ' ') fail_msg("no value: %s", l);
        char *vend;
        if (!strcmp(p, "+Inf"))
            s.value = INFINITY;
        else {
            s.value = strtod(p, &vend);
            if (vend == p || *vend) fail_msg("bad value: %s", l);
        }
        if (!strcmp(type, "counter") && s.value < 0) fail_msg("negative counter: %s", l);
        for (size_t i = 0; i < e->n; i++)
            if (!strcmp(e->v[i].name, s.name) && !strcmp(e->v[i].labels, s.labels))
                fail_msg("a series written twice: %s", l);
        e->v = realloc(e->v, (e->n + 1) * sizeof *e->v);
        e->v[e->n++] = s;
    }
}

/* The value of name{labels}, exactly; NAN when absent. */
static double value_of(const struct expo *e, const char *name, const char *labels)
{
    for (size_t i = 0; i < e->n; i++)
        if (!strcmp(e->v[i].name, name) && !strcmp(e->v[i].labels, labels)) return e->v[i].value;
    return NAN;
}

/* Every histogram's buckets rise with le, and +Inf is its _count. */
static void check_histograms(const struct expo *e)
{
    for (size_t i = 0; i < e->n; i++) {
        const char *n = e->v[i].name;
        size_t len = strlen(n);
        if (len < 7 || strcmp(n + len - 7, "_bucket")) continue;
        const char *le = strstr(e->v[i].labels, "le=\"");
        if (!le) fail_msg("a bucket without le: %s", n);
        if (strcmp(le, "le=\"+Inf\"")) continue;
        /* from the +Inf bucket back: the family's series */
        char series[512];
        size_t pre = (size_t)(le - e->v[i].labels);
        snprintf(series, sizeof series, "%.*s", (int)(pre ? pre - 1 : 0), e->v[i].labels);
        double last = -1;
        for (size_t j = 0; j < e->n; j++) {
            if (strcmp(e->v[j].name, n) || strncmp(e->v[j].labels, series, strlen(series)))
                continue;
            if (e->v[j].value < last) fail_msg("%s{%s}: buckets not cumulative", n, series);
            last = e->v[j].value;
        }
        char count[160];
        snprintf(count, sizeof count, "%.*s_count", (int)(len - 7), n);
        if (value_of(e, count, series) != e->v[i].value)
            fail_msg("%s{%s}: +Inf bucket is not _count", n, series);
    }
}

/* --- the tests ------------------------------------------------------------------------ */

static struct fixture F;

static int setup(void **state)
{
    (void)state;
    fixture_start(&F, NULL, "Barbero Metricas", "Corte Metricas", 30, 10.0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_stop(&F);
    return 0;
}

static void scrape(const struct srv *s, struct expo *e)
{
    struct resp r;
    http_get(s, "/metrics", NULL, &r);
    assert_int_equal(r.status, 200);
    char ct[128];
    assert_non_null(resp_header(&r, "Content-Type", ct, sizeof ct));
    assert_string_equal(ct, "text/plain; version=0.0.4; charset=utf-8");
    parse_expo(r.body, e);
    check_histograms(e);
    resp_free(&r);
}

static double nz(double v)
{
    return isnan(v) ? 0 : v;
}

static void the_exposition_is_strict_and_counts_what_happened(void **state)
{
    (void)state;
    struct expo a;
    scrape(&F.s, &a);
    const char *servicios = "method=\"GET\",route=\"/api/servicios\",status=\"200\"";
    const char *citas201 = "method=\"POST\",route=\"/api/citas\",status=\"201\"";
    const char *citas409 = "method=\"POST\",route=\"/api/citas\",status=\"409\"";
    double s0 = nz(value_of(&a, "barberia_http_requests_total", servicios));
    double b0 = nz(value_of(&a, "barberia_http_requests_total", citas201));
    double c0 = nz(value_of(&a, "barberia_http_requests_total", citas409));
    double u0 = nz(value_of(&a, "barberia_http_requests_total",
                            "method=\"\",route=\"unmatched\",status=\"404\""));
    double p0 = value_of(&a, "barberia_photos_stored_total", "");
    assert_false(isnan(p0));
    assert_false(isnan(value_of(&a, "barberia_db_pool_connections", "")));
    assert_false(isnan(value_of(&a, "barberia_outbox_messages", "status=\"pending\"")));
    assert_true(value_of(&a, "barberia_http_requests_in_flight", "") >= 1); /* this scrape */

    struct resp r;
    for (int i = 0; i < 5; i++) {
        http_get(&F.s, "/api/servicios", NULL, &r);
        resp_free(&r);
    }
    http_get(&F.s, "/no/such/path", NULL, &r);
    assert_int_equal(r.status, 404);
    resp_free(&r);
    struct user u;
    signup_user(&F.s, &u, "Medida");
    char *cita = book(&F.s, &u, F.barbero, F.servicio, "2032-07-01T10:00:00.000Z", NULL);
    json_t *b = json_pack("{s:s, s:s, s:s}", "barbero_id", F.barbero, "servicio_id", F.servicio,
                          "fecha_inicio", "2032-07-01T10:00:00.000Z");
    char *text = json_dumps(b, 0);
    json_decref(b);
    http_json(&F.s, "POST", "/api/citas", u.token, text, &r);
    assert_int_equal(r.status, 409);
    resp_free(&r);
    free(text);
    char img[64];
    memset(img, 7, sizeof img);
    json_decref(upload_photo(&F.s, &u, cita, "antes", img, sizeof img));
    /* two routes of one name (POST /api/citas/: a change, an attendance
     * mark) count in one series each */
    char path[128];
    snprintf(path, sizeof path, "/api/citas/%s/asistencia", cita);
    http_json(&F.s, "POST", path, u.token, "{\"estado\":\"completada\"}", &r);
    resp_free(&r);
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", cita);
    http_json(&F.s, "POST", path, u.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    free(cita);

    struct expo e;
    scrape(&F.s, &e);
    assert_true(value_of(&e, "barberia_http_requests_total", servicios) == s0 + 5);
    assert_true(value_of(&e, "barberia_http_requests_total", citas201) == b0 + 1);
    assert_true(value_of(&e, "barberia_http_requests_total", citas409) == c0 + 1);
    assert_true(value_of(&e, "barberia_http_requests_total",
                         "method=\"\",route=\"unmatched\",status=\"404\"") == u0 + 1);
    assert_true(value_of(&e, "barberia_photos_stored_total", "") == p0 + 1);
    /* the latency of the bookings is in their histogram */
    assert_true(value_of(&e, "barberia_http_request_duration_seconds_count",
                         "method=\"POST\",route=\"/api/citas\"") >= 2);
    assert_true(value_of(&e, "barberia_db_pool_acquires_total", "") > 0);
    free(a.v);
    free(e.v);
}

static void a_token_when_set_is_required(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_METRICS_TOKEN=scrape-secret-1", NULL};
    srv_start(&s, env, NULL);
    struct resp r;
    http_get(&s, "/metrics", NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    http_get(&s, "/metrics", "wrong-secret-1", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    http_get(&s, "/metrics", "scrape-secret-1", &r);
    assert_int_equal(r.status, 200);
    struct expo e;
    parse_expo(r.body, &e);
    free(e.v);
    resp_free(&r);
    /* the scheme's name in any case, as RFC 9110 has it */
    static const char *const lower[] = {"Authorization: bearer scrape-secret-1", NULL};
    struct req_opts o = {.headers = lower};
    http_req(&s, "GET", "/metrics", &o, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* the token is never logged */
    char *log = srv_log(&s);
    assert_null(strstr(log, "scrape-secret-1"));
    free(log);
    srv_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_exposition_is_strict_and_counts_what_happened),
        cmocka_unit_test(a_token_when_set_is_required),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
