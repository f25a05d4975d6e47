/*
 * transfer.h - a shop's data and photos moved between deployments (the
 * embedded SQLite + folder, PostgreSQL + S3, any mix): `barberia export`
 * writes them to a folder, `barberia import` loads such a folder into an
 * empty deployment. Nothing is lost and nothing is half-done: the folder
 * carries a manifest with every file's row count and SHA-256, checked in
 * full before anything is written, and the rows load in one transaction.
 *
 * The folder:
 *   manifest.json        format, version (3; version 1, before the
 *                        activo, horarios and ausencias, still imports:
 *                        all active, every barber on the default week;
 *                        versions 1 and 2, before fotos_cita.bytes, get
 *                        each photo's size from its object in the export),
 *                        when, from which backends; per
 *                        table its columns, rows and SHA-256; the same for
 *                        objects.jsonl and the bytes of every object
 *   <table>.jsonl        one JSON array per row, in key order (ids, times in
 *                        the API's form: the same text from every backend)
 *   objects.jsonl        [bucket, key, content type, size, sha256] per photo
 *                        (the bucket is always the photo bucket, fotos-citas)
 *   objects/<bucket>/<key>  the photos' bytes
 */
#ifndef BR_TRANSFER_H
#define BR_TRANSFER_H

#include "app.h"

#include <sys/stat.h>
#include <sys/types.h>

struct transfer_stats {
    int64_t rows;    /* in all tables */
    int64_t objects; /* photos */
    int64_t bytes;   /* of the photos */
};

/* Writes everything to dir, which must not exist yet (or be empty), from
 * one snapshot of the database. Fails (BR_STORE, BR_OBJSTORE, BR_IO...)
 * when a photo's record names an object the store does not have. */
br_err transfer_export(struct app *app, const char *dir, struct transfer_stats *st) WARN_UNUSED;

/* Loads an export into app's stores, which must hold no data yet: checks
 * the whole folder against its manifest first (BR_INVALID on any
 * mismatch, nothing written: also for a file that is a link or not a
 * regular file, a line past its cap, an object larger than a photo, in
 * another bucket or not named by exactly one photo record, a photo record
 * whose object is not listed), stores the photos, then inserts every row
 * in one transaction (BR_INVALID, rolled back, when two live appointments
 * of a barber overlap); on failure removes the photos it stored, and only
 * those (BR_CONFLICT when the store already holds one of the keys). */
br_err transfer_import(struct app *app, const char *dir, struct transfer_stats *st) WARN_UNUSED;

/* The columns of the store's table `table` that cols names (", "
 * separated: the table's own, or an older export's fewer), each with the
 * kind its values must have (store_column_kind): what an import checks of
 * an export's rows and a restore of a backup's, before either writes. */
struct transfer_cols {
    const char *col[STORE_ROW_MAX]; /* pointing into cols, len[i] bytes */
    size_t len[STORE_ROW_MAX];
    struct store_column kind[STORE_ROW_MAX];
    int n;
};
/* BR_INVALID, naming what (the file or table) and the column, when one has
 * no known kind. */
br_err transfer_cols_of(int table, const char *what, const char *cols, struct transfer_cols *out);

/* Makes dir, a new folder private to its owner (0700), for what (an
 * export, a backup: "an export" as the messages say it), or takes an
 * existing empty one (whose mode stays). BR_IO when dir is not a folder,
 * is not empty or cannot be made. OUT: *made, whether it was made here. */
br_err transfer_new_folder(const char *dir, const char *what, bool *made) WARN_UNUSED;

/* Removes dir/name, a file or a whole folder (a warning in the log when it
 * cannot); nothing when it is not there. */
void transfer_remove(const char *dir, const char *name);
/* Removes the embedded database of the folder dir, with its side files. */
void transfer_remove_db(const char *dir);

/* Creates the embedded database file of the folder dir, empty and its
 * owner's alone (0600: SQLite would make it 0644, and its side files take
 * the file's mode), only when there is none (O_EXCL). OUT: *made, the file
 * made. 0, or -1 with errno (EEXIST: one is there). */
int transfer_db_make(const char *dir, struct stat *made);

/* What an import or a restore made of the data folder it fills. */
struct transfer_target {
    bool dir, db, storage; /* the folder, its barberia.db, its storage/ */
    bool scratch;          /* its s3-scratch/ (the S3 store's) */
    dev_t db_dev;          /* the database file made, as it was made */
    ino_t db_ino;
};
/* Before the stores open: makes what the data folder lacks of the folder
 * itself, its embedded database (db: an empty file, the owner's alone) and
 * its folder store (folder_store), or else the S3 store's scratch folder,
 * each noted only when this call creates it. */
void transfer_target_make(const char *data_dir, bool db, bool folder_store,
                          struct transfer_target *t);
/* After a failed import or restore, its stores closed: takes back what
 * transfer_target_make made (the database file only while it is still
 * that file), never what was there before or what another process made,
 * so that the same command can simply run again and a refusal leaves
 * nothing behind. */
void transfer_target_undo(const char *data_dir, const struct transfer_target *t);

#endif
