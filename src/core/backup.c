/*
 * backup.c - backups of the embedded defaults (see backup.h).
 */
#include "backup.h"
#include "sweeper.h"
#include "photos.h"
#include "../store/restore.h"
#include "../util/vec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The backup folder opened as a deployment of its own: its SQLite file
 * and its folder store. */
struct side {
    struct config cfg;
    struct store *st;
    struct objstore *obj;
};

static br_err side_open(struct side *s, const char *dir, bool store)
{
    memset(s, 0, sizeof *s);
    s->cfg.data_dir = (char *)dir;
    char *objdir = xasprintf("%s/storage", dir);
    br_err rc = objstore_fs_open(objdir, &s->obj);
    free(objdir);
    if (!rc && store) rc = store_open(&s->cfg, 1, &s->st);
    return rc;
}

static void side_close(struct side *s)
{
    store_close(s->st);
    obj_close(s->obj);
}

/* Copies the photo key from one object store to another: into a restored
 * shop's through hold (photos_bulk_put: under an intent of this process,
 * cleared at once when the store already holds the key, another writer's),
 * or straight into a new backup folder (hold NULL). */
static br_err copy_object(struct objstore *from, struct objstore *to, struct photos_bulk *hold,
                          const char *key, struct transfer_stats *st)
{
    struct obj_info info;
    br_err rc = obj_get(from, PHOTO_BUCKET, key, &info);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "the photo %s is missing", key);
    if (rc) return rc;
    rc = obj_ensure_bucket(to, PHOTO_BUCKET, true, PHOTO_BUCKET_LIMIT);
    if (!rc && hold)
        rc = photos_bulk_put(hold, key, info.content_type, info.fd, info.size);
    else if (!rc)
        rc = obj_put(to, PHOTO_BUCKET, key, info.content_type, info.fd, info.size);
    if (rc == BR_CONFLICT) rc = err_set(BR_CONFLICT, "the store already has %s", key);
    if (!rc) {
        st->objects++;
        st->bytes += (int64_t)info.size;
    }
    close(info.fd);
    free(info.content_type);
    return rc;
}

/* The photos a database names (fotos_cita.storage_path), copied from one
 * object store to another. */
struct photo_copy {
    struct objstore *from, *to;
    struct photos_bulk *hold; /* NULL: a copy into a new backup folder */
    struct store *live;       /* without: the shop's, whose photos are copied */
    char **gone;              /* without: keys deleted from the shop meanwhile */
    size_t ngone, capgone;
    int foto_table;
    struct transfer_stats *st;
    /* a restore: every row of the backup checked as an import checks an
     * export's (the kinds of the table read last, its row in key order) */
    const char *dir;
    int table;
    int64_t row;
    struct transfer_cols k;
};

/* A row of the backup a restore would copy: of its columns' kinds (a time
 * the service's, an estado one of the domain's, the links' key a key...),
 * as an import takes them, BR_INVALID naming the table, the row and the
 * column: the backup's database is copied whole, so a value no version
 * writes would be the restored shop's (a links' key that is none, and no
 * command opens it again). */
static br_err restored_row_fits(struct photo_copy *p, int table, const struct store_value *cols,
                                int n)
{
    const struct store_table *t;
    int nt = store_tables(&t);
    if (table != p->table) {
        if (table < 0 || table >= nt) return err_set(BR_STORE, "a row of no table");
        br_err rc = transfer_cols_of(table, t[table].name, t[table].cols, &p->k);
        if (rc) return rc;
        p->table = table;
        p->row = 0;
    }
    p->row++;
    for (int c = 0; c < n && c < p->k.n; c++) {
        char why[STORE_WRONG_MAX];
        const char *wrong = store_value_wrong(&p->k.kind[c], &cols[c], why);
        if (wrong)
            return err_set(BR_INVALID,
                           "%s is no backup to restore: its table %s, row %lld (in key order), "
                           "column %.*s: %s",
                           p->dir, t[table].name, (long long)p->row, (int)p->k.len[c], p->k.col[c],
                           wrong);
    }
    return BR_OK;
}

/* A photo of the backup's copy whose object is missing from the live
 * store: deleted since the snapshot (its record gone from the shop, or a
 * delete intent naming it) is left out of the copy (its key kept in
 * p->gone, the row deleted once the copy is read), BR_OK; a missing object
 * whose record still stands is BR_NOTFOUND (the detail kept). */
static br_err deleted_meanwhile(struct photo_copy *p, const char *key)
{
    struct err_kept why;
    err_keep(&why);
    bool deleted = false;
    br_err rc = photos_deleted_since(p->live, key, &deleted);
    if (rc) return rc;
    if (!deleted) return err_restore(BR_NOTFOUND, &why);
    VEC_RESERVE(p->gone, p->ngone, p->capgone, 8);
    p->gone[p->ngone++] = xstrdup(key);
    p->st->rows--;
    return BR_OK;
}

static br_err copy_row(void *ud, int table, const struct store_value *cols, int n)
{
    struct photo_copy *p = ud;
    if (p->hold) {
        br_err rc = restored_row_fits(p, table, cols, n);
        if (rc) return rc;
    }
    if (table != p->foto_table) {
        p->st->rows++;
        return BR_OK;
    }
    p->st->rows++;
    if (n < 6 || cols[5].type != STORE_TEXT) return err_set(BR_STORE, "a photo without its key");
    char *key = xstrndup(cols[5].s, cols[5].n);
    br_err rc = copy_object(p->from, p->to, p->hold, key, p->st);
    if (rc == BR_NOTFOUND && !p->hold) rc = deleted_meanwhile(p, key);
    if (rc == BR_NOTFOUND) rc = BR_OBJSTORE; /* the detail says which photo */
    free(key);
    return rc;
}

static int foto_table(void)
{
    const struct store_table *t;
    int n = store_tables(&t);
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, "fotos_cita")) return i;
    return -1;
}

br_err backup_write(struct app *app, const char *dir, struct transfer_stats *st)
{
    br_err rc = store_backup_able(app->store, false); /* before anything is made */
    if (rc) return rc;
    bool made_dir;
    rc = transfer_new_folder(dir, "a backup", &made_dir);
    if (rc) return rc;
    /* the copy's file made first, so that SQLite's copy keeps its mode */
    struct stat made;
    if (transfer_db_make(dir, &made) != 0)
        rc = errno == EEXIST
                 ? err_set(BR_IO, "%s is not empty (a backup needs a new folder)", dir)
                 : err_set(BR_IO, "cannot create %s/barberia.db: %s", dir, strerror(errno));
    char *db = xasprintf("%s/barberia.db", dir);
    if (!rc) rc = store_backup(app->store, db);
    free(db);
    /* the photos the copy names: read from the copy, so that they match */
    struct side b = {0};
    struct transfer_stats got = {0};
    if (!rc) rc = side_open(&b, dir, true);
    struct photo_copy p = {
        .from = app->obj, .to = b.obj, .live = app->store, .foto_table = foto_table(), .st = &got};
    if (!rc) rc = store_dump(b.st, copy_row, &p);
    /* the photos deleted while the backup ran: out of the copy, which is
     * this backup's own file */
    for (size_t i = 0; i < p.ngone; i++) {
        if (!rc) rc = store_foto_forget_path(b.st, p.gone[i]);
        free(p.gone[i]);
    }
    free(p.gone);
    side_close(&b);
    if (rc) {
        /* no half copy, nor files in the way of the next try: the folder
         * was new or empty, so all it holds is this backup's */
        struct err_kept why;
        err_keep(&why);
        transfer_remove_db(dir);
        transfer_remove(dir, "storage");
        if (made_dir) (void)rmdir(dir);
        err_restore(rc, &why);
    }
    if (!rc && st) *st = got;
    return rc;
}

/* A backup's own files are never symbolic links: a restore reads its
 * database and photos through them, and a link would bring any file the
 * restoring user can read into the shop (its public photo bucket). */
static br_err no_links(const char *dir)
{
    static const char *const parts[] = {"barberia.db", "storage", ("storage/" PHOTO_BUCKET)};
    for (size_t i = 0; i < ARRAY_LEN(parts); i++) {
        char *path = xasprintf("%s/%s", dir, parts[i]);
        struct stat sb;
        bool link = lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode);
        free(path);
        if (link)
            return err_set(BR_INVALID,
                           "%s is no backup to restore: its %s is a symbolic link (a backup "
                           "holds its own files)",
                           dir, parts[i]);
    }
    return BR_OK;
}

br_err backup_restore(struct app *app, const char *dir, struct transfer_stats *st)
{
    char *db = xasprintf("%s/barberia.db", dir);
    struct stat sb;
    br_err rc = stat(db, &sb) == 0 ? BR_OK : err_set(BR_INVALID, "%s is not a backup", dir);
    if (!rc) rc = no_links(dir);
    /* on a database with tools of its own, before anything is read or copied */
    if (!rc) rc = store_backup_able(app->store, true);
    bool empty = false;
    if (!rc) rc = store_is_empty(app->store, &empty);
    if (!rc && !empty)
        rc = err_set(BR_CONFLICT, "the target already holds data: a restore needs an empty one");
    /* nor may anything else be serving or loading it meanwhile */
    if (!rc) rc = sweep_alone(app, "a restore");
    struct side b = {0};
    struct transfer_stats got = {0};
    if (!rc) rc = side_open(&b, dir, true);
    /* a backup from an earlier version is brought to this version's schema
     * first (as `serve` would bring its data folder), so that its rows read
     * as this version's */
    if (!rc) rc = store_migrate(b.st);
    /* then it must be exactly this version's schema: a crafted backup's
     * own trigger or view would run in the restored shop; and the intents
     * and leases it holds are those of the shop it was taken from, which a
     * sweep of this one must never finish (both said of the copy, before
     * anything is stored or replaced) */
    if (!rc && (rc = store_restore_check(db)) == BR_INVALID) rc = err_prefix(rc, dir);
    if (!rc) rc = store_restore_forget_processes(b.st);
    struct photo_copy p = {.from = b.obj,
                           .to = app->obj,
                           .foto_table = foto_table(),
                           .st = &got,
                           .dir = dir,
                           .table = -1};
    /* each photo's intent in the target first: a crash before the database
     * is in place leaves the sweeper objects no record names, to remove */
    if (!rc) rc = photos_bulk_begin(app, &p.hold);
    if (!rc) rc = store_dump(b.st, copy_row, &p);
    side_close(&b);
    /* the database replaced takes the intents with it (no write of this
     * process's lease may meet the copy: restore runs on a stopped shop,
     * where a sweep judges this process by its pid); on a failure, what
     * this restore stored goes again, and nothing else */
    photos_bulk_pause(p.hold);
    if (!rc) rc = store_restore(app->store, db);
    if (rc) {
        struct err_kept why;
        err_keep(&why);
        photos_bulk_undo(p.hold);
        err_restore(rc, &why);
    }
    photos_bulk_end(p.hold, false);
    free(db);
    if (!rc && st) *st = got;
    return rc;
}
