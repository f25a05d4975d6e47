/*
 * memo_fixture.c - what the tests of the server's memory share (see
 * memo_fixture.h): the server, and reading its answers and memo counters.
 */
#define _GNU_SOURCE
#include "memo_fixture.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct srv S;
char *barbero, *servicio;

int memo_group_setup(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    barbero = make_barbero(&S, "Barbero Memo");
    servicio = make_servicio(&S, "Corte Memo", 30, 12.5);
    return 0;
}

int memo_group_teardown(void **state)
{
    (void)state;
    free(barbero);
    free(servicio);
    srv_cleanup(&S);
    return 0;
}

long status_of(const char *path, const char *token)
{
    struct resp r;
    http_get(&S, path, token, &r);
    long status = r.status;
    resp_free(&r);
    return status;
}

void sql(const char *text)
{
    assert_int_equal(db_exec(&S, text, NULL), 0);
}

char *body_of(const char *path, const char *token)
{
    struct resp r;
    http_get(&S, path, token, &r);
    assert_int_equal(r.status, 200);
    char *b = strdup(r.body);
    resp_free(&r);
    return b;
}

long memo_count_of(const struct srv *s, const char *memo, bool hits)
{
    struct resp r;
    http_get(s, "/metrics", NULL, &r);
    assert_int_equal(r.status, 200);
    char key[96];
    snprintf(key, sizeof key, "barberia_memo_%s_total{memo=\"%s\"} ", hits ? "hits" : "misses",
             memo);
    const char *at = strstr(r.body, key);
    if (!at) fail_msg("no %s in /metrics", key);
    long v = strtol(at + strlen(key), NULL, 10);
    resp_free(&r);
    return v;
}

long memo_count(const char *memo, bool hits)
{
    return memo_count_of(&S, memo, hits);
}

void expect_listing(const char *token, const char *want, bool remembered)
{
    long h0 = memo_count("citas", true);
    char *listed = body_of("/api/citas", token);
    if (want) assert_string_equal(listed, want);
    free(listed);
    if (!test_pg()) assert_int_equal(memo_count("citas", true), h0 + (remembered ? 1 : 0));
}

void json_patch(const char *path, const char *token, const char *body)
{
    struct resp r;
    http_json(&S, "PATCH", path, token, body, &r);
    if (r.status != 200) fail_msg("PATCH %s: %ld %s", path, r.status, r.body);
    resp_free(&r);
}
