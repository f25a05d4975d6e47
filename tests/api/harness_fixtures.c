/*
 * harness_fixtures.c - the usual fixtures (users, barbers, services, bookings, photos), shape
 * checks of JSON answers, and requests that start together (see harness.h).
 */
#define _GNU_SOURCE
#include "harness_internal.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- fixtures ----------------------------------------------------------------------------- */

void unique_email(char *buf, size_t n, const char *prefix)
{
    static int counter;
    snprintf(buf, n, "%s-%d-%d@test.example", prefix, __atomic_add_fetch(&counter, 1, 0),
             (int)getpid());
}

static void take_session(struct user *u, const struct resp *r)
{
    const json_t *user = json_object_get(r->json, "user");
    const char *id = jstr(user, "id"), *tok = jstr(r->json, "token");
    if (!id || !tok) fail_msg("no user/token in: %s", r->body);
    snprintf(u->id, sizeof u->id, "%s", id);
    snprintf(u->token, sizeof u->token, "%s", tok);
}

void signup_user(const struct srv *s, struct user *u, const char *nombre)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, "cliente");
    snprintf(u->password, sizeof u->password, "secreto-%d", rand() % 100000);
    json_t *b = json_pack("{s:s, s:s}", "email", u->email, "password", u->password);
    if (nombre) json_object_set_new(b, "nombre", json_string(nombre));
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(s, "POST", "/api/auth/signup", NULL, text, &r);
    free(text);
    if (r.status != 201) fail_msg("signup failed: %ld %s", r.status, r.body);
    take_session(u, &r);
    resp_free(&r);
}

void deleted_user(const struct srv *s, struct user *u, const char *nombre)
{
    signup_user(s, u, nombre);
    json_t *b = json_pack("{s:s}", "password", u->password);
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(s, "DELETE", "/api/auth/me", u->token, text, &r);
    free(text);
    if (r.status != 200) fail_msg("account deletion failed: %ld %s", r.status, r.body);
    resp_free(&r);
}

void make_user(const struct srv *s, struct user *u, const char *nombre, const char *rol)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, rol ? rol : "user");
    snprintf(u->password, sizeof u->password, "clave-%d", rand() % 100000);
    const char *args[16];
    int n = 0;
    args[n++] = "user";
    args[n++] = "add";
    args[n++] = "--email";
    args[n++] = u->email;
    args[n++] = "--password";
    args[n++] = u->password;
    if (nombre) {
        args[n++] = "--nombre";
        args[n++] = nombre;
    }
    if (rol) {
        args[n++] = "--rol";
        args[n++] = rol;
    }
    args[n] = NULL;
    char *out = NULL, *err = NULL;
    int st = run_cli(s, NULL, args, true, &out, &err);
    if (st != 0) fail_msg("user add failed (%d): %s", st, err ? err : "");
    free(out);
    free(err);
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", u->email, u->password);
    struct resp r;
    http_json(s, "POST", "/api/auth/login", NULL, body, &r);
    if (r.status != 200) fail_msg("login failed: %ld %s", r.status, r.body);
    take_session(u, &r);
    resp_free(&r);
}

static char *first_line(char *out)
{
    if (!out) return NULL;
    out[strcspn(out, "\n")] = '\0';
    return out;
}

char *make_barbero(const struct srv *s, const char *nombre)
{
    char *out = NULL, *err = NULL;
    int st = srv_cli(s, &out, &err, "barbero", "add", "--nombre", nombre, NULL);
    if (st != 0) fail_msg("barbero add failed (%d): %s", st, err ? err : "");
    free(err);
    return first_line(out);
}

char *make_servicio(const struct srv *s, const char *nombre, int duracion_min, double precio)
{
    char dur[32], pr[64];
    snprintf(dur, sizeof dur, "%d", duracion_min);
    snprintf(pr, sizeof pr, "%.2f", precio);
    char *out = NULL, *err = NULL;
    int st = srv_cli(s, &out, &err, "servicio", "add", "--nombre", nombre, "--duracion-min", dur,
                     "--precio", pr, NULL);
    if (st != 0) fail_msg("servicio add failed (%d): %s", st, err ? err : "");
    free(err);
    return first_line(out);
}

char *book(const struct srv *s, const struct user *u, const char *barbero, const char *servicio,
           const char *fecha_inicio, const char *notas)
{
    json_t *b = json_pack("{s:s, s:s, s:s}", "barbero_id", barbero, "servicio_id", servicio,
                          "fecha_inicio", fecha_inicio);
    if (notas) json_object_set_new(b, "notas", json_string(notas));
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(s, "POST", "/api/citas", u->token, text, &r);
    free(text);
    if (r.status != 201) fail_msg("booking failed: %ld %s", r.status, r.body);
    const char *id = jstr(json_object_get(r.json, "cita"), "id");
    if (!id) fail_msg("no cita id in: %s", r.body);
    char *copy = strdup(id);
    resp_free(&r);
    return copy;
}

void cita_cambio(const struct srv *s, const struct user *u, const char *id, const char *accion,
                 const char *body)
{
    char path[160];
    snprintf(path, sizeof path, "/api/citas/%s/%s", id, accion);
    struct resp r;
    http_json(s, "POST", path, u->token, body, &r);
    if (r.status != 200) fail_msg("%s: %ld %s", accion, r.status, r.body);
    resp_free(&r);
}

void lista_espera_get(const struct srv *s, const struct user *u, const char *cliente_id,
                      struct resp *r)
{
    char path[160];
    if (cliente_id)
        snprintf(path, sizeof path, "/api/lista-espera?cliente_id=%s", cliente_id);
    else
        snprintf(path, sizeof path, "/api/lista-espera");
    http_get(s, path, u->token, r);
}

size_t lista_espera_listed(const struct srv *s, const struct user *u, const char *cliente_id,
                           const char *id)
{
    struct resp r;
    lista_espera_get(s, u, cliente_id, &r);
    if (r.status != 200) fail_msg("listing: %ld %s", r.status, r.body);
    json_t *all = json_object_get(r.json, "entradas");
    size_t n = json_array_size(all), hit = 0, i;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        if (id && !strcmp(jstr(e, "id"), id)) hit++;
    }
    resp_free(&r);
    return id ? hit : n;
}

json_t *upload_photo(const struct srv *s, const struct user *u, const char *cita, const char *tipo,
                     const void *bytes, size_t len)
{
    struct part parts[] = {{"file", bytes, len, "foto.png", "image/png"},
                           {"cita_id", cita, 0, NULL, NULL},
                           {"tipo", tipo, 0, NULL, NULL}};
    struct resp r;
    http_multipart(s, "/api/fotos", u->token, parts, 3, &r);
    if (r.status != 201) fail_msg("upload expected 201, got %ld: %s", r.status, r.body);
    json_t *foto = json_incref(json_object_get(r.json, "foto"));
    resp_free(&r);
    return foto;
}

char *photo_path(const json_t *foto)
{
    const char *url = jstr(foto, "url");
    const char *p = url ? strstr(url, "/storage/") : NULL;
    if (!p) fail_msg("a photo url without /storage/: %s", url ? url : "(none)");
    return strdup(p);
}

const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* --- shape checks ------------------------------------------------------------------------ */

bool is_lower_uuid(const char *s)
{
    if (!s || strlen(s) != 36) return false;
    for (int i = 0; i < 36; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-') return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

void expect_keys(const json_t *o, ...)
{
    if (!json_is_object(o)) fail_msg("expected a JSON object");
    va_list ap;
    va_start(ap, o);
    size_t n = 0;
    const char *k;
    while ((k = va_arg(ap, const char *))) {
        n++;
        if (!json_object_get(o, k)) {
            va_end(ap);
            char *text = json_dumps(o, JSON_COMPACT);
            fprintf(stderr, "object: %s\n", text ? text : "?");
            free(text);
            fail_msg("member \"%s\" missing", k);
        }
    }
    va_end(ap);
    if (json_object_size(o) != n) {
        char *text = json_dumps(o, JSON_COMPACT);
        fprintf(stderr, "object: %s\n", text ? text : "?");
        free(text);
        fail_msg("expected exactly %zu members, got %zu", n, json_object_size(o));
    }
}

/* --- racers ------------------------------------------------------------------------------- */

struct racer_slot {
    pthread_barrier_t *go;
    void (*fn)(void *item);
    void *item;
};

static void *racer_main(void *arg)
{
    struct racer_slot *x = arg;
    pthread_barrier_wait(x->go);
    x->fn(x->item);
    return NULL;
}

void race_threads(size_t n, void (*fn)(void *item), void *items, size_t size)
{
    if (n == 0) return;
    if (n > RACE_MAX) fail_msg("race_threads: at most %d racers", RACE_MAX);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)n);
    pthread_t th[RACE_MAX];
    struct racer_slot slot[RACE_MAX];
    for (size_t i = 0; i < n; i++) {
        slot[i] = (struct racer_slot){&go, fn, (char *)items + i * size};
        if (pthread_create(&th[i], NULL, racer_main, &slot[i]) != 0)
            fail_msg("pthread_create: %s", strerror(errno));
    }
    for (size_t i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
}

/* --- a server with fixtures ------------------------------------------------------------------ */

void fixture_start(struct fixture *f, const char *const *env, const char *barbero_nombre,
                   const char *servicio_nombre, int duracion_min, double precio)
{
    srv_start(&f->s, env, NULL);
    f->barbero = make_barbero(&f->s, barbero_nombre);
    f->servicio = make_servicio(&f->s, servicio_nombre, duracion_min, precio);
}

void fixture_stop(struct fixture *f)
{
    free(f->barbero);
    free(f->servicio);
    f->barbero = f->servicio = NULL;
    if (f->s.dir[0]) srv_cleanup(&f->s);
    memset(&f->s, 0, sizeof f->s);
}
