/*
 * identity.c - the embedded identity provider (see identity.h).
 */
#include "identity.h"
#include "../util/log.h"

#include <ctype.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

struct ident {
    struct store *st;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int hashing; /* hashes running now */
    pthread_once_t dummy_once;
    char dummy_hash[crypto_pwhash_STRBYTES]; /* verified against for unknown e-mails */
};

static void hash_slot_take(struct ident *id)
{
    pthread_mutex_lock(&id->mu);
    while (id->hashing >= IDENT_MAX_HASHING) pthread_cond_wait(&id->cv, &id->mu);
    id->hashing++;
    pthread_mutex_unlock(&id->mu);
}

static void hash_slot_give(struct ident *id)
{
    pthread_mutex_lock(&id->mu);
    id->hashing--;
    pthread_cond_signal(&id->cv);
    pthread_mutex_unlock(&id->mu);
}

static br_err hash_password(struct ident *id, const char *pw, char out[crypto_pwhash_STRBYTES])
{
    hash_slot_take(id);
    int r = crypto_pwhash_str_alg(out, pw, strlen(pw), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                  crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13);
    hash_slot_give(id);
    if (r != 0) return err_set(BR_INTERNAL, "password hashing failed (out of memory?)");
    return BR_OK;
}

static bool verify_password(struct ident *id, const char *hash, const char *pw)
{
    hash_slot_take(id);
    int r = crypto_pwhash_str_verify(hash, pw, strlen(pw));
    hash_slot_give(id);
    return r == 0;
}

br_err ident_open(struct store *st, struct ident **out)
{
    struct ident *id = xcalloc(1, sizeof *id);
    id->st = st;
    pthread_mutex_init(&id->mu, NULL);
    pthread_cond_init(&id->cv, NULL);
    id->dummy_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    *out = id;
    return BR_OK;
}

/* A real hash of a random password, made on first need, so that a login
 * with an unknown e-mail costs the same time as one with a wrong password.
 * (pthread_once takes no argument, hence the thread-local hand-over.) */
static _Thread_local struct ident *dummy_for;

static void make_dummy(void)
{
    unsigned char rnd[16];
    char pw[33];
    randombytes_buf(rnd, sizeof rnd);
    sodium_bin2hex(pw, sizeof pw, rnd, sizeof rnd);
    if (hash_password(dummy_for, pw, dummy_for->dummy_hash) != BR_OK)
        dummy_for->dummy_hash[0] = '\0';
}

static const char *dummy_hash(struct ident *id)
{
    dummy_for = id;
    pthread_once(&id->dummy_once, make_dummy);
    return id->dummy_hash;
}

void ident_close(struct ident *id)
{
    if (!id) return;
    pthread_mutex_destroy(&id->mu);
    pthread_cond_destroy(&id->cv);
    free(id);
}

void ident_session_clear(struct ident_session *s)
{
    free(s->email);
    s->email = NULL;
    sodium_memzero(s->token, sizeof s->token);
}

bool ident_normalize_email(const char *in, char **out)
{
    if (!in) return false;
    while (*in && isspace((unsigned char)*in)) in++;
    size_t n = strlen(in);
    while (n && isspace((unsigned char)in[n - 1])) n--;
    if (n == 0 || n > 254 || !utf8_valid(in, n)) return false;
    char *e = xstrndup(in, n);
    size_t at = 0, ats = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)e[i];
        if (c >= 'A' && c <= 'Z') e[i] = (char)(c - 'A' + 'a');
        if (c <= 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '(' || c == ')' || c == ',' ||
            c == ';' || c == ':' || c == '\\' || c == '"' || c == '[' || c == ']')
            ok = false;
        if (c == '@') {
            at = i;
            ats++;
        }
    }
    if (ok && ats == 1 && at > 0 && at <= 64) {
        const char *dom = e + at + 1;
        size_t dl = n - at - 1;
        const char *dot = strchr(dom, '.');
        ok = dl >= 3 && dot && dom[0] != '.' && dom[dl - 1] != '.' && !strstr(dom, "..") &&
             dom[0] != '-' && e[0] != '.' && e[at - 1] != '.';
    } else {
        ok = false;
    }
    if (!ok) {
        free(e);
        return false;
    }
    *out = e;
    return true;
}

static void token_hash(const char *token, size_t n, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)token, n);
    sodium_bin2hex(out, 65, h, sizeof h);
}

static void new_token(char token[IDENT_TOKEN_LEN + 1], char hash[65])
{
    unsigned char raw[32];
    randombytes_buf(raw, sizeof raw);
    sodium_bin2base64(token, IDENT_TOKEN_LEN + 1, raw, sizeof raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(raw, sizeof raw);
    token_hash(token, IDENT_TOKEN_LEN, hash);
}

static void session_times(br_ts now, br_ts expires)
{
    int64_t t = clock_now_ms();
    iso8601_format(t, now);
    iso8601_format(t + (int64_t)IDENT_SESSION_DAYS * 86400 * 1000, expires);
}

static br_err check_password(const char *pw)
{
    size_t n = strlen(pw);
    if (!utf8_valid(pw, n) || utf8_count(pw, n) < IDENT_PASSWORD_MIN)
        return err_set(BR_INVALID, "Mínimo 6 caracteres");
    if (n > IDENT_PASSWORD_MAX) return err_set(BR_INVALID, "Contraseña demasiado larga");
    return BR_OK;
}

br_err ident_signup_check(const struct ident_signup *in)
{
    if (!in->email || !*in->email || !in->password || !*in->password)
        return err_set(BR_INVALID, "Faltan campos requeridos");
    br_err rc = check_password(in->password);
    if (rc) return rc;
    char *email = NULL;
    if (!ident_normalize_email(in->email, &email)) return err_set(BR_INVALID, "Email inválido");
    free(email);
    return BR_OK;
}

br_err ident_signup(struct ident *id, const struct ident_signup *in, bool open_session,
                    struct ident_session *out)
{
    memset(out, 0, sizeof *out);
    br_err rc = ident_signup_check(in);
    if (rc) return rc;
    char *email = NULL;
    if (!ident_normalize_email(in->email, &email)) return err_set(BR_INVALID, "Email inválido");

    char hash[crypto_pwhash_STRBYTES];
    rc = hash_password(id, in->password, hash);
    br_id uid;
    br_ts now, expires;
    char th[65];
    uuid_v4(uid);
    session_times(now, expires);
    if (open_session) new_token(out->token, th);
    struct new_user u = {
        .id = uid,
        .email = email,
        .password_hash = hash,
        .created_at = now,
        .last_sign_in_at = open_session ? now : NULL,
        .rol = in->rol ? in->rol : "cliente",
        .nombre = in->nombre,
        .telefono = in->telefono,
        .session_hash = open_session ? th : NULL,
        .session_expires_at = open_session ? expires : NULL,
    };
    if (!rc) rc = store_user_create(id->st, &u);
    if (rc == BR_CONFLICT) rc = err_set(BR_CONFLICT, "El email ya está registrado");
    if (rc) {
        free(email);
        ident_session_clear(out);
        return rc;
    }
    memcpy(out->user_id, uid, sizeof uid);
    out->email = email;
    return BR_OK;
}

br_err ident_login(struct ident *id, const char *email_in, const char *password,
                   struct ident_session *out)
{
    memset(out, 0, sizeof *out);
    if (!email_in || !*email_in || !password || !*password)
        return err_set(BR_INVALID, "Faltan campos requeridos");
    char *email = NULL;
    struct user u;
    char *hash = NULL;
    br_err rc = BR_NOTFOUND;
    if (ident_normalize_email(email_in, &email) && strlen(password) <= IDENT_PASSWORD_MAX)
        rc = store_user_by_email(id->st, email, &u, &hash);
    free(email);
    if (rc && rc != BR_NOTFOUND) return rc;
    bool ok;
    if (rc == BR_NOTFOUND) {
        (void)verify_password(id, dummy_hash(id), password);
        ok = false;
    } else {
        ok = verify_password(id, hash, password);
        free(hash);
    }
    if (!ok) {
        if (rc == BR_OK) user_clear(&u);
        return err_set(BR_UNAUTH, "Credenciales inválidas");
    }
    br_ts now, expires;
    char th[65];
    session_times(now, expires);
    new_token(out->token, th);
    rc = store_session_open(id->st, u.id, th, now, expires);
    if (rc) {
        user_clear(&u);
        ident_session_clear(out);
        return rc;
    }
    memcpy(out->user_id, u.id, sizeof u.id);
    out->email = u.email;
    u.email = NULL;
    user_clear(&u);
    return BR_OK;
}

static bool token_shape_ok(const char *t, size_t n)
{
    if (n != IDENT_TOKEN_LEN) return false;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return false;
    }
    return true;
}

br_err ident_authenticate(struct ident *id, const char *token, size_t n, struct principal *p)
{
    memset(p, 0, sizeof *p);
    if (!token || !token_shape_ok(token, n)) return err_set(BR_UNAUTH, "No autenticado");
    char th[65];
    token_hash(token, n, th);
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    br_err rc = store_session_principal(id->st, th, now, p);
    if (rc == BR_NOTFOUND) return err_set(BR_UNAUTH, "No autenticado");
    return rc;
}

br_err ident_logout(struct ident *id, const char *token, size_t n)
{
    if (!token || !token_shape_ok(token, n)) return BR_OK;
    char th[65];
    token_hash(token, n, th);
    return store_session_close(id->st, th);
}

br_err ident_set_password(struct ident *id, const char *user_id, const char *password)
{
    if (strlen(password) > IDENT_PASSWORD_MAX)
        return err_set(BR_INVALID, "Contraseña demasiado larga");
    char hash[crypto_pwhash_STRBYTES];
    br_err rc = hash_password(id, password, hash);
    if (!rc) rc = store_user_set_password(id->st, user_id, hash);
    if (rc == BR_NOTFOUND) rc = err_set(BR_NOTFOUND, "Usuario no encontrado");
    return rc;
}
