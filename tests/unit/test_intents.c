/*
 * test_intents.c - the store's object intents and process leases on a real
 * SQLite file: an intent reserves its key, only its owner clears or disowns
 * it, of two sweepers taking one over exactly one wins, a record is stored
 * only together with the end of its uploader's own intent, a deletion
 * removes the record and records its intent together, and leases lapse.
 * (The crash test, tests/api/test_crash.c, proves the whole over HTTP; the
 * take-over rules it cannot reach with one node are proven here.)
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "store/store.h"

struct fx {
    char dir[64];
    struct config cfg;
    struct store *st;
    br_id user, cita;
};

static int rm_entry(const char *p, const struct stat *sb, int f, struct FTW *w)
{
    (void)sb;
    (void)f;
    (void)w;
    return remove(p);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/barberia-intents-XXXXXX");
    if (!mkdtemp(f->dir) || sodium_init() < 0) return -1;
    f->cfg.data_dir = f->dir;
    if (store_open(&f->cfg, 2, &f->st) != BR_OK || store_migrate(f->st) != BR_OK) return -1;
    uuid_v4(f->user);
    struct new_user u = {.id = f->user,
                         .email = "i@example.com",
                         .password_hash = "h",
                         .created_at = "2031-01-01T00:00:00.000Z",
                         .rol = "cliente"};
    struct barbero b = {.nombre = "Carlos"};
    struct servicio s = {.nombre = "Corte", .duracion_min = 30, .precio = 15};
    uuid_v4(b.id);
    uuid_v4(s.id);
    struct cita c = {.estado = "confirmada"};
    uuid_v4(c.id);
    memcpy(c.cliente_id, f->user, sizeof c.cliente_id);
    memcpy(c.barbero_id, b.id, sizeof c.barbero_id);
    memcpy(c.servicio_id, s.id, sizeof c.servicio_id);
    snprintf(c.fecha_inicio, sizeof c.fecha_inicio, "2031-05-04T10:00:00.000Z");
    snprintf(c.fecha_fin, sizeof c.fecha_fin, "2031-05-04T10:30:00.000Z");
    snprintf(c.created_at, sizeof c.created_at, "2031-01-01T00:00:00.000Z");
    if (store_user_create(f->st, &u) || store_barbero_add(f->st, &b) ||
        store_servicio_add(f->st, &s) || store_cita_book(f->st, &c, NULL))
        return -1;
    memcpy(f->cita, c.id, sizeof c.id);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->st);
    nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static struct obj_intent intent(const char *op, const char *key, const char *instance)
{
    struct obj_intent in = {.bucket = "fotos-citas",
                            .key = (char *)key,
                            .op = (char *)op,
                            .node = "node-a",
                            .pid = 42,
                            .instance = (char *)instance};
    uuid_v4(in.id);
    snprintf(in.created_at, sizeof in.created_at, "2031-01-01T00:00:00.000Z");
    return in;
}

static struct foto photo(const struct fx *f, const char *key)
{
    struct foto p = {.tipo = "antes", .url = "u", .storage_path = (char *)key};
    uuid_v4(p.id);
    memcpy(p.cita_id, f->cita, sizeof p.cita_id);
    memcpy(p.cliente_id, f->user, sizeof p.cliente_id);
    snprintf(p.created_at, sizeof p.created_at, "2031-01-01T00:00:00.000Z");
    return p;
}

struct seen {
    int n;
    char instance[64];
    char op[16];
};

static br_err count_intents(void *ud, const struct obj_intent *in)
{
    struct seen *s = ud;
    s->n++;
    snprintf(s->instance, sizeof s->instance, "%s", in->instance);
    snprintf(s->op, sizeof s->op, "%s", in->op);
    return BR_OK;
}

static struct seen intents(struct fx *f)
{
    struct seen s = {0};
    assert_int_equal(store_intents_each(f->st, count_intents, &s), BR_OK);
    return s;
}

static void an_intent_reserves_its_key(void **state)
{
    struct fx *f = *state;
    struct obj_intent a = intent("put", "u/c/antes-1.png", "aaaa");
    struct obj_intent b = intent("put", "u/c/antes-1.png", "bbbb");
    struct obj_intent d = intent("delete", "u/c/antes-1.png", "bbbb");
    assert_int_equal(store_intent_add(f->st, &a), BR_OK);
    assert_int_equal(store_intent_add(f->st, &b), BR_CONFLICT);
    assert_int_equal(store_intent_add(f->st, &d), BR_CONFLICT);
    assert_int_equal(intents(f).n, 1);
}

static void only_the_owner_clears_or_disowns(void **state)
{
    struct fx *f = *state;
    struct obj_intent a = intent("put", "u/c/antes-2.png", "aaaa");
    assert_int_equal(store_intent_add(f->st, &a), BR_OK);
    assert_int_equal(store_intent_clear(f->st, a.id, "bbbb"), BR_OK);
    assert_int_equal(store_intent_disown(f->st, a.id, "bbbb"), BR_OK);
    struct seen s = intents(f);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.instance, "aaaa");
    assert_int_equal(store_intent_disown(f->st, a.id, "aaaa"), BR_OK);
    assert_string_equal(intents(f).instance, "");
    assert_int_equal(store_intent_clear(f->st, a.id, "aaaa"), BR_OK); /* no longer its own */
    assert_int_equal(intents(f).n, 1);
    assert_int_equal(store_intent_clear(f->st, a.id, ""), BR_OK);
    assert_int_equal(intents(f).n, 0);
}

static void of_two_sweepers_exactly_one_takes_an_intent_over(void **state)
{
    struct fx *f = *state;
    struct obj_intent a = intent("put", "u/c/antes-3.png", "aaaa");
    assert_int_equal(store_intent_add(f->st, &a), BR_OK);
    struct obj_intent s1 = {.node = "node-b", .pid = 7, .instance = "s1s1"};
    struct obj_intent s2 = {.node = "node-c", .pid = 8, .instance = "s2s2"};
    assert_int_equal(store_intent_take(f->st, a.id, "aaaa", &s1), BR_OK);
    assert_int_equal(store_intent_take(f->st, a.id, "aaaa", &s2), BR_NOTFOUND);
    assert_string_equal(intents(f).instance, "s1s1");
}

static void a_record_is_stored_only_with_the_end_of_its_own_intent(void **state)
{
    struct fx *f = *state;
    struct obj_intent a = intent("put", "u/c/antes-4.png", "aaaa");
    assert_int_equal(store_intent_add(f->st, &a), BR_OK);
    struct foto p = photo(f, a.key);
    assert_int_equal(store_foto_insert_put(f->st, &p, 300, 3, 0, &a), BR_OK);
    assert_int_equal(intents(f).n, 0);
    bool exists = false;
    assert_int_equal(store_foto_path_exists(f->st, a.key, &exists), BR_OK);
    assert_true(exists);

    /* a sweeper took the intent over (the uploader was thought gone): the
     * uploader's record is refused and nothing is written */
    struct obj_intent b = intent("put", "u/c/antes-5.png", "aaaa");
    assert_int_equal(store_intent_add(f->st, &b), BR_OK);
    struct obj_intent sw = {.node = "node-b", .pid = 7, .instance = "s1s1"};
    assert_int_equal(store_intent_take(f->st, b.id, "aaaa", &sw), BR_OK);
    struct foto q = photo(f, b.key);
    assert_int_equal(store_foto_insert_put(f->st, &q, 300, 3, 0, &b), BR_STORE);
    assert_int_equal(store_foto_path_exists(f->st, b.key, &exists), BR_OK);
    assert_false(exists);
    assert_string_equal(intents(f).instance, "s1s1");
}

static void a_full_cita_keeps_the_intent_for_the_uploader_to_undo(void **state)
{
    struct fx *f = *state;
    for (int i = 0; i < 4; i++) {
        char key[64];
        snprintf(key, sizeof key, "u/c/antes-full-%d.png", i);
        struct obj_intent a = intent("put", key, "aaaa");
        assert_int_equal(store_intent_add(f->st, &a), BR_OK);
        struct foto p = photo(f, key);
        assert_int_equal(store_foto_insert_put(f->st, &p, 300, 3, 0, &a),
                         i < 3 ? BR_OK : BR_CONFLICT);
    }
    assert_int_equal(intents(f).n, 1); /* the loser's, rolled back with its insert */
}

static void a_deletion_removes_the_record_and_records_its_intent_together(void **state)
{
    struct fx *f = *state;
    struct obj_intent a = intent("put", "u/c/antes-6.png", "aaaa");
    assert_int_equal(store_intent_add(f->st, &a), BR_OK);
    struct foto p = photo(f, a.key);
    assert_int_equal(store_foto_insert_put(f->st, &p, 300, 3, 0, &a), BR_OK);
    struct obj_intent d = intent("delete", a.key, "aaaa");
    assert_int_equal(store_foto_delete(f->st, p.id, &d), BR_OK);
    bool exists = true;
    assert_int_equal(store_foto_path_exists(f->st, a.key, &exists), BR_OK);
    assert_false(exists);
    struct seen s = intents(f);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.op, "delete");
    /* a second deletion finds no record and records nothing */
    struct obj_intent d2 = intent("delete", "u/c/other.png", "aaaa");
    assert_int_equal(store_foto_delete(f->st, p.id, &d2), BR_NOTFOUND);
    assert_int_equal(intents(f).n, 1);
}

static void leases_are_renewed_and_lapse(void **state)
{
    struct fx *f = *state;
    bool live = true;
    assert_int_equal(store_lease_live(f->st, "aaaa", "2031-01-01T00:00:00.000Z", &live), BR_OK);
    assert_false(live);
    assert_int_equal(store_lease_renew(f->st, "aaaa", "node-a", 42, "2031-01-01T00:00:10.000Z"),
                     BR_OK);
    assert_int_equal(store_lease_renew(f->st, "aaaa", "node-a", 42, "2031-01-01T00:00:20.000Z"),
                     BR_OK);
    assert_int_equal(store_lease_live(f->st, "aaaa", "2031-01-01T00:00:15.000Z", &live), BR_OK);
    assert_true(live);
    assert_int_equal(store_lease_live(f->st, "aaaa", "2031-01-01T00:00:25.000Z", &live), BR_OK);
    assert_false(live);
    assert_int_equal(store_leases_expire(f->st, "2031-01-01T00:00:25.000Z"), BR_OK);
    assert_int_equal(store_lease_live(f->st, "aaaa", "2031-01-01T00:00:00.000Z", &live), BR_OK);
    assert_false(live);
    assert_int_equal(store_lease_renew(f->st, "bbbb", "node-b", 7, "2031-01-01T00:00:30.000Z"),
                     BR_OK);
    assert_int_equal(store_lease_end(f->st, "bbbb"), BR_OK);
    assert_int_equal(store_lease_live(f->st, "bbbb", "2031-01-01T00:00:00.000Z", &live), BR_OK);
    assert_false(live);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(an_intent_reserves_its_key),
        T(only_the_owner_clears_or_disowns),
        T(of_two_sweepers_exactly_one_takes_an_intent_over),
        T(a_record_is_stored_only_with_the_end_of_its_own_intent),
        T(a_full_cita_keeps_the_intent_for_the_uploader_to_undo),
        T(a_deletion_removes_the_record_and_records_its_intent_together),
        T(leases_are_renewed_and_lapse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
