/*
 * calendar.c - choosing the calendar adapter, the "none" adapter used when
 * no calendar is configured, and the calls that answer for it (see
 * calendar.h).
 */
#include "calendar.h"
#include "google.h"
#include "../config.h"

/* The "none" adapter: no ops; the calls below answer for it. */
static const struct cal_ops none_ops = {.name = "none"};

static struct calendar none_calendar = {&none_ops};

br_err calendar_open(const struct config *cfg, struct calendar **out)
{
    if (cfg->google_credentials) return calendar_google_open(cfg, out);
    if (cfg->google_subject)
        return err_set(BR_CONFIG, "BARBERIA_GOOGLE_SUBJECT is set but "
                                  "BARBERIA_GOOGLE_CREDENTIALS is not: no calendar to act on");
    *out = &none_calendar;
    return BR_OK;
}

br_err calendar_create_event(struct calendar *c, const struct cal_event *ev, char **event_id)
{
    *event_id = NULL;
    if (!c->ops->create_event)
        return err_set(BR_CONFIG, "no calendar configured (BARBERIA_GOOGLE_CREDENTIALS unset)");
    return c->ops->create_event(c, ev, event_id);
}

br_err calendar_delete_event(struct calendar *c, const char *event_id)
{
    if (!c->ops->delete_event) return err_set(BR_CONFIG, "no calendar configured");
    return c->ops->delete_event(c, event_id);
}

br_err calendar_move_event(struct calendar *c, const char *event_id, const struct cal_event *ev,
                           char **made)
{
    *made = NULL;
    if (!c->ops->move_event) return err_set(BR_CONFIG, "no calendar configured");
    return c->ops->move_event(c, event_id, ev, made);
}

br_err calendar_rewrite_event(struct calendar *c, const char *event_id, const struct cal_event *ev)
{
    if (!c->ops->rewrite_event) return err_set(BR_CONFIG, "no calendar configured");
    return c->ops->rewrite_event(c, event_id, ev);
}
