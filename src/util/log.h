/*
 * log.h - one line per event on stderr.
 *
 * Lines look like `2026-11-21T10:00:00.123Z info listening on http://...`.
 * Lines from concurrent threads never interleave. Access lines may be
 * buffered (log_buffer_start): then they go out in one write(2) per
 * 64 KiB, per flush interval, or before any other line, whichever comes
 * first, so the order of lines is always the order they were logged. Text that may come from a
 * client (methods, paths) goes through log_access(), which escapes control characters so that
 * nobody can forge a log line. Never pass secrets (passwords, tokens) to these functions.
 *
 * A request path may carry a secret in a segment (a link's token, /c/<token>): every path
 * logged (log_access, log_request) has each segment that looks like one - 16 or more characters
 * of the base64url, base64 or hex alphabets and nothing else, that are not a canonical UUID -
 * written as `<token>`, and in any other segment each run of 64 or more of those characters (a
 * link's token with something stuck to it: `/c/<token>.`), the rest of the segment kept. Ids
 * (UUIDs), words and file names stay as they are.
 */
#ifndef BR_LOG_H
#define BR_LOG_H

#include "common.h"
#include "err.h"

/* Drops info lines (warnings and errors still go out): the CLI's data
 * commands print their own one-line results. */
void log_set_quiet(bool quiet);

void log_info(const char *fmt, ...) PRINTF_LIKE(1, 2);
void log_warn(const char *fmt, ...) PRINTF_LIKE(1, 2);
void log_error(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* The access-log line of one request: method and path (both escaped, the path's
 * token-shaped segments redacted), status and duration in milliseconds. */
void log_access(const char *method, const char *path, unsigned status, double ms);

/* "<method> <path>" as log_access writes them (escaped, the path's token-shaped segments
 * redacted), for the other lines that name a request: written into out (n bytes,
 * truncated), which is returned. */
#define LOG_REQUEST_MAX 600
const char *log_request(const char *method, const char *path, char *out, size_t n);

/* Text that may quote a client's bytes (a data store's message naming a
 * value), escaped as log_access escapes them, into out (n bytes, truncated),
 * which is returned. */
const char *log_text(const char *text, char *out, size_t n);

/* Buffers access lines from now on, written at the latest every_ms after
 * they were logged (a SIGKILL loses at most that much of the access log;
 * every other line is written at once). log_buffer_stop writes what is
 * left and goes back to one write per line. */
br_err log_buffer_start(int every_ms) WARN_UNUSED;
void log_buffer_stop(void);

#endif
