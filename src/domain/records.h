/*
 * records.h - the records the core, the handlers and the stores share: the
 * specification's resources (perfiles, barberos, servicios, citas,
 * fotos_cita), the identity provider's users, the caller of a request, the
 * outbox's messages and the object intents of crash recovery.
 *
 * Plain data. Ids are canonical lowercase UUIDs and times the API's UTC form
 * (YYYY-MM-DDTHH:MM:SS.sssZ), both in fixed fields; strings are malloc'd
 * when the record owns them (filled by a store's *_get: release with the
 * matching *_clear) and borrowed when a visitor callback hands the record
 * over (valid until the callback returns).
 */
#ifndef BR_RECORDS_H
#define BR_RECORDS_H

#include "../util/iso8601.h"
#include "../util/uuid.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef char br_id[UUID_LEN + 1];
typedef char br_ts[ISO8601_LEN + 1];

struct user {
    br_id id;
    char *email;
    br_ts created_at;
    char *last_sign_in_at; /* NULL: never signed in */
};

struct perfil {
    br_id id;
    char *rol;
    char *nombre;   /* nullable */
    char *telefono; /* nullable */
    br_ts created_at;
};

/* The caller of a request, as its session names it. */
struct principal {
    br_id user_id;
    char *email;
    bool has_perfil;
    struct perfil perfil; /* meaningful when has_perfil */
};

struct barbero {
    br_id id;
    char *nombre;
    char *foto_url; /* nullable */
    bool activo;    /* offered to clients (read only: a new barber is active) */
    /* what only the admin sees (store/avisos.h): where the barber's notices
     * go (NULL: none) and the user of rol barbero linked ("": none) */
    char *email;
    br_id usuario_id;
    bool feed; /* a calendar feed link is live */
};

struct servicio {
    br_id id;
    char *nombre;
    int64_t duracion_min;
    double precio;
    bool activo;        /* offered to clients (read only: a new service is active) */
    int64_t margen_min; /* clean-up minutes kept free after each appointment (0..120) */
};

struct cita {
    br_id id;
    br_id cliente_id;
    br_id barbero_id;
    br_id servicio_id;
    br_ts fecha_inicio;
    br_ts fecha_fin;
    char *estado;
    char *notas;           /* nullable */
    char *google_event_id; /* nullable */
    br_ts created_at;
};

/* A cita with the objects GET /api/citas embeds. */
struct cita_view {
    struct cita cita;
    bool has_perfil;
    const char *perfil_nombre, *perfil_telefono;
    const char *barbero_nombre, *barbero_foto_url;
    const char *servicio_nombre;
    int64_t servicio_duracion_min;
    double servicio_precio;
};

struct foto {
    br_id id;
    br_id cita_id;
    br_id cliente_id;
    char *tipo;
    char *url;
    char *storage_path;
    br_ts created_at;
};

/* A row of the admin listing: a profile and what the identity side knows. */
struct usuario_view {
    struct perfil perfil;
    const char *email;         /* "" when no identity user matches */
    const char *ultimo_acceso; /* NULL: never signed in */
    const char *creado_en;     /* the user's created_at, else the profile's */
    int64_t total_citas;
    int64_t completadas, no_presentado; /* the user's appointments in those states */
    bool puede_entrar;                  /* a password and an address (CUENTA_RECLAMADA_SQL) */
};

/* A client as the front desk finds her (GET /api/clientes). A client the
 * desk created has no password until she claims her account, and may have
 * no e-mail: auth_users.email then holds EMAIL_NINGUNO_PREFIX and her id,
 * which no address matches (an address has no ':'). */
#define EMAIL_NINGUNO_PREFIX "sin-email:"
/* Whether a user (auth_users u) can sign in, as SQL giving 1 or 0: a
 * password and an address to sign in with. A desk client with no address
 * given a password by an administrator (PATCH /api/admin/usuarios) still
 * cannot: her account is not claimed, the desk may still give her one. */
#define CUENTA_RECLAMADA_SQL                                                                       \
    "CASE WHEN u.password_hash <> '' AND u.email NOT LIKE '" EMAIL_NINGUNO_PREFIX "%' THEN 1 "     \
    "ELSE 0 END"
struct cliente_view {
    struct perfil perfil;
    const char *email; /* NULL: none */
    bool puede_entrar;
    int64_t completadas, no_presentado;
};
/* Whether a stored auth_users.email is an address (not the placeholder). */
static inline bool email_es_direccion(const char *s)
{
    return s && *s && strchr(s, '@') != NULL;
}
/* A deleted account's auth_users.email is "<id>" EMAIL_ELIMINADO_SUFFIX: in
 * the reserved .invalid domain, where no mail goes. */
#define EMAIL_ELIMINADO_SUFFIX "@eliminado.invalid"
static inline bool email_es_eliminado(const char *s)
{
    size_t n = s ? strlen(s) : 0, k = sizeof EMAIL_ELIMINADO_SUFFIX - 1;
    return n > k && !strcmp(s + n - k, EMAIL_ELIMINADO_SUFFIX);
}

/* An e-mail waiting in the outbox: the booking's confirmation, or
 * a cancellation, a reschedule notice or a reminder, as kind says. */
struct outbox_msg {
    br_id id;
    br_id cita_id;
    char *recipient;
    char *cliente_nombre;
    char *barbero_nombre;
    char *servicio_nombre;
    br_ts fecha_inicio;
    br_ts fecha_fin;
    char *notas; /* nullable */
    br_ts created_at;
    char *status; /* pending | sent | dropped */
    int64_t attempts;
    br_ts next_attempt_at;
    char *last_error; /* nullable */
    /* what the message says, and when it became due (a reminder
     * is queued long before it is sent: its retry window starts then) */
    const char *kind; /* "confirmacion" | "cancelacion" | "reprogramacion" | "recordatorio" |
                       * "aviso_espera" (a slot freed for a waiting-list entry: cita_id
                       * holds the entry's id); the barber's notices "aviso_cita" |
                       * "aviso_cambio" | "aviso_cancelacion" (recipient: the barber);
                       * "cierre": a cancellation because the shop or the barber is off,
                       * notas holding the shop's message;
                       * static text (NULL in a record to write: confirmacion) */
    br_ts due_at;     /* "": at created_at */
    /* the link the message carries: a waiting-list notice's booking link,
     * stored with it; NULL in a message about a cita, whose personal link
     * is signed when it is sent (core/gestion.h), never stored */
    char *enlace;
    /* how it leaves: "email" (recipient an address) or "whatsapp"
     * (recipient E.164 digits); static text (NULL in a record to write:
     * email) */
    const char *canal;
    int64_t antelacion_min; /* a reminder: minutes before the start; else 0 */
    /* in a record to write: also queue a WhatsApp copy for this client
     * when her consent holds (NULL: none); recipient NULL: no e-mail */
    const char *wa_cliente_id;
    /* read only: how many messages of the cita in this one's stream were
     * queued before it (a barber's notice: the barber's notices; a
     * client's message: hers on its channel): the .ics SEQUENCE, one event
     * updated in place */
    int64_t secuencia;
    /* read only: the lease of the claim that handed it out, as the row
     * holds it (store_outbox_claim). A claim taken once this one's lease
     * ran out leases until later, so it names this claim alone: what the
     * claimant writes of the message's fate after that (a retry, a skip)
     * is refused, never written over another node's claim */
    br_ts claim;
};

/* A write or removal of an object, recorded durably before the object is
 * touched and cleared once the object and its record agree again, so that
 * after a crash every unfinished one can be finished or undone exactly. */
struct obj_intent {
    br_id id;
    char *bucket;
    char *key;
    char *op;   /* "put" | "delete" */
    char *node; /* host name of the process that owns it */
    int64_t pid;
    char *instance; /* that process's random instance id; "" once disowned */
    br_ts created_at;
};

/* --- cancel and reschedule ---------------------------------------------- */

/* One cita with what its changes need: the client's address and name
 * for the e-mails, the names for the calendar event, the service's length
 * for a new end. Owned strings (cita_detail_clear). */
struct cita_detail {
    struct cita cita;
    char *cliente_email;  /* NULL when the user is gone */
    bool has_perfil;      /* the client has a profile */
    char *cliente_nombre; /* nullable */
    char *barbero_nombre;
    char *servicio_nombre;
    int64_t duracion_min;
};

void cita_detail_clear(struct cita_detail *d);

/* --- the words a text column takes ------------------------------------------------ */

/* Each list below is the whole set of values its column holds, NULL-terminated,
 * written once: what the service writes and checks, and what an import
 * accepts (store/transfer.c). */

/* Whether s (nullable) is one of words. */
bool word_in(const char *const *words, const char *s);

/* citas.estado: confirmada (booked), cancelada, and the attendance marks
 * completada and no_presentado. */
const char *const *cita_estados(void);
/* Whether s is an estado the front desk may set as an attendance mark:
 * completada, no_presentado, or confirmada (the mark taken back). */
bool cita_estado_asistencia(const char *s);
/* mail_outbox.status: pending, sent, dropped, skipped (not to be sent any
 * more: a withdrawn consent, a cancelled appointment). */
const char *const *outbox_estados(void);
/* mail_outbox.kind, in outbox_msg.kind's words (confirmacion first). */
const char *const *outbox_kinds(void);
/* mail_outbox.canal: email, whatsapp. */
const char *const *outbox_canales(void);
/* mail_outbox.entrega: a WhatsApp message's delivery status as its webhook
 * reports it, in the order it moves on (sent, delivered, read, failed). */
const char *const *whatsapp_entregas(void);
/* consentimientos.tipo: what a client consents to (fotos). */
const char *const *consentimiento_tipos(void);
/* claves.nombre: the keys the service keeps; CLAVE_ENLACES signs the
 * appointments' personal links (core/gestion.c). */
const char *const *clave_nombres(void);
#define CLAVE_ENLACES "enlaces"
/* Octets of a kept key: claves.valor holds twice as many lowercase hex
 * digits. */
#define CLAVE_BYTES 32

/* The kind of an outbox message as stored text: one of the known kinds,
 * whatever s holds (unknown or NULL text reads as confirmacion). */
const char *outbox_kind(const char *s);
/* Whether a message of that kind tells the client her appointment is
 * cancelled: hers (cancelacion) or by a closure of the shop (cierre). Such
 * a message is sent although its appointment is cancelled, and in the
 * quiet hours too. */
bool outbox_kind_cancela(const char *kind);
/* The channel of an outbox message as stored text: "whatsapp", else "email". */
const char *outbox_canal(const char *s);

void user_clear(struct user *u);
void perfil_clear(struct perfil *p);
void principal_clear(struct principal *p);
void barbero_clear(struct barbero *b);
void servicio_clear(struct servicio *s);
void cita_clear(struct cita *c);
void foto_clear(struct foto *f);
void obj_intent_clear(struct obj_intent *in);
void outbox_clear(struct outbox_msg *m);

/* An e-mail about the account itself rather than a cita (cuenta_correo):
 * a password-reset link, the link that confirms a new address, the notice
 * to the old one. The link holds a single-use token; the store keeps it
 * only until the message is sent or dropped. Owned strings
 * (cuenta_mail_clear). */
struct cuenta_mail {
    br_id id;
    char *kind; /* "restablecer" | "email_confirmar" | "email_aviso" | "whatsapp_aviso" */
    char *recipient;
    char *nombre; /* nullable: the greeting's name */
    char *enlace; /* nullable (the notice has none) */
    br_ts created_at;
    int64_t attempts;
    br_ts claim; /* read only: as outbox_msg's */
};

void cuenta_mail_clear(struct cuenta_mail *m);

#endif
