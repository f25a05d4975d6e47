/*
 * objstore.c - choosing the object store, and the checks every adapter
 * shares (see objstore.h).
 */
#include "objstore.h"
#include "../config.h"

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
