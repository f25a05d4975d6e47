/*
 * records.c - releasing the records of records.h.
 */
#include "records.h"
#include "../util/common.h"

#include <stdlib.h>
#include <string.h>

/* Frees each of the n texts *f[i] and leaves it NULL. */
static void texts_free(char **const f[], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(*f[i]);
        *f[i] = NULL;
    }
}
#define TEXTS_FREE(...)                                                                            \
    texts_free((char **const[]){__VA_ARGS__}, ARRAY_LEN(((char **const[]){__VA_ARGS__})))

void user_clear(struct user *u)
{
    TEXTS_FREE(&u->email, &u->last_sign_in_at);
}

void perfil_clear(struct perfil *p)
{
    TEXTS_FREE(&p->rol, &p->nombre, &p->telefono);
}

void principal_clear(struct principal *p)
{
    free(p->email);
    p->email = NULL;
    if (p->has_perfil) perfil_clear(&p->perfil);
    p->has_perfil = false;
}

void barbero_clear(struct barbero *b)
{
    TEXTS_FREE(&b->nombre, &b->foto_url, &b->email);
}

void servicio_clear(struct servicio *s)
{
    TEXTS_FREE(&s->nombre);
}

void cita_clear(struct cita *c)
{
    TEXTS_FREE(&c->estado, &c->notas, &c->google_event_id);
}

void foto_clear(struct foto *f)
{
    TEXTS_FREE(&f->tipo, &f->url, &f->storage_path);
}

void obj_intent_clear(struct obj_intent *in)
{
    TEXTS_FREE(&in->bucket, &in->key, &in->op, &in->node, &in->instance);
}

void outbox_clear(struct outbox_msg *m)
{
    TEXTS_FREE(&m->recipient, &m->cliente_nombre, &m->barbero_nombre, &m->servicio_nombre,
               &m->notas, &m->status, &m->last_error, &m->enlace);
}

/* --- cancel and reschedule ---------------------------------------------- */

void cita_detail_clear(struct cita_detail *d)
{
    cita_clear(&d->cita);
    TEXTS_FREE(&d->cliente_email, &d->cliente_nombre, &d->barbero_nombre, &d->servicio_nombre);
}

/* --- the words a text column takes ------------------------------------------------ */

bool word_in(const char *const *words, const char *s)
{
    for (; s && *words; words++)
        if (!strcmp(s, *words)) return true;
    return false;
}

const char *const *cita_estados(void)
{
    static const char *const estados[] = {"confirmada", "cancelada", "completada", "no_presentado",
                                          NULL};
    return estados;
}

bool cita_estado_asistencia(const char *s)
{
    return word_in(cita_estados(), s) && strcmp(s, "cancelada") != 0;
}

const char *const *outbox_estados(void)
{
    static const char *const estados[] = {"pending", "sent", "dropped", "skipped", NULL};
    return estados;
}

const char *const *outbox_kinds(void)
{
    static const char *const kinds[] = {
        "confirmacion", "cancelacion",  "reprogramacion",    "recordatorio", "aviso_espera",
        "aviso_cita",   "aviso_cambio", "aviso_cancelacion", "cierre",       NULL};
    return kinds;
}

const char *const *outbox_canales(void)
{
    static const char *const canales[] = {"email", "whatsapp", NULL};
    return canales;
}

const char *const *whatsapp_entregas(void)
{
    static const char *const entregas[] = {"sent", "delivered", "read", "failed", NULL};
    return entregas;
}

const char *const *consentimiento_tipos(void)
{
    static const char *const tipos[] = {"fotos", NULL};
    return tipos;
}

const char *const *clave_nombres(void)
{
    static const char *const nombres[] = {CLAVE_ENLACES, NULL};
    return nombres;
}

/* s as the word of words it matches, else the first of words. */
static const char *word_or_first(const char *const *words, const char *s)
{
    for (size_t i = 0; s && words[i]; i++)
        if (!strcmp(s, words[i])) return words[i];
    return words[0];
}

const char *outbox_kind(const char *s)
{
    return word_or_first(outbox_kinds(), s);
}

bool outbox_kind_cancela(const char *kind)
{
    const char *k = outbox_kind(kind);
    return !strcmp(k, "cancelacion") || !strcmp(k, "cierre");
}

void cuenta_mail_clear(struct cuenta_mail *m)
{
    if (m->enlace) {
        /* the link holds a live token */
        volatile char *p = m->enlace;
        while (*p)
            *p++ = 0;
    }
    TEXTS_FREE(&m->kind, &m->recipient, &m->nombre, &m->enlace);
}

const char *outbox_canal(const char *s)
{
    return word_or_first(outbox_canales(), s);
}
