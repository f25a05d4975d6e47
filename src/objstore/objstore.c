/*
 * objstore.c - choosing the object store, and the checks every adapter
 * shares (see objstore.h).
 */
#include "objstore.h"
#include "../config.h"
#include "../util/objkey.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The adapters a BARBERIA_STORAGE_URL may name, by scheme; no URL is the
 * folder store in the data folder. */
static const struct {
    const char *scheme; /* with "://", matched case-insensitively */
    br_err (*open)(const struct config *cfg, struct objstore **out);
} adapters[] = {
    {"s3://", objstore_s3_open},
    {"http://", objstore_s3_open},
    {"https://", objstore_s3_open},
};

br_err objstore_open(const struct config *cfg, struct objstore **out)
{
    *out = NULL;
    if (!cfg->storage_url) {
        if (cfg->storage_public_url)
            return err_set(BR_CONFIG, "BARBERIA_STORAGE_PUBLIC_URL needs BARBERIA_STORAGE_URL: "
                                      "the folder store's photos are served by the service");
        char *dir = xasprintf("%s/storage", cfg->data_dir);
        br_err rc = objstore_fs_open(dir, out);
        free(dir);
        return rc;
    }
    for (size_t i = 0; i < ARRAY_LEN(adapters); i++) {
        size_t n = strlen(adapters[i].scheme);
        if (!strncasecmp(cfg->storage_url, adapters[i].scheme, n))
            return adapters[i].open(cfg, out);
    }
    return err_set(BR_CONFIG, "BARBERIA_STORAGE_URL: unknown scheme; expected s3://, http:// or "
                              "https:// (an S3-compatible store), or unset for the folder store");
}

/* --- the calls, each name checked here once for every adapter --------------- */

static br_err bucket_invalid(void)
{
    return err_set(BR_OBJSTORE, "nombre de bucket inválido");
}

/* Whether bucket/key could name an object in any store. */
static bool object_name_valid(const char *bucket, const char *key)
{
    return obj_bucket_valid(bucket) && objkey_valid(key, strlen(key));
}

br_err obj_ensure_bucket(struct objstore *o, const char *bucket, bool public_read,
                         uint64_t size_limit)
{
    if (!obj_bucket_valid(bucket)) return bucket_invalid();
    return o->ops->ensure_bucket(o, bucket, public_read, size_limit);
}

br_err obj_put(struct objstore *o, const char *bucket, const char *key, const char *content_type,
               int fd, uint64_t size)
{
    if (!objkey_valid(key, strlen(key))) return err_set(BR_OBJSTORE, "clave de objeto inválida");
    if (!obj_content_type_valid(content_type))
        return err_set(BR_OBJSTORE, "tipo de contenido inválido");
    if (!obj_bucket_valid(bucket)) return bucket_invalid();
    return o->ops->put(o, bucket, key, content_type, fd, size);
}

br_err obj_get(struct objstore *o, const char *bucket, const char *key, struct obj_info *out)
{
    if (!object_name_valid(bucket, key)) return err_set(BR_NOTFOUND, "no such object");
    return o->ops->get(o, bucket, key, out);
}

br_err obj_remove(struct objstore *o, const char *bucket, const char *key)
{
    if (!object_name_valid(bucket, key)) return BR_OK;
    return o->ops->remove(o, bucket, key);
}

br_err obj_each(struct objstore *o, const char *bucket, obj_key_fn fn, void *ud)
{
    if (!obj_bucket_valid(bucket)) return bucket_invalid();
    return o->ops->each(o, bucket, fn, ud);
}

static br_err found_one(void *ud, const char *key)
{
    (void)key;
    *(bool *)ud = true;
    return BR_CONFLICT; /* one is enough: the walk stops */
}

br_err obj_bucket_holds_any(struct objstore *o, const char *bucket, bool *any)
{
    *any = false;
    if (!obj_bucket_valid(bucket)) return bucket_invalid();
    if (!o->ops->each) return BR_OK;
    br_err rc = o->ops->each(o, bucket, found_one, any);
    return *any ? BR_OK : rc;
}

br_err obj_retype(struct objstore *o, const char *bucket, const char *key, bool *changed)
{
    *changed = false;
    if (!object_name_valid(bucket, key)) return err_set(BR_NOTFOUND, "no such object");
    return o->ops->retype(o, bucket, key, changed);
}
