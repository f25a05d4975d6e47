/*
 * rules.c - the shop's rules on the values it stores (see rules.h).
 */
#include "rules.h"
#include "../util/common.h"
#include "../util/tz.h"

#include <string.h>

/* Non-empty UTF-8 of at most max bytes. */
static bool text_ok(const char *s, size_t max)
{
    if (!s) return false;
    size_t n = strlen(s);
    return n > 0 && n <= max && utf8_valid(s, n);
}

bool rule_nombre_ok(const char *s)
{
    if (!text_ok(s, RULE_NOMBRE_MAX)) return false;
    bool seen = false; /* something besides white space */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        /* one line, as cards and e-mails show it (a tab is white space) */
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) return false;
        if (*p != ' ' && *p != '\t') seen = true;
    }
    return seen;
}

void rule_una_linea(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 1 < cap; p++)
        out[n++] = *p < 0x20 || *p == 0x7f ? ' ' : (char)*p;
    /* cut short inside a character: back to where it starts */
    if (s[n] && n > 0) {
        size_t k = n - 1;
        while (k > 0 && ((unsigned char)out[k] & 0xc0) == 0x80)
            k--;
        unsigned char lead = (unsigned char)out[k];
        size_t len = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
        if (k + len > n) n = k;
    }
    out[n] = '\0';
}

bool rule_telefono_ok(const char *s)
{
    if (!s || strlen(s) > RULE_TELEFONO_MAX) return false;
    int digits = 0;
    for (const char *p = s; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digits++;
        else if (!strchr("+-(). ", *p))
            return false;
    }
    return digits >= 6 && digits <= 15;
}

bool rule_foto_url_ok(const char *s)
{
    return text_ok(s, RULE_URL_MAX);
}

bool rule_motivo_ok(const char *s)
{
    return !s || !*s || text_ok(s, RULE_MOTIVO_MAX);
}

bool rule_mensaje_ok(const char *s)
{
    return !s || !*s || text_ok(s, RULE_MENSAJE_MAX);
}

bool rule_duracion_ok(int64_t minutes)
{
    return minutes >= 1 && minutes <= RULE_DURACION_MAX;
}

bool rule_precio_ok(double precio)
{
    return precio >= 0 && precio <= RULE_PRECIO_MAX; /* false for NaN */
}

bool rule_hhmm_parse(const char *s, int *minutes)
{
    if (!s || strlen(s) != 5 || s[2] != ':') return false;
    for (int i = 0; i < 5; i++)
        if (i != 2 && (s[i] < '0' || s[i] > '9')) return false;
    int h = (s[0] - '0') * 10 + (s[1] - '0'), m = (s[3] - '0') * 10 + (s[4] - '0');
    if (m > 59 || h > 24 || (h == 24 && m != 0)) return false;
    *minutes = h * 60 + m;
    return true;
}

void rule_hhmm_format(int minutes, char out[6])
{
    int h = minutes / 60, m = minutes % 60;
    out[0] = (char)('0' + h / 10);
    out[1] = (char)('0' + h % 10);
    out[2] = ':';
    out[3] = (char)('0' + m / 10);
    out[4] = (char)('0' + m % 10);
    out[5] = '\0';
}

bool rule_dia_ok(int64_t dia)
{
    return dia >= 1 && dia <= 7;
}

bool rule_tramo_ok(int inicio, int fin)
{
    return inicio >= 0 && fin <= 1440 && inicio < fin;
}

bool rule_tramos_overlap(int dia_a, int inicio_a, int fin_a, int dia_b, int inicio_b, int fin_b)
{
    return dia_a == dia_b && inicio_a < fin_b && inicio_b < fin_a;
}

enum rule_range rule_date_range(const char *desde, const char *hasta)
{
    struct tz_date d1, d2;
    if (!tz_date_parse(desde, &d1)) return RULE_RANGE_DESDE;
    if (!tz_date_parse(hasta, &d2)) return RULE_RANGE_HASTA;
    if (tz_days_from_civil(&d2) < tz_days_from_civil(&d1)) return RULE_RANGE_REVERSED;
    return RULE_RANGE_OK;
}

bool rule_password_long_enough(const char *pw)
{
    size_t n = strlen(pw);
    return utf8_valid(pw, n) && utf8_count(pw, n) >= RULE_PASSWORD_MIN;
}

bool rule_password_short_enough(const char *pw)
{
    return strlen(pw) <= RULE_PASSWORD_MAX;
}

bool rule_margen_ok(int64_t minutes)
{
    return minutes >= 0 && minutes <= RULE_MARGEN_MAX;
}

size_t rule_espacios_simples(const char *in, char *out)
{
    size_t k = 0;
    bool gap = false;
    for (const char *p = in; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            gap = k > 0;
            continue;
        }
        if (gap) out[k++] = ' ';
        gap = false;
        out[k++] = *p;
    }
    out[k] = '\0';
    return k;
}

size_t rule_busqueda_fold(const char *in, size_t n, char *out)
{
    /* the second byte of each letter after 0xC3, and its plain letter */
    static const char from[] = "\xa1\xa9\xad\xb3\xba\xbc\xb1\x81\x89\x8d\x93\x9a\x9c\x91";
    static const char to[] = "aeiouunaeiouun";
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == 0xc3 && i + 1 < n && in[i + 1]) {
            const char *hit = strchr(from, in[i + 1]);
            if (hit) {
                out[k++] = to[hit - from];
                i++;
                continue;
            }
        }
        out[k++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : (char)c;
    }
    out[k] = '\0';
    return k;
}

size_t rule_telefono_digitos(const char *in, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] >= '0' && in[i] <= '9')
            out[k++] = in[i];
        else if (!strchr("+-(). ", in[i]) || !in[i])
            return out[0] = '\0', 0;
    }
    out[k] = '\0';
    if (k < 3) return out[0] = '\0', 0;
    if (k > 2 && out[0] == '0' && out[1] == '0') { /* 0034...: +34... */
        memmove(out, out + 2, k - 1);
        k -= 2;
    }
    return k;
}
