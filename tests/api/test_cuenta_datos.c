/*
 * test_cuenta_datos.c - the client's data and her account, over HTTP
 * against the real server with the real SMTP sink behind it
 * (cuenta_fixture.h): GET /api/auth/me/datos, the photo consent and DELETE
 * /api/auth/me, with what races them - and that nothing one client does
 * reaches another's data. Getting into the account is test_cuenta_acceso.c's.
 */
#define _GNU_SOURCE
#include "cuenta_fixture.h"

#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- her data, her consent, her account ------------------------------------------------ */

static const unsigned char PNG[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0};

static void datos_hold_everything_of_hers_and_nothing_of_others(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Datos");
    signup_user(&S, &bea, "Bea Otra");
    char *mine = book_one(&ana);
    char *theirs = book_one(&bea);
    json_t *f = upload_photo(&S, &ana, mine, "antes", PNG, sizeof PNG);
    json_t *g = upload_photo(&S, &bea, theirs, "antes", PNG, sizeof PNG);
    free(wait_mail(ana.email, NULL)); /* her confirmation: a message to her address */
    struct resp r;
    post("/api/auth/me/consentimientos", ana.token, "{\"fotos\":true}", &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(json_object_get(r.json, "consentimientos"), "fotos")));
    resp_free(&r);
    /* her WhatsApp consent and a waiting-list entry are hers too */
    http_json(&S, "PUT", "/api/auth/me/whatsapp", ana.token,
              "{\"acepta\":true,\"telefono\":\"612 345 678\"}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char dia[11], espera[160];
    weekday_utc(2, dia);
    snprintf(espera, sizeof espera, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\"}", SERVICIO, dia);
    post("/api/lista-espera", ana.token, espera, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);

    http_get(&S, "/api/auth/me/datos", ana.token, &r);
    assert_int_equal(r.status, 200);
    char h[256];
    assert_non_null(resp_header(&r, "Content-Disposition", h, sizeof h));
    assert_non_null(strstr(h, "attachment"));
    assert_string_equal(jstr(json_object_get(r.json, "user"), "email"), ana.email);
    assert_string_equal(jstr(json_object_get(r.json, "perfil"), "nombre"), "Ana Datos");
    json_t *citas = json_object_get(r.json, "citas");
    assert_int_equal(json_array_size(citas), 1);
    assert_string_equal(jstr(json_array_get(citas, 0), "id"), mine);
    assert_string_equal(jstr(json_array_get(citas, 0), "notas"), "notas de prueba");
    assert_string_equal(jstr(json_array_get(citas, 0), "barbero"), "Carlos Méndez");
    json_t *fotos = json_object_get(r.json, "fotos");
    assert_int_equal(json_array_size(fotos), 1);
    assert_string_equal(jstr(json_array_get(fotos, 0), "url"), jstr(f, "url"));
    assert_true(json_array_size(json_object_get(r.json, "historial")) >= 1);
    assert_true(json_array_size(json_object_get(r.json, "mensajes")) >= 1);
    assert_int_equal(json_array_size(json_object_get(r.json, "consentimientos")), 1);
    json_t *msg0 = json_array_get(json_object_get(r.json, "mensajes"), 0);
    assert_string_equal(jstr(msg0, "canal"), "email");
    assert_string_equal(jstr(msg0, "cita_id"), mine);
    assert_true(json_is_null(json_object_get(msg0, "lista_espera_id")));
    json_t *wa = json_object_get(r.json, "whatsapp");
    assert_int_equal(json_array_size(wa), 1);
    assert_string_equal(jstr(json_array_get(wa, 0), "telefono"), "+34612345678");
    json_t *le = json_object_get(r.json, "lista_espera");
    assert_int_equal(json_array_size(le), 1);
    assert_string_equal(jstr(json_array_get(le, 0), "fecha"), dia);
    assert_string_equal(jstr(json_array_get(le, 0), "servicio"), "Corte clásico");
    /* nothing of Bea's */
    assert_null(strstr(r.body, bea.email));
    assert_null(strstr(r.body, theirs));
    assert_null(strstr(r.body, jstr(g, "url")));
    assert_null(strstr(r.body, "storage_path"));
    resp_free(&r);
    http_get(&S, "/api/auth/me/datos", NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    json_decref(f);
    json_decref(g);
    free(mine);
    free(theirs);
}

/* Her address moves: the shop's messages about her appointments follow her,
 * and whoever holds the old address next sees none of them. */
static void what_was_sent_to_her_old_address_stays_hers_and_what_is_due_follows_her(void **state)
{
    (void)state;
    struct user gala;
    signup_user(&S, &gala, "Gala Movida");
    /* its 2-hour reminder falls due in 45 s (the 24-hour one was past) */
    char f[ISO8601_LEN + 1];
    iso8601_format(clock_now_ms() + 2 * 3600000LL + 45000, f);
    char *cita = book(&S, &gala, BARBERO, SERVICIO, f, NULL);
    free(wait_mail(gala.email, "/c/")); /* the confirmation, sent to the old address */
    char nueva[128], body[256];
    unique_email(nueva, sizeof nueva, "gala-nueva");
    char tok[TOKEN_LEN + 1];
    email_change_link(&gala, nueva, tok);
    snprintf(body, sizeof body, "{\"token\":\"%s\"}", tok);
    struct resp r;
    post("/api/auth/confirmar-email", NULL, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* someone else takes the old address: nothing of Gala's is hers */
    struct user mallory;
    snprintf(mallory.password, sizeof mallory.password, "secreto-mallory");
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\",\"nombre\":\"Mallory\"}",
             gala.email, mallory.password);
    post("/api/auth/signup", NULL, body, &r);
    assert_int_equal(r.status, 201);
    snprintf(mallory.token, sizeof mallory.token, "%s", jstr(r.json, "token"));
    resp_free(&r);
    http_get(&S, "/api/auth/me/datos", mallory.token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "mensajes")), 0);
    assert_null(strstr(r.body, cita));
    resp_free(&r);
    http_get(&S, "/api/auth/me/datos", gala.token, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, cita));
    resp_free(&r);
    /* the reminder, with the appointment's link, goes to the address she has now */
    free(wait_mail(nueva, "Te recordamos tu próxima cita"));
    json_t *old = mails_to(gala.email);
    for (size_t i = 0; i < json_array_size(old); i++) {
        const char *t = jstr(json_array_get(old, i), "text");
        assert_null(strstr(t ? t : "", "Te recordamos tu próxima cita"));
    }
    json_decref(old);
    free(cita);
}

/* An "antes" photo of cita sent as u (NULL: no session) gets status and
 * message. */
static void photo_expect(const struct user *u, const char *cita, long status, const char *message)
{
    struct part parts[] = {
        {"file", (const char *)PNG, sizeof PNG, "a.png", "image/png"},
        {"cita_id", cita, 0, NULL, NULL},
        {"tipo", "antes", 0, NULL, NULL},
    };
    struct resp r;
    http_multipart(&S, "/api/fotos", u ? u->token : NULL, parts, 3, &r);
    expect_error(&r, status, message);
    resp_free(&r);
}

static void withdrawing_photo_consent_deletes_her_photos_and_refuses_new_ones(void **state)
{
    (void)state;
    struct user ana, staff;
    signup_user(&S, &ana, "Ana Fotos");
    make_user(&S, &staff, "Barbero Fotos", "barbero");
    char *cita = book_one(&ana);
    json_t *f1 = upload_photo(&S, &ana, cita, "antes", PNG, sizeof PNG);
    json_t *f2 = upload_photo(&S, &staff, cita, "despues", PNG, sizeof PNG);
    char *k1 = strdup(jstr(f1, "storage_path")), *k2 = strdup(jstr(f2, "storage_path"));
    assert_true(obj_exists(&S, k1));
    assert_true(obj_exists(&S, k2));
    struct resp r;
    http_get(&S, "/api/auth/me/consentimientos", ana.token, &r);
    assert_true(json_is_null(json_object_get(json_object_get(r.json, "consentimientos"), "fotos")));
    resp_free(&r);
    post("/api/auth/me/consentimientos", ana.token, "{\"fotos\":false}", &r);
    assert_int_equal(r.status, 200);
    assert_true(
        json_is_false(json_object_get(json_object_get(r.json, "consentimientos"), "fotos")));
    resp_free(&r);
    /* both photos of her cut are gone, objects too */
    assert_int_equal(db_count(&S, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita), 0);
    assert_false(obj_exists(&S, k1));
    assert_false(obj_exists(&S, k2));
    assert_int_equal(db_count(&S, "SELECT count(*) FROM obj_intents"), 0);
    /* no photo of her cut now, by anyone, after the specification's checks */
    photo_expect(&staff, cita, 403, "La clienta o el cliente de la cita no autoriza fotos");
    photo_expect(NULL, cita, 401, "No autenticado");
    post("/api/auth/me/consentimientos", ana.token, "{\"fotos\":\"si\"}", &r);
    expect_error(&r, 400, "Campo inválido: fotos");
    resp_free(&r);
    /* null and "" are missing, as an absent field */
    static const char *const missing[] = {"{}", "{\"fotos\":null}", "{\"fotos\":\"\"}"};
    for (size_t i = 0; i < 3; i++) {
        post("/api/auth/me/consentimientos", ana.token, missing[i], &r);
        expect_error(&r, 400, "Faltan campos requeridos");
        resp_free(&r);
    }
    post("/api/auth/me/consentimientos", ana.token, "{\"fotos\":true}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    json_decref(upload_photo(&S, &staff, cita, "antes", PNG, sizeof PNG));
    json_decref(f1);
    json_decref(f2);
    free(k1);
    free(k2);
    free(cita);
}

/* A client's own requests racing the end of her account or of her photo
 * consent: the one that ends things (closer) and the others (a booking
 * each, or a photo each). */
struct closing_racer {
    const struct user *u;
    bool closer;
    bool fotos;                      /* the closer withdraws the photo consent, the rest upload */
    const char *cita;                /* the photo's appointment */
    char fecha[12][ISO8601_LEN + 1]; /* a booker's slots, one after the other */
    long status;
    char said[200]; /* the body of its last answer of 500 or more */
};

static void closing_race(void *item)
{
    struct closing_racer *x = item;
    struct resp r;
    char body[400];
    struct req_opts o = {.token = x->u->token, .body = body};
    if (x->closer && x->fotos) {
        snprintf(body, sizeof body, "{\"fotos\":false}");
        x->status = http_try(&S, "POST", "/api/auth/me/consentimientos", &o, &r);
    } else if (x->closer) {
        snprintf(body, sizeof body, "{\"password\":\"%s\"}", x->u->password);
        x->status = http_try(&S, "DELETE", "/api/auth/me", &o, &r);
    } else if (x->fotos) {
        struct part parts[] = {
            {"file", (const char *)PNG, sizeof PNG, "a.png", "image/png"},
            {"cita_id", x->cita, 0, NULL, NULL},
            {"tipo", "antes", 0, NULL, NULL},
        };
        x->status = http_multipart_try(&S, "/api/fotos", x->u->token, parts, 3, &r);
        if (x->status >= 500) snprintf(x->said, sizeof x->said, "%s", r.body ? r.body : "");
    } else {
        /* books on until her session is gone: some bookings run while the
         * deletion does */
        for (size_t i = 0; i < 40 * ARRAY_LEN(x->fecha); i++) {
            snprintf(body, sizeof body,
                     "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}",
                     BARBERO, SERVICIO, x->fecha[i % ARRAY_LEN(x->fecha)]);
            x->status = http_try(&S, "POST", "/api/citas", &o, &r);
            resp_free(&r);
            if (x->status == 401 || x->status == 0) return; /* her session ended */
        }
        return;
    }
    resp_free(&r);
}

/* Bookings she began while deleting her account either fail or are
 * cancelled with the rest: no live appointment is left on a deleted
 * account (they would block the barber's time for nobody). */
static void bookings_racing_her_deletion_leave_none_behind(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        struct user ana;
        signup_user(&S, &ana, "Ana Prisa");
        struct closing_racer xs[9];
        for (size_t i = 0; i < ARRAY_LEN(xs); i++) {
            xs[i] = (struct closing_racer){.u = &ana, .closer = i == 4};
            for (size_t k = 0; k < ARRAY_LEN(xs[i].fecha); k++)
                next_slot(xs[i].fecha[k]);
        }
        race_threads(ARRAY_LEN(xs), closing_race, xs, sizeof xs[0]);
        assert_int_equal(xs[4].status, 200);
        assert_int_equal(db_count(&S,
                                  "SELECT count(*) FROM citas WHERE cliente_id = '%s' AND "
                                  "estado <> 'cancelada'",
                                  ana.id),
                         0);
    }
}

/* Photos uploaded while she withdraws her photo consent are either refused
 * or removed with the rest: none is left of her appointment. */
static void photos_racing_a_withdrawn_consent_leave_none_behind(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        struct user ana, staff;
        signup_user(&S, &ana, "Ana Fotos Prisa");
        make_user(&S, &staff, "Barbero Prisa", "barbero");
        char *cita = book_one(&ana);
        struct closing_racer xs[7];
        for (size_t i = 0; i < ARRAY_LEN(xs); i++)
            xs[i] = (struct closing_racer){
                .u = i == 3 ? &ana : &staff, .closer = i == 3, .fotos = true, .cita = cita};
        race_threads(ARRAY_LEN(xs), closing_race, xs, sizeof xs[0]);
        assert_int_equal(xs[3].status, 200);
        for (size_t i = 0; i < ARRAY_LEN(xs); i++)
            if (i != 3 && xs[i].status != 201 && xs[i].status != 403 && xs[i].status != 400)
                fail_msg("an upload answered %ld: %s", xs[i].status, xs[i].said);
        assert_int_equal(db_count(&S, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita),
                         0);
        free(cita);
    }
}

/* What staff and she write of hers while her account closes: the desk's
 * waiting-list entries and WhatsApp consents, her name and her address
 * change. Each is refused once the account is closed, or removed by the
 * closing: nothing of hers is left (no entry, consent, link or account
 * e-mail, and the profile keeps its anonymous name). */
struct writer {
    const struct user *u, *staff;
    int kind; /* 0 closes, 1 waiting list, 2 WhatsApp consent, 3 name, 4 address */
    long status;
};

static void writer_run(void *item)
{
    struct writer *x = item;
    char body[400], path[160];
    struct resp r;
    struct req_opts o = {.token = x->kind == 1 || x->kind == 2 ? x->staff->token : x->u->token,
                         .body = body};
    if (x->kind == 0) {
        snprintf(body, sizeof body, "{\"password\":\"%s\"}", x->u->password);
        x->status = http_try(&S, "DELETE", "/api/auth/me", &o, &r);
        resp_free(&r);
        return;
    }
    for (int i = 0; i < (x->kind == 4 ? 3 : 12); i++) {
        const char *method = "PATCH";
        snprintf(path, sizeof path, "/api/auth/me");
        if (x->kind == 1) {
            char day[11];
            time_t t = time(NULL) + (time_t)(i + 2) * 86400;
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(day, sizeof day, "%Y-%m-%d", &tm);
            method = "POST";
            snprintf(path, sizeof path, "/api/lista-espera");
            snprintf(body, sizeof body,
                     "{\"cliente_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha\":\"%s\"}", x->u->id,
                     SERVICIO, day);
        } else if (x->kind == 2) {
            method = "PUT";
            snprintf(path, sizeof path, "/api/clientes/%s/whatsapp", x->u->id);
            snprintf(body, sizeof body, "{\"acepta\":true,\"telefono\":\"+34 612 000 111\"}");
        } else if (x->kind == 3) {
            snprintf(body, sizeof body, "{\"nombre\":\"Ana Vuelta %d\"}", i);
        } else {
            snprintf(body, sizeof body, "{\"email\":\"vuelta-%d-%s\",\"password_actual\":\"%s\"}",
                     i, x->u->email, x->u->password);
        }
        x->status = http_try(&S, method, path, &o, &r);
        resp_free(&r);
        if (x->status == 401 || x->status == 404 || x->status == 0) return; /* she is gone */
    }
}

static void what_is_written_of_her_while_she_leaves_is_refused_or_removed(void **state)
{
    (void)state;
    struct user staff;
    make_user(&S, &staff, "Mostrador Prisa", "barbero");
    for (int round = 0; round < 4; round++) {
        struct user ana;
        signup_user(&S, &ana, "Ana Se Va");
        static const int kinds[] = {1, 2, 1, 3, 0, 4, 2, 1};
        struct writer xs[ARRAY_LEN(kinds)];
        for (size_t i = 0; i < ARRAY_LEN(xs); i++)
            xs[i] = (struct writer){.u = &ana, .staff = &staff, .kind = kinds[i]};
        race_threads(ARRAY_LEN(xs), writer_run, xs, sizeof xs[0]);
        assert_int_equal(xs[4].status, 200);
        long left[] = {
            db_count(&S, "SELECT count(*) FROM lista_espera WHERE cliente_id = '%s'", ana.id),
            db_count(&S, "SELECT count(*) FROM whatsapp_consentimientos WHERE cliente_id = '%s'",
                     ana.id),
            db_count(&S, "SELECT count(*) FROM cuenta_tokens WHERE user_id = '%s'", ana.id),
            db_count(&S, "SELECT count(*) FROM cuenta_correo WHERE user_id = '%s'", ana.id),
            db_count(&S,
                     "SELECT count(*) FROM perfiles WHERE id = '%s' AND "
                     "nombre <> 'Cliente eliminado'",
                     ana.id)};
        static const char *const what[] = {"waiting-list entries", "WhatsApp consents", "links",
                                           "account e-mails", "her name"};
        for (size_t k = 0; k < ARRAY_LEN(left); k++)
            if (left[k] != 0) fail_msg("round %d: %ld %s left", round, left[k], what[k]);
    }
}

/* Her upload's session was checked when its headers came; she closes her
 * account before its body has all come: the photo is refused (401) and
 * nothing of hers is stored, on another client's appointment too. */
static void a_photo_whose_sender_left_meanwhile_is_refused(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Sube Y Se Va");
    signup_user(&S, &bea, "Bea Recibe");
    struct resp r;
    post("/api/auth/me/consentimientos", bea.token, "{\"fotos\":true}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char *cita = book_one(&bea);
    char body[1024], head[512];
    int n = snprintf(body, sizeof body,
                     "--B0und\r\nContent-Disposition: form-data; name=\"cita_id\"\r\n\r\n%s\r\n"
                     "--B0und\r\nContent-Disposition: form-data; name=\"tipo\"\r\n\r\nantes\r\n"
                     "--B0und\r\nContent-Disposition: form-data; name=\"file\"; "
                     "filename=\"f.png\"\r\nContent-Type: image/png\r\n\r\n",
                     cita);
    memcpy(body + n, PNG, sizeof PNG);
    n += (int)sizeof PNG;
    n += snprintf(body + n, sizeof body - (size_t)n, "\r\n--B0und--\r\n");
    int h = snprintf(head, sizeof head,
                     "POST /api/fotos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: multipart/form-data; boundary=B0und\r\n"
                     "Content-Length: %d\r\nConnection: close\r\n\r\n",
                     ana.token, n);
    int fd = raw_open(&S, 30000);
    raw_send(fd, head, (size_t)h);
    raw_send(fd, body, (size_t)n - 8);
    sleep_ms(300); /* the headers read, her session checked */
    char del[128];
    snprintf(del, sizeof del, "{\"password\":\"%s\"}", ana.password);
    http_json(&S, "DELETE", "/api/auth/me", ana.token, del, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    raw_send(fd, body + n - 8, 8);
    char *reply = NULL;
    long st = raw_reply(fd, &reply);
    if (st != 401) fail_msg("the upload answered %ld: %s", st, reply ? reply : "");
    assert_non_null(strstr(raw_body(reply), "No autenticado"));
    free(reply);
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM fotos_cita WHERE cliente_id = '%s'", ana.id), 0);
    free(cita);
}

struct deleted_msgs {
    const char *cliente_id;
};

static bool no_messages_of(void *ud)
{
    const struct deleted_msgs *d = ud;
    return db_count(&S,
                    "SELECT count(*) FROM mail_outbox WHERE cita_id IN (SELECT id FROM citas "
                    "WHERE cliente_id = '%s')",
                    d->cliente_id) == 0;
}

static void deleting_her_account_cancels_anonymises_and_keeps_the_books(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Borrar");
    signup_user(&S, &bea, "Bea Queda");
    char *cita = book_one(&ana);
    char *other = book_one(&bea);
    json_t *f = upload_photo(&S, &ana, cita, "antes", PNG, sizeof PNG);
    char *key = strdup(jstr(f, "storage_path"));
    struct resp r;
    http_json(&S, "DELETE", "/api/auth/me", ana.token, "{\"password\":\"equivocada\"}", &r);
    expect_error(&r, 400, "La contraseña actual no es correcta");
    resp_free(&r);
    http_json(&S, "DELETE", "/api/auth/me", ana.token, NULL, &r);
    expect_error(&r, 400, "Falta la contraseña actual");
    resp_free(&r);
    http_json(&S, "DELETE", "/api/auth/me", NULL, "{\"password\":\"x\"}", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    assert_int_equal(me_status(ana.token), 200);

    char body[256];
    snprintf(body, sizeof body, "{\"password\":\"%s\"}", ana.password);
    http_json(&S, "DELETE", "/api/auth/me", ana.token, body, &r);
    assert_int_equal(r.status, 200);
    char cookie[256];
    assert_non_null(resp_header(&r, "Set-Cookie", cookie, sizeof cookie));
    assert_non_null(strstr(cookie, "Max-Age=0"));
    resp_free(&r);
    /* her sign-in is gone */
    assert_int_equal(me_status(ana.token), 401);
    assert_int_equal(login_status(ana.email, ana.password), 401);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_users WHERE email = '%s'", ana.email),
                     0);
    /* her future cita is cancelled, kept for the books without her name */
    assert_int_equal(
        db_count(&S,
                 "SELECT count(*) FROM citas WHERE id = '%s' AND estado = 'cancelada' AND "
                 "notas IS NULL AND cliente_id = '%s'",
                 cita, ana.id),
        1);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM perfiles WHERE id = '%s' AND nombre = "
                              "'Cliente eliminado' AND telefono IS NULL",
                              ana.id),
                     1);
    /* the messages about her appointments: the cancellation still goes to
     * her, and once sent no message to her is kept, to any address */
    char *gone = wait_mail(ana.email, "Tu cita ha sido cancelada");
    free(gone);
    struct deleted_msgs dm = {ana.id};
    if (!wait_until(no_messages_of, &dm, WAIT_MAIL_MS))
        fail_msg("messages about a deleted client's citas remain");
    /* her photo and its object */
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM fotos_cita WHERE cliente_id = '%s'", ana.id), 0);
    assert_false(obj_exists(&S, key));
    /* and none ever again: her consent went with her account, which is a
     * refusal, not a "never asked" */
    struct user staff;
    make_user(&S, &staff, "Barbero Tras Borrar", "barbero");
    photo_expect(&staff, cita, 403, "La clienta o el cliente de la cita no autoriza fotos");
    assert_int_equal(db_count(&S, "SELECT count(*) FROM fotos_cita WHERE cita_id = '%s'", cita), 0);
    /* her sign-in's new address is nobody's: neither a sign-up nor another
     * client's e-mail change takes (or claims) it */
    snprintf(body, sizeof body, "{\"email\":\"%s@eliminado.invalid\",\"password\":\"otra-vida\"}",
             ana.id);
    post("/api/auth/signup", NULL, body, &r);
    expect_error(&r, 400, "Email inválido");
    resp_free(&r);
    snprintf(body, sizeof body, "{\"email\":\"%s@eliminado.invalid\",\"password_actual\":\"%s\"}",
             ana.id, bea.password);
    http_json(&S, "PATCH", "/api/auth/me", bea.token, body, &r);
    expect_error(&r, 400, "Email inválido");
    resp_free(&r);
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM auth_users WHERE id = '%s' AND password_hash = ''",
                 ana.id),
        1);
    /* the address is free for a new account */
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"otra-vida\"}", ana.email);
    post("/api/auth/signup", NULL, body, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    /* a reset to the old address reaches the new account only */
    /* Bea's cita and session are untouched */
    assert_int_equal(me_status(bea.token), 200);
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM citas WHERE id = '%s' AND estado = 'confirmada'", other),
        1);
    json_decref(f);
    free(key);
    free(cita);
    free(other);
}

/* What the deleted accounts' domain let in before addresses there were
 * refused, on a database of the schema version before that migration
 * (AFTER_ELIMINADOS versions ago, the ones after it undone too): the
 * upgrade takes it out again. */
#define AFTER_ELIMINADOS     3
#define AFTER_ELIMINADOS_SQL "3"
static void an_upgrade_undoes_what_the_deleted_accounts_domain_let_in(void **state)
{
    (void)state;
    struct srv T = {0};
    srv_init(&T);
    srv_start(&T, NULL, NULL);
    struct user gone, squatter, vic;
    deleted_user(&T, &gone, "Ida");
    signup_user(&T, &squatter, "Okupa");
    signup_user(&T, &vic, "Victoria");
    assert_int_equal(srv_stop(&T), 0);
    /* a deleted account given a password and a phone again; a live account
     * on the address Victoria's deletion will need */
    char sql[1024];
    snprintf(sql, sizeof sql,
             "UPDATE auth_users SET password_hash = (SELECT password_hash FROM auth_users "
             "WHERE id = '%s') WHERE id = '%s'; "
             "UPDATE perfiles SET telefono = '600111222' WHERE id = '%s'; "
             "UPDATE auth_users SET email = '%s@eliminado.invalid' WHERE id = '%s'; "
             "DROP TABLE enlaces_cliente; DROP TABLE whatsapp_envios; %s",
             squatter.id, gone.id, gone.id, vic.id, squatter.id,
             test_pg() ? "DELETE FROM schema_version WHERE version > "
                         "(SELECT max(version) FROM schema_version) - " AFTER_ELIMINADOS_SQL ";"
                       : "");
    assert_int_equal(db_exec(&T, sql, NULL), 0);
    if (!test_pg()) {
        char *v = db_query(&T, "PRAGMA user_version");
        snprintf(sql, sizeof sql, "PRAGMA user_version = %ld;",
                 strtol(v, NULL, 10) - AFTER_ELIMINADOS);
        free(v);
        assert_int_equal(db_exec(&T, sql, NULL), 0);
    }
    srv_start(&T, NULL, NULL);
    assert_int_equal(db_count(&T,
                              "SELECT count(*) FROM auth_users u JOIN perfiles p ON p.id = u.id "
                              "WHERE u.id = '%s' AND u.password_hash = '' AND p.telefono IS NULL",
                              gone.id),
                     1);
    assert_int_equal(
        db_count(&T, "SELECT count(*) FROM auth_users WHERE id = '%s' AND email = 'sin-email:%s'",
                 squatter.id, squatter.id),
        1);
    struct resp r;
    http_get(&T, "/api/auth/me", squatter.token, &r);
    assert_int_equal(r.status, 401);
    resp_free(&r);
    /* and Victoria's deletion goes through */
    char body[256];
    snprintf(body, sizeof body, "{\"password\":\"%s\"}", vic.password);
    http_json(&T, "DELETE", "/api/auth/me", vic.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_get(&T, "/api/auth/me", vic.token, &r);
    assert_int_equal(r.status, 401);
    resp_free(&r);
    srv_cleanup(&T);
}

static void staff_accounts_are_not_deleted_here(void **state)
{
    (void)state;
    struct user admin;
    make_user(&S, &admin, "Admin Cuenta", "admin");
    char body[256];
    snprintf(body, sizeof body, "{\"password\":\"%s\"}", admin.password);
    struct resp r;
    http_json(&S, "DELETE", "/api/auth/me", admin.token, body, &r);
    expect_error(&r, 403, "La cuenta del personal la elimina un administrador");
    resp_free(&r);
    assert_int_equal(me_status(admin.token), 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bookings_racing_her_deletion_leave_none_behind),
        cmocka_unit_test(photos_racing_a_withdrawn_consent_leave_none_behind),
        cmocka_unit_test(what_is_written_of_her_while_she_leaves_is_refused_or_removed),
        cmocka_unit_test(a_photo_whose_sender_left_meanwhile_is_refused),
        cmocka_unit_test(datos_hold_everything_of_hers_and_nothing_of_others),
        cmocka_unit_test(what_was_sent_to_her_old_address_stays_hers_and_what_is_due_follows_her),
        cmocka_unit_test(withdrawing_photo_consent_deletes_her_photos_and_refuses_new_ones),
        cmocka_unit_test(deleting_her_account_cancels_anonymises_and_keeps_the_books),
        cmocka_unit_test(an_upgrade_undoes_what_the_deleted_accounts_domain_let_in),
        cmocka_unit_test(staff_accounts_are_not_deleted_here),
    };
    return cmocka_run_group_tests(tests, cuenta_group_setup, cuenta_group_teardown);
}
