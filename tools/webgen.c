/*
 * webgen.c - build-time generator: embeds the web app (web/) into the
 * binary as a C source file.
 *
 *   webgen OUT.c SRC_DIR SHELL FILE...
 *
 * FILEs are the assets, listed so that each comes after every asset it
 * names; SHELL (the HTML page) comes last. Each asset gets a content-hashed
 * name ("book.js" -> "book.3f2a9c01d4.js"): before it is hashed, every
 * reference in it to an earlier asset ("/book.js" followed by a quote or a
 * parenthesis, as in "./book.js" or "/app/book.js") is rewritten to the
 * hashed name, so a change anywhere changes the name of everything that
 * leads to it. The output defines web_assets[] and web_shell (see
 * src/api/web.h). Each file is also stored gzip-compressed (zlib, level 9,
 * the header's time 0: the same bytes on every build) when that is smaller,
 * for the browsers that accept it. A C compiler and zlib are all a build
 * needs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_FILES 64

struct asset {
    char name[128];   /* as in web/ */
    char hashed[160]; /* name.<hash>.ext */
    char hex[17];     /* the content hash, 10 hex digits */
    unsigned char *data;
    size_t len;
    unsigned char *gz; /* data gzip-compressed; NULL when that is no smaller */
    size_t gzlen;
};

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "webgen: %s: %s\n", what, detail);
    exit(1);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) die(path, strerror(errno));
    size_t cap = 4096, n = 0;
    unsigned char *p = malloc(cap);
    if (!p) die("malloc", "out of memory");
    for (;;) {
        if (n == cap) {
            cap *= 2;
            unsigned char *q = realloc(p, cap);
            if (!q) die("realloc", "out of memory");
            p = q;
        }
        size_t k = fread(p + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    if (ferror(f)) die(path, "read error");
    fclose(f);
    *len = n;
    return p;
}

/* FNV-1a, 64 bits: a content fingerprint (not a security measure). */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Replaces, in *data, every "/<from>" followed by a quote or ')' with
 * "/<to>". */
static void rewrite(unsigned char **data, size_t *len, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to);
    size_t cap = *len * 2 + 1024, n = 0;
    unsigned char *out = malloc(cap);
    if (!out) die("malloc", "out of memory");
    const unsigned char *p = *data;
    size_t i = 0;
    while (i < *len) {
        if (n + tl + 2 > cap) {
            cap *= 2;
            unsigned char *q = realloc(out, cap);
            if (!q) die("realloc", "out of memory");
            out = q;
        }
        if (p[i] == '/' && i + 1 + fl < *len && !memcmp(p + i + 1, from, fl) &&
            (p[i + 1 + fl] == '"' || p[i + 1 + fl] == '\'' || p[i + 1 + fl] == ')')) {
            out[n++] = '/';
            memcpy(out + n, to, tl);
            n += tl;
            i += 1 + fl;
            continue;
        }
        out[n++] = p[i++];
    }
    free(*data);
    *data = out;
    *len = n;
}

static const char *content_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot) return "application/octet-stream";
    if (!strcmp(dot, ".js")) return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css")) return "text/css; charset=utf-8";
    if (!strcmp(dot, ".html")) return "text/html; charset=utf-8";
    if (!strcmp(dot, ".svg")) return "image/svg+xml";
    if (!strcmp(dot, ".png")) return "image/png";
    if (!strcmp(dot, ".webmanifest")) return "application/manifest+json";
    return "application/octet-stream";
}

/* a->data gzip-compressed into a->gz, kept only when it saves bytes. */
static void compress_gz(struct asset *a)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: a gzip wrapper (RFC 1952) around the deflate stream */
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        die("deflateInit2", a->name);
    gz_header h;
    memset(&h, 0, sizeof h);
    h.os = 3; /* Unix, wherever it is built */
    if (deflateSetHeader(&z, &h) != Z_OK) die("deflateSetHeader", a->name);
    size_t cap = deflateBound(&z, a->len) + 32;
    unsigned char *out = malloc(cap);
    if (!out) die("malloc", "out of memory");
    z.next_in = a->data;
    z.avail_in = (uInt)a->len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) die("deflate", a->name);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    if (n >= a->len) {
        free(out);
        return;
    }
    a->gz = out;
    a->gzlen = n;
}

static void emit(FILE *o, const char *id, const unsigned char *p, size_t len)
{
    fprintf(o, "static const unsigned char %s[%zu] = {", id, len + 1);
    for (size_t i = 0; i < len; i++)
        fprintf(o, "%s%u,", i % 24 ? "" : "\n", p[i]);
    fprintf(o, "0};\n");
}

/* One web_asset initializer: the bytes d<k> (and z<k>, compressed). */
static void emit_asset(FILE *o, const char *name, int k, const struct asset *a)
{
    fprintf(o, "{\"%s\", \"%s\", d%d, %zu, \"\\\"%s\\\"\"", name, content_type(a->name), k, a->len,
            a->hex);
    if (a->gz)
        fprintf(o, ", z%d, %zu, \"\\\"%s-gz\\\"\"}", k, a->gzlen, a->hex);
    else
        fprintf(o, ", NULL, 0, NULL}");
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: webgen OUT.c SRC_DIR SHELL [FILE...]\n");
        return 2;
    }
    const char *out_path = argv[1], *dir = argv[2];
    int nfiles = argc - 3; /* the shell is the last */
    if (nfiles > MAX_FILES) die("too many files", argv[argc - 1]);
    static struct asset as[MAX_FILES];
    /* argv[3] is the shell, then the assets: process the assets first */
    for (int k = 0; k < nfiles; k++) {
        int ai = k + 1 < nfiles ? k + 4 : 3;
        struct asset *a = &as[k];
        if (strlen(argv[ai]) >= sizeof a->name || strchr(argv[ai], '/') || argv[ai][0] == '.')
            die("bad file name", argv[ai]);
        snprintf(a->name, sizeof a->name, "%s", argv[ai]);
        size_t plen = strlen(dir) + strlen(a->name) + 2;
        char *path = malloc(plen);
        if (!path) die("malloc", "out of memory");
        snprintf(path, plen, "%s/%s", dir, a->name);
        a->data = slurp(path, &a->len);
        free(path);
        for (int j = 0; j < k; j++)
            rewrite(&a->data, &a->len, as[j].name, as[j].hashed);
        char *hex = a->hex;
        snprintf(hex, sizeof a->hex, "%016" PRIx64, fnv1a(a->data, a->len));
        hex[10] = '\0';
        const char *dot = strrchr(a->name, '.');
        size_t base = dot ? (size_t)(dot - a->name) : strlen(a->name);
        /* built aside: GCC cannot tell the members apart (-Wrestrict at -O0) */
        char hashed[sizeof a->hashed];
        if (snprintf(hashed, sizeof hashed, "%.*s.%s%s", (int)base, a->name, hex, dot ? dot : "") >=
            (int)sizeof hashed)
            die("name too long", a->name);
        memcpy(a->hashed, hashed, sizeof hashed);
        compress_gz(a);
    }
    FILE *o = fopen(out_path, "w");
    if (!o) die(out_path, strerror(errno));
    fprintf(o, "/* Generated by tools/webgen.c from web/: do not edit. */\n"
               "#include \"api/web.h\"\n\n");
    char id[32];
    for (int k = 0; k < nfiles; k++) {
        snprintf(id, sizeof id, "d%d", k);
        emit(o, id, as[k].data, as[k].len);
        if (!as[k].gz) continue;
        snprintf(id, sizeof id, "z%d", k);
        emit(o, id, as[k].gz, as[k].gzlen);
    }
    fprintf(o, "\nconst struct web_asset web_assets[] = {\n");
    for (int k = 0; k + 1 < nfiles; k++) {
        fprintf(o, "    ");
        emit_asset(o, as[k].hashed, k, &as[k]);
        fprintf(o, ",\n");
    }
    fprintf(o, "};\nconst size_t web_nassets = %d;\n", nfiles - 1);
    fprintf(o, "const struct web_asset web_shell = ");
    emit_asset(o, as[nfiles - 1].name, nfiles - 1, &as[nfiles - 1]);
    fprintf(o, ";\n");
    if (fclose(o)) die(out_path, strerror(errno));
    for (int k = 0; k < nfiles; k++) {
        free(as[k].data);
        free(as[k].gz);
    }
    return 0;
}
