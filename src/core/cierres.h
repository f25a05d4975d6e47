/*
 * cierres.h - days off and closures that meet bookings: which confirmed
 * appointments a day off of a barber, or a closure of the whole shop,
 * falls on; and cancelling them in one action, each as a staff cancel
 * (core/cambios.h) whose e-mail tells the client why, with the shop's
 * message. Adding the day off never cancels anything by itself.
 */
#ifndef BR_CIERRES_H
#define BR_CIERRES_H

#include "app.h"

#define CIERRES_MAX 500 /* appointments one day off lists at most (and cancels at a time) */

/* The confirmed appointments that start on the local dates of a (the
 * barber's, or every barber's for a closure) and not before now_ms, by
 * start, at most CIERRES_MAX, each given to fn. */
br_err cierres_afectadas(struct app *app, const struct ausencia *a, int64_t now_ms,
                         store_cita_aviso_fn fn, void *ud) WARN_UNUSED;

/* Cancels every one of ausencia id (path text), however many (listed
 * CIERRES_MAX at a time): each cancelled is given to fn (its detail as
 * listed before the cancel). mensaje: nullable, at most RULE_MENSAJE_MAX
 * bytes. An appointment cancelled meanwhile is left alone; calling again
 * cancels only what was booked on those dates since (usually nothing: an
 * empty list).
 * BR_INVALID "Campo inválido: mensaje"; BR_NOTFOUND "Ausencia no
 * encontrada"; BR_BUSY, BR_INTERNAL. */
br_err cierres_cancelar(struct app *app, const char *id, const char *mensaje,
                        store_cita_aviso_fn fn, void *ud) WARN_UNUSED;

#endif
