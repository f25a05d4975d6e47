/*
 * jsonw.h - a streaming JSON writer: answers are serialised straight into
 * the buffer handed to libmicrohttpd, with no tree of objects in between.
 *
 * jansson parses request bodies; it has no streaming encoder, and building
 * a json_t tree per row and then dumping it costs more than the query that
 * produced the rows. The writer keeps the comma bookkeeping itself: open an
 * object or array, write keys and values, close it. Strings are written as
 * UTF-8 with the escapes JSON requires; bytes that are not UTF-8 become
 * U+FFFD, so the output is always valid JSON. Reals are written in the
 * shortest form that reads back the same, with ".0" on whole numbers (so
 * they stay reals for clients that care); NaN and infinities as null.
 *
 * The first failure (the cap was reached, nesting too deep, a value where
 * a key was due) sticks: later calls do nothing and jw_finish reports it.
 */
#ifndef BR_JSONW_H
#define BR_JSONW_H

#include "buf.h"

#define JW_MAX_DEPTH 16

struct jw {
    struct buf b;
    int depth;
    bool first[JW_MAX_DEPTH + 1]; /* nothing written yet at this level */
    bool after_key;
    br_err err;
};

/* Starts an empty document of at most max bytes. */
void jw_init(struct jw *w, size_t max);
/* Releases the buffer (not needed after jw_finish succeeded). */
void jw_free(struct jw *w);

void jw_obj_open(struct jw *w);
void jw_obj_close(struct jw *w);
void jw_arr_open(struct jw *w);
void jw_arr_close(struct jw *w);
/* The next member's name (inside an object). */
void jw_key(struct jw *w, const char *key);
/* A string value; NULL writes null. */
void jw_str(struct jw *w, const char *s);
void jw_int(struct jw *w, int64_t v);
/* A number as JSON writes it: whole cents plainly (12.5, 12.05), any
 * other value in the shortest form that reads back as the same double;
 * NaN and the infinities, which JSON has no form for, write null. */
void jw_real(struct jw *w, double v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);

/* Shorthands for one member. */
void jw_kstr(struct jw *w, const char *key, const char *s);
void jw_kint(struct jw *w, const char *key, int64_t v);
void jw_kreal(struct jw *w, const char *key, double v);

/* The text jw_real writes for a finite v (NUL-terminated), and its length;
 * -1 for NaN and the infinities. */
#define JW_REAL_MAX 40
int jw_real_text(double v, char out[JW_REAL_MAX]);

/* Ends the document. On success hands over the text (NUL-terminated,
 * caller frees) and its length; on failure (including unclosed nesting)
 * frees everything and returns the sticky error with *out NULL. */
br_err jw_finish(struct jw *w, char **out, size_t *len) WARN_UNUSED;

#endif
