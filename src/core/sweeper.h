/*
 * sweeper.h - finishes or undoes what a crash left half-done: the object
 * intents (store.h's obj_intent) of processes that are gone, the object
 * store's unfinished temporary files, and the HTTP upload spool.
 *
 * `barberia serve` runs one pass at start, before it serves (so within
 * moments of a restart after a crash no orphan remains), then one every
 * interval on a thread of its own. Each pass also renews this process's
 * lease, which is how processes on other nodes tell it is alive.
 *
 * An intent belongs to a gone process when it was disowned, or its owner
 * is on this node and its pid is not alive or is this process's pid with
 * another instance id, or its owner's lease was not renewed for three
 * intervals. A pass takes such an intent over (one transaction that only
 * one sweeper can win) and then: a put intent whose record exists is just
 * cleared; a put intent without a record, and a delete intent, have their
 * object removed and are cleared. This process's own intents are uploads
 * and deletions in flight and are left alone, unless older than any
 * request can run (sweep_once: twice the longest a request may hold one,
 * at least ten minutes): such an intent was left by a request that could
 * neither finish nor disown it (a write whose outcome was unknown, then the
 * disowning failing too) and is finished like a gone process's. Every
 * removal is logged, one line each.
 */
#ifndef BR_SWEEPER_H
#define BR_SWEEPER_H

#include "app.h"

struct sweeper;

/* What a pass did. */
struct sweep_stats {
    int intents;  /* intents of gone processes finished */
    int objects;  /* orphan objects removed */
    int tmp;      /* unfinished temporary object files removed */
    int spool;    /* upload spool files removed */
    int failures; /* removals that failed (retried on the next pass) */
};

/* One pass over the store, the object store and spool_dir (NULL: no
 * spool), counting a lease as lapsed after lease_ms. OUT: *stats (may be
 * NULL). Errors: the store's or object store's, after the rest of the pass
 * has run. */
br_err sweep_once(struct app *app, const char *spool_dir, int64_t lease_ms,
                  struct sweep_stats *stats) WARN_UNUSED;

/* Records that this process is alive now (its lease, which every node's
 * sweeper reads before it finishes this process's intents); logs a
 * failure. */
br_err sweep_lease_renew(struct app *app);

/* The intents part of a pass alone (this process's lease renewed, the
 * intents of gone processes finished): what a bulk writer (import,
 * restore) runs before it starts, so that a crashed predecessor's objects
 * are gone. */
br_err sweep_intents(struct app *app, int64_t lease_ms, struct sweep_stats *stats) WARN_UNUSED;

/* BR_CONFLICT while another process keeps a live lease on this data: a
 * `serve` on any node (its sweeper renews the lease every interval), or
 * an import or restore under way. One of this node's whose pid is gone
 * counts no more; another node's until its lease lapses (three intervals).
 * what names the caller's work in the message ("an import"). */
br_err sweep_alone(struct app *app, const char *what) WARN_UNUSED;

/* Runs a pass now, then one every interval_ms on a new thread. spool_dir
 * is borrowed until sweep_stop. OUT: *out. A failing first pass is logged
 * and does not stop the start; failing to start the thread does. */
br_err sweep_start(struct app *app, const char *spool_dir, int interval_ms,
                   struct sweeper **out) WARN_UNUSED;

/* Stops the thread after its current pass and ends this process's lease.
 * NULL is a no-op. */
void sweep_stop(struct sweeper *sw);

#endif
