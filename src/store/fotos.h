/*
 * store/fotos.h - part of the store (include store.h): photo records,
 * object intents and process leases (src/store/fotos.c).
 */
#ifndef BR_STORE_FOTOS_H
#define BR_STORE_FOTOS_H

#include "store.h"

/* --- fotos ----------------------------------------------------------------- */

br_err store_fotos_count(struct store *st, const char *cita_id, const char *tipo,
                         int64_t *count) WARN_UNUSED;

/* Inserts the photo record unless the cita already has `cap` photos of that
 * tipo, counted and inserted in one write transaction. BR_CONFLICT when
 * full (nothing written). */
br_err store_foto_insert_capped(struct store *st, const struct foto *f,
                                int cap) STORE_WRITE WARN_UNUSED;

/* store_foto_insert_capped that also records the object's size (bytes),
 * refuses the photo when its uploader would keep more than quota bytes of
 * photos (as store_fotos_quota_used counts them, with this one; quota 0:
 * no limit), and clears the put intent `put` (id and instance) in the same
 * transaction, so that the record and the end of the intent commit
 * together. BR_CONFLICT when the tipo is full (checked first); BR_TOOLARGE
 * past the quota; BR_STORE when the intent is no longer this instance's (a
 * sweeper took it over): nothing written in any of these. */
br_err store_foto_insert_put(struct store *st, const struct foto *f, int64_t bytes, int cap,
                             int64_t quota, const struct obj_intent *put) STORE_WRITE WARN_UNUSED;

/* What a photo counts against its uploader's quota: its size rounded up to
 * whole blocks, as a disk stores it at least, so that a flood of tiny
 * photos is bounded too. */
#define STORE_FOTO_BLOCK 4096
static inline int64_t store_foto_charge(int64_t bytes)
{
    return (bytes + STORE_FOTO_BLOCK - 1) / STORE_FOTO_BLOCK * STORE_FOTO_BLOCK;
}

/* OUT: *bytes, what the uploader's photos count against the quota (each
 * store_foto_charge of its size; 0 for those stored before sizes were
 * recorded). */
br_err store_fotos_quota_used(struct store *st, const char *cliente_id, int64_t *bytes) WARN_UNUSED;

/* OUT: *f (clear with foto_clear). BR_NOTFOUND unless a photo with that id
 * was uploaded by cliente_id. */
br_err store_foto_get_owned(struct store *st, const char *id, const char *cliente_id,
                            struct foto *f) WARN_UNUSED;

/* Deletes the photo record and records the delete intent del for its
 * object, in one transaction. BR_NOTFOUND when there is no such record
 * (nothing written); BR_CONFLICT when the object's key already has an
 * intent. */
br_err store_foto_delete(struct store *st, const char *id,
                         const struct obj_intent *del) STORE_WRITE WARN_UNUSED;

/* OUT: *exists, whether a photo record names that object key. */
br_err store_foto_path_exists(struct store *st, const char *storage_path, bool *exists) WARN_UNUSED;

/* Deletes the photo records naming storage_path, and nothing else (no
 * intent: for a backup's own copy, whose object is gone from the live
 * store with its record). */
br_err store_foto_forget_path(struct store *st, const char *storage_path) STORE_WRITE WARN_UNUSED;

typedef br_err (*store_foto_fn)(void *ud, const struct foto *f);
/* The cita's photos by created_at. */
br_err store_fotos_each(struct store *st, const char *cita_id, store_foto_fn fn,
                        void *ud) WARN_UNUSED;

/* --- object intents and process leases ---------------------------------- */

/* Records an intent in its own committed write. BR_CONFLICT when the key
 * already has one: recording reserves the key. */
br_err store_intent_add(struct store *st, const struct obj_intent *in) STORE_WRITE WARN_UNUSED;

/* Clears intent id if instance still owns it (no error when it does not). */
br_err store_intent_clear(struct store *st, const char *id,
                          const char *instance) STORE_WRITE WARN_UNUSED;

/* Clears every intent instance owns (a bulk writer whose records are
 * committed). */
br_err store_intents_clear_all(struct store *st, const char *instance) STORE_WRITE WARN_UNUSED;

/* Gives up an intent instance owns, so that the next sweep finishes it,
 * whoever runs it (no error when instance does not own it). */
br_err store_intent_disown(struct store *st, const char *id,
                           const char *instance) STORE_WRITE WARN_UNUSED;

/* Takes intent id over from old_instance, as the process `to` names.
 * BR_NOTFOUND when it is gone or someone else took it first. */
br_err store_intent_take(struct store *st, const char *id, const char *old_instance,
                         const struct obj_intent *to) STORE_WRITE WARN_UNUSED;

typedef br_err (*store_intent_fn)(void *ud, const struct obj_intent *in);
/* Every intent, oldest first. */
br_err store_intents_each(struct store *st, store_intent_fn fn, void *ud) WARN_UNUSED;

/* Records that instance (on node, with pid) is alive at now: creates its
 * lease or renews it. */
br_err store_lease_renew(struct store *st, const char *instance, const char *node, int64_t pid,
                         const char *now) STORE_WRITE WARN_UNUSED;
/* OUT: *live, whether instance renewed its lease at or after since. */
br_err store_lease_live(struct store *st, const char *instance, const char *since,
                        bool *live) WARN_UNUSED;
/* A process's lease as store_leases_each hands it (borrowed). */
struct proc_lease {
    const char *instance, *node;
    int64_t pid;
    const char *heartbeat_at;
};

typedef br_err (*store_lease_fn)(void *ud, const struct proc_lease *l);
/* Every lease renewed at or after since, the latest first. */
br_err store_leases_each(struct store *st, const char *since, store_lease_fn fn,
                         void *ud) WARN_UNUSED;
/* Ends instance's lease (a clean stop). */
br_err store_lease_end(struct store *st, const char *instance) STORE_WRITE WARN_UNUSED;
/* Forgets the leases last renewed before `before`. */
br_err store_leases_expire(struct store *st, const char *before) STORE_WRITE WARN_UNUSED;

#endif
