/*
 * photos.c - appointment photos (see photos.h).
 *
 * The three-per-tipo rule is checked twice, like the booking's slot: a plain
 * count in the specification's place (step 6), and again inside the write
 * transaction that inserts the record, so that racing uploads can never
 * leave more than three. An upload that loses that race removes the object
 * it stored and answers as if it had seen the count at step 6.
 *
 * The uploader's quota (BARBERIA_PHOTO_QUOTA_BYTES: the bytes of photos one
 * user may keep, whatever the tipo or the cita) is checked the same way,
 * after every check of the specification: before the object is stored,
 * and again in the record's transaction, where one uploader's uploads take
 * turns. Deleting a photo frees its share at once (the sum is of the
 * records that exist).
 *
 * Nothing is half-done after a crash, thanks to durable intents
 * (store.h's obj_intent, finished by core/sweeper.c when their process is
 * gone):
 * - upload: the put intent is committed before the object is written (which
 *   also reserves the key), and cleared in the transaction that inserts the
 *   record. A crash before that commit leaves an intent whose object the
 *   sweeper removes; after it, a whole photo.
 * - delete: the record is deleted and the delete intent recorded in one
 *   transaction, then the object is removed, then the intent cleared. A
 *   crash leaves the photo whole or gone from the API, never a listed
 *   record whose URL is 404.
 */
#include "photos.h"
#include "sweeper.h"
#include "../util/log.h"
#include "../util/mediatype.h"
#include "../util/metrics.h"
#include "../util/objkey.h"
#include "../util/procid.h"
#include "../util/vec.h"
#include "../util/worker.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool missing(const char *s)
{
    return !s || !*s;
}

char *photo_ext(const char *filename)
{
    const char *dot = filename ? strrchr(filename, '.') : NULL;
    if (!dot || !dot[1]) return xstrdup("jpg");
    char *ext = xstrdup(dot + 1);
    for (char *p = ext; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    return ext;
}

char *photo_key(const char *user_id, const char *cita_id, const char *tipo, int64_t epoch_ms,
                const char *ext)
{
    return xasprintf("%s/%s/%s-%" PRId64 ".%s", user_id, cita_id, tipo, epoch_ms, ext);
}

char *photo_public_url(const char *public_url, const char *key)
{
    char *enc = objkey_url_encode(key);
    char *url = xasprintf("%s/storage/v1/object/public/" PHOTO_BUCKET "/%s", public_url, enc);
    free(enc);
    return url;
}

/* The bucket is made once per process; later uploads skip the check. */
static atomic_bool bucket_ready;

static br_err ensure_bucket(struct app *app)
{
    if (atomic_load(&bucket_ready)) return BR_OK;
    br_err rc = obj_ensure_bucket(app->obj, PHOTO_BUCKET, true, PHOTO_BUCKET_LIMIT);
    if (!rc) atomic_store(&bucket_ready, true);
    return rc;
}

/* A new intent of this process on an object of the photo bucket. OUT: *in
 * (its strings borrowed from key and procid_self()). */
static void new_intent(struct obj_intent *in, const char *op, char *key)
{
    const struct procid *me = procid_self();
    memset(in, 0, sizeof *in);
    uuid_v4(in->id);
    in->bucket = (char *)PHOTO_BUCKET;
    in->key = key;
    in->op = (char *)op;
    in->node = (char *)me->node;
    in->pid = me->pid;
    in->instance = (char *)me->instance;
    iso8601_format(clock_now_ms(), in->created_at);
}

static br_err delete_intent_on(void *ud, const struct obj_intent *in)
{
    const char *key = ud;
    return !strcmp(in->op, "delete") && !strcmp(in->bucket, PHOTO_BUCKET) && !strcmp(in->key, key)
               ? BR_CONFLICT /* found: the walk stops */
               : BR_OK;
}

br_err photos_deleted_since(struct store *live, const char *key, bool *deleted)
{
    *deleted = false;
    bool stands = false;
    br_err rc = store_foto_path_exists(live, key, &stands);
    if (!rc && stands) {
        rc = store_intents_each(live, delete_intent_on, (void *)key);
        if (rc == BR_CONFLICT) {
            stands = false;
            rc = BR_OK;
        }
    }
    if (!rc) *deleted = !stands;
    return rc;
}

/* --- bulk writers -------------------------------------------------------------- */

struct photos_bulk {
    struct app *app;
    struct worker *lease; /* renews this process's lease */
    /* what photos_bulk_put stored: each key and its intent's id */
    struct bulk_put {
        char *key;
        br_id intent;
    } * puts;
    size_t nputs, puts_cap;
};

/* every sweeper counts a lease as lapsed after 3 of its intervals, of at
 * least 100 ms (BARBERIA_SWEEP_INTERVAL_MS): renewed at that pace, no node
 * takes a live bulk writer's intents */
#define BULK_LEASE_EVERY_MS 100

static void lease_run(struct worker *w, void *ud)
{
    struct photos_bulk *b = ud;
    while (!worker_stopping(w)) {
        sweep_lease_renew(b->app); /* logged; the next turn tries again */
        worker_nap(w, BULK_LEASE_EVERY_MS);
    }
}

br_err photos_bulk_begin(struct app *app, struct photos_bulk **out)
{
    *out = NULL;
    /* an earlier writer that crashed: its objects go before this one's
     * come (the lease this renews is the one the thread keeps); another
     * node's lease lapses as its own sweeper counts it, after 3 of the
     * shop's sweep intervals */
    int64_t lease_ms = 3 * (int64_t)(app->cfg ? app->cfg->sweep_interval_ms : 10000);
    br_err rc = sweep_intents(app, lease_ms, NULL);
    if (rc) return rc;
    /* then the folder store must hold no photo: it is the data folder's
     * own (an S3 bucket may be shared, its other objects never touched) */
    bool any = false;
    if (!app->cfg || !app->cfg->storage_url)
        rc = obj_bucket_holds_any(app->obj, PHOTO_BUCKET, &any);
    if (!rc && any)
        rc = err_set(BR_CONFLICT,
                     "the target's folder store already holds photos (storage/%s): it must be "
                     "empty",
                     PHOTO_BUCKET);
    if (rc) return rc;
    struct photos_bulk *b = xcalloc(1, sizeof *b);
    b->app = app;
    if (!worker_start(lease_run, b, &b->lease)) {
        free(b);
        return err_set(BR_INTERNAL, "cannot start the lease thread");
    }
    *out = b;
    return BR_OK;
}

static void settle_intent(struct app *app, const struct obj_intent *in, bool done);

br_err photos_bulk_put(struct photos_bulk *b, const char *key, const char *content_type, int fd,
                       uint64_t size)
{
    struct obj_intent in;
    new_intent(&in, "put", (char *)key); /* borrowed for the call */
    br_err rc = store_intent_add(b->app->store, &in);
    if (rc) return rc;
    rc = obj_put(b->app->obj, PHOTO_BUCKET, key, content_type, fd, size);
    if (rc) {
        /* a failed put leaves no object behind, and an object that was
         * already there (BR_CONFLICT) is not this writer's: no sweep may
         * ever remove it, so its intent goes at once */
        struct err_kept why;
        err_keep(&why);
        settle_intent(b->app, &in, true);
        return err_restore(rc, &why);
    }
    VEC_RESERVE(b->puts, b->nputs, b->puts_cap, 64);
    b->puts[b->nputs].key = xstrdup(key);
    memcpy(b->puts[b->nputs].intent, in.id, sizeof in.id);
    b->nputs++;
    return BR_OK;
}

void photos_bulk_undo(struct photos_bulk *b)
{
    if (!b) return;
    const struct procid *me = procid_self();
    for (size_t i = 0; i < b->nputs; i++) {
        br_err rc = obj_remove(b->app->obj, PHOTO_BUCKET, b->puts[i].key);
        /* gone: nothing is left for the intent to finish; else a sweep
         * removes the object later, under the intent that stays */
        if ((rc == BR_OK || rc == BR_NOTFOUND) &&
            store_intent_clear(b->app->store, b->puts[i].intent, me->instance) != BR_OK)
            log_warn("fotos: could not clear the intent of %s: %s (a sweep finishes it)",
                     b->puts[i].key, err_msg());
    }
}

void photos_bulk_pause(struct photos_bulk *b)
{
    if (!b) return;
    worker_stop(b->lease, NULL);
    b->lease = NULL;
}

void photos_bulk_end(struct photos_bulk *b, bool done)
{
    if (!b) return;
    for (size_t i = 0; i < b->nputs; i++)
        free(b->puts[i].key);
    free(b->puts);
    photos_bulk_pause(b);
    const struct procid *me = procid_self();
    if (done && store_intents_clear_all(b->app->store, me->instance) != BR_OK)
        log_warn("fotos: could not clear this process's intents: %s (a sweep finishes them)",
                 err_msg());
    /* the lease ends with the process: a sweep then finishes what is left */
    free(b);
}

/* Ends an intent: cleared when nothing is left to do (done), else disowned
 * so that the next sweep, whoever runs it, removes the object. A failure
 * here leaves the intent to the sweeper after this process ends. */
static void settle_intent(struct app *app, const struct obj_intent *in, bool done)
{
    br_err rc = done ? store_intent_clear(app->store, in->id, in->instance)
                     : store_intent_disown(app->store, in->id, in->instance);
    if (rc)
        log_error("fotos: could not %s the %s intent of %s: %s (the sweeper finishes it "
                  "once this process is gone)",
                  done ? "clear" : "disown", in->op, in->key, err_msg());
}

/* Puts the upload under a fresh key, its put intent recorded first; a key
 * that has an intent or an object already (taken in the same millisecond)
 * is never overwritten - the next millisecond is tried instead. OUT: *key
 * and *in (in->key is *key). */
static br_err put_object(struct app *app, const struct principal *caller, const char *cita_id,
                         const struct photo_upload *up, char **key, struct obj_intent *in)
{
    /* the specification does not judge tipo: one too long for a key fails
     * as any key the object store refuses */
    if (up->tipo_cut) return err_set(BR_OBJSTORE, "clave de objeto inválida");
    br_err rc = ensure_bucket(app);
    if (rc) return rc;
    char *ext = photo_ext(up->filename);
    /* the declared text is never stored: its canonical image type, or
     * application/octet-stream */
    char type[MEDIATYPE_MAX + 1];
    mediatype_stored(up->content_type, type);
    int64_t ms = clock_now_ms();
    for (int attempt = 0; attempt < 20; attempt++) {
        *key = photo_key(caller->user_id, cita_id, up->tipo, ms + attempt, ext);
        new_intent(in, "put", *key);
        rc = store_intent_add(app->store, in);
        if (rc == BR_CONFLICT) {
            free(*key);
            *key = NULL;
            continue;
        }
        if (rc == BR_INDOUBT) { /* the intent may be stored: a sweep's then */
            struct err_kept why;
            err_keep(&why);
            settle_intent(app, in, false);
            err_restore(rc, &why);
        }
        if (err_unavailable(rc)) break; /* 503: no object was written */
        if (rc) {
            rc = err_set(BR_OBJSTORE, "%s", err_msg());
            break;
        }
        rc = obj_put(app->obj, PHOTO_BUCKET, *key, type, up->fd, up->size);
        if (!rc) break;
        /* a failed put leaves no object behind, and an object that was
         * already there (BR_CONFLICT) is not this upload's */
        struct err_kept why;
        err_keep(&why);
        settle_intent(app, in, true);
        err_restore(rc, &why);
        free(*key);
        *key = NULL;
        if (rc != BR_CONFLICT) break;
    }
    free(ext);
    if (rc == BR_CONFLICT) rc = err_set(BR_OBJSTORE, "el objeto ya existe");
    return rc;
}

/* A failed store operation: BR_BUSY and BR_INDOUBT as they are (503 with
 * Retry-After: a full pool, a write lock held too long, a write whose
 * outcome is unknown), anything else the specification's 500 with the
 * store's message. */
static br_err store_failed(br_err rc)
{
    if (err_unavailable(rc)) return err_set_retry(rc, err_retry_after(), "%s", err_msg());
    return err_set(BR_STORE, "%s", err_msg());
}

br_err photos_upload(struct app *app, const struct principal *caller, const struct photo_upload *up,
                     struct foto *out)
{
    memset(out, 0, sizeof *out);
    /* 2. every part */
    if (!up->has_file || missing(up->cita_id) || missing(up->tipo))
        return err_set(BR_INVALID, "Faltan campos requeridos");
    /* 3. size */
    if (up->too_large || up->size > PHOTO_MAX_BYTES)
        return err_set(BR_INVALID, "Máximo 5MB por imagen");
    /* 4. content type (MIME types are case-insensitive) */
    if (!up->content_type || strncasecmp(up->content_type, "image/", 6) != 0)
        return err_set(BR_INVALID, "Solo se permiten imágenes");
    /* 5. the appointment, whoever owns it */
    br_id cita_id;
    bool exists = false;
    br_err rc = BR_OK;
    if (!up->cita_id_cut && uuid_parse(up->cita_id, strlen(up->cita_id), cita_id))
        rc = store_cita_exists(app->store, cita_id, &exists);
    if (rc) return store_failed(rc);
    if (!exists) return err_set(BR_NOTFOUND, "Cita no encontrada");
    /* 6. three per tipo, all uploaders together */
    int64_t count = 0;
    rc = store_fotos_count(app->store, cita_id, up->tipo, &count);
    if (rc) return store_failed(rc);
    if (count >= PHOTO_MAX_PER_TIPO) return err_set(BR_INVALID, "Máximo 3 fotos por tipo");
    /* the uploader's quota, once the specification's checks have passed */
    int64_t quota = app->cfg->photo_quota_bytes;
    if (quota > 0) {
        int64_t used = 0;
        rc = store_fotos_quota_used(app->store, caller->user_id, &used);
        if (rc) return store_failed(rc);
        if (used + store_foto_charge((int64_t)up->size) > quota)
            return err_set(BR_INVALID, PHOTO_QUOTA_MSG);
    }
    /* the cita's client has withdrawn her consent to photos (after every
     * check of the specification) */
    bool refused = false;
    rc = store_fotos_refused(app->store, cita_id, &refused);
    if (rc) return store_failed(rc);
    if (refused) return err_set(BR_FORBIDDEN, PHOTO_CONSENT_MSG);
    /* 7. the object, after its durable put intent */
    char *key = NULL;
    struct obj_intent in;
    rc = put_object(app, caller, cita_id, up, &key, &in);
    if (err_unavailable(rc)) { /* the intent could not be recorded: no object written */
        free(key);
        return store_failed(rc);
    }
    if (rc) {
        log_warn("fotos: upload for cita %s failed: %s", cita_id, err_msg());
        free(key);
        return err_set(BR_OBJSTORE, "Error al subir imagen: %s", err_msg());
    }
    /* 8. the record, and the end of the intent, in one transaction */
    uuid_v4(out->id);
    memcpy(out->cita_id, cita_id, sizeof out->cita_id);
    memcpy(out->cliente_id, caller->user_id, sizeof out->cliente_id);
    out->tipo = xstrdup(up->tipo);
    /* the store's own public address when it has one, else ours */
    out->url = obj_public_url(app->obj, PHOTO_BUCKET, key);
    if (!out->url) out->url = photo_public_url(app->public_url, key);
    out->storage_path = key;
    iso8601_format(clock_now_ms(), out->created_at);
    rc = store_foto_insert_put(app->store, out, (int64_t)up->size, PHOTO_MAX_PER_TIPO, quota, &in);
    if (rc == BR_INDOUBT) {
        /* the record may be stored: the object stays, and a sweep decides
         * by whether a record names it */
        struct err_kept why;
        err_keep(&why);
        log_error("fotos: whether the record of %s for cita %s was stored is unknown: %s", key,
                  cita_id, why.msg);
        settle_intent(app, &in, false);
        foto_clear(out);
        return err_restore(BR_INDOUBT, &why);
    }
    if (rc) {
        struct err_kept why;
        err_keep(&why);
        bool removed = obj_remove(app->obj, PHOTO_BUCKET, key) == BR_OK;
        if (removed) metric_inc(M_PHOTOS_REMOVED);
        if (!removed)
            log_error("fotos: could not remove object %s after a failed insert: %s", key,
                      err_msg());
        settle_intent(app, &in, removed);
        foto_clear(out);
        if (rc == BR_CONFLICT) return err_set(BR_INVALID, "Máximo 3 fotos por tipo");
        if (rc == BR_FORBIDDEN) return err_set(BR_FORBIDDEN, PHOTO_CONSENT_MSG); /* meanwhile */
        if (rc == BR_TOOLARGE) return err_set(BR_INVALID, PHOTO_QUOTA_MSG);
        if (rc == BR_UNAUTH) return err_set(BR_UNAUTH, "No autenticado"); /* closed meanwhile */
        log_error("fotos: storing the record for cita %s failed: %s", cita_id, why.msg);
        if (rc == BR_BUSY) return err_restore(BR_BUSY, &why);
        return err_set(BR_STORE, "%s", why.msg);
    }
    metric_inc(M_PHOTOS_STORED);
    return BR_OK;
}

br_err photos_list(struct app *app, const char *cita_id, store_foto_fn fn, void *ud)
{
    if (missing(cita_id)) return err_set(BR_INVALID, "Falta cita_id");
    br_id id;
    if (!uuid_parse(cita_id, strlen(cita_id), id)) return BR_OK; /* no such cita: no photos */
    br_err rc = store_fotos_each(app->store, id, fn, ud);
    if (rc) return store_failed(rc);
    return BR_OK;
}

/* A photo's deletion whose outcome is unknown: its object stays, and its
 * delete intent (stored or not, with the record's deletion) is disowned,
 * so that a sweep removes the object exactly when no record names it. */
static void delete_in_doubt(struct app *app, const struct obj_intent *in)
{
    struct err_kept why;
    err_keep(&why);
    log_error("fotos: whether the record of %s was deleted is unknown: %s", in->key, why.msg);
    settle_intent(app, in, false);
    err_restore(BR_INDOUBT, &why);
}

/* Deletes photo f: its record goes and the delete intent comes in one
 * transaction, then the object follows. BR_NOTFOUND (no message) when a
 * racing delete won. */
static br_err erase(struct app *app, const struct foto *f)
{
    struct obj_intent in;
    new_intent(&in, "delete", f->storage_path);
    br_err rc = store_foto_delete(app->store, f->id, &in);
    if (rc == BR_NOTFOUND) return rc;
    if (rc == BR_INDOUBT) delete_in_doubt(app, &in);
    if (rc) return store_failed(rc);
    /* the photo is gone from the API; its object follows */
    bool removed = obj_remove(app->obj, PHOTO_BUCKET, f->storage_path) == BR_OK;
    if (removed) metric_inc(M_PHOTOS_REMOVED);
    if (!removed)
        log_error("fotos: removing object %s failed: %s (left to the sweeper)", f->storage_path,
                  err_msg());
    settle_intent(app, &in, removed);
    return BR_OK;
}

br_err photos_delete(struct app *app, const struct principal *caller, const char *id_text)
{
    if (missing(id_text)) return err_set(BR_INVALID, "Falta id");
    br_id id;
    if (!uuid_parse(id_text, strlen(id_text), id))
        return err_set(BR_NOTFOUND, "Foto no encontrada");
    struct foto f;
    br_err rc = store_foto_get_owned(app->store, id, caller->user_id, &f);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Foto no encontrada");
    if (rc) return store_failed(rc);
    rc = erase(app, &f);
    if (rc == BR_NOTFOUND) rc = err_set(BR_NOTFOUND, "Foto no encontrada");
    foto_clear(&f);
    return rc;
}

struct retype_walk {
    struct app *app;
    photos_retyped_fn fn;
    void *ud;
    struct photos_retype_stats *st;
};

static br_err retype_one(void *ud, const char *key)
{
    struct retype_walk *w = ud;
    bool named = false, changed = false;
    br_err rc = store_foto_path_exists(w->app->store, key, &named);
    if (rc) return rc;
    if (!named) {
        w->st->skipped++; /* an upload in flight, or a leftover the sweeper owns */
        return BR_OK;
    }
    w->st->checked++;
    rc = obj_retype(w->app->obj, PHOTO_BUCKET, key, &changed);
    if (rc == BR_NOTFOUND) return BR_OK; /* deleted meanwhile */
    if (rc || !changed) return rc;
    w->st->fixed++;
    if (w->fn) w->fn(w->ud, key);
    /* a copy that raced the photo's deletion may have brought the object
     * back after its removal: the record tells */
    rc = store_foto_path_exists(w->app->store, key, &named);
    if (!rc && !named) {
        rc = obj_remove(w->app->obj, PHOTO_BUCKET, key);
        if (!rc) w->st->removed++;
    }
    return rc;
}

br_err photos_retype(struct app *app, photos_retyped_fn fn, void *ud, bool *applies,
                     struct photos_retype_stats *st)
{
    memset(st, 0, sizeof *st);
    *applies = obj_retypes(app->obj);
    if (!*applies) return BR_OK;
    struct retype_walk w = {app, fn, ud, st};
    return obj_each(app->obj, PHOTO_BUCKET, retype_one, &w);
}

br_err photos_erase(struct app *app, const struct foto *f)
{
    br_err rc = erase(app, f);
    return rc == BR_NOTFOUND ? BR_OK : rc; /* a racing delete won */
}
