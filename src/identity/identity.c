/*
 * identity.c - the embedded identity provider (see identity.h).
 */
#include "identity.h"
#include "../domain/roles.h"
#include "../domain/records.h"
#include "../domain/rules.h"
#include "../util/cond.h"
#include "../util/log.h"

#include "../config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ident {
    struct store *st;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* on the monotonic clock */
    int hashing;       /* hashes running now */
    int signing_up;    /* of them, sign-ups' */
    int hash_max;
    int signup_max; /* sign-ups' share: one slot stays for everyone else */
    int hash_wait_ms;
    /* sign-in throttling */
    int acct_max, addr_max; /* failures within the window before a lock */
    int64_t window_ms, lock_ms, lock_max_ms;
    pthread_once_t dummy_once;
    char dummy_hash[crypto_pwhash_STRBYTES]; /* verified against for unknown e-mails */
};

static br_err busy(void)
{
    return err_set_retry(BR_BUSY, 1, "Servicio ocupado");
}

/* Who a hash is for. A sign-up is anyone's to ask for, as often as a client
 * likes: sign-ups share all slots but one, so that a flood of them never
 * keeps a sign-in, a reset or a password change from hashing. */
enum hash_for { HASH_ACCOUNT, HASH_SIGNUP };

static bool slot_free(const struct ident *id, enum hash_for who)
{
    if (id->hashing >= id->hash_max) return false;
    return who != HASH_SIGNUP || id->signing_up < id->signup_max;
}

/* Waits at most hash_wait_ms for a hashing slot: BR_BUSY past it. */
static br_err hash_slot_take(struct ident *id, enum hash_for who)
{
    struct timespec until = deadline_in(CLOCK_MONOTONIC, id->hash_wait_ms);
    pthread_mutex_lock(&id->mu);
    int w = 0;
    while (!slot_free(id, who) && w != ETIMEDOUT)
        w = pthread_cond_timedwait(&id->cv, &id->mu, &until);
    bool got = slot_free(id, who);
    if (got) {
        id->hashing++;
        if (who == HASH_SIGNUP) id->signing_up++;
    }
    pthread_mutex_unlock(&id->mu);
    if (!got) {
        log_warn("auth: no password-hashing slot within %d ms (BARBERIA_HASH_WAIT_MS); "
                 "answering busy",
                 id->hash_wait_ms);
        return busy();
    }
    return BR_OK;
}

static void hash_slot_give(struct ident *id, enum hash_for who)
{
    pthread_mutex_lock(&id->mu);
    id->hashing--;
    if (who == HASH_SIGNUP) id->signing_up--;
    /* waiters wait for different things (a sign-up for its share) */
    pthread_cond_broadcast(&id->cv);
    pthread_mutex_unlock(&id->mu);
}

static br_err hash_password(struct ident *id, enum hash_for who, const char *pw,
                            char out[crypto_pwhash_STRBYTES])
{
    br_err rc = hash_slot_take(id, who);
    if (rc) return rc;
    int r = crypto_pwhash_str_alg(out, pw, strlen(pw), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                  crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13);
    hash_slot_give(id, who);
    if (r != 0) return err_set(BR_INTERNAL, "password hashing failed (out of memory?)");
    return BR_OK;
}

/* OUT: *ok, whether pw matches hash. BR_BUSY when no slot came in time. */
static br_err verify_password(struct ident *id, const char *hash, const char *pw, bool *ok)
{
    *ok = false;
    br_err rc = hash_slot_take(id, HASH_ACCOUNT);
    if (rc) return rc;
    *ok = crypto_pwhash_str_verify(hash, pw, strlen(pw)) == 0;
    hash_slot_give(id, HASH_ACCOUNT);
    return BR_OK;
}

br_err ident_open(struct store *st, const struct config *cfg, struct ident **out)
{
    struct ident *id = xcalloc(1, sizeof *id);
    id->st = st;
    pthread_mutex_init(&id->mu, NULL);
    cond_init_mono(&id->cv);
    id->hash_max = cfg->hash_max;
    if (id->hash_max <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        id->hash_max = cores > 0 ? (int)(cores < 1024 ? cores : 1024) : 1;
    }
    id->signup_max = id->hash_max > 1 ? id->hash_max - 1 : 1;
    id->hash_wait_ms = cfg->hash_wait_ms > 0 ? cfg->hash_wait_ms : 2000;
    id->acct_max = cfg->login_max_failures > 0 ? cfg->login_max_failures : 5;
    id->addr_max = cfg->login_addr_max_failures > 0 ? cfg->login_addr_max_failures : 50;
    id->window_ms = (int64_t)(cfg->login_window_s > 0 ? cfg->login_window_s : 900) * 1000;
    id->lock_ms = (int64_t)(cfg->login_lock_s > 0 ? cfg->login_lock_s : 30) * 1000;
    id->lock_max_ms = (int64_t)(cfg->login_lock_max_s > 0 ? cfg->login_lock_max_s : 300) * 1000;
    if (id->lock_max_ms < id->lock_ms) id->lock_max_ms = id->lock_ms;
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
    /* once per process, outside the slots: waiting here would hold every
     * caller of pthread_once */
    if (crypto_pwhash_str_alg(
            dummy_for->dummy_hash, pw, strlen(pw), crypto_pwhash_OPSLIMIT_INTERACTIVE,
            crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13) != 0)
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
    while (*in && isspace((unsigned char)*in))
        in++;
    size_t n = strlen(in);
    while (n && isspace((unsigned char)in[n - 1]))
        n--;
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
        /* the domain a deleted account's sign-in is moved to is nobody's:
         * an address there would take over (or block) that account */
        ok = ok && !email_es_eliminado(e);
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
    if (!rule_password_long_enough(pw)) return err_set(BR_INVALID, "Mínimo 6 caracteres");
    if (!rule_password_short_enough(pw)) return err_set(BR_INVALID, "Contraseña demasiado larga");
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
    rc = hash_password(id, HASH_SIGNUP, in->password, hash);
    br_id uid;
    br_ts now, expires;
    char th[65];
    uuid_v4(uid);
    session_times(now, expires);
    if (open_session) new_token(out->token, th);
    /* the profile's texts are kept as one line each, bounded as everywhere
     * else they are given (the contract's sign-up refuses none of them) */
    char nombre[RULE_NOMBRE_MAX + 1], telefono[RULE_TELEFONO_MAX + 1];
    /* an empty one is none, as the contract counts "" as absent */
    bool has_nombre = in->nombre && *in->nombre, has_telefono = in->telefono && *in->telefono;
    if (has_nombre) rule_una_linea(in->nombre, nombre, sizeof nombre);
    if (has_telefono) rule_una_linea(in->telefono, telefono, sizeof telefono);
    struct new_user u = {
        .id = uid,
        .email = email,
        .password_hash = hash,
        .created_at = now,
        .last_sign_in_at = open_session ? now : NULL,
        .rol = in->rol ? in->rol : ROL_CLIENTE,
        .nombre = has_nombre ? nombre : NULL,
        .telefono = has_telefono ? telefono : NULL,
        .session_hash = open_session ? th : NULL,
        .session_expires_at = open_session ? expires : NULL,
    };
    if (!rc) rc = store_user_create(id->st, &u);
    if (rc == BR_CONFLICT && !open_session) {
        /* the operator gives a client the front desk created, who never
         * had a password, her account (docs/decisions.md) */
        bool claimed = false;
        rc = store_user_claim(id->st, &u, &claimed, uid);
        if (!rc && !claimed) rc = BR_CONFLICT;
        if (claimed) log_info("auth: a front-desk client's account %s was given a password", uid);
    }
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

/* --- sign-in throttling ----------------------------------------------------------
 *
 * Every attempt is counted as a failure, against its account and its client
 * address, before its password is checked: one store write transaction
 * checks that no key is locked and counts the attempt (store_throttle_update:
 * the SQLite writer's transaction, a PostgreSQL advisory lock per key), so a
 * burst of concurrent guesses gets at most the limit's worth checked and
 * 429 for every other, however many nodes share the database. Reaching the
 * limit this way starts the lock as a real failure does. What is known not
 * to be a failure gives its count back afterwards (throttle_give_back): a
 * right password clears its account's record and takes its own count back
 * from the address; an attempt that was never checked (503: no hashing slot
 * in time; a store error) takes both back. A wrong password, or any
 * password for an unknown e-mail, keeps it; when its count started a lock,
 * the lock is timed from that proof (throttle_confirm). */

enum { KEY_ACCOUNT, KEY_ADDRESS };

struct throttle_keys {
    struct ident *id;
    char *key[2];             /* "email:<address>" and "addr:<ip>"; either may be NULL */
    struct throttle_key k[2]; /* the keys there are, k[0..n) */
    int which[2];             /* KEY_ACCOUNT or KEY_ADDRESS of k[i] */
    int max[2];
    int n;
    int64_t now;
    /* the reservation: each key's state before and after it */
    bool reserved;
    int64_t locked_until; /* when refused: the end of the latest lock */
    struct throttle_state before[2], after[2];
    bool before_found[2];
    bool started[2]; /* the reservation started a lock of k[i] */
    /* the give-back */
    bool clear_account;
    bool lifted[2]; /* it ended a running lock of k[i] */
};

/* The keys of an attempt: "<acct>:<subject>" and "<addr>:<remote>" (a
 * sign-in's: "email:", "addr:"; each other kind has keys of its own). */
static void throttle_keys_make(struct ident *id, const char *acct, const char *subject,
                               const char *addr, const char *remote, struct throttle_keys *t)
{
    memset(t, 0, sizeof *t);
    t->id = id;
    t->key[KEY_ACCOUNT] = subject ? xasprintf("%s:%s", acct, subject) : NULL;
    t->key[KEY_ADDRESS] = remote && *remote ? xasprintf("%s:%s", addr, remote) : NULL;
    for (int i = 0; i < 2; i++) {
        if (!t->key[i]) continue;
        t->k[t->n].key = t->key[i];
        t->which[t->n] = i;
        t->max[t->n] = i == KEY_ACCOUNT ? id->acct_max : id->addr_max;
        t->n++;
    }
}

static void throttle_keys_clear(struct throttle_keys *t)
{
    free(t->key[0]);
    free(t->key[1]);
}

static br_err throttled(int64_t until, int64_t now)
{
    int secs = (int)((until - now + 999) / 1000);
    return err_set_retry(BR_THROTTLED, secs, "Demasiados intentos");
}

/* A read ahead of the reservation: a key already locked is refused at the
 * cost of a read, not of a write transaction. BR_THROTTLED "Demasiados
 * intentos" (with Retry-After) while any key is locked. */
static br_err throttle_check(struct ident *id, const struct throttle_keys *t)
{
    int64_t until = 0;
    for (int i = 0; i < t->n; i++) {
        struct throttle_state s;
        bool found = false;
        br_err rc = store_throttle_get(id->st, t->k[i].key, t->now, &s, &found);
        if (rc) return rc;
        if (s.locked_until_ms > until) until = s.locked_until_ms;
    }
    return until > t->now ? throttled(until, t->now) : BR_OK;
}

/* One more failure for key i: failures older than the window are
 * forgotten; reaching the key's maximum starts a lock of lock_ms, doubled
 * for each consecutive lock up to lock_max_ms; a whole window without
 * failures after a lock has ended forgets the doubling. Returns whether a
 * lock started. */
static bool throttle_step(struct throttle_keys *t, int i, struct throttle_state *s)
{
    struct ident *id = t->id;
    int64_t now = t->now;
    bool locks = false;
    if (s->lockouts && s->locked_until_ms + id->window_ms <= now) s->lockouts = 0;
    if (s->window_start_ms + id->window_ms <= now) {
        s->failures = 0;
        s->window_start_ms = now;
    }
    s->failures++;
    if (s->failures >= t->max[i]) {
        s->lockouts++;
        int64_t lock = id->lock_ms;
        for (int64_t j = 1; j < s->lockouts && lock < id->lock_max_ms; j++)
            lock *= 2;
        if (lock > id->lock_max_ms) lock = id->lock_max_ms;
        s->locked_until_ms = now + lock;
        s->failures = 0;
        s->window_start_ms = now;
        locks = true;
    }
    int64_t a_end = s->window_start_ms + id->window_ms;
    int64_t l_end = s->locked_until_ms + id->window_ms;
    s->forget_at_ms = a_end > l_end ? a_end : l_end;
    return locks;
}

/* Inside the store's transaction: refuses when any key is locked (counting
 * nothing), else counts the attempt against every key. */
static void throttle_reserve_fn(void *ud, struct throttle_key *keys, int n)
{
    struct throttle_keys *t = ud;
    t->reserved = false;
    t->locked_until = 0;
    for (int i = 0; i < n; i++)
        if (keys[i].state.locked_until_ms > t->locked_until)
            t->locked_until = keys[i].state.locked_until_ms;
    if (t->locked_until > t->now) return;
    t->locked_until = 0;
    for (int i = 0; i < n; i++) {
        t->before[i] = keys[i].state;
        t->before_found[i] = keys[i].found;
        t->started[i] = throttle_step(t, i, &keys[i].state);
        t->after[i] = keys[i].state;
        keys[i].op = THROTTLE_PUT;
    }
    t->reserved = true;
}

/* Counts the attempt (see above). BR_THROTTLED, counting nothing, while
 * any key is locked. */
static br_err throttle_reserve(struct ident *id, struct throttle_keys *t)
{
    if (t->n == 0) return BR_OK;
    br_err rc = store_throttle_update(id->st, t->k, t->n, t->now, true, throttle_reserve_fn, t);
    if (rc) return rc;
    if (!t->reserved) return throttled(t->locked_until, t->now);
    for (int i = 0; i < t->n; i++)
        if (t->started[i])
            log_warn("auth: %d failed sign-ins for %s (those still being checked included); "
                     "locked for %lld s",
                     t->max[i], t->k[i].key,
                     (long long)((t->after[i].locked_until_ms - t->now) / 1000));
    return BR_OK;
}

static bool state_same(const struct throttle_state *a, const struct throttle_state *b)
{
    return a->failures == b->failures && a->window_start_ms == b->window_start_ms &&
           a->locked_until_ms == b->locked_until_ms && a->lockouts == b->lockouts &&
           a->forget_at_ms == b->forget_at_ms;
}

/* Inside the store's transaction: gives the reservation back, key by key.
 * The account's record is deleted when clear_account (a right password).
 * Otherwise, a record still exactly as the reservation left it returns to
 * what it was before (the lock the reservation started, if any, ends); a
 * record others have counted on since, in the same window and under the
 * same lock, loses one failure; anything else (the window the reservation
 * was counted in has passed, or a later attempt started a lock with it) is
 * kept: the reservation is spent. */
static void throttle_give_back_fn(void *ud, struct throttle_key *keys, int n)
{
    struct throttle_keys *t = ud;
    int64_t now = clock_now_ms();
    for (int i = 0; i < n; i++) {
        struct throttle_key *k = &keys[i];
        bool was_locked = k->found && k->state.locked_until_ms > now;
        t->lifted[i] = false;
        k->op = THROTTLE_KEEP;
        if (!k->found) continue;
        if (t->clear_account && t->which[i] == KEY_ACCOUNT) {
            k->op = THROTTLE_DELETE;
        } else if (state_same(&k->state, &t->after[i])) {
            k->op = t->before_found[i] ? THROTTLE_PUT : THROTTLE_DELETE;
            k->state = t->before[i];
        } else if (k->state.window_start_ms == t->after[i].window_start_ms &&
                   k->state.locked_until_ms == t->after[i].locked_until_ms &&
                   k->state.failures > 0) {
            k->state.failures--;
            k->op = THROTTLE_PUT;
        }
        t->lifted[i] = was_locked && (k->op == THROTTLE_DELETE ||
                                      (k->op == THROTTLE_PUT && k->state.locked_until_ms <= now));
    }
}

/* Gives the reservation back (see throttle_give_back_fn): clear_account for
 * a right password, else for an attempt that was never checked. */
static br_err throttle_give_back(struct ident *id, struct throttle_keys *t, bool clear_account)
{
    if (!t->reserved) return BR_OK;
    t->clear_account = clear_account;
    br_err rc =
        store_throttle_update(id->st, t->k, t->n, clock_now_ms(), false, throttle_give_back_fn, t);
    if (rc) return rc;
    t->reserved = false;
    for (int i = 0; i < t->n; i++)
        if (t->lifted[i])
            log_info("auth: the lock of %s is lifted: an attempt counted toward it had the "
                     "right password",
                     t->k[i].key);
    return BR_OK;
}

/* Inside the store's transaction: a lock this attempt's reservation started
 * lasts its whole length from the moment the attempt was proven wrong, not
 * from its reservation (the hash between the two may take long on a busy
 * machine), while the record still holds that lock. */
static void throttle_confirm_fn(void *ud, struct throttle_key *keys, int n)
{
    struct throttle_keys *t = ud;
    int64_t now = clock_now_ms();
    for (int i = 0; i < n; i++) {
        struct throttle_key *k = &keys[i];
        k->op = THROTTLE_KEEP;
        if (!t->started[i] || !k->found || k->state.locked_until_ms != t->after[i].locked_until_ms)
            continue;
        int64_t shift = now - t->now;
        if (shift <= 0) continue;
        k->state.locked_until_ms += shift;
        k->state.forget_at_ms += shift;
        k->op = THROTTLE_PUT;
    }
}

/* A wrong password that started a lock: see throttle_confirm_fn. */
static void throttle_confirm(struct ident *id, struct throttle_keys *t)
{
    bool started = false;
    for (int i = 0; i < t->n; i++)
        started |= t->started[i];
    if (!started) return;
    if (store_throttle_update(id->st, t->k, t->n, clock_now_ms(), false, throttle_confirm_fn, t))
        log_warn("auth: a lock runs from its first count, not its proof, for %s: %s",
                 t->key[KEY_ACCOUNT] ? t->key[KEY_ACCOUNT] : t->key[KEY_ADDRESS], err_msg());
}

/* The check of a sign-in (see ident_login): throttled, the time of one
 * hash whatever the outcome. OUT: *out, the user (user_clear). */
static br_err credentials_check(struct ident *id, const char *email_in, const char *password,
                                const char *remote, struct user *out, char **checked)
{
    memset(out, 0, sizeof *out);
    if (checked) *checked = NULL;
    if (!email_in || !*email_in || !password || !*password)
        return err_set(BR_INVALID, "Faltan campos requeridos");
    char *email = NULL;
    if (!ident_normalize_email(email_in, &email)) email = NULL;
    struct throttle_keys t;
    throttle_keys_make(id, "email", email, "addr", remote, &t);
    t.now = clock_now_ms();
    br_err rc = throttle_check(id, &t);
    if (!rc) rc = throttle_reserve(id, &t);
    if (rc) {
        free(email);
        throttle_keys_clear(&t);
        return rc;
    }
    struct user u = {0};
    char *hash = NULL;
    rc = BR_NOTFOUND;
    if (email && rule_password_short_enough(password))
        rc = store_user_by_email(id->st, email, &u, &hash);
    free(email);
    if (rc == BR_OK && (!hash || !*hash)) {
        /* no usable password (created at the front desk, or deleted):
         * checked like an unknown e-mail, in the same time */
        free(hash);
        hash = NULL;
        user_clear(&u);
        rc = BR_NOTFOUND;
    }
    bool ok = false;
    if (rc == BR_NOTFOUND) {
        rc = verify_password(id, dummy_hash(id), password, &ok);
        ok = false;
    } else if (rc == BR_OK && (!hash || !*hash)) {
        /* no password (a client the front desk created): never signs in,
         * and costs the time of a wrong password */
        free(hash);
        rc = verify_password(id, dummy_hash(id), password, &ok);
        ok = false;
    } else if (rc == BR_OK) {
        rc = verify_password(id, hash, password, &ok);
        if (!rc && ok && checked)
            *checked = hash; /* the hash that said yes: the caller's */
        else
            free(hash);
    }
    if (rc) {
        /* never checked (no hashing slot in time, a store error): not a
         * failure; the answer is rc's whatever the give-back does */
        struct err_kept why;
        err_keep(&why);
        if (throttle_give_back(id, &t, false))
            log_warn("auth: an unchecked sign-in stays counted for %s: %s",
                     t.key[KEY_ACCOUNT] ? t.key[KEY_ACCOUNT] : t.key[KEY_ADDRESS], err_msg());
        err_restore(rc, &why);
    } else if (!ok) {
        throttle_confirm(id, &t); /* the reservation stays */
        rc = err_set(BR_UNAUTH, "Credenciales inválidas");
    } else {
        rc = throttle_give_back(id, &t, true);
    }
    throttle_keys_clear(&t);
    if (rc) {
        user_clear(&u);
        if (checked) {
            free(*checked);
            *checked = NULL;
        }
        return rc;
    }
    *out = u;
    return BR_OK;
}

br_err ident_login(struct ident *id, const char *email_in, const char *password, const char *remote,
                   struct ident_session *out)
{
    memset(out, 0, sizeof *out);
    struct user u;
    char *checked = NULL;
    br_err rc = credentials_check(id, email_in, password, remote, &u, &checked);
    if (rc) return rc;
    br_ts ts_now, expires;
    char th[65];
    session_times(ts_now, expires);
    new_token(out->token, th);
    /* only while that password is still hers: a change, a reset or the
     * account's end made while it was being checked ends this sign-in too */
    rc = store_session_open(id->st, u.id, th, ts_now, expires, checked);
    free(checked);
    if (rc == BR_NOTFOUND) rc = err_set(BR_UNAUTH, "Credenciales inválidas");
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

/* The session lookup's outcome as the API answers it. */
static br_err auth_outcome(br_err rc)
{
    if (rc == BR_NOTFOUND) return err_set(BR_UNAUTH, "No autenticado");
    return rc;
}

/* The store's key of a token (its hash) and the time to compare the
 * session's expiry with; false when the token is malformed. */
static bool session_key(const char *token, size_t n, char th[65], br_ts now)
{
    if (!token || !token_shape_ok(token, n)) return false;
    token_hash(token, n, th);
    iso8601_format(clock_now_ms(), now);
    return true;
}

br_err ident_authenticate(struct ident *id, const char *token, size_t n, struct principal *p)
{
    memset(p, 0, sizeof *p);
    char th[65];
    br_ts now;
    if (!session_key(token, n, th, now)) return err_set(BR_UNAUTH, "No autenticado");
    return auth_outcome(store_session_principal(id->st, th, now, p));
}

br_err ident_authenticate_citas(struct ident *id, const char *token, size_t n, struct principal *p,
                                const struct cita_range *q, store_cita_fn fn, void *ud,
                                bool *listed)
{
    memset(p, 0, sizeof *p);
    *listed = false;
    char th[65];
    br_ts now;
    if (!session_key(token, n, th, now)) return err_set(BR_UNAUTH, "No autenticado");
    br_err rc = store_session_citas(id->st, th, now, p, q, fn, ud, listed);
    return *listed ? rc : auth_outcome(rc);
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
    if (!rule_password_short_enough(password))
        return err_set(BR_INVALID, "Contraseña demasiado larga");
    char hash[crypto_pwhash_STRBYTES];
    br_err rc = hash_password(id, HASH_ACCOUNT, password, hash);
    if (!rc) rc = store_user_set_password(id->st, user_id, hash);
    if (rc == BR_NOTFOUND) rc = err_set(BR_NOTFOUND, "Usuario no encontrado");
    return rc;
}

/* --- the account's links: password reset, e-mail change ----------------------------------
 *
 * A link carries a fresh 256-bit token (base64url, 43 characters, like a
 * session's); the store keeps its SHA-256 only, and the outbox row keeps
 * the link itself only until the message is sent. The token travels in the
 * URL's fragment (<public>/restablecer#token=...), which a browser never
 * sends to a server: it reaches no access log and no Referer. */

#define LINK_INVALID "El enlace no es válido o ha caducado"

/* A new link: its token's hash (all the store keeps), when it was made and
 * when it expires, and the link itself, <base>/<page>#token=... (NULL
 * without a base; freed with wipe_free). */
struct new_link {
    char th[65];
    br_ts now, expires;
    char *link;
};

static void link_new(struct new_link *l, const char *base, const char *page)
{
    char token[IDENT_TOKEN_LEN + 1];
    new_token(token, l->th);
    int64_t t = clock_now_ms();
    iso8601_format(t, l->now);
    iso8601_format(t + (int64_t)IDENT_LINK_MINUTES * 60000, l->expires);
    l->link = base ? xasprintf("%s/%s#token=%s", base, page, token) : NULL;
    sodium_memzero(token, sizeof token);
}

/* Counts a request that sends a link by e-mail, whatever it names: per
 * address the link goes to (key "<kind>:<address>") and per client address
 * ("<kind>-addr:<ip>"), apart from the sign-in's keys (a sign-in is not
 * locked by them), with the sign-in's limits. BR_THROTTLED "Demasiados
 * intentos" past them. */
static br_err link_request_count(struct ident *id, const char *kind, const char *to,
                                 const char *remote)
{
    char addr[32];
    snprintf(addr, sizeof addr, "%s-addr", kind);
    struct throttle_keys t;
    throttle_keys_make(id, kind, to, addr, remote, &t);
    t.now = clock_now_ms();
    br_err rc = throttle_check(id, &t);
    if (!rc) rc = throttle_reserve(id, &t);
    throttle_keys_clear(&t);
    return rc;
}

br_err ident_reset_request(struct ident *id, const char *email_in, const char *remote,
                           const char *link_base, bool *queued)
{
    *queued = false;
    if (!email_in || !*email_in) return err_set(BR_INVALID, "Faltan campos requeridos");
    char *email = NULL;
    if (!ident_normalize_email(email_in, &email)) return err_set(BR_INVALID, "Email inválido");
    br_err rc = link_request_count(id, "recuperar", email, remote);
    if (rc) {
        free(email);
        return rc;
    }
    struct new_link l;
    link_new(&l, link_base, "restablecer");
    struct cuenta_mail m = {0};
    if (l.link) {
        uuid_v4(m.id);
        m.enlace = l.link;
        memcpy(m.created_at, l.now, sizeof l.now);
    }
    struct reset_request r = {email, l.th, l.now, l.expires, l.link ? &m : NULL};
    rc = store_reset_request(id->st, &r, queued);
    wipe_free(l.link);
    free(email);
    return rc;
}

br_err ident_claim_link(struct ident *id, const char *email_in, const char *remote,
                        const char *link_base, bool *queued)
{
    *queued = false;
    char *email = NULL;
    if (!email_in || !ident_normalize_email(email_in, &email)) return BR_OK;
    struct user u;
    char *hash = NULL;
    br_err rc = store_user_by_email(id->st, email, &u, &hash);
    bool sin_clave = rc == BR_OK && hash && !*hash;
    free(hash);
    if (rc == BR_OK) {
        if (sin_clave) {
            /* a client's only: a staff account without a password (a desk
             * client an administrator made staff) is never claimed so */
            struct perfil p;
            memset(&p, 0, sizeof p);
            rc = store_perfil_get(id->st, u.id, &p);
            sin_clave = rc == BR_OK && !rol_is_staff(p.rol);
            perfil_clear(&p);
        }
        user_clear(&u);
    }
    rc = rc == BR_NOTFOUND ? BR_OK : rc;
    if (!rc && sin_clave) rc = ident_reset_request(id, email, remote, link_base, queued);
    free(email);
    return rc;
}

static bool link_token_ok(const char *token)
{
    return token && token_shape_ok(token, strlen(token));
}

br_err ident_reset_apply(struct ident *id, const char *token, const char *password,
                         struct ident_session *out)
{
    memset(out, 0, sizeof *out);
    if (!token || !*token || !password || !*password)
        return err_set(BR_INVALID, "Faltan campos requeridos");
    br_err rc = check_password(password);
    if (rc) return rc;
    if (!link_token_ok(token)) return err_set(BR_INVALID, LINK_INVALID);
    char th[65];
    token_hash(token, strlen(token), th);
    br_ts now, expires;
    iso8601_format(clock_now_ms(), now);
    br_id uid;
    /* a read first: an unusable link costs no hash */
    rc = store_token_check(id->st, th, "restablecer", now, uid);
    if (rc == BR_NOTFOUND) return err_set(BR_INVALID, LINK_INVALID);
    if (rc) return rc;
    char hash[crypto_pwhash_STRBYTES];
    rc = hash_password(id, HASH_ACCOUNT, password, hash);
    if (rc) return rc;
    char sh[65];
    session_times(now, expires);
    new_token(out->token, sh);
    struct reset_apply a = {th, now, hash, sh, expires};
    struct user u;
    rc = store_reset_apply(id->st, &a, &u);
    sodium_memzero(hash, sizeof hash);
    if (rc == BR_NOTFOUND) rc = err_set(BR_INVALID, LINK_INVALID);
    if (rc) {
        ident_session_clear(out);
        return rc;
    }
    log_info("auth: the password of user %s was set through a reset link", u.id);
    memcpy(out->user_id, u.id, sizeof u.id);
    out->email = u.email;
    u.email = NULL;
    user_clear(&u);
    return BR_OK;
}

br_err ident_verify(struct ident *id, const char *email, const char *password, const char *remote)
{
    struct user u;
    br_err rc = credentials_check(id, email, password, remote, &u, NULL);
    if (rc == BR_UNAUTH) return err_set(BR_INVALID, "La contraseña actual no es correcta");
    if (rc == BR_INVALID && (!password || !*password))
        return err_set(BR_INVALID, "Falta la contraseña actual");
    if (!rc) user_clear(&u);
    return rc;
}

br_err ident_password_change(struct ident *id, const struct principal *p, const char *current,
                             const char *password, const char *remote, const char *keep_token,
                             size_t keep_n)
{
    br_err rc = check_password(password);
    if (rc) return rc;
    rc = ident_verify(id, p->email, current, remote);
    if (rc) return rc;
    char hash[crypto_pwhash_STRBYTES];
    rc = hash_password(id, HASH_ACCOUNT, password, hash);
    if (rc) return rc;
    char keep[65] = "";
    if (keep_token && token_shape_ok(keep_token, keep_n)) token_hash(keep_token, keep_n, keep);
    rc = store_password_change(id->st, p->user_id, hash, keep[0] ? keep : NULL);
    sodium_memzero(hash, sizeof hash);
    if (!rc)
        log_info("auth: user %s changed their password; their other sessions ended", p->user_id);
    return rc;
}

br_err ident_email_change_request(struct ident *id, const struct principal *p, const char *current,
                                  const char *email_in, const char *remote, const char *link_base,
                                  char **pending)
{
    *pending = NULL;
    char *email = NULL;
    if (!ident_normalize_email(email_in, &email)) return err_set(BR_INVALID, "Email inválido");
    br_err rc = BR_OK;
    if (p->email && !strcmp(email, p->email)) rc = err_set(BR_INVALID, "Ese ya es tu email");
    if (!rc) rc = ident_verify(id, p->email, current, remote);
    if (!rc && !link_base)
        rc = err_set(BR_INVALID, "No se puede confirmar el cambio: el correo no está configurado");
    /* each request mails the address given: bounded like a reset's */
    if (!rc) rc = link_request_count(id, "cambio-email", email, remote);
    if (rc) {
        free(email);
        return rc;
    }
    struct new_link l;
    link_new(&l, link_base, "confirmar-email");
    const char *nombre = p->has_perfil ? p->perfil.nombre : NULL;
    struct cuenta_mail confirm = {
        .kind = "email_confirmar", .recipient = email, .nombre = (char *)nombre, .enlace = l.link};
    struct cuenta_mail notice = {
        .kind = "email_aviso", .recipient = p->email, .nombre = (char *)nombre};
    uuid_v4(confirm.id);
    uuid_v4(notice.id);
    memcpy(confirm.created_at, l.now, sizeof l.now);
    memcpy(notice.created_at, l.now, sizeof l.now);
    struct email_request r = {p->user_id, email, l.th, l.now, l.expires, &confirm, &notice};
    rc = store_email_request(id->st, &r);
    if (rc == BR_CONFLICT) rc = err_set(BR_CONFLICT, "El email ya está registrado");
    /* her account closed after her session was read: nothing of hers now */
    if (rc == BR_UNAUTH) rc = err_set(BR_UNAUTH, "No autenticado");
    wipe_free(l.link);
    if (!rc)
        *pending = email;
    else
        free(email);
    return rc;
}

br_err ident_email_change_apply(struct ident *id, const char *token, char **email)
{
    *email = NULL;
    if (!token || !*token) return err_set(BR_INVALID, "Faltan campos requeridos");
    if (!link_token_ok(token)) return err_set(BR_INVALID, LINK_INVALID);
    char th[65];
    token_hash(token, strlen(token), th);
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    br_err rc = store_email_apply(id->st, th, now, email);
    if (rc == BR_NOTFOUND) return err_set(BR_INVALID, LINK_INVALID);
    if (rc == BR_CONFLICT) return err_set(BR_CONFLICT, "El email ya está registrado");
    return rc;
}
