/*
 * photos.h - appointment photos: the specification's POST, GET and DELETE
 * /api/fotos rules, and how a photo's object key is formed.
 */
#ifndef BR_PHOTOS_H
#define BR_PHOTOS_H

#include "app.h"

#define PHOTO_BUCKET       "fotos-citas"
#define PHOTO_MAX_BYTES    (5u * 1024 * 1024)    /* per uploaded image */
#define PHOTO_BUCKET_LIMIT (10ull * 1024 * 1024) /* per object, when the bucket is made */
#define PHOTO_MAX_PER_TIPO 3
#define PHOTO_QUOTA_MSG    "Cuota de fotos superada" /* past the uploader's quota */
#define PHOTO_CONSENT_MSG  "La clienta o el cliente de la cita no autoriza fotos" /* 403 */

/* An upload as the HTTP layer received it. */
struct photo_upload {
    bool has_file;            /* a part named "file" arrived */
    int fd;                   /* its bytes (at most PHOTO_MAX_BYTES kept), from offset 0 */
    uint64_t size;            /* bytes received, or more than kept when too_large */
    bool too_large;           /* more than PHOTO_MAX_BYTES arrived */
    const char *filename;     /* nullable, raw client text */
    const char *content_type; /* nullable */
    const char *cita_id;      /* NULL or "": missing */
    const char *tipo;         /* NULL or "": missing */
    bool cita_id_cut;         /* cita_id is the start of a longer text: no cita's id */
    bool tipo_cut;            /* tipo is the start of a longer text: no key can hold it */
};

/* Stores a photo in the specification's order. Errors (detail in
 * err_msg()): BR_INVALID "Faltan campos requeridos", "Máximo 5MB por
 * imagen", "Solo se permiten imágenes", "Máximo 3 fotos por tipo" and,
 * past the uploader's quota (app->cfg->photo_quota_bytes, after those),
 * "Cuota de fotos superada"; BR_NOTFOUND "Cita no encontrada"; BR_OBJSTORE
 * "Error al subir imagen: <detail>"; BR_STORE the store's message. OUT:
 * *out (foto_clear). */
br_err photos_upload(struct app *app, const struct principal *caller, const struct photo_upload *up,
                     struct foto *out) WARN_UNUSED;

/* The photos of a cita, oldest first. BR_INVALID "Falta cita_id". */
br_err photos_list(struct app *app, const char *cita_id, store_foto_fn fn, void *ud) WARN_UNUSED;

/* Deletes one of the caller's photos: the record and a delete intent in
 * one transaction, then the object, then the intent. Once the record is
 * gone the deletion has happened: an object that cannot be removed now is
 * left to the sweeper (logged). BR_INVALID "Falta id"; BR_NOTFOUND "Foto no
 * encontrada"; BR_STORE with the store's message. */
br_err photos_delete(struct app *app, const struct principal *caller, const char *id) WARN_UNUSED;

/* Deletes a photo whoever uploaded it (an account's deletion, a consent
 * withdrawn): the record and a delete intent in one transaction, then the
 * object, then the intent, as photos_delete. A photo already gone is no
 * error. */
br_err photos_erase(struct app *app, const struct foto *f) WARN_UNUSED;
/* What photos_retype did. */
/* A bulk writer's (import, restore) hold on the photos it stores, so that
 * a crash at any instant leaves nothing the sweeper does not finish: each
 * object gets a put intent of this process before it is written, and this
 * process's lease is renewed on a thread of its own meanwhile (so that no
 * node's sweeper takes the intents while it lives). photos_bulk_begin
 * first finishes the intents of gone processes (a crashed earlier import's
 * objects, which no record names, are removed), then refuses a folder
 * store that still holds a photo (BR_CONFLICT). OUT: *out. */
struct photos_bulk;
br_err photos_bulk_begin(struct app *app, struct photos_bulk **out) WARN_UNUSED;
/* Stores the object key of the photo bucket under a put intent of this
 * process (recorded first). When the put fails - BR_CONFLICT: the store
 * already holds an object under key, another writer's - the intent is
 * cleared at once, so that no sweep ever removes an object this writer did
 * not write. BR_CONFLICT also when another process holds an intent on
 * key. */
br_err photos_bulk_put(struct photos_bulk *b, const char *key, const char *content_type, int fd,
                       uint64_t size) WARN_UNUSED;
/* After a failure: removes every object photos_bulk_put stored (and
 * nothing else), clearing the intent of each one gone; an object that
 * cannot be removed keeps its intent for a sweep. */
void photos_bulk_undo(struct photos_bulk *b);
/* Stops renewing this process's lease (a restore, before the database it
 * replaces takes the lease's row away): photos_bulk_undo and
 * photos_bulk_end still work after it. */
void photos_bulk_pause(struct photos_bulk *b);
/* Ends the hold: with done, the records naming the objects are committed
 * (or gone with the database the writer replaced) and the intents go;
 * without, they stay for a sweep, whoever runs it, to finish. NULL:
 * nothing. */
void photos_bulk_end(struct photos_bulk *b, bool done);

/* A photo whose object a copy of the shop (a backup, an export) found
 * missing: *deleted when it was deleted since the copy's snapshot (its
 * record gone from the live store, or a delete intent naming its key);
 * else the object is missing for real. */
br_err photos_deleted_since(struct store *live, const char *key, bool *deleted) WARN_UNUSED;

struct photos_retype_stats {
    int64_t checked; /* objects of the photo bucket a photo record names */
    int64_t fixed;   /* of those, objects whose stored type was rewritten */
    int64_t removed; /* rewritten while their photo was being deleted: removed again */
    int64_t skipped; /* objects no photo record names: left alone */
};
/* Called once per object photos_retype rewrote (key borrowed). */
typedef void (*photos_retyped_fn)(void *ud, const char *key);

/* Makes the stored type of every photo in a store that serves objects to
 * readers itself (S3 with BARBERIA_STORAGE_PUBLIC_URL) what an upload
 * stores today - for photos an older version stored with the declared
 * text (obj_retype). Only objects a photo record names are touched; one
 * whose record is gone once it has been rewritten (a delete that raced the
 * rewrite, which S3 may undo) is removed again. Runs beside `serve`. OUT:
 * *applies, false for a store whose objects reach readers only through the
 * service (nothing to do: the service decides the type it serves); *st.
 * fn (nullable) hears of each rewritten object. */
br_err photos_retype(struct app *app, photos_retyped_fn fn, void *ud, bool *applies,
                     struct photos_retype_stats *st) WARN_UNUSED;

/* The extension of a stored photo: the lowercased (ASCII) text after the
 * last '.' of filename, or "jpg" when there is none. Caller frees. */
char *photo_ext(const char *filename);

/* `<user_id>/<cita_id>/<tipo>-<epoch_ms>.<ext>`. Caller frees. */
char *photo_key(const char *user_id, const char *cita_id, const char *tipo, int64_t epoch_ms,
                const char *ext);

/* The public URL of an object of the photo bucket. Caller frees. */
char *photo_public_url(const char *public_url, const char *key);

#endif
