/*
 * transfer_files.h - reading the files of an export (barberia import)
 * without trusting the folder: each file is opened below the export's
 * folder without following a symbolic link at any step and must be a
 * regular file (a link to /dev/zero, a FIFO or a device never is), whole
 * files are hashed from the descriptor that was checked, and lines are
 * read with a cap on their length, so a crafted export can neither hang an
 * import nor make it allocate without bound.
 */
#ifndef BR_TRANSFER_FILES_H
#define BR_TRANSFER_FILES_H

#include "../util/err.h"

#include <jansson.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The export's format, as its manifest names it ("format", "version"). */
#define TRANSFER_FORMAT "barberia-export"
/* 2: activo, horarios and ausencias; 3: photo sizes; 4: the prices kept at booking, the
 * clients' consents, the links' key, the waiting list, WhatsApp (the outbox's channel
 * and delivery, the consents to it), the barbers' contacts, the
 * services' margins and the attendance marks; 5: who recorded a WhatsApp consent; 6: each
 * client's generation of the appointments' links */
#define TRANSFER_VERSION    6
#define TRANSFER_MAX_TABLES 32

/* One line's JSON at most (one row, one object's entry). */
#define TRANSFER_LINE_MAX (16u << 20)

/* The n bytes at d in lowercase hex, into out (2n + 1 bytes). */
void transfer_hex(const unsigned char *d, size_t n, char *out);

/* Opens dir/rel for reading: every folder of rel below dir and the file
 * itself without following a symbolic link, the file a regular one (dir
 * itself is taken as given). BR_INVALID (a one-line message naming rel)
 * when rel is a link, crosses one or is not a regular file; BR_IO when it
 * cannot be opened. OUT: *fd (the caller closes it), *size. */
br_err transfer_open_in(const char *dir, const char *rel, int *fd, uint64_t *size) WARN_UNUSED;

/* The SHA-256 (hex) of fd's bytes from offset 0 to its end, refused
 * (BR_INVALID, naming name) past max bytes. OUT: sum, *size (NULL: not
 * wanted). */
br_err transfer_hash_fd(int fd, uint64_t max, const char *name, char sum[65],
                        uint64_t *size) WARN_UNUSED;

/* Lines of a file read from its start, each at most TRANSFER_LINE_MAX
 * bytes, every byte read hashed. */
struct transfer_lines {
    FILE *f;
    const char *name; /* borrowed: the file's name in messages */
    char *line;       /* the last line, NUL-terminated, without its '\n' */
    size_t cap;
    crypto_hash_sha256_state h;
};

/* Starts reading fd (a duplicate of it: fd stays the caller's) from its
 * first byte. BR_IO on failure. */
br_err transfer_lines_open(struct transfer_lines *r, int fd, const char *name) WARN_UNUSED;
/* The next line into r->line. OUT: *len, *got (false at the end).
 * BR_INVALID for a line longer than TRANSFER_LINE_MAX, BR_IO on a read
 * error. */
br_err transfer_lines_next(struct transfer_lines *r, size_t *len, bool *got) WARN_UNUSED;
/* Whether every byte read so far hashes to want (hex). */
bool transfer_lines_sum_is(struct transfer_lines *r, const char *want);
/* Closes r (nothing when it was never opened). */
void transfer_lines_close(struct transfer_lines *r);

/* Calls fn with each line of fd (read from its first byte, as
 * transfer_lines) parsed as JSON (NULL for a line that is not; borrowed for
 * the call), stopping at fn's first error; with want (hex, non-NULL), every
 * byte read must hash to it, or BR_INVALID "<name> changed while it was
 * imported". */
br_err transfer_jsonl_each(int fd, const char *name, br_err (*fn)(void *ud, const json_t *line),
                           void *ud, const char *want) WARN_UNUSED;

#endif
