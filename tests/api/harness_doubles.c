/*
 * harness_doubles.c - the stand-ins for the servers the service calls, as a test starts
 * them (tests/doubles/), and the Google Calendar double (see harness.h).
 */
#define _GNU_SOURCE
#include "harness_internal.h"
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- the doubles ------------------------------------------------------------------------- */

int double_spawn(const char *const *argv, const char *out, const char *err, pid_t *pid)
{
    *pid = 0;
    int outfd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int errfd = err ? open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    assert_true(outfd >= 0 && (!err || errfd >= 0));
    char path[512];
    snprintf(path, sizeof path, "%s/%s", BARBERIA_DOUBLES_DIR, argv[0]);
    pid_t p = fork();
    if (p == 0) {
        dup2(outfd, 1);
        if (errfd >= 0) dup2(errfd, 2);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    close(outfd);
    if (errfd >= 0) close(errfd);
    assert_true(p > 0);
    *pid = p;
    int port = 0;
    for (int waited = 0; waited < 60000 && !port; waited += 20) {
        char *text = read_file(out, NULL);
        const char *at = text ? strstr(text, "port ") : NULL;
        if (at && strchr(at, '\n')) port = (int)strtol(at + 5, NULL, 10);
        free(text);
        int st;
        if (!port && waitpid(p, &st, WNOHANG) == p) {
            *pid = 0;
            char *why = err ? read_file(err, NULL) : NULL;
            fail_msg("%s exited before listening: %s", argv[0], why ? why : "");
        }
        if (!port) sleep_ms(20);
    }
    if (!port) fail_msg("%s did not print its port within 60 s", argv[0]);
    return port;
}

/* --- the Google Calendar double --------------------------------------------------------- */

#define GCAL_CLIENT_EMAIL "barberia-test@barberia-test.iam.gserviceaccount.com"
#define GCAL_CALENDAR_ID  "barberia@group.calendar.google.com"

void gcal_keypair(const char *priv_path, const char *pub_path)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, NULL);
    EVP_PKEY *k = NULL;
    assert_non_null(ctx);
    assert_int_equal(EVP_PKEY_keygen_init(ctx), 1);
    assert_true(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048) > 0);
    assert_int_equal(EVP_PKEY_keygen(ctx, &k), 1);
    FILE *f = fopen(priv_path, "w");
    assert_non_null(f);
    /* PKCS#8, "BEGIN PRIVATE KEY", as Google's key files hold it */
    assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
    if (pub_path) {
        f = fopen(pub_path, "w");
        assert_non_null(f);
        assert_int_equal(PEM_write_PUBKEY(f, k), 1);
        fclose(f);
    }
    EVP_PKEY_free(k);
    EVP_PKEY_CTX_free(ctx);
}

void gcal_write_creds(const char *path, const char *email, const char *key_path,
                      const char *token_url)
{
    char *pem = read_file(key_path, NULL);
    assert_non_null(pem);
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type", "service_account",
                  "project_id", "barberia-test", "private_key_id", "0123456789abcdef",
                  "private_key", pem, "client_email", email, "client_id", "123456789012345678901",
                  "auth_uri", "https://accounts.google.com/o/oauth2/auth", "token_uri", token_url);
    free(pem);
    assert_int_equal(json_dump_file(j, path, JSON_INDENT(2)), 0);
    json_decref(j);
}

void gcal_dbl_start(struct gcal_dbl *d, const char *root)
{
    memset(d, 0, sizeof *d);
    snprintf(d->root, sizeof d->root, "%s", root);
    char key[320], pub[320];
    snprintf(key, sizeof key, "%s/gcal-key.pem", root);
    snprintf(pub, sizeof pub, "%s/gcal-pub.pem", root);
    gcal_keypair(key, pub);
    snprintf(d->log, sizeof d->log, "%s/gcal.jsonl", root);
    snprintf(d->out, sizeof d->out, "%s/gcal.out", root);
    snprintf(d->err, sizeof d->err, "%s/gcal.err", root);
    const char *argv[] = {"gcal_double",     "--public-key", pub,    "--client-email",
                          GCAL_CLIENT_EMAIL, "--log",        d->log, NULL};
    int port = double_spawn(argv, d->out, d->err, &d->pid);
    snprintf(d->http.base, sizeof d->http.base, "http://127.0.0.1:%d", port);
    snprintf(d->token_url, sizeof d->token_url, "http://127.0.0.1:%d/token", port);
    snprintf(d->creds, sizeof d->creds, "%s/gcal-service-account.json", root);
    gcal_write_creds(d->creds, GCAL_CLIENT_EMAIL, key, d->token_url);
    snprintf(d->env[0], sizeof d->env[0], "BARBERIA_GOOGLE_CREDENTIALS=%s", d->creds);
    snprintf(d->env[1], sizeof d->env[1], "BARBERIA_GOOGLE_API_URL=%s/calendar/v3", d->http.base);
    snprintf(d->env[2], sizeof d->env[2], "BARBERIA_GOOGLE_CALENDAR_ID=%s", GCAL_CALENDAR_ID);
    snprintf(d->env[3], sizeof d->env[3], "BARBERIA_CALENDAR_TIMEOUT_MS=30000");
}

void gcal_dbl_stop(struct gcal_dbl *d)
{
    if (d->pid <= 0) return;
    kill(d->pid, SIGTERM);
    int st = 0;
    bool gone = false;
    for (int waited = 0; waited < 20000 && !gone; waited += 10) {
        gone = waitpid(d->pid, &st, WNOHANG) == d->pid;
        if (!gone) sleep_ms(10);
    }
    if (!gone) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &st, 0);
    }
    d->pid = 0;
    char *err = read_file(d->err, NULL);
    bool sanitizer = err && (strstr(err, "Sanitizer") || strstr(err, "runtime error:"));
    if (!gone || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || sanitizer) {
        fprintf(stderr, "gcal_double stderr:\n%s\n", err ? err : "");
        free(err);
        fail_msg("gcal_double did not stop promptly and cleanly on SIGTERM");
    }
    free(err);
}

void gcal_dbl_control(struct gcal_dbl *d, const char *query)
{
    char path[256];
    snprintf(path, sizeof path, "/control?%s", query);
    struct resp r;
    http_req(&d->http, "POST", path, NULL, &r);
    if (r.status != 200) fail_msg("double control %s: %ld %s", query, r.status, r.body);
    resp_free(&r);
}

size_t gcal_dbl_mark(const struct gcal_dbl *d)
{
    struct stat st;
    return stat(d->log, &st) == 0 ? (size_t)st.st_size : 0;
}

json_t *gcal_dbl_since(const struct gcal_dbl *d, size_t mark)
{
    size_t len = 0;
    char *text = read_file(d->log, &len);
    json_t *all = json_array();
    for (char *line = text && mark <= len ? text + mark : NULL; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break;
        json_t *e = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (!e) fail_msg("double log line is not JSON: %.*s", (int)(nl - line), line);
        json_array_append_new(all, e);
        line = nl + 1;
    }
    free(text);
    return all;
}
