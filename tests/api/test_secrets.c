/*
 * test_secrets.c - tokens and passwords never reach the logs: a whole
 * session's life (sign-up, login, a failed login, a sign-in lock, an
 * administrator's password change, requests carrying the session as a
 * Bearer header, as a cookie and misplaced in a query string, logout) runs
 * against the real server, and its stderr, read after it stopped, holds
 * none of the passwords or tokens.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PW_SIGNUP "Zq81-alfa-secreto"
#define PW_WRONG  "Xk27-beta-erroneo"
#define PW_NEW    "Wm55-gamma-nuevo"
#define PW_SHORT  "Vj3"

static char *login_token(const struct srv *s, const char *email, const char *pw, long want)
{
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", email, pw);
    struct resp r;
    http_json(s, "POST", "/api/auth/login", NULL, body, &r);
    if (r.status != want) fail_msg("login: expected %ld, got %ld %s", want, r.status, r.body);
    char *tok = jstr(r.json, "token") ? strdup(jstr(r.json, "token")) : NULL;
    resp_free(&r);
    return tok;
}

static void expect_absent(const char *log, const char *what, const char *secret)
{
    if (secret && *secret && strstr(log, secret))
        fail_msg("the server's log holds %s (%s)", what, secret);
}

static void tokens_and_passwords_never_appear_in_logs(void **state)
{
    (void)state;
    struct srv s = {0};
    const char *env[] = {"BARBERIA_LOGIN_MAX_FAILURES=2", "BARBERIA_LOGIN_LOCK_S=3", NULL};
    srv_start(&s, env, NULL);
    struct user admin;
    make_user(&s, &admin, "Admin", "admin");

    /* sign-up */
    char email[128];
    unique_email(email, sizeof email, "secretos");
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\",\"nombre\":\"Ana\"}", email,
             PW_SIGNUP);
    struct resp r;
    http_json(&s, "POST", "/api/auth/signup", NULL, body, &r);
    assert_int_equal(r.status, 201);
    char *t_signup = strdup(jstr(r.json, "token"));
    char *uid = strdup(jstr(json_object_get(r.json, "user"), "id"));
    resp_free(&r);

    /* login, a failed login, a lock */
    char *t_login = login_token(&s, email, PW_SIGNUP, 200);
    free(login_token(&s, email, PW_WRONG, 401));
    free(login_token(&s, email, PW_WRONG, 401));
    free(login_token(&s, email, PW_WRONG, 429));

    /* the session as a header, as a cookie, and misplaced in a query */
    http_get(&s, "/api/auth/me", t_login, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char cookie[128];
    snprintf(cookie, sizeof cookie, "barberia_session=%s", t_signup);
    struct req_opts o = {.cookie = cookie};
    http_req(&s, "GET", "/api/citas", &o, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char path[256];
    snprintf(path, sizeof path, "/api/citas?access_token=%s&password=%s", t_login, PW_SIGNUP);
    http_get(&s, path, NULL, &r);
    assert_int_equal(r.status, 401);
    resp_free(&r);
    /* a malformed token, and one that matches no session */
    http_get(&s, "/api/auth/me", "Yy9-not-a-token-but-secret-looking", &r);
    assert_int_equal(r.status, 401);
    resp_free(&r);

    /* an administrator's password change: one refused, one done */
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":\"%s\"}", uid, PW_SHORT);
    http_json(&s, "PATCH", "/api/admin/usuarios", admin.token, body, &r);
    assert_int_equal(r.status, 400);
    resp_free(&r);
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":\"%s\"}", uid, PW_NEW);
    http_json(&s, "PATCH", "/api/admin/usuarios", admin.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    /* the lock has passed by now or not: sign in with the new password when
     * it lets us, then log out with a cookie */
    char *t_new = NULL;
    for (int i = 0; i < 80 && !t_new; i++) {
        snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", email, PW_NEW);
        http_json(&s, "POST", "/api/auth/login", NULL, body, &r);
        if (r.status == 200)
            t_new = strdup(jstr(r.json, "token"));
        else
            assert_int_equal(r.status, 429);
        resp_free(&r);
        if (!t_new) usleep(500 * 1000);
    }
    assert_non_null(t_new);
    snprintf(cookie, sizeof cookie, "barberia_session=%s", t_new);
    struct req_opts out = {.cookie = cookie};
    http_req(&s, "POST", "/api/auth/logout", &out, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_json(&s, "POST", "/api/auth/logout", admin.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    assert_int_equal(srv_stop(&s), 0);
    char *log = srv_log(&s);
    assert_non_null(log);
    /* the log did record the requests */
    assert_non_null(strstr(log, "POST /api/auth/login 401"));
    assert_non_null(strstr(log, "POST /api/auth/login 429"));
    assert_non_null(strstr(log, "PATCH /api/admin/usuarios 200"));
    assert_non_null(strstr(log, "POST /api/auth/logout 200"));
    expect_absent(log, "the sign-up password", PW_SIGNUP);
    expect_absent(log, "a wrong password", PW_WRONG);
    expect_absent(log, "the new password", PW_NEW);
    expect_absent(log, "a refused password", PW_SHORT);
    expect_absent(log, "the admin's password", admin.password);
    expect_absent(log, "the sign-up token", t_signup);
    expect_absent(log, "the login token", t_login);
    expect_absent(log, "the new token", t_new);
    expect_absent(log, "the admin's token", admin.token);
    expect_absent(log, "a malformed token", "Yy9-not-a-token");
    free(log);
    free(t_signup);
    free(t_login);
    free(t_new);
    free(uid);
    srv_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tokens_and_passwords_never_appear_in_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
