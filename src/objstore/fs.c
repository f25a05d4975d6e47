/*
 * fs.c - the folder object store, the embedded default.
 *
 * Layout under the root folder:
 *   <bucket>/<key>             the object's bytes, as uploaded
 *   .meta/<bucket>/<key>       its content type (one line)
 *   .buckets/<bucket>          the bucket's settings: "public=1 limit=<bytes>"
 *   .tmp/                      objects being written, named
 *                              obj-<pid>-<instance>-XXXXXX after the writer
 * Bucket names cannot start with a dot, so the dotted folders never clash
 * with a bucket. A new object is written to .tmp, fsynced, and linked into
 * place with link(2), which fails when the name exists: an object is never
 * overwritten, even by two writers racing for one key. Bucket names and
 * keys are validated (objkey.h, by the obj_* calls of objstore.c) before
 * any path is built, so no key reaches outside its bucket's folder. The
 * folders of a key are made by the write that needs them and removed by
 * the removal that empties them (a key of many segments leaves nothing).
 * A crash can leave files in .tmp; they carry their writer's pid and
 * instance id (util/procid.h), so a sweep removes exactly the files of
 * writers that are gone and never one a live writer still needs.
 */
#define _GNU_SOURCE
#include "objstore.h"
#include "../util/objkey.h"
#include "../util/log.h"
#include "../util/mediatype.h"
#include "../util/procid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fs_store {
    struct objstore base;
    char *root;
};

static br_err io_fail(const char *what, const char *path)
{
    return err_set(BR_OBJSTORE, "%s %s: %s", what, path, strerror(errno));
}

/* mkdir -p for the folders of path (not its last component). */
static int mkdirs_for(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int r = mkdir(path, 0755);
        *p = '/';
        if (r != 0 && errno != EEXIST) return -1;
    }
    return 0;
}

/* Removes the folders of path (not its last component) that are left
 * empty, deepest first, down to the first `keep` bytes of path (a folder
 * that is never removed). A key's folders are made by the writer that
 * needs them, so a key with many segments leaves nothing behind once its
 * object goes. */
static void rmdirs_for(char *path, size_t keep)
{
    for (char *slash = strrchr(path, '/'); slash && (size_t)(slash - path) > keep;
         slash = strrchr(path, '/')) {
        *slash = '\0';
        if (rmdir(path) != 0) break; /* not empty (or gone): its parents are not either */
    }
}

/* link(from, to) (or rename) after making the folders of to; again when a
 * remover took an emptied folder away in between (rmdirs_for). -1 with
 * errno. */
static int place(const char *from, char *to, bool by_link)
{
    for (int tries = 0;; tries++) {
        if (mkdirs_for(to) == 0 && (by_link ? link(from, to) : rename(from, to)) == 0) return 0;
        if (errno != ENOENT || tries == 8) return -1;
    }
}

static int mkdir_p(const char *dir)
{
    char *tmp = xasprintf("%s/", dir);
    int r = mkdirs_for(tmp);
    free(tmp);
    return r;
}

static void fsync_dir_of(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

static br_err read_small(const char *path, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? BR_NOTFOUND : io_fail("cannot open", path);
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n < 0) return io_fail("cannot read", path);
    out[n] = '\0';
    char *nl = strchr(out, '\n');
    if (nl) *nl = '\0';
    return BR_OK;
}

/* Writes n bytes, resuming after short writes (a filling disk gives those
 * before ENOSPC). -1 with errno on failure. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes data to a new temporary file in .tmp; OUT: its path (caller frees).
 * Failures name the file relative to the root: the detail reaches clients. */
static br_err write_tmp(struct fs_store *s, int src_fd, uint64_t size, const char *data,
                        char **tmp_path)
{
    const struct procid *me = procid_self();
    char *path = xasprintf("%s/.tmp/obj-%ld-%s-XXXXXX", s->root, me->pid, me->instance);
    const char *shown = path + strlen(s->root) + 1;
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        br_err e = io_fail("cannot create", shown);
        free(path);
        return e;
    }
    br_err rc = BR_OK;
    if (data) {
        size_t len = strlen(data);
        if (write_all(fd, data, len) != 0) rc = io_fail("cannot write", shown);
    } else {
        char chunk[65536];
        uint64_t off = 0;
        while (!rc && off < size) {
            size_t want = size - off < sizeof chunk ? (size_t)(size - off) : sizeof chunk;
            ssize_t n = pread(src_fd, chunk, want, (off_t)off);
            if (n <= 0) {
                rc = n < 0 ? io_fail("cannot read upload for", shown)
                           : err_set(BR_OBJSTORE, "upload shorter than announced");
                break;
            }
            if (write_all(fd, chunk, (size_t)n) != 0) rc = io_fail("cannot write", shown);
            off += (uint64_t)n;
        }
    }
    if (!rc && fsync(fd) != 0) rc = io_fail("cannot sync", shown);
    if (close(fd) != 0 && !rc) rc = io_fail("cannot close", shown);
    if (rc) {
        unlink(path);
        free(path);
        return rc;
    }
    *tmp_path = path;
    return BR_OK;
}

static br_err fs_ensure_bucket(struct objstore *o, const char *bucket, bool public_read,
                               uint64_t size_limit)
{
    struct fs_store *s = (struct fs_store *)o;
    char *conf = xasprintf("%s/.buckets/%s", s->root, bucket);
    char *dir = xasprintf("%s/%s", s->root, bucket);
    br_err rc = BR_OK;
    if (access(conf, F_OK) != 0) {
        char body[64];
        snprintf(body, sizeof body, "public=%d limit=%llu\n", public_read ? 1 : 0,
                 (unsigned long long)size_limit);
        char *tmp = NULL;
        rc = write_tmp(s, -1, 0, body, &tmp);
        if (!rc) {
            if (link(tmp, conf) != 0 && errno != EEXIST) rc = io_fail("cannot create", conf);
            unlink(tmp);
            free(tmp);
        }
        if (!rc)
            log_info("storage: created bucket %s (public=%d, limit=%llu bytes)", bucket,
                     public_read ? 1 : 0, (unsigned long long)size_limit);
    }
    if (!rc && mkdir(dir, 0755) != 0 && errno != EEXIST) rc = io_fail("cannot create", dir);
    free(conf);
    free(dir);
    return rc;
}

static br_err bucket_limit(struct fs_store *s, const char *bucket, uint64_t *limit)
{
    char *conf = xasprintf("%s/.buckets/%s", s->root, bucket);
    char line[128];
    br_err rc = read_small(conf, line, sizeof line);
    free(conf);
    if (rc == BR_NOTFOUND) return err_set(BR_OBJSTORE, "el bucket %s no existe", bucket);
    if (rc) return rc;
    unsigned long long lim = 0;
    const char *p = strstr(line, "limit=");
    if (p) lim = strtoull(p + 6, NULL, 10);
    *limit = lim;
    return BR_OK;
}

static br_err fs_put(struct objstore *o, const char *bucket, const char *key,
                     const char *content_type, int fd, uint64_t size)
{
    struct fs_store *s = (struct fs_store *)o;
    uint64_t limit = 0;
    br_err rc = bucket_limit(s, bucket, &limit);
    if (rc) return rc;
    if (limit && size > limit)
        return err_set(BR_OBJSTORE, "el objeto supera el límite de %llu bytes del bucket",
                       (unsigned long long)limit);

    /* only the canonical type is kept, never the declared text */
    char type[MEDIATYPE_MAX + 1];
    mediatype_stored(content_type, type);
    char *path = xasprintf("%s/%s/%s", s->root, bucket, key);
    char *meta = xasprintf("%s/.meta/%s/%s", s->root, bucket, key);
    char *tmp = NULL, *tmp_meta = NULL;
    rc = write_tmp(s, fd, size, NULL, &tmp);
    if (!rc) rc = write_tmp(s, -1, 0, type, &tmp_meta);
    if (!rc && place(tmp, path, true) != 0) {
        rc = errno == EEXIST ? err_set(BR_CONFLICT, "el objeto ya existe")
                             : io_fail("cannot store", key);
    }
    /* the object is new and ours: its metadata may replace a stale leftover */
    if (!rc && place(tmp_meta, meta, false) != 0) {
        rc = io_fail("cannot store metadata of", key);
        unlink(path);
    }
    if (!rc) fsync_dir_of(path);
    if (tmp) unlink(tmp);
    if (tmp_meta) unlink(tmp_meta);
    free(tmp);
    free(tmp_meta);
    free(path);
    free(meta);
    return rc;
}

static br_err fs_get(struct objstore *o, const char *bucket, const char *key, struct obj_info *out)
{
    struct fs_store *s = (struct fs_store *)o;
    char *path = xasprintf("%s/%s/%s", s->root, bucket, key);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    free(path);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
            return err_set(BR_NOTFOUND, "no such object");
        return io_fail("cannot open", key);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return err_set(BR_NOTFOUND, "no such object");
    }
    char *meta = xasprintf("%s/.meta/%s/%s", s->root, bucket, key);
    char ct[256];
    if (read_small(meta, ct, sizeof ct) != BR_OK || !obj_content_type_valid(ct))
        snprintf(ct, sizeof ct, "application/octet-stream");
    free(meta);
    out->fd = fd;
    out->size = (uint64_t)sb.st_size;
    out->content_type = xstrdup(ct);
    return BR_OK;
}

static br_err fs_remove(struct objstore *o, const char *bucket, const char *key)
{
    struct fs_store *s = (struct fs_store *)o;
    char *path = xasprintf("%s/%s/%s", s->root, bucket, key);
    char *meta = xasprintf("%s/.meta/%s/%s", s->root, bucket, key);
    br_err rc = BR_OK;
    if (unlink(path) != 0 && errno != ENOENT) rc = io_fail("cannot remove", key);
    if (!rc && unlink(meta) != 0 && errno != ENOENT) rc = io_fail("cannot remove metadata of", key);
    if (!rc) {
        rmdirs_for(path, strlen(s->root) + 1 + strlen(bucket));
        rmdirs_for(meta, strlen(s->root) + strlen("/.meta/") + strlen(bucket));
    }
    free(path);
    free(meta);
    return rc;
}

/* The writer a temporary file's name records: obj-<pid>-<instance>-XXXXXX.
 * False for a name of another shape (a leftover of an older version). */
static bool tmp_writer(const char *name, long *pid, char instance[PROCID_INSTANCE_LEN + 1])
{
    if (strncmp(name, "obj-", 4) != 0) return false;
    char *end;
    errno = 0;
    long p = strtol(name + 4, &end, 10);
    if (errno || end == name + 4 || *end != '-' || p <= 0) return false;
    const char *inst = end + 1;
    size_t n = strspn(inst, "0123456789abcdef");
    if (n != PROCID_INSTANCE_LEN || inst[n] != '-') return false;
    memcpy(instance, inst, n);
    instance[n] = '\0';
    *pid = p;
    return true;
}

/* Removes the regular files of dir that leftover(ud, name) picks, calling
 * removed for each. */
static br_err sweep_dir(const char *dir, bool (*leftover)(void *ud, const char *name), void *lud,
                        obj_removed_fn removed, void *ud)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? BR_OK : io_fail("cannot list", dir);
    br_err rc = BR_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(sb.st_mode))
            continue;
        if (leftover && !leftover(lud, e->d_name)) continue;
        if (unlinkat(dirfd(d), e->d_name, 0) != 0) {
            if (errno == ENOENT) continue; /* its writer was quicker */
            if (!rc) rc = io_fail("cannot remove a leftover in", dir);
            continue;
        }
        char *what = xasprintf("%s/%s (%lld bytes)", dir, e->d_name, (long long)sb.st_size);
        if (removed) removed(ud, what);
        free(what);
    }
    closedir(d);
    return rc;
}

struct tmp_sweep {
    obj_writer_gone_fn gone;
    void *ud;
};

static bool tmp_leftover(void *ud, const char *name)
{
    struct tmp_sweep *t = ud;
    long pid = 0;
    char instance[PROCID_INSTANCE_LEN + 1];
    if (!tmp_writer(name, &pid, instance)) return true;
    return t->gone(t->ud, pid, instance);
}

br_err obj_tmp_sweep(const char *dir, obj_writer_gone_fn gone, obj_removed_fn removed, void *ud)
{
    struct tmp_sweep t = {gone, ud};
    return sweep_dir(dir, tmp_leftover, &t, removed, ud);
}

static br_err fs_sweep_tmp(struct objstore *o, obj_writer_gone_fn gone, obj_removed_fn removed,
                           void *ud)
{
    struct fs_store *s = (struct fs_store *)o;
    char *dir = xasprintf("%s/.tmp", s->root);
    br_err rc = obj_tmp_sweep(dir, gone, removed, ud);
    free(dir);
    return rc;
}

br_err obj_spool_sweep(const char *dir, obj_removed_fn removed, void *ud)
{
    return sweep_dir(dir, NULL, NULL, removed, ud);
}

static void fs_close(struct objstore *o)
{
    struct fs_store *s = (struct fs_store *)o;
    free(s->root);
    free(s);
}

/* fn for every regular file under dir, its key being prefix + its path
 * below dir (key holds prefix's bytes, room for a whole key). */
static br_err each_under(const char *dir, char *key, size_t len, obj_key_fn fn, void *ud)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? BR_OK : io_fail("cannot list", dir);
    br_err rc = BR_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t n = strlen(e->d_name);
        if (len + n + 2 > OBJKEY_MAX + 1) continue; /* no key of ours is that long */
        memcpy(key + len, e->d_name, n + 1);
        char *path = xasprintf("%s/%s", dir, e->d_name);
        struct stat sb;
        bool seen = lstat(path, &sb) == 0;
        if (seen && S_ISDIR(sb.st_mode)) {
            key[len + n] = '/';
            key[len + n + 1] = '\0';
            rc = each_under(path, key, len + n + 1, fn, ud);
        } else if (seen && S_ISREG(sb.st_mode)) {
            rc = fn(ud, key);
        }
        free(path);
    }
    closedir(d);
    return rc;
}

static br_err fs_each(struct objstore *o, const char *bucket, obj_key_fn fn, void *ud)
{
    struct fs_store *s = (struct fs_store *)o;
    char *dir = xasprintf("%s/%s", s->root, bucket);
    char key[OBJKEY_MAX + 1] = "";
    br_err rc = each_under(dir, key, 0, fn, ud);
    free(dir);
    return rc;
}

static const struct obj_ops fs_ops = {
    .name = "folder",
    .ensure_bucket = fs_ensure_bucket,
    .put = fs_put,
    .get = fs_get,
    .remove = fs_remove,
    .sweep_tmp = fs_sweep_tmp,
    .each = fs_each,
    .close = fs_close,
};

br_err objstore_fs_open(const char *dir, struct objstore **out)
{
    const char *sub[] = {"", "/.tmp", "/.meta", "/.buckets"};
    for (size_t i = 0; i < ARRAY_LEN(sub); i++) {
        char *d = xasprintf("%s%s", dir, sub[i]);
        int r = mkdir_p(d);
        struct stat sb; /* mkdir_p takes a file in the way for an existing folder */
        if (r == 0 && stat(d, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
            errno = ENOTDIR;
            r = -1;
        }
        if (r == 0 && access(d, W_OK) != 0) r = -1;
        if (r != 0) {
            br_err e = err_set(BR_CONFIG, "object store folder %s is not writable: %s", d,
                               strerror(errno));
            free(d);
            return e;
        }
        free(d);
    }
    struct fs_store *s = xcalloc(1, sizeof *s);
    s->base.ops = &fs_ops;
    s->root = xstrdup(dir);
    *out = &s->base;
    return BR_OK;
}
