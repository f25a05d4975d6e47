/*
 * sweeper.c - finishing what a crash left half-done (see sweeper.h).
 *
 * The sweeper talks only to the ports: the store for intents and leases,
 * the object store for objects and its temporary files, and the object
 * store's spool helper for the upload spool (file I/O stays in the
 * adapters).
 */
#include "sweeper.h"
#include "espera.h"
#include "photos.h"
#include "../util/log.h"
#include "../util/metrics.h"
#include "../util/procid.h"
#include "../util/vec.h"
#include "../util/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sweeper {
    struct app *app;
    const char *spool_dir;
    int interval_ms;
    struct worker *wk;
};

struct pass {
    struct app *app;
    const struct procid *me;
    br_ts since; /* leases renewed before this have lapsed */
    br_ts stale; /* this process's intents made before this are no request's; "": none */
    struct sweep_stats st;
    struct obj_intent *v; /* the intents found, owned */
    size_t n, cap;
};

static br_err collect(void *ud, const struct obj_intent *in)
{
    struct pass *p = ud;
    VEC_RESERVE(p->v, p->n, p->cap, 16);
    struct obj_intent *c = &p->v[p->n++];
    *c = *in;
    c->bucket = xstrdup(in->bucket);
    c->key = xstrdup(in->key);
    c->op = xstrdup(in->op);
    c->node = xstrdup(in->node);
    c->instance = xstrdup(in->instance);
    return BR_OK;
}

/* Whether the process (node, pid, instance) is gone. A store failure
 * counts as alive: when in doubt, touch nothing. */
static bool owner_gone(struct pass *p, const char *node, long pid, const char *instance)
{
    if (!instance[0]) return true; /* disowned */
    if (!strcmp(instance, p->me->instance)) return false;
    if (!strcmp(node, p->me->node) && (pid == p->me->pid || !procid_pid_alive(pid))) return true;
    bool live = true;
    if (store_lease_live(p->app->store, instance, p->since, &live) != BR_OK) {
        log_warn("sweep: cannot read the lease of instance %s: %s", instance, err_msg());
        return false;
    }
    return !live;
}

/* The longest a request of this process may hold an intent, doubled and
 * at least ten minutes: an upload or a deletion records its intent, makes
 * one object call, writes its record and settles the intent; each store
 * write waits at most for a connection (db_wait_ms), runs again after
 * deadlocks until the lock bound, its last attempt bounded by the lock
 * bound plus a slack, and a lost COMMIT answer is asked about for as long
 * again (3 x db_lock_wait_ms + 4 s). An intent of this process older than
 * that was left by a request that could neither finish nor disown it. */
static int64_t own_bound_ms(const struct config *cfg)
{
    int64_t write = (int64_t)cfg->db_wait_ms + 3 * (int64_t)cfg->db_lock_wait_ms + 4000;
    int64_t held = 3 * write + cfg->storage_timeout_ms;
    return 2 * held > 600000 ? 2 * held : 600000;
}

/* Whether in is this process's own and older than any request of it can
 * still be doing. */
static bool own_stale(const struct pass *p, const struct obj_intent *in)
{
    return p->stale[0] && !strcmp(in->instance, p->me->instance) &&
           strcmp(in->created_at, p->stale) < 0;
}

static bool tmp_writer_gone(void *ud, long pid, const char *instance)
{
    struct pass *p = ud;
    return owner_gone(p, p->me->node, pid, instance);
}

static void removed_tmp(void *ud, const char *what)
{
    struct pass *p = ud;
    p->st.tmp++;
    log_info("sweep: removed the unfinished object file %s", what);
}

static void removed_spool(void *ud, const char *what)
{
    struct pass *p = ud;
    p->st.spool++;
    log_info("sweep: removed the upload spool file %s", what);
}

/* Finishes one intent of a gone process. */
static br_err finish(struct pass *p, const struct obj_intent *in)
{
    struct obj_intent me = {
        .node = (char *)p->me->node, .pid = p->me->pid, .instance = (char *)p->me->instance};
    br_err rc = store_intent_take(p->app->store, in->id, in->instance, &me);
    if (rc == BR_NOTFOUND) return BR_OK; /* finished by someone else meanwhile */
    if (rc) return rc;
    bool referenced = false;
    if (!strcmp(in->bucket, PHOTO_BUCKET)) {
        rc = store_foto_path_exists(p->app->store, in->key, &referenced);
    } else {
        log_warn("sweep: intent %s names unknown bucket %s; left alone", in->id, in->bucket);
        referenced = true;
    }
    if (!rc && !referenced) {
        rc = obj_remove(p->app->obj, in->bucket, in->key);
        if (rc) {
            log_error("sweep: cannot remove %s/%s: %s (retried on the next pass)", in->bucket,
                      in->key, err_msg());
            p->st.failures++;
            if (store_intent_disown(p->app->store, in->id, p->me->instance) != BR_OK)
                log_error("sweep: cannot disown intent %s: %s", in->id, err_msg());
            return BR_OK;
        }
        p->st.objects++;
        log_info("sweep: removed %s/%s (%s intent of pid %lld on %s, gone)", in->bucket, in->key,
                 in->op, (long long)in->pid, in->node);
    }
    if (!rc) rc = store_intent_clear(p->app->store, in->id, p->me->instance);
    if (!rc) p->st.intents++;
    return rc;
}

br_err sweep_lease_renew(struct app *app)
{
    const struct procid *me = procid_self();
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    br_err rc = store_lease_renew(app->store, me->instance, me->node, me->pid, now);
    if (rc) log_error("sweep: cannot renew this process's lease: %s", err_msg());
    return rc;
}

/* This process's lease renewed, then the intents of gone processes
 * finished: the first error. */
static br_err intents_pass(struct pass *p, int64_t lease_ms)
{
    iso8601_format(clock_now_ms() - lease_ms, p->since);
    struct store *st = p->app->store;
    br_err first = sweep_lease_renew(p->app);
    br_err rc = store_intents_each(st, collect, p);
    for (size_t i = 0; !rc && i < p->n; i++) {
        const struct obj_intent *in = &p->v[i];
        bool stale = own_stale(p, in);
        if (!stale && !owner_gone(p, in->node, (long)in->pid, in->instance)) continue;
        if (stale)
            log_warn("sweep: the %s intent of %s/%s (this process's, made %s) outlived every "
                     "request; finishing it",
                     in->op, in->bucket, in->key, in->created_at);
        rc = finish(p, in);
    }
    if (rc) log_error("sweep: finishing intents failed: %s", err_msg());
    if (rc && !first) first = rc;
    for (size_t i = 0; i < p->n; i++)
        obj_intent_clear(&p->v[i]);
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
    return first;
}

br_err sweep_intents(struct app *app, int64_t lease_ms, struct sweep_stats *stats)
{
    struct pass p = {.app = app, .me = procid_self()};
    br_err rc = intents_pass(&p, lease_ms);
    if (stats) *stats = p.st;
    return rc;
}

br_err sweep_once(struct app *app, const char *spool_dir, int64_t lease_ms,
                  struct sweep_stats *stats)
{
    struct pass p = {.app = app, .me = procid_self()};
    if (app->cfg) iso8601_format(clock_now_ms() - own_bound_ms(app->cfg), p.stale);
    br_err first = intents_pass(&p, lease_ms);
    br_err rc = obj_sweep_tmp(app->obj, tmp_writer_gone, removed_tmp, &p);
    if (rc) log_error("sweep: %s", err_msg());
    if (rc && !first) first = rc;
    if (spool_dir) {
        rc = obj_spool_sweep(spool_dir, removed_spool, &p);
        if (rc) log_error("sweep: %s", err_msg());
        if (rc && !first) first = rc;
    }
    rc = store_leases_expire(app->store, p.since);
    if (rc) log_error("sweep: cannot forget lapsed leases: %s", err_msg());
    if (rc && !first) first = rc;
    /* waiting-list entries whose day has passed */
    rc = espera_sweep(app);
    if (rc) log_error("sweep: cannot remove past waiting-list entries: %s", err_msg());
    if (rc && !first) first = rc;
    /* freed slots whose notices a crash or a failure left unqueued */
    rc = espera_avisar_pendientes(app, NULL);
    if (rc && !first) first = rc;
    metric_inc(M_SWEEPS);
    metric_add(M_SWEEP_FAILURES, p.st.failures);
    metric_add(M_PHOTOS_REMOVED, p.st.objects);
    if (stats) *stats = p.st;
    return first;
}

static int64_t lease_of(int interval_ms)
{
    return 3 * (int64_t)interval_ms;
}

/* A pass every interval_ms until stopped. */
static void run(struct worker *wk, void *ud)
{
    struct sweeper *sw = ud;
    for (;;) {
        worker_nap(wk, sw->interval_ms);
        if (worker_stopping(wk)) break;
        if (sweep_once(sw->app, sw->spool_dir, lease_of(sw->interval_ms), NULL) != BR_OK) {
            /* logged by the pass; the next one tries again */
        }
    }
}

struct alone {
    const struct procid *me;
    char *who; /* the first live process found, owned */
};

static br_err other_lease(void *ud, const struct proc_lease *l)
{
    struct alone *a = ud;
    if (a->who || !strcmp(l->instance, a->me->instance)) return BR_OK;
    /* one of this node's that is gone (a crash) counts no more */
    if (!strcmp(l->node, a->me->node) && !procid_pid_alive((long)l->pid)) return BR_OK;
    a->who = xasprintf("pid %lld on %s, alive at %s", (long long)l->pid, l->node, l->heartbeat_at);
    return BR_OK;
}

br_err sweep_alone(struct app *app, const char *what)
{
    int interval_ms = app->cfg ? app->cfg->sweep_interval_ms : 10000;
    br_ts since;
    iso8601_format(clock_now_ms() - lease_of(interval_ms), since);
    struct alone a = {.me = procid_self()};
    br_err rc = store_leases_each(app->store, since, other_lease, &a);
    if (!rc && a.who)
        rc = err_set(BR_CONFLICT,
                     "another barberia process is using this data (%s): stop it before %s (a "
                     "process that crashed on another node counts for %lld s after it was last "
                     "alive)",
                     a.who, what, (long long)(lease_of(interval_ms) / 1000));
    free(a.who);
    return rc;
}

br_err sweep_start(struct app *app, const char *spool_dir, int interval_ms, struct sweeper **out)
{
    struct sweep_stats s;
    if (sweep_once(app, spool_dir, lease_of(interval_ms), &s) == BR_OK &&
        (s.intents || s.tmp || s.spool))
        log_info("sweep: start-up pass finished %d intents, removed %d objects, %d unfinished "
                 "object files and %d spool files",
                 s.intents, s.objects, s.tmp, s.spool);
    struct sweeper *sw = xcalloc(1, sizeof *sw);
    sw->app = app;
    sw->spool_dir = spool_dir;
    sw->interval_ms = interval_ms;
    if (!worker_start(run, sw, &sw->wk)) {
        free(sw);
        return err_set(BR_IO, "cannot start the sweeper thread");
    }
    *out = sw;
    return BR_OK;
}

void sweep_stop(struct sweeper *sw)
{
    if (!sw) return;
    worker_stop(sw->wk, NULL);
    const struct procid *me = procid_self();
    if (store_lease_end(sw->app->store, me->instance) != BR_OK)
        log_warn("sweep: cannot end this process's lease: %s", err_msg());
    free(sw);
}
