/*
 * schema.h - the relational schema, one migration per array element.
 *
 * Tables carry the specification's resource names and fields (perfiles,
 * citas, servicios, barberos, fotos_cita, historial_cortes); identity users
 * and sessions live in auth_users and auth_sessions, and the confirmation
 * e-mails waiting to be delivered in mail_outbox. Timestamps are TEXT in the
 * API's UTC form `YYYY-MM-DDTHH:MM:SS.sssZ`, which sorts in time order.
 * Element i upgrades the schema from version i to i + 1 (PRAGMA
 * user_version on SQLite, the schema_version table on PostgreSQL); released
 * elements are never edited, only added. PostgreSQL keeps the same tables and
 * columns in its own types (schema_pg.c).
 */
#ifndef BR_SCHEMA_H
#define BR_SCHEMA_H

/* A migration whose text is the same in both dialects, written once: a
 * deleted account stays deleted (schema_sqlite.c says why) */
#define SCHEMA_ELIMINADOS                                                                          \
    "UPDATE auth_users SET password_hash = '', last_sign_in_at = NULL "                            \
    "WHERE eliminado_en IS NOT NULL;"                                                              \
    "UPDATE perfiles SET telefono = NULL "                                                         \
    "WHERE id IN (SELECT id FROM auth_users WHERE eliminado_en IS NOT NULL);"                      \
    "DELETE FROM auth_sessions WHERE user_id IN (SELECT id FROM auth_users "                       \
    "WHERE eliminado_en IS NOT NULL OR email LIKE '%@eliminado.invalid');"                         \
    "UPDATE auth_users SET email = 'sin-email:' || id "                                            \
    "WHERE eliminado_en IS NULL AND email LIKE '%@eliminado.invalid';"

extern const char *const schema_sqlite[];
extern const int schema_sqlite_count;
extern const char *const schema_pg[];
extern const int schema_pg_count;

#endif
