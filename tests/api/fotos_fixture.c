/*
 * fotos_fixture.c - what the tests of /api/fotos share (see fotos_fixture.h):
 * the server with three clients, and uploads, listings and deletions.
 */
#define _GNU_SOURCE
#include "fotos_fixture.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct fixture F;    /* the server, a barber and a service */
struct user A, B, C; /* three ordinary clients */

/* --- helpers ---------------------------------------------------------------------- */

char *new_cita(const struct user *u)
{
    static int n;
    int k = n++;
    char when[64];
    snprintf(when, sizeof when, "2031-%02d-%02dT%02d:00:00Z", 1 + (k / 200) % 12, 1 + (k / 10) % 20,
             8 + k % 10);
    return book(&F.s, u, F.barbero, F.servicio, when, NULL);
}

const char *pixels(size_t *len)
{
    static char p[300];
    for (size_t i = 0; i < sizeof p; i++)
        p[i] = (char)(i * 7 + 3);
    *len = sizeof p;
    return p;
}

void upload(const struct user *u, const char *cita, const char *tipo, const char *filename,
            const char *type, const char *data, size_t len, struct resp *r)
{
    struct part parts[3];
    size_t n = 0;
    if (data) parts[n++] = (struct part){"file", data, len, filename, type};
    if (cita) parts[n++] = (struct part){"cita_id", cita, 0, NULL, NULL};
    if (tipo) parts[n++] = (struct part){"tipo", tipo, 0, NULL, NULL};
    http_multipart(&F.s, "/api/fotos", u ? u->token : NULL, parts, n, r);
}

json_t *upload_ok(const struct user *u, const char *cita, const char *tipo, const char *filename,
                  const char *type, const char *data, size_t len)
{
    struct resp r;
    upload(u, cita, tipo, filename, type, data, len, &r);
    if (r.status != 201) fail_msg("upload expected 201, got %ld: %s", r.status, r.body);
    json_t *f = json_object_get(r.json, "foto");
    json_incref(f);
    resp_free(&r);
    return f;
}

json_t *list_fotos(const struct user *u, const char *cita)
{
    char path[256];
    snprintf(path, sizeof path, "/api/fotos?cita_id=%s", cita);
    struct resp r;
    http_get(&F.s, path, u->token, &r);
    if (r.status != 200) fail_msg("listing expected 200, got %ld: %s", r.status, r.body);
    json_t *l = json_object_get(r.json, "fotos");
    if (!json_is_array(l)) fail_msg("no fotos array in: %s", r.body);
    json_incref(l);
    resp_free(&r);
    return l;
}

void delete_foto(const struct user *u, const char *query, struct resp *r)
{
    char path[256];
    snprintf(path, sizeof path, "/api/fotos%s", query);
    struct req_opts o = {.token = u ? u->token : NULL};
    http_req(&F.s, "DELETE", path, &o, r);
}

size_t cita_objects(const char *user_id, const char *cita)
{
    char prefix[4096];
    if (snprintf(prefix, sizeof prefix, "%s/%s", user_id, cita) >= (int)sizeof prefix)
        fail_msg("prefix too long");
    return obj_count(&F.s, prefix);
}

void no_scratch_left(void)
{
    if (F.s.s3) return;
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/storage/.tmp", F.s.data);
    assert_int_equal(count_files(tmp), 0);
}

const char *url_path(const char *url)
{
    size_t bl = strlen(F.s.base);
    if (!url || strncmp(url, F.s.base, bl) != 0) fail_msg("URL %s is not under %s", url, F.s.base);
    return url + bl;
}

bool is_timestamp(const char *t)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
    if (!t || strlen(t) != sizeof shape - 1) return false;
    for (size_t i = 0; shape[i]; i++) {
        if (shape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != shape[i]) return false;
    }
    return true;
}

void expect_storage_path(const char *path, const char *user_id, const char *cita, const char *tipo,
                         const char *ext, int64_t *ms)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s/%s/%s-", user_id, cita, tipo);
    if (!path || strncmp(path, prefix, strlen(prefix)) != 0)
        fail_msg("storage_path %s does not start with %s", path ? path : "(null)", prefix);
    const char *p = path + strlen(prefix);
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || *end != '.') fail_msg("storage_path %s: no <epoch_ms>.<ext>", path);
    for (const char *d = p; d < end; d++)
        if (*d < '0' || *d > '9') fail_msg("storage_path %s: epoch is not digits", path);
    if (strcmp(end + 1, ext) != 0) fail_msg("storage_path %s: extension is not %s", path, ext);
    if (ms) *ms = v;
}

char *form_body(const char *cita, const char *tipo, const char *file_headers, const char *data,
                size_t *len)
{
    char *b = NULL;
    int n = asprintf(&b,
                     "--" BOUNDARY "\r\n"
                     "Content-Disposition: form-data; name=\"cita_id\"\r\n\r\n%s\r\n"
                     "--" BOUNDARY "\r\n"
                     "Content-Disposition: form-data; name=\"tipo\"\r\n\r\n%s\r\n"
                     "--" BOUNDARY "\r\n"
                     "Content-Disposition: form-data; name=\"file\"; filename=\"f.png\"\r\n"
                     "%s\r\n%s\r\n"
                     "--" BOUNDARY "--\r\n",
                     cita, tipo, file_headers, data);
    if (n < 0) fail_msg("out of memory");
    *len = (size_t)n;
    return b;
}

void post_form(const struct user *u, const char *body, size_t len, struct resp *r)
{
    struct req_opts o = {.token = u ? u->token : NULL,
                         .content_type = "multipart/form-data; boundary=" BOUNDARY,
                         .body = body,
                         .len = len};
    http_req(&F.s, "POST", "/api/fotos", &o, r);
}

/* --- setup -------------------------------------------------------------------------- */

int fotos_group_setup(void **state)
{
    (void)state;
    fixture_start(&F, NULL, "Barbero Fotos", "Corte Fotos", 30, 12.5);
    signup_user(&F.s, &A, "Ana");
    signup_user(&F.s, &B, "Bruno");
    signup_user(&F.s, &C, "Carla");
    return 0;
}

int fotos_group_teardown(void **state)
{
    (void)state;
    fixture_stop(&F);
    return 0;
}
