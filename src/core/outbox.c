/*
 * outbox.c - the e-mail worker (see outbox.h).
 */
#include "outbox.h"
#include "espera.h"
#include "gestion.h"
#include "../config.h"
#include "../domain/avisos.h"
#include "../util/tz.h"
#include "../util/log.h"
#include "../util/metrics.h"
#include "../util/worker.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDLE_POLL_MS   60000 /* re-check the table at least this often (other nodes queue too) */
#define ERROR_PAUSE_MS 5000
#define BACKOFF_MAX_MS (5 * 60 * 1000)
/* the longest public URL whose links a WhatsApp message carries whole */
#define OUTBOX_PUBLIC_URL_MAX (WHATSAPP_LINK_MAX - ESPERA_LINK_EXTRA)

struct outbox {
    struct app *app; /* the free slots a waiting-list notice is checked against */
    struct store *st;
    struct mailer *m;
    struct whatsapp *wa;      /* NULL: no WhatsApp */
    char *link;               /* parameter {{6}} of the WhatsApp templates */
    int quiet_from, quiet_to; /* WhatsApp's quiet hours, minutes of the shop's day */
    int wa_max_per_day;       /* messages one client gets in 24 hours (0: no cap) */
    int64_t retry_for_ms;
    int64_t lease_ms;
    int64_t send_ms; /* the longest a delivery may take (the mail or WhatsApp bound) */
    struct worker *wk;
    pthread_mutex_t mu;     /* guards task, task_ud and rescan */
    void (*task)(void *ud); /* to run on the worker's thread (outbox_wake_task) */
    void *task_ud;
    /* reminders, queued as they fall due */
    int64_t offsets_ms[RULE_OFFSETS_MAX]; /* how long before the start, largest first */
    int noffsets;                         /* 0: none */
    int64_t next_scan_ms;                 /* when to look for due reminders again */
    bool rescan;                          /* a booking or a change: look again now */
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

/* The message's kind as the log lines name it ("confirmation" as before). */
static const char *kind_word(const struct outbox_msg *m)
{
    const char *k = outbox_kind(m->kind);
    if (!strcmp(k, "cancelacion")) return "cancellation";
    if (!strcmp(k, "reprogramacion")) return "reschedule notice";
    if (!strcmp(k, "recordatorio")) return "reminder";
    if (!strcmp(k, "aviso_espera")) return "waiting-list notice";
    if (!strcmp(k, "cierre")) return "closure's cancellation";
    if (!strcmp(k, "aviso_cita")) return "barber's booking notice";
    if (!strcmp(k, "aviso_cambio")) return "barber's change notice";
    if (!strcmp(k, "aviso_cancelacion")) return "barber's cancellation notice";
    return "confirmation";
}

/* When the quiet hours that hold at now end (shop time), or 0 when now
 * is not in them. */
static int64_t quiet_until(const struct outbox *o, int64_t now)
{
    struct tz_date d;
    int minute;
    if (o->quiet_from == o->quiet_to || !tz_utc_to_local(now, &d, &minute) ||
        !rule_quiet_now(minute, o->quiet_from, o->quiet_to))
        return 0;
    /* today's end, or tomorrow's when it is past today's (over midnight) */
    if (minute >= o->quiet_to) tz_civil_from_days(tz_days_from_civil(&d) + 1, &d);
    int64_t until = 0;
    if (!tz_local_instant(&d, o->quiet_to, &until) || until <= now) until = now + 3600000;
    return until;
}

/* A check made just before a message leaves: true when it may go. When
 * the check could not be made (rc), the message is put back for a later
 * claim; when it says why not, the message is skipped for that reason. */
static bool check_passed(struct outbox *o, const struct outbox_msg *msg, const char *what,
                         const char *chan, br_err rc, const char *why)
{
    int64_t now = clock_now_ms();
    br_ts at;
    if (rc) {
        log_error("%s: could not check %s %s: %s", chan, what, msg->id, err_msg());
        iso8601_format(now + ERROR_PAUSE_MS, at);
        if (store_outbox_retry(o->st, msg->id, msg->claim, "could not be checked", at) != BR_OK)
            log_error("%s: could not release %s: %s", chan, msg->id, err_msg());
        return false;
    }
    if (!why) return true;
    iso8601_format(now, at);
    log_info("%s: %s %s for cita %s not sent: %s", chan, what, msg->id, msg->cita_id, why);
    if (store_outbox_skip(o->st, msg->id, msg->claim, why, at) != BR_OK)
        log_error("%s: could not mark %s as skipped: %s", chan, msg->id, err_msg());
    return false;
}

/* Before a WhatsApp message leaves: whether it still may (consent, a
 * cancelled cita, the number's messages of the last 24 hours) and whether
 * the quiet hours hold it back. True when it is to be sent now; otherwise
 * its fate is recorded. */
static bool whatsapp_ready(struct outbox *o, struct outbox_msg *msg, const char *what,
                           br_id cliente)
{
    const char *why = NULL;
    br_err rc = store_whatsapp_sendable(o->st, msg->cita_id, msg->kind, &why);
    if (!check_passed(o, msg, what, "whatsapp", rc, why)) return false;
    int64_t until = outbox_kind_cancela(msg->kind) ? 0 : quiet_until(o, clock_now_ms());
    int64_t start;
    if (until && iso8601_parse(msg->fecha_inicio, strlen(msg->fecha_inicio), &start) &&
        start <= until)
        /* held back, it would speak of what has begun by then */
        return check_passed(o, msg, what, "whatsapp", BR_OK,
                            "empieza antes de que acaben las horas de silencio");
    if (until) {
        br_ts at;
        iso8601_format(until, at);
        log_info("whatsapp: %s %s for cita %s waits for the end of the quiet hours (%s)", what,
                 msg->id, msg->cita_id, at);
        if (store_outbox_defer(o->st, msg->id, msg->claim, at) != BR_OK)
            log_error("whatsapp: could not put off %s: %s", msg->id, err_msg());
        return false;
    }
    if (o->wa_max_per_day > 0) {
        /* a client books and cancels in a loop, or gives a stranger's
         * number: the paid channel is bounded per client (hers alone
         * count: another's messages to the same number never use up her
         * allowance), the e-mail not */
        br_ts since;
        iso8601_format(clock_now_ms() - ISO8601_DAY_MS, since);
        int64_t sent = 0;
        rc = store_whatsapp_sent_since(o->st, msg->cita_id, since, cliente, &sent);
        why = !rc && sent >= o->wa_max_per_day ? "demasiados mensajes a este cliente en 24 horas"
                                               : NULL;
        return check_passed(o, msg, what, "whatsapp", rc, why);
    }
    return true;
}

/* Just before a waiting-list notice leaves (either channel, every
 * attempt): whether the slot it announces is still free. True when it is
 * (or the message is of another kind); otherwise it is skipped, or put back
 * for a later claim when the free slots could not be read. */
static bool slot_ready(struct outbox *o, struct outbox_msg *msg, const char *what, const char *chan)
{
    if (strcmp(outbox_kind(msg->kind), "aviso_espera") != 0) return true;
    const char *why = NULL;
    br_err rc = espera_aviso_vigente(o->app, msg, &why);
    return check_passed(o, msg, what, chan, rc, why);
}

/* A reminder speaks of a time its client was told first: it never leaves
 * while the cita's confirmation (or a reschedule's mail) on its channel
 * still waits, say after an outage, but is put off until that one's next
 * attempt; nor once the cita has begun. True when it may go now. */
static bool announced(struct outbox *o, struct outbox_msg *msg, const char *what, const char *chan)
{
    if (strcmp(outbox_kind(msg->kind), "recordatorio") != 0) return true;
    int64_t now = clock_now_ms(), start, next_ms;
    if (iso8601_parse(msg->fecha_inicio, strlen(msg->fecha_inicio), &start) && start <= now)
        return check_passed(o, msg, what, chan, BR_OK, "la cita ya ha empezado");
    br_ts next;
    br_err rc = store_outbox_anuncio_pendiente(o->st, msg, next);
    if (rc || !next[0]) return check_passed(o, msg, what, chan, rc, NULL);
    if (!iso8601_parse(next, strlen(next), &next_ms) || next_ms <= now) next_ms = now + 1000;
    br_ts at;
    iso8601_format(next_ms, at);
    log_info("%s: %s %s for cita %s waits for the message that announced its time (%s)", chan, what,
             msg->id, msg->cita_id, at);
    if (store_outbox_defer(o->st, msg->id, msg->claim, at) != BR_OK)
        log_error("%s: could not put off %s: %s", chan, msg->id, err_msg());
    return false;
}

/* Just before a message leaves: where it goes now and the link it carries,
 * read together (store_outbox_destino). An address or number changed since
 * it was claimed (hers, or a barber's) wins, and a message about a cita
 * gets her personal link signed at the generation that change left (never
 * stored; a waiting-list notice brought its own link). False when it is
 * not to be sent now: done meanwhile, or put back for the next claim. */
static bool addressed(struct outbox *o, struct outbox_msg *msg, const char *what, const char *chan)
{
    char *to = NULL;
    int64_t gen = 0;
    br_err rc = store_outbox_destino(o->st, msg->id, &to, &gen);
    if (rc) return check_passed(o, msg, what, chan, rc, NULL);
    if (!to) { /* sent, skipped or deleted meanwhile */
        log_info("%s: %s %s for cita %s waits no more", chan, what, msg->id, msg->cita_id);
        return false;
    }
    if (strcmp(to, msg->recipient) != 0) {
        log_info("%s: %s %s for cita %s goes to the address in force now", chan, what, msg->id,
                 msg->cita_id);
        free(msg->recipient);
        msg->recipient = to;
    } else {
        free(to);
    }
    if (!msg->enlace && o->links && strcmp(outbox_kind(msg->kind), "aviso_espera") != 0)
        msg->enlace = gestion_link(o->link_key, o->link_base, msg->cita_id, (uint32_t)gen);
    return true;
}

/* Whether the claim, leased until lease_ms (wall clock, as the row holds
 * it), still lasts for a whole delivery: the checks before it read the
 * database, which a slow one can make take long, and a lease that ran out
 * lets another node claim and send the same message. Otherwise the message
 * is left as it is: once its lease ends, the next claim (this node's or
 * another's) takes it; nothing is written to a row another node may hold
 * by now. */
static bool lease_lasts(struct outbox *o, struct outbox_msg *msg, int64_t lease_ms,
                        const char *what, const char *chan)
{
    if (clock_now_ms() + o->send_ms + 5000 <= lease_ms) return true;
    log_warn("%s: %s %s for cita %s left for the next claim: its claim would run out while it "
             "is sent",
             chan, what, msg->id, msg->cita_id);
    return false;
}

/* Delivers one message by its channel and records the outcome. */
static void deliver(struct outbox *o, struct outbox_msg *msg, int64_t lease_ms)
{
    const char *what = kind_word(msg);
    bool wa = !strcmp(msg->canal, "whatsapp");
    const char *chan = wa ? "whatsapp" : "mail";
    if (!announced(o, msg, what, chan)) return;
    err_clear();
    br_err rc;
    char wamid[128] = "";
    br_id cliente = ""; /* whom the cap counted it for */
    if (wa && !o->wa) {
        rc = err_set(BR_UPSTREAM, "no WhatsApp configured");
    } else if (wa) {
        if (!whatsapp_ready(o, msg, what, cliente) || !slot_ready(o, msg, what, chan) ||
            !addressed(o, msg, what, chan) || !lease_lasts(o, msg, lease_ms, what, chan))
            return;
        err_clear();
        rc = whatsapp_send(o->wa, msg, msg->enlace ? msg->enlace : o->link_base, wamid);
    } else if (!mailer_enabled(o->m)) {
        rc = err_set(BR_UPSTREAM, "no mail transport configured");
    } else {
        if (!slot_ready(o, msg, what, chan) || !addressed(o, msg, what, chan) ||
            !lease_lasts(o, msg, lease_ms, what, chan))
            return;
        err_clear();
        rc = mailer_deliver(o->m, msg);
    }
    int64_t now = clock_now_ms();
    br_ts now_ts;
    iso8601_format(now, now_ts);
    if (!rc) {
        if (!wa) metric_inc(M_MAIL_SENT);
        log_info("%s: %s %s for cita %s delivered (attempt %lld)", chan, what, msg->id,
                 msg->cita_id, (long long)msg->attempts);
        br_ts olvido; /* what the cap no longer reads */
        iso8601_format(now - 2 * ISO8601_DAY_MS, olvido);
        br_err sr = wa ? store_whatsapp_sent(o->st, msg->id, wamid[0] ? wamid : NULL,
                                             cliente[0] ? cliente : NULL, now_ts, olvido)
                       : store_outbox_sent(o->st, msg->id, now_ts);
        if (sr != BR_OK) log_error("%s: could not mark %s as sent: %s", chan, msg->id, err_msg());
        return;
    }
    char why[512];
    snprintf(why, sizeof why, "%s", err_msg()[0] ? err_msg() : err_name(rc));
    if (worker_stopping(o->wk)) {
        /* cancelled by the stop (or failed as it came): not the mail
         * server's verdict, so never a drop; due again at the next start */
        log_warn("%s: delivery of %s %s for cita %s cancelled by the stop: %s; "
                 "it stays queued",
                 chan, what, msg->id, msg->cita_id, why);
        if (store_outbox_retry(o->st, msg->id, msg->claim, why, now_ts) != BR_OK)
            log_error("%s: could not release %s for the next start: %s", chan, msg->id, err_msg());
        return;
    }
    /* the retry window starts when the message became due (a reminder is
     * queued long before) */
    const char *since = msg->due_at[0] ? msg->due_at : msg->created_at;
    int64_t queued = 0;
    bool aged = iso8601_parse(since, strlen(since), &queued) && now - queued >= o->retry_for_ms;
    if (!wa) metric_inc(M_MAIL_FAILURES);
    if (rc == BR_INVALID) {
        if (!wa) metric_inc(M_MAIL_DROPPED);
        log_error("%s: %s %s for cita %s dropped: refused for good: %s", chan, what, msg->id,
                  msg->cita_id, why);
        if (store_outbox_drop(o->st, msg->id, msg->claim, why, now_ts) != BR_OK)
            log_error("%s: could not mark %s as dropped: %s", chan, msg->id, err_msg());
        return;
    }
    if (aged) {
        if (!wa) metric_inc(M_MAIL_DROPPED);
        log_error("%s: %s %s for cita %s dropped after %lld attempts: %s", chan, what, msg->id,
                  msg->cita_id, (long long)msg->attempts, why);
        if (store_outbox_drop(o->st, msg->id, msg->claim, why, now_ts) != BR_OK)
            log_error("%s: could not mark %s as dropped: %s", chan, msg->id, err_msg());
        return;
    }
    int64_t delay = outbox_backoff_ms(msg->attempts);
    br_ts next;
    iso8601_format(now + delay, next);
    log_warn("%s: delivery of %s %s for cita %s failed (attempt %lld): %s; "
             "next attempt in %llds",
             chan, what, msg->id, msg->cita_id, (long long)msg->attempts, why,
             (long long)(delay / 1000));
    if (store_outbox_retry(o->st, msg->id, msg->claim, why, next) != BR_OK)
        log_error("%s: could not schedule a retry of %s: %s", chan, msg->id, err_msg());
}

/* Queues the reminders due now (store_reminders_queue, once per offset)
 * and works out when the next one falls due; at least every IDLE_POLL_MS
 * (other nodes book too). Every node does this: the store keeps one
 * reminder per cita, start, channel and offset, and the claim's lease lets
 * one node send it. */
static void reminders(struct outbox *o, int64_t now)
{
    if (o->noffsets <= 0) return;
    pthread_mutex_lock(&o->mu);
    bool again = o->rescan;
    o->rescan = false;
    pthread_mutex_unlock(&o->mu);
    if (!again && now < o->next_scan_ms) return;
    o->next_scan_ms = now + IDLE_POLL_MS;
    for (int i = 0; i < o->noffsets; i++) {
        int64_t window = o->offsets_ms[i];
        int64_t floor = i + 1 < o->noffsets ? o->offsets_ms[i + 1] : 0;
        int queued = 0;
        if (store_reminders_queue(o->st, now, window, floor, &queued) != BR_OK) {
            log_error("mail: queuing the due reminders failed: %s", err_msg());
            o->next_scan_ms = now + ERROR_PAUSE_MS;
            return;
        }
        if (queued) log_info("mail: %d reminder(s) queued", queued);
        br_ts after, next;
        iso8601_format(now + window, after);
        int64_t start;
        if (store_reminder_next(o->st, after, next) == BR_OK && next[0] &&
            iso8601_parse(next, strlen(next), &start) && start - window < o->next_scan_ms)
            o->next_scan_ms = start - window;
    }
}

/* Runs the task asked for, if any. */
static void run_task(struct outbox *o)
{
    pthread_mutex_lock(&o->mu);
    void (*task)(void *) = o->task;
    void *ud = o->task_ud;
    o->task = NULL;
    pthread_mutex_unlock(&o->mu);
    if (task) task(ud);
}

void outbox_queue_turn(struct worker *wk, const struct outbox_queue *q, int64_t now,
                       int64_t idle_until)
{
    br_ts now_ts, lease;
    iso8601_format(now, now_ts);
    iso8601_format(now + q->lease_ms, lease);
    br_err rc = q->deliver_next(q->ud, now_ts, lease);
    if (rc == BR_OK) return;
    if (rc != BR_NOTFOUND) {
        log_error("mail: reading %s failed: %s", q->name, err_msg());
        worker_nap(wk, ERROR_PAUSE_MS);
        return;
    }
    br_ts next;
    int64_t until = idle_until, due;
    if (q->next_due(q->st, next) == BR_OK && next[0] && iso8601_parse(next, strlen(next), &due) &&
        due < until)
        until = due;
    worker_nap(wk, until - clock_now_ms());
}

static br_err deliver_next(void *ud, const char *now_ts, const char *lease)
{
    struct outbox *o = ud;
    struct outbox_msg msg;
    int64_t lease_ms = 0;
    if (!iso8601_parse(lease, strlen(lease), &lease_ms)) return err_set(BR_INTERNAL, "a lease");
    br_err rc = store_outbox_claim(o->st, now_ts, lease, &msg);
    if (rc) return rc;
    deliver(o, &msg, lease_ms);
    outbox_clear(&msg);
    return BR_OK;
}

static void run(struct worker *wk, void *ud)
{
    struct outbox *o = ud;
    const struct outbox_queue q = {.name = "the outbox",
                                   .st = o->st,
                                   .lease_ms = o->lease_ms,
                                   .deliver_next = deliver_next,
                                   .next_due = store_outbox_next_due,
                                   .ud = o};
    while (!worker_stopping(wk)) {
        run_task(o);
        int64_t now = clock_now_ms();
        reminders(o, now);
        int64_t until = now + IDLE_POLL_MS;
        if (o->noffsets > 0 && o->next_scan_ms < until) until = o->next_scan_ms;
        outbox_queue_turn(wk, &q, now, until);
    }
}

/* The reminder offsets the configuration asks for, largest first. False
 * when REMINDER_OFFSETS does not parse, even where REMINDER_HOURS decides:
 * a setting that is wrong is said at the start, not when it takes over. */
static bool offsets_of(const struct config *cfg, int64_t out_min[RULE_OFFSETS_MAX], int *n)
{
    if (!rule_reminder_offsets_parse(cfg->reminder_offsets ? cfg->reminder_offsets : "", out_min,
                                     n))
        return false;
    if (cfg->reminder_hours >= 0) {
        *n = cfg->reminder_hours > 0;
        out_min[0] = (int64_t)cfg->reminder_hours * 60;
    }
    return true;
}

br_err outbox_check(const struct config *cfg)
{
    int64_t off[RULE_OFFSETS_MAX];
    int n;
    if (!offsets_of(cfg, off, &n))
        return err_set(BR_CONFIG, "BARBERIA_REMINDER_OFFSETS: expected a comma-separated list "
                                  "like 24h,2h (d, h or m; 1 minute to 365 days; at most 8) or no");
    /* the longest link a WhatsApp message carries (a waiting-list notice's;
     * a personal link is shorter) must go whole */
    size_t base = cfg->public_url ? strlen(cfg->public_url) : 0;
    while (base > 0 && cfg->public_url[base - 1] == '/')
        base--;
    if (cfg->whatsapp_token && base > OUTBOX_PUBLIC_URL_MAX)
        return err_set(BR_CONFIG,
                       "BARBERIA_PUBLIC_URL: at most %d bytes with WhatsApp (it is %zu): the links "
                       "of its messages must fit in %d bytes",
                       (int)OUTBOX_PUBLIC_URL_MAX, base, WHATSAPP_LINK_MAX);
    return BR_OK;
}

br_err outbox_start(struct app *app, const struct outbox_links *links, struct outbox **out)
{
    const struct config *cfg = app->cfg;
    struct outbox *o = xcalloc(1, sizeof *o);
    if (links && links->key) {
        o->links = true;
        o->link_base = xstrdup(links->base ? links->base : "");
        memcpy(o->link_key, links->key, sizeof o->link_key);
    }
    o->app = app;
    o->st = app->store;
    o->m = app->mailer;
    o->wa = app->whatsapp;
    o->retry_for_ms = (int64_t)cfg->smtp_retry_for_s * 1000;
    o->wa_max_per_day = cfg->whatsapp_max_per_day;
    int64_t bound = cfg->smtp_timeout_ms > cfg->whatsapp_timeout_ms ? cfg->smtp_timeout_ms
                                                                    : cfg->whatsapp_timeout_ms;
    o->send_ms = bound;
    o->lease_ms = bound + 30000;
    int64_t off[RULE_OFFSETS_MAX];
    if (!offsets_of(cfg, off, &o->noffsets) ||
        !rule_quiet_hours_parse(cfg->whatsapp_quiet_hours ? cfg->whatsapp_quiet_hours : "",
                                &o->quiet_from, &o->quiet_to)) {
        free(o->link_base);
        free(o);
        return err_set(BR_CONFIG, "the reminder offsets or the quiet hours do not parse");
    }
    for (int i = 0; i < o->noffsets; i++)
        o->offsets_ms[i] = off[i] * 60000;
    pthread_mutex_init(&o->mu, NULL);
    if (!worker_start(run, o, &o->wk)) {
        pthread_mutex_destroy(&o->mu);
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
    o->rescan = true;
    pthread_mutex_unlock(&o->mu);
    worker_wake(o->wk);
}

void outbox_wake_task(struct outbox *o, void (*task)(void *ud), void *ud)
{
    if (!o) return;
    pthread_mutex_lock(&o->mu);
    o->task = task;
    o->task_ud = ud;
    pthread_mutex_unlock(&o->mu);
    worker_wake(o->wk);
}

/* A delivery in progress gives up now; its message stays queued. */
static void cancel_transfers(void *ud)
{
    struct outbox *o = ud;
    mailer_cancel(o->m);
    whatsapp_cancel(o->wa);
}

void outbox_stop(struct outbox *o)
{
    if (!o) return;
    worker_stop(o->wk, cancel_transfers);
    pthread_mutex_destroy(&o->mu);
    free(o->link_base);
    sodium_memzero(o->link_key, sizeof o->link_key);
    free(o);
}
