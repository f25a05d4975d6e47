/*
 * test_compose.c - the confirmation e-mail as bytes (mail/compose.h):
 * RFC 2047 encoded-words and their length limits, iCalendar escaping and
 * folding, Spanish dates in a time zone (DST included), the checks on
 * addresses and zone names, and - the point of it all - that no name, note
 * or service text can add a header line or break the MIME structure.
 */
#include "mail/compose.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>
#include <sodium.h>

/* --- helpers -------------------------------------------------------------------------- */

/* Fills out (n octets) with s repeated times times, NUL-terminated. */
static void repeat(char *out, size_t n, const char *prefix, const char *s, int times)
{
    size_t o = (size_t)snprintf(out, n, "%s", prefix);
    for (int i = 0; i < times && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s", s);
    assert_true(o < n);
}

/* Every line ends in CRLF, none is longer than max octets, and only
 * ASCII is used. */
static void expect_lines(const char *s, size_t len, size_t max)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c > 0x7E || (c < 0x20 && c != '\r' && c != '\n' && c != '\t'))
            fail_msg("octet 0x%02x at %zu is not printable ASCII", c, i);
        if (c == '\n' && (i == 0 || s[i - 1] != '\r')) fail_msg("bare LF at %zu", i);
        if (c == '\r' && (i + 1 >= len || s[i + 1] != '\n')) fail_msg("bare CR at %zu", i);
        if (c == '\n') {
            size_t n = i - 1 - start;
            if (n > max) fail_msg("line of %zu octets (max %zu): %.*s", n, max, (int)n, s + start);
            start = i + 1;
        }
    }
    if (start != len) fail_msg("the text does not end with CRLF");
}

/* Decodes the encoded-words of a header value (unfolded first); text
 * outside encoded-words is copied, and white space between two adjacent
 * encoded-words dropped, as RFC 2047 says. Caller frees. */
static char *decode_words(const char *value)
{
    size_t n = strlen(value);
    char *unf = malloc(n + 1), *out = calloc(1, n + 1);
    size_t u = 0, o = 0;
    for (size_t i = 0; i < n; i++) {
        if (value[i] == '\r' && value[i + 1] == '\n') {
            i++;
            continue;
        }
        unf[u++] = value[i];
    }
    unf[u] = '\0';
    bool prev_word = false;
    /* the white space that opens a header value is not part of it */
    const char *p = unf;
    while (*p == ' ' || *p == '\t')
        p++;
    while (*p) {
        if (!strncmp(p, "=?UTF-8?B?", 10)) {
            const char *end = strstr(p + 10, "?=");
            assert_non_null(end);
            size_t bin = 0;
            assert_int_equal(sodium_base642bin((unsigned char *)out + o, n - o, p + 10,
                                               (size_t)(end - p - 10), NULL, &bin, NULL,
                                               sodium_base64_VARIANT_ORIGINAL),
                             0);
            /* each word holds whole characters */
            assert_true(utf8_valid(out + o, bin));
            o += bin;
            p = end + 2;
            prev_word = true;
            continue;
        }
        if (prev_word && *p == ' ') {
            const char *q = p;
            while (*q == ' ')
                q++;
            if (!strncmp(q, "=?UTF-8?B?", 10)) {
                p = q;
                continue;
            }
        }
        out[o++] = *p++;
        prev_word = false;
    }
    out[o] = '\0';
    free(unf);
    return out;
}

/* Asserts every encoded-word in s is at most 75 octets. */
static void expect_word_sizes(const char *s)
{
    for (const char *p = s; (p = strstr(p, "=?UTF-8?B?"));) {
        const char *end = strstr(p + 10, "?=");
        assert_non_null(end);
        size_t n = (size_t)(end + 2 - p);
        if (n > 75) fail_msg("encoded-word of %zu octets", n);
        p = end + 2;
    }
}

/* --- RFC 2047 -------------------------------------------------------------------------- */

static void encoded_words_respect_limits_and_round_trip(void **state)
{
    (void)state;
    char long_mixed[1024], long_ascii[400];
    repeat(long_mixed, sizeof long_mixed, "", "Señor ñandú 💈 ", 30);
    repeat(long_ascii, sizeof long_ascii, "", "abcdefghij", 30);
    static const struct {
        size_t col;
        const char *text;
    } cases[] = {
        {9, "Hola"},
        {9, "Corte clásico — señor"},
        {9, "💈💈💈💈💈💈💈💈💈💈💈💈💈💈💈💈💈💈💈💈💈💈"},
        {4, "Ana María Pérez"},
        {70, "ñ al final de una línea casi llena"},
        {75, "x"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases) + 2; i++) {
        const char *text = i < ARRAY_LEN(cases)    ? cases[i].text
                           : i == ARRAY_LEN(cases) ? long_mixed
                                                   : long_ascii;
        size_t col0 = i < ARRAY_LEN(cases) ? cases[i].col : 9;
        struct buf b;
        buf_init(&b, 1 << 20);
        /* a line prefix of col0 octets stands for the header name */
        char *prefix = calloc(1, col0 + 1);
        memset(prefix, 'H', col0);
        assert_int_equal(buf_puts(&b, prefix), BR_OK);
        size_t col = col0;
        assert_int_equal(mail_encode_words(&b, &col, text), BR_OK);
        assert_int_equal(buf_append(&b, "\r\n", 2), BR_OK);
        expect_lines(b.p, b.len, 76);
        expect_word_sizes(b.p);
        char *back = decode_words(b.p + col0);
        back[strcspn(back, "\r\n")] = '\0';
        assert_string_equal(back, text);
        /* the column returned is where the last line ends */
        const char *last = b.p;
        for (const char *q; (q = strstr(last, "\r\n")) && q + 2 < b.p + b.len;)
            last = q + 2;
        assert_int_equal(col, strlen(last) - 2);
        free(back);
        free(prefix);
        buf_free(&b);
    }
}

static void empty_text_gives_no_word(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 1024);
    size_t col = 9;
    assert_int_equal(mail_encode_words(&b, &col, ""), BR_OK);
    assert_int_equal(b.len, 0);
    assert_int_equal(col, 9);
    buf_free(&b);
}

static void header_text_is_plain_only_when_safe(void **state)
{
    (void)state;
    char long_ascii[200];
    repeat(long_ascii, sizeof long_ascii, "", "Corte ", 15);
    static const struct {
        const char *text;
        bool plain;
        const char *decoded; /* what a reader sees */
    } cases[] = {
        {"Cita confirmada: Corte, 10:30", true, "Cita confirmada: Corte, 10:30"},
        {"Cita confirmada: Corte clásico", false, "Cita confirmada: Corte clásico"},
        {"looks =?like?= a word", false, "looks =?like?= a word"},
        /* once CR LF are spaces this is harmless text and stays readable */
        {"Ana\r\nBcc: evil@x", true, "Ana  Bcc: evil@x"},
        {"tab\there\x7f", false, "tab here "},
        {"bad \xff octet", false, "bad \xEF\xBF\xBD octet"},
        {NULL, false, NULL}, /* long_ascii */
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const char *text = cases[i].text ? cases[i].text : long_ascii;
        struct buf b;
        buf_init(&b, 1 << 16);
        assert_int_equal(mail_header_text(&b, "Subject", text), BR_OK);
        expect_lines(b.p, b.len, 76);
        expect_word_sizes(b.p);
        assert_true(!strncmp(b.p, "Subject: ", 9));
        /* one header: every further line is a continuation */
        for (const char *q = b.p; (q = strstr(q, "\r\n")) && q + 2 < b.p + b.len; q += 2)
            assert_true(q[2] == ' ' || q[2] == '\t');
        char *v = decode_words(b.p + 9);
        v[strcspn(v, "\r\n")] = '\0';
        if (cases[i].plain)
            assert_null(strstr(b.p, "=?UTF-8?"));
        else
            assert_non_null(strstr(b.p, "=?UTF-8?B?"));
        assert_string_equal(v, cases[i].decoded ? cases[i].decoded : text);
        free(v);
        buf_free(&b);
    }
}

/* --- RFC 5545 --------------------------------------------------------------------------- */

static void ics_text_escapes_the_special_characters(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain text", "plain text"},
        {"a\\b", "a\\\\b"},
        {"uno;dos,tres", "uno\\;dos\\,tres"},
        {"l1\nl2", "l1\\nl2"},
        {"l1\r\nl2\rl3", "l1\\nl2\\nl3"},
        {"tab\there", "tab here"},
        {"\\n is not a newline", "\\\\n is not a newline"},
        {"ñandú: 10:30", "ñandú: 10:30"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct buf b;
        buf_init(&b, 1024);
        assert_int_equal(mail_ics_text(&b, cases[i].in), BR_OK);
        assert_string_equal(buf_cstr(&b), cases[i].out);
        buf_free(&b);
    }
}

static void ics_lines_fold_at_75_octets_between_characters(void **state)
{
    (void)state;
    char l75[76], l76[77], l300[301], enye[200], emoji[300];
    repeat(l75, sizeof l75, "", "a", 75);
    repeat(l76, sizeof l76, "", "b", 76);
    repeat(l300, sizeof l300, "", "c", 300);
    repeat(enye, sizeof enye, "DESCRIPTION:", "ñ", 60);
    repeat(emoji, sizeof emoji, "SUMMARY:", "💈", 50);
    static const size_t want_lines[] = {1, 1, 2, 5, 0, 0};
    const char *cases[] = {"UID:x@barberia", l75, l76, l300, enye, emoji};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct buf b;
        buf_init(&b, 4096);
        assert_int_equal(mail_ics_fold(&b, cases[i], strlen(cases[i])), BR_OK);
        /* ASCII check skipped: UTF-8 is fine here; check lengths and CRLF */
        size_t lines = 0, start = 0;
        for (size_t k = 0; k < b.len; k++) {
            if (b.p[k] != '\n') continue;
            assert_true(k > 0 && b.p[k - 1] == '\r');
            size_t n = k - 1 - start;
            assert_true(n <= 75);
            /* a continuation starts with one space, and no line starts or
             * ends inside a UTF-8 character */
            if (lines > 0) assert_int_equal(b.p[start], ' ');
            assert_true(utf8_valid(b.p + start, n));
            lines++;
            start = k + 1;
        }
        assert_int_equal(start, b.len);
        if (want_lines[i]) assert_int_equal(lines, want_lines[i]);
        /* unfolding gives the line back */
        char *un = calloc(1, b.len + 1);
        size_t u = 0;
        for (size_t k = 0; k < b.len; k++) {
            if (b.p[k] == '\r' && b.p[k + 1] == '\n') {
                k += (k + 2 < b.len && b.p[k + 2] == ' ') ? 2 : 1;
                continue;
            }
            un[u++] = b.p[k];
        }
        assert_string_equal(un, cases[i]);
        free(un);
        buf_free(&b);
    }
}

/* --- dates ---------------------------------------------------------------------------------- */

static void spanish_dates_follow_the_zone_and_its_dst(void **state)
{
    (void)state;
    static const struct {
        const char *tz, *utc, *when, *header;
    } cases[] = {
        {"UTC", "2026-11-21T10:30:00Z", "sábado 21 de noviembre de 2026, 10:30",
         "Sat, 21 Nov 2026 10:30:00 +0000"},
        {"Europe/Madrid", "2026-11-21T09:30:00Z", "sábado 21 de noviembre de 2026, 10:30",
         "Sat, 21 Nov 2026 10:30:00 +0100"},
        {"Europe/Madrid", "2026-07-01T08:00:00Z", "miércoles 1 de julio de 2026, 10:00",
         "Wed, 1 Jul 2026 10:00:00 +0200"},
        /* the night the clocks go forward: 02:00 never happens */
        {"Europe/Madrid", "2026-03-29T00:30:00Z", "domingo 29 de marzo de 2026, 01:30",
         "Sun, 29 Mar 2026 01:30:00 +0100"},
        {"Europe/Madrid", "2026-03-29T01:30:00Z", "domingo 29 de marzo de 2026, 03:30",
         "Sun, 29 Mar 2026 03:30:00 +0200"},
        /* the night they go back: 02:30 happens twice, and says which */
        {"Europe/Madrid", "2026-10-25T00:30:00Z", "domingo 25 de octubre de 2026, 02:30 UTC+2",
         "Sun, 25 Oct 2026 02:30:00 +0200"},
        {"Europe/Madrid", "2026-10-25T01:30:00Z", "domingo 25 de octubre de 2026, 02:30 UTC+1",
         "Sun, 25 Oct 2026 02:30:00 +0100"},
        {"Europe/Madrid", "2026-10-25T02:00:00Z", "domingo 25 de octubre de 2026, 03:00",
         "Sun, 25 Oct 2026 03:00:00 +0100"},
        {"Europe/Madrid", "2026-10-24T23:59:00Z", "domingo 25 de octubre de 2026, 01:59",
         "Sun, 25 Oct 2026 01:59:00 +0200"},
        {"America/New_York", "2031-01-01T03:00:00Z", "martes 31 de diciembre de 2030, 22:00",
         "Tue, 31 Dec 2030 22:00:00 -0500"},
        {"Asia/Kolkata", "2031-05-04T08:30:00Z", "domingo 4 de mayo de 2031, 14:00",
         "Sun, 4 May 2031 14:00:00 +0530"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        assert_int_equal(mail_tz_use(cases[i].tz), BR_OK);
        int64_t ms;
        assert_true(iso8601_parse(cases[i].utc, strlen(cases[i].utc), &ms));
        char when[96], hdr[40];
        mail_when(ms, when, sizeof when);
        mail_date_header(ms, hdr);
        assert_string_equal(when, cases[i].when);
        assert_string_equal(hdr, cases[i].header);
    }
    assert_int_equal(mail_tz_use("UTC"), BR_OK);
}

static void ics_times_are_utc_basic_format(void **state)
{
    (void)state;
    static const struct {
        const char *iso, *ics;
    } cases[] = {
        {"2031-01-01T10:00:00Z", "20310101T100000Z"},
        {"2026-11-21T10:30:15.250+01:00", "20261121T093015Z"},
        {"1969-12-31T23:59:59Z", "19691231T235959Z"},
        {"9999-12-31T23:59:59Z", "99991231T235959Z"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int64_t ms;
        assert_true(iso8601_parse(cases[i].iso, strlen(cases[i].iso), &ms));
        char out[17];
        mail_ics_utc(ms, out);
        assert_string_equal(out, cases[i].ics);
    }
}

static void time_zone_names_are_checked(void **state)
{
    (void)state;
    static const char *const good[] = {"UTC", "Europe/Madrid", "America/Argentina/Buenos_Aires",
                                       "Etc/GMT+3", "America/Port-au-Prince"};
    static const char *const bad[] = {
        "",
        "../etc/passwd",
        "Europe/../../etc/passwd",
        "/etc/localtime",
        "Europe",
        "Europe/Nowhere",
        "Europe/Madrid\n",
        "zone.tab",
        "Europe/Madrid/",
        "-Madrid",
        "Europe Madrid",
        "Europe/Madrid;x",
    };
    for (size_t i = 0; i < ARRAY_LEN(good); i++) {
        if (mail_tz_use(good[i]) != BR_OK) fail_msg("%s refused: %s", good[i], err_msg());
    }
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        if (mail_tz_use(bad[i]) != BR_CONFIG) fail_msg("\"%s\" accepted", bad[i]);
        assert_null(strchr(err_msg(), '\n'));
    }
    assert_int_equal(mail_tz_use("UTC"), BR_OK);
}

static void addresses_are_checked(void **state)
{
    (void)state;
    static const char *const good[] = {"no-reply@localhost", "ana.perez+citas@example.com",
                                       "a@b.co"};
    static const char *const bad[] = {
        "",
        "ana",
        "@example.com",
        "ana@",
        "ana@@x.com",
        "a b@x.com",
        "ana@x.com\r\nBcc: evil@x",
        "<ana@x.com>",
        "ana@x.com>",
        "ana\"@x.com",
        "añá@example.com",
        ".ana@x.com",
        "ana.@x.com",
        "ana@.x.com",
        "ana@x..com",
        "ana@x.com,b@y.com",
    };
    for (size_t i = 0; i < ARRAY_LEN(good); i++)
        assert_true(mail_address_ok(good[i]));
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        if (mail_address_ok(bad[i])) fail_msg("\"%s\" accepted", bad[i]);
    assert_false(mail_address_ok(NULL));
}

/* --- the whole message -------------------------------------------------------------------- */

struct parsed {
    char *names[32]; /* top-level header names, in order */
    size_t n;
    char *subject; /* decoded */
    char *text;    /* the decoded text/plain body */
    char *ics;     /* the decoded attachment */
};

static void parsed_free(struct parsed *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->names[i]);
    free(p->subject);
    free(p->text);
    free(p->ics);
}

/* The value of the boundary parameter in a header block. */
static char *boundary_of(const char *block)
{
    const char *b = strstr(block, "boundary=\"");
    assert_non_null(b);
    b += 10;
    return strndup(b, strcspn(b, "\""));
}

/* Counts lines that start with "--": how many are delimiters of b, how many
 * close b, and how many are neither. */
static void count_delimiters(const char *msg, const char *b, int *open, int *close, int *other)
{
    *open = *close = *other = 0;
    size_t bl = strlen(b);
    for (const char *line = msg; *line;) {
        const char *eol = strstr(line, "\r\n");
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        if (n >= 2 && line[0] == '-' && line[1] == '-') {
            if (n == bl + 2 && !strncmp(line + 2, b, bl))
                (*open)++;
            else if (n == bl + 4 && !strncmp(line + 2, b, bl) && !strncmp(line + 2 + bl, "--", 2))
                (*close)++;
            else
                (*other)++;
        }
        line = eol ? eol + 2 : line + n;
    }
}

/* Decodes the base64 body of the part whose headers contain ctype. */
static char *part_body(const char *msg, const char *ctype)
{
    const char *p = strstr(msg, ctype);
    assert_non_null(p);
    const char *body = strstr(p, "\r\n\r\n");
    assert_non_null(body);
    body += 4;
    const char *end = strstr(body, "\r\n--");
    assert_non_null(end);
    size_t n = (size_t)(end - body);
    unsigned char *out = calloc(1, n + 1);
    size_t bin = 0;
    assert_int_equal(
        sodium_base642bin(out, n, body, n, "\r\n", &bin, NULL, sodium_base64_VARIANT_ORIGINAL), 0);
    out[bin] = '\0';
    return (char *)out;
}

/* Checks the structure every composed message must have, whatever its
 * input, and fills p. */
static void expect_sound_message(const char *msg, size_t len, struct parsed *p)
{
    memset(p, 0, sizeof *p);
    expect_lines(msg, len, 78);
    const char *hend = strstr(msg, "\r\n\r\n");
    assert_non_null(hend);
    char *block = strndup(msg, (size_t)(hend - msg) + 2);
    /* header names: each line that is not a continuation starts one */
    for (const char *line = block; *line;) {
        const char *eol = strstr(line, "\r\n");
        if (line[0] != ' ' && line[0] != '\t') {
            size_t n = strcspn(line, ":");
            assert_true(p->n < ARRAY_LEN(p->names));
            p->names[p->n++] = strndup(line, n);
        }
        line = eol + 2;
    }
    static const char *const want[] = {"Date",
                                       "From",
                                       "To",
                                       "Subject",
                                       "Message-ID",
                                       "MIME-Version",
                                       "Auto-Submitted",
                                       "Content-Language",
                                       "Content-Type"};
    assert_int_equal(p->n, ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        assert_string_equal(p->names[i], want[i]);
    /* the subject, unfolded and decoded */
    const char *s = strstr(block, "\r\nSubject: ") + 11;
    const char *se = s;
    while ((se = strstr(se, "\r\n")) && (se[2] == ' ' || se[2] == '\t'))
        se += 2;
    char *raw = strndup(s, (size_t)(se - s));
    p->subject = decode_words(raw);
    free(raw);

    /* multipart/mixed holds multipart/alternative (2 parts) and the .ics */
    char *mixed = boundary_of(block);
    char *alt = boundary_of(strstr(msg, "multipart/alternative"));
    assert_string_not_equal(mixed, alt);
    int open, close, other;
    count_delimiters(hend, mixed, &open, &close, &other);
    assert_int_equal(open, 2);
    assert_int_equal(close, 1);
    assert_int_equal(other, 3); /* the alternative's delimiters, and only those */
    count_delimiters(hend, alt, &open, &close, &other);
    assert_int_equal(open, 2);
    assert_int_equal(close, 1);
    /* the message ends with the closing delimiter */
    char tail[128];
    snprintf(tail, sizeof tail, "\r\n--%s--\r\n", mixed);
    assert_true(len > strlen(tail) && !strcmp(msg + len - strlen(tail), tail));
    free(mixed);
    free(alt);
    free(block);

    p->text = part_body(msg, "Content-Type: text/plain; charset=utf-8");
    p->ics = part_body(msg, "Content-Type: text/calendar; charset=utf-8; method=PUBLISH");
    assert_true(utf8_valid(p->text, strlen(p->text)));
    assert_non_null(strstr(msg, "Content-Disposition: attachment; filename=\"cita.ics\""));
    assert_non_null(strstr(msg, "Content-Type: text/html; charset=utf-8"));
}

static struct outbox_msg sample(void)
{
    struct outbox_msg m;
    memset(&m, 0, sizeof m);
    snprintf(m.id, sizeof m.id, "0b6c7e9a-5f1d-4c2e-9a7b-3d2f1e0c9b8a");
    snprintf(m.cita_id, sizeof m.cita_id, "6a1f0c3e-2b4d-4e8f-a1b2-c3d4e5f60718");
    m.recipient = "ana@example.com";
    m.cliente_nombre = "Ana María Pérez";
    m.barbero_nombre = "Carlos Méndez";
    m.servicio_nombre = "Corte clásico";
    snprintf(m.fecha_inicio, sizeof m.fecha_inicio, "2026-11-21T09:30:00.000Z");
    snprintf(m.fecha_fin, sizeof m.fecha_fin, "2026-11-21T10:00:00.000Z");
    snprintf(m.created_at, sizeof m.created_at, "2026-11-01T12:00:00.000Z");
    return m;
}

/* Two changes of one appointment queued in the same minute: the later one's
 * .ics has the higher SEQUENCE (a calendar keeps the newest), and either is
 * higher than the minutes since 2020 that messages once carried. */
static void changes_in_one_minute_have_rising_sequences(void **state)
{
    (void)state;
    assert_int_equal(mail_tz_use("UTC"), BR_OK);
    struct mail_compose_opts o = {.from = "citas@barberia.example", .tz = "UTC"};
    long long seq[2];
    static const char *const when[2] = {"2026-11-01T12:00:10.000Z", "2026-11-01T12:00:40.000Z"};
    for (int i = 0; i < 2; i++) {
        struct outbox_msg m = sample();
        m.kind = i ? "cancelacion" : "reprogramacion";
        snprintf(m.created_at, sizeof m.created_at, "%s", when[i]);
        char *msg = NULL;
        size_t len = 0;
        assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_OK);
        char *ics =
            part_body(msg, i ? "Content-Type: text/calendar; charset=utf-8; method=CANCEL"
                             : "Content-Type: text/calendar; charset=utf-8; method=PUBLISH");
        const char *at = strstr(ics, "\r\nSEQUENCE:");
        assert_non_null(at);
        seq[i] = strtoll(at + 11, NULL, 10);
        free(ics);
        free(msg);
    }
    assert_true(seq[1] > seq[0]);
    assert_true(seq[0] > (1793880010000LL - 1577836800000LL) / 60000);
}

static void composed_message_has_everything_a_client_needs(void **state)
{
    (void)state;
    assert_int_equal(mail_tz_use("Europe/Madrid"), BR_OK);
    struct outbox_msg m = sample();
    m.notas = "Degradado; con tijera, por favor\nY barba";
    struct mail_compose_opts o = {
        .from = "citas@barberia.example", .tz = "Europe/Madrid", .now_ms = 1795000000000};
    char *msg = NULL;
    size_t len = 0;
    assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_OK);
    assert_int_equal(strlen(msg), len);
    struct parsed p;
    expect_sound_message(msg, len, &p);

    assert_non_null(strstr(p.subject, "Cita confirmada"));
    assert_non_null(strstr(p.subject, "Corte clásico"));
    assert_non_null(strstr(msg, "\r\nTo: =?UTF-8?B?"));
    assert_non_null(strstr(msg, " <ana@example.com>\r\n"));
    assert_non_null(strstr(msg, "\r\nMessage-ID: <0b6c7e9a-5f1d-4c2e-9a7b-3d2f1e0c9b8a"
                                "@barberia.example>\r\n"));
    assert_non_null(strstr(msg, "<citas@barberia.example>\r\n"));

    static const char *const in_text[] = {
        "Ana María Pérez",
        "Carlos Méndez",
        "Corte clásico",
        "sábado 21 de noviembre de 2026, 10:30 (Europe/Madrid)",
        "sábado 21 de noviembre de 2026, 11:00 (Europe/Madrid)",
        "6a1f0c3e-2b4d-4e8f-a1b2-c3d4e5f60718",
        "Degradado; con tijera, por favor\r\n",
        "Y barba",
    };
    for (size_t i = 0; i < ARRAY_LEN(in_text); i++)
        if (!strstr(p.text, in_text[i]))
            fail_msg("text body lacks \"%s\":\n%s", in_text[i], p.text);

    static const char *const in_ics[] = {
        "BEGIN:VCALENDAR\r\n",
        "\r\nMETHOD:PUBLISH\r\n",
        "\r\nBEGIN:VEVENT\r\n",
        "\r\nUID:6a1f0c3e-2b4d-4e8f-a1b2-c3d4e5f60718@barberia\r\n",
        "\r\nDTSTAMP:20261101T120000Z\r\n",
        "\r\nDTSTART:20261121T093000Z\r\n",
        "\r\nDTEND:20261121T100000Z\r\n",
        "\r\nSUMMARY:Corte clásico con Carlos Méndez\r\n",
        "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    };
    for (size_t i = 0; i < ARRAY_LEN(in_ics); i++)
        if (!strstr(p.ics, in_ics[i])) fail_msg("ics lacks \"%s\":\n%s", in_ics[i], p.ics);
    /* one VEVENT */
    assert_null(strstr(strstr(p.ics, "BEGIN:VEVENT") + 1, "BEGIN:VEVENT"));
    parsed_free(&p);
    free(msg);
    assert_int_equal(mail_tz_use("UTC"), BR_OK);
}

/* The barber's notice: greeted by name, a REQUEST or a CANCEL of the
 * client's event (same UID) with the barber as attendee and the SEQUENCE
 * the outbox counted. */
static void a_barbers_notice_requests_or_cancels_the_same_event(void **state)
{
    (void)state;
    assert_int_equal(mail_tz_use("Europe/Madrid"), BR_OK);
    struct outbox_msg m = sample();
    m.recipient = "carlos@example.com";
    m.barbero_nombre = "Carlos \"el Rápido\"; Méndez";
    m.kind = "aviso_cambio";
    m.secuencia = 3;
    struct mail_compose_opts o = {
        .from = "citas@barberia.example", .tz = "Europe/Madrid", .now_ms = 1795000000000};
    char *msg = NULL;
    size_t len = 0;
    assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_OK);
    expect_lines(msg, len, 78);
    assert_non_null(strstr(msg, " <carlos@example.com>\r\n"));
    char *text = part_body(msg, "Content-Type: text/plain; charset=utf-8");
    assert_non_null(strstr(text, "Hola, Carlos \"el Rápido\"; Méndez:"));
    assert_non_null(strstr(text, "Ana María Pérez"));
    char *ics = part_body(msg, "Content-Type: text/calendar; charset=utf-8; method=REQUEST");
    static const char *const in_ics[] = {
        "\r\nMETHOD:REQUEST\r\n",
        "\r\nUID:6a1f0c3e-2b4d-4e8f-a1b2-c3d4e5f60718@barberia\r\n",
        "\r\nSUMMARY:Corte clásico \u2014 Ana María Pérez\r\n",
        "\r\nORGANIZER;CN=Barbería:mailto:citas@barberia.example\r\n",
        /* 75 octets a line: the accented letters take two */
        ("\r\nATTENDEE;CN=\"Carlos el Rápido; Méndez\";ROLE=REQ-PARTICIPANT;PARTSTAT=ACCE\r\n "
         "PTED:mailto:carlos@example.com\r\n"),
        "\r\nSTATUS:CONFIRMED\r\n",
        "\r\nSEQUENCE:3\r\n",
    };
    for (size_t i = 0; i < ARRAY_LEN(in_ics); i++)
        if (!strstr(ics, in_ics[i])) fail_msg("ics lacks \"%s\":\n%s", in_ics[i], ics);
    free(ics);
    free(text);
    free(msg);
    m.kind = "aviso_cancelacion";
    m.secuencia = 4;
    assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_OK);
    ics = part_body(msg, "Content-Type: text/calendar; charset=utf-8; method=CANCEL");
    assert_non_null(strstr(ics, "\r\nMETHOD:CANCEL\r\n"));
    assert_non_null(strstr(ics, "\r\nSTATUS:CANCELLED\r\n"));
    assert_non_null(strstr(ics, "\r\nSEQUENCE:4\r\n"));
    free(ics);
    free(msg);
    assert_int_equal(mail_tz_use("UTC"), BR_OK);
}

static void user_text_cannot_inject_headers_or_parts(void **state)
{
    (void)state;
    static const struct {
        const char *cliente, *barbero, *servicio, *notas;
    } cases[] = {
        {"Ana\r\nBcc: evil@x", NULL, NULL, NULL},
        {"Ana\nBcc: evil@x\n", NULL, NULL, NULL},
        {"Ana\rBcc: evil@x", NULL, NULL, "x\r\nBcc: evil@x"},
        {NULL, "Carlos\r\n\r\n--=_barberia_m_000000000000000000000000--", NULL, NULL},
        {NULL, NULL, "Corte\r\nContent-Type: text/html\r\n\r\n<b>x</b>", NULL},
        {NULL, NULL, NULL, "hola\r\n--=_barberia_a_0\r\nContent-Type: text/html\r\n\r\nmal"},
        {NULL, NULL, NULL, "\r\n.\r\nMAIL FROM:<evil@x>\r\nRCPT TO:<evil@x>\r\n"},
        {"=?UTF-8?B?QmNjOiBldmlsQHg=?=", NULL, "=?ISO-8859-1?Q?=0D=0ABcc:_x?=", NULL},
        {"\xff\xfe\x00", "\x1b[31mrojo", "tab\tvt\vff\f", "\xc0\xaf overlong"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct outbox_msg m = sample();
        if (cases[i].cliente) m.cliente_nombre = (char *)cases[i].cliente;
        if (cases[i].barbero) m.barbero_nombre = (char *)cases[i].barbero;
        if (cases[i].servicio) m.servicio_nombre = (char *)cases[i].servicio;
        if (cases[i].notas) m.notas = (char *)cases[i].notas;
        struct mail_compose_opts o = {.from = "no-reply@localhost", .tz = "UTC"};
        char *msg = NULL;
        size_t len = 0;
        assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_OK);
        struct parsed p;
        expect_sound_message(msg, len, &p);
        /* no line anywhere reads as a Bcc header or an SMTP command */
        for (const char *line = msg; *line;) {
            if (!strncasecmp(line, "Bcc:", 4) || !strncasecmp(line, "MAIL FROM", 9) ||
                !strncasecmp(line, "RCPT TO", 7) || !strncmp(line, ".\r\n", 3))
                fail_msg("case %zu: injected line: %.40s", i, line);
            line = strstr(line, "\r\n") + 2;
        }
        /* the decoded texts keep what was written, minus control characters */
        assert_null(strpbrk(p.subject, "\r\n"));
        assert_non_null(strstr(p.subject, "Cita confirmada"));
        if (i == 0) assert_non_null(strstr(p.text, "Ana  Bcc: evil@x"));
        parsed_free(&p);
        free(msg);
    }
}

static void unusable_input_is_refused(void **state)
{
    (void)state;
    struct outbox_msg m = sample();
    struct mail_compose_opts o = {.from = "no-reply@localhost", .tz = "UTC"};
    char *msg = (char *)"untouched";
    size_t len = 1;
    m.recipient = "ana@example.com\r\nRCPT TO:<evil@x>";
    assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_INVALID);
    assert_null(msg);
    m = sample();
    o.from = "Barbería <no-reply@localhost>";
    assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_INVALID);
    o.from = "no-reply@localhost";
    snprintf(m.fecha_inicio, sizeof m.fecha_inicio, "mañana");
    assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_INVALID);
}

static void huge_notes_hit_the_cap(void **state)
{
    (void)state;
    struct outbox_msg m = sample();
    size_t n = MAIL_MAX_BYTES;
    char *notas = malloc(n + 1);
    memset(notas, 'x', n);
    notas[n] = '\0';
    m.notas = notas;
    struct mail_compose_opts o = {.from = "no-reply@localhost", .tz = "UTC"};
    char *msg = NULL;
    size_t len = 0;
    assert_int_equal(mail_compose(&o, &m, &msg, &len), BR_TOOLARGE);
    assert_null(msg);
    free(notas);
}

static void boundaries_differ_between_messages(void **state)
{
    (void)state;
    struct outbox_msg m = sample();
    struct mail_compose_opts o = {.from = "no-reply@localhost", .tz = "UTC"};
    char *a = NULL, *b = NULL;
    size_t la, lb;
    assert_int_equal(mail_compose(&o, &m, &a, &la), BR_OK);
    assert_int_equal(mail_compose(&o, &m, &b, &lb), BR_OK);
    char *ba = boundary_of(a), *bb = boundary_of(b);
    assert_string_not_equal(ba, bb);
    assert_true(strlen(ba) >= 30);
    free(ba);
    free(bb);
    free(a);
    free(b);
}

int main(void)
{
    if (sodium_init() < 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encoded_words_respect_limits_and_round_trip),
        cmocka_unit_test(empty_text_gives_no_word),
        cmocka_unit_test(header_text_is_plain_only_when_safe),
        cmocka_unit_test(ics_text_escapes_the_special_characters),
        cmocka_unit_test(ics_lines_fold_at_75_octets_between_characters),
        cmocka_unit_test(spanish_dates_follow_the_zone_and_its_dst),
        cmocka_unit_test(ics_times_are_utc_basic_format),
        cmocka_unit_test(time_zone_names_are_checked),
        cmocka_unit_test(addresses_are_checked),
        cmocka_unit_test(composed_message_has_everything_a_client_needs),
        cmocka_unit_test(changes_in_one_minute_have_rising_sequences),
        cmocka_unit_test(a_barbers_notice_requests_or_cancels_the_same_event),
        cmocka_unit_test(user_text_cannot_inject_headers_or_parts),
        cmocka_unit_test(unusable_input_is_refused),
        cmocka_unit_test(huge_notes_hit_the_cap),
        cmocka_unit_test(boundaries_differ_between_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
