// agenda.js - the barbers' agenda (barbero, admin): a day or a week of
// every barber's appointments, with the client's name, phone, notes and
// photos, and the client's earlier cuts one tap away.
import { get, qs, session, rol } from './api.js';
import { h, page, focus, today, addDays, dateLabel, dayStart, hm, ymd, whenLabel } from './ui.js';
import { photos } from './citas.js';
import { mensajes } from './mensajes.js';

export async function agenda() {
  const me = await session();
  if (!me || (rol(me) !== 'barbero' && rol(me) !== 'admin')) {
    page(
      'Agenda',
      h(
        'p',
        {},
        'La agenda es para barberos y administración. ',
        h('a', { href: '/entrar?volver=/agenda' }, 'Entrar'),
      ),
    );
    return;
  }
  const p = new URLSearchParams(location.search);
  let vista = p.get('vista') === 'semana' ? 'semana' : 'dia';
  let fecha = /^\d{4}-\d{2}-\d{2}$/.test(p.get('fecha') || '') ? p.get('fecha') : today();
  const h1 = page('Agenda');
  const body = h('div');
  const btn = (label, fn, pressed) =>
    h(
      'button',
      {
        type: 'button',
        onclick: fn,
        'aria-pressed': pressed === undefined ? null : String(pressed),
      },
      label,
    );
  const bar = h('div', { class: 'toolbar' });
  h1.after(bar, body);

  async function show() {
    history.replaceState(null, '', '/agenda?' + qs({ vista, fecha }));
    const n = vista === 'semana' ? 7 : 1;
    bar.replaceChildren(
      btn(
        'Día',
        () => {
          vista = 'dia';
          show();
        },
        vista === 'dia',
      ),
      btn(
        'Semana',
        () => {
          vista = 'semana';
          show();
        },
        vista === 'semana',
      ),
      btn('‹ Anterior', () => {
        fecha = addDays(fecha, -n);
        show();
      }),
      btn('Hoy', () => {
        fecha = today();
        show();
      }),
      btn('Siguiente ›', () => {
        fecha = addDays(fecha, n);
        show();
      }),
    );
    const title = h(
      'h2',
      { tabindex: '-1' },
      n === 1 ? dateLabel(fecha) : `Semana del ${dateLabel(fecha)}`,
    );
    body.replaceChildren(title, h('p', { class: 'hint' }, 'Cargando…'));
    const { citas } = await get(
      '/api/citas?' +
        qs({
          desde: dayStart(fecha).toISOString(),
          hasta: dayStart(addDays(fecha, n)).toISOString(),
        }),
    );
    const byDay = new Map();
    for (const c of citas) {
      const d = ymd(new Date(c.fecha_inicio));
      if (!byDay.has(d)) byDay.set(d, []);
      byDay.get(d).push(c);
    }
    const out = [title];
    if (!citas.length) out.push(h('p', {}, 'No hay citas.'));
    for (const [d, list] of byDay) {
      if (n > 1) out.push(h('h3', {}, dateLabel(d)));
      out.push(
        h(
          'ul',
          { class: 'cards' },
          list.map((c) => row(c, me)),
        ),
      );
    }
    body.replaceChildren(...out);
    return title;
  }
  const t = await show();
  void t;
}

function row(c, me) {
  const cl = c.perfil || {};
  const more = h('div');
  const li = h(
    'li',
    { class: 'card cita' + (c.estado === 'cancelada' ? ' cancelled' : '') },
    h(
      'p',
      { class: 'when' },
      h('strong', {}, `${hm(c.fecha_inicio)}–${hm(c.fecha_fin)}`),
      ` · ${c.barbero ? c.barbero.nombre : ''}`,
    ),
    h('h3', {}, cl.nombre || 'Cliente sin nombre'),
    cl.telefono
      ? h(
          'p',
          {},
          'Teléfono: ',
          h('a', { href: 'tel:' + cl.telefono.replace(/\s/g, '') }, cl.telefono),
        )
      : null,
    h(
      'p',
      {},
      `${c.servicio ? c.servicio.nombre : ''}${c.estado === 'cancelada' ? ' · Cancelada' : ''}`,
    ),
    c.notas ? h('p', { class: 'notes' }, 'Notas: ' + c.notas) : null,
    h(
      'p',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          onclick: () => {
            more.replaceChildren(photos(c, me, true));
          },
        },
        'Ver fotos',
      ),
      h('button', { type: 'button', onclick: () => earlier(c, me, more) }, 'Cortes anteriores'),
      rol(me) === 'admin'
        ? h('button', { type: 'button', onclick: () => mensajes(c, more) }, 'Mensajes')
        : null,
    ),
    more,
  );
  return li;
}

async function earlier(c, me, more) {
  const t = h(
    'h4',
    { tabindex: '-1' },
    `Cortes anteriores de ${(c.perfil && c.perfil.nombre) || 'este cliente'}`,
  );
  const list = h('div', {}, h('p', { class: 'hint' }, 'Cargando…'));
  more.replaceChildren(t, list);
  focus(t);
  const { citas } = await get(
    '/api/citas?' + qs({ cliente_id: c.cliente_id, hasta: c.fecha_inicio, limit: 1000 }),
  );
  const prev = citas
    .filter((x) => x.cliente_id === c.cliente_id && x.id !== c.id && x.estado !== 'cancelada')
    .reverse();
  list.replaceChildren(
    prev.length
      ? h(
          'ul',
          { class: 'cards' },
          prev
            .slice(0, 10)
            .map((x) =>
              h(
                'li',
                { class: 'card' },
                h(
                  'p',
                  {},
                  h('strong', {}, whenLabel(x.fecha_inicio)),
                  ` · ${x.servicio ? x.servicio.nombre : ''} con ${x.barbero ? x.barbero.nombre : ''}`,
                ),
                x.notas ? h('p', { class: 'notes' }, 'Notas: ' + x.notas) : null,
                photos(x, me, true),
              ),
            ),
        )
      : h('p', {}, 'Es su primera visita.'),
  );
}
