/*
 * backup.h - `barberia backup` and `barberia restore` on the embedded
 * defaults. A backup folder is a data folder of its own: barberia.db, an
 * online copy of the live database (SQLite's backup API: one consistent
 * snapshot, taken while `serve` runs), and storage/, the folder store
 * holding every photo that copy names, read from whatever object store the
 * settings name. `serve --data DIR` runs on it as it is. On PostgreSQL the
 * database's own tools do the database's part (docs/operations.md); a
 * `barberia export` works on every backend.
 */
#ifndef BR_BACKUP_H
#define BR_BACKUP_H

#include "app.h"
#include "transfer.h"

/* Writes a backup of app's data into dir, which must not exist yet (or be
 * empty). BR_CONFIG on a database with tools of its own. */
br_err backup_write(struct app *app, const char *dir, struct transfer_stats *st) WARN_UNUSED;

/* Restores the backup in dir into app, which must hold no data yet: the
 * photos first (into app's object store), then the database in one step;
 * on a failure the photos stored are removed again. */
br_err backup_restore(struct app *app, const char *dir, struct transfer_stats *st) WARN_UNUSED;

#endif
