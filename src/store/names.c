/*
 * names.c - the catalog's names as of one version (see names.h).
 *
 * Two arrays sorted by id, searched by bisection: a catalog is small
 * (NAMES_MAX at most) and a listing looks up two ids a row.
 */
#include "names.h"
#include "../util/uuid.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NAMES_VALUES 3 /* the most values an entry has (a service's) */

struct entry {
    char id[UUID_LEN + 1];
    struct db_val v[NAMES_VALUES]; /* texts point into owned[] */
    char *owned[NAMES_VALUES];
};

struct list {
    struct entry *e;
    size_t n, cap;
};

struct names {
    atomic_int refs;
    char version[NAMES_VERSION];
    size_t vlen;
    struct list kinds[2]; /* by enum names_kind */
    size_t count;
};

static const int values_of[2] = {2, 3}; /* NAMES_BARBERO, NAMES_SERVICIO */

struct names *names_new(void)
{
    struct names *s = xcalloc(1, sizeof *s);
    atomic_init(&s->refs, 1);
    return s;
}

bool names_set_version(struct names *s, const struct db_val *v)
{
    if (v->type != DB_TEXT || !v->n || v->n >= NAMES_VERSION) return false;
    memcpy(s->version, v->s, v->n);
    s->vlen = v->n;
    return true;
}

static void entry_clear(struct entry *e)
{
    for (int i = 0; i < NAMES_VALUES; i++)
        free(e->owned[i]);
}

br_err names_add(struct names *s, enum names_kind kind, const struct db_val *id,
                 const struct db_val *v, int nv)
{
    if (nv != values_of[kind]) return err_set(BR_INVALID, "names: %d values for an entry", nv);
    if (id->type != DB_TEXT || id->n != UUID_LEN) return err_set(BR_INVALID, "names: not an id");
    if (s->count >= NAMES_MAX) return err_set(BR_TOOLARGE, "names: more than %d", NAMES_MAX);
    struct list *l = &s->kinds[kind];
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        l->e = xrealloc(l->e, cap * sizeof *l->e);
        l->cap = cap;
    }
    struct entry *e = &l->e[l->n];
    memset(e, 0, sizeof *e);
    memcpy(e->id, id->s, UUID_LEN);
    for (int i = 0; i < nv; i++) {
        e->v[i] = v[i];
        if (v[i].type == DB_TEXT) {
            e->owned[i] = xstrndup(v[i].s, v[i].n);
            e->v[i].s = e->owned[i];
        }
    }
    l->n++;
    s->count++;
    return BR_OK;
}

static int entry_cmp(const void *a, const void *b)
{
    return memcmp(((const struct entry *)a)->id, ((const struct entry *)b)->id, UUID_LEN);
}

void names_seal(struct names *s)
{
    for (int k = 0; k < 2; k++)
        if (s->kinds[k].n > 1) qsort(s->kinds[k].e, s->kinds[k].n, sizeof(struct entry), entry_cmp);
}

bool names_is(const struct names *s, const struct db_val *version)
{
    return s && s->vlen && version->type == DB_TEXT && version->n == s->vlen &&
           !memcmp(version->s, s->version, s->vlen);
}

const struct db_val *names_find(const struct names *s, enum names_kind kind,
                                const struct db_val *id)
{
    if (id->type != DB_TEXT || id->n != UUID_LEN) return NULL;
    const struct list *l = &s->kinds[kind];
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = memcmp(id->s, l->e[mid].id, UUID_LEN);
        if (!c) return l->e[mid].v;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

struct names *names_ref(struct names *s)
{
    if (s) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void names_unref(struct names *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < s->kinds[k].n; i++)
            entry_clear(&s->kinds[k].e[i]);
        free(s->kinds[k].e);
    }
    free(s);
}
