/*
 * records.c - releasing the records of records.h.
 */
#include "records.h"
#include "../util/common.h"

#include <stdlib.h>
#include <string.h>

void user_clear(struct user *u)
{
    free(u->email);
    free(u->last_sign_in_at);
    u->email = u->last_sign_in_at = NULL;
}

void perfil_clear(struct perfil *p)
{
    free(p->rol);
    free(p->nombre);
    free(p->telefono);
    p->rol = p->nombre = p->telefono = NULL;
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
    free(b->nombre);
    free(b->foto_url);
    free(b->email);
    b->nombre = b->foto_url = b->email = NULL;
}

void servicio_clear(struct servicio *s)
{
    free(s->nombre);
    s->nombre = NULL;
}

void cita_clear(struct cita *c)
{
    free(c->estado);
    free(c->notas);
    free(c->google_event_id);
    c->estado = c->notas = c->google_event_id = NULL;
}

void foto_clear(struct foto *f)
{
    free(f->tipo);
    free(f->url);
    free(f->storage_path);
    f->tipo = f->url = f->storage_path = NULL;
}

void obj_intent_clear(struct obj_intent *in)
{
    free(in->bucket);
    free(in->key);
    free(in->op);
    free(in->node);
    free(in->instance);
    in->bucket = in->key = in->op = in->node = in->instance = NULL;
}

void outbox_clear(struct outbox_msg *m)
{
    free(m->recipient);
    free(m->cliente_nombre);
    free(m->barbero_nombre);
    free(m->servicio_nombre);
    free(m->notas);
    free(m->status);
    free(m->last_error);
    m->recipient = m->cliente_nombre = m->barbero_nombre = m->servicio_nombre = NULL;
    m->notas = m->status = m->last_error = NULL;
}

/* --- cancel and reschedule ---------------------------------------------- */

void cita_detail_clear(struct cita_detail *d)
{
    cita_clear(&d->cita);
    free(d->cliente_email);
    free(d->cliente_nombre);
    free(d->barbero_nombre);
    free(d->servicio_nombre);
    d->cliente_email = d->cliente_nombre = d->barbero_nombre = d->servicio_nombre = NULL;
}

const char *outbox_kind(const char *s)
{
    static const char *const kinds[] = {"confirmacion",      "cancelacion", "reprogramacion",
                                        "recordatorio",      "aviso_cita",  "aviso_cambio",
                                        "aviso_cancelacion", "cierre"};
    for (size_t i = 0; s && i < ARRAY_LEN(kinds); i++)
        if (!strcmp(s, kinds[i])) return kinds[i];
    return kinds[0];
}
