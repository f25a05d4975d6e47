/*
 * body.c - request bodies (see http.h). A JSON body accumulates in a buffer
 * capped at json_max or its route's body_max (past it: 413 at the end),
 * set when the request is routed; a multipart form goes
 * through libmicrohttpd's post processor as it streams in, its file part
 * written to an unlinked temporary file in spool_dir and dropped (truncated,
 * only counted) past file_max, its other fields kept up to FIELD_MAX bytes
 * each (a longer one is marked so, http_req_field_whole, not refused).
 *
 * The post processor has no end-of-body callback: the result of
 * MHD_destroy_post_processor() (MHD_NO: truncated or malformed) decides
 * whether an upload is whole. It may call the part iterator several times
 * at offset 0 for one part (with size 0 too, depending on how the body was
 * split into reads): a new part is recognised by its name or file name
 * changing, or by its offset going back to 0 after data.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "../util/log.h"
#include "../util/mediatype.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* What one walk over the request's headers finds about its framing. */
struct framing {
    int cl, te;  /* how many Content-Length and Transfer-Encoding headers */
    bool spaced; /* a header name with white space in it ("Name :") */
};

static enum MHD_Result framing_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    (void)kind;
    (void)value;
    struct framing *f = cls;
    if (strpbrk(key, " \t"))
        f->spaced = true;
    else if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
        f->cl++;
    else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING))
        f->te++;
    return MHD_YES;
}

bool http_body_framing_ok(struct http_req *r, unsigned *status, const char **msg)
{
    struct framing f = {0};
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, framing_header, &f);
    *status = 400;
    *msg = "Petición HTTP mal formada";
    /* a repeated header, or both: a proxy in front may take another one than
     * libmicrohttpd takes (the first) and see another end of the body */
    if (f.spaced || f.cl > 1 || f.te > 1 || (f.cl && f.te)) return false;
    const char *te = f.te ? MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                        MHD_HTTP_HEADER_TRANSFER_ENCODING)
                          : NULL;
    if (te && strcasecmp(te, "chunked") != 0) {
        *status = 501;
        *msg = "Codificación de transferencia no soportada";
        return false;
    }
    return true;
}

bool http_body_declared(struct http_req *r, uint64_t *declared, bool *known)
{
    const char *cl =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    *known = false;
    *declared = 0;
    if (cl) {
        *known = true;
        *declared = strtoull(cl, NULL, 10);
        return *declared > 0;
    }
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                       MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
}

static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size);

/* The form's boundary, from the Content-Type's boundary parameter (quoted or
 * not), as the delimiter "--<boundary>"; false when there is none or it is
 * longer than DELIM_MAX allows. */
static bool form_delimiter(struct http_req *r, const char *ct)
{
    const char *b = strcasestr(ct, "boundary=");
    if (!b) return false;
    b += 9;
    size_t n;
    if (*b == '"') {
        b++;
        const char *q = strchr(b, '"');
        if (!q) return false;
        n = (size_t)(q - b);
    } else {
        n = strcspn(b, "; \t");
    }
    if (n == 0 || n + 2 > DELIM_MAX) return false;
    memcpy(r->delim, "--", 2);
    memcpy(r->delim + 2, b, n);
    r->delim_len = n + 2;
    r->delim[r->delim_len] = '\0';
    return true;
}

/* Looks for the delimiter in the body as it streams by (it may straddle two
 * reads), until it is seen once. */
static void scan_delimiter(struct http_req *r, const char *data, size_t size)
{
    if (r->saw_delim || !r->delim_len) return;
    size_t keep = r->delim_len - 1;
    char win[2 * DELIM_MAX];
    size_t head = size < keep ? size : keep;
    memcpy(win, r->carry, r->carry_len);
    memcpy(win + r->carry_len, data, head);
    if (memmem(win, r->carry_len + head, r->delim, r->delim_len) ||
        memmem(data, size, r->delim, r->delim_len)) {
        r->saw_delim = true;
        return;
    }
    /* the carry becomes the last `keep` bytes of carry + data */
    size_t total = r->carry_len + head;
    if (size >= keep) {
        memcpy(r->carry, data + size - keep, keep);
        r->carry_len = keep;
    } else if (total <= keep) {
        memcpy(r->carry, win, total);
        r->carry_len = total;
    } else {
        memcpy(r->carry, win + total - keep, keep);
        r->carry_len = keep;
    }
}

#define FORM_TYPE_CANONICAL "multipart/form-data;boundary="

/* libmicrohttpd 0.9.75's post processor finds the boundary with a
 * case-sensitive strstr(ct, "boundary=") and takes the rest of the field as
 * its value, while parameter names are case-insensitive and any parameter
 * may come after it (RFC 9110 section 8.3.1, RFC 2046 section 5.1.1):
 * `BOUNDARY=x`, or `boundary=x; charset=utf-8`, would leave it no form to
 * parse. It reads the field from the connection, so the field is rewritten
 * in place first, to the shape it reads: FORM_TYPE_CANONICAL and the
 * boundary as written (quoted or not). That is never longer than the field
 * (its type, ';', the name and '=' take at least as many bytes), whose
 * bytes are the connection's own (libmicrohttpd keeps received fields in
 * the connection's writable buffer for the request's life). A field that is
 * not one well-formed multipart/form-data type with a boundary is left as
 * it came. */
static void form_type_canonical(char *ct)
{
    size_t at, len, n = strlen(ct);
    char type[MEDIATYPE_MAX + 1];
    if (!mediatype_parse(ct, n, type) || strcmp(type, "multipart/form-data") != 0 ||
        !mediatype_param(ct, n, "boundary", &at, &len))
        return;
    size_t head = sizeof FORM_TYPE_CANONICAL - 1;
    if (at < head || at + len > n) return; /* cannot happen: see above */
    memmove(ct + head, ct + at, len);
    memcpy(ct, FORM_TYPE_CANONICAL, head);
    ct[head + len] = '\0';
}

void http_body_form_start(struct http_req *r)
{
    /* only multipart/form-data is a form here (MHD would also parse
     * url-encoded bodies, and lose their last field); anything else
     * has every part missing */
    const char *ct =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (ct && !strncasecmp(ct, "multipart/form-data", 19)) {
        form_type_canonical((char *)ct);
        r->pp = MHD_create_post_processor(r->conn, PP_BUFFER, on_part, r);
        /* a boundary too long to look for: trust the parser alone */
        if (r->pp && !form_delimiter(r, ct)) r->saw_delim = true;
    }
}

static br_err spool_open(struct http_req *r)
{
    char *path = xasprintf("%s/upload-XXXXXX", r->srv->o.spool_dir);
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        log_error("http: cannot create an upload spool file in %s: %s", r->srv->o.spool_dir,
                  strerror(errno));
        free(path);
        return BR_IO;
    }
    unlink(path); /* anonymous from now on: nothing is left behind, even on a crash */
    free(path);
    r->up.fd = fd;
    return BR_OK;
}

static void spool_write(struct http_req *r, const char *data, size_t size)
{
    struct http_upload *up = &r->up;
    up->size += size;
    if (up->too_large) return;
    if (up->size > r->srv->o.file_max) {
        /* past the cap: keep counting, keep nothing */
        up->too_large = true;
        if (up->fd >= 0 && ftruncate(up->fd, 0) != 0) log_warn("http: spool truncate failed");
        return;
    }
    if (up->fd < 0) return;
    while (size) {
        ssize_t n = write(up->fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            log_error("http: writing an upload spool file failed: %s", strerror(errno));
            close(up->fd);
            up->fd = -1;
            return;
        }
        data += n;
        size -= (size_t)n;
    }
}

static bool same_text(const char *a, const char *b)
{
    return a && b ? !strcmp(a, b) : a == b;
}

/* Whether a part other than the file is one a handler reads. */
static bool field_wanted(const struct http_req *r, const char *key)
{
    const char *const *f = r->srv->o.form_fields;
    if (!f) return true;
    for (; *f; f++)
        if (!strcmp(*f, key)) return true;
    return false;
}

/* A new part begins: decide what it feeds. */
static void part_open(struct http_req *r, const char *key, const char *filename,
                      const char *content_type)
{
    free(r->part_key);
    free(r->part_filename);
    r->part_key = xstrdup(key);
    r->part_filename = filename ? xstrdup(filename) : NULL;
    r->part_open = true;
    r->part_end = 0;
    r->cur = -1;
    r->saw_part = true;
    if (!strcmp(key, r->srv->o.file_field)) {
        if (r->up.has_file) return; /* a second file part is ignored */
        r->up.has_file = true;
        r->filename = filename ? xstrdup(filename) : NULL;
        r->content_type = content_type ? xstrdup(content_type) : NULL;
        r->up.filename = r->filename;
        r->up.content_type = r->content_type;
        if (spool_open(r) != BR_OK) r->form_bad = true;
        r->cur = -2;
    } else if (field_wanted(r, key) && !http_req_field(r, key) && r->nfields < MAX_FIELDS) {
        struct field *f = &r->fields[r->nfields++];
        f->name = xstrdup(key);
        buf_init(&f->value, FIELD_MAX);
        r->cur = r->nfields - 1;
    }
}

/* The post processor's part iterator. Any argument may be NULL (key: a part
 * without a name, which makes the form malformed; data: with size 0). The
 * same part may come in any number of calls, at offset 0 more than once
 * (size 0 included), depending on how the body was split into reads. */
static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
    (void)kind;
    (void)transfer_encoding;
    struct http_req *r = cls;
    if (!key || (size && !data)) {
        r->form_bad = true;
        return MHD_NO;
    }
    if (!r->part_open || strcmp(r->part_key, key) != 0 || !same_text(r->part_filename, filename) ||
        (off == 0 && r->part_end > 0))
        part_open(r, key, filename, content_type);
    if (off != r->part_end) {
        /* data out of order: the parser and we disagree; refuse the form */
        r->form_bad = true;
        return MHD_NO;
    }
    r->part_end = off + size;
    if (size == 0) return MHD_YES;
    if (r->cur == -2) {
        spool_write(r, data, size);
    } else if (r->cur >= 0) {
        /* a field past its cap is not a malformed form: the handler
         * judges it (a part it does not read is ignored, whatever its size) */
        struct field *f = &r->fields[r->cur];
        size_t room = FIELD_MAX - f->value.len;
        if (size > room) f->overlong = true;
        size_t keep = size > room ? room : size;
        /* a NUL ends the text a handler reads: what follows would be lost
         * unseen, so the field is marked as cut short, as a long one is */
        if (memchr(data, '\0', keep)) f->overlong = true;
        if (keep && buf_append(&f->value, data, keep) != BR_OK) r->form_bad = true;
    }
    return MHD_YES;
}

void http_body_consume(struct http_req *r, const char *data, size_t size)
{
    r->body_bytes += size;
    if (r->verdict) return;
    if (r->route->body == HTTP_BODY_MULTIPART) {
        scan_delimiter(r, data, size);
        if (r->pp && !r->form_bad && MHD_post_process(r->pp, data, size) != MHD_YES)
            r->form_bad = true;
        return;
    }
    if (r->body_too_large) return;
    if (buf_append(&r->body, data, size) != BR_OK) {
        r->body_too_large = true;
        buf_free(&r->body);
    }
}

/* Length of the JSON number (RFC 8259's grammar) at s[0..n), 0 if none;
 * *integer: no fraction and no exponent. */
static size_t json_number_len(const char *s, size_t n, bool *integer)
{
    size_t i = 0;
    *integer = true;
    if (i < n && s[i] == '-') i++;
    if (i >= n || s[i] < '0' || s[i] > '9') return 0;
    if (s[i] == '0')
        i++;
    else
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    if (i < n && s[i] == '.') {
        *integer = false;
        if (++i >= n || s[i] < '0' || s[i] > '9') return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        *integer = false;
        if (++i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    return i;
}

/* The JSON text p[0..n) with every number jansson cannot hold written as
 * one it can, the same kind of value to every handler (a number, past any
 * range they accept): an integer past 64 bits as a real, a number past a
 * double's range as +-1e308. Strings are copied as they are. NULL when
 * nothing needed it. Caller frees. */
static char *json_numbers_in_range(const char *p, size_t n, size_t *out_len)
{
    /* a rewritten number grows by at most 2 bytes (".0"): one past a
     * double's range is at least as long as "1e309" */
    char *out = xmalloc(3 * n + 8);
    size_t o = 0;
    bool changed = false, in_str = false;
    for (size_t i = 0; i < n;) {
        char c = p[i];
        if (in_str) {
            size_t k = c == '\\' && i + 1 < n ? 2 : 1;
            if (c == '"') in_str = false;
            memcpy(out + o, p + i, k);
            o += k;
            i += k;
            continue;
        }
        bool integer;
        size_t len =
            c == '-' || (c >= '0' && c <= '9') ? json_number_len(p + i, n - i, &integer) : 0;
        if (!len) {
            if (c == '"') in_str = true;
            out[o++] = c;
            i++;
            continue;
        }
        char *tok = xstrndup(p + i, len);
        errno = 0;
        double d = strtod(tok, NULL);
        bool huge = errno == ERANGE && (d > 1 || d < -1);
        errno = 0;
        if (!huge && integer) (void)strtoll(tok, NULL, 10);
        if (huge) {
            const char *big = d < 0 ? "-1e308" : "1e308";
            memcpy(out + o, big, strlen(big));
            o += strlen(big);
            changed = true;
        } else {
            memcpy(out + o, tok, len);
            o += len;
            if (integer && errno == ERANGE) {
                memcpy(out + o, ".0", 2);
                o += 2;
                changed = true;
            }
        }
        free(tok);
        i += len;
    }
    if (!changed) {
        free(out);
        return NULL;
    }
    *out_len = o;
    return out;
}

/* The body as JSON: any JSON text, numbers of any size included (RFC 8259
 * sets no limit on them; JavaScript's JSON.parse takes them all). */
static json_t *body_json(const char *p, size_t n)
{
    json_error_t jerr;
    json_t *j = json_loadb(p, n, 0, &jerr);
    if (j || json_error_code(&jerr) != json_error_numeric_overflow) return j;
    size_t len = 0;
    char *fixed = json_numbers_in_range(p, n, &len);
    if (!fixed) return NULL;
    j = json_loadb(fixed, len, 0, &jerr);
    free(fixed);
    return j;
}

bool http_body_end(struct http_req *r)
{
    const struct http_route *rt = r->route;
    if (rt->body == HTTP_BODY_MULTIPART) {
        if (r->pp) {
            if (MHD_destroy_post_processor(r->pp) != MHD_YES) r->form_bad = true;
            r->pp = NULL;
        }
        /* MHD skips whatever precedes a first boundary as a preamble, and
         * makes no post processor without a boundary. A body in which no
         * part was found is a form with every part missing when it holds
         * the delimiter (`--b--`), and malformed otherwise (wrong or no
         * boundary, garbage). */
        const char *ct =
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (r->body_bytes && !r->saw_part && ct && !strncasecmp(ct, "multipart/form-data", 19) &&
            !r->saw_delim)
            r->form_bad = true;
        if (r->up.has_file && r->up.fd < 0 && !r->up.too_large) {
            http_reply_error(r, 500, "Error interno del servidor");
            return false;
        }
        if (r->form_bad) {
            http_reply_error(r, 400, "Formulario inválido");
            return false;
        }
        return true;
    }
    if (r->body_too_large) {
        http_reply_error(r, 413, "Cuerpo demasiado grande");
        return false;
    }
    bool opt = rt->body == HTTP_BODY_JSON_OPT || rt->body == HTTP_BODY_JSON_LAX;
    if (rt->body == HTTP_BODY_JSON || (opt && r->body.len)) {
        r->json = r->body.len ? body_json(r->body.p, r->body.len) : NULL;
        if (!json_is_object(r->json)) {
            json_decref(r->json);
            r->json = NULL;
            if (rt->body == HTTP_BODY_JSON_LAX) return true; /* the handler's to judge */
            http_reply_error(r, 400, "JSON inválido");
            return false;
        }
    }
    return true;
}

bool http_req_json_invalid(struct http_req *r)
{
    return r->route && r->route->body == HTTP_BODY_JSON_LAX && r->body.len && !r->json;
}

void http_body_free(struct http_req *r)
{
    if (r->pp) MHD_destroy_post_processor(r->pp);
    r->pp = NULL;
    if (r->up.fd >= 0) close(r->up.fd);
    r->up.fd = -1;
    json_decref(r->json);
    r->json = NULL;
    buf_free(&r->body);
    for (int i = 0; i < r->nfields; i++) {
        free(r->fields[i].name);
        buf_free(&r->fields[i].value);
    }
    r->nfields = 0;
    free(r->part_key);
    free(r->part_filename);
    free(r->filename);
    free(r->content_type);
    r->part_key = r->part_filename = r->filename = r->content_type = NULL;
}
