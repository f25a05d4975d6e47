/*
 * test_cuenta_acceso.c - getting into the client's own account, over HTTP
 * against the real server with the real SMTP sink behind it
 * (tests/tools/smtp_sink.py; cuenta_fixture.h): the password reset (the same
 * answer for any address, the link read from the delivered e-mail, single
 * use, every other session ended, an account made without a password
 * claimed), its throttle, and PATCH /api/auth/me (profile, password, an
 * e-mail change that waits for its link). Her data and her account's
 * deletion are test_cuenta_datos.c's.
 */
#define _GNU_SOURCE
#include "cuenta_fixture.h"

#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- the password reset -------------------------------------------------------------- */

static void recuperar_answers_the_same_for_any_address(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Pérez");
    char unknown[128];
    unique_email(unknown, sizeof unknown, "nadie");
    struct resp a, b;
    recuperar(ana.email, &a);
    recuperar(unknown, &b);
    assert_int_equal(a.status, 200);
    assert_int_equal(b.status, 200);
    assert_string_equal(a.body, b.body);
    assert_string_equal(a.body, "{\"ok\":true}");
    resp_free(&a);
    resp_free(&b);
    /* the one that names an account gets its link; the other nothing */
    char *text = wait_mail(ana.email, "/restablecer#token=");
    assert_non_null(strstr(text, "Hola, Ana Pérez"));
    assert_non_null(strstr(text, "30 minutos"));
    char tok[TOKEN_LEN + 1];
    link_token(text, "restablecer", tok);
    free(text);
    assert_true(wait_until(account_outbox_settled, NULL, WAIT_MAIL_MS));
    assert_int_equal(mail_count(ana.email), 1);
    assert_int_equal(mail_count(unknown), 0);
    /* the store keeps the link hashed, and the outbox forgets it once sent */
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM cuenta_tokens WHERE token_hash = '%s'", tok), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM cuenta_correo WHERE enlace IS NOT NULL"),
                     0);
    /* and no log holds it */
    char *log = srv_log(&S);
    assert_null(strstr(log, tok));
    free(log);
    /* a malformed address and a missing one are the caller's errors */
    recuperar("no-es-un-email", &a);
    expect_error(&a, 400, "Email inválido");
    resp_free(&a);
    post("/api/auth/recuperar", NULL, "{}", &a);
    expect_error(&a, 400, "Faltan campos requeridos");
    resp_free(&a);
}

static void restablecer_sets_the_password_ends_sessions_and_signs_in(void **state)
{
    (void)state;
    struct user ana, other;
    signup_user(&S, &ana, "Ana");
    /* a second session of hers, from another device */
    char body[256];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", ana.email, ana.password);
    struct resp r;
    post("/api/auth/login", NULL, body, &r);
    assert_int_equal(r.status, 200);
    char second[64];
    snprintf(second, sizeof second, "%s", jstr(r.json, "token"));
    resp_free(&r);

    char tok[TOKEN_LEN + 1];
    reset_link(&ana, tok);
    /* the sign-up's rule, checked before the link is spent */
    restablecer(tok, "corta", &r);
    expect_error(&r, 400, "Mínimo 6 caracteres");
    resp_free(&r);
    restablecer(tok, "nueva-clave-1", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), ana.id);
    char cookie[512];
    assert_non_null(resp_header(&r, "Set-Cookie", cookie, sizeof cookie));
    assert_non_null(strstr(cookie, "HttpOnly"));
    char fresh[64];
    snprintf(fresh, sizeof fresh, "%s", jstr(r.json, "token"));
    resp_free(&r);
    /* signed in with the new session; every earlier one is over */
    assert_int_equal(me_status(fresh), 200);
    assert_int_equal(me_status(ana.token), 401);
    assert_int_equal(me_status(second), 401);
    assert_int_equal(login_status(ana.email, "nueva-clave-1"), 200);
    assert_int_equal(login_status(ana.email, ana.password), 401);
    /* single use: the same link again, an unknown one, a malformed one */
    restablecer(tok, "otra-clave-2", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
    restablecer("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "otra-clave-2", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
    restablecer("x'; DROP TABLE auth_users; --", "otra-clave-2", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
    post("/api/auth/restablecer", NULL, "{\"password\":\"otra-clave-2\"}", &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    assert_int_equal(login_status(ana.email, "nueva-clave-1"), 200);

    /* an older link dies with the newer one's use; another client's
     * session is untouched throughout */
    signup_user(&S, &other, "Otra");
    char first[TOKEN_LEN + 1], second_tok[TOKEN_LEN + 1];
    reset_link(&ana, first);
    reset_link(&ana, second_tok);
    restablecer(second_tok, "tercera-clave", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    restablecer(first, "cuarta-clave", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
    assert_int_equal(me_status(other.token), 200);
}

static void an_expired_link_is_refused(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana");
    char tok[TOKEN_LEN + 1];
    reset_link(&ana, tok);
    /* 30 minutes pass */
    assert_int_equal(db_exec(&S,
                             "UPDATE cuenta_tokens SET expires_at = '2020-01-01T00:00:00.000Z' "
                             "WHERE proposito = 'restablecer' AND used_at IS NULL",
                             NULL),
                     0);
    struct resp r;
    restablecer(tok, "nueva-clave-1", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
    assert_int_equal(login_status(ana.email, ana.password), 200);
}

/* A sign-up with the address of an account that has no password yet (a
 * client the front desk made) takes nothing: the contract's 409, and the
 * reset link goes to that mailbox, whose owner claims the account with it.
 * Whoever merely knew the address gets nothing of hers. */
static void a_sign_up_over_an_account_without_a_password_sends_her_the_link(void **state)
{
    (void)state;
    struct user eva;
    signup_user(&S, &eva, "Eva");
    char *sql = NULL;
    if (asprintf(&sql, "UPDATE auth_users SET password_hash = '' WHERE id = '%s'", eva.id) < 0)
        fail_msg("asprintf");
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    free(sql);
    size_t before = mail_count(eva.email);
    char body[300];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"del-intruso\"}", eva.email);
    struct resp r;
    post("/api/auth/signup", NULL, body, &r);
    expect_error(&r, 409, "El email ya está registrado");
    assert_null(json_object_get(r.json, "token"));
    resp_free(&r);
    assert_int_equal(login_status(eva.email, "del-intruso"), 401);
    struct mail_wait w = {eva.email, "/restablecer#token="};
    while (mail_count(eva.email) <= before)
        if (!wait_until(has_mail, &w, WAIT_MAIL_MS)) fail_msg("no link for her after the sign-up");
    char *text = wait_mail(eva.email, "/restablecer#token=");
    char tok[TOKEN_LEN + 1];
    link_token(text, "restablecer", tok);
    free(text);
    restablecer(tok, "mi-primera-clave", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), eva.id);
    resp_free(&r);
    assert_int_equal(login_status(eva.email, "mi-primera-clave"), 200);
    assert_int_equal(login_status(eva.email, "del-intruso"), 401);
    /* an account with a password gets no mail from a sign-up */
    before = mail_count(eva.email);
    post("/api/auth/signup", NULL, body, &r);
    expect_error(&r, 409, "El email ya está registrado");
    resp_free(&r);
    sleep_ms(1000);
    assert_int_equal(mail_count(eva.email), before);
}

static void an_account_without_a_password_is_claimed_by_a_reset(void **state)
{
    (void)state;
    struct user eva;
    signup_user(&S, &eva, "Eva");
    /* as the front desk makes them: a profile, an address, no usable password */
    assert_int_equal(
        db_exec(&S, "UPDATE auth_users SET password_hash = '' WHERE email = 'x'", NULL), 0);
    char *sql = NULL;
    if (asprintf(&sql, "UPDATE auth_users SET password_hash = '' WHERE id = '%s'", eva.id) < 0)
        fail_msg("asprintf");
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    free(sql);
    assert_int_equal(login_status(eva.email, eva.password), 401);
    assert_int_equal(login_status(eva.email, ""), 400);
    char tok[TOKEN_LEN + 1];
    reset_link(&eva, tok);
    struct resp r;
    restablecer(tok, "mi-primera-clave", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), eva.id);
    resp_free(&r);
    assert_int_equal(login_status(eva.email, "mi-primera-clave"), 200);
}

/* The operator's `user add` that gives a client without a password her
 * account sets a password too: a reset link asked for before (by anyone,
 * for her address) no longer opens the account afterwards. */
static void a_password_given_by_the_operator_ends_her_reset_links(void **state)
{
    (void)state;
    struct user eva;
    signup_user(&S, &eva, "Eva");
    char *sql = NULL;
    if (asprintf(&sql, "UPDATE auth_users SET password_hash = '' WHERE id = '%s'", eva.id) < 0)
        fail_msg("asprintf");
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    free(sql);
    char tok[TOKEN_LEN + 1];
    reset_link(&eva, tok);
    char *out = NULL, *err = NULL;
    assert_int_equal(srv_cli(&S, &out, &err, "user", "add", "--email", eva.email, "--password",
                             "la-del-operador", NULL),
                     0);
    free(out);
    free(err);
    assert_int_equal(login_status(eva.email, "la-del-operador"), 200);
    struct resp r;
    restablecer(tok, "la-del-enlace", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
    assert_int_equal(login_status(eva.email, "la-del-operador"), 200);
    assert_int_equal(login_status(eva.email, "la-del-enlace"), 401);
}

/* `barberia user password`: the operator's way back into an account whose
 * password is lost (an administrator's, on a shop without e-mail). The new
 * password signs in, the old one no longer does, her sessions end, and so
 * does a reset link asked for before; an address no account has is
 * refused (exit 1) and a short password is a bad argument (exit 2). */
static void the_operator_sets_a_lost_password(void **state)
{
    (void)state;
    struct user ada;
    make_user(&S, &ada, "Ada", "admin");
    char tok[TOKEN_LEN + 1];
    reset_link(&ada, tok);
    char *out = NULL, *err = NULL;
    assert_int_equal(srv_cli(&S, &out, &err, "user", "password", "--email", ada.email, "--password",
                             "recuperada-por-el-operador", NULL),
                     0);
    assert_non_null(out);
    assert_int_equal(strncmp(out, ada.id, strlen(ada.id)), 0); /* her id */
    free(out);
    free(err);
    struct resp r;
    http_get(&S, "/api/auth/me", ada.token, &r);
    assert_int_equal(r.status, 401); /* her session ended */
    resp_free(&r);
    assert_int_equal(login_status(ada.email, ada.password), 401);
    assert_int_equal(login_status(ada.email, "recuperada-por-el-operador"), 200);
    restablecer(tok, "la-del-enlace", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
    out = err = NULL;
    assert_int_equal(srv_cli(&S, &out, &err, "user", "password", "--email", "nadie@example.com",
                             "--password", "da-igual-123", NULL),
                     1);
    assert_non_null(strstr(err, "Usuario no encontrado"));
    free(out);
    free(err);
    out = err = NULL;
    assert_int_equal(srv_cli(&S, &out, &err, "user", "password", "--email", ada.email, "--password",
                             "corta", NULL),
                     2);
    free(out);
    free(err);
    assert_int_equal(login_status(ada.email, "recuperada-por-el-operador"), 200);
}

static void recuperar_is_throttled_per_address(void **state)
{
    (void)state;
    char target[128];
    unique_email(target, sizeof target, "muchas");
    struct resp r;
    /* BARBERIA_LOGIN_MAX_FAILURES=4: the fourth request starts the lock */
    for (int i = 0; i < 4; i++) {
        recuperar(target, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
    }
    recuperar(target, &r);
    expect_error(&r, 429, "Demasiados intentos");
    char ra[32];
    assert_non_null(resp_header(&r, "Retry-After", ra, sizeof ra));
    assert_true(strtol(ra, NULL, 10) >= 1);
    resp_free(&r);
    /* a sign-in is not locked by it, nor is another address */
    struct user u;
    signup_user(&S, &u, NULL);
    assert_int_equal(login_status(u.email, u.password), 200);
    recuperar(u.email, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

/* --- PATCH /api/auth/me --------------------------------------------------------------- */

static void patch_me_changes_the_profile_by_the_rules(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana");
    struct resp r;
    http_json(&S, "PATCH", "/api/auth/me", ana.token,
              "{\"nombre\":\"Ana María\",\"telefono\":\"+34 600 111 222\"}", &r);
    assert_int_equal(r.status, 200);
    json_t *p = json_object_get(r.json, "perfil");
    assert_string_equal(jstr(p, "nombre"), "Ana María");
    assert_string_equal(jstr(p, "telefono"), "+34 600 111 222");
    resp_free(&r);
    /* a wrong value changes nothing, not even the right one beside it */
    http_json(&S, "PATCH", "/api/auth/me", ana.token,
              "{\"nombre\":\"Otra\",\"telefono\":\"llámame\"}", &r);
    expect_error(&r, 400, "Teléfono inválido");
    resp_free(&r);
    http_json(&S, "PATCH", "/api/auth/me", ana.token, "{\"nombre\":\"\"}", &r);
    expect_error(&r, 400, "Nombre inválido");
    resp_free(&r);
    http_json(&S, "PATCH", "/api/auth/me", ana.token, "{}", &r);
    expect_error(&r, 400, "Nada que cambiar");
    resp_free(&r);
    http_get(&S, "/api/auth/me", ana.token, &r);
    assert_string_equal(jstr(json_object_get(r.json, "perfil"), "nombre"), "Ana María");
    resp_free(&r);
    /* the telefono can be cleared */
    http_json(&S, "PATCH", "/api/auth/me", ana.token, "{\"telefono\":null}", &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_null(json_object_get(json_object_get(r.json, "perfil"), "telefono")));
    resp_free(&r);
    /* no session: 401 before anything */
    http_json(&S, "PATCH", "/api/auth/me", NULL, "{\"nombre\":\"X\"}", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
}

static void a_new_password_needs_the_current_one_and_ends_other_sessions(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana");
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", ana.email, ana.password);
    struct resp r;
    post("/api/auth/login", NULL, body, &r);
    char other[64];
    snprintf(other, sizeof other, "%s", jstr(r.json, "token"));
    resp_free(&r);

    http_json(&S, "PATCH", "/api/auth/me", ana.token,
              "{\"password\":\"nueva-clave\",\"password_actual\":\"equivocada\"}", &r);
    expect_error(&r, 400, "La contraseña actual no es correcta");
    resp_free(&r);
    http_json(&S, "PATCH", "/api/auth/me", ana.token, "{\"password\":\"nueva-clave\"}", &r);
    expect_error(&r, 400, "Falta la contraseña actual");
    resp_free(&r);
    snprintf(body, sizeof body, "{\"password\":\"corta\",\"password_actual\":\"%s\"}",
             ana.password);
    http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
    expect_error(&r, 400, "Mínimo 6 caracteres");
    resp_free(&r);
    assert_int_equal(me_status(other), 200);

    snprintf(body, sizeof body, "{\"password\":\"nueva-clave\",\"password_actual\":\"%s\"}",
             ana.password);
    http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(me_status(ana.token), 200); /* this one stays */
    assert_int_equal(me_status(other), 401);
    assert_int_equal(login_status(ana.email, "nueva-clave"), 200);
}

static void an_email_change_waits_for_the_link_sent_to_the_new_address(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana");
    signup_user(&S, &bea, "Bea");
    char nueva[128], body[512];
    unique_email(nueva, sizeof nueva, "nueva");
    struct resp r;
    /* another client's address is taken */
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password_actual\":\"%s\"}", bea.email,
             ana.password);
    http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
    expect_error(&r, 409, "El email ya está registrado");
    resp_free(&r);
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password_actual\":\"%s\"}", nueva,
             ana.password);
    http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "email_pendiente"), nueva);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "email"), ana.email);
    resp_free(&r);
    /* the link to the new address, a notice to the old one */
    char *text = wait_mail(nueva, "/confirmar-email#token=");
    char tok[TOKEN_LEN + 1];
    link_token(text, "confirmar-email", tok);
    free(text);
    text = wait_mail(ana.email, "cambiar la dirección");
    assert_null(strstr(text, "#token="));
    free(text);
    /* nothing changed yet */
    assert_int_equal(login_status(ana.email, ana.password), 200);
    snprintf(body, sizeof body, "{\"token\":\"%s\"}", tok);
    post("/api/auth/confirmar-email", NULL, body, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "email"), nueva);
    resp_free(&r);
    assert_int_equal(login_status(nueva, ana.password), 200);
    assert_int_equal(login_status(ana.email, ana.password), 401);
    post("/api/auth/confirmar-email", NULL, body, &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
}

/* A reset link asked for before a new password, or before a new address is
 * confirmed, no longer sets a password: the old mailbox must not take back
 * an account its owner moved away from. */
static void a_reset_link_dies_with_a_new_password_or_address(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Enlaces");
    char before[TOKEN_LEN + 1];
    reset_link(&ana, before);
    char body[512];
    snprintf(body, sizeof body, "{\"password\":\"clave-nueva-1\",\"password_actual\":\"%s\"}",
             ana.password);
    struct resp r;
    http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    snprintf(ana.password, sizeof ana.password, "%s", "clave-nueva-1");
    restablecer(before, "tomada-123", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);

    reset_link(&ana, before);
    char nueva[128], tok[TOKEN_LEN + 1];
    unique_email(nueva, sizeof nueva, "mudada");
    email_change_link(&ana, nueva, tok);
    snprintf(body, sizeof body, "{\"token\":\"%s\"}", tok);
    post("/api/auth/confirmar-email", NULL, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    restablecer(before, "tomada-123", &r);
    expect_error(&r, 400, LINK_BAD);
    resp_free(&r);
    assert_int_equal(login_status(nueva, ana.password), 200);
    assert_int_equal(me_status(ana.token), 200);
}

/* The answer names the address as it will be stored; requests are bounded
 * per new address (each one mails it); without mail the change cannot be
 * confirmed, which is said after the password is judged. */
static void an_email_change_is_bounded_and_names_the_address_as_stored(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Cambios");
    char nueva[128], shouted[160], body[512];
    unique_email(nueva, sizeof nueva, "cambio");
    snprintf(shouted, sizeof shouted, "  %s ", nueva);
    for (char *c = shouted; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    struct resp r;
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password_actual\":\"%s\"}", shouted,
             ana.password);
    http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "email_pendiente"), nueva);
    resp_free(&r);
    /* BARBERIA_LOGIN_MAX_FAILURES=4: the fourth request starts the lock */
    for (int i = 1; i < 4; i++) {
        http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
    }
    http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
    expect_error(&r, 429, "Demasiados intentos");
    resp_free(&r);
    /* her sign-in is not locked by it */
    assert_int_equal(login_status(ana.email, ana.password), 200);

    struct srv n = {0};
    srv_start(&n, NULL, NULL); /* no mail */
    struct user bea;
    signup_user(&n, &bea, "Bea Sin Correo");
    const struct {
        const char *pw;
        const char *msg;
    } cases[] = {{NULL, "Falta la contraseña actual"},
                 {"equivocada", "La contraseña actual no es correcta"},
                 {bea.password, "No se puede confirmar el cambio: el correo no está configurado"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].pw)
            snprintf(body, sizeof body, "{\"email\":\"%s\",\"password_actual\":\"%s\"}", nueva,
                     cases[i].pw);
        else
            snprintf(body, sizeof body, "{\"email\":\"%s\"}", nueva);
        http_json(&n, "PATCH", "/api/auth/me", bea.token, body, &r);
        expect_error(&r, 400, cases[i].msg);
        resp_free(&r);
    }
    srv_cleanup(&n);
}

/* An e-mail change asked with her password (by whoever had it) dies with the
 * new password she sets on reading the notice at her old address: by a
 * reset link, or by changing it signed in. */
static void an_email_change_dies_with_a_new_password(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Robada");
    for (int how = 0; how < 2; how++) {
        char ajena[128], body[512], tok[TOKEN_LEN + 1];
        unique_email(ajena, sizeof ajena, "ladron");
        email_change_link(&ana, ajena, tok);
        struct resp r;
        const char *nueva = how == 0 ? "tras-reset-1" : "tras-cambio-2";
        if (how == 0) { /* she resets it by e-mail: every session ends, hers comes back */
            char reset[TOKEN_LEN + 1];
            reset_link(&ana, reset);
            restablecer(reset, nueva, &r);
            assert_int_equal(r.status, 200);
            snprintf(ana.token, sizeof ana.token, "%s", jstr(r.json, "token"));
            resp_free(&r);
        } else { /* she changes it signed in */
            snprintf(body, sizeof body, "{\"password\":\"%s\",\"password_actual\":\"%s\"}", nueva,
                     ana.password);
            http_json(&S, "PATCH", "/api/auth/me", ana.token, body, &r);
            assert_int_equal(r.status, 200);
            resp_free(&r);
        }
        snprintf(ana.password, sizeof ana.password, "%s", nueva);
        snprintf(body, sizeof body, "{\"token\":\"%s\"}", tok);
        post("/api/auth/confirmar-email", NULL, body, &r);
        expect_error(&r, 400, LINK_BAD);
        resp_free(&r);
        assert_int_equal(login_status(ana.email, ana.password), 200);
        assert_int_equal(login_status(ajena, ana.password), 401);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recuperar_answers_the_same_for_any_address),
        cmocka_unit_test(restablecer_sets_the_password_ends_sessions_and_signs_in),
        cmocka_unit_test(a_password_given_by_the_operator_ends_her_reset_links),
        cmocka_unit_test(the_operator_sets_a_lost_password),
        cmocka_unit_test(an_email_change_dies_with_a_new_password),
        cmocka_unit_test(an_email_change_is_bounded_and_names_the_address_as_stored),
        cmocka_unit_test(an_expired_link_is_refused),
        cmocka_unit_test(an_account_without_a_password_is_claimed_by_a_reset),
        cmocka_unit_test(a_sign_up_over_an_account_without_a_password_sends_her_the_link),
        cmocka_unit_test(patch_me_changes_the_profile_by_the_rules),
        cmocka_unit_test(a_new_password_needs_the_current_one_and_ends_other_sessions),
        cmocka_unit_test(an_email_change_waits_for_the_link_sent_to_the_new_address),
        cmocka_unit_test(a_reset_link_dies_with_a_new_password_or_address),
        cmocka_unit_test(recuperar_is_throttled_per_address),
    };
    return cmocka_run_group_tests(tests, cuenta_group_setup, cuenta_group_teardown);
}
