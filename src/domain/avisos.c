/*
 * avisos.c - phone numbers, quiet hours and reminder offsets (see avisos.h).
 */
#include "avisos.h"
#include "rules.h"

#include <string.h>

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

bool rule_telefono_e164(const char *in, const char *default_cc, char out[RULE_E164_MAX])
{
    if (!in || !default_cc) return false;
    size_t ncc = strlen(default_cc);
    if (ncc < 1 || ncc > 3 || default_cc[0] == '0') return false;
    for (size_t i = 0; i < ncc; i++)
        if (!is_digit(default_cc[i])) return false;
    char digits[64];
    size_t n = 0;
    bool plus = false;
    const char *p = in;
    while (*p == ' ')
        p++;
    if (*p == '+') {
        plus = true;
        p++;
    }
    for (; *p; p++) {
        if (is_digit(*p)) {
            if (n + 1 >= sizeof digits) return false;
            digits[n++] = *p;
        } else if (*p != ' ' && *p != '-' && *p != '.' && *p != '(' && *p != ')') {
            return false;
        }
    }
    digits[n] = '\0';
    const char *num = digits;
    char buf[64];
    if (!plus && n >= 2 && digits[0] == '0' && digits[1] == '0') {
        num = digits + 2; /* 00: the international prefix */
    } else if (!plus) {
        const char *national = digits;
        if (digits[0] == '0' && strcmp(default_cc, "39") != 0) national++;
        size_t nn = strlen(national);
        if (ncc + nn >= sizeof buf) return false;
        memcpy(buf, default_cc, ncc);
        memcpy(buf + ncc, national, nn + 1);
        num = buf;
    }
    size_t len = strlen(num);
    if (len < 8 || len > 15 || num[0] == '0') return false;
    memcpy(out, num, len + 1);
    return true;
}

bool rule_telefono_mismo(const char *a, const char *b, const char *default_cc)
{
    if (!strcmp(a, b)) return true;
    char ea[RULE_E164_MAX], eb[RULE_E164_MAX];
    if (default_cc && rule_telefono_e164(a, default_cc, ea) &&
        rule_telefono_e164(b, default_cc, eb))
        return !strcmp(ea, eb);
    char da[64], db[64];
    size_t na = strlen(a), nb = strlen(b);
    return na < sizeof da && nb < sizeof db && rule_telefono_digitos(a, na, da) > 0 &&
           rule_telefono_digitos(b, nb, db) > 0 && !strcmp(da, db);
}

bool rule_quiet_hours_parse(const char *s, int *from, int *to)
{
    *from = *to = 0;
    if (!s) return false;
    if (!*s || !strcmp(s, "no")) return true;
    if (strlen(s) != 11 || s[5] != '-') return false;
    char a[6], b[6];
    memcpy(a, s, 5);
    a[5] = '\0';
    memcpy(b, s + 6, 5);
    b[5] = '\0';
    int f, t;
    if (!rule_hhmm_parse(a, &f) || !rule_hhmm_parse(b, &t) || f >= 1440 || t >= 1440 || f == t)
        return false;
    *from = f;
    *to = t;
    return true;
}

bool rule_quiet_now(int minute, int from, int to)
{
    if (from == to) return false;
    if (from < to) return minute >= from && minute < to;
    return minute >= from || minute < to;
}

bool rule_reminder_offsets_parse(const char *s, int64_t out_min[RULE_OFFSETS_MAX], int *n)
{
    *n = 0;
    if (!s) return false;
    if (!*s || !strcmp(s, "no")) return true;
    const char *p = s;
    for (;;) {
        while (*p == ' ')
            p++;
        int64_t v = 0;
        int nd = 0;
        while (is_digit(*p) && nd < 9) {
            v = v * 10 + (*p++ - '0');
            nd++;
        }
        if (!nd || is_digit(*p)) return false;
        int64_t unit = *p == 'd' ? 1440 : *p == 'h' ? 60 : *p == 'm' ? 1 : 0;
        if (!unit) return false;
        p++;
        v *= unit;
        if (v < 1 || v > 365 * 1440) return false;
        while (*p == ' ')
            p++;
        bool seen = false;
        for (int i = 0; i < *n; i++)
            seen = seen || out_min[i] == v;
        if (!seen) {
            if (*n >= RULE_OFFSETS_MAX) return false;
            /* largest first */
            int i = *n;
            while (i > 0 && out_min[i - 1] < v) {
                out_min[i] = out_min[i - 1];
                i--;
            }
            out_min[i] = v;
            (*n)++;
        }
        if (!*p) return true;
        if (*p != ',') return false;
        p++;
    }
}
