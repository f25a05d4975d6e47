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

const char *outbox_kind(const char *s)
{
    static const char *const kinds[] = {"confirmacion", "cancelacion",       "reprogramacion",
                                        "recordatorio", "aviso_espera",      "aviso_cita",
                                        "aviso_cambio", "aviso_cancelacion", "cierre"};
    for (size_t i = 0; s && i < ARRAY_LEN(kinds); i++)
        if (!strcmp(s, kinds[i])) return kinds[i];
    return kinds[0];
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
    return s && !strcmp(s, "whatsapp") ? "whatsapp" : "email";
}
