/*
 * memo.h - answers the API remembers while nothing they read has changed:
 * the rendered JSON of the catalog's listings (GET /api/barberos, GET
 * /api/servicios) with their ETags, of a client's own listing of
 * appointments (GET /api/citas), and of a day's free slots (GET
 * /api/disponibilidad). Exact, never stale: each answer is kept with a mark
 * the store took before the read (store_mark) and handed out again only
 * while the store says nothing it depends on has changed since
 * (store_unchanged). Where the store cannot mark (PostgreSQL, or
 * BARBERIA_MEMO=0) nothing is remembered and every read goes to the store.
 *
 * The memo owns the answers (copies of the caller's text), their bounds
 * (how many, how long each may be), their tags and the hit and miss
 * counters of GET /metrics (barberia_memo_hits_total{memo="catalog"},
 * {memo="citas"}, {memo="slots"}).
 *
 * Use: *_get first; true hands back a copy of the remembered answer (the
 * caller frees *text). False leaves a ticket (the mark, taken now, before
 * the caller reads afresh) that *_put needs to remember the answer read.
 *
 * Thread-safety: a struct memo may be used from any number of threads.
 */
#ifndef BR_MEMO_H
#define BR_MEMO_H

#include "../store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum memo_catalog { MEMO_BARBEROS, MEMO_SERVICIOS, MEMO_CATALOG_N };

#define MEMO_TAG 40  /* room for a tag (an ETag) with its NUL */
#define MEMO_KEY 200 /* room for an answer's key (whose and which) with its NUL */

/* What a miss leaves for the put that follows the fresh read. */
struct memo_ticket {
    struct store_mark mark; /* the store's moment before the read */
    bool marked;            /* false: the answer is not to be remembered */
    char key[MEMO_KEY];
};

struct memo;

/* The answers remembered over st (borrowed: it must outlive the memo):
 * none where st cannot mark (store_marks). Free with memo_free. */
struct memo *memo_new(struct store *st);
void memo_free(struct memo *m);

/* Whether anything is remembered at all (not on PostgreSQL). */
bool memo_remembers(const struct memo *m);

/* The catalog's listing slot as remembered, with its tag, when nothing it
 * depends on (the catalog, what only DB_TOUCH_ALL writes change) changed
 * since. Else false and *t is for memo_catalog_put. */
bool memo_catalog_get(struct memo *m, enum memo_catalog slot, struct memo_ticket *t, char **text,
                      size_t *len, char tag[MEMO_TAG]);
/* OUT: tag, the answer's ETag (a quoted digest of text: equal on every
 * node for equal data, different as soon as one byte is), whether or not
 * the answer is remembered; remembers text (copied) with it as of t. */
void memo_catalog_put(struct memo *m, enum memo_catalog slot, const struct memo_ticket *t,
                      const char *text, size_t len, char tag[MEMO_TAG]);

/* A client's own listing, as memo_catalog_get: remembered under her id and
 * query (what else the answer depends on: the filters and the page), until
 * her appointments, any profile, barber or service change. Answers longer
 * than 16 KiB are not remembered. */
bool memo_listing_get(struct memo *m, const char *client_id, const char *query,
                      struct memo_ticket *t, char **text, size_t *len);
void memo_listing_put(struct memo *m, const struct memo_ticket *t, const char *text, size_t len);

/* The free slots of a day, as memo_catalog_get: remembered under key
 * (everything the answer depends on besides the data and the clock), until
 * any appointment, barber, service, schedule or absence changes, and only
 * while the clock is within the span given to memo_slots_put: a copy when
 * now_ms is in it. Answers longer than 32 KiB are not remembered. */
bool memo_slots_get(struct memo *m, const char *key, int64_t now_ms, struct memo_ticket *t,
                    char **text, size_t *len);
/* Remembers text as of t, for the clock's span [from_ms, until_ms). */
void memo_slots_put(struct memo *m, const struct memo_ticket *t, int64_t from_ms, int64_t until_ms,
                    const char *text, size_t len);

#endif
