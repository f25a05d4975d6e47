/*
 * test_util.c - the small utilities: capped buffers, UTF-8 checks, e-mail
 * normalisation, the outbox's backoff schedule, the redaction of secrets
 * in the request paths the log writes, the client key the throttles count,
 * whether a process another one left behind is still there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "identity/identity.h"
#include "core/outbox.h"
#include "http/http.h"
#include "util/buf.h"
#include "util/common.h"
#include "util/err.h"
#include "util/log.h"
#include "util/procid.h"

static void buffer_refuses_to_grow_past_its_cap_and_stays_intact(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 10);
    assert_int_equal(buf_append(&b, "0123456789", 10), BR_OK);
    assert_int_equal(buf_append(&b, "x", 1), BR_TOOLARGE);
    assert_int_equal(b.len, 10);
    assert_string_equal(buf_cstr(&b), "0123456789");
    buf_reset(&b);
    assert_int_equal(buf_printf(&b, "%s-%d", "ab", 7), BR_OK);
    assert_string_equal(buf_cstr(&b), "ab-7");
    assert_int_equal(buf_printf(&b, "%0300d", 1), BR_TOOLARGE);
    assert_string_equal(buf_cstr(&b), "ab-7");
    size_t n;
    char *p = buf_steal(&b, &n);
    assert_int_equal(n, 4);
    assert_string_equal(p, "ab-7");
    free(p);
    assert_int_equal(b.len, 0);
    buf_free(&b);
}

static void long_printf_goes_through_the_slow_path(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 4096);
    assert_int_equal(buf_printf(&b, "%0999d", 5), BR_OK);
    assert_int_equal(b.len, 999);
    assert_int_equal(b.p[998], '5');
    buf_free(&b);
}

static void utf8_validation_refuses_malformed_sequences(void **state)
{
    (void)state;
    assert_true(utf8_valid("añ€😀", strlen("añ€😀")));
    assert_int_equal(utf8_count("añ€😀", strlen("añ€😀")), 4);
    static const char *const bad[] = {
        "\x80",
        "\xc3",
        "\xc0\x80",
        "\xe0\x80\x80",
        "\xed\xa0\x80" /* surrogate */,
        "\xf4\x90\x80\x80" /* > U+10FFFF */,
        "\xff",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (utf8_valid(bad[i], strlen(bad[i]))) fail_msg("accepted #%zu", i);
    assert_false(utf8_valid("a\0b", 3));
}

struct email_case {
    const char *in;
    const char *out; /* NULL: refused */
};

static void emails_are_trimmed_lowercased_and_checked(void **state)
{
    (void)state;
    static const struct email_case cases[] = {
        {"Ana@Example.COM", "ana@example.com"},
        {"  ana@example.com \t", "ana@example.com"},
        {"ana.maria+citas@sub.example.es", "ana.maria+citas@sub.example.es"},
        {"josé@correo.es", NULL}, /* SMTP without SMTPUTF8 cannot carry it */
        {"", NULL},
        {"   ", NULL},
        {"ana", NULL},
        {"ana@", NULL},
        {"@example.com", NULL},
        {"ana@@example.com", NULL},
        {"ana@b@example.com", NULL},
        {"ana@localhost", NULL},
        {"ana@.example.com", NULL},
        {"ana@example.com.", NULL},
        {"ana@example..com", NULL},
        {"ana maria@example.com", NULL},
        {"ana@example.com\r\nBcc: x@y.z", NULL},
        {"<ana@example.com>", NULL},
        {".ana@example.com", NULL},
        {"ana.@example.com", NULL},
        /* the domain a deleted account's sign-in is moved to is nobody's */
        {"7d0f1c2a-3b4c-4d5e-8f60-718293a4b5c6@eliminado.invalid", NULL},
        {"7D0F1C2A-3B4C-4D5E-8F60-718293A4B5C6@Eliminado.Invalid ", NULL},
        {"ana@otro.eliminado.invalid", "ana@otro.eliminado.invalid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        bool ok = ident_normalize_email(cases[i].in, &out);
        if (ok != (cases[i].out != NULL)) fail_msg("\"%s\": ok=%d", cases[i].in, ok);
        if (ok) {
            if (strcmp(out, cases[i].out)) fail_msg("\"%s\" -> \"%s\"", cases[i].in, out);
            free(out);
        }
    }
}

static void backoff_doubles_from_one_second_up_to_five_minutes(void **state)
{
    (void)state;
    assert_int_equal(outbox_backoff_ms(1), 1000);
    assert_int_equal(outbox_backoff_ms(2), 2000);
    assert_int_equal(outbox_backoff_ms(3), 4000);
    assert_int_equal(outbox_backoff_ms(9), 256000);
    assert_int_equal(outbox_backoff_ms(10), 300000);
    assert_int_equal(outbox_backoff_ms(1000), 300000);
    assert_int_equal(outbox_backoff_ms(0), 1000);
}

/* A link's token (64 characters of base64url) never reaches the log, whether
 * it is the whole segment or has something stuck to it; ids, words and file
 * names stay readable. */
static void request_paths_are_logged_without_their_tokens(void **state)
{
    (void)state;
#define TOK "LR8j_ZDHqVpnCPheP-QXrkEXcJrO1XWxkJq3DOVIybIQ2Vx2OFBbiqscn7r0zxiU"
    /* 63 token characters: no secret of the service, a name stays */
    static const char name63[] = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";
    assert_int_equal(strlen(TOK), 64);
    assert_int_equal(strlen(name63), 63);
    static const struct {
        const char *path, *logged;
    } cases[] = {
        {"/c/" TOK, "GET /c/<token>"},
        {"/c/" TOK ".", "GET /c/<token>."},
        {"/c/" TOK ")", "GET /c/<token>)"},
        {"/c/" TOK "%29", "GET /c/<token>%29"},
        {"/api/gestion/" TOK ";x", "GET /api/gestion/<token>;x"},
        {"/api/gestion/" TOK "/cancelar", "GET /api/gestion/<token>/cancelar"},
        {"/api/gestion/(" TOK "x).ics", "GET /api/gestion/(<token>).ics"},
        {"/c/" TOK "\"" TOK, "GET /c/<token>\\x22<token>"},
        {"/c/q3Zr-8Kx_0aVbN4mW7pLc2TyHs9dEfGu", "GET /c/<token>"},
        {"/c/q3Zr-8Kx_0aVbN4mW7pLc2TyHs9dEfGu.", "GET /c/q3Zr-8Kx_0aVbN4mW7pLc2TyHs9dEfGu."},
        {"/app/app.4f3c2a1b9d8e7f60.js", "GET /app/app.4f3c2a1b9d8e7f60.js"},
        {"/x/antes-1795292754516.png", "GET /x/antes-1795292754516.png"},
        {"/api/citas/6F1C2B4A-9D3E-4F5A-8B7C-0123456789AB/cancelar",
         "GET /api/citas/6F1C2B4A-9D3E-4F5A-8B7C-0123456789AB/cancelar"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[LOG_REQUEST_MAX];
        const char *got = log_request("GET", cases[i].path, out, sizeof out);
        if (strcmp(got, cases[i].logged)) fail_msg("\"%s\" -> \"%s\"", cases[i].path, got);
    }
    char path[128], out[LOG_REQUEST_MAX];
    snprintf(path, sizeof path, "/x/%s.js", name63);
    assert_string_equal(log_request("GET", path, out, sizeof out) + 4, path);
    /* cut short, the line still holds no part of the token */
    for (size_t n = 1; n < 40; n++) {
        char small[40];
        const char *got = log_request("POST", "/api/gestion/" TOK ".", small, n);
        if (strlen(got) >= n || strstr(got, "LR8j")) fail_msg("%zu bytes: \"%s\"", n, got);
    }
#undef TOK
}

/* The key of a textual address, through the sockaddr the server gets. */
/* A detail kept aside survives whatever a cleanup sets meanwhile, retry
 * hint included; a prefix keeps the hint too. */
static void a_kept_error_survives_a_cleanup_with_its_retry_hint(void **state)
{
    (void)state;
    struct err_kept k;
    err_set_retry(BR_BUSY, 7, "Servicio ocupado");
    err_keep(&k);
    err_set(BR_STORE, "rollback failed: disk I/O error");
    assert_int_equal(err_restore(BR_BUSY, &k), BR_BUSY);
    assert_string_equal(err_msg(), "Servicio ocupado");
    assert_int_equal(err_retry_after(), 7);
    assert_int_equal(err_prefix(BR_BUSY, "/data/barberia.db"), BR_BUSY);
    assert_string_equal(err_msg(), "/data/barberia.db: Servicio ocupado");
    assert_int_equal(err_retry_after(), 7);
    /* a plain detail stays plain */
    err_set(BR_STORE, "no such table: citas");
    err_keep(&k);
    err_set_retry(BR_BUSY, 1, "other");
    err_restore(BR_STORE, &k);
    assert_string_equal(err_msg(), "no such table: citas");
    assert_int_equal(err_retry_after(), 0);
    err_prefix(BR_STORE, "migration 12");
    assert_string_equal(err_msg(), "migration 12: no such table: citas");
    assert_int_equal(err_retry_after(), 0);
}

static void client_key_of(const char *text, char *out, size_t n)
{
    struct sockaddr_in v4 = {.sin_family = AF_INET};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET, text, &v4.sin_addr) == 1)
        http_client_key((const struct sockaddr *)&v4, out, n);
    else if (inet_pton(AF_INET6, text, &v6.sin6_addr) == 1)
        http_client_key((const struct sockaddr *)&v6, out, n);
    else
        fail_msg("not an address: %s", text);
}

static void a_client_is_an_ipv4_address_or_an_ipv6_slash_64(void **state)
{
    (void)state;
    static const struct {
        const char *addr, *key;
    } cases[] = {
        {"203.0.113.7", "203.0.113.7"},
        {"::ffff:203.0.113.7", "203.0.113.7"},
        {"2001:db8:1:2::1", "2001:db8:1:2::/64"},
        {"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
        {"2001:db8:1:3::1", "2001:db8:1:3::/64"},
        {"::1", "::/64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char key[64];
        client_key_of(cases[i].addr, key, sizeof key);
        assert_string_equal(key, cases[i].key);
    }
    char key[64] = "x";
    http_client_key(NULL, key, sizeof key);
    assert_string_equal(key, "");
}

/* What another party says may quote a secret it was given: every
 * occurrence goes, whatever the secret holds, and the text stays within
 * its buffer. */
static void a_secret_quoted_in_a_message_is_scrubbed(void **state)
{
    (void)state;
    char b[64];
    snprintf(b, sizeof b, "bad token Bearer s3cr3t; again s3cr3t");
    secret_scrub(b, sizeof b, "s3cr3t");
    assert_string_equal(b, "bad token Bearer ***; again ***");
    snprintf(b, sizeof b, "nothing here");
    secret_scrub(b, sizeof b, "s3cr3t");
    assert_string_equal(b, "nothing here");
    secret_scrub(b, sizeof b, NULL);
    secret_scrub(b, sizeof b, "");
    assert_string_equal(b, "nothing here");
    /* a secret shorter than its mask, or made of it, ends */
    snprintf(b, sizeof b, "a*b*");
    secret_scrub(b, sizeof b, "*");
    assert_string_equal(b, "a***b***");
    /* cut to fit: a buffer of 8 bytes */
    char small[8] = "xyxyxy";
    secret_scrub(small, sizeof small, "y");
    assert_string_equal(small, "x***x**");
}

/* A process killed but not yet reaped by its parent (a zombie) is gone:
 * the crash sweeps of the next command must not wait on it. */
static void a_killed_process_is_gone_before_it_is_reaped(void **state)
{
    (void)state;
    assert_true(procid_pid_alive((long)getpid()));
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    assert_true(procid_pid_alive((long)child));
    assert_int_equal(kill(child, SIGKILL), 0);
    /* dead once the kernel has made it a zombie: a few milliseconds */
    bool gone = false;
    for (int i = 0; i < 2000 && !gone; i++) {
        gone = !procid_pid_alive((long)child);
        if (!gone) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_true(gone);
    /* still unreaped: it was the zombie that counted as gone */
    assert_int_equal(waitpid(child, NULL, WNOHANG), child);
    assert_false(procid_pid_alive((long)child));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buffer_refuses_to_grow_past_its_cap_and_stays_intact),
        cmocka_unit_test(long_printf_goes_through_the_slow_path),
        cmocka_unit_test(utf8_validation_refuses_malformed_sequences),
        cmocka_unit_test(emails_are_trimmed_lowercased_and_checked),
        cmocka_unit_test(backoff_doubles_from_one_second_up_to_five_minutes),
        cmocka_unit_test(request_paths_are_logged_without_their_tokens),
        cmocka_unit_test(a_client_is_an_ipv4_address_or_an_ipv6_slash_64),
        cmocka_unit_test(a_kept_error_survives_a_cleanup_with_its_retry_hint),
        cmocka_unit_test(a_killed_process_is_gone_before_it_is_reaped),
        cmocka_unit_test(a_secret_quoted_in_a_message_is_scrubbed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
