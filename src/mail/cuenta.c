/*
 * cuenta.c - the account's e-mails (see mail/cuenta.h).
 */
#include "cuenta.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B64_IN 57 /* input bytes per 76-character base64 line */

struct texto {
    const char *kind, *subject, *body, *cierre;
    bool link;
};

static const struct texto textos[] = {
    {"restablecer", "Elige tu contraseña",
     "Hemos recibido una petición para crear o cambiar la contraseña de tu cuenta en la "
     "barbería. Para elegirla, abre este enlace (sirve una sola vez durante 30 minutos):",
     "Si no lo has pedido tú, no hagas nada: tu contraseña no cambia y nadie puede entrar en "
     "tu cuenta con este mensaje.",
     true},
    {"email_confirmar", "Confirma tu nuevo email",
     "Has pedido que esta sea la dirección de tu cuenta en la barbería. Para confirmarlo, abre "
     "este enlace (sirve una sola vez durante 30 minutos):",
     "Si no lo has pedido tú, no hagas nada: la cuenta seguirá con su dirección de siempre.", true},
    {"email_aviso", "Cambio de email en tu cuenta",
     "Se ha pedido cambiar la dirección de tu cuenta en la barbería por otra. El cambio solo se "
     "hará si se confirma desde la nueva dirección; hasta entonces todo sigue igual.",
     "Si no has sido tú, cambia tu contraseña desde «Mi cuenta» o escríbenos y lo miramos "
     "contigo.",
     false},
    {"whatsapp_aviso", "Avisos por WhatsApp en tu cuenta",
     "Se han activado los avisos de tus citas por WhatsApp en tu cuenta de la barbería, o se ha "
     "cambiado el número al que van. Desde ahora llegan a ese número, además de a este email.",
     "Si no has sido tú, retira el permiso de WhatsApp y cambia tu contraseña desde «Mi "
     "cuenta», o escríbenos y lo miramos contigo.",
     false},
};

bool mail_cuenta_has_link(const char *kind)
{
    for (size_t i = 0; i < ARRAY_LEN(textos); i++)
        if (kind && !strcmp(kind, textos[i].kind)) return textos[i].link;
    return false;
}

/* A name fit for a greeting: control characters become spaces; NULL when
 * there is nothing to show. Caller frees. */
static char *greeting_name(const char *s)
{
    if (!s || !*s) return NULL;
    char *n = xstrdup(s);
    for (char *p = n; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    return n;
}

br_err mail_compose_cuenta(const struct mail_compose_opts *o, const struct cuenta_mail *m,
                           char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!mail_address_ok(o->from)) return err_set(BR_INVALID, "the sender address is not usable");
    if (!m->recipient || !mail_address_ok(m->recipient))
        return err_set(BR_INVALID, "the recipient address is not usable");
    const struct texto *t = NULL;
    for (size_t i = 0; i < ARRAY_LEN(textos); i++)
        if (m->kind && !strcmp(m->kind, textos[i].kind)) t = &textos[i];
    if (!t) return err_set(BR_INVALID, "unknown account message kind");
    if (t->link && (!m->enlace || !*m->enlace))
        return err_set(BR_INVALID, "the link is gone (the message was finished already)");

    struct buf body, msg;
    buf_init(&body, MAIL_MAX_BYTES);
    buf_init(&msg, MAIL_MAX_BYTES);
    char *name = greeting_name(m->nombre);
    char *text = xasprintf("%s%s%s:\n\n%s\n\n%s%s%s\n\nUn saludo,\nLa barbería\n", "Hola",
                           name ? ", " : "", name ? name : "", t->body, t->link ? m->enlace : "",
                           t->link ? "\n\n" : "", t->cierre);
    free(name);
    br_err rc = BR_OK;
    for (const char *p = text; *p && !rc; p++)
        rc = *p == '\n' ? buf_append(&body, "\r\n", 2) : buf_append(&body, p, 1);
    sodium_memzero(text, strlen(text));
    free(text);

    char date[40];
    mail_date_header(o->now_ms ? o->now_ms : clock_now_ms(), date);
    const char *host = strchr(o->from, '@') + 1;
    char *head = xasprintf("Date: %s\r\nFrom: =?UTF-8?B?QmFyYmVyw61h?= <%s>\r\nTo: <%s>\r\n", date,
                           o->from, m->recipient);
    if (!rc) rc = buf_append(&msg, head, strlen(head));
    free(head);
    if (!rc) rc = mail_header_text(&msg, "Subject", t->subject);
    char *rest = xasprintf("Message-ID: <%s@%s>\r\nMIME-Version: 1.0\r\n"
                           "Auto-Submitted: auto-generated\r\nContent-Language: es\r\n"
                           "Content-Type: text/plain; charset=utf-8\r\n"
                           "Content-Transfer-Encoding: base64\r\n\r\n",
                           m->id, host);
    if (!rc) rc = buf_append(&msg, rest, strlen(rest));
    free(rest);
    char line[80];
    for (size_t i = 0; i < body.len && !rc; i += B64_IN) {
        size_t k = body.len - i < B64_IN ? body.len - i : B64_IN;
        sodium_bin2base64(line, sizeof line, (const unsigned char *)body.p + i, k,
                          sodium_base64_VARIANT_ORIGINAL);
        rc = buf_append(&msg, line, strlen(line));
        if (!rc) rc = buf_append(&msg, "\r\n", 2);
    }
    if (body.p) sodium_memzero(body.p, body.len);
    buf_free(&body);
    if (rc) {
        if (msg.p) sodium_memzero(msg.p, msg.len);
        buf_free(&msg);
        return rc;
    }
    *out = buf_steal(&msg, len);
    return BR_OK;
}
