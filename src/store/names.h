/*
 * names.h - the catalog's names as of one version of the database: each
 * barber's nombre and foto_url, each service's nombre, duracion_min and
 * precio, by id.
 *
 * A listing of appointments shows those beside each row. Joining them in
 * SQL costs the database two index lookups a row (on PostgreSQL, a third
 * of a client's listing); a listing can instead read the catalog's version
 * (catalogo_version, which a trigger on barberos and servicios changes in
 * the same transaction as any change to them, whoever makes it) and, when
 * it is the version of the names held here, take them from here. Exact:
 * the version is read in the listing's own snapshot, and a new version is
 * a fresh random value, so two states of a catalog never share one (not
 * even across a restore of an older backup).
 *
 * A struct names is immutable once built and shared by reference count:
 * readers take a reference (names_ref) for as long as they use it.
 */
#ifndef BR_NAMES_H
#define BR_NAMES_H

#include "db.h"

#include <stdbool.h>
#include <stddef.h>

#define NAMES_MAX     8192 /* barbers and services held at most; a larger catalog is joined */
#define NAMES_VERSION 64   /* the longest version text */

enum names_kind { NAMES_BARBERO, NAMES_SERVICIO };

struct names;

/* An empty set, of no version yet. */
struct names *names_new(void);
/* Sets the version the set is of (text of at most NAMES_VERSION - 1
 * bytes): false when v is not such a text. */
bool names_set_version(struct names *n, const struct db_val *v);
/* Adds an entry of kind: its id and its values, in the order of the
 * listing's columns (barber: nombre, foto_url; service: nombre,
 * duracion_min, precio), copied. BR_TOOLARGE past NAMES_MAX entries,
 * BR_INVALID for a malformed id or a value count that does not match. */
br_err names_add(struct names *n, enum names_kind kind, const struct db_val *id,
                 const struct db_val *v, int nv) WARN_UNUSED;
/* Ends the building: from here on n is read-only. */
void names_seal(struct names *n);

/* Whether n (NULL: none) is of version. */
bool names_is(const struct names *n, const struct db_val *version);

/* The values of the entry of kind with id (2 for a barber, 3 for a
 * service, borrowed from n), or NULL when there is none. */
const struct db_val *names_find(const struct names *n, enum names_kind kind,
                                const struct db_val *id);

/* Reference counting: names_new returns one reference. */
struct names *names_ref(struct names *n);
void names_unref(struct names *n);

#endif
