'use strict'
/*
 * bench/node/server.js - a comparison point written for the benchmark, NOT
 * part of Barberia.
 *
 * Issue 8 sets Barberia's PostgreSQL targets as ratios to "an independent
 * Node.js/Fastify/PostgreSQL implementation of the same specification"
 * (../shared/spec/barbershop-api.md). This is that implementation, for the
 * endpoints the benchmark drives, written the way an ordinary Node team
 * would write them: Fastify with response schemas, a pg Pool, plain
 * parameterised SQL, one process. bench/compare (BENCH_PG=1) runs it next to
 * Barberia on the same database and measures both with the same wrk
 * commands.
 *
 *   GET  /api/servicios   the catalog (public, as Barberia's)
 *   GET  /api/citas       a client's own appointments, everybody's for a
 *                         barbero or an admin; ?estado= filters; perfil,
 *                         barbero and servicio embedded; by fecha_inicio
 *   POST /api/citas       the specification's processing order, status codes
 *                         and messages; the overlap check and the two inserts
 *                         (citas, historial_cortes) in one transaction that
 *                         first takes a transaction-scoped advisory lock on
 *                         the barber. No calendar and no e-mail: the
 *                         benchmark runs Barberia with neither configured.
 *
 * It reads and writes the tables Barberia creates (src/store/schema_pg.c)
 * and authenticates the sessions Barberia issues: `Authorization: Bearer
 * <token>`, looked up in auth_sessions by the lowercase hex SHA-256 of the
 * token (src/identity/identity.c). Signing up and logging in stay Barberia's.
 * Timestamps come back from pg as Date objects and are written as
 * toISOString() gives them (YYYY-MM-DDTHH:MM:SS.sssZ), Barberia's form.
 *
 *   PORT=8081 DATABASE_URL=postgresql://... node bench/node/server.js
 *
 * Prints "listening on http://127.0.0.1:<port>" (PORT=0: a free port) and
 * stops on SIGTERM or SIGINT. PG_POOL_MAX sets the pool size (default 10,
 * pg's own default); LOG=1 turns Fastify's request log on (off by default).
 */
const crypto = require('node:crypto')
const Fastify = require('fastify')
const pg = require('pg')

// bigint columns (duracion_min) as JavaScript numbers instead of strings
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10))

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.PG_POOL_MAX) || 10
})

const app = Fastify({ logger: process.env.LOG === '1' })

const MSG = {
  unauth: 'No autenticado',
  missing: 'Faltan campos requeridos',
  badJson: 'JSON inválido',
  badDate: 'fecha_inicio inválida',
  noServicio: 'Servicio no encontrado',
  noBarbero: 'Barbero no encontrado',
  taken: 'El horario ya no está disponible',
  internal: 'Error interno del servidor'
}

class HttpError extends Error {
  constructor (status, message) {
    super(message)
    this.status = status
  }
}

// --- response schemas (fast-json-stringify writes the keys in this order) ---

const str = { type: 'string' }
const strOrNull = { type: ['string', 'null'] }
const ts = { type: 'string', format: 'date-time' }

const citaProps = {
  id: str,
  cliente_id: str,
  barbero_id: str,
  servicio_id: str,
  fecha_inicio: ts,
  fecha_fin: ts,
  estado: str,
  notas: strOrNull,
  google_event_id: strOrNull
}

const servicioProps = {
  nombre: str,
  duracion_min: { type: 'integer' },
  precio: { type: 'number' }
}

const citaListSchema = {
  type: 'object',
  properties: {
    citas: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          ...citaProps,
          perfil: {
            type: 'object',
            nullable: true,
            properties: { nombre: strOrNull, telefono: strOrNull }
          },
          barbero: {
            type: 'object',
            nullable: true,
            properties: { nombre: str, foto_url: strOrNull }
          },
          servicio: { type: 'object', nullable: true, properties: servicioProps }
        }
      }
    }
  }
}

const citaCreatedSchema = {
  type: 'object',
  properties: { cita: { type: 'object', properties: citaProps } }
}

const servicioListSchema = {
  type: 'object',
  properties: {
    servicios: {
      type: 'array',
      items: { type: 'object', properties: { id: str, ...servicioProps } }
    }
  }
}

// --- authentication ---

const SQL_SESSION = `
  SELECT u.id, u.email, p.id AS perfil_id, p.rol, p.nombre
  FROM auth_sessions s
  JOIN auth_users u ON u.id = s.user_id
  LEFT JOIN perfiles p ON p.id = u.id
  WHERE s.token_hash = $1 AND s.expires_at > now()`

// onRequest hook of the routes that need a caller: 401 before the body is read
async function authenticate (request, reply) {
  const header = request.headers.authorization
  const m = header && /^Bearer +(\S+) *$/i.exec(header)
  if (!m) return reply.code(401).send({ error: MSG.unauth })
  const tokenHash = crypto.createHash('sha256').update(m[1]).digest('hex')
  const { rows } = await pool.query(SQL_SESSION, [tokenHash])
  if (rows.length === 0) return reply.code(401).send({ error: MSG.unauth })
  request.user = rows[0]
}

// --- helpers ---

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// ISO 8601 as Barberia reads it: a date, optionally a time (seconds and a
// fraction optional) with an optional offset; no offset means UTC
const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/

function parseIso (s) {
  const m = ISO_RE.exec(s)
  if (!m) return null
  const [y, mo, d, hh, mi, ss] = m.slice(1, 7).map((v) => Number(v || 0))
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || hh > 23 || mi > 59 || ss > 59) return null
  const day = new Date(Date.UTC(y, mo - 1, d))
  day.setUTCFullYear(y) // Date.UTC maps years 0-99 to 1900-1999
  if (day.getUTCMonth() !== mo - 1) return null // 2031-02-30
  let t = day.getTime() + ((hh * 60 + mi) * 60 + ss) * 1000 + ms
  if (m[9]) {
    const oh = Number(m[10])
    const om = m[11] ? Number(m[11]) : 0
    if (oh > 23 || om > 59) return null
    t -= (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60000
  }
  return new Date(t)
}

const MAX_TS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
const MIN_TS = -62135596800000 // 0001-01-01T00:00:00.000Z

// A required id field as Barberia reads it: null or absent is missing, a
// string is itself, any other JSON value its JSON text (then not found)
function field (body, key) {
  const v = body[key]
  if (v === undefined || v === null) return ''
  return typeof v === 'string' ? v : JSON.stringify(v)
}

// --- GET /api/servicios ---

app.get('/api/servicios', { schema: { response: { 200: servicioListSchema } } }, async () => {
  const { rows } = await pool.query(
    'SELECT id, nombre, duracion_min, precio FROM servicios WHERE activo ORDER BY nombre, id'
  )
  return { servicios: rows }
})

// --- GET /api/citas ---

const SQL_CITAS = `
  SELECT c.id, c.cliente_id, c.barbero_id, c.servicio_id, c.fecha_inicio, c.fecha_fin,
         c.estado, c.notas, c.google_event_id,
         p.id AS p_id, p.nombre AS p_nombre, p.telefono AS p_telefono,
         b.nombre AS b_nombre, b.foto_url AS b_foto_url,
         s.nombre AS s_nombre, s.duracion_min AS s_duracion_min, s.precio AS s_precio
  FROM citas c
  LEFT JOIN perfiles p ON p.id = c.cliente_id
  LEFT JOIN barberos b ON b.id = c.barbero_id
  LEFT JOIN servicios s ON s.id = c.servicio_id`

app.get(
  '/api/citas',
  { onRequest: authenticate, schema: { response: { 200: citaListSchema } } },
  async (request) => {
    const { rol } = request.user
    const where = []
    const values = []
    if (rol !== 'admin' && rol !== 'barbero') {
      values.push(request.user.id)
      where.push(`c.cliente_id = $${values.length}`)
    }
    const estado = request.query.estado
    if (typeof estado === 'string' && estado !== '') {
      values.push(estado)
      where.push(`c.estado = $${values.length}`)
    }
    const sql =
      SQL_CITAS +
      (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
      ' ORDER BY c.fecha_inicio, c.id'
    const { rows } = await pool.query(sql, values)
    return {
      citas: rows.map((r) => ({
        id: r.id,
        cliente_id: r.cliente_id,
        barbero_id: r.barbero_id,
        servicio_id: r.servicio_id,
        fecha_inicio: r.fecha_inicio,
        fecha_fin: r.fecha_fin,
        estado: r.estado,
        notas: r.notas,
        google_event_id: r.google_event_id,
        perfil: r.p_id === null ? null : { nombre: r.p_nombre, telefono: r.p_telefono },
        barbero: r.b_nombre === null ? null : { nombre: r.b_nombre, foto_url: r.b_foto_url },
        servicio:
          r.s_nombre === null
            ? null
            : { nombre: r.s_nombre, duracion_min: r.s_duracion_min, precio: r.s_precio }
      }))
    }
  }
)

// --- POST /api/citas ---

const SQL_OVERLAP = `
  SELECT 1 FROM citas
  WHERE barbero_id = $1 AND fecha_fin > $2 AND fecha_inicio < $3 AND estado <> 'cancelada'
  LIMIT 1`

// The check and the inserts in one transaction; the barber's advisory lock
// makes two bookings of one barber take turns, so of two racing for a slot
// exactly one commits.
async function book (cita, fecha) {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [cita.barbero_id])
    const overlap = await client.query(SQL_OVERLAP, [
      cita.barbero_id,
      cita.fecha_inicio,
      cita.fecha_fin
    ])
    if (overlap.rowCount > 0) {
      await client.query('ROLLBACK')
      throw new HttpError(409, MSG.taken)
    }
    try {
      const now = new Date()
      await client.query(
        `INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, fecha_fin,
                            estado, notas, google_event_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          cita.id,
          cita.cliente_id,
          cita.barbero_id,
          cita.servicio_id,
          cita.fecha_inicio,
          cita.fecha_fin,
          cita.estado,
          cita.notas,
          cita.google_event_id,
          now
        ]
      )
      await client.query(
        `INSERT INTO historial_cortes (id, cliente_id, cita_id, barbero_id, servicio_id, fecha,
                                       created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [crypto.randomUUID(), cita.cliente_id, cita.id, cita.barbero_id, cita.servicio_id, fecha, now]
      )
      await client.query('COMMIT')
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {})
      // the schema's exclusion constraint (citas_sin_solape): a slot taken anyway
      if (err.code === '23P01') throw new HttpError(409, MSG.taken)
      throw new HttpError(500, err.message) // step 8: the store's message
    }
  } catch (err) {
    if (!(err instanceof HttpError)) await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.release()
  }
}

app.post(
  '/api/citas',
  { onRequest: authenticate, schema: { response: { 201: citaCreatedSchema } } },
  async (request, reply) => {
    const body = request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new HttpError(400, MSG.badJson)
    }
    // 2. required fields
    const barberoId = field(body, 'barbero_id')
    const servicioId = field(body, 'servicio_id')
    const fechaInicio = field(body, 'fecha_inicio')
    if (!barberoId || !servicioId || !fechaInicio) throw new HttpError(400, MSG.missing)
    const notas = body.notas
    if (notas !== undefined && notas !== null && typeof notas !== 'string') {
      throw new HttpError(400, 'Campo inválido: notas')
    }

    // 3. the service (one taken off the catalog is not offered)
    const srv = UUID_RE.test(servicioId)
      ? (await pool.query(
          'SELECT id, nombre, duracion_min FROM servicios WHERE id = $1 AND activo',
          [servicioId]
        )).rows[0]
      : undefined
    if (!srv) throw new HttpError(404, MSG.noServicio)

    // 4. fecha_fin
    const inicio = parseIso(fechaInicio)
    if (!inicio || inicio.getTime() < MIN_TS) throw new HttpError(400, MSG.badDate)
    const fin = new Date(inicio.getTime() + srv.duracion_min * 60000)
    if (fin.getTime() > MAX_TS) throw new HttpError(400, MSG.badDate)

    // 5. the barber (the caller's profile came with the session)
    const bar = UUID_RE.test(barberoId)
      ? (await pool.query('SELECT id, nombre FROM barberos WHERE id = $1 AND activo', [barberoId]))
          .rows[0]
      : undefined
    if (!bar) throw new HttpError(404, MSG.noBarbero)

    // 6.-9. the overlap check, the appointment and its history record
    // (7. and 10., the calendar event and the e-mail, are not configured)
    const cita = {
      id: crypto.randomUUID(),
      cliente_id: request.user.id,
      barbero_id: bar.id,
      servicio_id: srv.id,
      fecha_inicio: inicio.toISOString(),
      fecha_fin: fin.toISOString(),
      estado: 'confirmada',
      notas: notas || null,
      google_event_id: null
    }
    await book(cita, cita.fecha_inicio.slice(0, 10))

    // 11.
    return reply.code(201).send({ cita })
  }
)

// --- errors: always { "error": <string> } ---

app.setNotFoundHandler((request, reply) => {
  reply.code(404).send({ error: 'No encontrado' })
})

app.setErrorHandler((err, request, reply) => {
  if (err instanceof HttpError) return reply.code(err.status).send({ error: err.message })
  if (err.code && err.code.startsWith('FST_ERR_CTP_') && err.statusCode === 400) {
    return reply.code(400).send({ error: MSG.badJson }) // a body that is not JSON
  }
  if (err.statusCode && err.statusCode < 500) {
    return reply.code(err.statusCode).send({ error: err.message })
  }
  request.log.error(err)
  if (process.env.LOG !== '1') console.error(err)
  return reply.code(500).send({ error: MSG.internal })
})

// --- start and stop ---

async function main () {
  const port = Number(process.env.PORT || 8081)
  const address = await app.listen({ host: '127.0.0.1', port })
  console.log(`listening on ${address}`)
  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    setTimeout(() => process.exit(0), 5000).unref()
    await app.close()
    await pool.end()
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
