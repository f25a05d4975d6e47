/*
 * calendar.h - the calendar port: where a booking's event is created (and
 * deleted when it is cancelled and moved when rescheduled).
 *
 * Adapters: "none" (nothing configured: an adapter without ops, every
 * attempt fails quietly with BR_CONFIG) and "google" (Google Calendar,
 * calendar/google.c). The core calls calendar_create_event() and the like,
 * never the ops, and never asks which adapter it has.
 *
 * Thread-safety: one struct calendar serves every thread; an adapter shares
 * what must be shared (Google's access token) behind its own lock.
 */
#ifndef BR_CALENDAR_H
#define BR_CALENDAR_H

#include "../util/err.h"

struct config;

/* The event of a booking, exactly as the specification builds it. */
struct cal_event {
    const char *summary;        /* "<servicio> — <cliente>" */
    const char *description;    /* "Cliente: ...\nBarbero: ...\nServicio: ...[\nNotas: ...]" */
    const char *start, *end;    /* UTC, YYYY-MM-DDTHH:MM:SS.sssZ */
    const char *attendee_email; /* the client's */
};

struct calendar {
    const struct cal_ops *ops;
};

/* Every member but name is NULL for the "none" adapter. */
struct cal_ops {
    const char *name;
    /* Creates the event, within the adapter's time bound. OUT: *event_id
     * (caller frees). Errors: BR_CONFIG (no calendar), BR_UPSTREAM,
     * BR_TIMEOUT, with a one-line detail in err_msg(). */
    br_err (*create_event)(struct calendar *c, const struct cal_event *ev, char **event_id);
    /* Deletes an event this service created (a booking that lost a race
     * for its slot after the event was made). Same errors. */
    br_err (*delete_event)(struct calendar *c, const char *event_id);
    /* Moves an event this service created to [ev->start, ev->end) (UTC,
     * the API's form): a rescheduled appointment. When the calendar no
     * longer has the event (deleted there by hand), makes ev anew within
     * the same bound: OUT *made, its id (caller frees; NULL when moved).
     * Same errors. */
    br_err (*move_event)(struct calendar *c, const char *event_id, const struct cal_event *ev,
                         char **made);
    /* Rewrites an event's title and description as ev's, and its
     * attendees as ev's (none when ev->attendee_email is NULL): the event of
     * a client whose account was deleted. An event gone already is no
     * failure. Same errors. */
    br_err (*rewrite_event)(struct calendar *c, const char *event_id, const struct cal_event *ev);
    void (*close)(struct calendar *c);
};

/* Opens the adapter the configuration names ("google" when
 * google_credentials is set, else "none"). BR_CONFIG when the credentials
 * cannot be used. */
br_err calendar_open(const struct config *cfg, struct calendar **out) WARN_UNUSED;

/* The calls into the calendar: the ops above, or BR_CONFIG ("no calendar
 * configured") when none is configured. */
br_err calendar_create_event(struct calendar *c, const struct cal_event *ev,
                             char **event_id) WARN_UNUSED;
br_err calendar_delete_event(struct calendar *c, const char *event_id) WARN_UNUSED;
br_err calendar_move_event(struct calendar *c, const char *event_id, const struct cal_event *ev,
                           char **made) WARN_UNUSED;
br_err calendar_rewrite_event(struct calendar *c, const char *event_id,
                              const struct cal_event *ev) WARN_UNUSED;

static inline void calendar_close(struct calendar *c)
{
    if (c && c->ops->close) c->ops->close(c);
}

#endif
