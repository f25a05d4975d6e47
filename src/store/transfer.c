/*
 * transfer.c - a shop's data as rows (see store/transfer.h): every table
 * dumped page by page from one snapshot, loaded in one write transaction;
 * and copies of the whole database (backup, restore).
 */
#include "store_int.h"

#include <inttypes.h>

/* --- a shop's data as rows ------------------------------------------------------------- */

/* One table: its columns, its key (the first nkey columns), the statements
 * that page through it and insert into it, all constant text, and what
 * each column holds (kinds: one word a column, in the order of cols):
 *   uuid    an id in the canonical lowercase form the service writes
 *   time    a time in the service's form, YYYY-MM-DDTHH:MM:SS.sssZ
 *   date    a date, YYYY-MM-DD
 *   int     an integer       bool  0 or 1       number  a number
 *   text    text
 * or text that is one of a domain list (domain/records.h), every value the
 * service writes there:
 *   estado  an appointment's state (cita_estados)
 *   status  an outbox message's state (outbox_estados)
 *   kind    an outbox message's kind (outbox_kinds)
 *   canal   an outbox message's channel (outbox_canales)
 *   entrega a WhatsApp message's delivery status (whatsapp_entregas)
 *   consent what a client consents to (consentimiento_tipos)
 *   clave   the name of a key the service keeps (clave_nombres)
 * and
 *   key     a key: 2 x CLAVE_BYTES lowercase hex digits
 * and "?" after the word: NULL is allowed (the column is not NOT NULL).
 * perfiles.rol and fotos_cita.tipo stay text: the specification stores
 * them as given (a rol PATCH is not validated, a photo's tipo is not
 * checked against antes/despues), so an export may hold any text there.
 * An import checks every value of an export against them before it writes
 * anything (store_column_kind), on every backend alike. */
#define DUMP_TABLE_KEY(name, key, nkey, keymarks, cols, n, marks, kinds)                           \
    {                                                                                              \
        {name, cols, n}, nkey, "SELECT " cols " FROM " name " ORDER BY " key " LIMIT ?",           \
            "SELECT " cols " FROM " name " WHERE (" key ") > (" keymarks ") ORDER BY " key         \
            " LIMIT ?",                                                                            \
            "INSERT INTO " name " (" cols ") VALUES (" marks ")", kinds                            \
    }
#define DUMP_TABLE(name, key, cols, n, marks, kinds)                                               \
    DUMP_TABLE_KEY(name, key, 1, "?", cols, n, marks, kinds)
#define DUMP_KEY_MAX 3

static const struct dump_table {
    struct store_table t;
    int nkey;
    const char *first, *next, *insert;
    const char *kinds;
} dump_tables[] = {
    DUMP_TABLE("auth_users", "id", "id, email, password_hash, created_at, last_sign_in_at", 5,
               "?, ?, ?, ?, ?", "uuid, text, text, time, time?"),
    DUMP_TABLE("perfiles", "id", "id, rol, nombre, telefono, created_at", 5, "?, ?, ?, ?, ?",
               "uuid, text, text?, text?, time"),
    DUMP_TABLE("auth_sessions", "token_hash", "token_hash, user_id, created_at, expires_at", 4,
               "?, ?, ?, ?", "text, uuid, time, time"),
    DUMP_TABLE("barberos", "id", "id, nombre, foto_url, activo", 4, "?, ?, ?, ?",
               "uuid, text, text?, bool"),
    DUMP_TABLE("servicios", "id", "id, nombre, duracion_min, precio, activo, margen_min", 6,
               "?, ?, ?, ?, ?, ?", "uuid, text, int, number, bool, int"),
    DUMP_TABLE("citas", "id",
               "id, cliente_id, barbero_id, servicio_id, fecha_inicio, fecha_fin, estado, notas, "
               "google_event_id, created_at, precio, asistencia_en",
               12, "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?",
               "uuid, uuid, uuid, uuid, time, time, estado, text?, text?, time, number?, time?"),
    DUMP_TABLE("historial_cortes", "id",
               "id, cliente_id, cita_id, barbero_id, servicio_id, fecha, created_at", 7,
               "?, ?, ?, ?, ?, ?, ?", "uuid, uuid, uuid, uuid, uuid, date, time"),
    DUMP_TABLE("fotos_cita", "id",
               "id, cita_id, cliente_id, tipo, url, storage_path, created_at, bytes", 8,
               "?, ?, ?, ?, ?, ?, ?, ?", "uuid, uuid, uuid, text, text, text, time, int"),
    DUMP_TABLE("mail_outbox", "id",
               "id, cita_id, recipient, cliente_nombre, barbero_nombre, servicio_nombre, "
               "fecha_inicio, fecha_fin, notas, created_at, status, attempts, next_attempt_at, "
               "locked_until, last_error, done_at, kind, due_at, enlace, canal, antelacion_min, "
               "proveedor_id, entrega, entrega_at",
               24, "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?",
               "uuid, uuid, text, text, text, text, time, time, text?, time, status, int, time, "
               "time?, text?, time?, kind, time?, text?, canal, int, text?, entrega?, time?"),
    /* the schedules and days off: added at the end, so that the tables before keep their
     * places (an export of version 1 names those only) */
    DUMP_TABLE_KEY("horarios", "barbero_id, dia, inicio", 3, "?, ?, ?",
                   "barbero_id, dia, inicio, fin", 4, "?, ?, ?, ?", "uuid, int, int, int"),
    DUMP_TABLE("ausencias", "id", "id, barbero_id, desde, hasta, motivo, created_at", 6,
               "?, ?, ?, ?, ?, ?", "uuid, uuid?, date, date, text?, time"),
    /* version 4: the clients' consents (an export of versions 2 and 3 ends before) */
    DUMP_TABLE_KEY("consentimientos", "cliente_id, tipo", 2, "?, ?",
                   "cliente_id, tipo, otorgado_en, retirado_en", 4, "?, ?, ?, ?",
                   "uuid, consent, time?, time?"),
    /* version 4: the links' key (it replaces the one the target made when it
     * opened, so every link handed out before still opens), the waiting
     * list and the notices it has sent */
    {{"claves", "nombre, valor, created_at", 3},
     1,
     "SELECT nombre, valor, created_at FROM claves ORDER BY nombre LIMIT ?",
     "SELECT nombre, valor, created_at FROM claves WHERE (nombre) > (?) ORDER BY nombre LIMIT ?",
     "INSERT INTO claves (nombre, valor, created_at) VALUES (?, ?, ?) ON CONFLICT (nombre) "
     "DO UPDATE SET valor = excluded.valor, created_at = excluded.created_at",
     "clave, key, time"},
    DUMP_TABLE("lista_espera", "id", "id, cliente_id, servicio_id, barbero_id, fecha, created_at",
               6, "?, ?, ?, ?, ?, ?", "uuid, uuid, uuid, uuid?, date, time"),
    DUMP_TABLE_KEY("lista_espera_avisos", "entrada_id, barbero_id, inicio", 3, "?, ?, ?",
                   "entrada_id, barbero_id, inicio, created_at", 4, "?, ?, ?, ?",
                   "uuid, uuid, time, time"),
    /* version 4: the clients' consent to WhatsApp messages; version 5: who
     * recorded it (the last column) */
    DUMP_TABLE("whatsapp_consentimientos", "cliente_id",
               "cliente_id, telefono, otorgado_en, retirado_en, registrado_por", 5, "?, ?, ?, ?, ?",
               "uuid, text, time, time?, uuid?"),
    /* version 4: a barber's address, linked user and feed token's hash */
    DUMP_TABLE("barbero_contactos", "barbero_id",
               "barbero_id, email, usuario_id, feed_hash, updated_at", 5, "?, ?, ?, ?, ?",
               "uuid, text?, uuid?, text?, time"),
    /* version 6: each client's generation of the personal links (an export
     * of versions 4 and 5 ends before) */
    DUMP_TABLE("enlaces_cliente", "cliente_id", "cliente_id, gen, updated_at", 3, "?, ?, ?",
               "uuid, int, time"),
};

#define DUMP_PAGE 2000

int store_tables(const struct store_table **out)
{
    static struct store_table t[ARRAY_LEN(dump_tables)];
    for (size_t i = 0; i < ARRAY_LEN(dump_tables); i++)
        t[i] = dump_tables[i].t;
    *out = t;
    return (int)ARRAY_LEN(dump_tables);
}

/* The n bytes at s, up to the next ", " (or the end), as the k-th item of
 * list: false when list has fewer. OUT: *item, *len. */
static bool list_item(const char *list, int k, const char **item, size_t *len)
{
    const char *p = list;
    for (; k > 0; k--) {
        p = strstr(p, ", ");
        if (!p) return false;
        p += 2;
    }
    const char *end = strstr(p, ", ");
    *item = p;
    *len = end ? (size_t)(end - p) : strlen(p);
    return true;
}

bool store_column_kind(int table, const char *column, size_t n, struct store_column *out)
{
    static const struct {
        const char *word;
        enum store_kind kind;
        const char *const *(*words)(void); /* STORE_KIND_WORD */
    } words[] = {{"text", STORE_KIND_TEXT, NULL},
                 {"uuid", STORE_KIND_UUID, NULL},
                 {"time", STORE_KIND_TIME, NULL},
                 {"date", STORE_KIND_DATE, NULL},
                 {"int", STORE_KIND_INT, NULL},
                 {"bool", STORE_KIND_BOOL, NULL},
                 {"number", STORE_KIND_NUMBER, NULL},
                 {"estado", STORE_KIND_WORD, cita_estados},
                 {"status", STORE_KIND_WORD, outbox_estados},
                 {"kind", STORE_KIND_WORD, outbox_kinds},
                 {"canal", STORE_KIND_WORD, outbox_canales},
                 {"entrega", STORE_KIND_WORD, whatsapp_entregas},
                 {"consent", STORE_KIND_WORD, consentimiento_tipos},
                 {"clave", STORE_KIND_WORD, clave_nombres},
                 {"key", STORE_KIND_KEY, NULL}};
    if (table < 0 || table >= (int)ARRAY_LEN(dump_tables)) return false;
    const struct dump_table *t = &dump_tables[table];
    const char *name, *word;
    size_t len, wlen;
    for (int k = 0; list_item(t->t.cols, k, &name, &len); k++) {
        if (len != n || memcmp(name, column, n)) continue;
        if (!list_item(t->kinds, k, &word, &wlen) || !wlen) return false;
        out->null = word[wlen - 1] == '?';
        if (out->null) wlen--;
        for (size_t w = 0; w < ARRAY_LEN(words); w++)
            if (strlen(words[w].word) == wlen && !memcmp(words[w].word, word, wlen)) {
                out->kind = words[w].kind;
                out->words = words[w].words ? words[w].words() : NULL;
                return true;
            }
        return false;
    }
    return false;
}

/* Whether the n bytes at s are one of words. */
static bool word_text(const char *const *words, const char *s, size_t n)
{
    for (; words && *words; words++)
        if (strlen(*words) == n && !memcmp(*words, s, n)) return true;
    return false;
}

/* "not one of a, b, c" into why. */
static const char *not_one_of(const char *const *words, char why[STORE_WRONG_MAX])
{
    size_t o = (size_t)snprintf(why, STORE_WRONG_MAX, "not one of");
    for (size_t i = 0; words && words[i] && o < STORE_WRONG_MAX; i++)
        o += (size_t)snprintf(why + o, STORE_WRONG_MAX - o, "%s %s", i ? "," : "", words[i]);
    return why;
}

const char *store_value_wrong(const struct store_column *c, const struct store_value *v,
                              char why[STORE_WRONG_MAX])
{
    if (v->type == STORE_NULL) return c->null ? NULL : "null, and the column is NOT NULL";
    bool text = v->type == STORE_TEXT;
    switch (c->kind) {
    case STORE_KIND_TEXT:
        return text ? NULL : "not text";
    case STORE_KIND_UUID: {
        char id[UUID_LEN + 1];
        return text && v->n == UUID_LEN && uuid_parse(v->s, v->n, id) && !memcmp(id, v->s, v->n)
                   ? NULL
                   : "not an id (a lowercase UUID, 8-4-4-4-12)";
    }
    case STORE_KIND_TIME: {
        int64_t ms;
        char back[ISO8601_LEN + 1];
        bool ok = text && v->n == ISO8601_LEN && iso8601_parse(v->s, v->n, &ms);
        if (ok) iso8601_format(ms, back);
        return ok && !memcmp(back, v->s, v->n) ? NULL
                                               : "not a time (YYYY-MM-DDTHH:MM:SS.sssZ, UTC)";
    }
    case STORE_KIND_DATE: {
        int64_t ms;
        char back[11];
        bool ok = text && v->n == 10 && iso8601_parse(v->s, v->n, &ms);
        if (ok) iso8601_date(ms, back);
        return ok && !memcmp(back, v->s, v->n) ? NULL : "not a date (YYYY-MM-DD)";
    }
    case STORE_KIND_INT:
        return v->type == STORE_INT ? NULL : "not an integer";
    case STORE_KIND_BOOL:
        return v->type == STORE_INT && (v->i == 0 || v->i == 1) ? NULL : "not 0 or 1";
    case STORE_KIND_NUMBER:
        return v->type == STORE_INT || v->type == STORE_REAL ? NULL : "not a number";
    case STORE_KIND_WORD:
        return text && word_text(c->words, v->s, v->n) ? NULL : not_one_of(c->words, why);
    case STORE_KIND_KEY: {
        bool ok = text && v->n == 2 * CLAVE_BYTES;
        for (size_t i = 0; ok && i < v->n; i++)
            ok = (v->s[i] >= '0' && v->s[i] <= '9') || (v->s[i] >= 'a' && v->s[i] <= 'f');
        if (!ok)
            snprintf(why, STORE_WRONG_MAX, "not a key (%d lowercase hex digits)", 2 * CLAVE_BYTES);
        return ok ? NULL : why;
    }
    }
    return "of no kind";
}

struct dump_page {
    store_dump_fn fn;
    void *ud;
    int table, nkey;
    int64_t rows;
    bool have;                        /* last holds the page's last key */
    struct db_val last[DUMP_KEY_MAX]; /* its texts in owned */
    char *owned[DUMP_KEY_MAX];
};

static void key_free(char *owned[DUMP_KEY_MAX])
{
    for (int k = 0; k < DUMP_KEY_MAX; k++) {
        free(owned[k]);
        owned[k] = NULL;
    }
}

/* A column in the store's own form (store_value). */
static struct store_value value_of(const struct db_val *v)
{
    switch (v->type) {
    case DB_INT:
        return (struct store_value){.type = STORE_INT, .i = v->i};
    case DB_REAL:
        return (struct store_value){.type = STORE_REAL, .d = v->d};
    case DB_TEXT:
        return (struct store_value){.type = STORE_TEXT, .s = v->s, .n = v->n};
    default:
        return (struct store_value){.type = STORE_NULL};
    }
}

/* A value to bind, from the store's own form. */
static struct db_val param_of(const struct store_value *v)
{
    switch (v->type) {
    case STORE_INT:
        return db_int(v->i);
    case STORE_REAL:
        return db_real(v->d);
    case STORE_TEXT:
        return (struct db_val){.type = DB_TEXT, .s = v->s, .n = v->n};
    default:
        return db_null();
    }
}

static br_err dump_row(void *ud, const struct db_val *cols, int n)
{
    struct dump_page *p = ud;
    p->rows++;
    key_free(p->owned);
    p->have = false;
    if (n < p->nkey) return err_set(BR_STORE, "a row without its key");
    for (int k = 0; k < p->nkey; k++) {
        if (cols[k].type == DB_TEXT) {
            p->owned[k] = xstrndup(cols[k].s, cols[k].n);
            p->last[k] = db_text(p->owned[k]);
        } else if (cols[k].type == DB_INT) {
            p->last[k] = cols[k];
        } else {
            return err_set(BR_STORE, "a row without its key");
        }
    }
    p->have = true;
    if (n > STORE_ROW_MAX) return err_set(BR_STORE, "a row of more than %d columns", STORE_ROW_MAX);
    struct store_value v[STORE_ROW_MAX];
    for (int i = 0; i < n; i++)
        v[i] = value_of(&cols[i]);
    return p->fn(p->ud, p->table, v, n);
}

br_err store_dump(struct store *st, store_dump_fn fn, void *ud)
{
    struct db *db = st->db;
    struct db_conn *c = NULL;
    br_err rc = db->ops->acquire(db, &c);
    if (rc) return rc;
    rc = db->ops->begin_read(c);
    for (size_t t = 0; !rc && t < ARRAY_LEN(dump_tables); t++) {
        struct dump_page p = {.fn = fn, .ud = ud, .table = (int)t, .nkey = dump_tables[t].nkey};
        do {
            p.rows = 0;
            if (!p.have) {
                struct db_val q[] = {db_int(DUMP_PAGE)};
                rc = EXEC(db, c, dump_tables[t].first, q, dump_row, &p, NULL);
            } else {
                /* the key's texts stay alive while dump_row replaces it */
                struct db_val q[DUMP_KEY_MAX + 1];
                char *after[DUMP_KEY_MAX];
                memcpy(q, p.last, sizeof p.last);
                memcpy(after, p.owned, sizeof after);
                memset(p.owned, 0, sizeof p.owned);
                p.have = false;
                q[p.nkey] = db_int(DUMP_PAGE);
                rc = db->ops->exec(c, dump_tables[t].next, q, p.nkey + 1, dump_row, &p, NULL);
                key_free(after);
            }
        } while (!rc && p.rows == DUMP_PAGE);
        key_free(p.owned);
    }
    db->ops->rollback(c); /* read only: nothing to keep */
    db->ops->release(db, c);
    return rc;
}

struct load {
    store_load_fn next;
    void *ud;
    bool default_week;
    int table;    /* of the row loaded last (-1: none yet) */
    int64_t line; /* its line in its table's file */
};

struct id_list {
    char **ids;
    size_t n, cap;
};

static br_err id_row(void *ud, const struct db_val *cols, int n)
{
    struct id_list *l = ud;
    if (n < 1 || cols[0].type != DB_TEXT) return err_set(BR_STORE, "a row without its key");
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->ids = xrealloc(l->ids, l->cap * sizeof *l->ids);
    }
    l->ids[l->n++] = xstrndup(cols[0].s, cols[0].n);
    return BR_OK;
}

/* Every barber gets the default week, as the migration gives it to the
 * barbers it finds. */
static br_err default_weeks(struct db *db, struct db_conn *c)
{
    struct id_list l = {0};
    br_err rc = db->ops->exec(c, "SELECT id FROM barberos ORDER BY id", NULL, 0, id_row, &l, NULL);
    for (size_t i = 0; i < l.n; i++) {
        if (!rc) rc = horario_default_insert(db, c, l.ids[i]);
        free(l.ids[i]);
    }
    free(l.ids);
    return rc;
}

/* A live appointment (not cancelled) that another live one of the same
 * barber meets - the booking's rule, [fecha_inicio, fecha_fin) against the
 * same: of two that overlap, the one starting later (or either, starting
 * together) starts inside the other, a bounded stretch of the index
 * citas_barbero_inicio for each. */
static const char sql_overlapping[] =
    "SELECT a.id FROM citas a WHERE a.estado <> 'cancelada' AND EXISTS (SELECT 1 FROM citas b "
    "WHERE b.barbero_id = a.barbero_id AND b.fecha_inicio >= a.fecha_inicio AND "
    "b.fecha_inicio < a.fecha_fin AND b.estado <> 'cancelada' AND b.id <> a.id) LIMIT 1";

static br_err first_text(void *ud, const struct db_val *cols, int n)
{
    char **out = ud;
    if (n > 0 && cols[0].type == DB_TEXT && !*out) *out = xstrndup(cols[0].s, cols[0].n);
    return BR_OK;
}

/* What the rows loaded must keep that the SQL schema does not say on every
 * backend: no two live appointments of a barber overlap (PostgreSQL's
 * exclusion constraint refuses them as they are inserted; SQLite has only
 * the booking's own check). BR_INVALID, naming one of them. */
static br_err loaded_rules(struct db *db, struct db_conn *c)
{
    char *id = NULL;
    br_err rc = db->ops->exec(c, sql_overlapping, NULL, 0, first_text, &id, NULL);
    if (!rc && id)
        rc = err_set(BR_INVALID,
                     "citas.jsonl: the appointment %s overlaps another live one of its barber", id);
    free(id);
    return rc;
}

static br_err load_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct load *l = ud;
    for (;;) {
        struct store_value v[STORE_ROW_MAX];
        int table = -1, n = 0;
        br_err rc = l->next(l->ud, &table, v, &n);
        if (rc == BR_NOTFOUND) { /* every row is in */
            rc = loaded_rules(db, c);
            if (!rc && l->default_week) rc = default_weeks(db, c);
            return rc;
        }
        if (rc) return rc;
        if (table < 0 || table >= (int)ARRAY_LEN(dump_tables) || n != dump_tables[table].t.ncols)
            return err_set(BR_INVALID, "a row that fits no table");
        if (table != l->table) {
            l->table = table;
            l->line = 0;
        }
        l->line++;
        struct db_val p[STORE_ROW_MAX];
        for (int i = 0; i < n; i++)
            p[i] = param_of(&v[i]);
        rc = db->ops->exec(c, dump_tables[table].insert, p, n, NULL, NULL, NULL);
        if (rc && !err_unavailable(rc)) {
            /* a row the schema refuses (a CHECK, a unique key, a reference):
             * the database's words, after the row's file and line */
            char where[160];
            snprintf(where, sizeof where, "%s.jsonl, line %" PRId64, dump_tables[table].t.name,
                     l->line);
            return err_prefix(rc, where);
        }
        if (rc) return rc;
    }
}

br_err store_load(struct store *st, store_load_fn next, void *ud, bool default_week)
{
    struct load l = {next, ud, default_week, -1, 0};
    return in_tx(st, load_tx, &l);
}

br_err store_backup_able(struct store *st, bool restore)
{
    if (restore ? !st->db->ops->restore_from : !st->db->ops->backup_to)
        return err_set(BR_CONFIG, "%s has its own %s tools (see docs/operations.md, Backups)",
                       st->db->ops->name, restore ? "restore" : "backup");
    return BR_OK;
}

br_err store_backup(struct store *st, const char *path)
{
    br_err rc = store_backup_able(st, false);
    return rc ? rc : st->db->ops->backup_to(st->db, path);
}

br_err store_restore(struct store *st, const char *path)
{
    br_err rc = store_backup_able(st, true);
    if (!rc) rc = st->db->ops->restore_from(st->db, path);
    return rc ? rc : store_migrate(st);
}
