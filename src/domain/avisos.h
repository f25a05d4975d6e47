/*
 * avisos.h - the rules on how and when the shop reaches a client outside
 * the web app: a phone number in E.164 for WhatsApp, the quiet hours in
 * which no WhatsApp message leaves (but a cancellation), and the list of
 * reminder offsets before an appointment.
 *
 * Pure functions of their arguments; safe from any thread.
 */
#ifndef BR_AVISOS_H
#define BR_AVISOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Digits of an E.164 number (country code first, no '+'), plus NUL. */
#define RULE_E164_MAX 16

/* A phone number as people write it ("+34 612 34 56 78", "0034612345678",
 * "612-345-678", "(612) 345 678") to E.164 digits without the '+'
 * ("34612345678"): spaces, dashes, dots and parentheses are dropped; a
 * leading '+' or "00" means the country code follows; otherwise the number
 * is national and default_cc (digits, e.g. "34") is put in front, after
 * dropping one leading trunk '0' (kept for Italy, "39", where it belongs
 * to the number). The result has 8 to 15 digits and a country code that
 * does not start with 0. False (out unspecified) for anything else: NULL,
 * letters, a '+' elsewhere, too short or too long, a bad default_cc. */
bool rule_telefono_e164(const char *in, const char *default_cc, char out[RULE_E164_MAX]);

/* Whether two phones as typed are one number however written
 * ("611223344", "611 22 33 44", "+34 611 22 33 44"): their E.164 forms
 * with default_cc (nullable) when both have one, else their digits
 * (rule_telefono_digitos); text that is no number only as itself. */
bool rule_telefono_mismo(const char *a, const char *b, const char *default_cc);

/* "HH:MM-HH:MM" (from-to, e.g. "21:00-09:00", over midnight when from is
 * later than to) to minutes from midnight; "" or "no" is no quiet hours at
 * all (*from == *to == 0). False for anything else, or from == to. */
bool rule_quiet_hours_parse(const char *s, int *from, int *to);

/* Whether minute (0-1439, shop time) falls in the quiet hours [from, to). */
bool rule_quiet_now(int minute, int from, int to);

#define RULE_OFFSETS_MAX 8

/* A list of reminder offsets before the start, "24h,2h" (each a whole
 * number with 'd', 'h' or 'm'; 1 minute to 365 days; at most
 * RULE_OFFSETS_MAX; spaces around items allowed) to minutes, largest first
 * and without repeats. "" or "no": none (*n = 0). False for anything else. */
bool rule_reminder_offsets_parse(const char *s, int64_t out_min[RULE_OFFSETS_MAX], int *n);

#endif
