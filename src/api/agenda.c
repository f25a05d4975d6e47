/*
 * agenda.c - issue 9's bookable hours: GET /api/config, the catalog's
 * administration (barberos and servicios with activo), the barbers' weekly
 * schedules, days off and shop closures, and GET /api/disponibilidad.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- GET /api/config ---------------------------------------------------------------- */

void api_config_get(struct http_req *r)
{
    const struct config *cfg = api_app(r)->cfg;
    struct jw w;
    api_begin(&w);
    jw_kstr(&w, "zona", cfg->tz);
    jw_kint(&w, "paso_min", cfg->slot_min);
    jw_kint(&w, "antelacion_min", cfg->min_notice_min);
    jw_kint(&w, "dias_max", cfg->max_days_ahead);
    jw_kint(&w, "limite_cancelacion_min", cfg->cancel_cutoff_min);
    api_reply(r, 200, &w);
}
