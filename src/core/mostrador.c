/*
 * mostrador.c - the front desk (see mostrador.h). A booking goes through
 * booking.c's walk (booking_create_para): the same overlap rule, transaction,
 * history record, calendar event and confirmation as POST /api/citas.
 */
#include "mostrador.h"
#include "../domain/avisos.h"
#include "../domain/roles.h"
#include "../domain/rules.h"
#include "../identity/identity.h"
#include "../util/log.h"
#include "../util/tz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static br_err staff_only(const struct principal *caller)
{
    if (!caller || !principal_is_staff(caller)) return err_set(BR_FORBIDDEN, "Sin permisos");
    return BR_OK;
}

static bool missing(const char *s)
{
    return !s || !*s;
}

br_err mostrador_clientes(struct app *app, const struct principal *caller, const char *q,
                          const char *after_id, int64_t limit, store_cliente_fn fn, void *ud)
{
    br_err rc = staff_only(caller);
    if (rc) return rc;
    size_t n = q ? strlen(q) : 0;
    if (n > MOSTRADOR_Q_MAX || (n && !utf8_valid(q, n)))
        return err_set(BR_INVALID, "Parámetro inválido: q");
    /* trimmed, folded as names are compared, LIKE's own characters escaped */
    while (n && (*q == ' ' || *q == '\t'))
        q++, n--;
    while (n && (q[n - 1] == ' ' || q[n - 1] == '\t'))
        n--;
    char folded[MOSTRADOR_Q_MAX + 1], patron[2 * MOSTRADOR_Q_MAX + 3];
    size_t f = rule_busqueda_fold(q, n, folded), k = 0;
    patron[k++] = '%';
    for (size_t i = 0; i < f; i++) {
        char c = folded[i];
        if (c == '%' || c == '_' || c == '\\') patron[k++] = '\\';
        patron[k++] = c;
    }
    patron[k++] = '%';
    patron[k] = '\0';
    /* and a phone number by its digits, however either was written */
    char digitos[MOSTRADOR_Q_MAX + 1];
    rule_telefono_digitos(q, n, digitos);
    br_id after;
    const char *a = NULL;
    if (after_id && *after_id) {
        if (!uuid_parse(after_id, strlen(after_id), after))
            return err_set(BR_INVALID, "Parámetro inválido: cursor");
        a = after;
    }
    return store_clientes_page(app->store, n ? patron : NULL, digitos, a, limit, fn, ud);
}

/* --- booking for a client ------------------------------------------------------------- */

struct horas {
    struct tz_date day;
    int64_t start_ms, end_ms;
    bool fits;        /* some interval of the barber's day holds the appointment */
    bool any;         /* the barber works that weekday */
    bool off, closed; /* a day off of the barber, a closure of the shop */
    const char *barbero_id;
};

static br_err on_tramo(void *ud, const char *id, const char *nombre, const struct horario_tramo *t)
{
    (void)id;
    (void)nombre;
    struct horas *h = ud;
    h->any = true;
    int64_t lo, hi;
    /* bounds as the free slots read them: one the clocks skip moves on */
    if (!tz_local_instant(&h->day, t->inicio, &lo) || !tz_local_instant(&h->day, t->fin, &hi))
        return BR_OK;
    if (lo <= h->start_ms && h->end_ms <= hi) h->fits = true;
    return BR_OK;
}

static br_err on_ausencia(void *ud, const struct ausencia *a)
{
    struct horas *h = ud;
    if (!a->barbero_id[0])
        h->closed = true;
    else if (!strcmp(a->barbero_id, h->barbero_id))
        h->off = true;
    return BR_OK;
}

struct desk_check {
    bool fuera_de_horario;
};

/* Before the overlap check: a start not long past, and (unless asked
 * otherwise) the barber's hours of that local day, as GET
 * /api/disponibilidad reads them. */
static br_err desk_check(void *ud, struct app *app, const struct servicio *s,
                         const struct barbero *b, int64_t start_ms, int64_t end_ms)
{
    (void)s;
    struct desk_check *dc = ud;
    if (start_ms < clock_now_ms() - (int64_t)MOSTRADOR_WALKIN_MIN * 60000)
        return err_set(BR_INVALID, "fecha_inicio en el pasado");
    if (dc->fuera_de_horario) return BR_OK;
    struct horas h = {.start_ms = start_ms, .end_ms = end_ms, .barbero_id = b->id};
    int minute;
    if (!tz_utc_to_local(start_ms, &h.day, &minute))
        return err_set(BR_INVALID, "fecha_inicio inválida");
    char fecha[11];
    tz_date_format(&h.day, fecha);
    br_err rc = store_horario_dia(app->store, tz_iso_weekday(&h.day), b->id, on_tramo, &h);
    if (!rc) rc = store_ausencias_on(app->store, fecha, on_ausencia, &h);
    if (rc) {
        log_error("mostrador: hours of barber %s: %s", b->id, err_msg());
        return err_unavailable(rc) ? rc : err_set(BR_INTERNAL, "Error interno del servidor");
    }
    if (h.closed) return err_set(BR_INVALID, "La barbería está cerrada ese día");
    if (h.off || !h.any) return err_set(BR_INVALID, "El barbero no trabaja ese día");
    if (!h.fits) return err_set(BR_INVALID, "Fuera del horario del barbero");
    return BR_OK;
}

br_err mostrador_cliente(struct app *app, const char *cliente_id, struct cliente_view *cv)
{
    memset(cv, 0, sizeof *cv);
    br_id uid;
    if (!cliente_id || !uuid_parse(cliente_id, strlen(cliente_id), uid))
        return err_set(BR_NOTFOUND, MOSTRADOR_CLIENTE_MSG);
    br_err rc = store_cliente_get(app->store, uid, cv);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, MOSTRADOR_CLIENTE_MSG);
    if (!rc && email_es_eliminado(cv->email)) {
        cliente_view_clear(cv);
        return err_set(BR_NOTFOUND, MOSTRADOR_CLIENTE_MSG);
    }
    return rc;
}

br_err mostrador_cliente_cerrado(br_err rc, bool staff)
{
    if (rc != BR_UNAUTH) return rc;
    return staff ? err_set(BR_NOTFOUND, MOSTRADOR_CLIENTE_MSG)
                 : err_set(BR_UNAUTH, "No autenticado");
}

br_err mostrador_solo_cliente(struct app *app, const char *cliente_id, struct cliente_view *cv)
{
    br_err rc = mostrador_cliente(app, cliente_id, cv);
    if (!rc && rol_is_staff(cv->perfil.rol)) {
        cliente_view_clear(cv);
        return err_set(BR_NOTFOUND, MOSTRADOR_CLIENTE_MSG);
    }
    return rc;
}

/* The folded name (nombre: as the desk keeps it, rule_espacios_simples)
 * and the digits of a new client's number: the twin's key,
 * store_cliente_gemela. Both caller-freed. */
static void gemela_key(const char *nombre, const char *telefono, char **plegado, char **digitos)
{
    size_t nn = strlen(nombre), tn = strlen(telefono);
    *plegado = xmalloc(nn + 1);
    *digitos = xmalloc(tn + 1);
    rule_busqueda_fold(nombre, nn, *plegado);
    rule_telefono_digitos(telefono, tn, *digitos);
}

/* The client the desk typed in, resolved: an account the e-mail names, a
 * twin (store_cliente_gemela), or a new client to create (quien.nuevo). */
struct tecleada {
    br_id id;                  /* hers; a new one's when quien.nuevo */
    bool por_email;            /* id is the account of the e-mail typed */
    struct desk_cliente quien; /* what the write settles */
    struct new_user nu;        /* quien.nuevo's */
    br_ts now;
    char *nombre; /* as the desk keeps it: single spaces */
    char *placeholder, *plegado, *digitos;
};

static void tecleada_clear(struct tecleada *t)
{
    free(t->nombre);
    free(t->placeholder);
    free(t->plegado);
    free(t->digitos);
    memset(t, 0, sizeof *t);
}

/* Resolves c (its fields checked; email: its address normalised, or
 * NULL). OUT: *t (tecleada_clear, also on failure). */
static br_err tecleada_of(struct app *app, const struct mostrador_cliente *c, const char *email,
                          struct tecleada *t)
{
    memset(t, 0, sizeof *t);
    iso8601_format(clock_now_ms(), t->now);
    t->nombre = xmalloc(strlen(c->nombre) + 1);
    rule_espacios_simples(c->nombre, t->nombre);
    if (email) {
        /* an address that has an account already: hers (a staff account's
         * is not a client's) */
        struct user u;
        char *hash = NULL;
        br_err rc = store_user_by_email(app->store, email, &u, &hash);
        free(hash);
        if (rc == BR_OK) {
            snprintf(t->id, sizeof t->id, "%s", u.id);
            t->por_email = true;
            user_clear(&u);
            return BR_OK;
        }
        if (rc != BR_NOTFOUND) return rc;
    }
    if (!missing(c->telefono)) {
        gemela_key(t->nombre, c->telefono, &t->plegado, &t->digitos);
        /* the same name and number as a client the shop knows: her,
         * however either was written, not a second person; an e-mail
         * typed for her, when she has none, becomes hers */
        br_err rc = store_cliente_gemela(app->store, t->plegado, t->digitos, t->id);
        if (rc) return rc;
        if (t->id[0]) {
            t->quien.email = email;
            return BR_OK;
        }
    }
    uuid_v4(t->id);
    if (!email) t->placeholder = xasprintf("%s%s", EMAIL_NINGUNO_PREFIX, t->id);
    t->nu = (struct new_user){
        .id = t->id,
        .email = email ? email : t->placeholder,
        .password_hash = "", /* none: she cannot sign in until she claims it */
        .created_at = t->now,
        .rol = ROL_CLIENTE,
        .nombre = t->nombre,
        .telefono = missing(c->telefono) ? NULL : c->telefono,
    };
    t->quien.nuevo = &t->nu;
    t->quien.plegado = t->plegado;
    t->quien.digitos = t->digitos;
    return BR_OK;
}

/* The existing client t names, read: BR_NOTFOUND for no client (a staff
 * account's e-mail: BR_CONFLICT "El email ya está registrado"). An e-mail
 * typed stays unused when she has one. OUT: *cv (cliente_view_clear). */
static br_err tecleada_existente(struct app *app, struct tecleada *t, struct cliente_view *cv)
{
    br_err rc = mostrador_solo_cliente(app, t->id, cv);
    if (rc == BR_NOTFOUND && t->por_email)
        return err_set(BR_CONFLICT, "El email ya está registrado"); /* a staff account's */
    if (!rc && cv->email) t->quien.email = NULL;                    /* hers stays */
    return rc;
}

/* The fields of a client the desk types in, checked as docs/api.md lists
 * them (what, the fields' prefix: "cliente." in a booking, "" alone).
 * OUT: *email, normalised (caller frees; NULL when none). */
static br_err tecleada_campos(const struct mostrador_cliente *c, const char *what, char **email)
{
    *email = NULL;
    if (!rule_nombre_ok(c->nombre)) return err_set(BR_INVALID, "Campo inválido: %snombre", what);
    if (!missing(c->telefono) && !rule_telefono_ok(c->telefono))
        return err_set(BR_INVALID, "Campo inválido: %stelefono", what);
    if (!missing(c->email) && !ident_normalize_email(c->email, email))
        return err_set(BR_INVALID, "Email inválido");
    if (missing(c->telefono) && !*email)
        return err_set(BR_INVALID, "Indique el teléfono o el email del cliente");
    return BR_OK;
}

/* One attempt of mostrador_reservar, the fields checked; *existe is set
 * when the client typed in turned out to exist by the time the booking
 * committed (then nothing is stored, and another attempt finds her). */
static br_err reservar(struct app *app, const struct mostrador_reserva *in, const char *email,
                       struct cita *out, bool *existe)
{
    struct cliente_view cv;
    memset(&cv, 0, sizeof cv);
    struct tecleada t;
    memset(&t, 0, sizeof t);
    struct booking_para para = {.staff = true, .has_perfil = true, .existe = existe};
    br_err rc = BR_OK;

    if (!in->nuevo) {
        snprintf(t.id, sizeof t.id, "%s", in->cliente_id);
    } else {
        rc = tecleada_of(app, in->nuevo, email, &t);
        if (rc) goto fail;
        para.quien = &t.quien;
        if (t.quien.nuevo) {
            para.cliente_id = t.id;
            para.email = email;
            para.nombre = t.nombre;
        }
    }
    if (!t.quien.nuevo) {
        rc = tecleada_existente(app, &t, &cv);
        if (rc == BR_NOTFOUND || rc == BR_CONFLICT) goto out;
        if (rc) goto fail;
        para.cliente_id = cv.perfil.id;
        para.email = cv.email ? cv.email : t.quien.email;
        para.nombre = cv.perfil.nombre && *cv.perfil.nombre ? cv.perfil.nombre : cv.email;
    }
    struct desk_check dc = {in->fuera_de_horario};
    para.check = desk_check;
    para.check_ud = &dc;
    rc = booking_create_para(app, &para, &in->cita, out);
    goto out;
fail:
    log_error("mostrador: client lookup: %s", err_msg());
    if (!err_unavailable(rc)) rc = err_set(BR_INTERNAL, "Error interno del servidor");
out:
    cliente_view_clear(&cv);
    tecleada_clear(&t);
    return rc;
}

br_err mostrador_reservar(struct app *app, const struct principal *caller,
                          const struct mostrador_reserva *in, struct cita *out)
{
    memset(out, 0, sizeof *out);
    br_err rc = staff_only(caller);
    if (rc) return rc;
    const struct booking_input *ci = &in->cita;
    bool has_id = !missing(in->cliente_id);
    if (missing(ci->barbero_id) || missing(ci->servicio_id) || missing(ci->fecha_inicio) ||
        (!has_id && !in->nuevo))
        return err_set(BR_INVALID, "Faltan campos requeridos");
    if (has_id && in->nuevo) return err_set(BR_INVALID, "Indique cliente_id o cliente, no ambos");

    char *email = NULL;
    if (in->nuevo) {
        rc = tecleada_campos(in->nuevo, "cliente.", &email);
        if (rc) return rc;
    }
    /* a client typed in who came into being meanwhile (another desk typed
     * her at the same moment): asked once more, she is found */
    bool existe = false;
    rc = reservar(app, in, email, out, &existe);
    if (existe) {
        existe = false;
        rc = reservar(app, in, email, out, &existe);
    }
    free(email);
    return rc;
}

/* --- registering a client ------------------------------------------------------------- */

/* One attempt of mostrador_alta, as reservar's. */
static br_err alta(struct app *app, const struct mostrador_cliente *c, const char *email,
                   struct cliente_view *out, bool *creada, bool *existe)
{
    struct tecleada t;
    br_err rc = tecleada_of(app, c, email, &t);
    if (!rc && !t.quien.nuevo) rc = tecleada_existente(app, &t, out);
    /* a known client read there is the answer, unless the desk gave her
     * her first address (then she is read again, as written) */
    bool leida = !rc && !t.quien.nuevo && !t.quien.email;
    if (!rc && !leida) {
        cliente_view_clear(out);
        rc = store_cliente_alta(app->store, &t.quien, t.id);
        if (rc == BR_CONFLICT) {
            /* made meanwhile by another desk, by her name and number or by
             * her address: found the next time (a staff account's address
             * is refused then) */
            *existe = true;
            rc = err_set(BR_CONFLICT, "El email ya está registrado");
        } else if (!rc && t.quien.nuevo) {
            *creada = true;
        }
    }
    if (!rc && !leida) rc = mostrador_solo_cliente(app, t.id, out);
    if (rc) cliente_view_clear(out);
    if (rc && rc != BR_NOTFOUND && rc != BR_CONFLICT && !err_unavailable(rc)) {
        log_error("mostrador: registering a client: %s", err_msg());
        rc = err_set(BR_INTERNAL, "Error interno del servidor");
    }
    tecleada_clear(&t);
    return rc;
}

br_err mostrador_alta(struct app *app, const struct principal *caller,
                      const struct mostrador_cliente *in, struct cliente_view *out, bool *creada)
{
    memset(out, 0, sizeof *out);
    *creada = false;
    br_err rc = staff_only(caller);
    if (rc) return rc;
    if (missing(in->nombre)) return err_set(BR_INVALID, "Faltan campos requeridos");
    char *email = NULL;
    rc = tecleada_campos(in, "", &email);
    if (rc) return rc;
    bool existe = false;
    rc = alta(app, in, email, out, creada, &existe);
    if (existe) { /* another desk typed her at the same moment: she is found */
        existe = false;
        rc = alta(app, in, email, out, creada, &existe);
    }
    free(email);
    if (!rc && *creada)
        log_info("mostrador: client %s registered at the front desk by %s", out->perfil.id,
                 caller->user_id);
    return rc;
}

/* --- correcting a client ---------------------------------------------------------------- */

br_err mostrador_corregir(struct app *app, const struct principal *caller, const char *cliente_id,
                          const struct mostrador_correccion *in, struct cliente_view *out)
{
    memset(out, 0, sizeof *out);
    br_err rc = staff_only(caller);
    if (rc) return rc;
    if (!in->nombre && !in->has_telefono && !in->has_email)
        return err_set(BR_INVALID, "Nada que cambiar");
    if (in->nombre && !rule_nombre_ok(in->nombre))
        return err_set(BR_INVALID, "Campo inválido: nombre");
    bool telefono = in->has_telefono && !missing(in->telefono);
    if (telefono && !rule_telefono_ok(in->telefono))
        return err_set(BR_INVALID, "Campo inválido: telefono");
    char *email = NULL;
    if (in->has_email && !missing(in->email) && !ident_normalize_email(in->email, &email))
        return err_set(BR_INVALID, "Email inválido");
    br_id id;
    if (!cliente_id || !uuid_parse(cliente_id, strlen(cliente_id), id)) {
        free(email);
        return err_set(BR_NOTFOUND, MOSTRADOR_CLIENTE_MSG);
    }
    char *nombre = NULL;
    if (in->nombre) {
        nombre = xmalloc(strlen(in->nombre) + 1);
        rule_espacios_simples(in->nombre, nombre); /* kept as a new client's is */
    }
    /* a WhatsApp consent given for the old number follows it: to the new
     * one, or withdrawn when WhatsApp cannot reach it (or it is gone) */
    char wa[RULE_E164_MAX];
    bool wa_ok = telefono && rule_telefono_e164(in->telefono, app->cfg->whatsapp_country, wa);
    struct cliente_correccion k = {
        .id = id,
        .nombre = nombre,
        .set_telefono = in->has_telefono,
        .telefono = telefono ? in->telefono : NULL,
        .set_email = in->has_email,
        .email = email,
        .wa_cc = app->cfg->whatsapp_country,
        .wa_telefono = wa_ok ? wa : NULL,
        .por = caller->user_id,
    };
    rc = mostrador_cliente_cerrado(store_cliente_corregir(app->store, &k), true);
    free(nombre);
    free(email);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, MOSTRADOR_CLIENTE_MSG);
    if (rc == BR_CONFLICT && k.why == CORRECCION_RECLAMADA)
        return err_set(BR_CONFLICT, "La clienta ya usa su cuenta: sus datos los cambia ella");
    if (rc == BR_INVALID && k.why == CORRECCION_SIN_CONTACTO)
        return err_set(BR_INVALID, "Indique el teléfono o el email del cliente");
    if (rc == BR_CONFLICT && k.why == CORRECCION_EMAIL)
        return err_set(BR_CONFLICT, "El email ya está registrado");
    if (rc == BR_CONFLICT && k.why == CORRECCION_GEMELA)
        return err_set(BR_CONFLICT, "Ya hay un cliente con ese nombre y teléfono");
    if (rc) {
        log_error("mostrador: correcting client %s: %s", id, err_msg());
        return err_unavailable(rc) ? rc : err_set(BR_INTERNAL, "Error interno del servidor");
    }
    log_info("mostrador: client %s corrected at the front desk by %s (%s%s%s)", id, caller->user_id,
             in->nombre ? "name " : "", in->has_telefono ? "phone " : "",
             in->has_email ? "e-mail" : "");
    rc = mostrador_solo_cliente(app, id, out);
    if (rc && rc != BR_NOTFOUND && !err_unavailable(rc)) {
        log_error("mostrador: client %s after its correction: %s", id, err_msg());
        rc = err_set(BR_INTERNAL, "Error interno del servidor");
    }
    return rc;
}

/* --- attendance ----------------------------------------------------------------------- */

br_err mostrador_asistencia(struct app *app, const struct principal *caller, const char *id,
                            const char *estado)
{
    br_err rc = staff_only(caller);
    if (rc) return rc;
    if (missing(estado)) return err_set(BR_INVALID, "Faltan campos requeridos");
    if (!cita_estado_asistencia(estado)) return err_set(BR_INVALID, "estado inválido");
    int64_t now_ms = clock_now_ms();
    struct tz_date today;
    int minute;
    int64_t desde_ms;
    if (!tz_utc_to_local(now_ms, &today, &minute)) return err_set(BR_INTERNAL, "no local time");
    /* the first instant of the shop's day (midnight may fall in a gap) */
    desde_ms = now_ms - (int64_t)minute * 60000;
    for (int m = 0; m < 1440; m++)
        if (tz_local_to_utc(&today, m, &desde_ms)) break;
    br_ts now, desde;
    iso8601_format(now_ms, now);
    iso8601_format(desde_ms, desde);
    struct asistencia_cambio a = {.id = id, .estado = estado, .now = now, .hoy_desde = desde};
    rc = store_cita_asistencia(app->store, &a);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Cita no encontrada");
    if (rc == BR_CONFLICT) switch (a.why) {
        case ASISTENCIA_CANCELADA:
            return err_set(BR_CONFLICT, "La cita está cancelada");
        case ASISTENCIA_ANTES:
            return err_set(BR_INVALID, "La cita aún no ha empezado");
        case ASISTENCIA_CERRADA:
            return err_set(BR_CONFLICT, "La asistencia solo se puede cambiar el mismo día");
        case ASISTENCIA_OK:
            break;
        }
    if (rc && !err_unavailable(rc)) {
        log_error("mostrador: attendance of cita %s: %s", id, err_msg());
        rc = err_set(BR_INTERNAL, "Error interno del servidor");
    }
    return rc;
}
