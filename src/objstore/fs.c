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
 * Every path is resolved beneath the root one folder at a time, following
 * no symbolic link (openat with O_NOFOLLOW, segment by segment: portable to
 * every Linux 5.x, where openat2's RESOLVE_BENEATH is not), for reads,
 * writes and removals alike, and its dotted folders and the buckets'
 * folders are never links either (the root may be: it is the operator's
 * choice, storage/ on another disk): a link planted anywhere in the store
 * (or in a backup's) reads as no object, so no key ever reaches a file
 * outside the store.
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
#include "../util/uuid.h"

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

/* close(fd) keeping errno (the error being reported is the earlier one). */
static void close_keep(int fd)
{
    int e = errno;
    close(fd);
    errno = e;
}

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* The root folder, opened: every other path of the store is resolved
 * beneath it. The root itself is the operator's (BARBERIA_DATA's storage/,
 * which may be a link to another disk); nothing beneath it is followed.
 * -1 with errno. */
#define ROOT_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)
static int root_open(const struct fs_store *s)
{
    return open(s->root, ROOT_FLAGS);
}

/* Opens the folder at the first len bytes of rel, a '/'-separated path
 * beneath the folder at (len 0: at itself), one segment at a time without
 * following any symbolic link, so that nothing planted in the store leads
 * outside it; with make, a missing folder is created (0755). -1 with
 * errno (ELOOP or ENOTDIR for a link or a file in the way). */
static int open_beneath(int at, const char *rel, size_t len, bool make)
{
    int fd = openat(at, ".", DIR_FLAGS);
    size_t i = 0;
    while (fd >= 0 && i < len) {
        size_t n = strcspn(rel + i, "/");
        if (n > len - i) n = len - i;
        char name[OBJKEY_SEGMENT_MAX + 1];
        if (n == 0 || n > OBJKEY_SEGMENT_MAX) {
            close(fd);
            errno = n ? ENAMETOOLONG : ENOENT;
            return -1;
        }
        memcpy(name, rel + i, n);
        name[n] = '\0';
        int next = openat(fd, name, DIR_FLAGS);
        if (next < 0 && errno == ENOENT && make &&
            (mkdirat(fd, name, 0755) == 0 || errno == EEXIST))
            next = openat(fd, name, DIR_FLAGS);
        close_keep(fd);
        fd = next;
        i += n + 1;
    }
    return fd;
}

/* The folder holding rel (a path beneath the root), opened as
 * open_beneath does; *leaf: rel's last segment. -1 with errno. */
static int parent_of(const struct fs_store *s, const char *rel, bool make, const char **leaf)
{
    const char *slash = strrchr(rel, '/');
    *leaf = slash ? slash + 1 : rel;
    int root = root_open(s);
    if (root < 0) return -1;
    int fd = open_beneath(root, rel, slash ? (size_t)(slash - rel) : 0, make);
    close_keep(root);
    return fd;
}

/* Whether errno says a path is not there (or is not ours: a link or a
 * file where a folder should be), rather than unreadable. */
static bool not_there(void)
{
    return errno == ENOENT || errno == ENOTDIR || errno == ELOOP;
}

/* Removes the folders of rel (not its last component) that are left empty,
 * deepest first, down to its first `keep` bytes (a folder that is never
 * removed). A key's folders are made by the writer that needs them, so a
 * key with many segments leaves nothing behind once its object goes. */
static void rmdirs_for(const struct fs_store *s, const char *rel, size_t keep)
{
    char *p = xstrdup(rel);
    for (char *slash = strrchr(p, '/'); slash && (size_t)(slash - p) > keep;
         slash = strrchr(p, '/')) {
        *slash = '\0';
        const char *leaf;
        int dir = parent_of(s, p, false, &leaf);
        if (dir < 0) break;
        int r = unlinkat(dir, leaf, AT_REMOVEDIR);
        close(dir);
        if (r != 0) break; /* not empty (or gone): its parents are not either */
    }
    free(p);
}

/* A file written in .tmp: the folder it is in and its name there. */
struct tmp_file {
    int dir;
    char name[64];
};

static void tmp_drop(struct tmp_file *t)
{
    if (t->dir < 0) return;
    (void)unlinkat(t->dir, t->name, 0);
    close(t->dir);
    t->dir = -1;
}

/* Links (or renames) the temporary file t to rel, beneath the root, after
 * making the folders of rel; again when a remover took an emptied folder
 * away in between (rmdirs_for). -1 with errno. */
static int place(const struct fs_store *s, const struct tmp_file *t, const char *rel, bool by_link)
{
    for (int tries = 0;; tries++) {
        const char *leaf;
        int dir = parent_of(s, rel, true, &leaf);
        if (dir >= 0) {
            int r = by_link ? linkat(t->dir, t->name, dir, leaf, 0)
                            : renameat(t->dir, t->name, dir, leaf);
            if (r == 0 && by_link) (void)fsync(dir); /* as a put's object is durable */
            close_keep(dir);
            if (r == 0) return 0;
        }
        if (errno != ENOENT || tries == 8) return -1;
    }
}

/* Reads the first line of the small file rel (beneath the root). */
static br_err read_small(const struct fs_store *s, const char *rel, char *out, size_t cap)
{
    const char *leaf;
    int dir = parent_of(s, rel, false, &leaf);
    int fd = dir < 0 ? -1 : openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (dir >= 0) close_keep(dir);
    if (fd < 0) return not_there() ? BR_NOTFOUND : io_fail("cannot open", rel);
    ssize_t n = read(fd, out, cap - 1);
    close_keep(fd);
    if (n < 0) return io_fail("cannot read", rel);
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

/* A new file in .tmp, named obj-<pid>-<instance>-<random> after its
 * writer (0600). OUT: *t, and the open file. -1 with errno. */
static int tmp_create(const struct fs_store *s, struct tmp_file *t)
{
    const char *leaf;
    t->dir = parent_of(s, ".tmp/x", false, &leaf);
    if (t->dir < 0) return -1;
    const struct procid *me = procid_self();
    for (int tries = 0; tries < 16; tries++) {
        char rnd[UUID_LEN + 1];
        uuid_v4(rnd);
        snprintf(t->name, sizeof t->name, "obj-%ld-%s-%.8s%.4s", me->pid, me->instance, rnd,
                 rnd + 9);
        int fd =
            openat(t->dir, t->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) {
            if (fd < 0) {
                close_keep(t->dir);
                t->dir = -1;
            }
            return fd;
        }
    }
    close(t->dir);
    t->dir = -1;
    errno = EEXIST;
    return -1;
}

/* Writes data to a new temporary file in .tmp (OUT: *t, tmp_drop it).
 * Failures name the file relative to the root: the detail reaches
 * clients. */
static br_err write_tmp(struct fs_store *s, int src_fd, uint64_t size, const char *data,
                        struct tmp_file *t)
{
    int fd = tmp_create(s, t);
    if (fd < 0) return io_fail("cannot create a file in", ".tmp");
    char shown[80];
    snprintf(shown, sizeof shown, ".tmp/%s", t->name);
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
    if (rc) tmp_drop(t);
    return rc;
}

static br_err fs_ensure_bucket(struct objstore *o, const char *bucket, bool public_read,
                               uint64_t size_limit)
{
    struct fs_store *s = (struct fs_store *)o;
    char *conf = xasprintf(".buckets/%s", bucket);
    const char *leaf;
    int confs = parent_of(s, conf, false, &leaf);
    br_err rc = confs < 0 ? io_fail("cannot open", ".buckets") : BR_OK;
    if (!rc && faccessat(confs, leaf, F_OK, AT_SYMLINK_NOFOLLOW) != 0) {
        char body[64];
        snprintf(body, sizeof body, "public=%d limit=%llu\n", public_read ? 1 : 0,
                 (unsigned long long)size_limit);
        struct tmp_file tmp = {.dir = -1};
        rc = write_tmp(s, -1, 0, body, &tmp);
        if (!rc && linkat(tmp.dir, tmp.name, confs, leaf, 0) != 0 && errno != EEXIST)
            rc = io_fail("cannot create", conf);
        tmp_drop(&tmp);
        if (!rc)
            log_info("storage: created bucket %s (public=%d, limit=%llu bytes)", bucket,
                     public_read ? 1 : 0, (unsigned long long)size_limit);
    }
    if (confs >= 0) close(confs);
    /* the bucket's folder, made here and never a link (its objects are
     * reached only through it) */
    int dir = rc ? -1 : parent_of(s, bucket, false, &leaf);
    if (!rc && dir < 0) rc = io_fail("cannot open", s->root);
    if (!rc && mkdirat(dir, leaf, 0755) != 0 && errno != EEXIST)
        rc = io_fail("cannot create", bucket);
    if (!rc) {
        int b = openat(dir, leaf, DIR_FLAGS);
        if (b < 0)
            rc = io_fail("cannot open the bucket folder", bucket);
        else
            close(b);
    }
    if (dir >= 0) close(dir);
    free(conf);
    return rc;
}

static br_err bucket_limit(struct fs_store *s, const char *bucket, uint64_t *limit)
{
    char *conf = xasprintf(".buckets/%s", bucket);
    char line[128];
    br_err rc = read_small(s, conf, line, sizeof line);
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
    char *path = xasprintf("%s/%s", bucket, key);
    char *meta = xasprintf(".meta/%s/%s", bucket, key);
    struct tmp_file tmp = {.dir = -1}, tmp_meta = {.dir = -1};
    rc = write_tmp(s, fd, size, NULL, &tmp);
    if (!rc) rc = write_tmp(s, -1, 0, type, &tmp_meta);
    if (!rc && place(s, &tmp, path, true) != 0) {
        rc = errno == EEXIST ? err_set(BR_CONFLICT, "el objeto ya existe")
                             : io_fail("cannot store", key);
    }
    /* the object is new and ours: its metadata may replace a stale leftover */
    if (!rc && place(s, &tmp_meta, meta, false) != 0) {
        rc = io_fail("cannot store metadata of", key);
        const char *leaf;
        int dir = parent_of(s, path, false, &leaf);
        if (dir >= 0) {
            (void)unlinkat(dir, leaf, 0);
            close(dir);
        }
    }
    tmp_drop(&tmp);
    tmp_drop(&tmp_meta);
    free(path);
    free(meta);
    return rc;
}

static br_err fs_get(struct objstore *o, const char *bucket, const char *key, struct obj_info *out)
{
    struct fs_store *s = (struct fs_store *)o;
    char *path = xasprintf("%s/%s", bucket, key);
    const char *leaf;
    int dir = parent_of(s, path, false, &leaf);
    int fd = dir < 0 ? -1 : openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (dir >= 0) close_keep(dir);
    free(path);
    if (fd < 0) {
        if (not_there()) return err_set(BR_NOTFOUND, "no such object");
        return io_fail("cannot open", key);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return err_set(BR_NOTFOUND, "no such object");
    }
    char *meta = xasprintf(".meta/%s/%s", bucket, key);
    char ct[256];
    if (read_small(s, meta, ct, sizeof ct) != BR_OK || !obj_content_type_valid(ct))
        snprintf(ct, sizeof ct, "application/octet-stream");
    free(meta);
    out->fd = fd;
    out->size = (uint64_t)sb.st_size;
    out->content_type = xstrdup(ct);
    return BR_OK;
}

/* Removes the file rel beneath the root; one that is not there (nor
 * anything of the store's: a link on its way) is removed already. */
static int remove_file(const struct fs_store *s, const char *rel)
{
    const char *leaf;
    int dir = parent_of(s, rel, false, &leaf);
    if (dir < 0) return not_there() ? 0 : -1;
    int r = unlinkat(dir, leaf, 0);
    close_keep(dir);
    return r != 0 && errno != ENOENT ? -1 : 0;
}

static br_err fs_remove(struct objstore *o, const char *bucket, const char *key)
{
    struct fs_store *s = (struct fs_store *)o;
    char *path = xasprintf("%s/%s", bucket, key);
    char *meta = xasprintf(".meta/%s/%s", bucket, key);
    br_err rc = BR_OK;
    if (remove_file(s, path) != 0) rc = io_fail("cannot remove", key);
    if (!rc && remove_file(s, meta) != 0) rc = io_fail("cannot remove metadata of", key);
    if (!rc) {
        rmdirs_for(s, path, strlen(bucket));
        rmdirs_for(s, meta, strlen(".meta/") + strlen(bucket));
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

/* Removes the regular files of the folder fd (taken; named dir in what is
 * reported) that leftover(ud, name) picks, calling removed for each. */
static br_err sweep_fd(int fd, const char *dir, bool (*leftover)(void *ud, const char *name),
                       void *lud, obj_removed_fn removed, void *ud)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        br_err e = io_fail("cannot list", dir);
        close(fd);
        return e;
    }
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

/* sweep_fd on the folder at path dir (a missing one is empty). */
static br_err sweep_dir(const char *dir, bool (*leftover)(void *ud, const char *name), void *lud,
                        obj_removed_fn removed, void *ud)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? BR_OK : io_fail("cannot list", dir);
    return sweep_fd(fd, dir, leftover, lud, removed, ud);
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
    const char *leaf;
    int fd = parent_of(s, ".tmp/x", false, &leaf);
    char *dir = xasprintf("%s/.tmp", s->root);
    struct tmp_sweep t = {gone, ud};
    br_err rc = fd < 0 ? (errno == ENOENT ? BR_OK : io_fail("cannot list", dir))
                       : sweep_fd(fd, dir, tmp_leftover, &t, removed, ud);
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

/* fn for every regular file under the folder fd (taken), its key being
 * prefix + its path below it (key holds prefix's bytes, room for a whole
 * key); links are never followed. */
static br_err each_under(int fd, char *key, size_t len, obj_key_fn fn, void *ud)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        br_err e = io_fail("cannot list", len ? key : "a bucket");
        close(fd);
        return e;
    }
    br_err rc = BR_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t n = strlen(e->d_name);
        if (len + n + 2 > OBJKEY_MAX + 1) continue; /* no key of ours is that long */
        memcpy(key + len, e->d_name, n + 1);
        struct stat sb;
        bool seen = fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
        if (seen && S_ISDIR(sb.st_mode)) {
            int sub = openat(dirfd(d), e->d_name, DIR_FLAGS);
            if (sub < 0) {
                if (!not_there()) rc = io_fail("cannot list", key);
                continue;
            }
            key[len + n] = '/';
            key[len + n + 1] = '\0';
            rc = each_under(sub, key, len + n + 1, fn, ud);
        } else if (seen && S_ISREG(sb.st_mode)) {
            rc = fn(ud, key);
        }
    }
    closedir(d);
    return rc;
}

static br_err fs_each(struct objstore *o, const char *bucket, obj_key_fn fn, void *ud)
{
    struct fs_store *s = (struct fs_store *)o;
    char *rel = xasprintf("%s/x", bucket);
    const char *leaf;
    int fd = parent_of(s, rel, false, &leaf);
    free(rel);
    if (fd < 0) return errno == ENOENT ? BR_OK : io_fail("cannot list the bucket", bucket);
    char key[OBJKEY_MAX + 1] = "";
    return each_under(fd, key, 0, fn, ud);
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

/* Whether the folder at (name beneath the folder at; "." for at itself) is
 * one the store may use: a folder, never a link, writable. -1 with errno. */
static int usable_dir(int at, const char *name)
{
    int fd = openat(at, name, DIR_FLAGS);
    if (fd < 0) return -1;
    int r = faccessat(fd, ".", W_OK, 0);
    close_keep(fd);
    return r;
}

br_err objstore_fs_open(const char *dir, struct objstore **out)
{
    /* the root (the operator's: it may be a link) and its own folders:
     * made when absent, those never links (the store resolves nothing
     * through one) */
    const char *sub[] = {".", ".tmp", ".meta", ".buckets"};
    int root = dirs_make(dir, 0755, true) == 0 ? open(dir, ROOT_FLAGS) : -1;
    for (size_t i = 0; i < ARRAY_LEN(sub); i++) {
        int r = root < 0 ? -1 : 0;
        if (!r && i > 0 && mkdirat(root, sub[i], 0755) != 0 && errno != EEXIST) r = -1;
        if (!r) r = usable_dir(root, sub[i]);
        if (r != 0) {
            char *d = i ? xasprintf("%s/%s", dir, sub[i]) : xstrdup(dir);
            struct stat sb;
            br_err e = i > 0 && lstat(d, &sb) == 0 && S_ISLNK(sb.st_mode)
                           ? err_set(BR_CONFIG,
                                     "object store folder %s is a symbolic link (the folder "
                                     "store follows none)",
                                     d)
                           : err_set(BR_CONFIG, "object store folder %s is not writable: %s", d,
                                     strerror(errno));
            free(d);
            if (root >= 0) close(root);
            return e;
        }
    }
    close(root);
    struct fs_store *s = xcalloc(1, sizeof *s);
    s->base.ops = &fs_ops;
    s->root = xstrdup(dir);
    *out = &s->base;
    return BR_OK;
}
