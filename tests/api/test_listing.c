/*
 * test_listing.c - long listings: GET /api/citas for admin and barbero and
 * GET /api/admin/usuarios are streamed (chunked) page by page, complete and
 * in order, with the server's memory bounded whatever the row count; a
 * short one is a plain answer with its length. The optional parameters
 * desde, hasta, limit and cursor (docs/api.md) walk every row exactly once,
 * a wrong one is 400, and without them the answer is the specification's.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fixture F;
static struct user ADMIN, CLIENT, OTHER;

enum { ROWS = 3000 }; /* more than ten pages */

/* ROWS appointments of CLIENT, one every 30 minutes from 2030-01-01, every
 * seventh cancelled; two of them share a start (the order falls back on
 * the id). */
static char *BARBERO2;

static void seed_citas(const struct srv *s, const char *cliente, int rows, int first)
{
    char sql[2048];
    if (test_pg()) {
        /* the same rows; each pair that shares a start goes to two barbers,
         * as PostgreSQL's exclusion constraint allows no other way */
        snprintf(sql, sizeof sql,
                 "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, "
                 "fecha_fin, estado, created_at) SELECT ('00000000-0000-4000-8000-' || "
                 "lpad(k::text, 12, '0'))::uuid, '%s', (CASE WHEN k %% 2 = 1 THEN '%s' ELSE '%s' "
                 "END)::uuid, '%s', timestamptz '2030-01-01 00:00Z' + (k / 2 * 2 * 30) * "
                 "interval '1 minute', timestamptz '2030-01-01 00:00Z' + (k / 2 * 2 * 30 + 30) * "
                 "interval '1 minute', CASE WHEN k %% 7 = 0 THEN 'cancelada' ELSE 'confirmada' "
                 "END, '2024-01-01T00:00:00.000Z' FROM generate_series(%d, %d) k;",
                 cliente, BARBERO2, F.barbero, F.servicio, first, first + rows - 1);
        assert_int_equal(db_exec(s, sql, NULL), 0);
        return;
    }
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE n(k) AS (SELECT %d UNION ALL SELECT k + 1 FROM n WHERE k < %d) "
             "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, fecha_fin, "
             "estado, created_at) SELECT printf('00000000-0000-4000-8000-%%012d', k), '%s', '%s', "
             "'%s', strftime('%%Y-%%m-%%dT%%H:%%M:%%S.000Z', '2030-01-01', '+' || (k / 2 * 2 * 30) "
             "|| ' minutes'), strftime('%%Y-%%m-%%dT%%H:%%M:%%S.000Z', '2030-01-01', '+' || "
             "(k / 2 * 2 * 30 + 30) || ' minutes'), CASE WHEN k %% 7 = 0 THEN 'cancelada' ELSE "
             "'confirmada' END, '2024-01-01T00:00:00.000Z' FROM n;",
             first, first + rows - 1, cliente, F.barbero, F.servicio);
    assert_int_equal(db_exec(s, sql, NULL), 0);
}

static int setup(void **state)
{
    (void)state;
    fixture_start(&F, NULL, "Barbero Largo", "Corte", 30, 10.0);
    make_user(&F.s, &ADMIN, "Admin Listas", "admin");
    signup_user(&F.s, &CLIENT, "Cliente Listas");
    BARBERO2 = make_barbero(&F.s, "Barbero Paralelo");
    signup_user(&F.s, &OTHER, "Cliente Corto");
    seed_citas(&F.s, CLIENT.id, ROWS, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_stop(&F);
    return 0;
}

static bool chunked(const struct resp *r)
{
    char te[64];
    return resp_header(r, "Transfer-Encoding", te, sizeof te) && strstr(te, "chunked");
}

static json_t *get_list(const char *path, const char *token, const char *key, struct resp *r)
{
    http_get(&F.s, path, token, r);
    if (r->status != 200) fail_msg("GET %s: %ld %s", path, r->status, r->body);
    assert_non_null(r->json);
    json_t *a = json_object_get(r->json, key);
    assert_true(json_is_array(a));
    return a;
}

static void a_long_listing_is_streamed_whole_and_in_order(void **state)
{
    (void)state;
    struct resp all, own;
    json_t *a = get_list("/api/citas", ADMIN.token, "citas", &all);
    assert_true(chunked(&all));
    expect_keys(all.json, "citas", NULL);
    assert_int_equal(json_array_size(a), ROWS);
    /* by start, then id; each row whole */
    for (size_t i = 1; i < json_array_size(a); i++) {
        const json_t *p = json_array_get(a, i - 1), *c = json_array_get(a, i);
        int cmp = strcmp(jstr(p, "fecha_inicio"), jstr(c, "fecha_inicio"));
        if (cmp > 0 || (cmp == 0 && strcmp(jstr(p, "id"), jstr(c, "id")) >= 0))
            fail_msg("rows %zu and %zu out of order", i - 1, i);
    }
    const json_t *row = json_array_get(a, 0);
    expect_keys(row, "id", "cliente_id", "barbero_id", "servicio_id", "fecha_inicio", "fecha_fin",
                "estado", "notas", "google_event_id", "perfil", "barbero", "servicio", NULL);
    assert_string_equal(jstr(json_object_get(row, "perfil"), "nombre"), "Cliente Listas");
    /* the client's own listing holds the same rows, byte for byte */
    json_t *mine = get_list("/api/citas", CLIENT.token, "citas", &own);
    assert_true(json_equal(a, mine));
    resp_free(&own);
    resp_free(&all);

    /* HEAD of a streamed listing: GET's status and headers, no body, and the
     * connection serves the next request */
    struct req_opts o = {.token = ADMIN.token};
    struct resp h;
    http_req(&F.s, "HEAD", "/api/citas", &o, &h);
    assert_int_equal(h.status, 200);
    assert_int_equal(h.len, 0);
    assert_true(chunked(&h));
    resp_free(&h);
    a = get_list("/api/citas", ADMIN.token, "citas", &all);
    assert_int_equal(json_array_size(a), ROWS);
    resp_free(&all);

    /* estado filters the streamed listing too */
    struct resp canc;
    a = get_list("/api/citas?estado=cancelada", ADMIN.token, "citas", &canc);
    assert_int_equal((long)json_array_size(a), db_count(&F.s, "SELECT count(*) FROM citas WHERE "
                                                              "estado = 'cancelada'"));
    resp_free(&canc);
}

static void a_short_listing_is_a_plain_answer(void **state)
{
    (void)state;
    char *id = book(&F.s, &OTHER, F.barbero, F.servicio, "2031-06-01T10:00:00.000Z", NULL);
    struct resp r;
    json_t *a = get_list("/api/citas", OTHER.token, "citas", &r);
    assert_false(chunked(&r));
    char len[32];
    assert_non_null(resp_header(&r, "Content-Length", len, sizeof len));
    assert_int_equal(strtol(len, NULL, 10), (long)r.len);
    assert_int_equal(json_array_size(a), 1);
    assert_string_equal(jstr(json_array_get(a, 0), "id"), id);
    resp_free(&r);
    /* an empty one too */
    a = get_list("/api/citas?estado=nada", OTHER.token, "citas", &r);
    assert_int_equal(json_array_size(a), 0);
    assert_string_equal(r.body, "{\"citas\":[]}");
    resp_free(&r);
    free(id);
}

/* Walks the listing `query` with limit n and the cursors it gives; returns
 * the ids in order (a JSON array the caller frees). */
static json_t *walk(const char *query, int n, int *pages)
{
    json_t *ids = json_array();
    char cursor[128] = "";
    *pages = 0;
    for (;;) {
        char path[512];
        snprintf(path, sizeof path, "/api/citas?%slimit=%d%s%s", query, n,
                 *cursor ? "&cursor=" : "", cursor);
        struct resp r;
        json_t *a = get_list(path, ADMIN.token, "citas", &r);
        expect_keys(r.json, "citas", "siguiente", NULL);
        assert_true(json_array_size(a) <= (size_t)n);
        for (size_t i = 0; i < json_array_size(a); i++)
            json_array_append_new(ids, json_string(jstr(json_array_get(a, i), "id")));
        (*pages)++;
        const json_t *next = json_object_get(r.json, "siguiente");
        if (json_is_null(next)) {
            resp_free(&r);
            return ids;
        }
        assert_int_equal(json_array_size(a), n);
        const json_t *last = json_array_get(a, json_array_size(a) - 1);
        char want[128];
        snprintf(want, sizeof want, "%s_%s", jstr(last, "fecha_inicio"), jstr(last, "id"));
        assert_string_equal(json_string_value(next), want);
        snprintf(cursor, sizeof cursor, "%s", want);
        resp_free(&r);
        if (*pages > ROWS) fail_msg("the cursor does not move");
    }
}

static json_t *ids_of(const char *path)
{
    struct resp r;
    json_t *a = get_list(path, ADMIN.token, "citas", &r);
    json_t *ids = json_array();
    for (size_t i = 0; i < json_array_size(a); i++)
        json_array_append_new(ids, json_string(jstr(json_array_get(a, i), "id")));
    resp_free(&r);
    return ids;
}

static void limit_and_cursor_walk_every_row_once(void **state)
{
    (void)state;
    json_t *every = ids_of("/api/citas");
    int pages;
    /* page sizes that do and do not divide the count, one past the page */
    const int sizes[] = {1000, 257, 7};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        json_t *walked = walk("", sizes[k], &pages);
        if (!json_equal(walked, every))
            fail_msg("limit %d: %zu ids, not the %zu of the listing", sizes[k],
                     json_array_size(walked), json_array_size(every));
        json_decref(walked);
    }
    /* with a filter, the walk gives what the filtered listing gives */
    json_t *canc = ids_of("/api/citas?estado=cancelada");
    json_t *walked = walk("estado=cancelada&", 50, &pages);
    assert_true(json_equal(walked, canc));
    json_decref(walked);
    json_decref(canc);
    /* a limit past the end: one page, siguiente null */
    walked = walk("desde=2030-01-01T10:00:00Z&hasta=2030-01-01T12:00:00Z&", 1000, &pages);
    assert_int_equal(pages, 1);
    assert_int_equal(json_array_size(walked), 4);
    json_decref(walked);
    json_decref(every);
}

static void desde_and_hasta_bound_fecha_inicio(void **state)
{
    (void)state;
    /* desde inclusive, hasta exclusive, any offset; in the store's order */
    json_t *ids = ids_of("/api/citas?desde=2030-01-02T00:00:00Z&hasta=2030-01-03T00:00:00Z");
    long want = db_count(&F.s, "SELECT count(*) FROM citas WHERE fecha_inicio >= "
                               "'2030-01-02T00:00:00.000Z' AND fecha_inicio < "
                               "'2030-01-03T00:00:00.000Z'");
    assert_true(want > 0);
    assert_int_equal((long)json_array_size(ids), want);
    char *first = db_query(&F.s, "SELECT id FROM citas WHERE fecha_inicio >= "
                                 "'2030-01-02T00:00:00.000Z' ORDER BY fecha_inicio, id LIMIT 1");
    assert_string_equal(json_string_value(json_array_get(ids, 0)), first);
    free(first);
    json_decref(ids);
    /* the same instant in another offset ('+' sent as %2B) */
    json_t *same = ids_of("/api/citas?desde=2030-01-02T01:00:00%2B01:00&hasta=2030-01-02T23:00:00-"
                          "01:00");
    assert_int_equal((long)json_array_size(same), want);
    json_decref(same);
    /* only desde: from there to the end */
    json_t *tail = ids_of("/api/citas?desde=2030-01-31T00:00:00.000Z");
    assert_int_equal((long)json_array_size(tail),
                     db_count(&F.s, "SELECT count(*) FROM citas WHERE fecha_inicio >= "
                                    "'2030-01-31T00:00:00.000Z'"));
    json_decref(tail);
    /* a client's bounds stay within their own rows */
    struct resp r;
    json_t *a = get_list("/api/citas?hasta=2031-12-31T00:00:00Z&desde=2031-01-01T00:00:00Z",
                         OTHER.token, "citas", &r);
    for (size_t i = 0; i < json_array_size(a); i++)
        assert_string_equal(jstr(json_array_get(a, i), "cliente_id"), OTHER.id);
    resp_free(&r);
    /* empty values are no bound */
    json_t *every = ids_of("/api/citas");
    json_t *unbound = ids_of("/api/citas?desde=&hasta=&limit=&cursor=");
    assert_true(json_equal(every, unbound));
    json_decref(every);
    json_decref(unbound);
}

static void cliente_id_narrows_a_barbers_or_admins_listing_only(void **state)
{
    (void)state;
    char *id = book(&F.s, &OTHER, F.barbero, F.servicio, "2031-07-01T10:00:00.000Z", NULL);
    char path[256];
    /* the admin: OTHER's appointments only, CLIENT's 3000 left out */
    snprintf(path, sizeof path, "/api/citas?cliente_id=%s", OTHER.id);
    struct resp r;
    json_t *a = get_list(path, ADMIN.token, "citas", &r);
    size_t i;
    json_t *c;
    assert_true(json_array_size(a) >= 1);
    json_array_foreach(a, i, c) assert_string_equal(jstr(c, "cliente_id"), OTHER.id);
    resp_free(&r);
    /* with the other bounds: CLIENT's first day */
    snprintf(path, sizeof path,
             "/api/citas?cliente_id=%s&desde=2030-01-01&hasta=2030-01-02&limit=1000", CLIENT.id);
    a = get_list(path, ADMIN.token, "citas", &r);
    assert_int_equal(json_array_size(a), 48);
    resp_free(&r);
    /* not a UUID: nothing */
    a = get_list("/api/citas?cliente_id=nadie", ADMIN.token, "citas", &r);
    assert_int_equal(json_array_size(a), 0);
    resp_free(&r);
    /* a client's listing stays her own */
    snprintf(path, sizeof path, "/api/citas?cliente_id=%s", CLIENT.id);
    a = get_list(path, OTHER.token, "citas", &r);
    assert_true(json_array_size(a) >= 1);
    json_array_foreach(a, i, c) assert_string_equal(jstr(c, "cliente_id"), OTHER.id);
    resp_free(&r);
    free(id);
}

static void a_wrong_parameter_is_400_and_auth_comes_first(void **state)
{
    (void)state;
    static const struct {
        const char *query, *msg;
    } bad[] = {
        {"limit=0", "Parámetro inválido: limit"},
        {"limit=1001", "Parámetro inválido: limit"},
        {"limit=-5", "Parámetro inválido: limit"},
        {"limit=10abc", "Parámetro inválido: limit"},
        {"limit=99999999999999999999999", "Parámetro inválido: limit"},
        {"desde=ayer", "Parámetro inválido: desde"},
        {"desde=2030-13-01T00:00:00Z", "Parámetro inválido: desde"},
        {"hasta=2030-02-30", "Parámetro inválido: hasta"},
        {"cursor=abc", "Parámetro inválido: cursor"},
        {"cursor=2030-01-01T00:00:00.000Z_not-a-uuid-at-all-xxxxxxxxxxxxxxxxxx",
         "Parámetro inválido: cursor"},
        {"cursor=2030-01-01T00:00:00Z_00000000-0000-4000-8000-000000000001",
         "Parámetro inválido: cursor"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "/api/citas?%s", bad[i].query);
        struct resp r;
        http_get(&F.s, path, CLIENT.token, &r);
        if (r.status != 400) fail_msg("%s: %ld %s", path, r.status, r.body);
        expect_error(&r, 400, bad[i].msg);
        resp_free(&r);
        /* without a session the specification's 401 comes first */
        http_get(&F.s, path, NULL, &r);
        assert_int_equal(r.status, 401);
        resp_free(&r);
    }
}

/* The user listing: every profile, newest first, streamed. */
static void the_user_listing_is_streamed_whole_and_newest_first(void **state)
{
    (void)state;
    enum { USERS = 1500 };
    char sql[1536];
    if (test_pg())
        snprintf(sql, sizeof sql,
                 "INSERT INTO auth_users (id, email, password_hash, created_at) SELECT "
                 "('00000000-0000-4000-9000-' || lpad(k::text, 12, '0'))::uuid, 'u' || k || "
                 "'@lista.example', 'x', timestamptz '2020-01-01 00:00Z' + (k / 3) * interval "
                 "'1 hour' FROM generate_series(1, %d) k; "
                 "INSERT INTO perfiles (id, rol, nombre, created_at) SELECT id, 'cliente', "
                 "'Masivo ' || email, created_at FROM auth_users WHERE email LIKE "
                 "'%%@lista.example';",
                 USERS);
    else
        snprintf(
            sql, sizeof sql,
            "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < %d) "
            "INSERT INTO auth_users (id, email, password_hash, created_at) SELECT "
            "printf('00000000-0000-4000-9000-%%012d', k), printf('u%%d@lista.example', k), 'x', "
            "strftime('%%Y-%%m-%%dT%%H:%%M:%%S.000Z', '2020-01-01', '+' || (k / 3) || ' hours') "
            "FROM n; "
            "INSERT INTO perfiles (id, rol, nombre, created_at) SELECT id, 'cliente', "
            "'Masivo ' || email, created_at FROM auth_users WHERE email LIKE '%%@lista.example';",
            USERS);
    assert_int_equal(db_exec(&F.s, sql, NULL), 0);
    struct resp r;
    json_t *a = get_list("/api/admin/usuarios", ADMIN.token, "usuarios", &r);
    assert_true(chunked(&r));
    long total = db_count(&F.s, "SELECT count(*) FROM perfiles");
    assert_int_equal((long)json_array_size(a), total);
    json_t *seen = json_object();
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *u = json_array_get(a, i);
        assert_null(json_object_get(seen, jstr(u, "id")));
        json_object_set_new(seen, jstr(u, "id"), json_true());
        if (i == 0) continue;
        const json_t *p = json_array_get(a, i - 1);
        int cmp = strcmp(jstr(p, "created_at"), jstr(u, "created_at"));
        if (cmp < 0 || (cmp == 0 && strcmp(jstr(p, "id"), jstr(u, "id")) <= 0))
            fail_msg("users %zu and %zu out of order", i - 1, i);
    }
    json_decref(seen);
    resp_free(&r);
}

/* --- pages cut by their size ------------------------------------------------------------ */

enum { WIDE = 700, WIDE_NOTE = 3000 }; /* about 70 rows fill a page's bytes */

/* The ids of `path`'s listing as `token` sees it, following "siguiente"
 * when walk_limit > 0 (with that limit). A JSON array the caller frees;
 * each row's notas (or nombre, for the users) checked to be whole. */
static json_t *wide_ids(const char *path, const char *token, const char *key, int walk_limit)
{
    json_t *ids = json_array();
    char cursor[128] = "";
    for (int pages = 0; pages <= WIDE; pages++) {
        char url[512];
        if (walk_limit > 0)
            snprintf(url, sizeof url, "%s%slimit=%d%s%s", path, strchr(path, '?') ? "&" : "?",
                     walk_limit, *cursor ? "&cursor=" : "", cursor);
        else
            snprintf(url, sizeof url, "%s", path);
        struct resp r;
        json_t *a = get_list(url, token, key, &r);
        for (size_t i = 0; i < json_array_size(a); i++) {
            const json_t *row = json_array_get(a, i);
            const char *wide = jstr(row, !strcmp(key, "citas") ? "notas" : "nombre");
            assert_non_null(wide);
            assert_true(strlen(wide) >= WIDE_NOTE);
            json_array_append_new(ids, json_string(jstr(row, "id")));
        }
        const json_t *next = json_object_get(r.json, "siguiente");
        if (walk_limit <= 0 || json_is_null(next)) {
            resp_free(&r);
            return ids;
        }
        snprintf(cursor, sizeof cursor, "%s", json_string_value(next));
        resp_free(&r);
    }
    fail_msg("the cursor does not move");
    return NULL;
}

/* The ids of sql's rows, in its order, as a JSON array. */
static json_t *db_ids(const char *sql)
{
    char *text = db_query(&F.s, "%s", sql);
    json_t *ids = json_array();
    char *save = NULL;
    for (char *t = strtok_r(text, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
        json_array_append_new(ids, json_string(t));
    free(text);
    return ids;
}

/* Rows wide enough that a page fills its bytes long before its row count:
 * every listing still gives each row once, in order, whether it is read
 * whole, walked with a limit, or read with the session (a client's own). */
static void pages_cut_by_their_size_lose_and_repeat_no_row(void **state)
{
    (void)state;
    struct user wide;
    signup_user(&F.s, &wide, "Cliente Notas Largas");
    char sql[2048];
    if (test_pg())
        snprintf(sql, sizeof sql,
                 "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, "
                 "fecha_fin, estado, notas, created_at) SELECT ('00000000-0000-4000-a000-' || "
                 "lpad(k::text, 12, '0'))::uuid, '%s', '%s', '%s', timestamptz '2040-01-01 "
                 "00:00Z' + k * interval '30 minutes', timestamptz '2040-01-01 00:30Z' + k * "
                 "interval '30 minutes', 'confirmada', repeat('n', %d) || k, "
                 "'2024-01-01T00:00:00.000Z' FROM generate_series(1, %d) k; "
                 "INSERT INTO auth_users (id, email, password_hash, created_at) SELECT "
                 "('00000000-0000-4000-b000-' || lpad(k::text, 12, '0'))::uuid, 'w' || k || "
                 "'@ancho.example', 'x', timestamptz '2019-01-01 00:00Z' + k * interval '1 hour' "
                 "FROM generate_series(1, %d) k; "
                 "INSERT INTO perfiles (id, rol, nombre, created_at) SELECT id, 'cliente', "
                 "repeat('m', %d) || email, created_at FROM auth_users WHERE email LIKE "
                 "'%%@ancho.example';",
                 wide.id, F.barbero, F.servicio, WIDE_NOTE, WIDE, WIDE / 2, WIDE_NOTE);
    else
        snprintf(sql, sizeof sql,
                 "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < %d) "
                 "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, "
                 "fecha_fin, estado, notas, created_at) SELECT "
                 "printf('00000000-0000-4000-a000-%%012d', k), '%s', '%s', '%s', "
                 "strftime('%%Y-%%m-%%dT%%H:%%M:%%S.000Z', '2040-01-01', '+' || (k * 30) || "
                 "' minutes'), strftime('%%Y-%%m-%%dT%%H:%%M:%%S.000Z', '2040-01-01', '+' || "
                 "(k * 30 + 30) || ' minutes'), 'confirmada', "
                 "replace(hex(zeroblob(%d)), '00', 'n') || k, '2024-01-01T00:00:00.000Z' FROM n; "
                 "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < %d) "
                 "INSERT INTO auth_users (id, email, password_hash, created_at) SELECT "
                 "printf('00000000-0000-4000-b000-%%012d', k), printf('w%%d@ancho.example', k), "
                 "'x', strftime('%%Y-%%m-%%dT%%H:%%M:%%S.000Z', '2019-01-01', '+' || k || "
                 "' hours') FROM n; "
                 "INSERT INTO perfiles (id, rol, nombre, created_at) SELECT id, 'cliente', "
                 "replace(hex(zeroblob(%d)), '00', 'm') || email, created_at FROM auth_users "
                 "WHERE email LIKE '%%@ancho.example';",
                 WIDE, wide.id, F.barbero, F.servicio, WIDE_NOTE, WIDE / 2, WIDE_NOTE);
    assert_int_equal(db_exec(&F.s, sql, NULL), 0);
    char q[256];
    snprintf(q, sizeof q, "SELECT id FROM citas WHERE cliente_id = '%s' ORDER BY fecha_inicio, id",
             wide.id);
    json_t *want = db_ids(q);
    assert_int_equal(json_array_size(want), WIDE);

    /* her own listing (read with her session on PostgreSQL), whole and walked */
    struct resp r;
    get_list("/api/citas", wide.token, "citas", &r);
    assert_true(chunked(&r));
    resp_free(&r);
    const int limits[] = {0, 1000, 150, 71};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        json_t *got = wide_ids("/api/citas", wide.token, "citas", limits[i]);
        if (!json_equal(got, want))
            fail_msg("limit %d: %zu rows, not the %d stored", limits[i], json_array_size(got),
                     WIDE);
        json_decref(got);
    }
    /* the same rows as an administrator sees them */
    char path[256];
    snprintf(path, sizeof path, "/api/citas?cliente_id=%s", wide.id);
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        json_t *got = wide_ids(path, ADMIN.token, "citas", limits[i]);
        assert_true(json_equal(got, want));
        json_decref(got);
    }
    json_decref(want);

    /* the users listing, its wide profiles in their place */
    want = db_ids("SELECT id FROM perfiles WHERE nombre LIKE 'mmm%' ORDER BY created_at DESC, "
                  "id DESC");
    assert_int_equal(json_array_size(want), WIDE / 2);
    get_list("/api/admin/usuarios", ADMIN.token, "usuarios", &r);
    assert_true(chunked(&r));
    json_t *a = json_object_get(r.json, "usuarios");
    json_t *got = json_array();
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *nombre = jstr(json_array_get(a, i), "nombre");
        if (nombre && !strncmp(nombre, "mmm", 3))
            json_array_append_new(got, json_string(jstr(json_array_get(a, i), "id")));
    }
    assert_int_equal((long)json_array_size(a), db_count(&F.s, "SELECT count(*) FROM perfiles"));
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    resp_free(&r);
}

/* --- memory ---------------------------------------------------------------------------- */

/* Counts the rows of a streamed listing without keeping it: the number of
 * `{"id":"` seen across the chunks, and the body's last bytes; and samples
 * the server's resident memory as the body arrives. (Not its VmHWM: every
 * sign-in's password hash takes 64 MiB for a moment, and gives it back.) */
struct counter {
    pid_t server;
    long calls, max_rss;
    char carry[8];
    size_t ncarry;
    long rows;
    char tail[16];
    size_t bytes;
};

static size_t count_rows(char *data, size_t size, size_t nmemb, void *ud)
{
    static const char needle[] = "{\"id\":\"";
    const size_t nl = sizeof needle - 1;
    struct counter *c = ud;
    size_t n = size * nmemb;
    char *win = malloc(c->ncarry + n);
    memcpy(win, c->carry, c->ncarry);
    memcpy(win + c->ncarry, data, n);
    size_t wn = c->ncarry + n;
    for (const char *p = win; (p = memmem(p, (size_t)(win + wn - p), needle, nl)); p += nl)
        c->rows++;
    c->ncarry = wn < nl - 1 ? wn : nl - 1;
    memcpy(c->carry, win + wn - c->ncarry, c->ncarry);
    size_t keep = wn < sizeof c->tail - 1 ? wn : sizeof c->tail - 1;
    memcpy(c->tail, win + wn - keep, keep);
    c->tail[keep] = '\0';
    c->bytes += n;
    free(win);
    if (c->calls++ % 16 == 0) {
        long rss = proc_rss_kib(c->server);
        if (rss > c->max_rss) c->max_rss = rss;
    }
    return n;
}

static void a_huge_listing_keeps_the_servers_memory_bounded(void **state)
{
    (void)state;
    if (built_with_asan()) {
        /* the sanitizer's shadow memory and quarantine make RSS meaningless */
        skip();
    }
    enum { HUGE = 200000 };
    seed_citas(&F.s, OTHER.id, HUGE, 1000000);
    long total = db_count(&F.s, "SELECT count(*) FROM citas");
    long before = proc_rss_kib(F.s.pid);
    CURL *h = curl_easy_init();
    assert_non_null(h);
    char url[128], auth[128];
    snprintf(url, sizeof url, "%s/api/citas", F.s.base);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", ADMIN.token);
    struct curl_slist *hdr = curl_slist_append(NULL, auth);
    struct counter c = {.server = F.s.pid};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, count_rows);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &c);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 300L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    long status;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    assert_int_equal(status, 200);
    assert_int_equal(c.rows, total);
    assert_non_null(strstr(c.tail, "}}]}"));
    long peak = c.max_rss;
    printf("listing %ld rows (%zu bytes): server RSS %ld KiB before, at most %ld KiB during\n",
           c.rows, c.bytes, before, peak);
    /* the body is ~100 MiB; built whole it would take at least that */
    if (peak > 64 * 1024)
        fail_msg("the server's RSS reached %ld KiB listing %zu bytes", peak, c.bytes);
    expect_healthy(&F.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_long_listing_is_streamed_whole_and_in_order),
        cmocka_unit_test(a_short_listing_is_a_plain_answer),
        cmocka_unit_test(limit_and_cursor_walk_every_row_once),
        cmocka_unit_test(desde_and_hasta_bound_fecha_inicio),
        cmocka_unit_test(cliente_id_narrows_a_barbers_or_admins_listing_only),
        cmocka_unit_test(a_wrong_parameter_is_400_and_auth_comes_first),
        cmocka_unit_test(the_user_listing_is_streamed_whole_and_newest_first),
        cmocka_unit_test(pages_cut_by_their_size_lose_and_repeat_no_row),
        cmocka_unit_test(a_huge_listing_keeps_the_servers_memory_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
