/*
 * schema_sqlite.c - the SQLite schema's migrations (see schema.h).
 */
#include "schema.h"

#define CATALOGO_CAMBIA                                                                            \
    "UPDATE catalogo_version SET version = lower(hex(randomblob(16))) WHERE id = 1;"

const char *const schema_sqlite[] = {
    /* version 1 */
    "CREATE TABLE auth_users ("
    "  id TEXT PRIMARY KEY,"
    "  email TEXT NOT NULL UNIQUE,"
    "  password_hash TEXT NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  last_sign_in_at TEXT"
    ");"
    "CREATE TABLE auth_sessions ("
    "  token_hash TEXT PRIMARY KEY,"
    "  user_id TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,"
    "  created_at TEXT NOT NULL,"
    "  expires_at TEXT NOT NULL"
    ");"
    "CREATE INDEX auth_sessions_user ON auth_sessions(user_id);"
    "CREATE TABLE perfiles ("
    "  id TEXT PRIMARY KEY REFERENCES auth_users(id) ON DELETE CASCADE,"
    "  rol TEXT NOT NULL DEFAULT 'cliente',"
    "  nombre TEXT,"
    "  telefono TEXT,"
    "  created_at TEXT NOT NULL"
    ");"
    "CREATE INDEX perfiles_created ON perfiles(created_at);"
    "CREATE TABLE barberos ("
    "  id TEXT PRIMARY KEY,"
    "  nombre TEXT NOT NULL,"
    "  foto_url TEXT"
    ");"
    "CREATE TABLE servicios ("
    "  id TEXT PRIMARY KEY,"
    "  nombre TEXT NOT NULL,"
    "  duracion_min INTEGER NOT NULL CHECK (duracion_min > 0),"
    "  precio REAL NOT NULL CHECK (precio >= 0)"
    ");"
    "CREATE TABLE citas ("
    "  id TEXT PRIMARY KEY,"
    "  cliente_id TEXT NOT NULL REFERENCES auth_users(id),"
    "  barbero_id TEXT NOT NULL REFERENCES barberos(id),"
    "  servicio_id TEXT NOT NULL REFERENCES servicios(id),"
    "  fecha_inicio TEXT NOT NULL,"
    "  fecha_fin TEXT NOT NULL,"
    "  estado TEXT NOT NULL DEFAULT 'confirmada',"
    "  notas TEXT,"
    "  google_event_id TEXT,"
    "  created_at TEXT NOT NULL,"
    "  CHECK (fecha_fin > fecha_inicio)"
    ");"
    "CREATE INDEX citas_barbero_inicio ON citas(barbero_id, fecha_inicio);"
    "CREATE INDEX citas_cliente_inicio ON citas(cliente_id, fecha_inicio);"
    "CREATE INDEX citas_inicio ON citas(fecha_inicio);"
    "CREATE TABLE historial_cortes ("
    "  id TEXT PRIMARY KEY,"
    "  cliente_id TEXT NOT NULL REFERENCES auth_users(id),"
    "  cita_id TEXT NOT NULL REFERENCES citas(id) ON DELETE CASCADE,"
    "  barbero_id TEXT NOT NULL REFERENCES barberos(id),"
    "  servicio_id TEXT NOT NULL REFERENCES servicios(id),"
    "  fecha TEXT NOT NULL,"
    "  created_at TEXT NOT NULL"
    ");"
    "CREATE INDEX historial_cortes_cliente ON historial_cortes(cliente_id, fecha);"
    "CREATE TABLE fotos_cita ("
    "  id TEXT PRIMARY KEY,"
    "  cita_id TEXT NOT NULL REFERENCES citas(id) ON DELETE CASCADE,"
    "  cliente_id TEXT NOT NULL REFERENCES auth_users(id),"
    "  tipo TEXT NOT NULL,"
    "  url TEXT NOT NULL,"
    "  storage_path TEXT NOT NULL UNIQUE,"
    "  created_at TEXT NOT NULL"
    ");"
    "CREATE INDEX fotos_cita_cita_tipo ON fotos_cita(cita_id, tipo);"
    "CREATE TABLE mail_outbox ("
    "  id TEXT PRIMARY KEY,"
    "  cita_id TEXT NOT NULL,"
    "  recipient TEXT NOT NULL,"
    "  cliente_nombre TEXT NOT NULL,"
    "  barbero_nombre TEXT NOT NULL,"
    "  servicio_nombre TEXT NOT NULL,"
    "  fecha_inicio TEXT NOT NULL,"
    "  fecha_fin TEXT NOT NULL,"
    "  notas TEXT,"
    "  created_at TEXT NOT NULL,"
    "  status TEXT NOT NULL DEFAULT 'pending'," /* pending | sent | dropped */
    "  attempts INTEGER NOT NULL DEFAULT 0,"
    "  next_attempt_at TEXT NOT NULL,"
    "  locked_until TEXT,"
    "  last_error TEXT,"
    "  done_at TEXT"
    ");"
    "CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);",

    /* version 2: the listings' order (fecha_inicio, then id) straight from
     * an index, without a sort */
    "DROP INDEX citas_cliente_inicio;"
    "DROP INDEX citas_inicio;"
    "CREATE INDEX citas_cliente_inicio ON citas(cliente_id, fecha_inicio, id);"
    "CREATE INDEX citas_inicio ON citas(fecha_inicio, id);"
    "CREATE INDEX citas_estado_inicio ON citas(estado, fecha_inicio, id);"
    "CREATE INDEX fotos_cita_cita_creado ON fotos_cita(cita_id, created_at, id);",

    /* version 3: failed sign-ins, per account ("email:<address>") and per
     * client address ("addr:<ip>"), shared by every node on the database */
    "CREATE TABLE auth_throttle ("
    "  key TEXT PRIMARY KEY,"
    "  failures INTEGER NOT NULL," /* in the current window */
    "  window_start TEXT NOT NULL,"
    "  locked_until TEXT,"         /* NULL: never locked */
    "  lockouts INTEGER NOT NULL," /* consecutive locks: each doubles */
    "  forget_at TEXT NOT NULL"    /* from then on the row means nothing */
    ");"
    "CREATE INDEX auth_throttle_forget ON auth_throttle(forget_at);",
    /* version 4: durable intents of object writes and removals, so that a
     * crash leaves nothing half-done (see docs/internals/store.md), and the
     * leases that tell a live process's intents from a dead one's. A key
     * has at most one intent at a time: recording it reserves the key. */
    "CREATE TABLE obj_intents ("
    "  id TEXT PRIMARY KEY,"
    "  bucket TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  op TEXT NOT NULL CHECK (op IN ('put', 'delete')),"
    "  node TEXT NOT NULL,"
    "  pid INTEGER NOT NULL,"
    "  instance TEXT NOT NULL," /* '' once disowned: any sweeper may finish it */
    "  created_at TEXT NOT NULL,"
    "  UNIQUE (bucket, key)"
    ");"
    "CREATE INDEX obj_intents_instance ON obj_intents(instance);"
    "CREATE TABLE proc_leases ("
    "  instance TEXT PRIMARY KEY,"
    "  node TEXT NOT NULL,"
    "  pid INTEGER NOT NULL,"
    "  started_at TEXT NOT NULL,"
    "  heartbeat_at TEXT NOT NULL"
    ");",

    /* version 5: costs flat however many appointments there are. A
     * client's estado filter reads its rows in order from one index; the
     * overlap check walks the barber's appointments that end after the new
     * start (the future ones), not the whole history before it. Checked by
     * tests/unit/test_plans.c. */
    "CREATE INDEX citas_cliente_estado_inicio ON citas(cliente_id, estado, fecha_inicio, id);"
    "DROP INDEX citas_barbero_inicio;"
    "CREATE INDEX citas_barbero_fin ON citas(barbero_id, fecha_fin);"
    /* the admin listing's order (created_at DESC, id DESC) straight from it */
    "DROP INDEX perfiles_created;"
    "CREATE INDEX perfiles_created ON perfiles(created_at, id);",

    /* version 6: the overlap check reads the index alone (a covering
     * index: no seek into the table for each future appointment it passes) */
    ("DROP INDEX citas_barbero_fin;"
     "CREATE INDEX citas_barbero_fin ON citas(barbero_id, fecha_fin, fecha_inicio, estado);"),
    /* version 7 (bookable hours): barbers and services can be
     * taken off the catalog (activo); each barber's weekly schedule, in
     * intervals of the shop's local minutes (several a day: a break is the
     * gap between two); days off of one barber and closures of the whole
     * shop (barbero_id NULL), inclusive local dates. Every barber starts
     * with the default week: Monday to Friday 09:00-14:00 and 16:00-20:00,
     * Saturday 09:00-14:00. */
    ("ALTER TABLE barberos ADD COLUMN activo INTEGER NOT NULL DEFAULT 1;"
     "ALTER TABLE servicios ADD COLUMN activo INTEGER NOT NULL DEFAULT 1;"
     "CREATE TABLE horarios ("
     "  barbero_id TEXT NOT NULL REFERENCES barberos(id) ON DELETE CASCADE,"
     "  dia INTEGER NOT NULL CHECK (dia BETWEEN 1 AND 7)," /* ISO: 1 Monday */
     "  inicio INTEGER NOT NULL,"                          /* minutes from local midnight */
     "  fin INTEGER NOT NULL,"
     "  CHECK (inicio >= 0 AND fin > inicio AND fin <= 1440),"
     "  PRIMARY KEY (barbero_id, dia, inicio)"
     ");"
     "WITH d(dia, inicio, fin) AS (VALUES (1, 540, 840), (1, 960, 1200), (2, 540, 840), (2, 960, "
     "1200), (3, 540, 840), (3, 960, 1200), (4, 540, 840), (4, 960, 1200), (5, 540, 840), (5, 960, "
     "1200), (6, 540, 840)) "
     "INSERT INTO horarios (barbero_id, dia, inicio, fin) "
     "SELECT b.id, d.dia, d.inicio, d.fin FROM barberos b CROSS JOIN d;"
     "CREATE TABLE ausencias ("
     "  id TEXT PRIMARY KEY,"
     "  barbero_id TEXT REFERENCES barberos(id) ON DELETE CASCADE," /* NULL: the shop */
     "  desde TEXT NOT NULL,"
     "  hasta TEXT NOT NULL,"
     "  motivo TEXT,"
     "  created_at TEXT NOT NULL,"
     "  CHECK (hasta >= desde)"
     ");"
     "CREATE INDEX ausencias_hasta ON ausencias(hasta, desde);"),

    /* cancel, reschedule, reminders: what an
     * outbox message says (existing rows are confirmations) and when it
     * became due (NULL: at created_at); the indexes find a cita's
     * messages and keep one reminder per cita and start */
    ("ALTER TABLE mail_outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'confirmacion';"
     "ALTER TABLE mail_outbox ADD COLUMN due_at TEXT;"
     "CREATE INDEX mail_outbox_cita ON mail_outbox(cita_id, kind, status);"
     "CREATE UNIQUE INDEX mail_outbox_recordatorio ON mail_outbox(cita_id, fecha_inicio) "
     "WHERE kind = 'recordatorio';"),

    /* what meets a slot of a barber is read from both sides of its start
     * (store_int.h, MEETS_WINDOW): the appointments starting inside it and the
     * last one before it, from the index alone; the future ones past it are
     * no longer walked */
    ("DROP INDEX citas_barbero_fin;"
     "CREATE INDEX citas_barbero_inicio ON citas(barbero_id, fecha_inicio, fecha_fin, estado);"),

    /* the catalog's version (names.h): a fresh random value whenever a
     * barber or a service is added, changed or removed, in the same
     * transaction, whoever writes; a listing that reads it in its own
     * snapshot may take the names of that version from memory */
    ("CREATE TABLE catalogo_version ("
     "  id INTEGER PRIMARY KEY CHECK (id = 1),"
     "  version TEXT NOT NULL"
     ");"
     "INSERT INTO catalogo_version (id, version) VALUES (1, lower(hex(randomblob(16))));"
     "CREATE TRIGGER barberos_alta AFTER INSERT ON barberos BEGIN " CATALOGO_CAMBIA " END;"
     "CREATE TRIGGER barberos_cambio AFTER UPDATE ON barberos BEGIN " CATALOGO_CAMBIA " END;"
     "CREATE TRIGGER barberos_baja AFTER DELETE ON barberos BEGIN " CATALOGO_CAMBIA " END;"
     "CREATE TRIGGER servicios_alta AFTER INSERT ON servicios BEGIN " CATALOGO_CAMBIA " END;"
     "CREATE TRIGGER servicios_cambio AFTER UPDATE ON servicios BEGIN " CATALOGO_CAMBIA " END;"
     "CREATE TRIGGER servicios_baja AFTER DELETE ON servicios BEGIN " CATALOGO_CAMBIA " END;"),

    /* the uploader's photo quota (core/photos.c): each photo's size in
     * bytes, and one uploader's photos summed from the index alone. The
     * photos stored before count 0: their sizes are the objects', which a
     * migration cannot read (docs/decisions.md) */
    ("ALTER TABLE fotos_cita ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;"
     "CREATE INDEX fotos_cita_cliente ON fotos_cita(cliente_id, bytes);"),

    /* the owner's reports (store/informes.c): each appointment keeps the
     * price of its service when it was booked (NULL: booked before this
     * version; a report then takes the service's price of today and says
     * so), and a year of appointments is read from one covering index in
     * start order, without a seek into the table for each */
    ("ALTER TABLE citas ADD COLUMN precio REAL CHECK (precio >= 0);"
     "CREATE INDEX citas_informe ON citas(fecha_inicio, barbero_id, servicio_id, estado, "
     "fecha_fin, precio);"),
    /* the client's account: single-use links (password reset, e-mail
     * change) kept as the SHA-256 of their token; the account's own mail
     * outbox (no cita: a reset, a change of address), whose enlace holds the
     * link only until it is sent or dropped; consents by tipo ("fotos"),
     * with the time given and the time withdrawn; a deleted account's
     * user row stays (past citas keep their cliente_id) marked eliminado_en;
     * the messages sent to one address, for her data and her deletion */
    ("CREATE TABLE cuenta_tokens ("
     "  token_hash TEXT PRIMARY KEY,"
     "  user_id TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,"
     "  proposito TEXT NOT NULL," /* restablecer | email */
     "  email_nuevo TEXT,"
     "  created_at TEXT NOT NULL,"
     "  expires_at TEXT NOT NULL,"
     "  used_at TEXT"
     ");"
     "CREATE INDEX cuenta_tokens_user ON cuenta_tokens(user_id, proposito);"
     "CREATE TABLE cuenta_correo ("
     "  id TEXT PRIMARY KEY,"
     "  user_id TEXT,"       /* no reference: the row outlives nothing it names */
     "  kind TEXT NOT NULL," /* restablecer | email_confirmar | email_aviso */
     "  recipient TEXT NOT NULL,"
     "  nombre TEXT,"
     "  enlace TEXT,"
     "  created_at TEXT NOT NULL,"
     "  status TEXT NOT NULL DEFAULT 'pending',"
     "  attempts INTEGER NOT NULL DEFAULT 0,"
     "  next_attempt_at TEXT NOT NULL,"
     "  locked_until TEXT,"
     "  last_error TEXT,"
     "  done_at TEXT"
     ");"
     "CREATE INDEX cuenta_correo_due ON cuenta_correo(status, next_attempt_at);"
     "CREATE INDEX cuenta_correo_user ON cuenta_correo(user_id);"
     "CREATE TABLE consentimientos ("
     "  cliente_id TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,"
     "  tipo TEXT NOT NULL,"
     "  otorgado_en TEXT,"
     "  retirado_en TEXT,"
     "  PRIMARY KEY (cliente_id, tipo)"
     ");"
     "ALTER TABLE auth_users ADD COLUMN eliminado_en TEXT;"
     "CREATE INDEX mail_outbox_recipient ON mail_outbox(recipient);"),
    /* the appointments' personal links and the waiting list: the key the
     * links are signed with (core/gestion.c: made once, never a link
     * itself), the clients waiting for a day, which freed slot each was
     * told of (never twice), and the link a waiting-list notice carries */
    ("CREATE TABLE claves ("
     "  nombre TEXT PRIMARY KEY,"
     "  valor TEXT NOT NULL,"
     "  created_at TEXT NOT NULL"
     ");"
     "CREATE TABLE lista_espera ("
     "  id TEXT PRIMARY KEY,"
     "  cliente_id TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,"
     "  servicio_id TEXT NOT NULL REFERENCES servicios(id),"
     "  barbero_id TEXT REFERENCES barberos(id) ON DELETE CASCADE," /* NULL: any barber */
     "  fecha TEXT NOT NULL,"
     "  created_at TEXT NOT NULL"
     ");"
     "CREATE INDEX lista_espera_cliente ON lista_espera(cliente_id, fecha);"
     "CREATE INDEX lista_espera_fecha ON lista_espera(fecha, created_at);"
     "CREATE TABLE lista_espera_avisos ("
     "  entrada_id TEXT NOT NULL REFERENCES lista_espera(id) ON DELETE CASCADE,"
     "  barbero_id TEXT NOT NULL,"
     "  inicio TEXT NOT NULL,"
     "  created_at TEXT NOT NULL,"
     "  PRIMARY KEY (entrada_id, barbero_id, inicio)"
     ");"
     "ALTER TABLE mail_outbox ADD COLUMN enlace TEXT;"),
    /* WhatsApp beside e-mail: each outbox message's channel (existing rows
     * are e-mails), a reminder's offset in minutes (one reminder per cita,
     * start, channel and offset), the id the Graph API gave a message and
     * the last delivery status its webhook reported; the clients' consent
     * to WhatsApp messages, with the number it was given for (E.164
     * digits) and when it was given and withdrawn */
    ("ALTER TABLE mail_outbox ADD COLUMN canal TEXT NOT NULL DEFAULT 'email';"
     "ALTER TABLE mail_outbox ADD COLUMN antelacion_min INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE mail_outbox ADD COLUMN proveedor_id TEXT;"
     "ALTER TABLE mail_outbox ADD COLUMN entrega TEXT;"
     "ALTER TABLE mail_outbox ADD COLUMN entrega_at TEXT;"
     "DROP INDEX mail_outbox_recordatorio;"
     "CREATE UNIQUE INDEX mail_outbox_recordatorio_canal ON mail_outbox(cita_id, fecha_inicio, "
     "canal, antelacion_min) WHERE kind = 'recordatorio';"
     "CREATE INDEX mail_outbox_proveedor ON mail_outbox(proveedor_id) "
     "WHERE proveedor_id IS NOT NULL;"
     "CREATE TABLE whatsapp_consentimientos ("
     "  cliente_id TEXT PRIMARY KEY,"
     "  telefono TEXT NOT NULL,"
     "  otorgado_en TEXT NOT NULL,"
     "  retirado_en TEXT"
     ");"),
    /* what a barber is told (store/avisos.h): the address the booking,
     * change and cancel notices go to, the user account of rol barbero
     * that speaks for the barber, and the hash of the calendar feed's
     * token (NULL: no feed); one row per barber that has any of them */
    ("CREATE TABLE barbero_contactos ("
     "  barbero_id TEXT PRIMARY KEY REFERENCES barberos(id) ON DELETE CASCADE,"
     "  email TEXT,"
     "  usuario_id TEXT UNIQUE REFERENCES auth_users(id) ON DELETE SET NULL,"
     "  feed_hash TEXT UNIQUE,"
     "  updated_at TEXT NOT NULL"
     ");"),

    /* the front desk: a service's clean-up margin after each appointment
     * (minutes, 0..120), and when an appointment's attendance (completada,
     * no_presentado) was marked, so that it can be undone the same day.
     * Clients the desk creates have no password (password_hash '') and,
     * without an e-mail, the placeholder 'sin-email:<id>' (no address has
     * a ':'); docs/decisions.md */
    ("ALTER TABLE servicios ADD COLUMN margen_min INTEGER NOT NULL DEFAULT 0 "
     "CHECK (margen_min BETWEEN 0 AND 120);"
     "ALTER TABLE citas ADD COLUMN asistencia_en TEXT;"),

    /* the waiting list's work queue: a slot freed (a barber's stretch
     * inicio..fin, or the days desde..hasta for one barber or, NULL, any),
     * written in the transaction of the change that freed it and deleted
     * in the one that queues its notices; locked_until: a worker holds it.
     * Short-lived, never exported (docs/decisions.md) */
    ("CREATE TABLE espera_liberaciones ("
     "  id TEXT PRIMARY KEY,"
     "  barbero_id TEXT,"
     "  inicio TEXT,"
     "  fin TEXT,"
     "  desde TEXT,"
     "  hasta TEXT,"
     "  created_at TEXT NOT NULL,"
     "  locked_until TEXT"
     ");"),

    /* who recorded a client's WhatsApp consent (given or withdrawn) last:
     * the staff user at the front desk, NULL when she did it herself. No
     * foreign key: the id stays the record after the staff account is
     * deleted or anonymised (docs/decisions.md) */
    ("ALTER TABLE whatsapp_consentimientos ADD COLUMN registrado_por TEXT;"),

    /* a deleted account stays deleted: sign-up once took an address in the
     * domain a deleted sign-in is moved to ('<id>@eliminado.invalid'),
     * claiming that account or squatting the address its owner's deletion
     * needs. Deleted accounts lose any password, session and phone set
     * since; a live account in that domain moves to the no-address
     * placeholder (it never had an address) and is signed out */
    (SCHEMA_ELIMINADOS),

    /* each client's generation of the appointments' personal links: a
     * correction of her address or phone makes a new one, and the links
     * handed out before (signed with the one before) stop opening. No row:
     * generation 0, the links as first signed */
    ("CREATE TABLE enlaces_cliente ("
     "  cliente_id TEXT PRIMARY KEY,"
     "  gen INTEGER NOT NULL,"
     "  updated_at TEXT NOT NULL"
     ");"
     /* the WhatsApp messages sent about each client, for the daily cap:
      * written with the message's sent mark, so that a message counts
      * after what it was about is gone (a waiting-list entry she left).
      * Short-lived, never exported */
     "CREATE TABLE whatsapp_envios ("
     "  mensaje_id TEXT PRIMARY KEY,"
     "  cliente_id TEXT NOT NULL,"
     "  enviado_en TEXT NOT NULL"
     ");"
     "CREATE INDEX whatsapp_envios_cliente ON whatsapp_envios(cliente_id, enviado_en);"),

    /* nothing: PostgreSQL's version of this one makes barbers' and
     * services' names compare by code point, as SQLite's BINARY already
     * compares all text; kept so that both schemas move on together */
    (""),
};

const int schema_sqlite_count = (int)(sizeof schema_sqlite / sizeof schema_sqlite[0]);
