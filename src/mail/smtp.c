/*
 * smtp.c - the SMTP adapter of the mail port (see smtp.h), over libcurl.
 *
 * Each delivery composes the message (compose.h) and runs one bounded
 * libcurl SMTP transfer on a fresh easy handle, so deliver() keeps no state
 * in the mailer. smtp:// upgrades with STARTTLS whenever the server offers
 * it - and insists on it when credentials are configured, so a password
 * never crosses the network in the clear; smtps:// is TLS from the first
 * byte. BARBERIA_SMTP_TLS=require insists on STARTTLS without credentials
 * too, so that nobody between us and the server can strip it and read the
 * personal and reset links the messages carry. Certificates are always
 * verified (against BARBERIA_SMTP_CA_FILE when set, else the system's
 * store). The password is never written to a log or an error detail:
 * libcurl's own messages are scrubbed of it too.
 */
#include "smtp.h"
#include "compose.h"
#include "cuenta.h"
#include "../config.h"
#include "../util/log.h"

#include <curl/curl.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct smtp {
    struct mailer base; /* first: the port hands this pointer back */
    char *url;          /* as configured plus the EHLO name; holds no credentials */
    char *user;         /* NULL: no AUTH */
    char *password;     /* NULL with user; wiped on close */
    char *from;
    char *ca_file; /* NULL: the system's CA store */
    char *tz;
    char *donde;      /* the shop's name and address (mail_donde) */
    char *telefono;   /* the shop's phone, NULL: none */
    int64_t plazo_ms; /* the clients' cut-off before an appointment */
    long timeout_ms;
    long use_ssl;          /* CURLUSESSL_TRY or CURLUSESSL_ALL */
    bool require_tls;      /* BARBERIA_SMTP_TLS=require */
    atomic_bool cancelled; /* the service is stopping: abandon the transfer */
};

/* The composed message as libcurl reads it. */
struct upload {
    const char *p;
    size_t len, off;
};

static size_t read_cb(char *dst, size_t size, size_t nitems, void *ud)
{
    struct upload *u = ud;
    size_t room = size * nitems, left = u->len - u->off;
    size_t k = left < room ? left : room;
    memcpy(dst, u->p + u->off, k);
    u->off += k;
    return k;
}

/* Makes a libcurl message fit a log line: control characters become
 * spaces, and the password (should a server ever echo it) becomes "***". */
static void scrub(char *s, const char *password)
{
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F) *p = ' ';
    size_t pl = password ? strlen(password) : 0;
    if (pl == 0) return;
    size_t put = pl < 3 ? pl : 3;
    for (char *at = s, *hit; (hit = strstr(at, password)); at = hit + put) {
        memcpy(hit, "***", put);
        memmove(hit + put, hit + pl, strlen(hit + pl) + 1);
    }
}

/* libcurl's progress hook: a non-zero answer aborts the transfer. */
static int progress_cb(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    struct smtp *s = ud;
    return atomic_load(&s->cancelled) ? 1 : 0;
}

/* A 5xx reply is permanent, except the authentication ones (530, 534, 535,
 * 538): those are the operator's to fix, and retrying after the fix must
 * still deliver. */
static bool permanent_reply(long code)
{
    return code >= 500 && code < 600 && code != 530 && code != 534 && code != 535 && code != 538;
}

/* Sends the composed message data (len bytes) to recipient; frees data. */
static br_err smtp_send(struct smtp *s, const char *recipient, char *data, size_t len);

/* BR_INVALID when recipient cannot be used over SMTP. */
static br_err recipient_check(const char *recipient)
{
    if (mail_address_ok(recipient)) return BR_OK;
    return err_set(BR_INVALID, "the recipient address cannot be used over SMTP");
}

/* The composer's failure as the delivery's: as, with its detail. */
static br_err compose_failed(br_err as)
{
    char why[256]; /* copied: err_set must not read the detail it overwrites */
    snprintf(why, sizeof why, "%s", err_msg());
    return err_set(as, "cannot compose the message: %s", why);
}

static br_err smtp_deliver(struct mailer *base, const struct outbox_msg *msg)
{
    struct smtp *s = (struct smtp *)base;
    if (recipient_check(msg->recipient)) return BR_INVALID;
    struct mail_compose_opts o = {.from = s->from,
                                  .tz = s->tz,
                                  .donde = s->donde,
                                  .plazo_ms = s->plazo_ms,
                                  .telefono = s->telefono};
    char *data = NULL;
    size_t len = 0;
    if (mail_compose(&o, msg, &data, &len)) return compose_failed(BR_UPSTREAM);
    return smtp_send(s, msg->recipient, data, len);
}

static br_err smtp_deliver_cuenta(struct mailer *base, const struct cuenta_mail *msg)
{
    struct smtp *s = (struct smtp *)base;
    if (recipient_check(msg->recipient)) return BR_INVALID;
    struct mail_compose_opts o = {.from = s->from, .tz = s->tz};
    char *data = NULL;
    size_t len = 0;
    br_err rc = mail_compose_cuenta(&o, msg, &data, &len);
    if (rc) return compose_failed(rc == BR_INVALID ? BR_INVALID : BR_UPSTREAM);
    /* the message holds a single-use link: wiped once sent */
    return smtp_send(s, msg->recipient, data, len);
}

static br_err smtp_send(struct smtp *s, const char *recipient, char *data, size_t len)
{
    br_err rc = BR_OK;
    CURL *c = curl_easy_init();
    if (!c) {
        free(data);
        return err_set(BR_UPSTREAM, "libcurl could not start a transfer");
    }
    char from[300], to[300], errbuf[CURL_ERROR_SIZE];
    snprintf(from, sizeof from, "<%s>", s->from);
    snprintf(to, sizeof to, "<%s>", recipient);
    errbuf[0] = '\0';
    struct curl_slist *rcpt = curl_slist_append(NULL, to);
    struct upload up = {data, len, 0};
    CURLcode cc = rcpt ? CURLE_OK : CURLE_OUT_OF_MEMORY;
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_URL, s->url);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85.0 */
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
#endif
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, s->timeout_ms);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, s->timeout_ms);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_USE_SSL, s->use_ssl);
    if (!cc && s->ca_file) cc = curl_easy_setopt(c, CURLOPT_CAINFO, s->ca_file);
    if (!cc && s->user) cc = curl_easy_setopt(c, CURLOPT_USERNAME, s->user);
    if (!cc && s->user) cc = curl_easy_setopt(c, CURLOPT_PASSWORD, s->password);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_MAIL_FROM, from);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_READDATA, &up);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    if (!cc) cc = curl_easy_perform(c);

    if (cc != CURLE_OK) {
        long code = 0;
        if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) code = 0;
        scrub(errbuf, s->password);
        char reply[48] = "";
        if (code > 0) snprintf(reply, sizeof reply, "; last SMTP reply %ld", code);
        /* no STARTTLS where it is required: the operator's or the network's
         * to fix, so retried like a server that is down */
        const char *why = cc != CURLE_USE_SSL_FAILED ? ""
                          : s->require_tls
                              ? "; the server offers no STARTTLS and BARBERIA_SMTP_TLS=require"
                              : "; the server offers no STARTTLS, required with credentials";
        br_err kind = cc == CURLE_OPERATION_TIMEDOUT ? BR_TIMEOUT
                      : permanent_reply(code)        ? BR_INVALID
                                                     : BR_UPSTREAM;
        rc = err_set(kind, "smtp: %s%s%s%s%s%s", curl_easy_strerror(cc), errbuf[0] ? " (" : "",
                     errbuf, errbuf[0] ? ")" : "", reply, why);
    }
    curl_slist_free_all(rcpt);
    curl_easy_cleanup(c);
    sodium_memzero(data, len);
    free(data);
    return rc;
}

static void smtp_close(struct mailer *base)
{
    struct smtp *s = (struct smtp *)base;
    wipe_free(s->password);
    free(s->url);
    free(s->user);
    free(s->from);
    free(s->ca_file);
    free(s->tz);
    free(s->donde);
    free(s->telefono);
    free(s);
}

static void smtp_cancel(struct mailer *base)
{
    atomic_store(&((struct smtp *)base)->cancelled, true);
}

static const struct mail_ops smtp_ops = {
    .name = "smtp",
    .deliver = smtp_deliver,
    .deliver_cuenta = smtp_deliver_cuenta,
    .cancel = smtp_cancel,
    .close = smtp_close,
};

/* Checks the URL: smtp or smtps, a host, no credentials (they belong in
 * BARBERIA_SMTP_USER/PASSWORD, which are never logged). The URL is not
 * repeated in the detail: it might hold a password. A URL without a path
 * gets "/<helo>": libcurl sends the path as the EHLO name, and its own
 * default is not always a name relays accept. OUT: *tls (smtps), *use (the
 * URL to connect to) and *where ("smtp://host:port", for the start-up
 * line); both strings caller frees. */
static br_err check_url(const char *url, const char *helo, bool *tls, char **use, char **where)
{
    CURLU *u = curl_url();
    if (!u) return err_set(BR_CONFIG, "BARBERIA_SMTP_URL: out of memory");
    char *scheme = NULL, *host = NULL, *port = NULL, *user = NULL, *pass = NULL;
    char *path = NULL, *full = NULL;
    br_err rc = BR_OK;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
        rc = err_set(BR_CONFIG, "BARBERIA_SMTP_URL is not a URL (smtp://host:port or "
                                "smtps://host:port)");
    } else if (strcmp(scheme, "smtp") != 0 && strcmp(scheme, "smtps") != 0) {
        rc = err_set(BR_CONFIG, "BARBERIA_SMTP_URL must start with smtp:// or smtps://");
    } else if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
               curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) == CURLUE_OK) {
        rc = err_set(BR_CONFIG, "BARBERIA_SMTP_URL must not hold credentials; set "
                                "BARBERIA_SMTP_USER and BARBERIA_SMTP_PASSWORD instead");
    } else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0]) {
        rc = err_set(BR_CONFIG, "BARBERIA_SMTP_URL names no host");
    } else if (curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        rc = err_set(BR_CONFIG, "BARBERIA_SMTP_URL has an unusable port");
    } else {
        if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK || !path[0] ||
            !strcmp(path, "/")) {
            char *p = xasprintf("/%s", helo);
            CURLUcode uc = curl_url_set(u, CURLUPART_PATH, p, 0);
            free(p);
            if (uc != CURLUE_OK) rc = err_set(BR_CONFIG, "BARBERIA_SMTP_URL: cannot add a path");
        }
        if (!rc && curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK)
            rc = err_set(BR_CONFIG, "BARBERIA_SMTP_URL cannot be used");
        if (!rc) {
            *tls = !strcmp(scheme, "smtps");
            *use = xstrdup(full);
            *where = xasprintf("%s://%s:%s", scheme, host, port);
        }
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(full);
    if (user) sodium_memzero(user, strlen(user));
    if (pass) sodium_memzero(pass, strlen(pass));
    curl_free(user);
    curl_free(pass);
    curl_url_cleanup(u);
    return rc;
}

br_err mailer_smtp_open(const struct config *cfg, struct mailer **out)
{
    *out = NULL;
    if (!mail_address_ok(cfg->smtp_from))
        return err_set(BR_CONFIG, "BARBERIA_SMTP_FROM must be a plain address such as "
                                  "no-reply@example.com");
    bool tls = false;
    char *use = NULL, *where = NULL;
    br_err rc = check_url(cfg->smtp_url, strchr(cfg->smtp_from, '@') + 1, &tls, &use, &where);
    if (rc) return rc;
    bool require = false;
    if (cfg->smtp_tls && !strcmp(cfg->smtp_tls, "require"))
        require = true;
    else if (cfg->smtp_tls && strcmp(cfg->smtp_tls, "try") != 0)
        rc = err_set(BR_CONFIG, "BARBERIA_SMTP_TLS must be try or require");
    if (rc) {
        free(use);
        free(where);
        return rc;
    }
    bool has_user = cfg->smtp_user && *cfg->smtp_user;
    bool has_pass = cfg->smtp_password && *cfg->smtp_password;
    if (has_user != has_pass)
        rc = err_set(BR_CONFIG, "set both BARBERIA_SMTP_USER and BARBERIA_SMTP_PASSWORD, "
                                "or neither");
    else if (cfg->smtp_ca_file && access(cfg->smtp_ca_file, R_OK) != 0)
        rc = err_set(BR_CONFIG, "BARBERIA_SMTP_CA_FILE: cannot read %s", cfg->smtp_ca_file);
    if (!rc) rc = mail_tz_use(cfg->tz ? cfg->tz : "UTC");
    if (rc) {
        free(use);
        free(where);
        return rc;
    }

    struct smtp *s = xcalloc(1, sizeof *s);
    s->base.ops = &smtp_ops;
    s->url = use;
    s->user = has_user ? xstrdup(cfg->smtp_user) : NULL;
    s->password = has_user ? xstrdup(cfg->smtp_password) : NULL;
    s->from = xstrdup(cfg->smtp_from);
    s->ca_file = xstrdup_or_null(cfg->smtp_ca_file);
    s->tz = xstrdup(cfg->tz ? cfg->tz : "UTC");
    s->telefono = cfg->shop_phone && *cfg->shop_phone ? xstrdup(cfg->shop_phone) : NULL;
    s->plazo_ms = (int64_t)cfg->cancel_cutoff_min * 60000;
    /* said when there is an address to say (the name alone signs it already) */
    s->donde = cfg->shop_address && *cfg->shop_address
                   ? mail_donde(cfg->shop_name, cfg->shop_address)
                   : NULL;
    s->timeout_ms = cfg->smtp_timeout_ms;
    /* smtps is TLS already; over smtp, credentials are only ever sent
     * after STARTTLS, and with BARBERIA_SMTP_TLS=require nothing is */
    s->require_tls = require;
    s->use_ssl = tls || has_user || require ? (long)CURLUSESSL_ALL : (long)CURLUSESSL_TRY;
    log_info("mail: confirmations go to %s (%s%s), from %s, times shown in %s", where,
             tls                   ? "TLS"
             : has_user || require ? "STARTTLS required"
                                   : "STARTTLS when offered",
             has_user ? ", with credentials" : "", s->from, s->tz);
    free(where);
    *out = &s->base;
    return BR_OK;
}
