/*
 * calendar.c - choosing the calendar adapter, and the "none" adapter used
 * when no calendar is configured (see calendar.h).
 */
#include "calendar.h"
#include "google.h"
#include "../config.h"

static br_err none_create(struct calendar *c, const struct cal_event *ev, char **event_id)
{
    (void)c;
    (void)ev;
    *event_id = NULL;
    return err_set(BR_CONFIG, "no calendar configured (BARBERIA_GOOGLE_CREDENTIALS unset)");
}

static br_err none_delete(struct calendar *c, const char *event_id)
{
    (void)c;
    (void)event_id;
    return err_set(BR_CONFIG, "no calendar configured");
}

static br_err none_move(struct calendar *c, const char *event_id, const char *start,
                        const char *end)
{
    (void)c;
    (void)event_id;
    (void)start;
    (void)end;
    return err_set(BR_CONFIG, "no calendar configured");
}

static void none_close(struct calendar *c)
{
    (void)c;
}

static const struct cal_ops none_ops = {
    .name = "none",
    .create_event = none_create,
    .delete_event = none_delete,
    .move_event = none_move,
    .close = none_close,
};

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
