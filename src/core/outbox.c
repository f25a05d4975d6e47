/*
 * outbox.c - the e-mail worker (see outbox.h).
 */
#include "outbox.h"
#include "gestion.h"
#include "../config.h"
#include "../util/cond.h"
#include "../util/log.h"
#include "../util/metrics.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define IDLE_POLL_MS   60000 /* re-check the table at least this often (other nodes queue too) */
#define ERROR_PAUSE_MS 5000
#define BACKOFF_MAX_MS (5 * 60 * 1000)

struct outbox {
    struct store *st;
    struct mailer *m;
    int64_t retry_for_ms;
    int64_t lease_ms;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    bool woken;
    /* reminders, queued as they fall due */
    int64_t reminder_ms;  /* how long before the start; 0: none */
    int64_t next_scan_ms; /* when to look for due reminders again */
    bool rescan;          /* a booking or a change: look again now */
    /* the personal links of messages about a cita (gestion.h) */
    char *link_base;
    unsigned char link_key[APP_LINK_KEY_BYTES];
    bool links;
};

int64_t outbox_backoff_ms(int64_t attempts)
{
    if (attempts < 1) attempts = 1;
    if (attempts > 20) return BACKOFF_MAX_MS;
    int64_t d = 1000LL << (attempts - 1);
    return d > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : d;
}

/* Sleeps until `until_ms` (wall clock), a wake-up or a stop. */
static void nap(struct outbox *o, int64_t until_ms)
{
    pthread_mutex_lock(&o->mu);
    while (!o->stop && !o->woken) {
        int64_t now = clock_now_ms();
        if (now >= until_ms) break;
        struct timespec ts = deadline_in(CLOCK_REALTIME, until_ms - now);
        pthread_cond_timedwait(&o->cv, &o->mu, &ts);
    }
    o->woken = false;
    pthread_mutex_unlock(&o->mu);
}

static bool stopping(struct outbox *o)
{
    pthread_mutex_lock(&o->mu);
    bool s = o->stop;
    pthread_mutex_unlock(&o->mu);
    return s;
}

/* The message's kind as the log lines name it ("confirmation" as before). */
static const char *kind_word(const struct outbox_msg *m)
{
    const char *k = outbox_kind(m->kind);
    if (!strcmp(k, "cancelacion")) return "cancellation";
    if (!strcmp(k, "reprogramacion")) return "reschedule notice";
    if (!strcmp(k, "recordatorio")) return "reminder";
    if (!strcmp(k, "aviso_espera")) return "waiting-list notice";
    return "confirmation";
}

/* Delivers one message and records the outcome. */
static void deliver(struct outbox *o, struct outbox_msg *msg)
{
    const char *what = kind_word(msg);
    /* a message about a cita carries its personal link, signed now (never
     * stored); a waiting-list notice brought its own */
    if (!msg->enlace && o->links && strcmp(outbox_kind(msg->kind), "aviso_espera") != 0)
        msg->enlace = gestion_link(o->link_key, o->link_base, msg->cita_id);
    err_clear();
    br_err rc = o->m->ops->deliver(o->m, msg);
    int64_t now = clock_now_ms();
    br_ts now_ts;
    iso8601_format(now, now_ts);
    if (!rc) {
        metric_inc(M_MAIL_SENT);
        log_info("mail: %s %s for cita %s delivered (attempt %lld)", what, msg->id, msg->cita_id,
                 (long long)msg->attempts);
        if (store_outbox_sent(o->st, msg->id, now_ts) != BR_OK)
            log_error("mail: could not mark %s as sent: %s", msg->id, err_msg());
        return;
    }
    char why[512];
    snprintf(why, sizeof why, "%s", err_msg()[0] ? err_msg() : err_name(rc));
    if (stopping(o)) {
        /* cancelled by the stop (or failed as it came): not the mail
         * server's verdict, so never a drop; due again at the next start */
        log_warn("mail: delivery of %s %s for cita %s cancelled by the stop: %s; "
                 "it stays queued",
                 what, msg->id, msg->cita_id, why);
        if (store_outbox_retry(o->st, msg->id, why, now_ts) != BR_OK)
            log_error("mail: could not release %s for the next start: %s", msg->id, err_msg());
        return;
    }
    /* the retry window starts when the message became due (a reminder is
     * queued long before) */
    const char *since = msg->due_at[0] ? msg->due_at : msg->created_at;
    int64_t queued = 0;
    bool aged = iso8601_parse(since, strlen(since), &queued) && now - queued >= o->retry_for_ms;
    metric_inc(M_MAIL_FAILURES);
    if (rc == BR_INVALID) {
        metric_inc(M_MAIL_DROPPED);
        log_error("mail: %s %s for cita %s dropped: refused for good: %s", what, msg->id,
                  msg->cita_id, why);
        if (store_outbox_drop(o->st, msg->id, why, now_ts) != BR_OK)
            log_error("mail: could not mark %s as dropped: %s", msg->id, err_msg());
        return;
    }
    if (aged) {
        metric_inc(M_MAIL_DROPPED);
        log_error("mail: %s %s for cita %s dropped after %lld attempts: %s", what, msg->id,
                  msg->cita_id, (long long)msg->attempts, why);
        if (store_outbox_drop(o->st, msg->id, why, now_ts) != BR_OK)
            log_error("mail: could not mark %s as dropped: %s", msg->id, err_msg());
        return;
    }
    int64_t delay = outbox_backoff_ms(msg->attempts);
    br_ts next;
    iso8601_format(now + delay, next);
    log_warn("mail: delivery of %s %s for cita %s failed (attempt %lld): %s; "
             "next attempt in %llds",
             what, msg->id, msg->cita_id, (long long)msg->attempts, why, (long long)(delay / 1000));
    if (store_outbox_retry(o->st, msg->id, why, next) != BR_OK)
        log_error("mail: could not schedule a retry of %s: %s", msg->id, err_msg());
}

/* Queues the reminders due now (store_reminders_queue) and works out when
 * the next one falls due; at least every IDLE_POLL_MS (other nodes book
 * too). Every node does this: the store keeps one reminder per cita and
 * start, and the claim's lease lets one node send it. */
static void reminders(struct outbox *o, int64_t now)
{
    if (o->reminder_ms <= 0) return;
    pthread_mutex_lock(&o->mu);
    bool again = o->rescan;
    o->rescan = false;
    pthread_mutex_unlock(&o->mu);
    if (!again && now < o->next_scan_ms) return;
    int queued = 0;
    if (store_reminders_queue(o->st, now, o->reminder_ms, &queued) != BR_OK) {
        log_error("mail: queuing the due reminders failed: %s", err_msg());
        o->next_scan_ms = now + ERROR_PAUSE_MS;
        return;
    }
    if (queued) log_info("mail: %d reminder(s) queued", queued);
    o->next_scan_ms = now + IDLE_POLL_MS;
    br_ts after, next;
    iso8601_format(now + o->reminder_ms, after);
    int64_t start;
    if (store_reminder_next(o->st, after, next) == BR_OK && next[0] &&
        iso8601_parse(next, strlen(next), &start) && start - o->reminder_ms < o->next_scan_ms)
        o->next_scan_ms = start - o->reminder_ms;
}

static void *run(void *arg)
{
    struct outbox *o = arg;
    while (!stopping(o)) {
        int64_t now = clock_now_ms();
        reminders(o, now);
        br_ts now_ts, lease;
        iso8601_format(now, now_ts);
        iso8601_format(now + o->lease_ms, lease);
        struct outbox_msg msg;
        br_err rc = store_outbox_claim(o->st, now_ts, lease, &msg);
        if (rc == BR_OK) {
            deliver(o, &msg);
            outbox_clear(&msg);
            continue;
        }
        if (rc != BR_NOTFOUND) {
            log_error("mail: reading the outbox failed: %s", err_msg());
            nap(o, now + ERROR_PAUSE_MS);
            continue;
        }
        br_ts next;
        int64_t until = now + IDLE_POLL_MS, due;
        if (o->reminder_ms > 0 && o->next_scan_ms < until) until = o->next_scan_ms;
        if (store_outbox_next_due(o->st, next) == BR_OK && next[0] &&
            iso8601_parse(next, strlen(next), &due) && due < until)
            until = due;
        nap(o, until);
    }
    return NULL;
}

br_err outbox_start(struct store *st, struct mailer *m, const struct config *cfg,
                    const struct outbox_links *links, struct outbox **out)
{
    struct outbox *o = xcalloc(1, sizeof *o);
    if (links && links->key) {
        o->links = true;
        o->link_base = xstrdup(links->base ? links->base : "");
        memcpy(o->link_key, links->key, sizeof o->link_key);
    }
    o->st = st;
    o->m = m;
    o->retry_for_ms = (int64_t)cfg->smtp_retry_for_s * 1000;
    o->lease_ms = (int64_t)cfg->smtp_timeout_ms + 30000;
    o->reminder_ms = (int64_t)cfg->reminder_hours * 3600000;
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    if (pthread_create(&o->thread, NULL, run, o) != 0) {
        pthread_mutex_destroy(&o->mu);
        pthread_cond_destroy(&o->cv);
        free(o->link_base);
        free(o);
        return err_set(BR_INTERNAL, "cannot start the mail worker thread");
    }
    *out = o;
    return BR_OK;
}

void outbox_wake(struct outbox *o)
{
    if (!o) return;
    pthread_mutex_lock(&o->mu);
    o->woken = true;
    o->rescan = true;
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

void outbox_stop(struct outbox *o)
{
    if (!o) return;
    pthread_mutex_lock(&o->mu);
    o->stop = true;
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
    /* a delivery in progress gives up now; its message stays queued */
    if (o->m->ops->cancel) o->m->ops->cancel(o->m);
    pthread_join(o->thread, NULL);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    free(o->link_base);
    sodium_memzero(o->link_key, sizeof o->link_key);
    free(o);
}
