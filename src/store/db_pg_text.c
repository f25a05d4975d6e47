/*
 * db_pg_text.c - the text conversions of the PostgreSQL adapter (see
 * db_pg_text.h): what a connection message may show, the SQL's
 * placeholders, text parameters, and result columns as the repository
 * takes them.
 * Pure functions, kept apart from db_pg.c's connections and round trips.
 */
#include "db_pg_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* type oids (pg_type.h is a server header) */
#define OID_BOOL        16
#define OID_INT8        20
#define OID_INT2        21
#define OID_INT4        23
#define OID_FLOAT4      700
#define OID_FLOAT8      701
#define OID_NUMERIC     1700
#define OID_TIMESTAMP   1114
#define OID_TIMESTAMPTZ 1184

/* What a message about connecting to target may show (in place, buf of n
 * bytes). libpq quotes the connection string, or a value of it, in some of
 * its messages, and the string may carry a password: when target parses,
 * each occurrence of its password becomes "***"; when it does not, every
 * quoted text becomes "...". */
void db_pg_scrub(const char *target, char *buf, size_t n)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(target, &perr);
    PQfreemem(perr);
    if (!opts) {
        char out[256];
        size_t o = 0;
        bool quoted = false;
        for (const char *p = buf; *p && o + 4 < sizeof out; p++) {
            if (*p == '"') {
                quoted = !quoted;
                if (quoted) {
                    memcpy(out + o, "\"...", 4);
                    o += 4;
                } else {
                    out[o++] = '"';
                }
            } else if (!quoted) {
                out[o++] = *p;
            }
        }
        out[o] = '\0';
        snprintf(buf, n, "%s", out);
        return;
    }
    const char *pw = NULL;
    for (PQconninfoOption *o = opts; o->keyword; o++)
        if (!strcmp(o->keyword, "password") && o->val && *o->val) pw = o->val;
    secret_scrub(buf, n, pw);
    PQconninfoFree(opts);
}

/* The SQL with each `?` outside a quoted string as $1, $2... OUT: *nparams. */
char *db_pg_translate(const char *sql, int *nparams)
{
    size_t n = strlen(sql), cap = n * 4 + 1; /* "?" -> "$nnn" at most */
    char *out = xmalloc(cap);
    char *w = out;
    int k = 0;
    bool quoted = false;
    for (const char *s = sql; *s; s++) {
        if (*s == '\'') quoted = !quoted;
        if (*s == '?' && !quoted)
            w += snprintf(w, cap - (size_t)(w - out), "$%d", ++k);
        else
            *w++ = *s;
    }
    *w = '\0';
    *nparams = k;
    return out;
}

/* A timestamp as PostgreSQL prints it in UTC with DateStyle ISO
 * ("2031-05-04 08:30:00.123+00") in the API's form. False when it is not
 * one (a year past 9999, BC). */
bool db_pg_ts_canonical(const char *s, size_t n, char out[DB_PG_TS_LEN + 1])
{
    if (n < 19 || s[4] != '-' || s[10] != ' ' || s[13] != ':') return false;
    memcpy(out, s, 10);
    out[10] = 'T';
    memcpy(out + 11, s + 11, 8);
    out[19] = '.';
    size_t i = 19, d = 0;
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (d < 3) out[20 + d++] = s[i];
    while (d < 3)
        out[20 + d++] = '0';
    out[23] = 'Z';
    out[24] = '\0';
    return i == n || s[i] == '+' || s[i] == '-';
}

/* A text parameter as PostgreSQL takes it: NUL-terminated, valid UTF-8.
 * Stored text is always valid UTF-8 (JSON bodies are, object keys are
 * checked), so what is not can only be a lookup from raw input (a query
 * string, a form field): each bad byte becomes U+FFFD, which matches what
 * SQLite would have matched - nothing - where SQLite compares the bytes. */
char *db_pg_text_param(const char *s, size_t n)
{
    if (utf8_valid(s, n) && !memchr(s, '\0', n)) return xstrndup(s, n);
    char *out = xmalloc(n * 3 + 1), *w = out;
    for (size_t i = 0; i < n;) {
        unsigned char b = (unsigned char)s[i];
        size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (b && len && i + len <= n && utf8_valid(s + i, len)) {
            memcpy(w, s + i, len);
            w += len;
            i += len;
        } else {
            memcpy(w, "\xef\xbf\xbd", 3);
            w += 3;
            i++;
        }
    }
    *w = '\0';
    return out;
}

br_err db_pg_column(const PGresult *r, int row, int col, char ts[DB_PG_TS_LEN + 1],
                    struct db_val *v)
{
    if (PQgetisnull(r, row, col)) {
        *v = db_null();
        return BR_OK;
    }
    const char *s = PQgetvalue(r, row, col);
    size_t n = (size_t)PQgetlength(r, row, col);
    switch (PQftype(r, col)) {
    case OID_INT2:
    case OID_INT4:
    case OID_INT8:
        *v = db_int(strtoll(s, NULL, 10));
        return BR_OK;
    case OID_FLOAT4:
    case OID_FLOAT8:
    case OID_NUMERIC:
        *v = db_real(strtod(s, NULL));
        return BR_OK;
    case OID_BOOL:
        *v = db_int(s[0] == 't');
        return BR_OK;
    case OID_TIMESTAMP:
    case OID_TIMESTAMPTZ:
        if (!db_pg_ts_canonical(s, n, ts))
            return err_set(BR_STORE, "timestamp out of range: %s", s);
        *v = (struct db_val){.type = DB_TEXT, .s = ts, .n = DB_PG_TS_LEN};
        return BR_OK;
    default:
        *v = (struct db_val){.type = DB_TEXT, .s = s, .n = n};
        return BR_OK;
    }
}
