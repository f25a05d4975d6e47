/*
 * transfer.c - barberia import of a shop's data and photos (see
 * transfer.h), and the new shop an import or a restore fills; the export
 * is transfer_export.c, the reading of an export's files transfer_files.c.
 */
#define _GNU_SOURCE
#include "transfer.h"
#include "sweeper.h"
#include "photos.h"
#include "transfer_files.h"
#include "../util/iso8601.h"
#include "../util/log.h"
#include "../util/objkey.h"
#include "../util/vec.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLES_V3 11 /* the tables of versions 2 and 3: the store's first ones */
#define TABLES_V5 17 /* the tables of versions 4 and 5 */

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT ? 0 : -1;
}

void transfer_remove(const char *dir, const char *name)
{
    char *path = xasprintf("%s/%s", dir, name);
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
        log_warn("could not remove %s: %s", path, strerror(errno));
    free(path);
}

void transfer_remove_db(const char *dir)
{
    static const char *const files[] = {"barberia.db-wal", "barberia.db-shm", "barberia.db-journal",
                                        "barberia.db"};
    for (size_t i = 0; i < ARRAY_LEN(files); i++)
        transfer_remove(dir, files[i]);
}

/* --- a new shop an import or a restore fills --------------------------------------- */

int transfer_db_make(const char *dir, struct stat *made)
{
    char *path = xasprintf("%s/barberia.db", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    free(path);
    if (fd < 0) return -1;
    int r = fstat(fd, made);
    close(fd);
    return r;
}

void transfer_target_make(const char *data_dir, bool db, bool folder_store,
                          struct transfer_target *t)
{
    memset(t, 0, sizeof *t);
    /* each made here or not at all (O_EXCL, mkdir): what another process
     * made meanwhile is never this command's to take back */
    t->dir = mkdir(data_dir, 0750) == 0;
    struct stat sb;
    if (db && transfer_db_make(data_dir, &sb) == 0) {
        t->db = true;
        t->db_dev = sb.st_dev;
        t->db_ino = sb.st_ino;
    }
    /* the folder store's photos, or the S3 store's scratch folder */
    char *objdir = xasprintf("%s/%s", data_dir, folder_store ? "storage" : "s3-scratch");
    bool made = mkdir(objdir, folder_store ? 0755 : 0750) == 0;
    free(objdir);
    t->storage = folder_store && made;
    t->scratch = !folder_store && made;
}

void transfer_target_undo(const char *data_dir, const struct transfer_target *t)
{
    char *path = xasprintf("%s/barberia.db", data_dir);
    struct stat sb;
    /* the very file made here (no other one put in its place) */
    if (t->db && lstat(path, &sb) == 0 && sb.st_dev == t->db_dev && sb.st_ino == t->db_ino)
        transfer_remove_db(data_dir);
    free(path);
    if (t->storage) transfer_remove(data_dir, "storage");
    if (t->scratch) transfer_remove(data_dir, "s3-scratch");
    /* empty by now, unless someone else put something there */
    if (t->dir && rmdir(data_dir) != 0 && errno != ENOENT && errno != ENOTEMPTY)
        log_warn("could not remove %s: %s", data_dir, strerror(errno));
}

/* --- import ----------------------------------------------------------------------- */

/* An object of the export and its size. */
struct obj_size {
    char *key;
    int64_t size;
    bool named; /* by a photo record (fotos_cita.storage_path) */
};

struct manifest {
    json_t *root;
    json_t *tables; /* array, in the export's order */
    int version;
    /* per table of the export: its name, the store table its rows go
     * into, and the columns an older version's rows lack */
    const char *name[TRANSFER_MAX_TABLES];
    int into[TRANSFER_MAX_TABLES];
    int add[TRANSFER_MAX_TABLES]; /* enum old_add */
    /* the photos' objects by key (sorted), for the sizes older versions
     * did not record */
    struct obj_size *sizes;
    size_t nsizes, sizes_cap;
    /* every file of the export, open since it was checked (-1: not yet),
     * so that what is loaded is what was checked, never a file put in its
     * place since */
    int fd[TRANSFER_MAX_TABLES], objects_fd;
};

/* The columns an older version's table lacks, given their values on
 * import. */
enum old_add {
    ADD_NONE,
    ADD_ACTIVO,      /* barberos, servicios (version 1): every row active */
    ADD_OUTBOX_KIND, /* mail_outbox (version 1): every message a confirmation, due when written */
    ADD_FOTO_BYTES,  /* fotos_cita (versions 1, 2): each photo's size, its object's in the export */
    ADD_CITA_PRECIO, /* citas (versions 1 to 3): no price kept at booking, no attendance mark */
    ADD_OUTBOX_CANAL,    /* mail_outbox (versions 2, 3): every message an e-mail, no offset, no
                          * WhatsApp id or status */
    ADD_SERVICIO_ACTIVO, /* servicios (version 1): every service active, no margin */
    ADD_SERVICIO_MARGEN, /* servicios (versions 2, 3): no clean-up margin */
    ADD_WA_REGISTRADO,   /* whatsapp_consentimientos (version 4): recorded by no staff user */
};

/* fotos_cita's columns before version 3 */
#define FOTO_COLS_V2 "id, cita_id, cliente_id, tipo, url, storage_path, created_at"
/* servicios' columns before version 4 */
#define SERVICIO_COLS_V3 "id, nombre, duracion_min, precio, activo"
/* citas' columns before version 4 */
#define CITA_COLS_V3                                                                               \
    "id, cliente_id, barbero_id, servicio_id, fecha_inicio, fecha_fin, estado, notas, "            \
    "google_event_id, created_at"
/* mail_outbox's columns before version 4 */
#define OUTBOX_COLS_V3                                                                             \
    "id, cita_id, recipient, cliente_nombre, barbero_nombre, servicio_nombre, fecha_inicio, "      \
    "fecha_fin, notas, created_at, status, attempts, next_attempt_at, locked_until, last_error, "  \
    "done_at, kind, due_at"
#define OUTBOX_ADDED_V4 ", enlace, canal, antelacion_min, proveedor_id, entrega, entrega_at"
/* whatsapp_consentimientos' columns before version 5 */
#define WA_CONSENT_COLS_V4 "cliente_id, telefono, otorgado_en, retirado_en"

/* What an export of version 1 (before bookable hours) carries: barberos and
 * servicios without activo, no horarios, no ausencias. */
static const struct {
    const char *name, *cols;
    enum old_add add;
} v1_tables[] = {
    {"auth_users", "id, email, password_hash, created_at, last_sign_in_at", ADD_NONE},
    {"perfiles", "id, rol, nombre, telefono, created_at", ADD_NONE},
    {"auth_sessions", "token_hash, user_id, created_at, expires_at", ADD_NONE},
    {"barberos", "id, nombre, foto_url", ADD_ACTIVO},
    {"servicios", "id, nombre, duracion_min, precio", ADD_SERVICIO_ACTIVO},
    {"citas", CITA_COLS_V3, ADD_CITA_PRECIO},
    {"historial_cortes", "id, cliente_id, cita_id, barbero_id, servicio_id, fecha, created_at",
     ADD_NONE},
    {"fotos_cita", FOTO_COLS_V2, ADD_FOTO_BYTES},
    {"mail_outbox",
     "id, cita_id, recipient, cliente_nombre, barbero_nombre, servicio_nombre, fecha_inicio, "
     "fecha_fin, notas, created_at, status, attempts, next_attempt_at, locked_until, "
     "last_error, done_at",
     ADD_OUTBOX_KIND},
};

/* Fills m's tables for its version: the names and columns the export must
 * carry, and where each goes in this version's store. */
static br_err plan_tables(struct manifest *m)
{
    const struct store_table *tables;
    int n = store_tables(&tables);
    if (m->version >= 2) {
        /* versions 2 to 6: this version's tables (photos without their sizes in
         * version 2, appointments without their prices before 4, the WhatsApp
         * consents without who recorded them before 5); versions 2 and 3:
         * without the tables version 4 added at the end; 4 and 5: without the
         * links' generations (every client's links at generation 0) */
        if (m->version < 4 && n > TABLES_V3) n = TABLES_V3;
        if (m->version < 6 && n > TABLES_V5) n = TABLES_V5;
        for (int i = 0; i < n; i++) {
            m->name[i] = tables[i].name;
            m->into[i] = i;
            if (m->version == 2 && !strcmp(tables[i].name, "fotos_cita"))
                m->add[i] = ADD_FOTO_BYTES;
            if (m->version < 4 && !strcmp(tables[i].name, "citas")) m->add[i] = ADD_CITA_PRECIO;
            if (m->version < 4 && !strcmp(tables[i].name, "servicios"))
                m->add[i] = ADD_SERVICIO_MARGEN;
            if (m->version < 4 && !strcmp(tables[i].name, "mail_outbox"))
                m->add[i] = ADD_OUTBOX_CANAL;
            if (m->version < 5 && !strcmp(tables[i].name, "whatsapp_consentimientos"))
                m->add[i] = ADD_WA_REGISTRADO;
        }
        return (int)json_array_size(m->tables) == n
                   ? BR_OK
                   : err_set(BR_INVALID, "the manifest names other tables than version %d's",
                             m->version);
    }
    if ((int)json_array_size(m->tables) != (int)ARRAY_LEN(v1_tables))
        return err_set(BR_INVALID, "the manifest names other tables than version 1's");
    for (int i = 0; i < (int)ARRAY_LEN(v1_tables); i++) {
        m->name[i] = v1_tables[i].name;
        m->into[i] = -1;
        for (int k = 0; k < n && m->into[i] < 0; k++)
            if (!strcmp(tables[k].name, v1_tables[i].name)) m->into[i] = k;
        m->add[i] = v1_tables[i].add;
        /* the store's columns: version 1's, then those added since */
        static const char *const added[] = {"",
                                            ", activo",
                                            (", kind, due_at" OUTBOX_ADDED_V4),
                                            ", bytes",
                                            ", precio, asistencia_en",
                                            OUTBOX_ADDED_V4,
                                            ", activo, margen_min",
                                            ", margen_min",
                                            ", registrado_por"};
        char *want = xasprintf("%s%s", v1_tables[i].cols, added[v1_tables[i].add]);
        bool fits = m->into[i] >= 0 && !strcmp(tables[m->into[i]].cols, want);
        free(want);
        if (!fits) return err_set(BR_INVALID, "version 1's %s does not fit this store", m->name[i]);
    }
    return BR_OK;
}

/* The columns table i of the export must have. */
static const char *export_cols(const struct manifest *m, int i)
{
    if (m->version == 1) return v1_tables[i].cols;
    if (m->add[i] == ADD_FOTO_BYTES) return FOTO_COLS_V2;
    if (m->add[i] == ADD_CITA_PRECIO) return CITA_COLS_V3;
    if (m->add[i] == ADD_OUTBOX_CANAL) return OUTBOX_COLS_V3;
    if (m->add[i] == ADD_SERVICIO_MARGEN) return SERVICIO_COLS_V3;
    if (m->add[i] == ADD_WA_REGISTRADO) return WA_CONSENT_COLS_V4;
    const struct store_table *tables;
    store_tables(&tables);
    return tables[i].cols;
}

static int size_cmp(const void *a, const void *b)
{
    return strcmp(((const struct obj_size *)a)->key, ((const struct obj_size *)b)->key);
}

/* The size of the export's photo object key (0 when the export lacks it:
 * an export never does). */
static int64_t photo_size(const struct manifest *m, const struct store_value *key)
{
    if (key->type != STORE_TEXT || !m->nsizes) return 0;
    struct obj_size want = {(char *)key->s, 0, false};
    const struct obj_size *o = bsearch(&want, m->sizes, m->nsizes, sizeof *m->sizes, size_cmp);
    return o ? o->size : 0;
}

/* The export's object key (of the photo bucket), opened and checked
 * against its entry: its listed size (at most a photo's, PHOTO_MAX_BYTES)
 * and SHA-256, read from the descriptor handed back. OUT: *fd, open on
 * success (the caller closes it). */
static br_err open_object(const char *dir, const char *key, json_int_t size, const char *want,
                          int *fd)
{
    *fd = -1;
    if (size < 0 || size > (json_int_t)PHOTO_MAX_BYTES)
        return err_set(BR_INVALID,
                       "object %s/%s: %" JSON_INTEGER_FORMAT
                       " bytes, more than a photo may have (%u)",
                       PHOTO_BUCKET, key, size, PHOTO_MAX_BYTES);
    char *rel = xasprintf("objects/%s/%s", PHOTO_BUCKET, key);
    uint64_t got = 0;
    char sum[65];
    br_err rc = transfer_open_in(dir, rel, fd, &got);
    /* its size first: a larger file is not read at all */
    if (!rc && got != (uint64_t)size)
        rc = err_set(BR_INVALID, "object %s/%s: checksum mismatch", PHOTO_BUCKET, key);
    if (!rc) rc = transfer_hash_fd(*fd, (uint64_t)size, rel, sum, &got);
    if (!rc && (strcmp(sum, want) || got != (uint64_t)size))
        rc = err_set(BR_INVALID, "object %s/%s: checksum mismatch", PHOTO_BUCKET, key);
    free(rel);
    if (rc && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

/* One entry of objects.jsonl: [bucket, key, content type, size, sha256].
 * Only the photo bucket is taken: the service stores photos nowhere else,
 * and an import writes (and takes back) in no other bucket. */
struct obj_entry {
    const char *key, *type, *sum;
    json_int_t size;
};

static br_err parse_object(const json_t *o, struct obj_entry *e)
{
    const char *bucket = json_string_value(json_array_get(o, 0));
    e->key = json_string_value(json_array_get(o, 1));
    e->type = json_string_value(json_array_get(o, 2));
    e->sum = json_string_value(json_array_get(o, 4));
    json_t *size = json_array_get(o, 3);
    e->size = json_integer_value(size);
    if (!bucket || !e->key || !e->type || !e->sum || !json_is_integer(size) ||
        !objkey_valid(e->key, strlen(e->key)))
        return err_set(BR_INVALID, "objects.jsonl: a malformed line");
    if (strcmp(bucket, PHOTO_BUCKET))
        return err_set(BR_INVALID, "objects.jsonl: an object outside the bucket %s", PHOTO_BUCKET);
    return BR_OK;
}

/* The export's object key, when objects.jsonl lists it. */
static struct obj_size *listed(const struct manifest *m, const char *key)
{
    if (!m->nsizes) return NULL;
    struct obj_size want = {(char *)key, 0, false};
    return bsearch(&want, m->sizes, m->nsizes, sizeof *m->sizes, size_cmp);
}

/* Every photo record names an object objects.jsonl lists, no two records
 * the same one, and every object listed is named by a record: an import
 * stores exactly the photos its rows keep, nothing that would stay with no
 * record (and no sweep to take it back). */
static br_err photo_row_named(void *ud, const json_t *row)
{
    const struct manifest *m = ud;
    /* storage_path, the sixth column in every version */
    const char *key = json_string_value(json_array_get(row, 5));
    struct obj_size *o = key ? listed(m, key) : NULL;
    if (!key) return err_set(BR_INVALID, "fotos_cita.jsonl: a row without its storage_path");
    if (!o)
        return err_set(BR_INVALID,
                       "fotos_cita.jsonl: a photo whose object objects.jsonl does not list (%s)",
                       objkey_valid(key, strlen(key)) ? key : "an invalid key");
    if (o->named)
        return err_set(BR_INVALID, "fotos_cita.jsonl: two photos name the object %s", key);
    o->named = true;
    return BR_OK;
}

static br_err check_photo_rows(const struct manifest *m, int table)
{
    br_err rc =
        transfer_jsonl_each(m->fd[table], "fotos_cita.jsonl", photo_row_named, (void *)m, NULL);
    for (size_t i = 0; !rc && i < m->nsizes; i++)
        if (!m->sizes[i].named)
            rc = err_set(BR_INVALID,
                         "objects.jsonl: the object %s is no photo's (no row of "
                         "fotos_cita.jsonl names it)",
                         m->sizes[i].key);
    return rc;
}

/* Calls fn for each object objects.jsonl (open in m->objects_fd) lists,
 * with its file opened below dir (open_object: its size and sum checked)
 * and closed after; every byte of the list is read and hashed again, and a
 * list that is no longer the one the manifest sums fails. */
typedef br_err (*object_fn)(void *ud, const struct obj_entry *e, int fd);

struct object_walk {
    const char *dir;
    object_fn fn;
    void *ud;
};

static br_err object_line(void *ud, const json_t *o)
{
    const struct object_walk *w = ud;
    struct obj_entry ent;
    br_err rc = parse_object(o, &ent);
    int fd = -1;
    if (!rc) rc = open_object(w->dir, ent.key, ent.size, ent.sum, &fd);
    if (!rc) rc = w->fn(w->ud, &ent, fd);
    if (fd >= 0) close(fd);
    return rc;
}

static br_err objects_each(const char *dir, const struct manifest *m, object_fn fn, void *ud)
{
    struct object_walk w = {dir, fn, ud};
    const char *want =
        json_string_value(json_object_get(json_object_get(m->root, "objects"), "sha256"));
    return transfer_jsonl_each(m->objects_fd, "objects.jsonl", object_line, &w, want ? want : "");
}

struct object_check {
    struct manifest *m;
    struct transfer_stats *st;
};

static br_err object_checked(void *ud, const struct obj_entry *e, int fd)
{
    (void)fd;
    struct object_check *k = ud;
    struct manifest *m = k->m;
    VEC_RESERVE(m->sizes, m->nsizes, m->sizes_cap, 64);
    m->sizes[m->nsizes++] = (struct obj_size){xstrdup(e->key), (int64_t)e->size, false};
    k->st->objects++;
    k->st->bytes += (int64_t)e->size;
    return BR_OK;
}

/* Checks every object objects.jsonl lists, and that the photo records
 * (table foto_table, -1: none) and the objects name each other one to
 * one. */
static br_err check_objects(const char *dir, struct manifest *m, int foto_table,
                            struct transfer_stats *st)
{
    struct object_check k = {m, st};
    br_err rc = objects_each(dir, m, object_checked, &k);
    if (m->nsizes) qsort(m->sizes, m->nsizes, sizeof *m->sizes, size_cmp);
    for (size_t i = 1; !rc && i < m->nsizes; i++)
        if (!strcmp(m->sizes[i - 1].key, m->sizes[i].key))
            rc = err_set(BR_INVALID, "objects.jsonl lists %s twice", m->sizes[i].key);
    if (!rc && foto_table >= 0) rc = check_photo_rows(m, foto_table);
    if (!rc && foto_table < 0 && m->nsizes)
        rc = err_set(BR_INVALID, "objects.jsonl lists objects, and no photo names them");
    return rc;
}

/* A value of a row as the store takes it (load_next's reading). False
 * for what no column holds (an object, an array, true, false). */
static bool value_of(const json_t *v, struct store_value *out)
{
    if (json_is_integer(v))
        *out = (struct store_value){.type = STORE_INT, .i = json_integer_value(v)};
    else if (json_is_real(v))
        *out = (struct store_value){.type = STORE_REAL, .d = json_real_value(v)};
    else if (json_is_string(v))
        *out = (struct store_value){
            .type = STORE_TEXT, .s = json_string_value(v), .n = json_string_length(v)};
    else if (json_is_null(v))
        *out = (struct store_value){.type = STORE_NULL};
    else
        return false;
    return true;
}

br_err transfer_cols_of(int table, const char *what, const char *cols, struct transfer_cols *out)
{
    out->n = 0;
    while (*cols) {
        const char *end = strchr(cols, ',');
        size_t len = end ? (size_t)(end - cols) : strlen(cols);
        if (out->n == STORE_ROW_MAX || !store_column_kind(table, cols, len, &out->kind[out->n]))
            return err_set(BR_INVALID, "%s: a column of no known kind (%.*s)", what, (int)len,
                           cols);
        out->col[out->n] = cols;
        out->len[out->n++] = len;
        cols += len;
        while (*cols == ',' || *cols == ' ')
            cols++;
    }
    return BR_OK;
}

/* The rows of one table of the export, each value checked against the
 * kind its column has in the store (store_column_kind, by name: an older
 * version's columns are some of this one's). */
struct value_check {
    const char *name; /* the table's */
    struct transfer_cols k;
    int64_t line;
};

static br_err row_values(void *ud, const json_t *row)
{
    struct value_check *k = ud;
    k->line++;
    if (!json_is_array(row))
        return err_set(BR_INVALID, "%s.jsonl, line %" PRId64 ": not a row (a JSON array)", k->name,
                       k->line);
    if ((int)json_array_size(row) != k->k.n)
        return err_set(BR_INVALID, "%s.jsonl, line %" PRId64 ": %zu values, and the table has %d",
                       k->name, k->line, json_array_size(row), k->k.n);
    for (int c = 0; c < k->k.n; c++) {
        struct store_value v;
        char why[STORE_WRONG_MAX];
        const char *wrong = value_of(json_array_get(row, (size_t)c), &v)
                                ? store_value_wrong(&k->k.kind[c], &v, why)
                                : "not a value a column holds";
        if (wrong)
            return err_set(BR_INVALID, "%s.jsonl, line %" PRId64 ", column %.*s: %s", k->name,
                           k->line, (int)k->k.len[c], k->k.col[c], wrong);
    }
    return BR_OK;
}

/* Every value of the export's table i (its file open in m->fd[i], its sum
 * want) of its column's kind, before anything is written: on SQLite,
 * whose columns take any value, a time that is no time would load and be
 * served (and its slot offered as free); PostgreSQL would refuse some,
 * not all. */
static br_err check_values(const struct manifest *m, int i, const char *want)
{
    struct value_check k = {.name = m->name[i]};
    br_err rc = transfer_cols_of(m->into[i], k.name, export_cols(m, i), &k.k);
    if (rc) return rc;
    char *file = xasprintf("%s.jsonl", k.name);
    rc = transfer_jsonl_each(m->fd[i], file, row_values, &k, want);
    free(file);
    return rc;
}

/* Loads manifest.json and checks every file against it, each opened once
 * (kept open in m for the load). */
static br_err check_export(const char *dir, struct manifest *m, struct transfer_stats *st)
{
    int mfd = -1;
    uint64_t msize = 0;
    br_err rc = transfer_open_in(dir, "manifest.json", &mfd, &msize);
    if (rc) return rc;
    json_error_t e;
    /* the manifest is small: a few lines per table */
    m->root = msize <= TRANSFER_LINE_MAX ? json_loadfd(mfd, 0, &e) : NULL;
    close(mfd);
    if (!m->root)
        return err_set(BR_INVALID, "%s/manifest.json: %s", dir,
                       msize <= TRANSFER_LINE_MAX ? e.text : "too large");
    const char *format = json_string_value(json_object_get(m->root, "format"));
    json_int_t version = json_integer_value(json_object_get(m->root, "version"));
    if (!format || strcmp(format, TRANSFER_FORMAT) || version < 1 || version > TRANSFER_VERSION)
        return err_set(BR_INVALID, "%s is not a barberia export of version 1 to %d", dir,
                       TRANSFER_VERSION);
    m->version = (int)version;
    m->tables = json_object_get(m->root, "tables");
    if (!json_is_array(m->tables))
        return err_set(BR_INVALID, "the manifest names other tables than version %d's", m->version);
    br_err planned = plan_tables(m);
    if (planned) return planned;
    int n = (int)json_array_size(m->tables), foto_table = -1;
    for (int i = 0; i < n; i++) {
        json_t *t = json_array_get(m->tables, (size_t)i);
        const char *name = json_string_value(json_object_get(t, "name"));
        const char *cols = json_string_value(json_object_get(t, "columns"));
        const char *want = json_string_value(json_object_get(t, "sha256"));
        if (!name || !cols || !want || strcmp(name, m->name[i]) || strcmp(cols, export_cols(m, i)))
            return err_set(BR_INVALID, "table %d of the manifest is not %s (%s)", i, m->name[i],
                           export_cols(m, i));
        char *file = xasprintf("%s.jsonl", name);
        char sum[65];
        uint64_t size;
        rc = transfer_open_in(dir, file, &m->fd[i], &size);
        if (!rc) rc = transfer_hash_fd(m->fd[i], UINT64_MAX, file, sum, NULL);
        free(file);
        if (rc) return rc;
        if (strcmp(sum, want)) return err_set(BR_INVALID, "%s.jsonl: checksum mismatch", name);
        rc = check_values(m, i, want);
        if (rc) return rc;
        if (!strcmp(name, "fotos_cita")) foto_table = i;
        st->rows += json_integer_value(json_object_get(t, "rows"));
    }
    json_t *objects = json_object_get(m->root, "objects");
    const char *want = json_string_value(json_object_get(objects, "sha256"));
    char sum[65];
    uint64_t size;
    rc = transfer_open_in(dir, "objects.jsonl", &m->objects_fd, &size);
    if (!rc) rc = transfer_hash_fd(m->objects_fd, UINT64_MAX, "objects.jsonl", sum, NULL);
    if (!rc && (!want || strcmp(sum, want)))
        rc = err_set(BR_INVALID, "objects.jsonl: checksum mismatch");
    if (!rc) rc = check_objects(dir, m, foto_table, st);
    return rc;
}

struct object_put {
    const struct manifest *m;
    struct photos_bulk *hold;
};

static br_err object_put(void *ud, const struct obj_entry *e, int fd)
{
    struct object_put *k = ud;
    const struct obj_size *c = listed(k->m, e->key);
    if (!c || c->size != (int64_t)e->size)
        return err_set(BR_INVALID, "objects.jsonl changed while it was imported");
    br_err rc = photos_bulk_put(k->hold, e->key, e->type, fd, (uint64_t)e->size);
    if (rc == BR_CONFLICT)
        rc = err_set(BR_CONFLICT, "the store already has %s/%s", PHOTO_BUCKET, e->key);
    return rc;
}

/* Stores every photo of the export, each read (and hashed again) from the
 * descriptor it is stored from; only objects the check found, in the photo
 * bucket. */
static br_err put_objects(struct app *app, struct photos_bulk *hold, const char *dir,
                          const struct manifest *m)
{
    br_err rc =
        m->nsizes ? obj_ensure_bucket(app->obj, PHOTO_BUCKET, true, PHOTO_BUCKET_LIMIT) : BR_OK;
    struct object_put k = {m, hold};
    return rc ? rc : objects_each(dir, m, object_put, &k);
}

/* Rows for store_load, table after table, each read from the descriptor
 * that was checked and hashed again as it is read. */
struct loader {
    const struct manifest *m;
    int ntables, table;
    struct transfer_lines r;
    bool open;
    json_t *row; /* the row handed out last: its strings are borrowed */
};

static br_err load_next(void *ud, int *table, struct store_value *cols, int *n)
{
    struct loader *l = ud;
    json_decref(l->row);
    l->row = NULL;
    size_t len = 0;
    for (;;) {
        if (!l->open) {
            if (l->table >= l->ntables) return BR_NOTFOUND;
            br_err rc = transfer_lines_open(&l->r, l->m->fd[l->table], l->m->name[l->table]);
            if (rc) return rc;
            l->open = true;
        }
        bool got = false;
        br_err rc = transfer_lines_next(&l->r, &len, &got);
        if (rc) return rc;
        if (got) break;
        json_t *t = json_array_get(l->m->tables, (size_t)l->table);
        bool same = transfer_lines_sum_is(&l->r, json_string_value(json_object_get(t, "sha256")));
        transfer_lines_close(&l->r);
        l->open = false;
        if (!same)
            return err_set(BR_INVALID, "%s.jsonl changed while it was imported",
                           l->m->name[l->table]);
        l->table++;
    }
    json_error_t e;
    l->row = json_loadb(l->r.line, len, 0, &e);
    /* the store takes up to STORE_ROW_MAX values a row; an older
     * version's get up to 8 more (version 1's outbox) */
    if (!json_is_array(l->row) || json_array_size(l->row) > STORE_ROW_MAX - 8)
        return err_set(BR_INVALID, "a malformed row: %s", e.text);
    *table = l->m->into[l->table];
    *n = (int)json_array_size(l->row);
    for (int i = 0; i < *n; i++)
        if (!value_of(json_array_get(l->row, (size_t)i), &cols[i]))
            return err_set(BR_INVALID, "a malformed value in a row");
    switch (l->m->add[l->table]) { /* an older version's rows: what was added since */
    case ADD_NONE:
        break;
    case ADD_ACTIVO:
        cols[(*n)++] = (struct store_value){.type = STORE_INT, .i = 1};
        break;
    case ADD_OUTBOX_KIND:
        cols[(*n)++] = (struct store_value){.type = STORE_TEXT, .s = "confirmacion", .n = 12};
        cols[(*n)++] = (struct store_value){.type = STORE_NULL};
        /* fall through - and what version 4 added */
    case ADD_OUTBOX_CANAL:
        cols[(*n)++] = (struct store_value){.type = STORE_NULL}; /* enlace */
        cols[(*n)++] = (struct store_value){.type = STORE_TEXT, .s = "email", .n = 5};
        cols[(*n)++] = (struct store_value){.type = STORE_INT, .i = 0};
        cols[(*n)++] = (struct store_value){.type = STORE_NULL};
        cols[(*n)++] = (struct store_value){.type = STORE_NULL};
        cols[(*n)++] = (struct store_value){.type = STORE_NULL};
        break;
    case ADD_CITA_PRECIO: /* precio, asistencia_en */
        cols[(*n)++] = (struct store_value){.type = STORE_NULL};
        cols[(*n)++] = (struct store_value){.type = STORE_NULL};
        break;
    case ADD_SERVICIO_ACTIVO:
        cols[(*n)++] = (struct store_value){.type = STORE_INT, .i = 1};
        /* fall through - and no margin */
    case ADD_SERVICIO_MARGEN:
        cols[(*n)++] = (struct store_value){.type = STORE_INT, .i = 0};
        break;
    case ADD_WA_REGISTRADO: /* registrado_por */
        cols[(*n)++] = (struct store_value){.type = STORE_NULL};
        break;
    case ADD_FOTO_BYTES: /* storage_path, the sixth column, names the object */
        cols[*n] =
            (struct store_value){.type = STORE_INT, .i = *n > 5 ? photo_size(l->m, &cols[5]) : 0};
        (*n)++;
        break;
    }
    return BR_OK;
}

br_err transfer_import(struct app *app, const char *dir, struct transfer_stats *st)
{
    struct transfer_stats got = {0};
    struct manifest m = {0};
    m.objects_fd = -1;
    for (int i = 0; i < TRANSFER_MAX_TABLES; i++)
        m.fd[i] = -1;
    br_err rc = check_export(dir, &m, &got);
    bool empty = false;
    if (!rc) rc = store_is_empty(app->store, &empty);
    if (!rc && !empty)
        rc = err_set(BR_CONFLICT, "the target already holds data: an import needs an empty one");
    /* nor may anything else be serving or loading it meanwhile */
    if (!rc) rc = sweep_alone(app, "an import");
    struct photos_bulk *hold = NULL;
    if (!rc) rc = photos_bulk_begin(app, &hold);
    if (!rc) rc = put_objects(app, hold, dir, &m);
    struct loader l = {.m = &m, .ntables = (int)json_array_size(m.tables)};
    /* version 1 had no schedules: its barbers get the default week, as the
     * migration gives it to the barbers it finds */
    if (!rc) rc = store_load(app->store, load_next, &l, m.version == 1);
    json_decref(l.row);
    if (l.open) transfer_lines_close(&l.r);
    if (rc) {
        /* the rows are not there: neither may their photos be (those this
         * import stored, and no other) */
        struct err_kept why;
        err_keep(&why);
        photos_bulk_undo(hold);
        err_restore(rc, &why);
    }
    /* on a failure an object that could not be removed keeps its intent:
     * a sweep removes it */
    photos_bulk_end(hold, !rc);
    json_decref(m.root);
    for (size_t i = 0; i < m.nsizes; i++)
        free(m.sizes[i].key);
    free(m.sizes);
    for (int i = 0; i < TRANSFER_MAX_TABLES; i++)
        if (m.fd[i] >= 0) close(m.fd[i]);
    if (m.objects_fd >= 0) close(m.objects_fd);
    if (!rc && st) *st = got;
    return rc;
}
