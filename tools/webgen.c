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
 * src/api/web.h). Only the C library: nothing but a C compiler is needed at
 * build time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 64

struct asset {
    char name[128];   /* as in web/ */
    char hashed[160]; /* name.<hash>.ext */
    char hex[17];     /* the content hash, 10 hex digits */
    unsigned char *data;
    size_t len;
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

static void emit_bytes(FILE *o, const char *id, const struct asset *a)
{
    fprintf(o, "static const unsigned char %s[%zu] = {", id, a->len + 1);
    for (size_t i = 0; i < a->len; i++)
        fprintf(o, "%s%u,", i % 24 ? "" : "\n", a->data[i]);
    fprintf(o, "0};\n");
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
    }
    FILE *o = fopen(out_path, "w");
    if (!o) die(out_path, strerror(errno));
    fprintf(o, "/* Generated by tools/webgen.c from web/: do not edit. */\n"
               "#include \"api/web.h\"\n\n");
    char id[32];
    for (int k = 0; k < nfiles; k++) {
        snprintf(id, sizeof id, "d%d", k);
        emit_bytes(o, id, &as[k]);
    }
    fprintf(o, "\nconst struct web_asset web_assets[] = {\n");
    for (int k = 0; k + 1 < nfiles; k++)
        fprintf(o, "    {\"%s\", \"%s\", d%d, %zu, \"\\\"%s\\\"\"},\n", as[k].hashed,
                content_type(as[k].name), k, as[k].len, as[k].hex);
    fprintf(o, "};\nconst size_t web_nassets = %d;\n", nfiles - 1);
    const struct asset *sh = &as[nfiles - 1];
    fprintf(o, "const struct web_asset web_shell = {\"%s\", \"%s\", d%d, %zu, \"\\\"%s\\\"\"};\n",
            sh->name, content_type(sh->name), nfiles - 1, sh->len, sh->hex);
    if (fclose(o)) die(out_path, strerror(errno));
    for (int k = 0; k < nfiles; k++)
        free(as[k].data);
    return 0;
}
