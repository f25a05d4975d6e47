/*
 * cuenta.c - the client's own account (see cuenta.h).
 */
#include "cuenta.h"
#include "booking.h"
#include "cambios.h"
#include "mostrador.h"
#include "outbox.h"
#include "photos.h"
#include "../domain/roles.h"
#include "../domain/rules.h"
#include "../mail/cuenta.h"
#include "../util/log.h"
#include "../util/metrics.h"
#include "../util/worker.h"
#include "../util/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool given(const char *s)
{
    return s && *s;
}

br_err cuenta_recuperar(struct app *app, const char *email, const char *remote)
{
    bool queued = false;
    const char *base = mailer_enabled(app->mailer) ? app->public_url : NULL;
    br_err rc = ident_reset_request(app->ident, email, remote, base, &queued);
    if (rc) return rc;
    /* woken either way: the answer's time must not tell */
    cuenta_correo_wake(app->correo);
    return BR_OK;
}

br_err cuenta_alta(struct app *app, const struct ident_signup *in, const char *remote,
                   struct ident_session *out)
{
    br_err rc = ident_signup(app->ident, in, true, out);
    if (rc != BR_CONFLICT) return rc;
    struct err_kept taken;
    err_keep(&taken);
    bool queued = false;
    const char *base = mailer_enabled(app->mailer) ? app->public_url : NULL;
    br_err link = ident_claim_link(app->ident, in->email, remote, base, &queued);
    if (link && link != BR_THROTTLED)
        log_warn("auth: no claim link for a desk client's address: %s", err_msg());
    if (queued) cuenta_correo_wake(app->correo);
    return err_restore(rc, &taken);
}

br_err cuenta_perfil(struct app *app, const struct principal *caller, const struct cuenta_patch *p,
                     const char *remote, const char *keep_token, size_t keep_n,
                     char **email_pendiente)
{
    *email_pendiente = NULL;
    /* every value first: a wrong one changes nothing */
    if (p->nombre && !rule_nombre_ok(p->nombre)) return err_set(BR_INVALID, "Nombre inválido");
    if (p->has_telefono && given(p->telefono) && !rule_telefono_ok(p->telefono))
        return err_set(BR_INVALID, "Teléfono inválido");
    if (given(p->password) && given(p->email))
        return err_set(BR_INVALID, "Cambia la contraseña y el email por separado");
    if (p->password && !*p->password) return err_set(BR_INVALID, "Mínimo 6 caracteres");
    if (p->email && !*p->email) return err_set(BR_INVALID, "Email inválido");
    if (!p->nombre && !p->has_telefono && !p->password && !p->email)
        return err_set(BR_INVALID, "Nada que cambiar");
    br_err rc = BR_OK;
    if (given(p->password))
        rc = ident_password_change(app->ident, caller, p->password_actual, p->password, remote,
                                   keep_token, keep_n);
    if (!rc && given(p->email)) {
        const char *base = mailer_enabled(app->mailer) ? app->public_url : NULL;
        rc = ident_email_change_request(app->ident, caller, p->password_actual, p->email, remote,
                                        base, email_pendiente);
        if (!rc) cuenta_correo_wake(app->correo);
    }
    if (rc || (!p->nombre && !p->has_telefono)) return rc;
    struct perfil_patch pp = {
        .nombre = p->nombre,
        .set_telefono = p->has_telefono,
        .telefono = given(p->telefono) ? p->telefono : NULL,
        .by_client = true,
    };
    rc = mostrador_cliente_cerrado(store_perfil_update(app->store, caller->user_id, &pp), false);
    if (rc) {
        free(*email_pendiente);
        *email_pendiente = NULL;
    }
    return rc;
}

struct fotos_lista {
    struct foto *v;
    size_t n, cap;
};

static br_err foto_collect(void *ud, const struct foto *f)
{
    struct fotos_lista *l = ud;
    VEC_RESERVE(l->v, l->n, l->cap, 16);
    struct foto *c = &l->v[l->n++];
    *c = *f;
    c->tipo = xstrdup(f->tipo);
    c->url = xstrdup(f->url);
    c->storage_path = xstrdup(f->storage_path);
    return BR_OK;
}

/* Deletes every photo of the client (of her appointments, or uploaded by
 * her), each through the object intents. */
static br_err fotos_borrar(struct app *app, const char *cliente_id)
{
    struct fotos_lista l = {0};
    br_err rc = store_fotos_de_cliente_each(app->store, cliente_id, foto_collect, &l);
    for (size_t i = 0; i < l.n; i++) {
        if (!rc) rc = photos_erase(app, &l.v[i]);
        foto_clear(&l.v[i]);
    }
    free(l.v);
    if (!rc && l.n) log_info("fotos: %zu photo(s) of client %s deleted", l.n, cliente_id);
    return rc;
}

br_err cuenta_consentir(struct app *app, const struct principal *caller, const char *tipo,
                        bool granted)
{
    if (!tipo || strcmp(tipo, "fotos") != 0)
        return err_set(BR_INVALID, "Consentimiento desconocido");
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    /* recorded first: an upload that starts now is refused */
    br_err rc = mostrador_cliente_cerrado(
        store_consent_set(app->store, caller->user_id, tipo, granted, now), false);
    if (!rc && !granted) rc = fotos_borrar(app, caller->user_id);
    return rc;
}

struct ids {
    br_id *v;
    size_t n, cap;
};

static br_err id_collect(void *ud, const char *id)
{
    struct ids *l = ud;
    VEC_RESERVE(l->v, l->n, l->cap, 8);
    snprintf(l->v[l->n++], sizeof(br_id), "%s", id);
    return BR_OK;
}

/* How long a deletion's request may spend rewriting her calendar events
 * (one call each, each bounded by BARBERIA_CALENDAR_TIMEOUT_MS). */
#define OLVIDO_CALENDARIO_MS 20000

/* The calendar events of a deleted account's appointments, past ones
 * included, rewritten as the store now has them: "Cliente eliminado", no
 * notes, no attendee (her name, e-mail and notes leave Google too).
 * Best-effort, and bounded: the first failure, or OLVIDO_CALENDARIO_MS
 * spent, ends it, with one warn line naming what is left. */
static void calendar_olvidar(struct app *app, const char *cliente_id)
{
    struct ids l = {0};
    br_err rc = store_citas_con_evento_each(app->store, cliente_id, id_collect, &l);
    size_t done = 0;
    int64_t until = clock_mono_ms() + OLVIDO_CALENDARIO_MS;
    for (size_t i = 0; !rc && i < l.n; i++, done++) {
        if (clock_mono_ms() >= until) {
            rc = err_set(BR_TIMEOUT, "the deletion's %d s for the calendar ran out",
                         OLVIDO_CALENDARIO_MS / 1000);
            break;
        }
        struct cita_detail d;
        rc = store_cita_detail(app->store, l.v[i], &d);
        if (rc == BR_NOTFOUND) {
            rc = BR_OK;
            continue;
        }
        if (rc) break;
        if (d.cita.google_event_id) {
            char *summary = NULL, *description = NULL;
            booking_event_text(d.servicio_nombre, CUENTA_NOMBRE_ELIMINADO, d.barbero_nombre, NULL,
                               &summary, &description);
            struct cal_event ev = {summary, description, d.cita.fecha_inicio, d.cita.fecha_fin,
                                   NULL};
            rc = calendar_rewrite_event(app->cal, d.cita.google_event_id, &ev);
            free(summary);
            free(description);
        }
        cita_detail_clear(&d);
    }
    if (rc && rc != BR_CONFIG) {
        metric_inc(M_CAL_FAILURES);
        log_warn("calendar: %zu events of the deleted account of user %s still name her: %s",
                 l.n - done, cliente_id, err_msg());
    }
    free(l.v);
}

br_err cuenta_eliminar(struct app *app, const struct principal *caller, const char *password,
                       const char *remote)
{
    if (principal_is_staff(caller))
        return err_set(BR_FORBIDDEN, "La cuenta del personal la elimina un administrador");
    br_err rc = ident_verify(app->ident, caller->email, password, remote);
    if (rc) return rc;
    /* the door closes first: her sessions end (no booking of hers starts
     * any more) and her photo consent is withdrawn (no photo is stored) */
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    rc = mostrador_cliente_cerrado(store_cuenta_cerrar(app->store, caller->user_id, now), false);
    /* her photos: once, none is stored after the door closed */
    if (!rc) rc = fotos_borrar(app, caller->user_id);
    /* her future appointments, cancelled as the shop cancels them: at any
     * time before they start, calendar and e-mail following; once more
     * when a booking she began before the door closed landed meanwhile
     * (the last step refuses to run over it) */
    const struct principal as_shop = {.has_perfil = true, .perfil = {.rol = "admin"}};
    for (int round = 0; !rc && round < 3; round++) {
        struct ids l = {0};
        rc = store_citas_futuras_each(app->store, caller->user_id, now, id_collect, &l);
        for (size_t i = 0; !rc && i < l.n; i++) {
            br_id done;
            rc = cambios_apply(app, &as_shop, l.v[i], false, NULL, done);
            if (rc == BR_CONFLICT || rc == BR_NOTFOUND) rc = BR_OK; /* cancelled meanwhile */
        }
        free(l.v);
        if (!rc)
            rc = store_cuenta_anonimizar(app->store, caller->user_id, CUENTA_NOMBRE_ELIMINADO, now);
        if (rc == BR_CONFLICT)
            rc = round < 2 ? BR_OK : err_set_retry(BR_BUSY, 1, "Servicio ocupado");
        else
            break;
    }
    if (!rc) calendar_olvidar(app, caller->user_id);
    if (!rc)
        log_info("auth: the account of user %s was deleted at its owner's request",
                 caller->user_id);
    return rc;
}

/* --- the account's mail worker ------------------------------------------------------ */

#define IDLE_POLL_MS 60000

struct cuenta_correo {
    struct store *st;
    struct mailer *m;
    int64_t retry_for_ms, lease_ms;
    struct worker *wk;
};

/* Sends one message and records the outcome; the log names its id and
 * kind, never its link. */
static void deliver(struct cuenta_correo *w, const struct cuenta_mail *m)
{
    err_clear();
    br_err rc = mailer_deliver_cuenta(w->m, m);
    int64_t now = clock_now_ms();
    br_ts now_ts;
    iso8601_format(now, now_ts);
    if (!rc) {
        log_info("mail: account message %s (%s) delivered (attempt %lld)", m->id, m->kind,
                 (long long)m->attempts);
        if (store_cuenta_correo_done(w->st, m->id, NULL, NULL, now_ts) != BR_OK)
            log_error("mail: could not mark %s as sent: %s", m->id, err_msg());
        return;
    }
    char why[512];
    snprintf(why, sizeof why, "%s", err_msg()[0] ? err_msg() : err_name(rc));
    if (worker_stopping(w->wk)) {
        if (store_cuenta_correo_retry(w->st, m->id, m->claim, why, now_ts) != BR_OK)
            log_error("mail: could not release %s for the next start: %s", m->id, err_msg());
        return;
    }
    metric_inc(M_MAIL_FAILURES);
    int64_t queued = 0;
    bool aged = iso8601_parse(m->created_at, strlen(m->created_at), &queued) &&
                now - queued >= w->retry_for_ms;
    /* a link is worth nothing once it has expired */
    bool expired =
        now - queued >= (int64_t)IDENT_LINK_MINUTES * 60000 && mail_cuenta_has_link(m->kind);
    if (rc == BR_INVALID || aged || expired) {
        log_error("mail: account message %s (%s) dropped after %lld attempts: %s", m->id, m->kind,
                  (long long)m->attempts, why);
        if (store_cuenta_correo_done(w->st, m->id, m->claim, why, now_ts) != BR_OK)
            log_error("mail: could not mark %s as dropped: %s", m->id, err_msg());
        return;
    }
    int64_t delay = outbox_backoff_ms(m->attempts);
    br_ts next;
    iso8601_format(now + delay, next);
    log_warn("mail: delivery of account message %s (%s) failed (attempt %lld): %s; next attempt "
             "in %llds",
             m->id, m->kind, (long long)m->attempts, why, (long long)(delay / 1000));
    if (store_cuenta_correo_retry(w->st, m->id, m->claim, why, next) != BR_OK)
        log_error("mail: could not schedule a retry of %s: %s", m->id, err_msg());
}

static br_err deliver_next(void *ud, const char *now_ts, const char *lease)
{
    struct cuenta_correo *w = ud;
    struct cuenta_mail m;
    br_err rc = store_cuenta_correo_claim(w->st, now_ts, lease, &m);
    if (rc) return rc;
    deliver(w, &m);
    cuenta_mail_clear(&m);
    return BR_OK;
}

static void run(struct worker *wk, void *ud)
{
    struct cuenta_correo *w = ud;
    const struct outbox_queue q = {.name = "the account's outbox",
                                   .st = w->st,
                                   .lease_ms = w->lease_ms,
                                   .deliver_next = deliver_next,
                                   .next_due = store_cuenta_correo_next_due,
                                   .ud = w};
    while (!worker_stopping(wk)) {
        int64_t now = clock_now_ms();
        outbox_queue_turn(wk, &q, now, now + IDLE_POLL_MS);
    }
}

br_err cuenta_correo_start(struct store *st, struct mailer *m, const struct config *cfg,
                           struct cuenta_correo **out)
{
    struct cuenta_correo *w = xcalloc(1, sizeof *w);
    w->st = st;
    w->m = m;
    w->retry_for_ms = (int64_t)cfg->smtp_retry_for_s * 1000;
    w->lease_ms = (int64_t)cfg->smtp_timeout_ms + 30000;
    if (!worker_start(run, w, &w->wk)) {
        free(w);
        return err_set(BR_INTERNAL, "cannot start the account mail worker thread");
    }
    *out = w;
    return BR_OK;
}

void cuenta_correo_wake(struct cuenta_correo *w)
{
    if (w) worker_wake(w->wk);
}

/* the other worker's stop cancels the mailer's transfers too */
static void cancel_transfer(void *ud)
{
    struct cuenta_correo *w = ud;
    mailer_cancel(w->m);
}

void cuenta_correo_stop(struct cuenta_correo *w)
{
    if (!w) return;
    worker_stop(w->wk, cancel_transfer);
    free(w);
}
