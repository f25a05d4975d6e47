/*
 * test_mail.c - the confirmation e-mail end to end: the real server sends
 * through its SMTP adapter to a real SMTP server (tests/tools/smtp_sink.py,
 * aiosmtpd on 127.0.0.1), and every received message is read back with
 * Python's email package (tests/tools/mail_to_json.py) so the assertions
 * are about what a mail client would show. Also: a mail server that is
 * down, silent, restarted or never configured; STARTTLS with a certificate
 * made here, and required of a server that offers none; AUTH; and that a
 * booking never waits for any of it.
 *
 * Waits poll with generous bounds: a slow machine makes a test slower,
 * never red.
 */
#include "harness.h"
#include "util/iso8601.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define WAIT_MAIL_MS 60000 /* the longest a message may take to arrive */
#define START_UTC    "2031-05-04T08:30:00Z"

/* --- the SMTP sink (smtp_sink_* in the harness) ------------------------------------------ */

/* Nothing is left to deliver: no outbox row is pending (or being retried).
 * After that no further message can arrive. */
static bool outbox_settled(void *ud)
{
    const struct srv *s = ud;
    return db_count(s, "SELECT count(*) FROM mail_outbox WHERE status = 'pending'") == 0;
}

/* Waits for one message, checks no second one follows, and returns it as
 * mail_to_json.py sees it (caller decrefs). */
static json_t *sink_the_one_message(const struct smtp_sink *k, const struct srv *s)
{
    if (!smtp_sink_wait(k, 1, WAIT_MAIL_MS)) {
        char *log = srv_log(s);
        fail_msg("no message arrived within %d s; server log:\n%s", WAIT_MAIL_MS / 1000, log);
    }
    /* once the outbox has nothing left to deliver, the count is final */
    if (!wait_until(outbox_settled, (void *)s, WAIT_MAIL_MS))
        fail_msg("the outbox still had a message to deliver after %d s", WAIT_MAIL_MS / 1000);
    char **paths;
    size_t n = smtp_sink_files(k, &paths);
    if (n != 1) {
        smtp_sink_free_paths(paths, n);
        fail_msg("expected exactly one message, the sink holds %zu", n);
    }
    json_t *j = smtp_sink_message(paths[0]);
    smtp_sink_free_paths(paths, n);
    json_t *problems = json_object_get(j, "problems");
    if (json_array_size(problems) > 0) {
        char *p = json_dumps(problems, 0);
        fail_msg("the message breaks the rules: %s", p);
    }
    return j;
}

/* --- the server under test ------------------------------------------------------------------- */

static struct srv S;
static struct smtp_sink K;
static int HOLE = -1; /* a listening socket that never answers, or -1 */

static int teardown(void **state)
{
    (void)state;
    /* closed first: the server's retries then end at once */
    if (HOLE >= 0) close(HOLE);
    HOLE = -1;
    smtp_sink_stop(&K);
    srv_cleanup(&S);
    memset(&S, 0, sizeof S);
    memset(&K, 0, sizeof K);
    return 0;
}

/* `barberia outbox list [--status st]`: its stdout (caller frees). */
static char *outbox_list(const struct srv *s, const char *status)
{
    char *out = NULL, *err = NULL;
    int st = status ? srv_cli(s, &out, &err, "outbox", "list", "--status", status, NULL)
                    : srv_cli(s, &out, &err, "outbox", "list", NULL);
    if (st != 0) fail_msg("outbox list failed (%d): %s", st, err ? err : "");
    free(err);
    return out;
}

/* The state column (2nd) of the outbox row for cita_id, copied into buf;
 * "" when there is no such row (in the default listing: delivered). */
static const char *outbox_state(const struct srv *s, const char *cita_id, char *buf, size_t n,
                                char **row)
{
    char *out = outbox_list(s, NULL);
    buf[0] = '\0';
    if (row) *row = NULL;
    for (char *line = out; line && *line;) {
        char *eol = strchr(line, '\n');
        if (eol) *eol = '\0';
        if (strstr(line, cita_id)) {
            char *t = strchr(line, '\t');
            size_t len = t ? strcspn(t + 1, "\t") : 0;
            if (len >= n) len = n - 1;
            if (t) memcpy(buf, t + 1, len);
            buf[len] = '\0';
            if (row) *row = strdup(line);
        }
        line = eol ? eol + 1 : NULL;
    }
    free(out);
    return buf;
}

/* Polls the outbox until cita_id's state is want; false on timeout. */
struct outbox_goal {
    const struct srv *s;
    const char *cita_id, *want;
};

static bool outbox_in_state(void *ud)
{
    const struct outbox_goal *g = ud;
    char st[32];
    return !strcmp(outbox_state(g->s, g->cita_id, st, sizeof st, NULL), g->want);
}

static bool outbox_wait_state(const struct srv *s, const char *cita_id, const char *want,
                              int timeout_ms)
{
    struct outbox_goal g = {s, cita_id, want};
    return wait_until(outbox_in_state, &g, timeout_ms);
}

/* A barber, a service and a client with a name; books START_UTC and
 * returns the cita id (caller frees). OUT: *u. */
static char *book_one(const struct srv *s, struct user *u, const char *cliente, const char *notas)
{
    char *barbero = make_barbero(s, "Carlos Méndez");
    char *servicio = make_servicio(s, "Corte clásico", 30, 15.0);
    signup_user(s, u, cliente);
    char *id = book(s, u, barbero, servicio, START_UTC, notas);
    free(barbero);
    free(servicio);
    return id;
}

/* The booking's time as stored ("2031-05-04T08:30:00.000Z") in iCalendar
 * form ("20310504T083000Z"). */
static void ics_form(const char *iso, char out[17])
{
    snprintf(out, 17, "%.4s%.2s%.2sT%.2s%.2s%.2sZ", iso, iso + 5, iso + 8, iso + 11, iso + 14,
             iso + 17);
}

/* The unfolded .ics lines named name (and, for BEGIN, with that value). */
static size_t ics_count(const json_t *mail, const char *name, const char *value)
{
    size_t i, n = 0;
    json_t *l;
    json_array_foreach(json_object_get(mail, "ics"), i, l)
    {
        if (!strcmp(jstr(l, "name"), name) && (!value || !strcmp(jstr(l, "value"), value))) n++;
    }
    return n;
}

static void expect_contains(const char *hay, const char *needle, const char *what)
{
    if (!hay) fail_msg("%s is missing (looking for \"%s\")", what, needle);
    if (!strstr(hay, needle)) fail_msg("%s lacks \"%s\":\n%s", what, needle, hay);
}

/* --- the tests ----------------------------------------------------------------------------------
 */

static void confirmation_arrives_once_with_the_booking_details(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", "BARBERIA_SMTP_FROM=citas@barberia.test",
                         "BARBERIA_SHOP_NAME=Barbería Sol",
                         "BARBERIA_SHOP_ADDRESS=Calle Mayor 1, Madrid", NULL};
    srv_start_mailing(&S, &K, env);
    struct user u;
    char *id = book_one(&S, &u, "Ana María Pérez", "Degradado <b>corto</b> & barba; gracias");

    json_t *m = sink_the_one_message(&K, &S);
    /* BARBERIA_SMTP_TLS's default (try): a server that offers no STARTTLS
     * gets the message in plain text */
    assert_true(json_is_false(json_object_get(m, "tls")));
    /* the envelope and the headers name the client, and only the client */
    assert_string_equal(jstr(m, "mail_from"), "citas@barberia.test");
    json_t *rcpt = json_object_get(m, "rcpt_tos");
    assert_int_equal(json_array_size(rcpt), 1);
    assert_string_equal(json_string_value(json_array_get(rcpt, 0)), u.email);
    json_t *to = json_object_get(m, "to_addresses");
    assert_int_equal(json_array_size(to), 1);
    assert_string_equal(json_string_value(json_array_get(to, 0)), u.email);
    assert_string_equal(json_string_value(json_array_get(json_object_get(m, "to_names"), 0)),
                        "Ana María Pérez");
    expect_contains(jstr(m, "from"), "citas@barberia.test", "From");
    expect_contains(jstr(m, "subject"), "Cita confirmada", "the subject");
    expect_contains(jstr(m, "subject"), "Corte clásico", "the subject");
    expect_contains(jstr(m, "message_id"), "@barberia.test>", "Message-ID");

    /* the text a person reads: times in the shop's zone (CEST, +2) */
    const char *text = jstr(m, "text");
    expect_contains(text, "Ana María Pérez", "the text body");
    expect_contains(text, "Carlos Méndez", "the text body");
    expect_contains(text, "Corte clásico", "the text body");
    expect_contains(text, "domingo 4 de mayo de 2031, 10:30 (Europe/Madrid)", "the text body");
    expect_contains(text, "domingo 4 de mayo de 2031, 11:00 (Europe/Madrid)", "the text body");
    expect_contains(text, id, "the text body");
    expect_contains(text, "Degradado <b>corto</b> & barba; gracias", "the text body");
    expect_contains(text, "Dónde:    Barbería Sol, Calle Mayor 1, Madrid", "the text body");
    const char *html = jstr(m, "html");
    expect_contains(html, "Barbería Sol, Calle Mayor 1, Madrid", "the HTML");
    expect_contains(html, "Degradado &lt;b&gt;corto&lt;/b&gt; &amp; barba; gracias", "the HTML");
    expect_contains(html, "Ana María Pérez", "the HTML");
    assert_null(strstr(html, "<b>corto"));

    /* the calendar attachment matches the booking as the API reports it */
    struct resp r;
    http_get(&S, "/api/citas", u.token, &r);
    assert_int_equal(r.status, 200);
    json_t *cita = json_array_get(json_object_get(r.json, "citas"), 0);
    assert_string_equal(jstr(cita, "id"), id);
    char dtstart[17], dtend[17];
    ics_form(jstr(cita, "fecha_inicio"), dtstart);
    ics_form(jstr(cita, "fecha_fin"), dtend);
    resp_free(&r);
    assert_string_equal(jstr(m, "ics_filename"), "cita.ics");
    assert_string_equal(ics_field(m, "METHOD", "value"), "PUBLISH");
    assert_int_equal(ics_count(m, "BEGIN", "VEVENT"), 1);
    expect_contains(ics_field(m, "UID", "value"), id, "UID");
    assert_string_equal(ics_field(m, "DTSTART", "value"), dtstart);
    assert_string_equal(ics_field(m, "DTEND", "value"), dtend);
    assert_string_equal(dtstart, "20310504T083000Z");
    assert_string_equal(dtend, "20310504T090000Z");
    expect_contains(ics_field(m, "SUMMARY", "text"), "Corte clásico", "SUMMARY");
    expect_contains(ics_field(m, "DESCRIPTION", "text"), "Degradado <b>corto</b> & barba; gracias",
                    "DESCRIPTION");
    const char *loc = ics_field(m, "LOCATION", "text");
    assert_non_null(loc);
    assert_string_equal(loc, "Barbería Sol, Calle Mayor 1, Madrid");
    json_decref(m);

    /* the outbox knows it was delivered */
    char st[32];
    assert_string_equal(outbox_state(&S, id, st, sizeof st, NULL), "");
    char *sent = outbox_list(&S, "sent");
    expect_contains(sent, id, "outbox list --status sent");
    free(sent);
    assert_true(srv_wait_log(&S, "delivered (attempt 1)", 10000));
    free(id);
}

/* S with its mail going to the sink K, and one more setting (may be NULL). */
static void start_with_sink(const char *extra)
{
    const char *env[] = {extra, NULL};
    srv_start_mailing(&S, &K, env);
}

/* Without BARBERIA_TZ the shop's zone is UTC, as the product contract fixes
 * it: the e-mail's times are the stored ones. */
static void without_a_zone_set_the_times_are_utc(void **state)
{
    (void)state;
    start_with_sink("BARBERIA_TZ"); /* unset: the default */
    struct resp r;
    http_get(&S, "/api/config", NULL, &r);
    assert_string_equal(jstr(r.json, "zona"), "UTC");
    resp_free(&r);
    struct user u;
    char *id = book_one(&S, &u, "Ana Utc", NULL);
    json_t *m = sink_the_one_message(&K, &S);
    const char *text = jstr(m, "text");
    expect_contains(text, "domingo 4 de mayo de 2031, 08:30 (UTC)", "the text body");
    expect_contains(text, "domingo 4 de mayo de 2031, 09:00 (UTC)", "the text body");
    json_decref(m);
    free(id);
}

static void a_name_with_crlf_adds_no_header_or_recipient(void **state)
{
    (void)state;
    start_with_sink(NULL);
    struct user u;
    char *id = book_one(&S, &u, "Eva\r\nBcc: evil@x",
                        "hola\r\n.\r\nRCPT TO:<evil@x>\r\n--=_barberia_m_0--\r\nBcc: evil@x");
    json_t *m = sink_the_one_message(&K, &S);
    json_t *rcpt = json_object_get(m, "rcpt_tos");
    assert_int_equal(json_array_size(rcpt), 1);
    assert_string_equal(json_string_value(json_array_get(rcpt, 0)), u.email);
    assert_int_equal(json_array_size(json_object_get(m, "to_addresses")), 1);
    size_t i;
    json_t *h;
    json_array_foreach(json_object_get(m, "header_names"), i, h)
    {
        if (!strcasecmp(json_string_value(h), "Bcc") || !strcasecmp(json_string_value(h), "Cc"))
            fail_msg("the message has a %s header", json_string_value(h));
    }
    /* nowhere in the raw message does a line start with Bcc: */
    const char *raw = jstr(m, "raw");
    for (const char *line = raw; line && *line;) {
        if (!strncasecmp(line, "bcc:", 4)) fail_msg("a Bcc line: %.60s", line);
        const char *eol = strstr(line, "\r\n");
        line = eol ? eol + 2 : NULL;
    }
    /* the structure is intact and the name is shown as written, on one line */
    json_t *parts = json_object_get(m, "structure");
    assert_int_equal(json_array_size(parts), 5);
    assert_string_equal(json_string_value(json_array_get(parts, 4)), "text/calendar");
    expect_contains(jstr(m, "text"), "Eva  Bcc: evil@x", "the text body");
    expect_contains(ics_field(m, "UID", "value"), id, "UID");
    json_decref(m);
    free(id);
}

static void booking_is_answered_while_the_mail_server_is_down_and_mail_arrives_later(void **state)
{
    (void)state;
    srv_init(&S);
    int port = free_port();
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", port);
    const char *env[] = {url, "BARBERIA_SMTP_RETRY_FOR=3600", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Luis", NULL);
    /* the failure is recorded and retried, and the service stays healthy */
    if (!outbox_wait_state(&S, id, "retrying", 60000)) {
        char *log = srv_log(&S);
        fail_msg("the outbox never showed a retry; server log:\n%s", log);
    }
    char st[32], *row = NULL;
    outbox_state(&S, id, st, sizeof st, &row);
    expect_contains(row, u.email, "the outbox row");
    expect_contains(row, "smtp:", "the outbox row's last error");
    /* what it is and how it goes, last */
    size_t rl = strlen(row);
    while (rl && row[rl - 1] == '\n')
        row[--rl] = '\0';
    const char *tail = "\tconfirmacion\temail";
    if (rl < strlen(tail) || strcmp(row + rl - strlen(tail), tail) != 0)
        fail_msg("the row does not end with its kind and channel: %s", row);
    free(row);
    expect_healthy(&S);
    assert_true(srv_wait_log(&S, "next attempt in", 10000));

    /* the mail server comes up on the same port: the next retry delivers */
    smtp_sink_start(&K, S.dir, port, NULL);
    json_t *m = sink_the_one_message(&K, &S);
    expect_contains(jstr(m, "text"), id, "the text body");
    json_decref(m);
    assert_true(outbox_wait_state(&S, id, "", 10000));
    char *sent = outbox_list(&S, "sent");
    expect_contains(sent, id, "outbox list --status sent");
    free(sent);
    free(id);
}

static void undelivered_mail_is_sent_once_after_a_restart(void **state)
{
    (void)state;
    srv_init(&S);
    int port = free_port();
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", port);
    const char *env[] = {url, "BARBERIA_SMTP_RETRY_FOR=3600", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Marta", NULL);
    assert_true(outbox_wait_state(&S, id, "retrying", 60000));
    assert_int_equal(srv_stop(&S), 0);

    /* still queued while nothing runs */
    char st[32];
    assert_string_equal(outbox_state(&S, id, st, sizeof st, NULL), "retrying");
    smtp_sink_start(&K, S.dir, port, NULL);
    srv_start(&S, env, NULL); /* same data folder */
    json_t *m = sink_the_one_message(&K, &S);
    expect_contains(jstr(m, "text"), id, "the text body");
    json_decref(m);
    assert_true(outbox_wait_state(&S, id, "", 10000));
    /* a stop and a start more change nothing: it was sent once. The new
     * worker's first pass is over once a booking made now has its message
     * and the outbox has nothing left to deliver */
    assert_int_equal(srv_stop(&S), 0);
    srv_start(&S, env, NULL);
    char *barbero = make_barbero(&S, "Otro Barbero");
    char *servicio = make_servicio(&S, "Otro corte", 30, 15.0);
    char *later = book(&S, &u, barbero, servicio, "2031-05-05T08:30:00Z", NULL);
    assert_true(smtp_sink_wait(&K, 2, WAIT_MAIL_MS));
    assert_true(wait_until(outbox_settled, &S, WAIT_MAIL_MS));
    char **paths;
    size_t n = smtp_sink_files(&K, &paths);
    assert_int_equal(n, 2);
    json_t *m2 = smtp_sink_message(paths[1]);
    expect_contains(jstr(m2, "text"), later, "the second message");
    json_decref(m2);
    smtp_sink_free_paths(paths, n);
    free(later);
    free(barbero);
    free(servicio);
    free(id);
}

static void failing_mail_is_retried_then_dropped(void **state)
{
    (void)state;
    srv_init(&S);
    int port = free_port();
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", port);
    const char *env[] = {url, "BARBERIA_SMTP_RETRY_FOR=6", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Pablo", NULL);
    char st[32];
    outbox_state(&S, id, st, sizeof st, NULL);
    /* queued first (pending), then failing (retrying) - or, on a very slow
     * machine, already past its window */
    assert_true(!strcmp(st, "pending") || !strcmp(st, "retrying") || !strcmp(st, "dropped"));
    expect_healthy(&S);
    if (!outbox_wait_state(&S, id, "dropped", 90000)) {
        char *log = srv_log(&S);
        fail_msg("the message was never dropped; server log:\n%s", log);
    }
    assert_true(srv_wait_log(&S, "dropped after", 10000));
    char *dropped = outbox_list(&S, "dropped");
    expect_contains(dropped, id, "outbox list --status dropped");
    free(dropped);
    expect_healthy(&S);
    free(id);
}

static void retrying_is_visible_while_the_server_is_down(void **state)
{
    (void)state;
    srv_init(&S);
    int port = free_port();
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", port);
    const char *env[] = {url, "BARBERIA_SMTP_RETRY_FOR=3600", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Rosa", NULL);
    assert_true(outbox_wait_state(&S, id, "retrying", 60000));
    char *all = outbox_list(&S, NULL);
    expect_contains(all, "\tretrying\t", "outbox list");
    free(all);
    char *pending = outbox_list(&S, "pending");
    expect_contains(pending, id, "outbox list --status pending");
    free(pending);
    char *retrying = outbox_list(&S, "retrying");
    expect_contains(retrying, id, "outbox list --status retrying");
    free(retrying);
    /* the account's e-mails wait in the same list, their links never shown */
    char body[256];
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", u.email);
    struct resp r;
    http_json(&S, "POST", "/api/auth/recuperar", NULL, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    int64_t until = clock_mono_ms() + 60000;
    char *list = NULL;
    for (;;) {
        list = outbox_list(&S, "retrying");
        if (strstr(list, "\trestablecer\temail\n") || clock_mono_ms() > until) break;
        free(list);
        sleep_ms(200);
    }
    expect_contains(list, u.email, "outbox list --status retrying");
    expect_contains(list, "\trestablecer\temail\n", "outbox list --status retrying");
    if (strstr(list, "/recuperar") || strstr(list, "token")) fail_msg("a link is listed: %s", list);
    free(list);
    char *skipped = outbox_list(&S, "skipped");
    assert_string_equal(skipped, "");
    free(skipped);
    free(id);
}

#define SMTP_PASSWORD "Pa55-w0rd-que-nadie-debe-ver"

static void starttls_and_auth_deliver_without_leaking_the_password(void **state)
{
    (void)state;
    srv_init(&S);
    char cert[400], key[400];
    make_cert(S.dir, cert, key, sizeof cert);
    const char *extra[] = {"--tls-cert",  cert,       "--tls-key",       key,
                           "--auth-user", "barberia", "--auth-password", SMTP_PASSWORD,
                           NULL};
    smtp_sink_start(&K, S.dir, 0, extra);
    char url[64], ca[440];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    snprintf(ca, sizeof ca, "BARBERIA_SMTP_CA_FILE=%s", cert);
    const char *env[] = {url, ca, "BARBERIA_SMTP_USER=barberia",
                         "BARBERIA_SMTP_PASSWORD=" SMTP_PASSWORD, NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Sofía", NULL);
    json_t *m = sink_the_one_message(&K, &S);
    assert_true(json_is_true(json_object_get(m, "tls")));
    assert_string_equal(jstr(m, "auth_login"), "barberia");
    expect_contains(jstr(m, "text"), id, "the text body");
    json_decref(m);
    char *log = srv_log(&S);
    assert_null(strstr(log, SMTP_PASSWORD));
    free(log);
    char *sinklog = read_file(K.log, NULL);
    assert_null(strstr(sinklog, SMTP_PASSWORD));
    free(sinklog);
    free(id);
}

static void wrong_credentials_are_reported_without_the_password(void **state)
{
    (void)state;
    srv_init(&S);
    char cert[400], key[400];
    make_cert(S.dir, cert, key, sizeof cert);
    const char *extra[] = {"--tls-cert",  cert,       "--tls-key",       key,
                           "--auth-user", "barberia", "--auth-password", "la-buena",
                           NULL};
    smtp_sink_start(&K, S.dir, 0, extra);
    char url[64], ca[440];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    snprintf(ca, sizeof ca, "BARBERIA_SMTP_CA_FILE=%s", cert);
    const char *env[] = {url,
                         ca,
                         "BARBERIA_SMTP_USER=barberia",
                         "BARBERIA_SMTP_PASSWORD=" SMTP_PASSWORD,
                         "BARBERIA_SMTP_RETRY_FOR=3600",
                         NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Tomás", NULL);
    assert_true(outbox_wait_state(&S, id, "retrying", 60000));
    char st[32], *row = NULL;
    outbox_state(&S, id, st, sizeof st, &row);
    expect_contains(row, "smtp:", "the last error");
    expect_contains(row, "535", "the last error"); /* the server's "authentication failed" */
    assert_null(strstr(row, SMTP_PASSWORD));
    free(row);
    assert_int_equal(smtp_sink_count(&K), 0);
    char *log = srv_log(&S);
    assert_null(strstr(log, SMTP_PASSWORD));
    free(log);
    free(id);
}

/* The cuenta_correo row of the reset link sent to email: its link, which
 * only the row and the message hold (caller frees). */
static char *reset_link(const struct srv *s, const char *email)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT enlace FROM cuenta_correo WHERE recipient = '%s' AND kind = 'restablecer'",
             email);
    char *out = NULL;
    assert_int_equal(db_exec(s, sql, &out), 0);
    out[strcspn(out, "\n")] = '\0';
    return out;
}

/* BARBERIA_SMTP_TLS=require: a server that offers no STARTTLS (as when
 * someone between strips it from its EHLO answer) gets nothing, neither the
 * confirmation nor a reset link; each attempt fails with one warn line that
 * says why and holds no link, and the message waits. The same message, once
 * the setting is back to its default, is delivered in plain text. */
static void required_starttls_sends_nothing_to_a_server_that_offers_none(void **state)
{
    (void)state;
    srv_init(&S);
    smtp_sink_start(&K, S.dir, 0, NULL); /* no --tls-cert: no STARTTLS offered */
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    const char *env[] = {url, "BARBERIA_SMTP_TLS=require", "BARBERIA_SMTP_RETRY_FOR=3600", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Valeria", NULL); /* the booking is answered all the same */
    char body[256];
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", u.email);
    struct resp r;
    http_json(&S, "POST", "/api/auth/recuperar", NULL, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* retried, one warn line a failure, each saying why */
    assert_true(srv_wait_log(&S, "failed (attempt 2)", 60000));
    assert_true(srv_wait_log(&S, "account message", 60000));
    char *link = reset_link(&S, u.email);
    assert_true(strlen(link) > 20);
    char *log = srv_log(&S);
    size_t fails = 0;
    for (const char *p = log; (p = strstr(p, "warn mail: delivery of ")); p++) {
        size_t n = strcspn(p, "\n");
        char *line = strndup(p, n);
        expect_contains(line, "failed (attempt ", "a failure's line");
        expect_contains(line, "BARBERIA_SMTP_TLS=require", "a failure's line");
        fails++;
        free(line);
    }
    if (fails < 3) fail_msg("%zu failure lines, expected 3 or more:\n%s", fails, log);
    if (strstr(log, link)) fail_msg("the reset link is in the log:\n%s", log);
    expect_contains(log, "(STARTTLS required)", "the start-up line");
    free(log);
    char st[32];
    assert_string_equal(outbox_state(&S, id, st, sizeof st, NULL), "retrying");
    assert_int_equal(smtp_sink_count(&K), 0);
    char *sinklog = read_file(K.log, NULL);
    assert_null(strstr(sinklog, link));
    free(sinklog);

    /* the default again: the confirmation and the link leave, in plain text */
    assert_int_equal(srv_stop(&S), 0);
    const char *plain[] = {url, "BARBERIA_SMTP_RETRY_FOR=3600", NULL};
    srv_start(&S, plain, NULL);
    assert_true(smtp_sink_wait(&K, 2, WAIT_MAIL_MS));
    json_t *m = smtp_sink_messages(&K, u.email, id);
    assert_int_equal(json_array_size(m), 1);
    assert_true(json_is_false(json_object_get(json_array_get(m, 0), "tls")));
    json_decref(m);
    free(link);
    free(id);
}

/* ... and a server that offers STARTTLS gets its messages over TLS. */
static void required_starttls_delivers_over_tls(void **state)
{
    (void)state;
    srv_init(&S);
    char cert[400], key[400];
    make_cert(S.dir, cert, key, sizeof cert);
    const char *extra[] = {"--tls-cert", cert, "--tls-key", key, NULL};
    smtp_sink_start(&K, S.dir, 0, extra);
    char url[64], ca[440];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    snprintf(ca, sizeof ca, "BARBERIA_SMTP_CA_FILE=%s", cert);
    const char *env[] = {url, ca, "BARBERIA_SMTP_TLS=require", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Wanda", NULL);
    json_t *m = sink_the_one_message(&K, &S);
    assert_true(json_is_true(json_object_get(m, "tls")));
    expect_contains(jstr(m, "text"), id, "the text body");
    json_decref(m);
    free(id);
}

static void an_untrusted_certificate_is_refused(void **state)
{
    (void)state;
    srv_init(&S);
    char cert[400], key[400];
    make_cert(S.dir, cert, key, sizeof cert);
    const char *extra[] = {"--tls-cert", cert, "--tls-key", key, NULL};
    smtp_sink_start(&K, S.dir, 0, extra);
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    /* no CA file: the self-signed certificate cannot be trusted, and a
     * STARTTLS that fails verification must not fall back to plain text */
    const char *env[] = {url, "BARBERIA_SMTP_RETRY_FOR=3600", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Ulises", NULL);
    assert_true(outbox_wait_state(&S, id, "retrying", 60000));
    assert_int_equal(smtp_sink_count(&K), 0);
    free(id);
}

/* Opens HOLE: a loopback server that accepts connections (the kernel does)
 * and never says a word. Returns its port. */
static int silent_server(void)
{
    int port = 0;
    HOLE = silent_listener(&port);
    return port;
}

/* Waits until the server's worker has connected to HOLE; returns the
 * accepted connection (caller closes), -1 when none came in timeout_ms. */
static int hole_accept(int timeout_ms)
{
    struct pollfd p = {HOLE, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 ? accept(HOLE, NULL, NULL) : -1;
}

static void booking_never_waits_on_a_silent_mail_server(void **state)
{
    (void)state;
    srv_init(&S);
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", silent_server());
    const char *env[] = {url, "BARBERIA_SMTP_TIMEOUT_MS=20000", "BARBERIA_SMTP_RETRY_FOR=3600",
                         NULL};
    srv_start(&S, env, NULL);
    char *barbero = make_barbero(&S, "Carlos Méndez");
    char *servicio = make_servicio(&S, "Corte clásico", 30, 15.0);
    struct user u;
    signup_user(&S, &u, "Victoria");
    /* the first booking wakes the worker, which hangs on the silent
     * server; bookings made meanwhile are answered at once */
    int64_t t0 = clock_mono_ms();
    char *first = book(&S, &u, barbero, servicio, START_UTC, NULL);
    int64_t took1 = clock_mono_ms() - t0;
    int conn = hole_accept(60000); /* the worker is now stuck on the silent server */
    assert_true(conn >= 0);
    t0 = clock_mono_ms();
    char *second = book(&S, &u, barbero, servicio, "2031-05-04T10:00:00Z", NULL);
    int64_t took2 = clock_mono_ms() - t0;
    if (took1 >= 10000 || took2 >= 10000)
        fail_msg("bookings took %lld and %lld ms while the mail server was silent",
                 (long long)took1, (long long)took2);
    expect_healthy(&S);
    /* the attempt ends at the configured bound, as a timeout */
    assert_true(srv_wait_log(&S, "failed (attempt 1)", 60000));
    char *log = srv_log(&S);
    expect_contains(log, "Timeout", "the server log");
    free(log);
    /* from now on connections are refused, so retries end quickly */
    close(conn);
    close(HOLE);
    HOLE = -1;
    free(first);
    free(second);
    free(barbero);
    free(servicio);
}

static void a_recipient_refused_for_good_is_dropped_at_once(void **state)
{
    (void)state;
    srv_init(&S);
    const char *extra[] = {"--reject-rcpt", "@test.example", NULL};
    smtp_sink_start(&K, S.dir, 0, extra);
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    const char *env[] = {url, "BARBERIA_SMTP_RETRY_FOR=86400", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Nadia", NULL);
    /* a 550 is not retried for a day: the message is dropped after one try */
    if (!outbox_wait_state(&S, id, "dropped", 60000)) {
        char *log = srv_log(&S);
        fail_msg("the refused message was not dropped; server log:\n%s", log);
    }
    char st[32], *row = NULL;
    outbox_state(&S, id, st, sizeof st, &row);
    assert_non_null(row);
    char *attempts = strchr(row, '\t');
    assert_non_null(attempts);
    attempts = strchr(attempts + 1, '\t');
    assert_non_null(attempts);
    assert_int_equal(strtol(attempts + 1, NULL, 10), 1);
    expect_contains(row, "550", "the outbox row's last error");
    free(row);
    assert_true(srv_wait_log(&S, "refused for good", 10000));
    assert_int_equal(smtp_sink_count(&K), 0);
    expect_healthy(&S);
    free(id);
}

static void a_stop_cancels_a_delivery_in_progress_and_keeps_the_message(void **state)
{
    (void)state;
    srv_init(&S);
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", silent_server());
    /* an attempt that would last ten minutes on its own */
    const char *env[] = {url, "BARBERIA_SMTP_TIMEOUT_MS=600000", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Olga", NULL);
    /* wait until the worker has connected to the silent server */
    int conn = hole_accept(60000);
    assert_true(conn >= 0);
    /* the stop does not wait for the attempt's own bound */
    int status = srv_stop_within(&S, 30000);
    close(conn);
    assert_int_equal(status, 0);
    /* the message is still queued for the next start */
    char st[32];
    outbox_state(&S, id, st, sizeof st, NULL);
    assert_true(!strcmp(st, "pending") || !strcmp(st, "retrying"));
    close(HOLE);
    HOLE = -1;
    free(id);
}

/* The message of a cancelled delivery is kept even when its retry window
 * ended during the attempt: a stop is not a failure of the mail server. */
static void a_stop_never_drops_the_message_it_cancelled_and_the_next_start_sends_it(void **state)
{
    (void)state;
    srv_init(&S);
    int port = silent_server();
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", port);
    /* a one-second window, and an attempt that outlasts it */
    const char *env[] = {url, "BARBERIA_SMTP_TIMEOUT_MS=600000", "BARBERIA_SMTP_RETRY_FOR=1", NULL};
    srv_start(&S, env, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Paula", NULL);
    int conn = hole_accept(60000);
    assert_true(conn >= 0);
    /* the window ends while the attempt hangs */
    char *queued = db_query(&S, "SELECT created_at FROM mail_outbox WHERE cita_id = '%s'", id);
    int64_t at = 0;
    assert_true(iso8601_parse(queued, strlen(queued), &at));
    free(queued);
    while (clock_now_ms() < at + 1500)
        sleep_ms(100);
    assert_int_equal(srv_stop_within(&S, 30000), 0);
    close(conn);
    close(HOLE);
    HOLE = -1;
    char st[32];
    outbox_state(&S, id, st, sizeof st, NULL);
    if (strcmp(st, "pending") != 0 && strcmp(st, "retrying") != 0) {
        char *log = srv_log(&S);
        fail_msg("the cancelled message is \"%s\", not queued; server log:\n%s", st, log);
    }
    char *log = srv_log(&S);
    assert_null(strstr(log, "dropped"));
    free(log);
    /* the next start, with a mail server on that port, sends it at once */
    smtp_sink_start(&K, S.dir, port, NULL);
    srv_start(&S, env, NULL);
    json_t *m = sink_the_one_message(&K, &S);
    expect_contains(jstr(m, "text"), id, "the text body");
    json_decref(m);
    assert_true(outbox_wait_state(&S, id, "", 10000));
    free(id);
}

static void without_smtp_nothing_is_queued(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    struct user u;
    char *id = book_one(&S, &u, "Walter", NULL);
    assert_true(srv_wait_log(&S, "no mail transport configured", 10000));
    char *all = outbox_list(&S, NULL);
    assert_string_equal(all, "");
    free(all);
    char *sent = outbox_list(&S, "sent");
    assert_string_equal(sent, "");
    free(sent);
    char *log = srv_log(&S);
    expect_contains(log, "mail none", "the start-up line");
    free(log);
    free(id);
}

static void unusable_smtp_settings_stop_the_start(void **state)
{
    (void)state;
    srv_init(&S);
    static const struct {
        const char *env[4];
        const char *says;
    } cases[] = {
        {{"BARBERIA_SMTP_URL=ftp://127.0.0.1:25"}, "smtp:// or smtps://"},
        {{"BARBERIA_SMTP_URL=smtp://"}, "BARBERIA_SMTP_URL"},
        {{"BARBERIA_SMTP_URL=not a url"}, "BARBERIA_SMTP_URL"},
        {{"BARBERIA_SMTP_URL=smtp://user:" SMTP_PASSWORD "@127.0.0.1:25"}, "credentials"},
        {{"BARBERIA_SMTP_URL=smtp://127.0.0.1:25", "BARBERIA_TZ=Europe/Nowhere"}, "BARBERIA_TZ"},
        {{"BARBERIA_SMTP_URL=smtp://127.0.0.1:25", "BARBERIA_TZ=../../etc/passwd"}, "BARBERIA_TZ"},
        {{"BARBERIA_SMTP_URL=smtp://127.0.0.1:25", "BARBERIA_SMTP_FROM=Barberia <x@y.z>"},
         "BARBERIA_SMTP_FROM"},
        {{"BARBERIA_SMTP_URL=smtp://127.0.0.1:25", "BARBERIA_SMTP_PASSWORD=" SMTP_PASSWORD},
         "BARBERIA_SMTP_USER"},
        {{"BARBERIA_SMTP_URL=smtp://127.0.0.1:25", "BARBERIA_SMTP_CA_FILE=/no/such/ca.pem"},
         "BARBERIA_SMTP_CA_FILE"},
        {{"BARBERIA_SMTP_URL=smtp://127.0.0.1:25", "BARBERIA_SMTP_TLS=always"},
         "BARBERIA_SMTP_TLS"},
        {{"BARBERIA_SMTP_URL=smtp://127.0.0.1:25", "BARBERIA_REMINDER_OFFSETS=pronto"},
         "BARBERIA_REMINDER_OFFSETS"},
        /* wrong even where REMINDER_HOURS decides for now */
        {{"BARBERIA_SMTP_URL=smtp://127.0.0.1:25", "BARBERIA_REMINDER_HOURS=5",
          "BARBERIA_REMINDER_OFFSETS=pronto"},
         "BARBERIA_REMINDER_OFFSETS"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[] = {BARBERIA_BIN, "serve", "--listen", "127.0.0.1:0",
                              "--data",     S.data,  NULL};
        char *out = NULL, *err = NULL;
        int st = run_program(argv, cases[i].env, 60000, &out, &err);
        if (st == 0 || st == -1) fail_msg("case %zu: serve did not refuse to start (%d)", i, st);
        /* one line names the setting at fault, and never the password */
        const char *line = strstr(err, "barberia: serve: ");
        if (!line) fail_msg("case %zu: no error line in: %s", i, err);
        size_t n = strcspn(line, "\n");
        char *one = strndup(line, n);
        expect_contains(one, cases[i].says, "the error line");
        free(one);
        assert_null(strstr(err, SMTP_PASSWORD));
        assert_null(strstr(err, "Sanitizer"));
        free(out);
        free(err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(confirmation_arrives_once_with_the_booking_details, teardown),
        cmocka_unit_test_teardown(without_a_zone_set_the_times_are_utc, teardown),
        cmocka_unit_test_teardown(a_name_with_crlf_adds_no_header_or_recipient, teardown),
        cmocka_unit_test_teardown(
            booking_is_answered_while_the_mail_server_is_down_and_mail_arrives_later, teardown),
        cmocka_unit_test_teardown(undelivered_mail_is_sent_once_after_a_restart, teardown),
        cmocka_unit_test_teardown(failing_mail_is_retried_then_dropped, teardown),
        cmocka_unit_test_teardown(retrying_is_visible_while_the_server_is_down, teardown),
        cmocka_unit_test_teardown(starttls_and_auth_deliver_without_leaking_the_password, teardown),
        cmocka_unit_test_teardown(wrong_credentials_are_reported_without_the_password, teardown),
        cmocka_unit_test_teardown(required_starttls_sends_nothing_to_a_server_that_offers_none,
                                  teardown),
        cmocka_unit_test_teardown(required_starttls_delivers_over_tls, teardown),
        cmocka_unit_test_teardown(an_untrusted_certificate_is_refused, teardown),
        cmocka_unit_test_teardown(booking_never_waits_on_a_silent_mail_server, teardown),
        cmocka_unit_test_teardown(a_recipient_refused_for_good_is_dropped_at_once, teardown),
        cmocka_unit_test_teardown(a_stop_cancels_a_delivery_in_progress_and_keeps_the_message,
                                  teardown),
        cmocka_unit_test_teardown(
            a_stop_never_drops_the_message_it_cancelled_and_the_next_start_sends_it, teardown),
        cmocka_unit_test_teardown(without_smtp_nothing_is_queued, teardown),
        cmocka_unit_test_teardown(unusable_smtp_settings_stop_the_start, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
