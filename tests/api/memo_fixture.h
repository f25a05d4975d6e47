/*
 * memo_fixture.h - what the tests of what the server remembers share
 * (test_memo_lecturas.c, test_memo_huecos.c), built into each: a server with
 * a barber and a service, started for each program by memo_group_setup;
 * requests, SQL from another process, and the memo counters of GET /metrics.
 */
#ifndef BR_TEST_MEMO_FIXTURE_H
#define BR_TEST_MEMO_FIXTURE_H

#include "harness.h"

extern struct srv S;
extern char *barbero, *servicio;

int memo_group_setup(void **state);
int memo_group_teardown(void **state);
long status_of(const char *path, const char *token);
void sql(const char *text);
/* The body of GET path, owned by the caller. */
char *body_of(const char *path, const char *token);
/* barberia_memo_hits_total{memo="<memo>"} (misses: hits false) as the
 * server counts them; 0 on PostgreSQL, where nothing is remembered. */
long memo_count_of(const struct srv *s, const char *memo, bool hits);
long memo_count(const char *memo, bool hits);
void expect_listing(const char *token, const char *want, bool remembered);
void json_patch(const char *path, const char *token, const char *body);

#endif
