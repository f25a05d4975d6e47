/*
 * common.h - allocation wrappers and small macros shared by every module.
 *
 * Every size a client controls is capped before memory is spent on it, so an
 * allocation failure means the machine is out of memory: the wrappers below
 * log and abort instead of threading ENOMEM through every caller (the Redis
 * and h2o approach).
 */
#ifndef BR_COMMON_H
#define BR_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_LEN(a)      (sizeof(a) / sizeof((a)[0]))
#define WARN_UNUSED       __attribute__((warn_unused_result))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* malloc/calloc/realloc/strdup that never return NULL (abort on OOM).
 * The caller owns the result and frees it with free(). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* Copies n bytes of s and NUL-terminates. */
char *xstrndup(const char *s, size_t n);
/* strdup that passes NULL through. */
char *xstrdup_or_null(const char *s);
/* Formats into a new string (caller frees). */
char *xasprintf(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* Zeroes a secret string (a key, a password, a token or a link holding one)
 * where the optimiser cannot drop the write, then frees it. NULL is a no-op. */
void wipe_free(char *s);
/* Every occurrence of secret (NULL or "": none) in the text of buf (n
 * bytes) becomes "***", in place, cut to fit: for a message of another
 * party (a server's error, a library's) that may quote what it was given. */
void secret_scrub(char *buf, size_t n, const char *secret);

/* mkdir -p: makes every folder of path that is missing, each with mode,
 * up to its last component (whole) or up to the one before it (the
 * parents of a file). -1 with errno. */
int dirs_make(const char *path, unsigned mode, bool whole) WARN_UNUSED;

/* Milliseconds since the Unix epoch, wall clock. */
int64_t clock_now_ms(void);
/* Milliseconds (microseconds) of a monotonic clock, for durations and deadlines. */
int64_t clock_mono_ms(void);
int64_t clock_mono_us(void);

/* True when the n bytes at s are well-formed UTF-8 without NUL bytes. */
bool utf8_valid(const char *s, size_t n);
/* Number of code points in a well-formed UTF-8 string. */
size_t utf8_count(const char *s, size_t n);

#endif
