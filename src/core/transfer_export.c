/*
 * transfer_export.c - barberia export (see transfer.h): the shop's rows as
 * JSON lines, one file per table, and the photos' objects, from one
 * snapshot, with a manifest of counts and SHA-256 sums; and the new folder
 * an export or a backup is written into.
 */
#define _GNU_SOURCE
#include "transfer.h"
#include "photos.h"
#include "transfer_files.h"
#include "../util/iso8601.h"
#include "../util/log.h"
#include "../util/objkey.h"
#include "../util/vec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- small file helpers --------------------------------------------------------- */

/* An export holds password hashes, sessions and the links' key: its folders
 * and files are its owner's alone, whatever the umask. */
#define DIR_MODE  0700
#define FILE_MODE 0600

static br_err io_fail(const char *what, const char *path)
{
    return err_set(BR_IO, "%s %s: %s", what, path, strerror(errno));
}

/* A new file (never an existing one) open for writing, FILE_MODE. NULL (errno
 * set) when it cannot be created. */
static FILE *create_private(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, FILE_MODE);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

/* A file written with its SHA-256 and line count kept as it goes. */
struct out_file {
    FILE *f;
    char *path;
    crypto_hash_sha256_state h;
    int64_t lines;
};

static br_err out_open(struct out_file *o, const char *dir, const char *name)
{
    memset(o, 0, sizeof *o);
    o->path = xasprintf("%s/%s", dir, name);
    o->f = create_private(o->path);
    if (!o->f) return io_fail("cannot create", o->path);
    crypto_hash_sha256_init(&o->h);
    return BR_OK;
}

static br_err out_line(struct out_file *o, const char *text, size_t n)
{
    crypto_hash_sha256_update(&o->h, (const unsigned char *)text, n);
    crypto_hash_sha256_update(&o->h, (const unsigned char *)"\n", 1);
    o->lines++;
    if (fwrite(text, 1, n, o->f) != n || fputc('\n', o->f) == EOF)
        return io_fail("cannot write", o->path);
    return BR_OK;
}

/* Flushes to disk and closes. OUT: sum (hex SHA-256). */
static br_err out_close(struct out_file *o, char sum[65])
{
    br_err rc = BR_OK;
    if (o->f) {
        if (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0) rc = io_fail("cannot write", o->path);
        if (fclose(o->f) != 0 && !rc) rc = io_fail("cannot write", o->path);
        o->f = NULL;
    }
    if (sum) {
        unsigned char d[crypto_hash_sha256_BYTES];
        crypto_hash_sha256_final(&o->h, d);
        transfer_hex(d, sizeof d, sum);
    }
    free(o->path);
    o->path = NULL;
    return rc;
}

/* Copies fd (size bytes from 0) to path, hashing it. OUT: sum. */
static br_err copy_out(int fd, uint64_t size, const char *path, char sum[65])
{
    int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, FILE_MODE);
    if (out < 0) return io_fail("cannot create", path);
    crypto_hash_sha256_state h;
    crypto_hash_sha256_init(&h);
    char buf[65536];
    uint64_t done = 0;
    br_err rc = BR_OK;
    while (!rc && done < size) {
        ssize_t n = pread(fd, buf, sizeof buf, (off_t)done);
        if (n <= 0) {
            rc = err_set(BR_IO, "the object is shorter than its size");
            break;
        }
        crypto_hash_sha256_update(&h, (unsigned char *)buf, (size_t)n);
        for (ssize_t w = 0; w < n && !rc;) {
            ssize_t k = write(out, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) rc = io_fail("cannot write", path);
            w += k > 0 ? k : 0;
        }
        done += (uint64_t)n;
    }
    if (!rc && fsync(out) != 0) rc = io_fail("cannot write", path);
    close(out);
    unsigned char d[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(&h, d);
    transfer_hex(d, sizeof d, sum);
    return rc;
}

/* Makes every folder of path's parent (path itself is a file). */
static br_err make_parents(const char *path)
{
    return dirs_make(path, DIR_MODE, false) == 0 ? BR_OK
                                                 : io_fail("cannot create the folders of", path);
}

/* --- export ----------------------------------------------------------------------- */

struct exporter {
    struct app *app;
    const char *dir;
    const struct store_table *tables;
    int ntables;
    struct out_file files[TRANSFER_MAX_TABLES];
    struct out_file objects;
    int foto_table;
    struct transfer_stats st;
    /* photos whose object was missing: judged once the snapshot is read
     * (deleted since, or missing for real) */
    char **missing;
    size_t nmissing, capmissing;
};

static json_t *row_json(const struct store_value *cols, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *v = NULL;
        switch (cols[i].type) {
        case STORE_NULL:
            v = json_null();
            break;
        case STORE_INT:
            v = json_integer(cols[i].i);
            break;
        case STORE_REAL:
            v = json_real(cols[i].d);
            break;
        case STORE_TEXT:
            v = json_stringn(cols[i].s, cols[i].n); /* NULL when not UTF-8 */
            break;
        }
        if (!v || json_array_append_new(a, v) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* A photo's object, copied into objects/<bucket>/<key>. */
static br_err export_object(struct exporter *x, const char *key)
{
    if (!objkey_valid(key, strlen(key)))
        return err_set(BR_STORE, "a photo record names an invalid key: %s", key);
    struct obj_info info;
    br_err rc = obj_get(x->app->obj, PHOTO_BUCKET, key, &info);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "the photo %s is missing", key);
    if (rc) return rc;
    char *path = xasprintf("%s/objects/%s/%s", x->dir, PHOTO_BUCKET, key);
    char sum[65];
    rc = make_parents(path);
    if (!rc) rc = copy_out(info.fd, info.size, path, sum);
    close(info.fd);
    free(path);
    json_t *line = rc ? NULL
                      : json_pack("[s, s, s, I, s]", PHOTO_BUCKET, key, info.content_type,
                                  (json_int_t)info.size, sum);
    free(info.content_type);
    if (rc) return rc;
    char *text = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    rc = out_line(&x->objects, text, strlen(text));
    free(text);
    x->st.objects++;
    x->st.bytes += (int64_t)info.size;
    return rc;
}

static br_err export_row(void *ud, int table, const struct store_value *cols, int n)
{
    struct exporter *x = ud;
    json_t *row = row_json(cols, n);
    if (!row) return err_set(BR_STORE, "%s: a value that is not UTF-8 text", x->tables[table].name);
    br_err rc = BR_OK;
    /* fotos_cita: storage_path, the sixth column, names the object; a
     * photo goes with its object, or (deleted since the snapshot) not at
     * all */
    if (table == x->foto_table && n > 5 && cols[5].type == STORE_TEXT) {
        char *key = xstrndup(cols[5].s, cols[5].n);
        rc = export_object(x, key);
        if (rc == BR_NOTFOUND) {
            VEC_RESERVE(x->missing, x->nmissing, x->capmissing, 8);
            x->missing[x->nmissing++] = key;
            json_decref(row);
            return BR_OK;
        }
        free(key);
    }
    char *text = rc ? NULL : json_dumps(row, JSON_COMPACT);
    json_decref(row);
    if (text) rc = out_line(&x->files[table], text, strlen(text));
    free(text);
    if (!rc) x->st.rows++;
    return rc;
}

/* The photos whose object the export found missing: each deleted since
 * the snapshot (its record gone, or its delete intent recorded) is left
 * out, as a backup leaves it; one missing for real fails the export. */
static br_err judge_missing(struct exporter *x)
{
    br_err rc = BR_OK;
    for (size_t i = 0; i < x->nmissing; i++) {
        bool deleted = false;
        if (!rc) rc = photos_deleted_since(x->app->store, x->missing[i], &deleted);
        if (!rc && !deleted) rc = err_set(BR_OBJSTORE, "the photo %s is missing", x->missing[i]);
        if (!rc) log_info("export: photo %s deleted meanwhile: left out", x->missing[i]);
        free(x->missing[i]);
    }
    free(x->missing);
    x->missing = NULL;
    x->nmissing = 0;
    return rc;
}

static br_err write_manifest(struct exporter *x, char sums[][65], const char *objects_sum)
{
    json_t *m = json_object();
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    json_object_set_new(m, "format", json_string(TRANSFER_FORMAT));
    json_object_set_new(m, "version", json_integer(TRANSFER_VERSION));
    json_object_set_new(m, "created_at", json_string(now));
    json_object_set_new(m, "store", json_string(store_backend(x->app->store)));
    json_object_set_new(m, "objects_store", json_string(x->app->obj->ops->name));
    json_t *tables = json_array();
    for (int i = 0; i < x->ntables; i++)
        json_array_append_new(tables, json_pack("{s:s, s:s, s:I, s:s}", "name", x->tables[i].name,
                                                "columns", x->tables[i].cols, "rows",
                                                (json_int_t)x->files[i].lines, "sha256", sums[i]));
    json_object_set_new(m, "tables", tables);
    json_object_set_new(m, "objects",
                        json_pack("{s:I, s:I, s:s}", "count", (json_int_t)x->st.objects, "bytes",
                                  (json_int_t)x->st.bytes, "sha256", objects_sum));
    char *tmp = xasprintf("%s/manifest.json.tmp", x->dir);
    char *path = xasprintf("%s/manifest.json", x->dir);
    br_err rc = BR_OK;
    FILE *f = create_private(tmp);
    if (!f) {
        rc = io_fail("cannot create", tmp);
    } else {
        bool bad = json_dumpf(m, f, JSON_INDENT(2) | JSON_SORT_KEYS) != 0;
        if (fclose(f) != 0 || bad) rc = io_fail("cannot write", tmp);
    }
    if (!rc && rename(tmp, path) != 0) rc = io_fail("cannot write", path);
    json_decref(m);
    free(tmp);
    free(path);
    return rc;
}

/* A failed export takes back what it wrote (its table files, its objects
 * folder, a manifest half written) and the folder when it made it, so the
 * same command can simply run again. The folder was new or empty when it
 * began (transfer_export), so every name here is its own. */
static void export_undo(const struct exporter *x, bool made_dir)
{
    for (int i = 0; i < x->ntables; i++) {
        char *path = xasprintf("%s/%s.jsonl", x->dir, x->tables[i].name);
        unlink(path);
        free(path);
    }
    static const char *const ours[] = {"objects.jsonl", "manifest.json.tmp"};
    for (size_t i = 0; i < ARRAY_LEN(ours); i++) {
        char *path = xasprintf("%s/%s", x->dir, ours[i]);
        unlink(path);
        free(path);
    }
    transfer_remove(x->dir, "objects");
    if (made_dir && rmdir(x->dir) != 0)
        log_warn("export: could not remove %s: %s", x->dir, strerror(errno));
}

/* Whether the folder dir holds nothing. */
static bool dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d)) != NULL;)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

br_err transfer_new_folder(const char *dir, const char *what, bool *made)
{
    /* it holds password hashes, sessions and the links' key: a new folder
     * is its owner's alone, whatever the umask */
    *made = mkdir(dir, DIR_MODE) == 0;
    if (*made) return BR_OK;
    if (errno != EEXIST) return io_fail("cannot create", dir);
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return err_set(BR_IO, "%s is not a folder (%s needs a new folder)", dir, what);
    /* or an empty one: everything in it is then the command's own, and a
     * failure may take all of it back; nobody else's files end up beside it */
    if (!dir_empty(dir))
        return err_set(BR_IO, "%s is not empty (%s needs a new folder)", dir, what);
    return BR_OK;
}

br_err transfer_export(struct app *app, const char *dir, struct transfer_stats *st)
{
    bool made_dir;
    br_err rc = transfer_new_folder(dir, "an export", &made_dir);
    if (rc) return rc;
    char *objdir = xasprintf("%s/objects", dir);
    int made = mkdir(objdir, DIR_MODE);
    free(objdir);
    if (made != 0) return err_set(BR_IO, "%s is not empty (an export needs a new folder)", dir);
    struct exporter x = {.app = app, .dir = dir, .foto_table = -1};
    x.ntables = store_tables(&x.tables);
    int opened = 0;
    for (int i = 0; i < x.ntables && !rc; i++, opened++) {
        char *name = xasprintf("%s.jsonl", x.tables[i].name);
        rc = out_open(&x.files[i], dir, name);
        free(name);
        if (!strcmp(x.tables[i].name, "fotos_cita")) x.foto_table = i;
    }
    bool objects_open = false;
    if (!rc) rc = out_open(&x.objects, dir, "objects.jsonl");
    objects_open = !rc;
    if (!rc) rc = store_dump(app->store, export_row, &x);
    br_err judged = judge_missing(&x); /* the snapshot's connection given back */
    if (!rc) rc = judged;
    char sums[TRANSFER_MAX_TABLES][65], objects_sum[65];
    for (int i = 0; i < opened; i++) {
        br_err c = out_close(&x.files[i], sums[i]);
        if (!rc) rc = c;
    }
    if (objects_open) {
        br_err c = out_close(&x.objects, objects_sum);
        if (!rc) rc = c;
    }
    if (!rc) rc = write_manifest(&x, sums, objects_sum);
    if (!rc && st) *st = x.st;
    if (rc) {
        struct err_kept why;
        err_keep(&why);
        export_undo(&x, made_dir);
        rc = err_restore(rc, &why);
    }
    return rc;
}
