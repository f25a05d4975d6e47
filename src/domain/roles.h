/*
 * roles.h - what a profile's rol lets its user do: the specification's role
 * rule, written once. `admin` is required for the administration endpoints;
 * `admin` and `barbero` are staff, who see every appointment; any other
 * value (or no profile at all) is an ordinary client.
 *
 * Pure functions of their arguments; safe from any thread.
 */
#ifndef BR_ROLES_H
#define BR_ROLES_H

#include "records.h"

#include <stdbool.h>

/* The roles the specification names, as stored in perfiles.rol. */
#define ROL_ADMIN   "admin"
#define ROL_BARBERO "barbero"
#define ROL_CLIENTE "cliente" /* a new account's */
/* The staff roles as an SQL list, for a statement that applies the rule
 * itself (a constant: no input is ever spliced into SQL). */
#define ROL_STAFF_SQL "('" ROL_ADMIN "', '" ROL_BARBERO "')"

/* Whether rol (nullable) is `admin`. */
bool rol_is_admin(const char *rol);

/* Whether rol (nullable) is staff: `admin` or `barbero`. */
bool rol_is_staff(const char *rol);

/* Whether rol is one of the three above: any other value is stored as
 * given (the specification does not validate it) and counts as a client. */
bool rol_is_known(const char *rol);

/* The same for the caller a session names (a missing profile is a client). */
bool principal_is_admin(const struct principal *p);
bool principal_is_staff(const struct principal *p);

#endif
