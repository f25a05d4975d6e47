/*
 * schema_pg.c - the PostgreSQL schema's migrations (see schema.h).
 *
 * The same tables and columns as on SQLite, in PostgreSQL's own types: ids
 * are uuid, times timestamptz (the adapter hands them back in the API's
 * form), counts bigint, prices double precision (the value SQLite stores,
 * to the bit). Version 1 is the SQLite schema as of its version 6; both
 * move on together from there. Beyond SQLite's: an exclusion constraint
 * makes two live appointments of one barber that overlap impossible,
 * whatever a node does (btree_gist gives the uuid equality an index).
 */
#include "schema.h"

const char *const schema_pg[] = {
    /* version 1 */
    "CREATE EXTENSION IF NOT EXISTS btree_gist;"
    "CREATE TABLE auth_users ("
    "  id uuid PRIMARY KEY,"
    "  email text NOT NULL UNIQUE,"
    "  password_hash text NOT NULL,"
    "  created_at timestamptz NOT NULL,"
    "  last_sign_in_at timestamptz"
    ");"
    "CREATE TABLE auth_sessions ("
    "  token_hash text PRIMARY KEY,"
    "  user_id uuid NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,"
    "  created_at timestamptz NOT NULL,"
    "  expires_at timestamptz NOT NULL"
    ");"
    "CREATE INDEX auth_sessions_user ON auth_sessions(user_id);"
    "CREATE TABLE perfiles ("
    "  id uuid PRIMARY KEY REFERENCES auth_users(id) ON DELETE CASCADE,"
    "  rol text NOT NULL DEFAULT 'cliente',"
    "  nombre text,"
    "  telefono text,"
    "  created_at timestamptz NOT NULL"
    ");"
    "CREATE INDEX perfiles_created ON perfiles(created_at, id);"
    "CREATE TABLE barberos ("
    "  id uuid PRIMARY KEY,"
    "  nombre text NOT NULL,"
    "  foto_url text"
    ");"
    "CREATE TABLE servicios ("
    "  id uuid PRIMARY KEY,"
    "  nombre text NOT NULL,"
    "  duracion_min bigint NOT NULL CHECK (duracion_min > 0),"
    "  precio double precision NOT NULL CHECK (precio >= 0)"
    ");"
    "CREATE TABLE citas ("
    "  id uuid PRIMARY KEY,"
    "  cliente_id uuid NOT NULL REFERENCES auth_users(id),"
    "  barbero_id uuid NOT NULL REFERENCES barberos(id),"
    "  servicio_id uuid NOT NULL REFERENCES servicios(id),"
    "  fecha_inicio timestamptz NOT NULL,"
    "  fecha_fin timestamptz NOT NULL,"
    "  estado text NOT NULL DEFAULT 'confirmada',"
    "  notas text,"
    "  google_event_id text,"
    "  created_at timestamptz NOT NULL,"
    "  CHECK (fecha_fin > fecha_inicio),"
    "  CONSTRAINT citas_sin_solape EXCLUDE USING gist ("
    "    barbero_id WITH =, tstzrange(fecha_inicio, fecha_fin) WITH &&"
    "  ) WHERE (estado <> 'cancelada')"
    ");"
    "CREATE INDEX citas_cliente_inicio ON citas(cliente_id, fecha_inicio, id);"
    "CREATE INDEX citas_inicio ON citas(fecha_inicio, id);"
    "CREATE INDEX citas_estado_inicio ON citas(estado, fecha_inicio, id);"
    "CREATE INDEX citas_cliente_estado_inicio ON citas(cliente_id, estado, fecha_inicio, id);"
    "CREATE INDEX citas_barbero_fin ON citas(barbero_id, fecha_fin, fecha_inicio, estado);"
    "CREATE TABLE historial_cortes ("
    "  id uuid PRIMARY KEY,"
    "  cliente_id uuid NOT NULL REFERENCES auth_users(id),"
    "  cita_id uuid NOT NULL REFERENCES citas(id) ON DELETE CASCADE,"
    "  barbero_id uuid NOT NULL REFERENCES barberos(id),"
    "  servicio_id uuid NOT NULL REFERENCES servicios(id),"
    "  fecha date NOT NULL,"
    "  created_at timestamptz NOT NULL"
    ");"
    "CREATE INDEX historial_cortes_cliente ON historial_cortes(cliente_id, fecha);"
    "CREATE INDEX historial_cortes_cita ON historial_cortes(cita_id);"
    "CREATE TABLE fotos_cita ("
    "  id uuid PRIMARY KEY,"
    "  cita_id uuid NOT NULL REFERENCES citas(id) ON DELETE CASCADE,"
    "  cliente_id uuid NOT NULL REFERENCES auth_users(id),"
    "  tipo text NOT NULL,"
    "  url text NOT NULL,"
    "  storage_path text NOT NULL UNIQUE,"
    "  created_at timestamptz NOT NULL"
    ");"
    "CREATE INDEX fotos_cita_cita_tipo ON fotos_cita(cita_id, tipo);"
    "CREATE INDEX fotos_cita_cita_creado ON fotos_cita(cita_id, created_at, id);"
    "CREATE TABLE mail_outbox ("
    "  id uuid PRIMARY KEY,"
    "  cita_id uuid NOT NULL,"
    "  recipient text NOT NULL,"
    "  cliente_nombre text NOT NULL,"
    "  barbero_nombre text NOT NULL,"
    "  servicio_nombre text NOT NULL,"
    "  fecha_inicio timestamptz NOT NULL,"
    "  fecha_fin timestamptz NOT NULL,"
    "  notas text,"
    "  created_at timestamptz NOT NULL,"
    "  status text NOT NULL DEFAULT 'pending'," /* pending | sent | dropped */
    "  attempts bigint NOT NULL DEFAULT 0,"
    "  next_attempt_at timestamptz NOT NULL,"
    "  locked_until timestamptz,"
    "  last_error text,"
    "  done_at timestamptz"
    ");"
    "CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);"
    "CREATE TABLE auth_throttle ("
    "  key text PRIMARY KEY,"
    "  failures bigint NOT NULL,"
    "  window_start timestamptz NOT NULL,"
    "  locked_until timestamptz,"
    "  lockouts bigint NOT NULL,"
    "  forget_at timestamptz NOT NULL"
    ");"
    "CREATE INDEX auth_throttle_forget ON auth_throttle(forget_at);"
    "CREATE TABLE obj_intents ("
    "  id uuid PRIMARY KEY,"
    "  bucket text NOT NULL,"
    "  key text NOT NULL,"
    "  op text NOT NULL CHECK (op IN ('put', 'delete')),"
    "  node text NOT NULL,"
    "  pid bigint NOT NULL,"
    "  instance text NOT NULL,"
    "  created_at timestamptz NOT NULL,"
    "  UNIQUE (bucket, key)"
    ");"
    "CREATE INDEX obj_intents_instance ON obj_intents(instance);"
    "CREATE TABLE proc_leases ("
    "  instance text PRIMARY KEY,"
    "  node text NOT NULL,"
    "  pid bigint NOT NULL,"
    "  started_at timestamptz NOT NULL,"
    "  heartbeat_at timestamptz NOT NULL"
    ");",
    /* version 2 (bookable hours): as SQLite's version 7 */
    ("ALTER TABLE barberos ADD COLUMN activo boolean NOT NULL DEFAULT true;"
     "ALTER TABLE servicios ADD COLUMN activo boolean NOT NULL DEFAULT true;"
     "CREATE TABLE horarios ("
     "  barbero_id uuid NOT NULL REFERENCES barberos(id) ON DELETE CASCADE,"
     "  dia bigint NOT NULL CHECK (dia BETWEEN 1 AND 7),"
     "  inicio bigint NOT NULL,"
     "  fin bigint NOT NULL,"
     "  CHECK (inicio >= 0 AND fin > inicio AND fin <= 1440),"
     "  PRIMARY KEY (barbero_id, dia, inicio)"
     ");"
     "INSERT INTO horarios (barbero_id, dia, inicio, fin) "
     "SELECT b.id, d.dia, d.inicio, d.fin FROM barberos b CROSS JOIN "
     "(VALUES (1, 540, 840), (1, 960, 1200), (2, 540, 840), (2, 960, 1200), (3, 540, 840), (3, "
     "960, 1200), (4, 540, 840), (4, 960, 1200), (5, 540, 840), (5, 960, 1200), (6, 540, 840)) AS "
     "d(dia, inicio, fin);"
     "CREATE TABLE ausencias ("
     "  id uuid PRIMARY KEY,"
     "  barbero_id uuid REFERENCES barberos(id) ON DELETE CASCADE,"
     "  desde date NOT NULL,"
     "  hasta date NOT NULL,"
     "  motivo text,"
     "  created_at timestamptz NOT NULL,"
     "  CHECK (hasta >= desde)"
     ");"
     "CREATE INDEX ausencias_hasta ON ausencias(hasta, desde);"),

    /* cancel, reschedule, reminders: as SQLite's */
    ("ALTER TABLE mail_outbox ADD COLUMN kind text NOT NULL DEFAULT 'confirmacion';"
     "ALTER TABLE mail_outbox ADD COLUMN due_at timestamptz;"
     "CREATE INDEX mail_outbox_cita ON mail_outbox(cita_id, kind, status);"
     "CREATE UNIQUE INDEX mail_outbox_recordatorio ON mail_outbox(cita_id, fecha_inicio) "
     "WHERE kind = 'recordatorio';"),

    /* as SQLite's: what meets a slot, from both sides of its start */
    ("DROP INDEX citas_barbero_fin;"
     "CREATE INDEX citas_barbero_inicio ON citas(barbero_id, fecha_inicio, fecha_fin, estado);"),

    /* as SQLite's: the catalog's version (names.h), changed by a statement
     * trigger (a TRUNCATE too) in the writer's own transaction; ALWAYS: in
     * a session of session_replication_role = replica too (logical
     * replication, bulk edits) */
    ("CREATE TABLE catalogo_version ("
     "  id integer PRIMARY KEY CHECK (id = 1),"
     "  version uuid NOT NULL"
     ");"
     "INSERT INTO catalogo_version (id, version) VALUES (1, gen_random_uuid());"
     "CREATE FUNCTION catalogo_cambia() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
     "UPDATE catalogo_version SET version = gen_random_uuid() WHERE id = 1; RETURN NULL; END $$;"
     "CREATE TRIGGER barberos_cambio AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON barberos "
     "FOR EACH STATEMENT EXECUTE FUNCTION catalogo_cambia();"
     "CREATE TRIGGER servicios_cambio AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON servicios "
     "FOR EACH STATEMENT EXECUTE FUNCTION catalogo_cambia();"
     "ALTER TABLE barberos ENABLE ALWAYS TRIGGER barberos_cambio;"
     "ALTER TABLE servicios ENABLE ALWAYS TRIGGER servicios_cambio;"),

    /* as SQLite's: each photo's size, for the uploader's quota */
    ("ALTER TABLE fotos_cita ADD COLUMN bytes bigint NOT NULL DEFAULT 0;"
     "CREATE INDEX fotos_cita_cliente ON fotos_cita(cliente_id, bytes);"),

    /* as SQLite's: the price at booking and the reports' covering index;
     * and SQLite's unixepoch() (whole seconds since 1970), so that the
     * reports' statements are written once for both (STABLE, a single
     * expression: the planner inlines it) */
    ("ALTER TABLE citas ADD COLUMN precio double precision CHECK (precio >= 0);"
     "CREATE INDEX citas_informe ON citas(fecha_inicio) INCLUDE (barbero_id, servicio_id, estado, "
     "fecha_fin, precio);"
     "CREATE FUNCTION unixepoch(t timestamptz) RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE "
     "AS $$ SELECT floor(extract(epoch FROM t))::bigint $$;"),
    /* as SQLite's: the client's account (links, its mail, consents) */
    ("CREATE TABLE cuenta_tokens ("
     "  token_hash text PRIMARY KEY,"
     "  user_id uuid NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,"
     "  proposito text NOT NULL,"
     "  email_nuevo text,"
     "  created_at timestamptz NOT NULL,"
     "  expires_at timestamptz NOT NULL,"
     "  used_at timestamptz"
     ");"
     "CREATE INDEX cuenta_tokens_user ON cuenta_tokens(user_id, proposito);"
     "CREATE TABLE cuenta_correo ("
     "  id uuid PRIMARY KEY,"
     "  user_id uuid,"
     "  kind text NOT NULL,"
     "  recipient text NOT NULL,"
     "  nombre text,"
     "  enlace text,"
     "  created_at timestamptz NOT NULL,"
     "  status text NOT NULL DEFAULT 'pending',"
     "  attempts bigint NOT NULL DEFAULT 0,"
     "  next_attempt_at timestamptz NOT NULL,"
     "  locked_until timestamptz,"
     "  last_error text,"
     "  done_at timestamptz"
     ");"
     "CREATE INDEX cuenta_correo_due ON cuenta_correo(status, next_attempt_at);"
     "CREATE INDEX cuenta_correo_user ON cuenta_correo(user_id);"
     "CREATE TABLE consentimientos ("
     "  cliente_id uuid NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,"
     "  tipo text NOT NULL,"
     "  otorgado_en timestamptz,"
     "  retirado_en timestamptz,"
     "  PRIMARY KEY (cliente_id, tipo)"
     ");"
     "ALTER TABLE auth_users ADD COLUMN eliminado_en timestamptz;"
     "CREATE INDEX mail_outbox_recipient ON mail_outbox(recipient);"),
    /* as SQLite's: the links' key, the waiting list, its notices */
    ("CREATE TABLE claves ("
     "  nombre text PRIMARY KEY,"
     "  valor text NOT NULL,"
     "  created_at timestamptz NOT NULL"
     ");"
     "CREATE TABLE lista_espera ("
     "  id uuid PRIMARY KEY,"
     "  cliente_id uuid NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,"
     "  servicio_id uuid NOT NULL REFERENCES servicios(id),"
     "  barbero_id uuid REFERENCES barberos(id) ON DELETE CASCADE,"
     "  fecha date NOT NULL,"
     "  created_at timestamptz NOT NULL"
     ");"
     "CREATE INDEX lista_espera_cliente ON lista_espera(cliente_id, fecha);"
     "CREATE INDEX lista_espera_fecha ON lista_espera(fecha, created_at);"
     "CREATE TABLE lista_espera_avisos ("
     "  entrada_id uuid NOT NULL REFERENCES lista_espera(id) ON DELETE CASCADE,"
     "  barbero_id uuid NOT NULL,"
     "  inicio timestamptz NOT NULL,"
     "  created_at timestamptz NOT NULL,"
     "  PRIMARY KEY (entrada_id, barbero_id, inicio)"
     ");"
     "ALTER TABLE mail_outbox ADD COLUMN enlace text;"),
    /* as SQLite's: WhatsApp beside e-mail, the clients' consent to it */
    ("ALTER TABLE mail_outbox ADD COLUMN canal text NOT NULL DEFAULT 'email';"
     "ALTER TABLE mail_outbox ADD COLUMN antelacion_min bigint NOT NULL DEFAULT 0;"
     "ALTER TABLE mail_outbox ADD COLUMN proveedor_id text;"
     "ALTER TABLE mail_outbox ADD COLUMN entrega text;"
     "ALTER TABLE mail_outbox ADD COLUMN entrega_at timestamptz;"
     "DROP INDEX mail_outbox_recordatorio;"
     "CREATE UNIQUE INDEX mail_outbox_recordatorio_canal ON mail_outbox(cita_id, fecha_inicio, "
     "canal, antelacion_min) WHERE kind = 'recordatorio';"
     "CREATE INDEX mail_outbox_proveedor ON mail_outbox(proveedor_id) "
     "WHERE proveedor_id IS NOT NULL;"
     "CREATE TABLE whatsapp_consentimientos ("
     "  cliente_id uuid PRIMARY KEY,"
     "  telefono text NOT NULL,"
     "  otorgado_en timestamptz NOT NULL,"
     "  retirado_en timestamptz"
     ");"),
    /* as SQLite's: a barber's address, linked user and calendar feed */
    ("CREATE TABLE barbero_contactos ("
     "  barbero_id uuid PRIMARY KEY REFERENCES barberos(id) ON DELETE CASCADE,"
     "  email text,"
     "  usuario_id uuid UNIQUE REFERENCES auth_users(id) ON DELETE SET NULL,"
     "  feed_hash text UNIQUE,"
     "  updated_at timestamptz NOT NULL"
     ");"),

    /* as SQLite's: the front desk (margins, attendance marks) */
    ("ALTER TABLE servicios ADD COLUMN margen_min bigint NOT NULL DEFAULT 0 "
     "CHECK (margen_min BETWEEN 0 AND 120);"
     "ALTER TABLE citas ADD COLUMN asistencia_en timestamptz;"),

    /* as SQLite's: the waiting list's work queue of freed slots */
    ("CREATE TABLE espera_liberaciones ("
     "  id uuid PRIMARY KEY,"
     "  barbero_id uuid,"
     "  inicio timestamptz,"
     "  fin timestamptz,"
     "  desde date,"
     "  hasta date,"
     "  created_at timestamptz NOT NULL,"
     "  locked_until timestamptz"
     ");"),

    /* as SQLite's: who recorded a client's WhatsApp consent last (no foreign key) */
    ("ALTER TABLE whatsapp_consentimientos ADD COLUMN registrado_por uuid;"),

    /* as SQLite's: a deleted account stays deleted */
    (SCHEMA_ELIMINADOS),

    /* as SQLite's: each client's generation of the personal links */
    ("CREATE TABLE enlaces_cliente ("
     "  cliente_id uuid PRIMARY KEY,"
     "  gen bigint NOT NULL,"
     "  updated_at timestamptz NOT NULL"
     ");"
     /* as SQLite's: the WhatsApp messages sent about each client */
     "CREATE TABLE whatsapp_envios ("
     "  mensaje_id uuid PRIMARY KEY,"
     "  cliente_id uuid NOT NULL,"
     "  enviado_en timestamptz NOT NULL"
     ");"
     "CREATE INDEX whatsapp_envios_cliente ON whatsapp_envios(cliente_id, enviado_en);"),

    /* barbers' and services' names compare by code point (UTF-8's byte
     * order), as SQLite's BINARY compares them: the listings the contract
     * orders by nombre (and every other comparison of these names) must not
     * follow the locale the database was made with ("álvaro" after "Zoe",
     * "B" before "b"). No index, view or lower() reads these columns */
    ("ALTER TABLE barberos ALTER COLUMN nombre TYPE text COLLATE \"C\";"
     "ALTER TABLE servicios ALTER COLUMN nombre TYPE text COLLATE \"C\";"),
};

const int schema_pg_count = (int)(sizeof schema_pg / sizeof schema_pg[0]);
