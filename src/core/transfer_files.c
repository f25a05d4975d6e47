/*
 * transfer_files.c - reading an export's files safely (see
 * transfer_files.h).
 */
#define _GNU_SOURCE
#include "transfer_files.h"
#include "../util/common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void transfer_hex(const unsigned char *d, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * n] = '\0';
}

/* A failed open of rel: a link met on the way (ELOOP on the file,
 * ENOTDIR on a folder) is the export's fault, anything else the folder's. */
static br_err open_fail(const char *dir, const char *rel, int e)
{
    if (e == ELOOP || e == ENOTDIR || e == EMLINK)
        return err_set(BR_INVALID, "%s in the export is not a regular file (a link?)", rel);
    return err_set(BR_IO, "cannot open %s/%s: %s", dir, rel, strerror(e));
}

br_err transfer_open_in(const char *dir, const char *rel, int *fd, uint64_t *size)
{
    *fd = -1;
    *size = 0;
    int at = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (at < 0) return err_set(BR_IO, "cannot open %s: %s", dir, strerror(errno));
    char *path = xstrdup(rel);
    br_err rc = BR_OK;
    char *part = path;
    /* each folder on the way, never through a link */
    for (char *slash = strchr(part, '/'); slash && !rc; slash = strchr(part, '/')) {
        *slash = '\0';
        int next = openat(at, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) rc = open_fail(dir, rel, errno);
        close(at);
        at = next;
        part = slash + 1;
    }
    /* the file: O_NONBLOCK so that a FIFO does not block the open (a
     * regular file ignores it; it is cleared below all the same) */
    int f = rc ? -1 : openat(at, part, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (!rc && f < 0) rc = open_fail(dir, rel, errno);
    if (at >= 0) close(at);
    free(path);
    struct stat sb;
    if (!rc && fstat(f, &sb) != 0)
        rc = err_set(BR_IO, "cannot read %s/%s: %s", dir, rel, strerror(errno));
    if (!rc && !S_ISREG(sb.st_mode))
        rc = err_set(BR_INVALID, "%s in the export is not a regular file", rel);
    if (!rc && fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK) != 0)
        rc = err_set(BR_IO, "cannot read %s/%s: %s", dir, rel, strerror(errno));
    if (rc) {
        if (f >= 0) close(f);
        return rc;
    }
    *fd = f;
    *size = (uint64_t)sb.st_size;
    return BR_OK;
}

br_err transfer_hash_fd(int fd, uint64_t max, const char *name, char sum[65], uint64_t *size)
{
    crypto_hash_sha256_state h;
    crypto_hash_sha256_init(&h);
    char buf[65536];
    uint64_t total = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, (off_t)total);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return err_set(BR_IO, "cannot read %s: %s", name, strerror(errno));
        if (n == 0) break;
        total += (uint64_t)n;
        if (total > max)
            return err_set(BR_INVALID, "%s is larger than %" PRIu64 " bytes", name, max);
        crypto_hash_sha256_update(&h, (unsigned char *)buf, (size_t)n);
    }
    unsigned char d[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(&h, d);
    transfer_hex(d, sizeof d, sum);
    if (size) *size = total;
    return BR_OK;
}

br_err transfer_lines_open(struct transfer_lines *r, int fd, const char *name)
{
    memset(r, 0, sizeof *r);
    r->name = name;
    crypto_hash_sha256_init(&r->h);
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0 || lseek(own, 0, SEEK_SET) != 0 || !(r->f = fdopen(own, "r"))) {
        int e = errno;
        if (own >= 0) close(own);
        return err_set(BR_IO, "cannot read %s: %s", name, strerror(e));
    }
    return BR_OK;
}

br_err transfer_lines_next(struct transfer_lines *r, size_t *len, bool *got)
{
    *got = false;
    *len = 0;
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(r->f)) != EOF && c != '\n') {
        if (n == TRANSFER_LINE_MAX)
            return err_set(BR_INVALID, "%s: a line longer than %u bytes", r->name,
                           TRANSFER_LINE_MAX);
        if (n + 1 >= r->cap) {
            r->cap = r->cap ? r->cap * 2 : 4096;
            if (r->cap > TRANSFER_LINE_MAX + 1) r->cap = TRANSFER_LINE_MAX + 1;
            r->line = xrealloc(r->line, r->cap);
        }
        r->line[n++] = (char)c;
    }
    if (c == EOF && ferror(r->f)) return err_set(BR_IO, "cannot read %s", r->name);
    if (n) crypto_hash_sha256_update(&r->h, (unsigned char *)r->line, n);
    if (c == '\n') crypto_hash_sha256_update(&r->h, (const unsigned char *)"\n", 1);
    if (c == EOF && n == 0) return BR_OK;
    if (!r->line) r->line = xmalloc(r->cap = 4096);
    r->line[n] = '\0';
    *len = n;
    *got = true;
    return BR_OK;
}

bool transfer_lines_sum_is(struct transfer_lines *r, const char *want)
{
    unsigned char d[crypto_hash_sha256_BYTES];
    char sum[65];
    crypto_hash_sha256_final(&r->h, d);
    transfer_hex(d, sizeof d, sum);
    return want && !strcmp(sum, want);
}

void transfer_lines_close(struct transfer_lines *r)
{
    if (r->f) fclose(r->f);
    free(r->line);
    memset(r, 0, sizeof *r);
}

br_err transfer_jsonl_each(int fd, const char *name, br_err (*fn)(void *ud, const json_t *line),
                           void *ud, const char *want)
{
    struct transfer_lines r;
    br_err rc = transfer_lines_open(&r, fd, name);
    size_t len;
    bool got = !rc;
    while (!rc && got) {
        rc = transfer_lines_next(&r, &len, &got);
        if (rc || !got) break;
        json_error_t e;
        json_t *line = json_loadb(r.line, len, 0, &e);
        rc = fn(ud, line);
        json_decref(line);
    }
    if (!rc && want && !transfer_lines_sum_is(&r, want))
        rc = err_set(BR_INVALID, "%s changed while it was imported", name);
    transfer_lines_close(&r);
    return rc;
}
