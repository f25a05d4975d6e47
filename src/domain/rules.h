/*
 * rules.h - the shop's rules on the values it stores, written once: what a
 * barber's or a service's nombre may be, a price, a length, the HH:MM times
 * and intervals of a weekly schedule, the dates of a day off or a closure,
 * a password's length. The HTTP handlers, the command line and the core's
 * use cases all ask these functions, so `barberia servicio add` refuses
 * exactly what POST /api/admin/servicios refuses.
 *
 * Each answers yes or no (or which part is wrong); the message a refusal
 * gets is its caller's (the API's Spanish, the CLI's flag names).
 *
 * Pure functions of their arguments; safe from any thread.
 */
#ifndef BR_RULES_H
#define BR_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- text ------------------------------------------------------------------------- */

#define RULE_NOMBRE_MAX 200  /* bytes of a barber's or a service's nombre */
#define RULE_URL_MAX    2048 /* bytes of a barber's foto_url */
#define RULE_MOTIVO_MAX 500  /* bytes of the motivo of a day off or a closure */

/* A nombre (a barber's, a service's, a client's): UTF-8 text of at most
 * RULE_NOMBRE_MAX bytes, one line (no control character but a tab), not
 * blank (white space only).
 * NULL is not one. */
bool rule_nombre_ok(const char *s);

/* s as one line of at most cap - 1 bytes, into out: every control
 * character (a line break, a tab) becomes a space, and the text is cut
 * after the last whole UTF-8 character that fits. For a name or a phone
 * whose rules the caller must not refuse with an error of its own (the
 * contract's sign-up). */
void rule_una_linea(const char *s, char *out, size_t cap);

/* A barber's foto_url, when there is one: non-empty UTF-8 text of at most
 * RULE_URL_MAX bytes. NULL is not one (no photo is the caller's NULL). */
bool rule_foto_url_ok(const char *s);

/* The motivo of a day off or a closure: NULL (none), or UTF-8 text of at
 * most RULE_MOTIVO_MAX bytes ("" included). */
bool rule_motivo_ok(const char *s);

#define RULE_TELEFONO_MAX 32 /* bytes of a client's telefono */

/* A client's telefono: at most RULE_TELEFONO_MAX bytes of digits, spaces
 * and "+-(). ", with 6 to 15 digits (E.164's most). NULL is not one (no
 * telefono is the caller's NULL). */
bool rule_telefono_ok(const char *s);
#define RULE_MENSAJE_MAX 1000 /* bytes of the shop's message to the clients of a closure */
/* That message: NULL or "" (none), or UTF-8 text of at most
 * RULE_MENSAJE_MAX bytes. */
bool rule_mensaje_ok(const char *s);

/* --- services ---------------------------------------------------------------------- */

#define RULE_DURACION_MAX 1440 /* minutes: a day */
#define RULE_PRECIO_MAX   1e9

/* A service's duracion_min: whole minutes, 1 to RULE_DURACION_MAX. */
bool rule_duracion_ok(int64_t minutes);

/* A service's precio: 0 to RULE_PRECIO_MAX (NaN is not one). */
bool rule_precio_ok(double precio);

/* --- weekly schedules -------------------------------------------------------------- */

#define RULE_TRAMOS_MAX 168 /* intervals in a barber's week */

/* "HH:MM" (00:00 to 24:00) to minutes from midnight; false when s (NULL
 * included) is anything else. */
bool rule_hhmm_parse(const char *s, int *minutes);

/* minutes (0 to 1440) to "HH:MM". */
void rule_hhmm_format(int minutes, char out[6]);

/* An ISO weekday: 1 (Monday) to 7 (Sunday). */
bool rule_dia_ok(int64_t dia);

/* An interval of a day, [inicio, fin) in minutes: 0 <= inicio < fin <= 1440. */
bool rule_tramo_ok(int inicio, int fin);

/* Whether two intervals of a week, (dia, [inicio, fin)) each, overlap:
 * the same day and a common minute (touching ends do not overlap). */
bool rule_tramos_overlap(int dia_a, int inicio_a, int fin_a, int dia_b, int inicio_b, int fin_b);

/* --- days off and closures ----------------------------------------------------------- */

/* What is wrong with the dates desde .. hasta ("YYYY-MM-DD", both
 * included), in the order they are checked. */
enum rule_range {
    RULE_RANGE_OK,
    RULE_RANGE_DESDE,    /* desde is not a date */
    RULE_RANGE_HASTA,    /* hasta is not a date */
    RULE_RANGE_REVERSED, /* hasta comes before desde */
};
enum rule_range rule_date_range(const char *desde, const char *hasta);

/* --- passwords ----------------------------------------------------------------------- */

#define RULE_PASSWORD_MIN 6    /* characters (code points) */
#define RULE_PASSWORD_MAX 1024 /* bytes: hashing cost must stay bounded */

/* Long enough: UTF-8 of at least RULE_PASSWORD_MIN characters. */
bool rule_password_long_enough(const char *pw);

/* Short enough to hash: at most RULE_PASSWORD_MAX bytes. */
bool rule_password_short_enough(const char *pw);

/* --- finding a client ------------------------------------------------------------------ */

/* A name as the desk keeps it: no spaces or tabs at either end, and each
 * run of them inside one space ("Dora \t Ruiz" is "Dora Ruiz"). Writes it
 * to out (at least strlen(in) + 1 bytes) and returns its length. */
size_t rule_espacios_simples(const char *in, char *out);

/* How a name is compared when the desk searches: lowercase, and the
 * Spanish accented letters (á é í ó ú ü ñ, either case) as their plain
 * ones, so that "lucia" finds "Lucía". Writes the folded in[0..n) to out
 * (at least n + 1 bytes: folding never lengthens) and returns its length.
 * The store folds stored names the same way (store/clientes.c). */
size_t rule_busqueda_fold(const char *in, size_t n, char *out);

/* The digits of a phone number as typed, when the text is one (digits,
 * spaces and "+-()." only, at least 3 digits); an international "00" is
 * dropped. Writes them to out (at least n + 1 bytes) and returns how many;
 * 0 when the text is not a number. */
size_t rule_telefono_digitos(const char *in, size_t n, char *out);

/* A service's margen_min, the clean-up time kept free after each of its
 * appointments: whole minutes, 0 to RULE_MARGEN_MAX. */
#define RULE_MARGEN_MAX 120
bool rule_margen_ok(int64_t minutes);

#endif
