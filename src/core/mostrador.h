/*
 * mostrador.h - the front desk: staff (admin, barbero) find clients, book
 * for one (an existing client, or a new one given a name and a phone, whose
 * account has no password until she claims it at sign-up), take walk-ins,
 * and mark whether a client came (attendance).
 *
 * Every function here is for staff: a client gets BR_FORBIDDEN "Sin
 * permisos". Errors carry the API's Spanish message.
 */
#ifndef BR_MOSTRADOR_H
#define BR_MOSTRADOR_H

#include "app.h"
#include "booking.h"

/* How far in the past a walk-in's fecha_inicio may be: the desk types the
 * booking while the client sits down. */
#define MOSTRADOR_WALKIN_MIN 15

/* At most this many bytes of search text (?q=). */
#define MOSTRADOR_Q_MAX 100

/* The clients whose nombre, telefono or e-mail contains q (any case for
 * ASCII letters; NULL or "": all), by nombre, after the client after_id
 * (NULL: from the first), up to limit (0: all). BR_INVALID "Parámetro
 * inválido: q" for a q too long or not UTF-8. */
br_err mostrador_clientes(struct app *app, const struct principal *caller, const char *q,
                          const char *after_id, int64_t limit, store_cliente_fn fn,
                          void *ud) WARN_UNUSED;

/* The client staff name by cliente_id at the front desk: BR_NOTFOUND
 * MOSTRADOR_CLIENTE_MSG when it is not a UUID, names no user with a profile
 * or a deleted account; a store failure as the store returned it. OUT *cv
 * (cliente_view_clear) on success. Staff accounts are found (the desk may
 * book for one of its own). */
#define MOSTRADOR_CLIENTE_MSG "Cliente no encontrado"
br_err mostrador_cliente(struct app *app, const char *cliente_id,
                         struct cliente_view *cv) WARN_UNUSED;
/* The same for a call about clients alone (the waiting list, a WhatsApp
 * consent: a staff member's own are their calls without cliente_id): a
 * staff account is BR_NOTFOUND MOSTRADOR_CLIENTE_MSG too. */
br_err mostrador_solo_cliente(struct app *app, const char *cliente_id,
                              struct cliente_view *cv) WARN_UNUSED;

/* A write for a client that found her account closed meanwhile (the
 * store's BR_UNAUTH): to the desk (staff) she is no client any more, 404
 * MOSTRADOR_CLIENTE_MSG; to herself her session is gone, 401 "No
 * autenticado". Any other rc is returned as it is. */
br_err mostrador_cliente_cerrado(br_err rc, bool staff) WARN_UNUSED;

/* A new client as the desk types her. */
struct mostrador_cliente {
    const char *nombre;   /* required */
    const char *telefono; /* nullable */
    const char *email;    /* nullable */
};

struct mostrador_reserva {
    struct booking_input cita;
    const char *cliente_id;                /* either this */
    const struct mostrador_cliente *nuevo; /* or this */
    bool fuera_de_horario;                 /* book outside working hours and closures */
};

/* Books for a client, checked in this order: staff (403), the required
 * fields (400 "Faltan campos requeridos": barbero_id, servicio_id,
 * fecha_inicio, and one of cliente_id and cliente), the new client's fields
 * (400), the client (404 "Cliente no encontrado"), then POST /api/citas's
 * walk (service, fecha_inicio, barber) with, before its overlap check, the
 * start (400 "fecha_inicio en el pasado": more than MOSTRADOR_WALKIN_MIN
 * minutes ago) and, unless fuera_de_horario, the barber's hours (400 "Fuera
 * del horario del barbero", "El barbero no trabaja ese día", "La barbería
 * está cerrada ese día"); the overlap (409), which keeps the service's
 * margin free too; 409 "El email ya está registrado" when a new client's
 * e-mail was taken meanwhile. A new client's e-mail that names an account
 * already books for that account. OUT: *out (cita_clear). */
br_err mostrador_reservar(struct app *app, const struct principal *caller,
                          const struct mostrador_reserva *in, struct cita *out) WARN_UNUSED;

/* Registers a client the desk types in without booking for her (a caller
 * to put on the waiting list, a card for later): in's fields checked as a
 * new client's at mostrador_reservar (400 "Faltan campos requeridos"
 * without nombre; "Campo inválido: nombre", "Campo inválido: telefono",
 * "Email inválido", "Indique el teléfono o el email del cliente"), after
 * staff (403). The client the shop knows by that e-mail, or by the same
 * name and number (an unclaimed desk client), is her, not a second person:
 * *creada false, and an e-mail typed for her when she has none becomes
 * hers; a staff account's e-mail, or one taken meanwhile, is 409 "El email
 * ya está registrado". OUT: *out as GET /api/clientes lists her
 * (cliente_view_clear), *creada. */
br_err mostrador_alta(struct app *app, const struct principal *caller,
                      const struct mostrador_cliente *in, struct cliente_view *out,
                      bool *creada) WARN_UNUSED;

/* A correction of a client's details, as the desk types it. */
struct mostrador_correccion {
    const char *nombre; /* NULL: unchanged */
    bool has_telefono;
    const char *telefono; /* with has_telefono: NULL or "" removes it */
    bool has_email;
    const char *email; /* with has_email: NULL or "" removes it */
};

/* Corrects the name, phone or e-mail of a client the desk made who has
 * not claimed her account yet (once she has, they are hers to change),
 * checked in this order: staff (403), something to change (400 "Nada que
 * cambiar"), the values (400 "Campo inválido: nombre" / "Campo inválido:
 * telefono" as a new client's, "Email inválido"), the client (404
 * MOSTRADOR_CLIENTE_MSG: no such client, a deleted account, a staff
 * account), 409 "La clienta ya usa su cuenta: sus datos los cambia ella",
 * 400 "Indique el teléfono o el email del cliente" (neither would be left),
 * 409 "El email ya está registrado". OUT: *out as GET /api/clientes lists
 * her (cliente_view_clear). */
br_err mostrador_corregir(struct app *app, const struct principal *caller, const char *cliente_id,
                          const struct mostrador_correccion *in,
                          struct cliente_view *out) WARN_UNUSED;

/* Marks the attendance of the appointment id: estado "completada" or
 * "no_presentado", or "confirmada" to take a mark back (only on the shop's
 * local day the mark was made). 400 "estado inválido", 400 "La cita aún no
 * ha empezado", 404 "Cita no encontrada", 409 "La cita está cancelada",
 * 409 "La asistencia solo se puede cambiar el mismo día". */
br_err mostrador_asistencia(struct app *app, const struct principal *caller, const char *id,
                            const char *estado) WARN_UNUSED;

#endif
