/*
 * test_store.c - the repository on a real SQLite file in a temporary
 * folder: the overlap rule, the guarded writes, sessions, the profile patch,
 * the admin listing and the outbox's claim/lease/retry cycle.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <sodium.h>
#include <sqlite3.h>
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
    br_id user, barbero, servicio;
};

static int rm_entry(const char *p, const struct stat *sb, int f, struct FTW *w)
{
    (void)sb;
    (void)f;
    (void)w;
    return remove(p);
}

static void add_user(struct fx *f, br_id id, const char *email, const char *created)
{
    uuid_v4(id);
    struct new_user u = {.id = id,
                         .email = email,
                         .password_hash = "h",
                         .created_at = created,
                         .rol = "cliente",
                         .nombre = "N"};
    assert_int_equal(store_user_create(f->st, &u), BR_OK);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/barberia-store-XXXXXX");
    if (!mkdtemp(f->dir) || sodium_init() < 0) return -1;
    f->cfg.data_dir = f->dir;
    if (store_open(&f->cfg, 2, &f->st) != BR_OK || store_migrate(f->st) != BR_OK) return -1;
    add_user(f, f->user, "a@example.com", "2031-01-01T00:00:00.000Z");
    struct barbero b = {.nombre = "Carlos"};
    uuid_v4(b.id);
    assert_int_equal(store_barbero_add(f->st, &b), BR_OK);
    memcpy(f->barbero, b.id, sizeof b.id);
    struct servicio s = {.nombre = "Corte", .duracion_min = 30, .precio = 15};
    uuid_v4(s.id);
    assert_int_equal(store_servicio_add(f->st, &s), BR_OK);
    memcpy(f->servicio, s.id, sizeof s.id);
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

static br_err book_at(struct fx *f, const char *start, const char *end, br_id id_out)
{
    struct cita c = {.estado = "confirmada"};
    uuid_v4(c.id);
    memcpy(c.cliente_id, f->user, sizeof c.cliente_id);
    memcpy(c.barbero_id, f->barbero, sizeof c.barbero_id);
    memcpy(c.servicio_id, f->servicio, sizeof c.servicio_id);
    snprintf(c.fecha_inicio, sizeof c.fecha_inicio, "%s", start);
    snprintf(c.fecha_fin, sizeof c.fecha_fin, "%s", end);
    snprintf(c.created_at, sizeof c.created_at, "2031-01-01T00:00:00.000Z");
    if (id_out) memcpy(id_out, c.id, sizeof c.id);
    return store_cita_book(f->st, &c, NULL);
}

static void overlapping_bookings_conflict_and_touching_ones_do_not(void **state)
{
    struct fx *f = *state;
    assert_int_equal(book_at(f, "2031-05-04T10:00:00.000Z", "2031-05-04T10:30:00.000Z", NULL),
                     BR_OK);
    /* touching on both sides */
    assert_int_equal(book_at(f, "2031-05-04T09:30:00.000Z", "2031-05-04T10:00:00.000Z", NULL),
                     BR_OK);
    assert_int_equal(book_at(f, "2031-05-04T10:30:00.000Z", "2031-05-04T11:00:00.000Z", NULL),
                     BR_OK);
    /* inside, around, straddling */
    assert_int_equal(book_at(f, "2031-05-04T10:10:00.000Z", "2031-05-04T10:20:00.000Z", NULL),
                     BR_CONFLICT);
    assert_int_equal(book_at(f, "2031-05-04T08:00:00.000Z", "2031-05-04T12:00:00.000Z", NULL),
                     BR_CONFLICT);
    assert_int_equal(book_at(f, "2031-05-04T10:59:00.000Z", "2031-05-04T11:29:00.000Z", NULL),
                     BR_CONFLICT);
    bool taken = false;
    assert_int_equal(store_cita_overlaps(f->st, f->barbero, "2031-05-04T10:29:59.999Z",
                                         "2031-05-04T10:45:00.000Z", &taken),
                     BR_OK);
    assert_true(taken);
    assert_int_equal(store_cita_overlaps(f->st, f->barbero, "2031-05-04T11:00:00.000Z",
                                         "2031-05-04T11:30:00.000Z", &taken),
                     BR_OK);
    assert_false(taken);
}

static br_err count_citas(void *ud, const struct cita_view *v)
{
    (void)v;
    (*(int *)ud)++;
    return BR_OK;
}

static void a_refused_booking_writes_nothing(void **state)
{
    struct fx *f = *state;
    int before = 0, after = 0;
    const struct cita_range all = {0};
    assert_int_equal(book_at(f, "2031-05-04T10:00:00.000Z", "2031-05-04T10:30:00.000Z", NULL),
                     BR_OK);
    assert_int_equal(store_citas_range(f->st, &all, count_citas, &before), BR_OK);
    assert_int_equal(before, 1);
    assert_int_equal(book_at(f, "2031-05-04T10:15:00.000Z", "2031-05-04T10:45:00.000Z", NULL),
                     BR_CONFLICT);
    assert_int_equal(store_citas_range(f->st, &all, count_citas, &after), BR_OK);
    assert_int_equal(before, after);
}

/* The stretch a caller read as freed, [inicio, fin), made at now. */
static void freed_as_read(struct fx *f, struct espera_liberacion *l, const char *inicio,
                          const char *fin, const char *now)
{
    memset(l, 0, sizeof *l);
    uuid_v4(l->id);
    memcpy(l->barbero_id, f->barbero, sizeof l->barbero_id);
    snprintf(l->inicio, sizeof l->inicio, "%s", inicio);
    snprintf(l->fin, sizeof l->fin, "%s", fin);
    snprintf(l->created_at, sizeof l->created_at, "%s", now);
}

/* A cancel frees the stretch the row holds as the change reads it under
 * its lock, not the one its caller read before (another change may have
 * moved it), and only while that stretch is not over. */
static void a_cancel_frees_the_rows_own_stretch_while_it_is_ahead(void **state)
{
    struct fx *f = *state;
    br_id ahead, past;
    assert_int_equal(book_at(f, "2031-05-04T10:00:00.000Z", "2031-05-04T10:30:00.000Z", ahead),
                     BR_OK);
    assert_int_equal(book_at(f, "2020-05-04T10:00:00.000Z", "2020-05-04T10:30:00.000Z", past),
                     BR_OK);
    br_ts now, lease;
    iso8601_format(clock_now_ms(), now);
    iso8601_format(clock_now_ms() + 60000, lease);
    /* read as ahead, over in fact: nothing is recorded */
    struct espera_liberacion l;
    freed_as_read(f, &l, "2031-05-04T10:00:00.000Z", "2031-05-04T10:30:00.000Z", now);
    struct cita_change ch = {.id = past, .libera = &l};
    assert_int_equal(store_cita_change(f->st, &ch), BR_OK);
    assert_false(ch.freed);
    free(ch.event_id);
    struct espera_liberacion got;
    assert_int_equal(store_espera_liberacion_take(f->st, now, lease, &got), BR_NOTFOUND);
    /* read as over, ahead in fact: the row's stretch is recorded */
    struct espera_liberacion m;
    freed_as_read(f, &m, "2020-01-01T09:00:00.000Z", "2020-01-01T09:30:00.000Z", now);
    struct cita_change ch2 = {.id = ahead, .libera = &m};
    assert_int_equal(store_cita_change(f->st, &ch2), BR_OK);
    assert_true(ch2.freed);
    free(ch2.event_id);
    assert_int_equal(store_espera_liberacion_take(f->st, now, lease, &got), BR_OK);
    assert_string_equal(got.inicio, "2031-05-04T10:00:00.000Z");
    assert_string_equal(got.fin, "2031-05-04T10:30:00.000Z");
}

static void photo_inserts_stop_at_the_cap(void **state)
{
    struct fx *f = *state;
    br_id cita;
    assert_int_equal(book_at(f, "2031-06-01T10:00:00.000Z", "2031-06-01T10:30:00.000Z", cita),
                     BR_OK);
    for (int i = 0; i < 4; i++) {
        struct foto p = {.tipo = "antes", .url = "u"};
        char path[64];
        snprintf(path, sizeof path, "k/%d", i);
        p.storage_path = path;
        uuid_v4(p.id);
        memcpy(p.cita_id, cita, sizeof p.cita_id);
        memcpy(p.cliente_id, f->user, sizeof p.cliente_id);
        snprintf(p.created_at, sizeof p.created_at, "2031-01-01T00:00:00.00%dZ", i);
        assert_int_equal(store_foto_insert_capped(f->st, &p, 3), i < 3 ? BR_OK : BR_CONFLICT);
    }
    int64_t n = 0;
    assert_int_equal(store_fotos_count(f->st, cita, "antes", &n), BR_OK);
    assert_int_equal(n, 3);
    assert_int_equal(store_fotos_count(f->st, cita, "despues", &n), BR_OK);
    assert_int_equal(n, 0);
}

static void sessions_expire_and_end_with_a_password_change(void **state)
{
    struct fx *f = *state;
    assert_int_equal(store_session_open(f->st, f->user, "h1", "2031-01-01T00:00:00.000Z",
                                        "2031-01-31T00:00:00.000Z", "h"),
                     BR_OK);
    struct principal p;
    assert_int_equal(store_session_principal(f->st, "h1", "2031-01-30T23:59:59.999Z", &p), BR_OK);
    assert_string_equal(p.email, "a@example.com");
    assert_true(p.has_perfil);
    assert_string_equal(p.perfil.rol, "cliente");
    principal_clear(&p);
    assert_int_equal(store_session_principal(f->st, "h1", "2031-01-31T00:00:00.000Z", &p),
                     BR_NOTFOUND);
    assert_int_equal(store_session_open(f->st, f->user, "h2", "2031-01-01T00:00:00.000Z",
                                        "2031-01-31T00:00:00.000Z", "h"),
                     BR_OK);
    assert_int_equal(store_user_set_password(f->st, f->user, "new"), BR_OK);
    assert_int_equal(store_session_principal(f->st, "h2", "2031-01-02T00:00:00.000Z", &p),
                     BR_NOTFOUND);
    /* a sign-in that checked the password before it changed opens nothing */
    assert_int_equal(store_session_open(f->st, f->user, "h3", "2031-01-02T00:00:00.000Z",
                                        "2031-02-01T00:00:00.000Z", "h"),
                     BR_NOTFOUND);
    assert_int_equal(store_session_principal(f->st, "h3", "2031-01-02T00:00:01.000Z", &p),
                     BR_NOTFOUND);
    assert_int_equal(store_session_open(f->st, f->user, "h4", "2031-01-02T00:00:00.000Z",
                                        "2031-02-01T00:00:00.000Z", "new"),
                     BR_OK);
    assert_int_equal(store_session_principal(f->st, "h4", "2031-01-02T00:00:01.000Z", &p), BR_OK);
    principal_clear(&p);
    br_id nobody;
    uuid_v4(nobody);
    assert_int_equal(store_user_set_password(f->st, nobody, "x"), BR_NOTFOUND);
}

static void profile_patch_touches_only_what_it_names(void **state)
{
    struct fx *f = *state;
    struct perfil_patch p1 = {.set_telefono = true, .telefono = "600"};
    assert_int_equal(store_perfil_update(f->st, f->user, &p1), BR_OK);
    struct perfil p;
    assert_int_equal(store_perfil_get(f->st, f->user, &p), BR_OK);
    assert_string_equal(p.nombre, "N");
    assert_string_equal(p.telefono, "600");
    perfil_clear(&p);
    struct perfil_patch p2 = {.rol = "barbero", .set_telefono = true, .telefono = NULL};
    assert_int_equal(store_perfil_update(f->st, f->user, &p2), BR_OK);
    assert_int_equal(store_perfil_get(f->st, f->user, &p), BR_OK);
    assert_string_equal(p.rol, "barbero");
    assert_string_equal(p.nombre, "N");
    assert_null(p.telefono);
    perfil_clear(&p);
}

static br_err collect(void *ud, const struct usuario_view *u)
{
    char *buf = ud;
    size_t n = strlen(buf);
    snprintf(buf + n, 1024 - n, "%s=%lld;", u->email, (long long)u->total_citas);
    return BR_OK;
}

static void admin_listing_is_newest_first_with_counts(void **state)
{
    struct fx *f = *state;
    br_id other;
    add_user(f, other, "b@example.com", "2031-02-01T00:00:00.000Z");
    assert_int_equal(book_at(f, "2031-07-01T10:00:00.000Z", "2031-07-01T10:30:00.000Z", NULL),
                     BR_OK);
    char buf[1024] = "";
    assert_int_equal(store_usuarios_page(f->st, NULL, NULL, 0, collect, buf), BR_OK);
    assert_string_equal(buf, "b@example.com=0;a@example.com=1;");
}

static void outbox_messages_are_claimed_once_retried_and_dropped(void **state)
{
    struct fx *f = *state;
    br_id cita;
    struct cita c = {.estado = "confirmada"};
    uuid_v4(c.id);
    memcpy(cita, c.id, sizeof cita);
    memcpy(c.cliente_id, f->user, sizeof c.cliente_id);
    memcpy(c.barbero_id, f->barbero, sizeof c.barbero_id);
    memcpy(c.servicio_id, f->servicio, sizeof c.servicio_id);
    snprintf(c.fecha_inicio, sizeof c.fecha_inicio, "2031-08-01T10:00:00.000Z");
    snprintf(c.fecha_fin, sizeof c.fecha_fin, "2031-08-01T10:30:00.000Z");
    snprintf(c.created_at, sizeof c.created_at, "2031-01-01T00:00:00.000Z");
    struct outbox_msg m = {.recipient = "a@example.com",
                           .cliente_nombre = "N",
                           .barbero_nombre = "Carlos",
                           .servicio_nombre = "Corte"};
    uuid_v4(m.id);
    memcpy(m.cita_id, c.id, sizeof m.cita_id);
    memcpy(m.fecha_inicio, c.fecha_inicio, sizeof m.fecha_inicio);
    memcpy(m.fecha_fin, c.fecha_fin, sizeof m.fecha_fin);
    memcpy(m.created_at, c.created_at, sizeof m.created_at);
    assert_int_equal(store_cita_book(f->st, &c, &m), BR_OK);

    struct outbox_msg got, again;
    assert_int_equal(
        store_outbox_claim(f->st, "2031-01-01T00:00:01.000Z", "2031-01-01T00:01:00.000Z", &got),
        BR_OK);
    assert_string_equal(got.id, m.id);
    assert_int_equal(got.attempts, 1);
    /* leased: nobody else gets it until the lease ends */
    assert_int_equal(
        store_outbox_claim(f->st, "2031-01-01T00:00:02.000Z", "2031-01-01T00:01:00.000Z", &again),
        BR_NOTFOUND);
    assert_string_equal(got.claim, "2031-01-01T00:01:00.000Z");
    assert_int_equal(
        store_outbox_retry(f->st, got.id, got.claim, "down", "2031-01-01T00:00:10.000Z"), BR_OK);
    br_ts next;
    assert_int_equal(store_outbox_next_due(f->st, next), BR_OK);
    assert_string_equal(next, "2031-01-01T00:00:10.000Z");
    assert_int_equal(
        store_outbox_claim(f->st, "2031-01-01T00:00:05.000Z", "2031-01-01T00:01:00.000Z", &again),
        BR_NOTFOUND);
    outbox_clear(&got);
    assert_int_equal(
        store_outbox_claim(f->st, "2031-01-01T00:00:10.000Z", "2031-01-01T00:01:00.000Z", &got),
        BR_OK);
    assert_int_equal(got.attempts, 2);
    assert_string_equal(got.last_error, "down");
    /* its lease ran out (a slow database, a stalled node): another claim
     * takes it, and nothing the first claimant writes of its fate lands */
    assert_int_equal(
        store_outbox_claim(f->st, "2031-01-01T00:01:00.000Z", "2031-01-01T00:02:00.000Z", &again),
        BR_OK);
    assert_string_equal(again.id, got.id);
    assert_int_equal(again.attempts, 3);
    assert_int_equal(
        store_outbox_retry(f->st, got.id, got.claim, "late", "2031-01-01T00:01:01.000Z"),
        BR_CONFLICT);
    assert_int_equal(store_outbox_defer(f->st, got.id, got.claim, "2031-01-01T00:01:01.000Z"),
                     BR_CONFLICT);
    assert_int_equal(
        store_outbox_skip(f->st, got.id, got.claim, "late", "2031-01-01T00:01:01.000Z"),
        BR_CONFLICT);
    assert_int_equal(
        store_outbox_drop(f->st, got.id, got.claim, "late", "2031-01-01T00:01:01.000Z"),
        BR_CONFLICT);
    outbox_clear(&got);
    /* still held by the second claim, untouched */
    assert_int_equal(
        store_outbox_claim(f->st, "2031-01-01T00:01:30.000Z", "2031-01-01T00:03:00.000Z", &got),
        BR_NOTFOUND);
    assert_int_equal(
        store_outbox_drop(f->st, again.id, again.claim, "gave up", "2031-01-01T00:01:31.000Z"),
        BR_OK);
    outbox_clear(&again);
    /* done: no claim may write its fate any more */
    assert_int_equal(store_outbox_retry(f->st, m.id, "2031-01-01T00:02:00.000Z", "x",
                                        "2031-01-01T00:01:32.000Z"),
                     BR_CONFLICT);
    assert_int_equal(store_outbox_next_due(f->st, next), BR_OK);
    assert_string_equal(next, "");
    assert_int_equal(
        store_outbox_claim(f->st, "2031-12-01T00:00:00.000Z", "2031-12-01T00:01:00.000Z", &got),
        BR_NOTFOUND);
}

static br_err count_barbero(void *ud, const struct barbero *b)
{
    (void)b;
    ++*(int *)ud;
    return BR_OK;
}

/* A stored id longer than its field is an error, never a shortened id. */
static void a_value_too_long_for_its_field_is_an_error(void **state)
{
    struct fx *f = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/barberia.db", f->dir);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "INSERT INTO barberos (id, nombre) VALUES "
                                  "('00000000-0000-4000-8000-000000000001-and-more', 'Largo')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    int n = 0;
    assert_int_equal(store_barberos_each(f->st, count_barbero, &n), BR_STORE);
    assert_non_null(strstr(err_msg(), "does not fit"));
}

/* Every column of every table an export carries has a kind (an import
 * checks each value against it), and the kinds take what the service
 * writes and nothing else. */
static void every_exported_column_has_a_kind(void **state)
{
    (void)state;
    const struct store_table *t;
    int n = store_tables(&t);
    for (int i = 0; i < n; i++) {
        int cols = 0;
        for (const char *c = t[i].cols; *c; cols++) {
            size_t len = strcspn(c, ",");
            struct store_column k;
            if (!store_column_kind(i, c, len, &k))
                fail_msg("%s.%.*s has no kind", t[i].name, (int)len, c);
            c += len;
            c += strspn(c, ", ");
        }
        assert_int_equal(cols, t[i].ncols);
        assert_false(store_column_kind(i, "nope", 4, &(struct store_column){0}));
    }
    static const struct {
        enum store_kind kind;
        bool null, ok;
        struct store_value v;
    } cases[] = {
#define TXT(lit) {.type = STORE_TEXT, .s = lit, .n = sizeof lit - 1}
        {STORE_KIND_UUID, false, true, TXT("0b7a8c1e-0000-4000-8000-0000000000aa")},
        {STORE_KIND_UUID, false, false, TXT("0B7A8C1E-0000-4000-8000-0000000000AA")},
        {STORE_KIND_UUID, false, false, TXT("0b7a8c1e00004000800000000000000000aa")},
        {STORE_KIND_UUID, false, false, {.type = STORE_INT, .i = 1}},
        {STORE_KIND_TIME, false, true, TXT("2032-09-01T10:00:00.000Z")},
        {STORE_KIND_TIME, false, false, TXT("2032-09-01T10:00:00Z")},
        {STORE_KIND_TIME, false, false, TXT("2032-09-01T10:00:00.000+00:00")},
        {STORE_KIND_TIME, false, false, TXT("2031-02-29T10:00:00.000Z")},
        {STORE_KIND_TIME, false, false, TXT("garbage")},
        {STORE_KIND_DATE, false, true, TXT("2032-02-29")},
        {STORE_KIND_DATE, false, false, TXT("2031-02-29")},
        {STORE_KIND_DATE, false, false, TXT("2031-2-28")},
        {STORE_KIND_DATE, false, false, TXT("2031-02-28T00:00:00.000Z")},
        {STORE_KIND_INT, false, true, {.type = STORE_INT, .i = -3}},
        {STORE_KIND_INT, false, false, TXT("3")},
        {STORE_KIND_INT, false, false, {.type = STORE_REAL, .d = 3}},
        {STORE_KIND_BOOL, false, true, {.type = STORE_INT, .i = 0}},
        {STORE_KIND_BOOL, false, false, {.type = STORE_INT, .i = 2}},
        {STORE_KIND_NUMBER, false, true, {.type = STORE_REAL, .d = 12.5}},
        {STORE_KIND_NUMBER, false, true, {.type = STORE_INT, .i = 12}},
        {STORE_KIND_NUMBER, false, false, TXT("12.5")},
        {STORE_KIND_TEXT, false, true, TXT("")},
        {STORE_KIND_TEXT, false, false, {.type = STORE_INT, .i = 1}},
        {STORE_KIND_TEXT, false, false, {.type = STORE_NULL}},
        {STORE_KIND_TEXT, true, true, {.type = STORE_NULL}},
        {STORE_KIND_WORD, false, true, TXT("recordatorio")},
        {STORE_KIND_WORD, false, true, TXT("confirmacion")},
        {STORE_KIND_WORD, false, false, TXT("spam")},
        {STORE_KIND_WORD, false, false, TXT("confirmacion\0")},
        {STORE_KIND_WORD, false, false, {.type = STORE_INT, .i = 1}},
        {STORE_KIND_KEY, false, true,
         TXT("6cb988e2eff5f111a394a86c67df9a4445eeb4dd3ee6a53300112233445566aa")},
        {STORE_KIND_KEY, false, false,
         TXT("6cb988e2eff5f111a394a86c67df9a4445eeb4dd3ee6a53300112233445566a")},
        {STORE_KIND_KEY, false, false,
         TXT("6CB988E2EFF5F111A394A86C67DF9A4445EEB4DD3EE6A53300112233445566AA")},
#undef TXT
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct store_column k = {cases[i].kind, cases[i].null, outbox_kinds()};
        char why[STORE_WRONG_MAX];
        const char *wrong = store_value_wrong(&k, &cases[i].v, why);
        if ((wrong == NULL) != cases[i].ok) fail_msg("case %zu: %s", i, wrong ? wrong : "taken");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(overlapping_bookings_conflict_and_touching_ones_do_not,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_booking_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(a_cancel_frees_the_rows_own_stretch_while_it_is_ahead,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(photo_inserts_stop_at_the_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(sessions_expire_and_end_with_a_password_change, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(profile_patch_touches_only_what_it_names, setup, teardown),
        cmocka_unit_test_setup_teardown(admin_listing_is_newest_first_with_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(a_value_too_long_for_its_field_is_an_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(outbox_messages_are_claimed_once_retried_and_dropped, setup,
                                        teardown),
        cmocka_unit_test(every_exported_column_has_a_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
