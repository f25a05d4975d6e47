/*
 * memo.c - answers remembered while nothing they read changed (see
 * memo.h), each kept with the store's mark of the moment before its read.
 */
#include "memo.h"
#include "../util/metrics.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LISTING_MEMO     256   /* clients' listings remembered (direct-mapped by key) */
#define LISTING_MEMO_MAX 16384 /* the longest listing remembered, in bytes: 4 MiB in all */
#define SLOTS_MEMO       256   /* days' free slots remembered (direct-mapped by key) */
#define SLOTS_MEMO_MAX   32768 /* the longest day remembered, in bytes: 8 MiB in all */

#define TAG_DIGEST 16 /* bytes of the digest an ETag shows, in hex between quotes */
_Static_assert(2 * TAG_DIGEST + 3 <= MEMO_TAG, "a tag fits MEMO_TAG");

struct answer {
    struct store_mark mark;
    char key[MEMO_KEY]; /* listings and slots: whose and which; "" for the catalog's */
    char *text;         /* NULL when empty */
    size_t len;
    char tag[MEMO_TAG];
    int64_t from_ms, until_ms; /* the clock's span in which it holds */
};

struct memo {
    struct store *st;
    pthread_mutex_t mu;
    struct answer catalog[MEMO_CATALOG_N];
    struct answer *listings; /* LISTING_MEMO of them; NULL: nothing is remembered */
    struct answer *slots;    /* SLOTS_MEMO of them */
};

struct memo *memo_new(struct store *st)
{
    struct memo *m = xcalloc(1, sizeof *m);
    m->st = st;
    pthread_mutex_init(&m->mu, NULL);
    /* the answers exist where the store can mark a read (db_ops.mark) and
     * BARBERIA_MEMO allows it */
    if (store_marks(st)) {
        m->listings = xcalloc(LISTING_MEMO, sizeof *m->listings);
        m->slots = xcalloc(SLOTS_MEMO, sizeof *m->slots);
    }
    return m;
}

void memo_free(struct memo *m)
{
    if (!m) return;
    for (size_t i = 0; i < MEMO_CATALOG_N; i++)
        free(m->catalog[i].text);
    if (m->listings)
        for (size_t i = 0; i < LISTING_MEMO; i++)
            free(m->listings[i].text);
    free(m->listings);
    if (m->slots)
        for (size_t i = 0; i < SLOTS_MEMO; i++)
            free(m->slots[i].text);
    free(m->slots);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

bool memo_remembers(const struct memo *m)
{
    return m && m->listings != NULL; /* NULL: no memo (a command, a fuzz target) */
}

/* Where an answer's key goes in a direct-mapped table (FNV-1a). */
static uint64_t key_hash(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

/* A copy of a's answer when it still holds (at now_ms, for answers that
 * depend on the clock); else false and *t is a mark for remembering the
 * answer read afresh (taken now, before that read), of a read that
 * depends on `on` (and client's appointments, for STORE_DEPENDS_CLIENT). */
static bool recall(struct memo *m, struct answer *a, enum store_depends on, const char *client,
                   const char *key, int64_t now_ms, struct memo_ticket *t, char **text, size_t *len,
                   char *tag, enum metric hits, enum metric misses)
{
    bool hit = false;
    pthread_mutex_lock(&m->mu);
    if (a->text && !strcmp(a->key, key) && now_ms >= a->from_ms && now_ms < a->until_ms &&
        store_unchanged(m->st, &a->mark)) {
        *text = xmalloc(a->len + 1);
        memcpy(*text, a->text, a->len + 1);
        *len = a->len;
        if (tag) memcpy(tag, a->tag, MEMO_TAG);
        hit = true;
    }
    pthread_mutex_unlock(&m->mu);
    metric_inc(hit ? hits : misses);
    if (hit) return true;
    t->marked = store_mark(m->st, on, client, &t->mark);
    snprintf(t->key, sizeof t->key, "%s", key);
    return false;
}

/* Remembers text as of t, holding while the clock is in [from_ms, until_ms). */
static void remember(struct memo *m, struct answer *a, const struct memo_ticket *t,
                     const char *text, size_t len, const char *tag, int64_t from_ms,
                     int64_t until_ms)
{
    char *copy = xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    pthread_mutex_lock(&m->mu);
    char *old = a->text;
    a->text = copy;
    a->len = len;
    a->mark = t->mark;
    a->from_ms = from_ms;
    a->until_ms = until_ms;
    snprintf(a->key, sizeof a->key, "%s", t->key);
    snprintf(a->tag, sizeof a->tag, "%s", tag ? tag : "");
    pthread_mutex_unlock(&m->mu);
    free(old);
}

bool memo_catalog_get(struct memo *m, enum memo_catalog slot, struct memo_ticket *t, char **text,
                      size_t *len, char tag[MEMO_TAG])
{
    t->marked = false;
    if (!memo_remembers(m)) return false;
    return recall(m, &m->catalog[slot], STORE_DEPENDS_SHARED, NULL, "", 0, t, text, len, tag,
                  M_MEMO_CATALOG_HITS, M_MEMO_CATALOG_MISSES);
}

void memo_catalog_put(struct memo *m, enum memo_catalog slot, const struct memo_ticket *t,
                      const char *text, size_t len, char tag[MEMO_TAG])
{
    unsigned char digest[TAG_DIGEST];
    char hex[2 * TAG_DIGEST + 1];
    crypto_generichash(digest, sizeof digest, (const unsigned char *)text, len, NULL, 0);
    sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
    snprintf(tag, MEMO_TAG, "\"%s\"", hex);
    if (!t->marked) return;
    remember(m, &m->catalog[slot], t, text, len, tag, INT64_MIN, INT64_MAX);
}

static struct answer *listing_slot(struct memo *m, const char *key)
{
    return &m->listings[key_hash(key) % LISTING_MEMO];
}

bool memo_listing_get(struct memo *m, const char *client_id, const char *query,
                      struct memo_ticket *t, char **text, size_t *len)
{
    t->marked = false;
    if (!memo_remembers(m)) return false;
    char key[MEMO_KEY];
    int n = snprintf(key, sizeof key, "%s?%s", client_id, query);
    if (n < 0 || (size_t)n >= sizeof key) return false; /* too long to remember */
    return recall(m, listing_slot(m, key), STORE_DEPENDS_CLIENT, client_id, key, 0, t, text, len,
                  NULL, M_MEMO_CITAS_HITS, M_MEMO_CITAS_MISSES);
}

void memo_listing_put(struct memo *m, const struct memo_ticket *t, const char *text, size_t len)
{
    if (!t->marked || len > LISTING_MEMO_MAX) return;
    remember(m, listing_slot(m, t->key), t, text, len, NULL, INT64_MIN, INT64_MAX);
}

static struct answer *slots_slot(struct memo *m, const char *key)
{
    return &m->slots[key_hash(key) % SLOTS_MEMO];
}

bool memo_slots_get(struct memo *m, const char *key, int64_t now_ms, struct memo_ticket *t,
                    char **text, size_t *len)
{
    t->marked = false;
    if (!memo_remembers(m) || strlen(key) >= sizeof t->key) return false;
    /* every client's appointments: any booking changes them */
    return recall(m, slots_slot(m, key), STORE_DEPENDS_CLIENTS, NULL, key, now_ms, t, text, len,
                  NULL, M_MEMO_SLOTS_HITS, M_MEMO_SLOTS_MISSES);
}

void memo_slots_put(struct memo *m, const struct memo_ticket *t, int64_t from_ms, int64_t until_ms,
                    const char *text, size_t len)
{
    if (!t->marked || len > SLOTS_MEMO_MAX || until_ms <= from_ms) return;
    remember(m, slots_slot(m, t->key), t, text, len, NULL, from_ms, until_ms);
}
