/*
 * web.h - the web app shipped inside the binary (web/, embedded at build
 * time by tools/webgen.c into web_assets.c).
 */
#ifndef BR_WEB_H
#define BR_WEB_H

#include <stddef.h>

struct web_asset {
    const char *name; /* hashed: "book.3f2a9c01d4.js"; the shell: "index.html" */
    const char *type; /* Content-Type */
    const unsigned char *data;
    size_t len;
    const char *etag; /* quoted */
    /* the same bytes gzip-compressed (Content-Encoding: gzip), with their
     * own tag; NULL, 0, NULL when compressing saves nothing */
    const unsigned char *gz;
    size_t gzlen;
    const char *gzetag;
};

extern const struct web_asset web_assets[];
extern const size_t web_nassets;
extern const struct web_asset web_shell;

#endif
