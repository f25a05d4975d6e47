/*
 * log.h - one line per event on stderr.
 *
 * Lines look like `2026-11-21T10:00:00.123Z info listening on http://...`.
 * Each line is written with a single write(2), so lines from concurrent
 * threads never interleave. Text that may come from a client (methods, paths) goes
 * through log_access(), which escapes control characters so that nobody can
 * forge a log line. Never pass secrets (passwords, tokens) to these functions.
 */
#ifndef BR_LOG_H
#define BR_LOG_H

#include "common.h"

/* Drops info lines (warnings and errors still go out): the CLI's data
 * commands print their own one-line results. */
void log_set_quiet(bool quiet);

void log_info(const char *fmt, ...) PRINTF_LIKE(1, 2);
void log_warn(const char *fmt, ...) PRINTF_LIKE(1, 2);
void log_error(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* The access-log line of one request: method and path (both escaped), status and
 * duration in milliseconds. */
void log_access(const char *method, const char *path, unsigned status, double ms);

#endif
