/*
 * store.h - the data store: every read and write the service makes, as named
 * operations on records (the repository). The SQL behind them is written
 * once, in store.c, over the SQL port of db.h.
 *
 * The records (struct cita, struct perfil...) are the core's, in
 * core/records.h. Ownership: a record filled by a *_get function owns its
 * strings; release them with the matching *_clear. A record handed to a visitor callback is
 * borrowed: its strings live until the callback returns.
 *
 * Errors: BR_NOTFOUND when the named thing does not exist, BR_CONFLICT when a
 * write clashes with existing data (as documented per function), BR_STORE
 * with the database's own message for anything else.
 *
 * Thread-safety: a struct store may be used from any number of threads.
 */
#ifndef BR_STORE_H
#define BR_STORE_H

#include "../domain/records.h"
#include "../util/err.h"
#include "db.h"

/* Marks a function that changes data: only core (and the store itself)
 * calls one; scripts/check-layers reads the mark. */
#define STORE_WRITE

struct config;
struct store;

/* --- lifetime ------------------------------------------------------------ */

/* Opens the store the configuration names (SQLite in data_dir unless
 * database_url is set) with a pool of pool_size connections, bounded by * cfg->db_wait_ms and
 * db_lock_wait_ms (an operation that cannot get a connection, or the write lock, in time fails with
 * BR_BUSY "Servicio ocupado") and cfg->health_timeout_ms (store_ping). Does not migrate. OUT: *out,
 * closed with store_close(). */
br_err store_open(const struct config *cfg, int pool_size, struct store **out) WARN_UNUSED;
void store_close(struct store *st);
br_err store_migrate(struct store *st) STORE_WRITE WARN_UNUSED;
br_err store_ping(struct store *st) WARN_UNUSED;
/* "sqlite" or "postgresql". */
const char *store_backend(const struct store *st);

/* --- identity: users and sessions ----------------------------------------- */

struct new_user {
    const char *id, *email, *password_hash, *created_at;
    const char *last_sign_in_at;         /* nullable */
    const char *rol, *nombre, *telefono; /* the profile; nombre, telefono nullable */
    /* when set, a first session is opened in the same transaction */
    const char *session_hash, *session_expires_at;
};

/* Creates an identity user and its profile in one transaction.
 * BR_CONFLICT when the e-mail is taken. */
br_err store_user_create(struct store *st, const struct new_user *u) STORE_WRITE WARN_UNUSED;

/* The user with that (normalised) e-mail. OUT: *u (clear with user_clear)
 * and *password_hash (caller frees). BR_NOTFOUND when none. */
br_err store_user_by_email(struct store *st, const char *email, struct user *u,
                           char **password_hash) WARN_UNUSED;

/* Replaces the password hash and ends every session of the user, in one
 * transaction. BR_NOTFOUND when there is no such user. */
br_err store_user_set_password(struct store *st, const char *user_id,
                               const char *password_hash) STORE_WRITE WARN_UNUSED;

/* Opens a session for a sign-in: stores the token's hash, records the time
 * as the user's last sign-in and drops the user's expired sessions. */
br_err store_session_open(struct store *st, const char *user_id, const char *token_hash,
                          const char *now, const char *expires_at) STORE_WRITE WARN_UNUSED;

/* The principal of a live session (expires_at > now). OUT: *p, cleared with
 * principal_clear. BR_NOTFOUND when there is no such live session. */
br_err store_session_principal(struct store *st, const char *token_hash, const char *now,
                               struct principal *p) WARN_UNUSED;

br_err store_session_close(struct store *st, const char *token_hash) STORE_WRITE WARN_UNUSED;

/* --- answers remembered while nothing they read changed ---------------------- *
 * Where the database can tell cheaply whether anything was committed since
 * a moment (SQLite: its wal-index header and the writer's journal, see
 * db_ops.mark), the store remembers a few read-only answers and hands them
 * back for as long as nothing they read has changed: exact, never stale. A
 * write says what it may change (anything, by default; a booking only its
 * client's listing, and the free slots of every day; bookkeeping nothing
 * remembered), and a commit by any other process drops them all. Elsewhere (PostgreSQL) nothing is
 * remembered and every read goes to the database. Verified sessions are
 * remembered the same way inside store_session_principal. */
enum store_memo { STORE_MEMO_BARBEROS, STORE_MEMO_SERVICIOS, STORE_MEMO_N };

#define STORE_MEMO_TAG 40  /* room for a tag (an ETag) with its NUL */
#define STORE_MEMO_KEY 200 /* room for a listing's key with its NUL */

struct store_memo_ticket {
    struct db_mark mark; /* the database's moment before the read */
    bool marked;
    char key[STORE_MEMO_KEY];
};

/* A copy of the answer remembered under slot when nothing it read changed
 * since: true, *text (owned by the caller, len bytes) and tag. Else false,
 * and *t is what store_memo_put needs once the answer has been read afresh. */
bool store_memo_get(struct store *st, enum store_memo slot, struct store_memo_ticket *t,
                    char **text, size_t *len, char tag[STORE_MEMO_TAG]);
/* Remembers text (copied) and tag under slot, as of t. */
void store_memo_put(struct store *st, enum store_memo slot, const struct store_memo_ticket *t,
                    const char *text, size_t len, const char *tag);

/* Whether answers are remembered at all (not on PostgreSQL). */
bool store_remembers(const struct store *st);
/* A client's own listing of appointments, as store_memo_get: remembered
 * under her id and query (what else the answer depends on: the filters and
 * the page), until her appointments, any profile, barber or service change.
 * Answers longer than 16 KiB are not remembered. */
bool store_listing_get(struct store *st, const char *client_id, const char *query,
                       struct store_memo_ticket *t, char **text, size_t *len);
void store_listing_put(struct store *st, const struct store_memo_ticket *t, const char *text,
                       size_t len);
/* The free slots of a day, as store_memo_get: remembered under key
 * (everything the answer depends on besides the database and the clock),
 * until any appointment, barber, service, schedule or absence changes, and
 * only while the clock is within the span given to store_slots_put: a copy
 * when now_ms is in it. Answers longer than 32 KiB are not remembered. */
bool store_slots_get(struct store *st, const char *key, int64_t now_ms, struct store_memo_ticket *t,
                     char **text, size_t *len);
/* Remembers text as of t, for the clock's span [from_ms, until_ms). */
void store_slots_put(struct store *st, const struct store_memo_ticket *t, int64_t from_ms,
                     int64_t until_ms, const char *text, size_t len);

typedef br_err (*store_user_fn)(void *ud, const struct user *u, const struct perfil *p);
/* Every user with its profile (p NULL when none), by e-mail. */
br_err store_users_each(struct store *st, store_user_fn fn, void *ud) WARN_UNUSED;

/* --- sign-in throttling ------------------------------------------------------ */

/* What the store keeps of one key's failed sign-ins; times in epoch ms. The
 * rules (when to lock, for how long) are the identity provider's. */
struct throttle_state {
    int64_t failures; /* in the current window */
    int64_t window_start_ms;
    int64_t locked_until_ms; /* 0: never locked */
    int64_t lockouts;        /* consecutive locks */
    int64_t forget_at_ms;    /* from then on the row may be deleted */
};

/* OUT: *s, the key's state (zeroed when there is none or it is past its
 * forget_at at now_ms) and *found. */
br_err store_throttle_get(struct store *st, const char *key, int64_t now_ms,
                          struct throttle_state *s, bool *found) WARN_UNUSED;

/* One key as store_throttle_update hands it to its callback: state and
 * found as store_throttle_get reads them; the callback sets op (and state,
 * for THROTTLE_PUT). */
enum throttle_op { THROTTLE_KEEP, THROTTLE_PUT, THROTTLE_DELETE };
struct throttle_key {
    const char *key; /* set by the caller */
    struct throttle_state state;
    bool found;
    enum throttle_op op;
};

/* Reads, decides and writes the n keys in one write transaction, so that no
 * other writer (thread, process or node) comes in between: locks each key
 * (db_ops.lock), in the order given, reads its state into keys[i], calls
 * fn(ud, keys, n) once with all of them, and stores what it decided. Also
 * deletes every row past its forget_at when prune is set. fn must only
 * compute: it may run more than once (a transaction the database aborted
 * runs again), each time on fresh reads, and its last run is the one
 * committed. */
typedef void (*store_throttle_fn)(void *ud, struct throttle_key *keys, int n);
br_err store_throttle_update(struct store *st, struct throttle_key *keys, int n, int64_t now_ms,
                             bool prune, store_throttle_fn fn, void *ud) STORE_WRITE WARN_UNUSED;

/* --- perfiles ------------------------------------------------------------- */

/* OUT: *p (clear with perfil_clear). BR_NOTFOUND when there is none. */
br_err store_perfil_get(struct store *st, const char *id, struct perfil *p) WARN_UNUSED;

/* Which profile fields to change; a NULL pointer leaves a field alone. */
struct perfil_patch {
    const char *rol;
    const char *nombre;
    bool set_telefono;
    const char *telefono; /* with set_telefono: NULL stores NULL */
};
/* Updates the profile; a missing profile is left missing (no error). */
br_err store_perfil_update(struct store *st, const char *id,
                           const struct perfil_patch *patch) STORE_WRITE WARN_UNUSED;

typedef br_err (*store_usuario_fn)(void *ud, const struct usuario_view *u);
/* The admin listing: profiles, newest first (created_at, then id), with
 * their identity data and appointment count, in one query: up to limit of
 * them (0: all), from after the row (before_created, before_id) on, or from
 * the newest when both are NULL. */
br_err store_usuarios_page(struct store *st, const char *before_created, const char *before_id,
                           int64_t limit, store_usuario_fn fn, void *ud) WARN_UNUSED;

/* --- catalog --------------------------------------------------------------- */

br_err store_barbero_add(struct store *st, const struct barbero *b) STORE_WRITE WARN_UNUSED;
/* OUT: *b (clear with barbero_clear). BR_NOTFOUND when none. */
br_err store_barbero_get(struct store *st, const char *id, struct barbero *b) WARN_UNUSED;
typedef br_err (*store_barbero_fn)(void *ud, const struct barbero *b);
/* By nombre. */
br_err store_barberos_each(struct store *st, store_barbero_fn fn, void *ud) WARN_UNUSED;

br_err store_servicio_add(struct store *st, const struct servicio *s) STORE_WRITE WARN_UNUSED;
br_err store_servicio_get(struct store *st, const char *id, struct servicio *s) WARN_UNUSED;
typedef br_err (*store_servicio_fn)(void *ud, const struct servicio *s);
br_err store_servicios_each(struct store *st, store_servicio_fn fn, void *ud) WARN_UNUSED;

/* True when the database holds no user, barber or service (for --demo). */
br_err store_is_empty(struct store *st, bool *empty) WARN_UNUSED;

/* --- catalog administration, schedules, days off --------------------------------------- */

/* Every barber / service, active or not, by nombre (the public listings
 * above give the active ones only). */
br_err store_barberos_all(struct store *st, store_barbero_fn fn, void *ud) WARN_UNUSED;
br_err store_servicios_all(struct store *st, store_servicio_fn fn, void *ud) WARN_UNUSED;

/* What to change; NULL / false / -1 leaves a field alone. */
struct barbero_patch {
    const char *nombre;
    bool set_foto_url;
    const char *foto_url; /* with set_foto_url: NULL stores NULL */
    int activo;           /* 1, 0, or -1 */
};
/* In one transaction. BR_NOTFOUND when there is no such barber. */
br_err store_barbero_update(struct store *st, const char *id,
                            const struct barbero_patch *p) STORE_WRITE WARN_UNUSED;

struct servicio_patch {
    const char *nombre;
    int64_t duracion_min; /* 0: unchanged */
    bool set_precio;
    double precio;
    int activo; /* 1, 0, or -1 */
};
br_err store_servicio_update(struct store *st, const char *id,
                             const struct servicio_patch *p) STORE_WRITE WARN_UNUSED;

/* One interval of a weekly schedule: ISO weekday (1 Monday ... 7 Sunday),
 * minutes from the shop's local midnight, [inicio, fin). */
struct horario_tramo {
    int dia, inicio, fin;
};
typedef br_err (*store_tramo_fn)(void *ud, const char *barbero_id, const char *barbero_nombre,
                                 const struct horario_tramo *t);
/* A barber's week, by dia and inicio (nothing when the barber is unknown). */
br_err store_horario_each(struct store *st, const char *barbero_id, store_tramo_fn fn,
                          void *ud) WARN_UNUSED;
/* The intervals of weekday dia of the active barbers (only barbero_id's
 * when not NULL), by barber nombre, id, then inicio. */
br_err store_horario_dia(struct store *st, int dia, const char *barbero_id, store_tramo_fn fn,
                         void *ud) WARN_UNUSED;
/* Replaces a barber's week with the n intervals, in one transaction.
 * BR_NOTFOUND when there is no such barber (nothing written). */
br_err store_horario_set(struct store *st, const char *barbero_id, const struct horario_tramo *t,
                         int n) STORE_WRITE WARN_UNUSED;

/* A day off of one barber, or (barbero_id "") a closure of the whole shop,
 * for the local dates desde to hasta, both included. */
struct ausencia {
    br_id id;
    br_id barbero_id; /* "": the whole shop */
    char desde[11], hasta[11];
    char *motivo; /* nullable; borrowed in callbacks */
    br_ts created_at;
};
typedef br_err (*store_ausencia_fn)(void *ud, const struct ausencia *a);
br_err store_ausencia_add(struct store *st, const struct ausencia *a) STORE_WRITE WARN_UNUSED;
/* All of them, by desde then id. */
br_err store_ausencias_each(struct store *st, store_ausencia_fn fn, void *ud) WARN_UNUSED;
/* Those that cover the date fecha (YYYY-MM-DD). */
br_err store_ausencias_on(struct store *st, const char *fecha, store_ausencia_fn fn,
                          void *ud) WARN_UNUSED;
/* BR_NOTFOUND when there is no such one. */
br_err store_ausencia_delete(struct store *st, const char *id) STORE_WRITE WARN_UNUSED;

/* The barber's non-cancelled appointments that intersect [desde, hasta)
 * (canonical timestamps), in no particular order. */
typedef br_err (*store_busy_fn)(void *ud, const char *inicio, const char *fin);
br_err store_citas_busy(struct store *st, const char *barbero_id, const char *desde,
                        const char *hasta, store_busy_fn fn, void *ud) WARN_UNUSED;

/* --- citas ----------------------------------------------------------------- */

/* OUT: *overlaps, whether a non-cancelled cita of the barber intersects
 * [inicio, fin) (touching ends do not intersect). */
br_err store_cita_overlaps(struct store *st, const char *barbero_id, const char *inicio,
                           const char *fin, bool *overlaps) WARN_UNUSED;

/* Books: in one write transaction, re-checks the overlap, inserts the cita,
 * its historial_cortes record (fecha = date part of fecha_inicio) and, when
 * mail is non-NULL, the confirmation in the outbox. BR_CONFLICT when the
 * slot was taken meanwhile (nothing written). */
br_err store_cita_book(struct store *st, const struct cita *c,
                       const struct outbox_msg *mail) STORE_WRITE WARN_UNUSED;

/* OUT: *n, how many of the client's appointments are upcoming - not
 * cancelled, starting after now - counting no further than bound. */
br_err store_citas_upcoming(struct store *st, const char *cliente_id, const char *now,
                            int64_t bound, int64_t *n) WARN_UNUSED;

/* store_cita_book that also refuses, with BR_TOOLARGE and nothing written,
 * when the client already holds cap upcoming appointments (as
 * store_citas_upcoming counts them from now), counted in the same
 * transaction: one client's bookings take turns, so racing ones never
 * pass the cap together. cap 0 (or now NULL): no cap. */
br_err store_cita_book_capped(struct store *st, const struct cita *c, const struct outbox_msg *mail,
                              const char *now, int64_t cap) STORE_WRITE WARN_UNUSED;

br_err store_cita_exists(struct store *st, const char *id, bool *exists) WARN_UNUSED;

typedef br_err (*store_cita_fn)(void *ud, const struct cita_view *c);

/* A stretch of GET /api/citas's listing in (fecha_inicio, id) order, with
 * the three embedded objects joined, in one query: what a page or a cursor
 * reads. Every member but limit is optional (NULL). Timestamps are
 * canonical (YYYY-MM-DDTHH:MM:SS.sssZ). */
struct cita_range {
    const char *cliente_id;              /* one client's (NULL: everybody's) */
    const char *estado;                  /* in this estado only */
    const char *desde;                   /* fecha_inicio >= desde */
    const char *hasta;                   /* fecha_inicio < hasta */
    const char *after_inicio, *after_id; /* both or neither: rows after this one */
    int64_t limit;                       /* rows at most (0: all) */
};
br_err store_citas_range(struct store *st, const struct cita_range *q, store_cita_fn fn,
                         void *ud) WARN_UNUSED;

/* The session's principal and, when the session is a client's, her
 * appointments in q (its cliente_id ignored: hers) given to fn as
 * store_citas_range would - in one statement (PostgreSQL: one round trip
 * instead of two). Where answers are remembered (store_remembers) the API
 * asks store_session_principal instead, which remembers the session. *listed tells
 * whether fn was given the listing (a client's session); a barbero's or an
 * admin's session gets false and lists as usual. BR_NOTFOUND when there is
 * no such live session; fn's own error (after *listed) stops the listing. */
br_err store_session_citas(struct store *st, const char *token_hash, const char *now,
                           struct principal *p, const struct cita_range *q, store_cita_fn fn,
                           void *ud, bool *listed) WARN_UNUSED;

/* --- fotos ----------------------------------------------------------------- */

br_err store_fotos_count(struct store *st, const char *cita_id, const char *tipo,
                         int64_t *count) WARN_UNUSED;

/* Inserts the photo record unless the cita already has `cap` photos of that
 * tipo, counted and inserted in one write transaction. BR_CONFLICT when
 * full (nothing written). */
br_err store_foto_insert_capped(struct store *st, const struct foto *f,
                                int cap) STORE_WRITE WARN_UNUSED;

/* store_foto_insert_capped that also records the object's size (bytes),
 * refuses the photo when its uploader would keep more than quota bytes of
 * photos (as store_fotos_quota_used counts them, with this one; quota 0:
 * no limit), and clears the put intent `put` (id and instance) in the same
 * transaction, so that the record and the end of the intent commit
 * together. BR_CONFLICT when the tipo is full (checked first); BR_TOOLARGE
 * past the quota; BR_STORE when the intent is no longer this instance's (a
 * sweeper took it over): nothing written in any of these. */
br_err store_foto_insert_put(struct store *st, const struct foto *f, int64_t bytes, int cap,
                             int64_t quota, const struct obj_intent *put) STORE_WRITE WARN_UNUSED;

/* What a photo counts against its uploader's quota: its size rounded up to
 * whole blocks, as a disk stores it at least, so that a flood of tiny
 * photos is bounded too. */
#define STORE_FOTO_BLOCK 4096
static inline int64_t store_foto_charge(int64_t bytes)
{
    return (bytes + STORE_FOTO_BLOCK - 1) / STORE_FOTO_BLOCK * STORE_FOTO_BLOCK;
}

/* OUT: *bytes, what the uploader's photos count against the quota (each
 * store_foto_charge of its size; 0 for those stored before sizes were
 * recorded). */
br_err store_fotos_quota_used(struct store *st, const char *cliente_id, int64_t *bytes) WARN_UNUSED;

/* OUT: *f (clear with foto_clear). BR_NOTFOUND unless a photo with that id
 * was uploaded by cliente_id. */
br_err store_foto_get_owned(struct store *st, const char *id, const char *cliente_id,
                            struct foto *f) WARN_UNUSED;

/* Deletes the photo record and records the delete intent del for its
 * object, in one transaction. BR_NOTFOUND when there is no such record
 * (nothing written); BR_CONFLICT when the object's key already has an
 * intent. */
br_err store_foto_delete(struct store *st, const char *id,
                         const struct obj_intent *del) STORE_WRITE WARN_UNUSED;

/* OUT: *exists, whether a photo record names that object key. */
br_err store_foto_path_exists(struct store *st, const char *storage_path, bool *exists) WARN_UNUSED;

typedef br_err (*store_foto_fn)(void *ud, const struct foto *f);
/* The cita's photos by created_at. */
br_err store_fotos_each(struct store *st, const char *cita_id, store_foto_fn fn,
                        void *ud) WARN_UNUSED;

/* --- object intents and process leases ---------------------------------- */

/* Records an intent in its own committed write. BR_CONFLICT when the key
 * already has one: recording reserves the key. */
br_err store_intent_add(struct store *st, const struct obj_intent *in) STORE_WRITE WARN_UNUSED;

/* Clears intent id if instance still owns it (no error when it does not). */
br_err store_intent_clear(struct store *st, const char *id,
                          const char *instance) STORE_WRITE WARN_UNUSED;

/* Gives up an intent instance owns, so that the next sweep finishes it,
 * whoever runs it (no error when instance does not own it). */
br_err store_intent_disown(struct store *st, const char *id,
                           const char *instance) STORE_WRITE WARN_UNUSED;

/* Takes intent id over from old_instance, as the process `to` names.
 * BR_NOTFOUND when it is gone or someone else took it first. */
br_err store_intent_take(struct store *st, const char *id, const char *old_instance,
                         const struct obj_intent *to) STORE_WRITE WARN_UNUSED;

typedef br_err (*store_intent_fn)(void *ud, const struct obj_intent *in);
/* Every intent, oldest first. */
br_err store_intents_each(struct store *st, store_intent_fn fn, void *ud) WARN_UNUSED;

/* Records that instance (on node, with pid) is alive at now: creates its
 * lease or renews it. */
br_err store_lease_renew(struct store *st, const char *instance, const char *node, int64_t pid,
                         const char *now) STORE_WRITE WARN_UNUSED;
/* OUT: *live, whether instance renewed its lease at or after since. */
br_err store_lease_live(struct store *st, const char *instance, const char *since,
                        bool *live) WARN_UNUSED;
/* Ends instance's lease (a clean stop). */
br_err store_lease_end(struct store *st, const char *instance) STORE_WRITE WARN_UNUSED;
/* Forgets the leases last renewed before `before`. */
br_err store_leases_expire(struct store *st, const char *before) STORE_WRITE WARN_UNUSED;

/* --- mail outbox ----------------------------------------------------------- */

/* Claims the oldest pending message due at `now` that no worker holds,
 * holding it until lease_until. OUT: *m (clear with outbox_clear).
 * BR_NOTFOUND when nothing is due. */
br_err store_outbox_claim(struct store *st, const char *now, const char *lease_until,
                          struct outbox_msg *m) STORE_WRITE WARN_UNUSED;
br_err store_outbox_sent(struct store *st, const char *id, const char *now) STORE_WRITE WARN_UNUSED;
/* Records a failed attempt; the message is retried at next_attempt_at. */
br_err store_outbox_retry(struct store *st, const char *id, const char *error,
                          const char *next_attempt_at) STORE_WRITE WARN_UNUSED;
br_err store_outbox_drop(struct store *st, const char *id, const char *error,
                         const char *now) STORE_WRITE WARN_UNUSED;
/* OUT: how many messages wait (pending) and were given up (dropped). */
br_err store_outbox_counts(struct store *st, int64_t *pending, int64_t *dropped) WARN_UNUSED;
/* OUT: *next, the earliest next_attempt_at among pending messages ("" when
 * none), so the worker knows how long it may sleep. */
br_err store_outbox_next_due(struct store *st, br_ts next) WARN_UNUSED;
typedef br_err (*store_outbox_fn)(void *ud, const struct outbox_msg *m);
/* Messages in the given status (NULL: pending and dropped), oldest first. */
br_err store_outbox_each(struct store *st, const char *status, store_outbox_fn fn,
                         void *ud) WARN_UNUSED;

/* --- cancel, reschedule, reminders ------------------------------------------------------ */

/* The cita with its client's address and name, the barber's and service's
 * names and the service's length. OUT: *d (cita_detail_clear).
 * BR_NOTFOUND when there is no such cita. */
br_err store_cita_detail(struct store *st, const char *id, struct cita_detail *d) WARN_UNUSED;

/* The cita as GET /api/citas lists it (fn is called once, or never when
 * there is no such cita). */
br_err store_cita_view(struct store *st, const char *id, store_cita_fn fn, void *ud) WARN_UNUSED;

/* Why a change was refused (with BR_CONFLICT). */
enum cambio_why { CAMBIO_OK, CAMBIO_CANCELADA, CAMBIO_PLAZO, CAMBIO_SOLAPE };

/* A cancel (inicio NULL) or a reschedule to [inicio, fin), done in one
 * write transaction that re-reads the cita and re-checks everything: the
 * cita must exist (and be cliente_id's when that is set: else
 * BR_NOTFOUND), not be cancelled, and for a client start at or after
 * plazo (the cut-off); a reschedule's new slot must be free of the
 * barber's other live citas (on PostgreSQL the exclusion constraint backs
 * it). A cancel marks the cita cancelada and deletes its historial_cortes
 * record; a reschedule moves the cita and its record's fecha. Either drops
 * the cita's pending reminder (it is for a time that no longer holds) and
 * queues mail when given.
 * BR_CONFLICT with why set when refused; nothing is written on any error. */
struct cita_change {
    const char *id;
    const char *cliente_id; /* non-NULL: the caller is this client */
    const char *plazo;      /* with cliente_id: the earliest start still changeable */
    const char *inicio, *fin;
    const struct outbox_msg *mail; /* nullable */
    enum cambio_why why;           /* OUT */
    char *event_id;                /* OUT on success: the cita's Google event (caller frees) */
};
br_err store_cita_change(struct store *st, struct cita_change *ch) STORE_WRITE WARN_UNUSED;

/* Records a calendar event made after the booking (a reschedule of a cita
 * that had none): only when the cita still has none and is not cancelled.
 * OUT: *stored, whether it was recorded. */
br_err store_cita_set_event(struct store *st, const char *id, const char *event_id,
                            bool *stored) STORE_WRITE WARN_UNUSED;

/* Queues the reminders due at now_ms: one per live cita starting within
 * (now, now + window], for its current start, when that start was
 * announced to the client (the confirmation or reschedule mail of that
 * start) at least window before it; at most a batch per call. Exactly once
 * across processes (the unique index mail_outbox_recordatorio); never for
 * a cancelled cita (checked under the cita's lock). OUT: *queued. */
br_err store_reminders_queue(struct store *st, int64_t now_ms, int64_t window_ms,
                             int *queued) STORE_WRITE WARN_UNUSED;
/* OUT: *next, the earliest start of a live cita after `after` ("" when
 * none): the worker's next reminder is due window before it. */
br_err store_reminder_next(struct store *st, const char *after, br_ts next) WARN_UNUSED;

/* --- a shop's data as rows (export, import) ------------------------------------------- */

/* The tables that hold a shop's data, in an order that inserting satisfies
 * (what a row refers to comes before it), with their columns: the same
 * names and meaning on every backend. Transient state (sign-in throttling,
 * object intents, process leases) is not part of it. */
struct store_table {
    const char *name;
    const char *cols; /* "id, email, ..." */
    int ncols;
};
/* OUT: *out, the tables (static). Returns how many. */
int store_tables(const struct store_table **out);

/* Called once per row with the table's index and its ncols values (times
 * in the API's form, ids lowercase, on every backend). */
typedef br_err (*store_dump_fn)(void *ud, int table, const struct db_val *cols, int n);
/* Hands over every row of every table, table by table in store_tables()
 * order, each in key order, all from one snapshot (a read transaction),
 * read page by page: memory stays flat whatever the size. */
br_err store_dump(struct store *st, store_dump_fn fn, void *ud) WARN_UNUSED;

/* Supplies the next row to load: OUT *table and the values (at most 32,
 * borrowed until the next call) and *n; BR_NOTFOUND when there are no
 * more. */
typedef br_err (*store_load_fn)(void *ud, int *table, struct db_val *cols, int *n);
/* Inserts every row next() supplies in one write transaction: all of them
 * or, on any failure, none. default_week: the rows come from before the
 * schedules (they hold no horarios), so every barber gets the default
 * week in the same transaction, as the migration gives it. */
br_err store_load(struct store *st, store_load_fn next, void *ud,
                  bool default_week) STORE_WRITE WARN_UNUSED;

/* Copies the whole database into a new file at path, consistently, while
 * the service goes on (SQLite's online backup); BR_CONFIG on a backend
 * with tools of its own (PostgreSQL: pg_dump). */
br_err store_backup(struct store *st, const char *path) WARN_UNUSED;
/* Replaces the database's content with the copy at path (a store_backup
 * file), then migrates it to this version's schema. BR_CONFIG as above. */
br_err store_restore(struct store *st, const char *path) STORE_WRITE WARN_UNUSED;

/* --- query plans (for tests) ---------------------------------------------------- */

typedef br_err (*store_plan_fn)(void *ud, const char *name, const char *plan);
/* Hands the plan the database chose for each statement the API runs over
 * growing tables (on SQLite the detail lines of EXPLAIN QUERY PLAN, one a
 * line), by name: "overlap", "citas_by_cliente", "citas_by_cliente_estado",
 * "citas_by_estado", "citas_all", "fotos_count", "fotos_each", "usuarios".
 * Lets a test prove that none of them scans a whole table or sorts. */
br_err store_query_plans(struct store *st, store_plan_fn fn, void *ud) WARN_UNUSED;

#endif
