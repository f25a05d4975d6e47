/*
 * test_rules.c - the shop's rules on stored values (domain/rules.h), each
 * a table of values and what the rule says of them: names, photo URLs,
 * motivos, lengths, prices, HH:MM times, weekdays and intervals of a
 * schedule, the dates of a day off, passwords.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "domain/rules.h"
#include "domain/records.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* n bytes: "ñ" (two bytes) repeated, and an "a" when n is odd. Caller frees. */
static char *text_of(size_t n)
{
    char *t = malloc(n + 1);
    assert_non_null(t);
    for (size_t i = 0; i + 1 < n; i += 2)
        memcpy(t + i, "\xc3\xb1", 2);
    if (n % 2) t[n - 1] = 'a';
    t[n] = '\0';
    return t;
}

/* --- text ---------------------------------------------------------------------------- */

struct text_row {
    const char *s; /* NULL with len: text_of(len); NULL without: NULL */
    size_t len;
    bool nombre, foto_url, motivo;
};

static const struct text_row text_rows[] = {
    {NULL, 0, false, false, true},          /* absent: only a motivo may be */
    {"", 0, false, false, true},            /* empty: only a motivo may be */
    {"Corte clásico", 0, true, true, true}, /* UTF-8 */
    {"Con\tTab", 0, true, true, true},      /* a tab is white space on the line */
    {"Dos\nlíneas", 0, false, true, true},  /* but a name is one line */
    {"Cr\rhere", 0, false, true, true},
    {" \t ", 0, false, true, true}, /* blank: no name */
    {" Ana ", 0, true, true, true},
    {"\xff\xfe", 0, false, false, false},   /* not UTF-8 */
    {"Corte \xc3", 0, false, false, false}, /* a character cut short */
    {NULL, 1, true, true, true},
    {NULL, 200, true, true, true},
    {NULL, 201, false, true, true}, /* a nombre counts bytes, not characters */
    {NULL, 500, false, true, true},
    {NULL, 501, false, true, false},
    {NULL, 2048, false, true, false},
    {NULL, 2049, false, false, false},
};

static void text_rules_cap_bytes_and_want_utf8(void **state)
{
    (void)state;
    for (size_t i = 0; i < LEN(text_rows); i++) {
        const struct text_row *r = &text_rows[i];
        char *owned = r->s || !r->len ? NULL : text_of(r->len);
        const char *s = owned ? owned : r->s;
        if (rule_nombre_ok(s) != r->nombre) fail_msg("row %zu: rule_nombre_ok", i);
        if (rule_foto_url_ok(s) != r->foto_url) fail_msg("row %zu: rule_foto_url_ok", i);
        if (rule_motivo_ok(s) != r->motivo) fail_msg("row %zu: rule_motivo_ok", i);
        free(owned);
    }
    assert_int_equal(RULE_NOMBRE_MAX, 200);
    assert_int_equal(RULE_URL_MAX, 2048);
    assert_int_equal(RULE_MOTIVO_MAX, 500);
}

/* --- services ------------------------------------------------------------------------ */

static void a_length_is_1_to_1440_minutes(void **state)
{
    (void)state;
    static const struct {
        int64_t min;
        bool ok;
    } rows[] = {
        {INT64_MIN, false}, {-1, false},  {0, false},    {1, true},
        {30, true},         {1440, true}, {1441, false}, {INT64_MAX, false},
    };
    for (size_t i = 0; i < LEN(rows); i++)
        if (rule_duracion_ok(rows[i].min) != rows[i].ok)
            fail_msg("rule_duracion_ok(%lld)", (long long)rows[i].min);
}

static void a_price_is_0_to_1e9(void **state)
{
    (void)state;
    static const struct {
        double p;
        bool ok;
    } rows[] = {
        {0, true},        {0.01, true},       {12.5, true},      {1e9, true},  {-0.01, false},
        {1e9 + 1, false}, {-INFINITY, false}, {INFINITY, false}, {NAN, false}, {-0.0, true},
    };
    for (size_t i = 0; i < LEN(rows); i++)
        if (rule_precio_ok(rows[i].p) != rows[i].ok) fail_msg("rule_precio_ok(%g)", rows[i].p);
}

/* --- weekly schedules ------------------------------------------------------------------ */

static void hhmm_reads_00_00_to_24_00_and_nothing_else(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int min; /* -1: refused */
    } rows[] = {
        {"00:00", 0},  {"09:30", 570}, {"23:59", 1439}, {"24:00", 1440}, {"24:01", -1},
        {"25:00", -1}, {"12:60", -1},  {"9:30", -1},    {"09:3", -1},    {"09-30", -1},
        {"0930", -1},  {"09:30 ", -1}, {" 9:30", -1},   {"ab:cd", -1},   {"", -1},
        {NULL, -1},    {"+9:30", -1},  {"09:+3", -1},
    };
    for (size_t i = 0; i < LEN(rows); i++) {
        int m = -7;
        bool ok = rule_hhmm_parse(rows[i].s, &m);
        if (ok != (rows[i].min >= 0) || (ok && m != rows[i].min))
            fail_msg("rule_hhmm_parse(\"%s\"): %d %d", rows[i].s ? rows[i].s : "(null)", ok, m);
        if (!ok) continue;
        char back[6];
        rule_hhmm_format(m, back);
        assert_string_equal(back, rows[i].s);
    }
}

static void a_weekday_is_1_to_7(void **state)
{
    (void)state;
    for (int64_t d = -1; d <= 9; d++)
        assert_int_equal(rule_dia_ok(d), d >= 1 && d <= 7);
}

static void an_interval_starts_before_it_ends_within_the_day(void **state)
{
    (void)state;
    static const struct {
        int inicio, fin;
        bool ok;
    } rows[] = {
        {0, 1440, true},    {540, 1080, true},  {0, 1, true},
        {1439, 1440, true}, {600, 600, false},  {601, 600, false},
        {-1, 600, false},   {600, 1441, false}, {1440, 1440, false},
    };
    for (size_t i = 0; i < LEN(rows); i++)
        if (rule_tramo_ok(rows[i].inicio, rows[i].fin) != rows[i].ok)
            fail_msg("rule_tramo_ok(%d, %d)", rows[i].inicio, rows[i].fin);
}

static void intervals_overlap_on_the_same_day_only(void **state)
{
    (void)state;
    static const struct {
        int dia_a, ini_a, fin_a, dia_b, ini_b, fin_b;
        bool overlap;
    } rows[] = {
        {1, 540, 840, 1, 840, 1080, false},                                    /* touching */
        {1, 540, 841, 1, 840, 1080, true},  {1, 540, 1080, 1, 600, 660, true}, /* inside */
        {1, 600, 660, 1, 540, 1080, true},                                     /* either order */
        {1, 540, 840, 2, 540, 840, false},                                     /* another day */
        {1, 540, 600, 1, 700, 800, false},  {7, 0, 1440, 7, 1439, 1440, true},
    };
    for (size_t i = 0; i < LEN(rows); i++) {
        bool got = rule_tramos_overlap(rows[i].dia_a, rows[i].ini_a, rows[i].fin_a, rows[i].dia_b,
                                       rows[i].ini_b, rows[i].fin_b);
        if (got != rows[i].overlap) fail_msg("row %zu: overlap %d", i, got);
        /* the rule is symmetric */
        assert_int_equal(rule_tramos_overlap(rows[i].dia_b, rows[i].ini_b, rows[i].fin_b,
                                             rows[i].dia_a, rows[i].ini_a, rows[i].fin_a),
                         got);
    }
}

/* --- days off and closures ------------------------------------------------------------- */

static void a_date_range_is_two_real_dates_in_order(void **state)
{
    (void)state;
    static const struct {
        const char *desde, *hasta;
        enum rule_range want;
    } rows[] = {
        {"2026-05-01", "2026-05-01", RULE_RANGE_OK}, /* one day */
        {"2026-05-01", "2026-05-31", RULE_RANGE_OK},
        {"2026-12-31", "2027-01-01", RULE_RANGE_OK},
        {"2028-02-29", "2028-03-01", RULE_RANGE_OK}, /* a leap day */
        {"2026-05-02", "2026-05-01", RULE_RANGE_REVERSED},
        {"2027-01-01", "2026-12-31", RULE_RANGE_REVERSED},
        {"2026-02-30", "2026-03-01", RULE_RANGE_DESDE},
        {"2026-5-1", "2026-05-01", RULE_RANGE_DESDE},
        {"", "2026-05-01", RULE_RANGE_DESDE},
        {NULL, "2026-05-01", RULE_RANGE_DESDE},
        {"mañana", "2026-05-01", RULE_RANGE_DESDE},
        {"2026-05-01", "2026-13-01", RULE_RANGE_HASTA},
        {"2026-05-01", "2026-05-01T00:00", RULE_RANGE_HASTA},
        {"2026-05-01", NULL, RULE_RANGE_HASTA},
        {"bad", "bad", RULE_RANGE_DESDE}, /* desde is checked first */
    };
    for (size_t i = 0; i < LEN(rows); i++)
        if (rule_date_range(rows[i].desde, rows[i].hasta) != rows[i].want)
            fail_msg("row %zu: got %d", i, (int)rule_date_range(rows[i].desde, rows[i].hasta));
}

/* --- passwords --------------------------------------------------------------------------- */

static void a_password_has_6_characters_and_at_most_1024_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *pw;
        size_t len; /* pw NULL: text_of(len) */
        bool long_enough, short_enough;
    } rows[] = {
        {"", 0, false, true},      {"abcde", 0, false, true},
        {"abcdef", 0, true, true}, {"ñññññ", 0, false, true},     /* 10 bytes, 5 characters */
        {"ññññññ", 0, true, true}, {"abcde\xff", 0, false, true}, /* not UTF-8 */
        {NULL, 1024, true, true},  {NULL, 1025, true, false},
    };
    for (size_t i = 0; i < LEN(rows); i++) {
        char *owned = rows[i].pw ? NULL : text_of(rows[i].len);
        const char *pw = owned ? owned : rows[i].pw;
        if (rule_password_long_enough(pw) != rows[i].long_enough)
            fail_msg("row %zu: rule_password_long_enough", i);
        if (rule_password_short_enough(pw) != rows[i].short_enough)
            fail_msg("row %zu: rule_password_short_enough", i);
        free(owned);
    }
}

static void a_telefono_has_6_to_15_digits_and_phone_punctuation(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        bool ok;
    } rows[] = {
        {"600111222", true},
        {"+34 600 111 222", true},
        {"(91) 555-12.34", true},
        {"123456", true},
        {"12345", false},
        {"1234567890123456", false},
        {"", false},
        {"llámame", false},
        {"600111222 ext", false},
        {"600\n111222", false},
        {"+34 600 111 222 333 44 55 66 7", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rule_telefono_ok(rows[i].s) != rows[i].ok) fail_msg("row %zu: %s", i, rows[i].s);
    assert_false(rule_telefono_ok(NULL));
}

static void a_margin_is_0_to_120_minutes(void **state)
{
    (void)state;
    assert_true(rule_margen_ok(0));
    assert_true(rule_margen_ok(120));
    assert_false(rule_margen_ok(-1));
    assert_false(rule_margen_ok(121));
}

static void a_stored_email_is_an_address_a_placeholder_or_a_deleted_one(void **state)
{
    (void)state;
    assert_true(email_es_direccion("ana@example.com"));
    assert_false(email_es_direccion(EMAIL_NINGUNO_PREFIX "7d0f1c2a-3b4c-4d5e-8f60-718293a4b5c6"));
    assert_false(email_es_direccion(NULL));
    assert_false(email_es_direccion(""));
    assert_true(email_es_eliminado("7d0f1c2a-3b4c-4d5e-8f60-718293a4b5c6" EMAIL_ELIMINADO_SUFFIX));
    assert_false(email_es_eliminado("ana@example.com"));
    assert_false(email_es_eliminado("ana@eliminado.invalid.example.com"));
    assert_false(email_es_eliminado(EMAIL_ELIMINADO_SUFFIX)); /* no id before it */
    assert_false(email_es_eliminado(NULL));
}

static void a_search_folds_accents_and_reads_a_number_by_its_digits(void **state)
{
    (void)state;
    static const char *const fold[][2] = {
        {"Lucía Gómez", "lucia gomez"},
        {"ÁÉÍÓÚÜÑ", "aeiouun"},
        {"Peña", "pena"},
        {"Zoë", "zo\xc3\xab"}, /* only Spanish's letters fold */
        {"50%_a", "50%_a"},
        {"", ""},
    };
    char out[64];
    for (size_t i = 0; i < LEN(fold); i++) {
        size_t n = rule_busqueda_fold(fold[i][0], strlen(fold[i][0]), out);
        if (strcmp(out, fold[i][1]) || n != strlen(fold[i][1]))
            fail_msg("fold(%s) = %s", fold[i][0], out);
    }
    static const char *const spaced[][2] = {
        {"Dora  Ruiz", "Dora Ruiz"},
        {"\tDora\t \tRuiz  ", "Dora Ruiz"},
        {"  ", ""},
        {"Peña", "Peña"},
        {"", ""},
    };
    for (size_t i = 0; i < LEN(spaced); i++) {
        size_t n = rule_espacios_simples(spaced[i][0], out);
        if (strcmp(out, spaced[i][1]) || n != strlen(spaced[i][1]))
            fail_msg("espacios_simples(%s) = \"%s\"", spaced[i][0], out);
    }
    static const char *const digits[][2] = {
        {"611 22 33 44", "611223344"},
        {"+34 611-22.33(44)", "34611223344"},
        {"0034 611223344", "34611223344"},
        {"611", "611"},
        {"61", ""},
        {"ana", ""},
        {"611a", ""},
        {"", ""},
    };
    for (size_t i = 0; i < LEN(digits); i++) {
        size_t n = rule_telefono_digitos(digits[i][0], strlen(digits[i][0]), out);
        if (strcmp(out, digits[i][1]) || n != strlen(digits[i][1]))
            fail_msg("digits(%s) = %s", digits[i][0], out);
    }
}

static void una_linea_turns_controls_to_spaces_and_cuts_between_characters(void **state)
{
    (void)state;
    char out[8];
    rule_una_linea("Ana\r\nPérez", out, sizeof out);
    assert_string_equal(out, "Ana  P"); /* "é" (two bytes) would be the 7th and 8th */
    rule_una_linea("abcdeñ", out, sizeof out);
    assert_string_equal(out, "abcdeñ"); /* exactly 7 */
    rule_una_linea("abcdefñ", out, sizeof out);
    assert_string_equal(out, "abcdef"); /* "ñ" would not fit whole */
    rule_una_linea("ab€€", out, sizeof out);
    assert_string_equal(out, "ab€"); /* 3-byte characters */
    rule_una_linea("a\tb", out, sizeof out);
    assert_string_equal(out, "a b");
    rule_una_linea("", out, sizeof out);
    assert_string_equal(out, "");
    char big[RULE_NOMBRE_MAX + 1];
    char in[300];
    memset(in, 'N', sizeof in - 1);
    in[sizeof in - 1] = '\0';
    rule_una_linea(in, big, sizeof big);
    assert_int_equal(strlen(big), RULE_NOMBRE_MAX);
    assert_true(rule_nombre_ok(big));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_search_folds_accents_and_reads_a_number_by_its_digits),
        cmocka_unit_test(text_rules_cap_bytes_and_want_utf8),
        cmocka_unit_test(una_linea_turns_controls_to_spaces_and_cuts_between_characters),
        cmocka_unit_test(a_stored_email_is_an_address_a_placeholder_or_a_deleted_one),
        cmocka_unit_test(a_length_is_1_to_1440_minutes),
        cmocka_unit_test(a_price_is_0_to_1e9),
        cmocka_unit_test(hhmm_reads_00_00_to_24_00_and_nothing_else),
        cmocka_unit_test(a_weekday_is_1_to_7),
        cmocka_unit_test(an_interval_starts_before_it_ends_within_the_day),
        cmocka_unit_test(intervals_overlap_on_the_same_day_only),
        cmocka_unit_test(a_date_range_is_two_real_dates_in_order),
        cmocka_unit_test(a_password_has_6_characters_and_at_most_1024_bytes),
        cmocka_unit_test(a_telefono_has_6_to_15_digits_and_phone_punctuation),
        cmocka_unit_test(a_margin_is_0_to_120_minutes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
