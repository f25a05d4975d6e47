/*
 * store.c - the store's lifetime (open, close, migrate, ping) and what it
 * shares across aggregates; each aggregate's statements are in a file of
 * its own beside this one (identity.c, catalog.c, citas.c, cambios.c,
 * fotos.c, outbox.c, transfer.c, plans.c), over the SQL port (see store.h,
 * db.h, store_int.h).
 *
 * Each operation leases a connection for just as long as it needs it; a
 * transaction stays on one connection. No statement is ever built from
 * input: values travel as bound parameters and every SQL text is a constant
 * (the listing's variants are assembled once from constant fragments).
 */
#include "store_int.h"
#include "../config.h"
#include "../util/metrics.h"

#include <stdio.h>

/* --- lifetime ------------------------------------------------------------------ */

/* The SQL adapters, by the scheme of BARBERIA_DATABASE_URL. Without a URL
 * the embedded SQLite file in the data folder. */
static const struct {
    const char *scheme;
    const struct db_ops *ops;
} adapters[] = {
    {"postgresql://", &db_pg_ops},
    {"postgres://", &db_pg_ops},
};

br_err store_open(const struct config *cfg, int pool_size, struct store **out)
{
    const struct db_ops *ops = &db_sqlite_ops;
    char *target = NULL;
    if (cfg->database_url) {
        for (size_t i = 0; i < ARRAY_LEN(adapters) && !target; i++)
            if (!strncmp(cfg->database_url, adapters[i].scheme, strlen(adapters[i].scheme))) {
                ops = adapters[i].ops;
                target = xstrdup(cfg->database_url);
            }
        if (!target)
            return err_set(BR_CONFIG,
                           "BARBERIA_DATABASE_URL: unknown scheme (expected postgresql://...)");
    } else {
        target = xasprintf("%s/barberia.db", cfg->data_dir);
    }
    struct db *db = NULL;
    struct db_pool_opts o = {.size = pool_size,
                             .wait_ms = cfg->db_wait_ms,
                             .lock_wait_ms = cfg->db_lock_wait_ms,
                             .ping_ms = cfg->health_timeout_ms};
    br_err rc = ops->open(target, &o, &db);
    free(target);
    if (rc) return rc;
    struct store *st = xcalloc(1, sizeof *st);
    st->db = db;
    pthread_mutex_init(&st->memo_mu, NULL);
    pthread_mutex_init(&st->names_mu, NULL);
    st->names_on = cfg->memo;
    /* the memos exist where the database can tell (db_ops.mark) and
     * BARBERIA_MEMO allows them: store_remembers */
    if (db->ops->mark && cfg->memo) {
        st->sessions = xcalloc(SESSION_MEMO, sizeof *st->sessions);
        st->listings = xcalloc(LISTING_MEMO, sizeof *st->listings);
        st->slots = xcalloc(SLOTS_MEMO, sizeof *st->slots);
    }
    *out = st;
    return BR_OK;
}

void store_close(struct store *st)
{
    if (!st) return;
    st->db->ops->close(st->db);
    if (st->sessions)
        for (size_t i = 0; i < SESSION_MEMO; i++)
            principal_clear(&st->sessions[i].p);
    free(st->sessions);
    for (size_t i = 0; i < STORE_MEMO_N; i++)
        free(st->answers[i].text);
    if (st->listings)
        for (size_t i = 0; i < LISTING_MEMO; i++)
            free(st->listings[i].text);
    free(st->listings);
    if (st->slots)
        for (size_t i = 0; i < SLOTS_MEMO; i++)
            free(st->slots[i].text);
    free(st->slots);
    pthread_mutex_destroy(&st->memo_mu);
    names_unref(st->names);
    pthread_mutex_destroy(&st->names_mu);
    free(st);
}

/* --- answers remembered while nothing they read changed (see store.h) ------------ */

bool store_remembers(const struct store *st)
{
    return st->listings != NULL;
}

/* A copy of m's answer when it still holds (at now_ms, for answers that
 * depend on the clock); else false and *t is a mark for remembering the
 * answer read afresh (taken now, before that read). */
static bool recall(struct store *st, struct answer_memo *m, uint64_t touch, const char *key,
                   int64_t now_ms, struct store_memo_ticket *t, char **text, size_t *len, char *tag,
                   enum metric hits, enum metric misses)
{
    bool hit = false;
    pthread_mutex_lock(&st->memo_mu);
    if (m->text && !strcmp(m->key, key) && now_ms >= m->from_ms && now_ms < m->until_ms &&
        unchanged(st, &m->mark)) {
        *text = xmalloc(m->len + 1);
        memcpy(*text, m->text, m->len + 1);
        *len = m->len;
        if (tag) memcpy(tag, m->tag, STORE_MEMO_TAG);
        hit = true;
    }
    pthread_mutex_unlock(&st->memo_mu);
    metric_inc(hit ? hits : misses);
    if (hit) return true;
    t->marked = mark_now(st, touch, &t->mark);
    snprintf(t->key, sizeof t->key, "%s", key);
    return false;
}

/* Remembers text as of t, holding while the clock is in [from_ms, until_ms). */
static void remember(struct store *st, struct answer_memo *m, const struct store_memo_ticket *t,
                     const char *text, size_t len, const char *tag, int64_t from_ms,
                     int64_t until_ms)
{
    char *copy = xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    pthread_mutex_lock(&st->memo_mu);
    char *old = m->text;
    m->text = copy;
    m->len = len;
    m->mark = t->mark;
    m->from_ms = from_ms;
    m->until_ms = until_ms;
    snprintf(m->key, sizeof m->key, "%s", t->key);
    snprintf(m->tag, sizeof m->tag, "%s", tag ? tag : "");
    pthread_mutex_unlock(&st->memo_mu);
    free(old);
}

bool store_memo_get(struct store *st, enum store_memo slot, struct store_memo_ticket *t,
                    char **text, size_t *len, char tag[STORE_MEMO_TAG])
{
    t->marked = false;
    if (!store_remembers(st)) return false;
    return recall(st, &st->answers[slot], DB_TOUCH_NONE, "", 0, t, text, len, tag,
                  M_MEMO_CATALOG_HITS, M_MEMO_CATALOG_MISSES);
}

void store_memo_put(struct store *st, enum store_memo slot, const struct store_memo_ticket *t,
                    const char *text, size_t len, const char *tag)
{
    if (!t->marked || strlen(tag) >= STORE_MEMO_TAG) return;
    remember(st, &st->answers[slot], t, text, len, tag, INT64_MIN, INT64_MAX);
}

static struct answer_memo *listing_slot(struct store *st, const char *key)
{
    return &st->listings[db_touch_key(key) % LISTING_MEMO];
}

bool store_listing_get(struct store *st, const char *client_id, const char *query,
                       struct store_memo_ticket *t, char **text, size_t *len)
{
    t->marked = false;
    if (!store_remembers(st)) return false;
    char key[STORE_MEMO_KEY];
    int n = snprintf(key, sizeof key, "%s?%s", client_id, query);
    if (n < 0 || (size_t)n >= sizeof key) return false; /* too long to remember */
    return recall(st, listing_slot(st, key), db_touch_key(client_id), key, 0, t, text, len, NULL,
                  M_MEMO_CITAS_HITS, M_MEMO_CITAS_MISSES);
}

void store_listing_put(struct store *st, const struct store_memo_ticket *t, const char *text,
                       size_t len)
{
    if (!t->marked || len > LISTING_MEMO_MAX) return;
    remember(st, listing_slot(st, t->key), t, text, len, NULL, INT64_MIN, INT64_MAX);
}

static struct answer_memo *slots_slot(struct store *st, const char *key)
{
    return &st->slots[db_touch_key(key) % SLOTS_MEMO];
}

bool store_slots_get(struct store *st, const char *key, int64_t now_ms, struct store_memo_ticket *t,
                     char **text, size_t *len)
{
    t->marked = false;
    if (!store_remembers(st) || strlen(key) >= sizeof t->key) return false;
    /* every client's appointments: any booking changes them */
    return recall(st, slots_slot(st, key), DB_TOUCH_EVERY_KEY, key, now_ms, t, text, len, NULL,
                  M_MEMO_SLOTS_HITS, M_MEMO_SLOTS_MISSES);
}

void store_slots_put(struct store *st, const struct store_memo_ticket *t, int64_t from_ms,
                     int64_t until_ms, const char *text, size_t len)
{
    if (!t->marked || len > SLOTS_MEMO_MAX || until_ms <= from_ms) return;
    remember(st, slots_slot(st, t->key), t, text, len, NULL, from_ms, until_ms);
}

br_err store_migrate(struct store *st)
{
    return st->db->ops->migrate(st->db);
}

br_err store_ping(struct store *st)
{
    return st->db->ops->ping(st->db);
}

const char *store_backend(const struct store *st)
{
    return st->db->ops->name;
}

br_err store_is_empty(struct store *st, bool *empty)
{
    int64_t n = 0;
    br_err rc = run(st,
                    "SELECT (SELECT count(*) FROM auth_users) + (SELECT count(*) FROM barberos) + "
                    "(SELECT count(*) FROM servicios)",
                    NULL, 0, one_int, &n, NULL);
    if (!rc) *empty = n == 0;
    return rc;
}
