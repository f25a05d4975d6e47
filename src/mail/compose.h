/*
 * compose.h - the confirmation e-mail as bytes: a whole RFC 5322 / MIME
 * message built from one outbox record, ready to hand to a transport.
 *
 * The message is multipart/mixed: a multipart/alternative (text/plain and a
 * small text/html, both UTF-8 and base64) and a text/calendar attachment
 * `cita.ics` (METHOD:PUBLISH, one VEVENT whose UID is "<cita id>@barberia",
 * so a calendar that imports it twice keeps one event). Text written by
 * people - names, notes, service names - only ever appears inside RFC 2047
 * encoded-words or base64 bodies, after control characters were turned into
 * spaces, so it can neither add a header nor end a MIME part; boundaries are
 * random on top of that.
 *
 * Times are shown in the shop's time zone: mail_tz_use() sets the process
 * time zone once (TZ + tzset) and the formatting below reads it through
 * localtime_r(). Day and month names are written here in Spanish, so the
 * result does not depend on the installed locales. Nothing else in the
 * service uses the C library's local time: it formats UTC itself.
 *
 * The helpers after mail_compose() are exported so the unit tests can check
 * each rule (encoded-word limits, iCalendar escaping and folding, dates)
 * on its own.
 */
#ifndef BR_COMPOSE_H
#define BR_COMPOSE_H

#include "../domain/records.h"
#include "../util/buf.h"

/* A composed message is never larger than this (BR_TOOLARGE otherwise). */
#define MAIL_MAX_BYTES (2u * 1024 * 1024)

/* What a composition needs besides the record; borrowed for the call. */
struct mail_compose_opts {
    const char *from;  /* sender address (addr-spec, e.g. no-reply@example.com) */
    const char *tz;    /* IANA name of the zone set by mail_tz_use(), shown next to times */
    int64_t now_ms;    /* the Date header; 0: the current time */
    const char *donde; /* where the appointment is (mail_donde); NULL: not said */
    int64_t plazo_ms; /* a client changes her appointment until this long before it (0: any time) */
    const char *telefono; /* the shop's phone, for when that has passed (NULL: none) */
};

/* Where the shop's appointments are, as its messages say it: "<name>,
 * <address>", or the name alone without an address (caller frees). */
char *mail_donde(const char *shop_name, const char *shop_address);

/* Builds the confirmation for m: headers, both bodies and the .ics, lines
 * ending in CRLF, none longer than 78 octets. OUT: *out (NUL-terminated,
 * caller frees) and *len. BR_INVALID when the sender or recipient is not a
 * usable address or a time does not parse; BR_TOOLARGE past
 * MAIL_MAX_BYTES. Thread-safe once mail_tz_use() has run. */
br_err mail_compose(const struct mail_compose_opts *o, const struct outbox_msg *m, char **out,
                    size_t *len) WARN_UNUSED;

/* True when addr is a plain ASCII addr-spec an SMTP envelope and a header
 * can carry as is: local@domain, at most 254 octets, no spaces, controls,
 * quotes, brackets or other specials (so it can inject nothing). */
bool mail_address_ok(const char *addr);

/* Checks that tz names a zone (letters, digits, '/', '_', '-', '+'; a
 * TZif file under /usr/share/zoneinfo) and makes it the process time zone.
 * BR_CONFIG with a one-line detail otherwise. Not thread-safe (it changes
 * the environment): call once at start, before threads exist. */
br_err mail_tz_use(const char *tz) WARN_UNUSED;

/* Appends text (UTF-8) as RFC 2047 encoded-words "=?UTF-8?B?...?=", each at
 * most 75 octets and holding whole characters, separated by a space or by
 * CRLF SP so that no line passes 76 octets. *col is the column the output
 * starts at (the length of what the line already holds) and is updated.
 * Appends nothing for "". BR_TOOLARGE when the buffer cap is reached. */
br_err mail_encode_words(struct buf *out, size_t *col, const char *text) WARN_UNUSED;

/* Appends the header "name: text" CRLF for unstructured text (Subject):
 * as is when text is short printable ASCII that cannot be mistaken for an
 * encoded-word, else as encoded-words. Control characters become spaces. */
br_err mail_header_text(struct buf *out, const char *name, const char *text) WARN_UNUSED;

/* Appends text escaped as an RFC 5545 TEXT value: '\' ';' ',' get a
 * backslash, line breaks become "\n", other control characters spaces. */
br_err mail_ics_text(struct buf *out, const char *text) WARN_UNUSED;

/* Appends the n octets of one content line folded as RFC 5545 asks: at most
 * 75 octets per physical line (continuations start with one space), never
 * inside a UTF-8 character, each line ending in CRLF. */
br_err mail_ics_fold(struct buf *out, const char *line, size_t n) WARN_UNUSED;

/* Appends the content line "name:value", folded, for a value that needs no
 * escaping (ids, dates, constants). */
br_err mail_ics_prop(struct buf *out, const char *name, const char *value) WARN_UNUSED;

/* One VEVENT (BEGIN to END), every property folded, text escaped; the
 * mails' attachments and the barbers' calendar feed write their events
 * with it. Strings are borrowed; optional ones NULL. */
struct mail_ics_event {
    const char *uid;                    /* "<cita id>@barberia": one event across its life */
    const char *dtstamp, *start, *end;  /* iCalendar UTC date-times (mail_ics_utc) */
    const char *summary, *description;  /* plain text */
    const char *organizer;              /* the shop's address, or NULL */
    const char *attendee, *attendee_cn; /* the barber's address and name, or NULL */
    const char *status;                 /* CONFIRMED, CANCELLED */
    const char *location;               /* plain text, or NULL */
    int64_t sequence;
};
br_err mail_ics_event(struct buf *out, const struct mail_ics_event *e) WARN_UNUSED;

/* ms (UTC) as the local time of the zone set by mail_tz_use(), in Spanish:
 * "sábado 21 de noviembre de 2026, 10:30". Truncated to n - 1 octets. */
void mail_when(int64_t ms, char *out, size_t n);

/* ms as an RFC 5322 date in the local zone: "Sat, 21 Nov 2026 10:30:00 +0100". */
void mail_date_header(int64_t ms, char out[40]);

/* ms as an iCalendar UTC date-time: "20261121T093000Z". */
void mail_ics_utc(int64_t ms, char out[17]);

#endif
