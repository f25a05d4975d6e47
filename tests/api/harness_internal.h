/*
 * harness_internal.h - what the harness's own files share with each other
 * (harness_*.c); tests include harness.h alone.
 */
#ifndef BR_TEST_HARNESS_INTERNAL_H
#define BR_TEST_HARNESS_INTERNAL_H

#include "harness.h"

/* An environment for a child, built before the fork: a child of a
 * threaded test may run only what is safe after fork (no setenv, no
 * malloc: another thread may have held the allocator's lock), so it gets
 * this array ready for execve. */
struct child_envp {
    char **v; /* NULL-terminated, each entry owned */
    size_t n, cap;
};

void envp_free(struct child_envp *e);
/* This process's environment with env's entries put on it. */
void envp_with(struct child_envp *out, const char *const *env);
/* For a child that runs barberia: a clean BARBERIA_* environment plus the
 * server's database on a PostgreSQL run, plus env. */
void child_env(struct child_envp *out, const struct srv *s, const char *const *env);
/* In a child that will run a server: it dies with the test process. */
void die_with(pid_t parent);
/* Waits (at most timeout_ms) for a child to exit. Returns its exit status
 * (128 + signal when a signal ended it), or -1 on timeout, after which the
 * child has been SIGKILLed and reaped. */
int wait_child(pid_t pid, int timeout_ms);

/* Creates (or drops) the database of a server on a PostgreSQL run. */
void pg_database(const struct srv *s, bool create);

/* libcurl's global set-up (and SIGPIPE ignored), once per process. */
void harness_curl_once(void);

#endif
