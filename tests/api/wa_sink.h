/*
 * wa_sink.h - the strict double of WhatsApp's Graph API
 * (tests/doubles/wa_double.c) as an API test runs it: started with the
 * shop's five templates (six body parameters each), stopped by pid, and the
 * template messages it accepted read back from its log.
 */
#ifndef BR_TEST_WA_SINK_H
#define BR_TEST_WA_SINK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct wa_sink {
    pid_t pid;
    char base[64]; /* http://127.0.0.1:<port>: BARBERIA_WHATSAPP_API_URL is base + "/v21.0" */
    char log[320], out[320];
};

/* Starts the double under root (its log and output files) for the access
 * token, phone number id and app secret given (NULL: one no test signs
 * with); fails the test when it does not come up. */
void wa_sink_start(struct wa_sink *d, const char *root, const char *token, const char *phone_id,
                   const char *app_secret);
/* SIGTERM and wait; fails the test when it did not stop cleanly. */
void wa_sink_stop(struct wa_sink *d);

/* The template messages the double accepted (200) for the number to, as
 * JSON bodies in the order they came (caller decrefs); how many. */
json_t *wa_sink_accepted(const struct wa_sink *d, const char *to);
size_t wa_sink_count(const struct wa_sink *d, const char *to);

/* Waits up to timeout_ms until the double accepted a message for the
 * number to; false on timeout. */
bool wa_sink_wait(const struct wa_sink *d, const char *to, int timeout_ms);

/* POST /control?query to the double (see its header comment); fails the
 * test unless it answers 200. */
void wa_sink_control(const struct wa_sink *d, const char *query);

struct srv;

/* The one template message the double accepted for the number to, waited
 * for up to timeout_ms (caller decrefs): fails the test with s's log when
 * none came, and when more than one did. */
json_t *wa_sink_sole(const struct wa_sink *d, struct srv *s, const char *to, int timeout_ms);

/* Body parameter i (0-based) of a template message. */
const char *wa_param(const json_t *m, size_t i);

struct smtp_sink;

/* The settings of a shop that sends e-mail to an SMTP sink and WhatsApp to
 * the double: the shop's zone UTC, no minimum notice, 30 days ahead, no
 * quiet hours, no reminders, then extra's (NULL-ended, may be NULL).
 * v is what srv_start takes, for as long as the struct lives. */
struct wa_env {
    char smtp[64], api[128], token[128], phone[96];
    const char *v[32];
};

/* Starts the SMTP sink k, the double d (for token and phone_id) and the
 * server s (srv_init first) with the settings e. */
void wa_shop_start(struct srv *s, struct smtp_sink *k, struct wa_sink *d, struct wa_env *e,
                   const char *token, const char *phone_id, const char *const *extra);
/* Stops all three; s's folder goes. */
void wa_shop_stop(struct srv *s, struct smtp_sink *k, struct wa_sink *d);

#endif
