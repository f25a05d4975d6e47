/*
 * test_gestion.c - each appointment's personal link over HTTP against the
 * real server and the real SMTP sink: every e-mail about a cita carries
 * `<public URL>/c/<token>`; GET /api/gestion/{token} shows the cita without
 * signing in and changes nothing; POST .../cancelar and .../reprogramar
 * follow the signed-in rules and messages (the cut-off too); GET
 * .../huecos offers the times it could move to, its own among them; the link
 * survives a reschedule and shows a cancel; a token reaches only its own
 * cita; tokens never reach the log.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_CITA      "Cita no encontrada"
#define CANCELADA    "La cita está cancelada"
#define PLAZO        "Ya no se puede cambiar: faltan menos de 2 horas"
#define TAKEN        "El horario ya no está disponible"
#define WAIT_MAIL_MS 90000
#define TOKEN_LEN    64
#define TOKEN_GEN    70 /* a token of a later generation of her links */
#define PHONE        "+34 910 000 000"

static struct srv S;
static struct smtp_sink K;
static char *BARBERO, *SERVICIO;
static struct user ANA, BEA, BARB;

static int group_setup(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", "BARBERIA_SMTP_FROM=citas@barberia.test",
                         "BARBERIA_MIN_NOTICE_MIN=0", "BARBERIA_SHOP_PHONE=" PHONE,
                         "BARBERIA_REMINDER_HOURS=1", NULL};
    srv_start_mailing(&S, &K, env);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_user(&S, &ANA, "Ana Pérez");
    signup_user(&S, &BEA, "Bea Ruiz");
    make_user(&S, &BARB, "Barbero Uno", "barbero");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    smtp_sink_stop(&K);
    free(BARBERO);
    free(SERVICIO);
    return 0;
}

/* A fresh slot every call, an hour apart from 2033-05-02 (no overlaps). */
static void next_slot(char out[ISO8601_LEN + 1])
{
    static int n;
    int64_t base = iso8601_days_from_civil(2033, 5, 2) * 86400000LL;
    iso8601_format(base + (int64_t)(n++) * 3600000LL, out);
}

/* --- the e-mails ----------------------------------------------------------------------- */

struct want {
    const char *id, *subject;
    json_t *mail; /* found (owned) */
};

static bool mail_found(void *ud)
{
    struct want *w = ud;
    char **paths;
    size_t n = smtp_sink_files(&K, &paths);
    for (size_t i = 0; i < n && !w->mail; i++) {
        json_t *m = smtp_sink_message(paths[i]);
        const char *text = jstr(m, "text"), *subject = jstr(m, "subject");
        if (text && strstr(text, w->id) && subject && strstr(subject, w->subject))
            w->mail = m;
        else
            json_decref(m);
    }
    smtp_sink_free_paths(paths, n);
    return w->mail != NULL;
}

/* The token of the link in the e-mail about cita id whose subject holds
 * subject, of len characters, checked to be "<public URL>/c/<token>" in
 * both bodies. */
static void token_of_len(const char *id, const char *subject, char *tok, size_t len)
{
    struct want w = {id, subject, NULL};
    if (!wait_until(mail_found, &w, WAIT_MAIL_MS)) fail_msg("no \"%s\" mail for %s", subject, id);
    const char *text = jstr(w.mail, "text");
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s/c/", S.base);
    const char *at = strstr(text, prefix);
    if (!at) fail_msg("no link in the mail: %s", text);
    at += strlen(prefix);
    size_t n = strspn(at, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
    assert_int_equal(n, len);
    memcpy(tok, at, len);
    tok[len] = '\0';
    const char *html = jstr(w.mail, "html");
    assert_non_null(html);
    assert_non_null(strstr(html, tok));
    json_decref(w.mail);
}

static void token_from_mail(const char *id, const char *subject, char tok[TOKEN_LEN + 1])
{
    token_of_len(id, subject, tok, TOKEN_LEN);
}

/* --- helpers --------------------------------------------------------------------------- */

static void ver(const char *tok, struct resp *r)
{
    char path[200];
    snprintf(path, sizeof path, "/api/gestion/%s", tok);
    http_get(&S, path, NULL, r);
}

static void accion(const char *tok, const char *what, const char *body, struct resp *r)
{
    char path[220];
    snprintf(path, sizeof path, "/api/gestion/%s/%s", tok, what);
    http_json(&S, "POST", path, NULL, body, r);
}

static char *estado_of(const char *id)
{
    return db_query(&S, "SELECT estado FROM citas WHERE id = '%s'", id);
}

static char *fecha_body(const char *fecha)
{
    char *b = NULL;
    if (asprintf(&b, "{\"fecha_inicio\":\"%s\"}", fecha) < 0) fail_msg("asprintf");
    return b;
}

/* --- the tests ------------------------------------------------------------------------- */

static void the_confirmation_carries_a_link_that_shows_the_cita_and_changes_nothing(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char tok[TOKEN_LEN + 1];
    token_from_mail(id, "Cita confirmada", tok);
    /* nothing about the link is stored */
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM mail_outbox WHERE enlace LIKE '%%%s%%'", tok), 0);
    for (int i = 0; i < 3; i++) { /* a mail scanner may open it many times */
        struct resp r;
        ver(tok, &r);
        assert_int_equal(r.status, 200);
        json_t *c = json_object_get(r.json, "cita");
        assert_string_equal(jstr(c, "id"), id);
        assert_string_equal(jstr(c, "estado"), "confirmada");
        assert_string_equal(jstr(c, "fecha_inicio"), f);
        assert_true(json_is_true(json_object_get(r.json, "puede_cambiar")));
        assert_non_null(jstr(r.json, "limite_cambio"));
        assert_string_equal(jstr(json_object_get(r.json, "tienda"), "telefono"), PHONE);
        char cc[64];
        assert_non_null(resp_header(&r, "Cache-Control", cc, sizeof cc));
        assert_string_equal(cc, "no-store");
        resp_free(&r);
    }
    char *e = estado_of(id);
    assert_string_equal(e, "confirmada");
    free(e);
    /* HEAD too, and the web page of the link is the app's shell */
    char path[200];
    snprintf(path, sizeof path, "/c/%s", tok);
    struct resp r;
    http_get(&S, path, NULL, &r);
    assert_int_equal(r.status, 200);
    char ct[64];
    assert_non_null(strstr(resp_header(&r, "Content-Type", ct, sizeof ct), "text/html"));
    resp_free(&r);
    free(id);
}

static void a_token_reaches_its_own_cita_and_no_other(void **state)
{
    (void)state;
    char f[32], g[32];
    next_slot(f);
    next_slot(g);
    char *a = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char *b = book(&S, &BEA, BARBERO, SERVICIO, g, NULL);
    char ta[TOKEN_LEN + 1], tb[TOKEN_LEN + 1];
    token_from_mail(a, "Cita confirmada", ta);
    token_from_mail(b, "Cita confirmada", tb);
    assert_string_not_equal(ta, tb);
    /* each token shows its own */
    struct resp r;
    ver(tb, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "id"), b);
    resp_free(&r);
    /* every changed character, the id's part or the signature's, names nothing */
    const size_t at[] = {0, 5, 21, 22, 40, 63};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        char t[TOKEN_LEN + 1];
        memcpy(t, ta, sizeof t);
        t[at[i]] = t[at[i]] == 'A' ? 'B' : 'A';
        ver(t, &r);
        expect_error(&r, 404, NO_CITA);
        resp_free(&r);
        accion(t, "cancelar", NULL, &r);
        expect_error(&r, 404, NO_CITA);
        resp_free(&r);
    }
    /* b's id with a's signature: the first 22 characters carry the id */
    char mixed[TOKEN_LEN + 1];
    memcpy(mixed, tb, 21);
    memcpy(mixed + 21, ta + 21, TOKEN_LEN - 21 + 1);
    ver(mixed, &r);
    expect_error(&r, 404, NO_CITA);
    resp_free(&r);
    /* other shapes: too short, too long, the cita's id itself */
    const char *bad[] = {"abc", a,
                         "0000000000000000000000000000000000000000000000000000000000000000", NULL};
    for (int i = 0; bad[i]; i++) {
        ver(bad[i], &r);
        expect_error(&r, 404, NO_CITA);
        resp_free(&r);
    }
    char longer[TOKEN_LEN + 2];
    snprintf(longer, sizeof longer, "%sA", ta);
    ver(longer, &r);
    expect_error(&r, 404, NO_CITA);
    resp_free(&r);
    /* a cancel by a's link cancels a only */
    accion(ta, "cancelar", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "id"), a);
    resp_free(&r);
    char *ea = estado_of(a), *eb = estado_of(b);
    assert_string_equal(ea, "cancelada");
    assert_string_equal(eb, "confirmada");
    free(ea);
    free(eb);
    free(a);
    free(b);
}

static void cancel_by_link_follows_the_rules_and_the_link_then_shows_it_cancelled(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char tok[TOKEN_LEN + 1];
    token_from_mail(id, "Cita confirmada", tok);
    struct resp r;
    /* cancelar takes no body: whatever is sent is ignored, not judged */
    accion(tok, "cancelar", "junk", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "estado"), "cancelada");
    assert_true(json_is_false(json_object_get(r.json, "puede_cambiar")));
    resp_free(&r);
    char *estado = estado_of(id);
    assert_string_equal(estado, "cancelada");
    free(estado);
    ver(tok, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "estado"), "cancelada");
    assert_true(json_is_false(json_object_get(r.json, "puede_cambiar")));
    resp_free(&r);
    /* again: the signed-in message */
    accion(tok, "cancelar", NULL, &r);
    expect_error(&r, 409, CANCELADA);
    resp_free(&r);
    accion(tok, "cancelar", "junk", &r);
    expect_error(&r, 409, CANCELADA);
    resp_free(&r);
    accion(tok, "cancelar", "[]", &r);
    expect_error(&r, 409, CANCELADA);
    resp_free(&r);
    char g[32];
    next_slot(g);
    char *body = fecha_body(g);
    accion(tok, "reprogramar", body, &r);
    expect_error(&r, 409, CANCELADA);
    resp_free(&r);
    free(body);
    /* the cancellation carries the same link */
    char again[TOKEN_LEN + 1];
    token_from_mail(id, "Cita cancelada", again);
    assert_string_equal(again, tok);
    free(id);
}

static void reschedule_by_link_keeps_the_link_and_follows_the_rules(void **state)
{
    (void)state;
    char f[32], g[32], h[32];
    next_slot(f);
    next_slot(g);
    next_slot(h);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char *other = book(&S, &BEA, BARBERO, SERVICIO, h, NULL);
    char tok[TOKEN_LEN + 1];
    token_from_mail(id, "Cita confirmada", tok);
    struct resp r;
    char wrong[TOKEN_LEN + 1];
    memcpy(wrong, tok, sizeof wrong);
    wrong[40] = wrong[40] == 'A' ? 'B' : 'A';
    /* the body's errors, as signed in: the body first, whatever the token */
    const struct {
        const char *tok, *accion, *body;
        long status;
        const char *msg;
    } bad[] = {
        {tok, "reprogramar", "junk", 400, "JSON inválido"},
        {tok, "reprogramar", "[]", 400, "JSON inválido"},
        {wrong, "reprogramar", "junk", 400, "JSON inválido"},
        {wrong, "cancelar", "junk", 404, NO_CITA},
        {tok, "reprogramar", "{}", 400, "Faltan campos requeridos"},
        {tok, "reprogramar", "{\"fecha_inicio\":\"mañana\"}", 400, "fecha_inicio inválida"},
        {tok, "reprogramar", "{\"fecha_inicio\":\"2020-01-01T10:00:00Z\"}", 400,
         "La fecha ya pasó"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        accion(bad[i].tok, bad[i].accion, bad[i].body, &r);
        expect_error(&r, bad[i].status, bad[i].msg);
        resp_free(&r);
    }
    /* a taken slot */
    char *body = fecha_body(h);
    accion(tok, "reprogramar", body, &r);
    expect_error(&r, 409, TAKEN);
    resp_free(&r);
    free(body);
    /* the move */
    body = fecha_body(g);
    accion(tok, "reprogramar", body, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "fecha_inicio"), g);
    resp_free(&r);
    free(body);
    /* the same link shows the new time */
    ver(tok, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "fecha_inicio"), g);
    resp_free(&r);
    char again[TOKEN_LEN + 1];
    token_from_mail(id, "Cita cambiada", again);
    assert_string_equal(again, tok);
    /* the shapes that are no resource */
    char path[220];
    snprintf(path, sizeof path, "/api/gestion/%s/borrar", tok);
    http_json(&S, "POST", path, NULL, NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
    free(id);
    free(other);
}

/* Whether the huecos of an answer hold one starting at inicio. */
static bool offers(const json_t *answer, const char *inicio)
{
    const json_t *h = json_object_get(answer, "huecos");
    for (size_t i = 0; i < json_array_size(h); i++)
        if (!strcmp(jstr(json_array_get(h, i), "inicio"), inicio)) return true;
    return false;
}

static void the_link_offers_the_times_its_cita_could_move_to(void **state)
{
    (void)state;
    /* 10:00 UTC (11:00 or 12:00 in Madrid) of a Tuesday to Thursday a week
     * or more ahead: inside the default week's morning */
    int64_t day = clock_now_ms() / 86400000 + 7;
    while ((day + 3) % 7 + 1 < 2 || (day + 3) % 7 + 1 > 4) /* ISO weekday */
        day++;
    char f[ISO8601_LEN + 1], fecha[11];
    iso8601_format(day * 86400000 + 10 * 3600000LL, f);
    memcpy(fecha, f, 10);
    fecha[10] = '\0';
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char tok[TOKEN_LEN + 1];
    token_from_mail(id, "Cita confirmada", tok);
    char path[300];
    struct resp r;
    /* to everyone else its time is taken; to its link it is free */
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s",
             SERVICIO, fecha, BARBERO);
    http_get(&S, path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_false(offers(r.json, f));
    resp_free(&r);
    snprintf(path, sizeof path, "/api/gestion/%s/huecos?fecha=%s", tok, fecha);
    http_get(&S, path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(offers(r.json, f));
    assert_string_equal(jstr(r.json, "barbero_id"), BARBERO);
    assert_string_equal(jstr(r.json, "servicio_id"), SERVICIO);
    resp_free(&r);
    /* the date first; a token that is none reaches nothing */
    char wrong[TOKEN_LEN + 1];
    memcpy(wrong, tok, sizeof wrong);
    wrong[40] = wrong[40] == 'A' ? 'B' : 'A';
    const struct {
        const char *tok, *query;
        long status;
        const char *msg;
    } bad[] = {
        {tok, "", 400, "Faltan campos requeridos"},
        {wrong, "?fecha=mañana", 400, "fecha inválida"},
        {wrong, "?fecha=2030-01-02", 404, NO_CITA},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "/api/gestion/%s/huecos%s", bad[i].tok, bad[i].query);
        http_get(&S, path, NULL, &r);
        expect_error(&r, bad[i].status, bad[i].msg);
        resp_free(&r);
    }
    /* it reads only */
    snprintf(path, sizeof path, "/api/gestion/%s/huecos", tok);
    http_json(&S, "POST", path, NULL, "{}", &r);
    expect_error(&r, 405, "Método no permitido");
    resp_free(&r);
    free(id);
}

static void inside_the_cutoff_the_link_shows_the_phone_and_refuses_changes(void **state)
{
    (void)state;
    char f[32];
    /* just over an hour ahead: inside the 2 h cut-off, and its reminder (an
     * hour before) falls due seconds from now */
    iso8601_format(clock_now_ms() + 60 * 60000LL + 15000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char tok[TOKEN_LEN + 1];
    token_from_mail(id, "Cita confirmada", tok);
    struct resp r;
    ver(tok, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_false(json_object_get(r.json, "puede_cambiar")));
    assert_string_equal(jstr(json_object_get(r.json, "tienda"), "telefono"), PHONE);
    resp_free(&r);
    accion(tok, "cancelar", NULL, &r);
    expect_error(&r, 409, PLAZO);
    resp_free(&r);
    char g[32];
    next_slot(g);
    char *body = fecha_body(g);
    accion(tok, "reprogramar", body, &r);
    expect_error(&r, 409, PLAZO);
    resp_free(&r);
    free(body);
    char *e = estado_of(id);
    assert_string_equal(e, "confirmada");
    free(e);
    /* the reminder (due within 24 h) carries the link too */
    char again[TOKEN_LEN + 1];
    token_from_mail(id, "Recordatorio", again);
    assert_string_equal(again, tok);
    free(id);
}

static void tokens_never_reach_the_log(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char tok[TOKEN_LEN + 1];
    token_from_mail(id, "Cita confirmada", tok);
    struct resp r;
    ver(tok, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char path[200];
    snprintf(path, sizeof path, "/c/%s", tok);
    http_get(&S, path, NULL, &r);
    resp_free(&r);
    accion(tok, "cancelar", NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_true(srv_wait_log(&S, "POST /api/gestion/<token>/cancelar 200", 10000));
    assert_true(srv_wait_log(&S, "GET /c/<token> 200", 10000));
    char *log = srv_log(&S);
    assert_null(strstr(log, tok));
    /* neither does the key */
    char *key = db_query(&S, "SELECT valor FROM claves WHERE nombre = 'enlaces'");
    assert_int_equal(strlen(key), 64);
    assert_null(strstr(log, key));
    free(key);
    free(log);
    free(id);
}

/* An export carries the links' key and the waiting list: links handed out
 * before a move still open after it, on this run's backends. */
/* This shop exported (to <S.dir>/<name>) and imported into D, a new
 * one on env's store (D then started by the caller with env). */
static void copy_shop(const char *name, struct srv *D, const char *env[4])
{
    char out[400];
    snprintf(out, sizeof out, "%s/%s", S.dir, name);
    const char *exp[] = {"export", "--to", out, NULL};
    char *o = NULL, *e = NULL;
    if (run_cli(&S, NULL, exp, true, &o, &e) != 0) fail_msg("export: %s", e ? e : "");
    free(o);
    free(e);
    srv_init(D);
    size_t n = 0;
    test_s3_env(env, &n);
    env[n] = NULL;
    const char *imp[] = {"import", "--from", out, NULL};
    o = e = NULL;
    if (run_cli(D, env, imp, true, &o, &e) != 0) fail_msg("import: %s", e ? e : "");
    free(o);
    free(e);
}

static void links_and_the_waiting_list_survive_an_export_and_import(void **state)
{
    (void)state;
    char f[32];
    next_slot(f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char tok[TOKEN_LEN + 1];
    token_from_mail(id, "Cita confirmada", tok);
    char dia[32], body[200];
    iso8601_format(clock_now_ms() + 5 * 86400000LL, dia);
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%.10s\"}", SERVICIO, dia);
    struct resp r;
    http_json(&S, "POST", "/api/lista-espera", BEA.token, body, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);

    struct srv D = {0};
    const char *env[4];
    copy_shop("export-links", &D, env);
    srv_start(&D, env, NULL);
    char path[200];
    snprintf(path, sizeof path, "/api/gestion/%s", tok);
    http_get(&D, path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "id"), id);
    resp_free(&r);
    assert_int_equal(
        db_count(&D, "SELECT count(*) FROM lista_espera WHERE cliente_id = '%s'", BEA.id), 1);
    srv_cleanup(&D);
    free(id);
}

/* A client's address the desk corrects (mistyped at booking) ends the
 * links the old one was sent: they open, cancel and move nothing any more,
 * here or in a copy of the shop; what she is sent next carries a link of
 * the new generation, which works. */
static void a_corrected_address_ends_the_links_sent_to_the_old_one(void **state)
{
    (void)state;
    char f[32], g[32];
    next_slot(f);
    next_slot(g);
    char body[400];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
             "\"cliente\":{\"nombre\":\"Rosa Gil\",\"email\":\"rosa@mal.example\"}}",
             BARBERO, SERVICIO, f);
    struct resp r;
    http_json(&S, "POST", "/api/agenda/citas", BARB.token, body, &r);
    if (r.status != 201) fail_msg("desk booking: %ld %s", r.status, r.body);
    json_t *cita = json_object_get(r.json, "cita");
    char *id = strdup(jstr(cita, "id")), *rosa = strdup(jstr(cita, "cliente_id"));
    resp_free(&r);
    char old[TOKEN_LEN + 1];
    token_from_mail(id, "Cita confirmada", old);
    ver(old, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* the desk puts her address right */
    char path[200];
    snprintf(path, sizeof path, "/api/clientes/%s", rosa);
    http_json(&S, "PATCH", path, BARB.token, "{\"email\":\"rosa@bien.example\"}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* the old link: nothing, whatever it asks */
    ver(old, &r);
    expect_error(&r, 404, NO_CITA);
    resp_free(&r);
    accion(old, "cancelar", NULL, &r);
    expect_error(&r, 404, NO_CITA);
    resp_free(&r);
    char *b = fecha_body(g);
    accion(old, "reprogramar", b, &r);
    expect_error(&r, 404, NO_CITA);
    resp_free(&r);
    snprintf(path, sizeof path, "/api/gestion/%s/huecos?fecha=%.10s", old, g);
    http_get(&S, path, NULL, &r);
    expect_error(&r, 404, NO_CITA);
    resp_free(&r);
    char *estado = estado_of(id);
    assert_string_equal(estado, "confirmada");
    free(estado);
    /* the desk moves her: the message goes to her address, with a new link */
    snprintf(path, sizeof path, "/api/citas/%s/reprogramar", id);
    http_json(&S, "POST", path, BARB.token, b, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    free(b);
    char now[TOKEN_GEN + 1];
    token_of_len(id, "Cita cambiada", now, TOKEN_GEN);
    ver(now, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "id"), id);
    resp_free(&r);
    /* and so in a copy of the shop */
    struct srv D = {0};
    const char *env[4];
    copy_shop("export-generations", &D, env);
    srv_start(&D, env, NULL);
    snprintf(path, sizeof path, "/api/gestion/%s", old);
    http_get(&D, path, NULL, &r);
    expect_error(&r, 404, NO_CITA);
    resp_free(&r);
    snprintf(path, sizeof path, "/api/gestion/%s", now);
    http_get(&D, path, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    srv_cleanup(&D);
    free(id);
    free(rosa);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_confirmation_carries_a_link_that_shows_the_cita_and_changes_nothing),
        cmocka_unit_test(a_token_reaches_its_own_cita_and_no_other),
        cmocka_unit_test(cancel_by_link_follows_the_rules_and_the_link_then_shows_it_cancelled),
        cmocka_unit_test(reschedule_by_link_keeps_the_link_and_follows_the_rules),
        cmocka_unit_test(the_link_offers_the_times_its_cita_could_move_to),
        cmocka_unit_test(inside_the_cutoff_the_link_shows_the_phone_and_refuses_changes),
        cmocka_unit_test(tokens_never_reach_the_log),
        cmocka_unit_test(links_and_the_waiting_list_survive_an_export_and_import),
        cmocka_unit_test(a_corrected_address_ends_the_links_sent_to_the_old_one),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
