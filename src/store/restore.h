/*
 * store/restore.h - part of the store (include store.h): what `barberia
 * restore` checks of a backup's database before it replaces anything, and
 * what it leaves out of the copy (src/store/restore.c).
 */
#ifndef BR_STORE_RESTORE_H
#define BR_STORE_RESTORE_H

#include "store.h"

/* Checks that the SQLite database at path (a backup's, brought to this
 * version's schema) holds exactly the schema objects this version's
 * migrations make: the same tables, indexes, triggers and views, by type,
 * name, table and SQL, so that a crafted backup brings no trigger, view,
 * table or index of its own into the shop. BR_INVALID naming the first
 * difference; nothing is written. */
br_err store_restore_check(const char *path) WARN_UNUSED;

/* Forgets every object intent and process lease: those of a backup's
 * database belong to the processes of the shop it was taken from, and a
 * sweep of the restored shop must not finish them (in a shared bucket,
 * another shop's objects). */
br_err store_restore_forget_processes(struct store *st) STORE_WRITE WARN_UNUSED;

#endif
