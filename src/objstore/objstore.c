/*
 * objstore.c - choosing the object store, and the checks every adapter
 * shares (see objstore.h).
 */
#include "objstore.h"
#include "../config.h"

#include <stdlib.h>
#include <string.h>

br_err objstore_open(const struct config *cfg, struct objstore **out)
{
    if (cfg->storage_url)
        return err_set(BR_CONFIG,
                       "BARBERIA_STORAGE_URL: the S3 backend is not part of this build yet; "
                       "unset it to use the embedded folder store");
    char *dir = xasprintf("%s/storage", cfg->data_dir);
    br_err rc = objstore_fs_open(dir, out);
    free(dir);
    return rc;
}

bool obj_content_type_valid(const char *ct)
{
    if (!ct) return false;
    size_t n = strlen(ct);
    if (n == 0 || n > 255 || !strchr(ct, '/')) return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)ct[i] < 0x20 || (unsigned char)ct[i] > 0x7e) return false;
    return true;
}

bool obj_bucket_valid(const char *b)
{
    size_t n = strlen(b);
    if (n < 3 || n > 63) return false;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '-' || c == '.') && i > 0 && i < n - 1)) return false;
    }
    return true;
}
