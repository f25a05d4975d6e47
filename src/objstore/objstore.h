/*
 * objstore.h - the object store port: buckets of immutable objects named by
 * keys (see util/objkey.h for what a key may be).
 *
 * Adapters: the folder store (fs.c, the embedded default) and any
 * S3-compatible store (s3.c); objstore.c picks one by the scheme of
 * BARBERIA_STORAGE_URL. An object is never
 * overwritten: put() of an existing key fails with BR_CONFLICT. Keys are
 * validated once, by the obj_* calls below, before any adapter sees them;
 * an invalid key fails with BR_OBJSTORE and a detail, and touches nothing.
 *
 * Thread-safety: one struct objstore may be used by any number of threads.
 */
#ifndef BR_OBJSTORE_H
#define BR_OBJSTORE_H

#include "../util/err.h"
#include "../util/objkey.h"

struct config;

/* An object opened for reading. */
struct obj_info {
    int fd; /* owned by the caller, who closes it; positioned at 0 */
    uint64_t size;
    char *content_type; /* owned by the caller */
};

/* Called by a sweep once per leftover it removed, with a one-line
 * description (path and size). */
typedef void (*obj_removed_fn)(void *ud, const char *what);
/* Whether the writer (pid and procid instance, on this node) that left a
 * temporary file is gone, so that its file is a leftover. */
typedef bool (*obj_writer_gone_fn)(void *ud, long pid, const char *instance);
/* Called once per object key of a bucket (borrowed until it returns); an
 * error stops the walk and is returned. */
typedef br_err (*obj_key_fn)(void *ud, const char *key);

struct objstore {
    const struct obj_ops *ops;
};

struct obj_ops {
    const char *name;
    /* Creates the bucket when absent (public or not, with a per-object size
     * limit in bytes); an existing bucket is left as it is. */
    br_err (*ensure_bucket)(struct objstore *o, const char *bucket, bool public_read,
                            uint64_t size_limit);
    /* Stores size bytes read from fd (from offset 0, with pread) as
     * bucket/key, with the canonical form of content_type
     * (mediatype_stored(): an image type, else application/octet-stream);
     * a store that serves objects to readers itself also stores a type
     * that is not a raster image with `Content-Disposition: attachment`.
     * BR_CONFLICT when the key exists; BR_OBJSTORE for an invalid key or
     * content type (not printable ASCII with a '/'), a missing bucket, an
     * object over the bucket's limit or an I/O failure (detail in
     * err_msg()). */
    br_err (*put)(struct objstore *o, const char *bucket, const char *key, const char *content_type,
                  int fd, uint64_t size);
    /* Opens bucket/key. BR_NOTFOUND when there is no such object (or the key
     * is invalid). */
    br_err (*get)(struct objstore *o, const char *bucket, const char *key, struct obj_info *out);
    /* Removes bucket/key; removing a missing object succeeds. */
    br_err (*remove)(struct objstore *o, const char *bucket, const char *key);
    /* Removes the temporary files of writes that never finished (a crash):
     * those whose writer gone() says is gone; a live writer's are left
     * alone. An adapter without local temporary files does nothing. */
    br_err (*sweep_tmp)(struct objstore *o, obj_writer_gone_fn gone, obj_removed_fn removed,
                        void *ud);
    /* The URL at which the store itself serves bucket/key to anyone, or
     * NULL (caller frees) when the service serves it (its own
     * /storage/v1/object/public/... URL). Optional: NULL means never. */
    char *(*public_url)(struct objstore *o, const char *bucket, const char *key);
    /* Calls fn for every object of bucket, in the store's order; stops at
     * the first error fn returns. Optional (a store without it is taken as
     * holding nothing a bulk writer must know of). */
    br_err (*each)(struct objstore *o, const char *bucket, obj_key_fn fn, void *ud);
    /* (Optional, with each: a store whose objects reach readers only
     * through the service, the folder store, has none, as the service
     * decides the type it serves when it serves it.)
     * Makes what the store holds of bucket/key's type what put stores
     * today (for objects an older version stored with the declared text),
     * the bytes untouched. OUT: *changed, whether anything was rewritten.
     * BR_NOTFOUND when there is no such object. */
    br_err (*retype)(struct objstore *o, const char *bucket, const char *key, bool *changed);
    void (*close)(struct objstore *o);
};

/* Opens the store the configuration names. OUT: *out. */
br_err objstore_open(const struct config *cfg, struct objstore **out) WARN_UNUSED;

/* The folder store rooted at dir (created when absent). */
br_err objstore_fs_open(const char *dir, struct objstore **out) WARN_UNUSED;

/* The S3-compatible store at cfg->storage_url (s3://, http:// or https://),
 * with cfg's storage_* settings; its local scratch folder is
 * <data_dir>/s3-scratch (created). Contacts nothing: an unreachable store
 * shows at the first call. BR_CONFIG for an unusable setting. */
br_err objstore_s3_open(const struct config *cfg, struct objstore **out) WARN_UNUSED;

/* Empties dir, a local scratch folder whose users drop each file's name as
 * soon as they have opened it (the HTTP upload spool): any regular file
 * with a name there is a leftover of a crash, and removing a name a live
 * user has not dropped yet does not disturb it. Calls removed per file.
 * A missing folder is empty. (In fs.c: file I/O stays in the adapters.) */
br_err obj_spool_sweep(const char *dir, obj_removed_fn removed, void *ud) WARN_UNUSED;

/* Removes the files of dir named obj-<pid>-<instance>-XXXXXX after a
 * writer that gone() says is gone (and files of any other shape); a live
 * writer's are left alone. Calls removed per file. A missing folder is
 * empty. The temporary files of fs.c and s3.c are named so. */
br_err obj_tmp_sweep(const char *dir, obj_writer_gone_fn gone, obj_removed_fn removed,
                     void *ud) WARN_UNUSED;

/* The calls into the store. An adapter is reached only through them, and
 * they check what every adapter relies on before it is called: a bucket
 * name (BR_OBJSTORE "nombre de bucket inválido"), and for put a key ("clave
 * de objeto inválida") and a content type ("tipo de contenido inválido");
 * get and retype of an invalid name answer BR_NOTFOUND, remove of one
 * succeeds, as for a missing object. Otherwise as the ops above. */
br_err obj_ensure_bucket(struct objstore *o, const char *bucket, bool public_read,
                         uint64_t size_limit);
br_err obj_put(struct objstore *o, const char *bucket, const char *key, const char *content_type,
               int fd, uint64_t size);
br_err obj_get(struct objstore *o, const char *bucket, const char *key, struct obj_info *out);
br_err obj_remove(struct objstore *o, const char *bucket, const char *key);
br_err obj_each(struct objstore *o, const char *bucket, obj_key_fn fn, void *ud);
br_err obj_retype(struct objstore *o, const char *bucket, const char *key, bool *changed);
/* OUT: *any, whether bucket holds any object (a missing bucket holds
 * none). */
br_err obj_bucket_holds_any(struct objstore *o, const char *bucket, bool *any) WARN_UNUSED;

static inline br_err obj_sweep_tmp(struct objstore *o, obj_writer_gone_fn gone,
                                   obj_removed_fn removed, void *ud)
{
    return o->ops->sweep_tmp ? o->ops->sweep_tmp(o, gone, removed, ud) : BR_OK;
}
static inline char *obj_public_url(struct objstore *o, const char *b, const char *k)
{
    return o->ops->public_url ? o->ops->public_url(o, b, k) : NULL;
}
/* Whether the store keeps object types that readers get from it directly,
 * so that obj_each and obj_retype apply. */
static inline bool obj_retypes(const struct objstore *o)
{
    return o->ops->each && o->ops->retype;
}
static inline void obj_close(struct objstore *o)
{
    if (o) o->ops->close(o);
}

#endif
