/*
 * compose.c - the confirmation e-mail and, the cancellation,
 * reschedule and reminder e-mails built the same way (see compose.h).
 *
 * Everything is built into capped buffers through a small writer with a
 * sticky error, so the long sequence of appends reads as the message it
 * writes and the one error check sits at the end. User text goes through
 * clean_text() first (valid UTF-8, no control characters) and is then only
 * written as encoded-words, HTML-escaped into a base64 body, or
 * iCalendar-escaped into the base64 attachment.
 */
#include "compose.h"
#include "../util/tz.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EW_OPEN      "=?UTF-8?B?"
#define EW_OVERHEAD  12 /* strlen("=?UTF-8?B?") + strlen("?=") */
#define EW_MAX       75 /* RFC 2047: an encoded-word is at most 75 octets */
#define EW_LINE_MAX  76 /* RFC 2047: a line holding encoded-words, at most 76 */
#define ICS_LINE_MAX 75 /* RFC 5545: octets per physical line, CRLF excluded */
#define B64_LINE_IN  57 /* 57 octets make one 76-character base64 line */
#define PART_MAX     (MAIL_MAX_BYTES / 2)

/* --- a writer with a sticky error ---------------------------------------------- */

struct wr {
    struct buf b;
    br_err rc;
};

static void wr_init(struct wr *w, size_t max)
{
    buf_init(&w->b, max);
    w->rc = BR_OK;
}

static void wr_put(struct wr *w, const char *s, size_t n)
{
    if (!w->rc) w->rc = buf_append(&w->b, s, n);
}

static void wr_puts(struct wr *w, const char *s)
{
    wr_put(w, s, strlen(s));
}

static void wr_printf(struct wr *w, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void wr_printf(struct wr *w, const char *fmt, ...)
{
    if (w->rc) return;
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        w->rc = err_set(BR_INTERNAL, "format error");
    } else if ((size_t)n < sizeof small) {
        wr_put(w, small, (size_t)n);
    } else {
        char *big = xmalloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        wr_put(w, big, (size_t)n);
        free(big);
    }
}

/* --- text hygiene ----------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at s (n octets available),
 * 0 when it is not one (overlong forms and surrogates included). OUT: *cp */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1Fu, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0Fu, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

/* A copy of s fit to show anywhere: malformed UTF-8 becomes U+FFFD and
 * every control character (C0, DEL, C1) a space - except that with
 * multiline, line breaks (LF, CRLF, CR, U+2028, U+2029) become one '\n'.
 * NULL gives "". Caller frees. */
static char *clean_text(const char *s, bool multiline)
{
    if (!s) return xstrdup("");
    size_t n = strlen(s);
    /* each input octet yields at most 3 output octets (U+FFFD) */
    char *out = xmalloc(3 * n + 1);
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_seq(u + i, n - i, &cp);
        if (k == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            continue;
        }
        bool brk = cp == '\n' || cp == '\r' || cp == 0x2028 || cp == 0x2029;
        if (brk && multiline) {
            out[o++] = '\n';
            if (cp == '\r' && i + 1 < n && u[i + 1] == '\n') k = 2;
        } else if (brk || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
            out[o++] = ' ';
        } else {
            memcpy(out + o, s + i, k);
            o += k;
        }
        i += k;
    }
    out[o] = '\0';
    return out;
}

bool mail_address_ok(const char *addr)
{
    if (!addr) return false;
    size_t n = strlen(addr), at = 0, ats = 0;
    if (n < 3 || n > 254) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)addr[i];
        if (c <= 0x20 || c >= 0x7F || strchr("<>()[]\\,;:\"", c)) return false;
        if (c == '@') at = i, ats++;
    }
    if (ats != 1 || at == 0 || at > 64 || at == n - 1) return false;
    const char *dom = addr + at + 1;
    return dom[0] != '.' && dom[0] != '-' && addr[n - 1] != '.' && !strstr(addr, "..") &&
           addr[0] != '.' && addr[at - 1] != '.';
}

/* --- the time zone ---------------------------------------------------------------- */

br_err mail_tz_use(const char *tz)
{
    return tz_use(tz); /* util/tz.c: the one place zone names are checked */
}

static const char *const dias[] = {"domingo", "lunes",   "martes", "miércoles",
                                   "jueves",  "viernes", "sábado"};
static const char *const meses[] = {"enero",      "febrero", "marzo",     "abril",
                                    "mayo",       "junio",   "julio",     "agosto",
                                    "septiembre", "octubre", "noviembre", "diciembre"};

/* The local broken-down time of ms; false when the C library cannot. */
static bool local_tm(int64_t ms, struct tm *tm)
{
    int64_t s = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    time_t t = (time_t)s;
    return localtime_r(&t, tm) != NULL;
}

/* The wall clock's seconds since 1970 that tm shows (no tm_gmtoff needed). */
static int64_t wall_seconds(const struct tm *tm)
{
    return iso8601_days_from_civil(tm->tm_year + 1900, (unsigned)tm->tm_mon + 1,
                                   (unsigned)tm->tm_mday) *
               86400 +
           tm->tm_hour * 3600 + tm->tm_min * 60 + tm->tm_sec;
}

void mail_when(int64_t ms, char *out, size_t n)
{
    struct tm tm;
    if (!local_tm(ms, &tm) || tm.tm_wday < 0 || tm.tm_wday > 6 || tm.tm_mon < 0 || tm.tm_mon > 11) {
        snprintf(out, n, "?");
        return;
    }
    int len = snprintf(out, n, "%s %d de %s de %d, %02d:%02d", dias[tm.tm_wday], tm.tm_mday,
                       meses[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min);
    /* a wall time the clocks show twice (the night they go back) says
     * which: "02:30 UTC+2", then "02:15 UTC+1", never an end before the
     * start */
    int64_t t = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000), wall = wall_seconds(&tm);
    bool twice = false;
    for (int64_t d = -3 * 3600; d <= 3 * 3600 && !twice; d += 900) {
        struct tm o;
        twice = d != 0 && local_tm((t + d) * 1000, &o) && wall_seconds(&o) == wall;
    }
    if (!twice || len < 0 || (size_t)len >= n) return;
    int64_t off = (wall - t) / 60;
    char sign = off < 0 ? '-' : '+';
    if (off < 0) off = -off;
    if (off % 60)
        snprintf(out + len, n - (size_t)len, " UTC%c%d:%02d", sign, (int)(off / 60 % 100),
                 (int)(off % 60));
    else
        snprintf(out + len, n - (size_t)len, " UTC%c%d", sign, (int)(off / 60 % 100));
}

void mail_date_header(int64_t ms, char out[40])
{
    static const char *const wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const mo[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct tm tm;
    int64_t t = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    if (!local_tm(ms, &tm) || tm.tm_wday < 0 || tm.tm_wday > 6 || tm.tm_mon < 0 || tm.tm_mon > 11) {
        snprintf(out, 40, "Thu, 1 Jan 1970 00:00:00 +0000");
        return;
    }
    /* the offset is what the local wall clock says minus UTC */
    int64_t off = (wall_seconds(&tm) - t) / 60;
    char sign = off < 0 ? '-' : '+';
    if (off < 0) off = -off;
    snprintf(out, 40, "%s, %d %s %04d %02d:%02d:%02d %c%02d%02d", wd[tm.tm_wday], tm.tm_mday,
             mo[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, sign,
             (int)(off / 60 % 100), (int)(off % 60));
}

void mail_ics_utc(int64_t ms, char out[17])
{
    int64_t s = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    int64_t days = s >= 0 ? s / 86400 : -((-s + 86399) / 86400);
    int64_t sec = s - days * 86400;
    int64_t y;
    unsigned m, d;
    iso8601_civil_from_days(days, &y, &m, &d);
    /* the moduli only tell the compiler the fields fit; in range already */
    unsigned s_day = (unsigned)sec;
    snprintf(out, 17, "%04u%02u%02uT%02u%02u%02uZ", (unsigned)y % 10000u, m % 100u, d % 100u,
             s_day / 3600u % 24u, s_day / 60u % 60u, s_day % 60u);
}

/* --- RFC 2047 ------------------------------------------------------------------------ */

/* How many octets from s (n left) make whole characters within max octets. */
static size_t whole_chars(const char *s, size_t n, size_t max)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_seq((const unsigned char *)s + i, n - i, &cp);
        if (k == 0) k = 1; /* a stray octet counts as one character */
        if (i + k > max) break;
        i += k;
    }
    return i;
}

br_err mail_encode_words(struct buf *out, size_t *col, const char *text)
{
    size_t n = strlen(text), i = 0;
    bool need_sep = false;
    while (i < n) {
        size_t sep = need_sep ? 1 : 0;
        size_t room =
            *col + sep + EW_OVERHEAD < EW_LINE_MAX ? EW_LINE_MAX - *col - sep - EW_OVERHEAD : 0;
        if (room > EW_MAX - EW_OVERHEAD) room = EW_MAX - EW_OVERHEAD;
        size_t take = whole_chars(text + i, n - i, room / 4 * 3);
        if (take == 0) {
            /* no room for the next character on this line: fold; a fresh
             * line always has room for the longest character */
            if (*col <= 1) return err_set(BR_INTERNAL, "encoded-word cannot fit a line");
            br_err rc = buf_append(out, "\r\n ", 3);
            if (rc) return rc;
            *col = 1;
            need_sep = false;
            continue;
        }
        char b64[EW_MAX];
        sodium_bin2base64(b64, sizeof b64, (const unsigned char *)text + i, take,
                          sodium_base64_VARIANT_ORIGINAL);
        size_t bl = strlen(b64);
        br_err rc = sep ? buf_append(out, " ", 1) : BR_OK;
        if (!rc) rc = buf_puts(out, EW_OPEN);
        if (!rc) rc = buf_append(out, b64, bl);
        if (!rc) rc = buf_append(out, "?=", 2);
        if (rc) return rc;
        *col += sep + EW_OVERHEAD + bl;
        need_sep = true;
        i += take;
    }
    return BR_OK;
}

/* True when text may stand in a header as is: printable ASCII, no "=?"
 * (it would read as an encoded-word), and short enough for one line. */
static bool plain_header_ok(const char *text, size_t col)
{
    size_t n = strlen(text);
    if (n == 0 || col + n > EW_LINE_MAX || strstr(text, "=?")) return false;
    if (text[0] == ' ' || text[n - 1] == ' ') return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] > 0x7E) return false;
    return true;
}

br_err mail_header_text(struct buf *out, const char *name, const char *text)
{
    char *clean = clean_text(text, false);
    size_t col = strlen(name) + 2;
    br_err rc = buf_printf(out, "%s: ", name);
    if (!rc && plain_header_ok(clean, col))
        rc = buf_puts(out, clean);
    else if (!rc)
        rc = mail_encode_words(out, &col, clean);
    if (!rc) rc = buf_append(out, "\r\n", 2);
    free(clean);
    return rc;
}

/* "name: <display name as encoded-words> <addr>" CRLF; no display name
 * when it is empty or the address itself. */
static void header_address(struct wr *w, const char *name, const char *display, const char *addr)
{
    char *clean = clean_text(display, false);
    size_t col = strlen(name) + 2;
    wr_printf(w, "%s: ", name);
    if (*clean && strcmp(clean, addr) != 0) {
        if (!w->rc) w->rc = mail_encode_words(&w->b, &col, clean);
        size_t need = strlen(addr) + 3; /* " <" addr ">" */
        if (col + need > EW_LINE_MAX) {
            wr_put(w, "\r\n", 2);
            col = 0;
        }
        wr_printf(w, " <%s>\r\n", addr);
    } else {
        wr_printf(w, "%s\r\n", addr);
    }
    free(clean);
}

/* --- RFC 5545 ---------------------------------------------------------------------------- */

br_err mail_ics_text(struct buf *out, const char *text)
{
    br_err rc = BR_OK;
    for (const char *p = text; *p && !rc; p++) {
        switch (*p) {
        case '\\':
            rc = buf_append(out, "\\\\", 2);
            break;
        case ';':
            rc = buf_append(out, "\\;", 2);
            break;
        case ',':
            rc = buf_append(out, "\\,", 2);
            break;
        case '\r':
            if (p[1] == '\n') p++;
            rc = buf_append(out, "\\n", 2);
            break;
        case '\n':
            rc = buf_append(out, "\\n", 2);
            break;
        default:
            if ((unsigned char)*p < 0x20 || *p == 0x7F)
                rc = buf_append(out, " ", 1);
            else
                rc = buf_append(out, p, 1);
        }
    }
    return rc;
}

br_err mail_ics_fold(struct buf *out, const char *line, size_t n)
{
    size_t i = 0, room = ICS_LINE_MAX;
    br_err rc = BR_OK;
    for (;;) {
        size_t take = whole_chars(line + i, n - i, room);
        if (take == 0 && i < n) take = 1; /* cannot happen with room >= 4 */
        rc = buf_append(out, line + i, take);
        i += take;
        if (rc || i >= n) break;
        /* the leading space of a continuation counts toward its 75 */
        rc = buf_append(out, "\r\n ", 3);
        room = ICS_LINE_MAX - 1;
        if (rc) break;
    }
    return rc ? rc : buf_append(out, "\r\n", 2);
}

/* One property "NAME:" + escaped text, folded (line: scratch). */
static br_err prop_text(struct buf *out, struct buf *line, const char *name, const char *text)
{
    buf_reset(line);
    br_err rc = buf_puts(line, name);
    if (!rc) rc = buf_append(line, ":", 1);
    if (!rc) rc = mail_ics_text(line, text);
    if (!rc) rc = mail_ics_fold(out, line->p, line->len);
    return rc;
}

br_err mail_ics_prop(struct buf *out, const char *name, const char *value)
{
    char *l = xasprintf("%s:%s", name, value);
    br_err rc = mail_ics_fold(out, l, strlen(l));
    free(l);
    return rc;
}

static void ics_prop_raw(struct wr *w, const char *name, const char *value)
{
    if (!w->rc) w->rc = mail_ics_prop(&w->b, name, value);
}

/* A parameter value (CN) as RFC 5545 allows it: quoted, without the
 * characters a quoted value cannot hold (DQUOTE, controls). */
static char *param_value(const char *s)
{
    char *clean = clean_text(s, false);
    char *q = xmalloc(strlen(clean) + 3), *o = q;
    *o++ = '"';
    for (const char *p = clean; *p; p++)
        if (*p != '"') *o++ = *p;
    *o++ = '"';
    *o = '\0';
    free(clean);
    return q;
}

br_err mail_ics_event(struct buf *out, const struct mail_ics_event *e)
{
    struct buf line;
    buf_init(&line, PART_MAX);
    char seq[24];
    snprintf(seq, sizeof seq, "%lld", (long long)e->sequence);
    br_err rc = mail_ics_prop(out, "BEGIN", "VEVENT");
    if (!rc) rc = mail_ics_prop(out, "UID", e->uid);
    if (!rc) rc = mail_ics_prop(out, "DTSTAMP", e->dtstamp);
    if (!rc) rc = mail_ics_prop(out, "DTSTART", e->start);
    if (!rc) rc = mail_ics_prop(out, "DTEND", e->end);
    if (!rc) rc = prop_text(out, &line, "SUMMARY", e->summary);
    if (!rc) rc = prop_text(out, &line, "DESCRIPTION", e->description);
    if (!rc && e->location && *e->location) rc = prop_text(out, &line, "LOCATION", e->location);
    if (!rc && e->organizer) {
        char *org = xasprintf("mailto:%s", e->organizer);
        rc = mail_ics_prop(out, "ORGANIZER;CN=Barbería", org);
        free(org);
    }
    if (!rc && e->attendee) {
        char *cn = param_value(e->attendee_cn ? e->attendee_cn : "");
        char *name = xasprintf("ATTENDEE;CN=%s;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED", cn);
        char *to = xasprintf("mailto:%s", e->attendee);
        rc = mail_ics_prop(out, name, to);
        free(cn);
        free(name);
        free(to);
    }
    if (!rc) rc = mail_ics_prop(out, "STATUS", e->status);
    if (!rc) rc = mail_ics_prop(out, "SEQUENCE", seq);
    if (!rc) rc = mail_ics_prop(out, "TRANSP", "OPAQUE");
    if (!rc) rc = mail_ics_prop(out, "END", "VEVENT");
    buf_free(&line);
    return rc;
}

/* --- the message ------------------------------------------------------------------------ */

/* The texts of one message, cleaned. */
struct fields {
    char *cliente, *barbero, *servicio, *notas; /* notas "" when none */
    char inicio[96], fin[96];                   /* Spanish local dates */
    char ics_start[17], ics_end[17], ics_stamp[17];
    int64_t ics_sequence; /* 0 for a confirmation; later changes count up */
    const char *tz;
    char *enlace;   /* NULL: no link */
    char *donde;    /* NULL: not said */
    bool tarde;     /* past the cut-off: the link no longer changes it */
    char *telefono; /* the shop's phone, NULL: none */
};

static void fields_free(struct fields *f)
{
    free(f->cliente);
    free(f->barbero);
    free(f->servicio);
    free(f->notas);
    free(f->enlace);
    free(f->donde);
    free(f->telefono);
}

char *mail_donde(const char *shop_name, const char *shop_address)
{
    const char *name = shop_name ? shop_name : "";
    if (shop_address && *shop_address)
        return *name ? xasprintf("%s, %s", name, shop_address) : xstrdup(shop_address);
    return xstrdup(name);
}

/* Appends the base64 of data in lines of 76 characters, each with CRLF. */
static void put_base64(struct wr *w, const char *data, size_t n)
{
    char line[80];
    for (size_t i = 0; i < n && !w->rc; i += B64_LINE_IN) {
        size_t k = n - i < B64_LINE_IN ? n - i : B64_LINE_IN;
        sodium_bin2base64(line, sizeof line, (const unsigned char *)data + i, k,
                          sodium_base64_VARIANT_ORIGINAL);
        wr_puts(w, line);
        wr_put(w, "\r\n", 2);
    }
}

/* Appends text with its line breaks as CRLF (bodies are canonical text). */
static void put_crlf(struct wr *w, const char *s)
{
    for (const char *p = s; *p && !w->rc; p++) {
        if (*p == '\n')
            wr_put(w, "\r\n", 2);
        else
            wr_put(w, p, 1);
    }
}

static void put_html(struct wr *w, const char *s)
{
    for (const char *p = s; *p && !w->rc; p++) {
        switch (*p) {
        case '&':
            wr_puts(w, "&amp;");
            break;
        case '<':
            wr_puts(w, "&lt;");
            break;
        case '>':
            wr_puts(w, "&gt;");
            break;
        case '"':
            wr_puts(w, "&quot;");
            break;
        case '\'':
            wr_puts(w, "&#39;");
            break;
        case '\n':
            wr_puts(w, "<br>\r\n");
            break;
        default:
            wr_put(w, p, 1);
        }
    }
}

/* The link line of a message that offers changing the appointment; once
 * its cut-off has passed (fields.tarde) it offers the view only, and the
 * shop's phone. */
#define LINK_CAMBIOS "Para ver tu cita, cambiarla o cancelarla:"
#define LINK_TARDE   "Para ver tu cita:"
#define TARDE_TEXT                                                                                 \
    "Ya no se puede cambiar ni cancelar desde el enlace: si no puedes venir, llama a la "          \
    "barbería"

/* What differs between the kinds of message: the confirmation's
 * texts are the original ones, byte for byte. */
struct kind_text {
    const char *kind;
    const char *subject;    /* "<subject>: <servicio>, <inicio>" */
    const char *title;      /* the HTML title */
    const char *intro;      /* the line before the details */
    const char *close_text; /* the text body's lines after the details */
    const char *close_html; /* the HTML's paragraphs after the table, up to "<br>Barbería" */
    const char *method;     /* the .ics METHOD */
    const char *status;     /* the VEVENT STATUS */
    const char *link;       /* the line before the message's link (outbox_msg.enlace) */
    bool cita;              /* about a booked cita: its number and its .ics */
    bool aviso;             /* to the barber: greeted by name, the event's attendee */
    const char *label;      /* the label of notas ("Notas" when NULL) */
};

static const struct kind_text kind_texts[] = {
    {"confirmacion", "Cita confirmada", "Cita confirmada",
     "Tu cita está confirmada. Estos son los detalles:",
     "Te adjuntamos la cita (cita.ics) para que la añadas a tu calendario.\r\n"
     "Si no puedes venir, avísanos con tiempo.\r\n\r\n"
     "¡Te esperamos!\r\n",
     "<p>Te adjuntamos la cita (cita.ics) para que la añadas a tu calendario.<br>\r\n"
     "Si no puedes venir, avísanos con tiempo.</p>\r\n"
     "<p>¡Te esperamos!",
     "PUBLISH", "CONFIRMED", LINK_CAMBIOS, true},
    {"cancelacion", "Cita cancelada", "Cita cancelada",
     "Tu cita ha sido cancelada. Estos eran los detalles:",
     "El adjunto (cita.ics) la quita de tu calendario.\r\n"
     "Cuando quieras, puedes reservar otra.\r\n\r\n"
     "Un saludo,\r\n",
     "<p>El adjunto (cita.ics) la quita de tu calendario.<br>\r\n"
     "Cuando quieras, puedes reservar otra.</p>\r\n"
     "<p>Un saludo,",
     "CANCEL", "CANCELLED", "Puedes ver la cita aquí:", true},
    {"reprogramacion", "Cita cambiada", "Cita cambiada",
     "Tu cita ha cambiado de hora. Estos son los nuevos detalles:",
     "Te adjuntamos la cita actualizada (cita.ics) para tu calendario.\r\n"
     "Si no puedes venir, avísanos con tiempo.\r\n\r\n"
     "¡Te esperamos!\r\n",
     "<p>Te adjuntamos la cita actualizada (cita.ics) para tu calendario.<br>\r\n"
     "Si no puedes venir, avísanos con tiempo.</p>\r\n"
     "<p>¡Te esperamos!",
     "PUBLISH", "CONFIRMED", LINK_CAMBIOS, true},
    {"recordatorio", "Recordatorio de tu cita", "Recordatorio de tu cita",
     "Te recordamos tu próxima cita. Estos son los detalles:",
     "Te adjuntamos la cita (cita.ics) por si aún no está en tu calendario.\r\n"
     "Si no puedes venir, avísanos con tiempo.\r\n\r\n"
     "¡Te esperamos!\r\n",
     "<p>Te adjuntamos la cita (cita.ics) por si aún no está en tu calendario.<br>\r\n"
     "Si no puedes venir, avísanos con tiempo.</p>\r\n"
     "<p>¡Te esperamos!",
     "PUBLISH", "CONFIRMED", LINK_CAMBIOS, true},
    {"aviso_espera", "Se ha liberado una hora", "Se ha liberado una hora",
     "Se ha liberado una hora el día que esperabas:",
     "La hora es de quien la reserve primero. Si ya no te interesa, no tienes que hacer "
     "nada.\r\n\r\n"
     "Un saludo,\r\n",
     "<p>La hora es de quien la reserve primero. Si ya no te interesa, no tienes que hacer "
     "nada.</p>\r\n"
     "<p>Un saludo,",
     "PUBLISH", "TENTATIVE", "Resérvala aquí:", false},
    {"aviso_cita", "Nueva cita", "Nueva cita", "Tienes una cita nueva en tu agenda:",
     "El adjunto (cita.ics) la añade a tu calendario; los cambios llegarán igual.\r\n\r\n"
     "Un saludo,\r\n",
     "<p>El adjunto (cita.ics) la añade a tu calendario; los cambios llegarán igual.</p>\r\n"
     "<p>Un saludo,",
     "REQUEST", "CONFIRMED", NULL, true, true, NULL},
    {"aviso_cambio", "Cita cambiada", "Cita cambiada",
     "Una cita de tu agenda ha cambiado de hora. Estos son los nuevos detalles:",
     "El adjunto (cita.ics) la actualiza en tu calendario.\r\n\r\n"
     "Un saludo,\r\n",
     "<p>El adjunto (cita.ics) la actualiza en tu calendario.</p>\r\n"
     "<p>Un saludo,",
     "REQUEST", "CONFIRMED", NULL, true, true, NULL},
    {"aviso_cancelacion", "Cita cancelada", "Cita cancelada",
     "Se ha cancelado una cita de tu agenda. Estos eran los detalles:",
     "El adjunto (cita.ics) la quita de tu calendario.\r\n\r\n"
     "Un saludo,\r\n",
     "<p>El adjunto (cita.ics) la quita de tu calendario.</p>\r\n"
     "<p>Un saludo,",
     "CANCEL", "CANCELLED", NULL, true, true, NULL},
    {"cierre", "Cita cancelada", "Cita cancelada",
     "Lo sentimos: hemos tenido que cancelar tu cita, porque ese día no podremos atenderte. "
     "Estos eran los detalles:",
     "El adjunto (cita.ics) la quita de tu calendario.\r\n"
     "Cuando quieras, puedes reservar otra; disculpa las molestias.\r\n\r\n"
     "Un saludo,\r\n",
     "<p>El adjunto (cita.ics) la quita de tu calendario.<br>\r\n"
     "Cuando quieras, puedes reservar otra; disculpa las molestias.</p>\r\n"
     "<p>Un saludo,",
     "CANCEL", "CANCELLED", "Puedes ver la cita aquí:", true, false, "Mensaje"},
};

static const struct kind_text *kind_text_of(const struct outbox_msg *m)
{
    const char *k = outbox_kind(m->kind);
    for (size_t i = 0; i < ARRAY_LEN(kind_texts); i++)
        if (!strcmp(kind_texts[i].kind, k)) return &kind_texts[i];
    return &kind_texts[0];
}

/* The link line to write, and whether the late note follows it. */
static const char *link_line(const struct fields *f, const struct kind_text *k, bool *late)
{
    *late = f->tarde && k->link && !strcmp(k->link, LINK_CAMBIOS);
    return *late ? LINK_TARDE : k->link;
}

static void text_body(struct wr *w, const struct fields *f, const struct outbox_msg *m)
{
    const struct kind_text *k = kind_text_of(m);
    wr_puts(w, "Hola, ");
    put_crlf(w, k->aviso ? f->barbero : f->cliente);
    wr_puts(w, ":\r\n\r\n");
    wr_puts(w, k->intro);
    wr_puts(w, "\r\n\r\n"
               "  Servicio: ");
    put_crlf(w, f->servicio);
    wr_puts(w, "\r\n  Barbero:  ");
    put_crlf(w, f->barbero);
    wr_puts(w, "\r\n  Cliente:  ");
    put_crlf(w, f->cliente);
    wr_printf(w, "\r\n  Inicio:   %s (%s)\r\n  Fin:      %s (%s)\r\n", f->inicio, f->tz, f->fin,
              f->tz);
    if (f->donde) {
        wr_puts(w, "  Dónde:    ");
        put_crlf(w, f->donde);
        wr_puts(w, "\r\n");
    }
    if (*f->notas) {
        /* notes keep their lines, indented under the label */
        wr_puts(w, k->label ? "  Mensaje:  " : "  Notas:    ");
        for (const char *p = f->notas; *p && !w->rc; p++) {
            if (*p == '\n')
                wr_puts(w, "\r\n            ");
            else
                wr_put(w, p, 1);
        }
        wr_puts(w, "\r\n");
    }
    if (k->cita) wr_printf(w, "  N.º de cita: %s\r\n", m->cita_id);
    wr_puts(w, "\r\n");
    bool late;
    const char *link = link_line(f, k, &late);
    if (f->enlace && link) {
        wr_puts(w, link);
        wr_puts(w, "\r\n");
        wr_puts(w, f->enlace);
        wr_puts(w, "\r\n\r\n");
    }
    if (late) {
        wr_puts(w, TARDE_TEXT);
        if (f->telefono) {
            wr_puts(w, " (");
            put_crlf(w, f->telefono);
            wr_puts(w, ")");
        }
        wr_puts(w, ".\r\n\r\n");
    }
    wr_puts(w, k->close_text);
    wr_puts(w, "Barbería\r\n\r\n"
               "-- \r\n"
               "Este mensaje se ha enviado automáticamente; no es necesario responder.\r\n");
}

static void html_row(struct wr *w, const char *label, const char *value)
{
    wr_printf(w, "<tr><th align=\"left\" style=\"padding:2px 12px 2px 0\">%s</th><td>", label);
    put_html(w, value);
    wr_puts(w, "</td></tr>\r\n");
}

static void html_body(struct wr *w, const struct fields *f, const struct outbox_msg *m)
{
    const struct kind_text *k = kind_text_of(m);
    wr_printf(w,
              "<!DOCTYPE html>\r\n<html lang=\"es\">\r\n<head>\r\n<meta charset=\"utf-8\">\r\n"
              "<title>%s</title>\r\n</head>\r\n"
              "<body style=\"font-family:sans-serif;color:#222\">\r\n<p>Hola, ",
              k->title);
    put_html(w, k->aviso ? f->barbero : f->cliente);
    wr_printf(w, ":</p>\r\n<p>%s</p>\r\n<table>\r\n", k->intro);
    html_row(w, "Servicio", f->servicio);
    html_row(w, "Barbero", f->barbero);
    html_row(w, "Cliente", f->cliente);
    char *when = xasprintf("%s (%s)", f->inicio, f->tz);
    html_row(w, "Inicio", when);
    free(when);
    when = xasprintf("%s (%s)", f->fin, f->tz);
    html_row(w, "Fin", when);
    free(when);
    if (f->donde) html_row(w, "Dónde", f->donde);
    if (*f->notas) html_row(w, k->label ? k->label : "Notas", f->notas);
    if (k->cita) html_row(w, "N.º de cita", m->cita_id);
    wr_puts(w, "</table>\r\n");
    bool late;
    const char *link = link_line(f, k, &late);
    if (f->enlace && link) {
        wr_printf(w, "<p>%s<br>\r\n<a href=\"", link);
        put_html(w, f->enlace);
        wr_puts(w, "\">");
        put_html(w, f->enlace);
        wr_puts(w, "</a></p>\r\n");
    }
    if (late) {
        wr_puts(w, "<p>" TARDE_TEXT);
        if (f->telefono) {
            wr_puts(w, " (");
            put_html(w, f->telefono);
            wr_puts(w, ")");
        }
        wr_puts(w, ".</p>\r\n");
    }
    wr_puts(w, k->close_html);
    wr_puts(w, "<br>\r\nBarbería</p>\r\n</body>\r\n</html>\r\n");
}

static void ics_body(struct wr *w, const struct fields *f, const struct outbox_msg *m,
                     const char *from)
{
    const struct kind_text *k = kind_text_of(m);
    ics_prop_raw(w, "BEGIN", "VCALENDAR");
    ics_prop_raw(w, "VERSION", "2.0");
    ics_prop_raw(w, "PRODID", "-//Barberia//Citas " BARBERIA_VERSION "//ES");
    ics_prop_raw(w, "CALSCALE", "GREGORIAN");
    ics_prop_raw(w, "METHOD", k->method);
    char *uid = xasprintf("%s@barberia", m->cita_id);
    char *summary, *desc;
    const char *label = k->label ? k->label : "Notas";
    if (k->aviso) {
        /* the barber's calendar: who comes, for what */
        summary = xasprintf("%s \u2014 %s", f->servicio, f->cliente);
        desc = *f->notas ? xasprintf("Cliente: %s\nServicio: %s\nCita: %s\nNotas: %s", f->cliente,
                                     f->servicio, m->cita_id, f->notas)
                         : xasprintf("Cliente: %s\nServicio: %s\nCita: %s", f->cliente, f->servicio,
                                     m->cita_id);
    } else {
        summary = xasprintf("%s con %s", f->servicio, f->barbero);
        desc = *f->notas
                   ? xasprintf("Cliente: %s\nBarbero: %s\nServicio: %s\nCita: %s\n"
                               "%s: %s",
                               f->cliente, f->barbero, f->servicio, m->cita_id, label, f->notas)
                   : xasprintf("Cliente: %s\nBarbero: %s\nServicio: %s\nCita: %s", f->cliente,
                               f->barbero, f->servicio, m->cita_id);
    }
    /* DTSTAMP is when the message was queued, so a retried message carries
     * the very same calendar object; RFC 5546 wants an ORGANIZER on a
     * published event (the sender is the only address the shop has) and
     * an ATTENDEE on a request */
    struct mail_ics_event ev = {
        .uid = uid,
        .dtstamp = f->ics_stamp,
        .start = f->ics_start,
        .end = f->ics_end,
        .summary = summary,
        .description = desc,
        .organizer = from,
        .attendee = k->aviso ? m->recipient : NULL,
        .attendee_cn = f->barbero,
        .status = k->status,
        .location = f->donde,
        .sequence = f->ics_sequence,
    };
    if (!w->rc) w->rc = mail_ics_event(&w->b, &ev);
    ics_prop_raw(w, "END", "VCALENDAR");
    free(uid);
    free(summary);
    free(desc);
}

/* A boundary no base64 line or encoded-word can contain ("=_" never
 * starts a base64 line) and nobody can guess. */
static void new_boundary(char out[48], const char *kind)
{
    unsigned char rnd[12];
    char hex[25];
    randombytes_buf(rnd, sizeof rnd);
    sodium_bin2hex(hex, sizeof hex, rnd, sizeof rnd);
    snprintf(out, 48, "=_barberia_%s_%s", kind, hex);
}

/* One text part: its headers and its body in base64. */
static void put_part(struct wr *w, const char *boundary, const char *headers, struct wr *body)
{
    if (!w->rc && body->rc) w->rc = body->rc;
    wr_printf(w, "--%s\r\n%sContent-Transfer-Encoding: base64\r\n\r\n", boundary, headers);
    put_base64(w, buf_cstr(&body->b), body->b.len);
}

br_err mail_compose(const struct mail_compose_opts *o, const struct outbox_msg *m, char **out,
                    size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!mail_address_ok(o->from)) return err_set(BR_INVALID, "the sender address is not usable");
    if (!mail_address_ok(m->recipient))
        return err_set(BR_INVALID, "the recipient address is not usable");
    int64_t start, end, stamp;
    if (!iso8601_parse(m->fecha_inicio, strlen(m->fecha_inicio), &start) ||
        !iso8601_parse(m->fecha_fin, strlen(m->fecha_fin), &end))
        return err_set(BR_INVALID, "the appointment's times do not parse");
    if (!iso8601_parse(m->created_at, strlen(m->created_at), &stamp)) stamp = clock_now_ms();
    int64_t now = o->now_ms ? o->now_ms : clock_now_ms();

    struct fields f = {
        .cliente = clean_text(m->cliente_nombre, false),
        .barbero = clean_text(m->barbero_nombre, false),
        .servicio = clean_text(m->servicio_nombre, false),
        .notas = clean_text(m->notas, true),
        .tz = o->tz && *o->tz ? o->tz : "UTC",
        .enlace = m->enlace && *m->enlace ? clean_text(m->enlace, false) : NULL,
        .donde = o->donde && *o->donde ? clean_text(o->donde, false) : NULL,
        .telefono = o->telefono && *o->telefono ? clean_text(o->telefono, false) : NULL,
    };
    f.tarde = o->plazo_ms > 0 && start - now < o->plazo_ms;
    mail_when(start, f.inicio, sizeof f.inicio);
    mail_when(end, f.fin, sizeof f.fin);
    mail_ics_utc(start, f.ics_start);
    mail_ics_utc(end, f.ics_end);
    mail_ics_utc(stamp, f.ics_stamp);
    /* a change made later must replace the event a calendar imported from
     * an earlier message: its SEQUENCE is the seconds from 2020 to when it
     * was queued (later is larger, also for two changes in one minute; it
     * fits an iCalendar INTEGER, 31 bits, until 2088; and it is larger than
     * the minutes once used, so a change queued now replaces what an older
     * message said) */
    const struct kind_text *kt = kind_text_of(m);
    int64_t seq = 0;
    if (kt != &kind_texts[0] && stamp > 1577836800000LL) seq = (stamp - 1577836800000LL) / 1000;
    /* the barber's notices count themselves: 0, 1, 2 ... across the cita's
     * life; a client's message adds the messages of hers queued before it,
     * so that two in the same second still rise */
    f.ics_sequence = kt->aviso ? m->secuencia : seq + m->secuencia;

    struct wr text, html, ics, msg;
    wr_init(&text, PART_MAX);
    wr_init(&html, PART_MAX);
    wr_init(&ics, PART_MAX);
    wr_init(&msg, MAIL_MAX_BYTES);
    text_body(&text, &f, m);
    html_body(&html, &f, m);
    ics_body(&ics, &f, m, o->from);

    char mixed[48], alt[48], date[40];
    new_boundary(mixed, "m");
    new_boundary(alt, "a");
    mail_date_header(now, date);
    const char *host = strchr(o->from, '@') + 1;

    wr_printf(&msg, "Date: %s\r\n", date);
    header_address(&msg, "From", "Barbería", o->from);
    header_address(&msg, "To", kt->aviso ? f.barbero : f.cliente, m->recipient);
    char *subject = xasprintf("%s: %s, %s", kt->subject, f.servicio, f.inicio);
    if (!msg.rc) msg.rc = mail_header_text(&msg.b, "Subject", subject);
    free(subject);
    /* the outbox id is stable across retries, so a receiver that sees a
     * message twice can tell it is the same one */
    wr_printf(&msg, "Message-ID: <%s@%s>\r\n", m->id, host);
    wr_puts(&msg, "MIME-Version: 1.0\r\n"
                  "Auto-Submitted: auto-generated\r\n"
                  "Content-Language: es\r\n");
    wr_printf(&msg, "Content-Type: multipart/mixed;\r\n boundary=\"%s\"\r\n\r\n", mixed);
    wr_puts(&msg, "This is a multi-part message in MIME format.\r\n\r\n");
    wr_printf(&msg, "--%s\r\nContent-Type: multipart/alternative;\r\n boundary=\"%s\"\r\n\r\n",
              mixed, alt);
    put_part(&msg, alt, "Content-Type: text/plain; charset=utf-8\r\n", &text);
    put_part(&msg, alt, "Content-Type: text/html; charset=utf-8\r\n", &html);
    wr_printf(&msg, "--%s--\r\n\r\n", alt);
    if (kt->cita) {
        char *ics_headers = xasprintf("Content-Type: text/calendar; charset=utf-8; method=%s;\r\n "
                                      "name=\"cita.ics\"\r\n"
                                      "Content-Disposition: attachment; filename=\"cita.ics\"\r\n",
                                      kt->method);
        put_part(&msg, mixed, ics_headers, &ics);
        free(ics_headers);
    }
    wr_printf(&msg, "--%s--\r\n", mixed);

    br_err rc = msg.rc;
    buf_free(&text.b);
    buf_free(&html.b);
    buf_free(&ics.b);
    fields_free(&f);
    if (rc) {
        buf_free(&msg.b);
        return rc == BR_TOOLARGE
                   ? err_set(BR_TOOLARGE, "the message would pass %u bytes", MAIL_MAX_BYTES)
                   : rc;
    }
    *out = buf_steal(&msg.b, len);
    return BR_OK;
}
