// agenda.js - the barbers' agenda (barbero, admin), the shop's front desk:
// a day or a week of the barbers' appointments with the client's name,
// phone, notes, no-shows and photos, the client's earlier cuts one tap away,
// attendance on past appointments, and "Nueva cita". On a wide screen the
// day is a grid with a column per barber (grid.js) where a tap on free time
// starts a booking there; on a phone it is a list. Read again every minute
// (a shop's screen stays open all day): refresh below.
import { get, post, qs, session, rol, loadCatalog, cfg } from './api.js';
import {
  h,
  page,
  focus,
  announce,
  alertBox,
  showError,
  today,
  addDays,
  dateLabel,
  dayStart,
  hm,
  ymd,
  whenLabel,
  estadoLabel,
  telLink,
} from './ui.js';
import { photos, reschedule, askCancel } from './citas.js';
import { mensajes } from './mensajes.js';
import { dayGrid, moveNow } from './grid.js';
import { noShows, cuts, nueva, fixClient } from './mostrador.js';

// The barber a barber's account is linked to (GET /api/auth/me).
const linked = (me) => me.barbero_id || null;

export async function agenda() {
  const me = await session();
  if (!me || (rol(me) !== 'barbero' && rol(me) !== 'admin')) {
    page(
      'Agenda',
      h(
        'p',
        {},
        'La agenda es para barberos y administración. ',
        h('a', { class: 'tap', href: '/entrar?volver=/agenda' }, 'Entrar'),
      ),
    );
    return;
  }
  const { barberos } = await loadCatalog();
  const p = new URLSearchParams(location.search);
  let vista = p.get('vista') === 'semana' ? 'semana' : 'dia';
  let fecha = /^\d{4}-\d{2}-\d{2}$/.test(p.get('fecha') || '') ? p.get('fecha') : today();
  // whose appointments: a barber's id, or '' for every barber
  let ver = p.has('barbero') ? p.get('barbero') : linked(me) || '';
  if (ver && !barberos.some((b) => b.id === ver)) ver = '';
  const h1 = page('Agenda');
  const body = h('div');
  const btn = (label, fn, pressed, cls) =>
    h(
      'button',
      {
        type: 'button',
        class: cls,
        onclick: fn,
        'aria-pressed': pressed === undefined ? null : String(pressed),
      },
      label,
    );
  const bar = h('div', { class: 'toolbar' });
  const sel = h('select', { id: 'ver-barbero' });
  sel.append(
    h('option', { value: '' }, 'Todos los barberos'),
    ...barberos.map((b) => h('option', { value: b.id, selected: b.id === ver }, b.nombre)),
  );
  sel.addEventListener('change', () => {
    ver = sel.value;
    show();
  });
  const filter = h(
    'p',
    { class: 'filtro' },
    h('label', { for: 'ver-barbero' }, 'Ver'),
    sel,
    btn('Nueva cita', () => book({}), undefined, 'primary'),
  );
  h1.after(bar, filter, body);
  const horarios = new Map(); // barber id -> Promise of the week

  async function book(pre) {
    filter.hidden = true;
    bar.hidden = true;
    const back = () => {
      filter.hidden = false;
      bar.hidden = false;
    };
    await nueva(body, {
      barbero: pre.barbero || ver || null,
      inicio: pre.inicio,
      onDone: (cita) => {
        back();
        vista = 'dia';
        fecha = ymd(new Date(cita.fecha_inicio));
        show().then(focus);
      },
      onCancel: () => {
        back();
        show().then(focus);
      },
    });
  }

  // The day's working minutes of each barber: [[from, to]], none on a
  // closure or day off (GET /api/admin/ausencias, which staff read).
  async function tramos(list) {
    const dia = new Date(fecha + 'T12:00:00Z').getUTCDay() || 7;
    const [weeks, cierres] = await Promise.all([
      Promise.all(
        list.map((b) => {
          if (!horarios.has(b.id))
            horarios.set(
              b.id,
              get(`/api/barberos/${encodeURIComponent(b.id)}/horario`)
                .then((x) => x.horario)
                .catch((e) => {
                  horarios.delete(b.id); // asked again next time
                  throw e;
                }),
            );
          return horarios.get(b.id);
        }),
      ),
      get('/api/admin/ausencias').then((x) => x.ausencias),
    ]);
    const toMin = (s) => +s.slice(0, 2) * 60 + +s.slice(3, 5);
    return new Map(
      list.map((b, i) => [
        b.id,
        cierres.some(
          (a) => (!a.barbero_id || a.barbero_id === b.id) && a.desde <= fecha && a.hasta >= fecha,
        )
          ? []
          : weeks[i].filter((x) => x.dia === dia).map((x) => [toMin(x.inicio), toMin(x.fin)]),
      ]),
    );
  }

  // Each service's clean-up margin (GET /api/admin/servicios, which staff
  // read: every service, a deactivated one's appointments too): service id
  // -> minutes after each of its appointments that the grid offers no free
  // time, as the desk's booking (POST /api/agenda/citas) refuses them.
  const margenes = () =>
    get('/api/admin/servicios').then(
      (x) => new Map(x.servicios.map((s) => [s.id, s.margen_min || 0])),
    );

  // keep.open: an appointment whose card stays open (its attendance just
  // marked), with the focus on its attendance action, or on keep.at (a
  // selector in the card)
  // each view drawn has a number: an answer that comes back after a newer
  // view was asked for (quick clicks through the days) is dropped
  let drawn = 0;
  let done = 0; // the last view drawn in full (none is being asked for)
  let atNow = false; // today's grid was scrolled to the current time once
  const heading = (n) =>
    h('h2', { tabindex: '-1' }, n === 1 ? dateLabel(fecha) : `Semana del ${dateLabel(fecha)}`);
  async function show(keep) {
    const gen = ++drawn;
    history.replaceState(
      null,
      '',
      '/agenda?' + qs({ vista, fecha, barbero: ver === (linked(me) || '') ? null : ver }),
    );
    const n = vista === 'semana' ? 7 : 1;
    // the bar is drawn anew: a button of it that had the focus (pressed
    // with the keyboard or a screen reader) keeps it, never left to <body>
    const had = bar.contains(document.activeElement) ? document.activeElement.textContent : null;
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
    if (had) [...bar.children].find((b) => b.textContent === had)?.focus();
    const title = heading(n);
    body.replaceChildren(title, h('p', { class: 'hint' }, 'Cargando…'));
    try {
      return await fill(title, n, keep, () => gen !== drawn);
    } catch (e) {
      if (gen !== drawn) return title;
      // a failed request (the session ended, the server away): said in
      // the day's place, with the focus on it
      const err = alertBox();
      showError(err, e);
      body.replaceChildren(
        title,
        err,
        e.expired
          ? null
          : h(
              'p',
              {},
              btn('Reintentar', () => show(keep).then(focus)),
            ),
      );
      focus(err);
      return err;
    } finally {
      if (gen === drawn) done = gen;
    }
  }

  // Read again every minute and when the page is shown again, quietly:
  // drawn anew only when something changed, keeping the open card, the
  // scroll and the focus; never over a form, a question or what a card
  // opened (photos, earlier cuts), a view being asked for, or a tap.
  const busy = () =>
    filter.hidden ||
    !!body.querySelector('form, fieldset, input, .confirm, .picker, li .alert:not([hidden])') ||
    [...body.querySelectorAll('.mas')].some((m) => m.firstChild);
  let pressed = 0;
  async function refresh() {
    if (done !== drawn || busy()) return;
    const gen = ++drawn;
    const n = vista === 'semana' ? 7 : 1;
    const stale = () => gen !== drawn || busy() || Date.now() - pressed < 1500;
    await fill(heading(n), n, null, stale, true).catch(() => {}); // said at the next action
    if (gen === drawn) done = gen;
  }
  const off = new AbortController(); // on another page: no more
  const wake = () =>
    body.isConnected ? document.hidden || refresh() : (clearInterval(every), off.abort());
  const every = setInterval(wake, 60000);
  const o = { signal: off.signal };
  document.addEventListener('visibilitychange', wake, o);
  window.addEventListener('focus', wake, o);
  document.addEventListener('pointerdown', () => (pressed = Date.now()), { ...o, capture: true });

  let seen = ''; // what the day last drawn showed (refresh)
  async function fill(title, n, keep, stale, quiet) {
    const cols = barberos.filter((b) => !ver || b.id === ver);
    const got = await Promise.allSettled([
      get(
        '/api/citas?' +
          qs({
            desde: dayStart(fecha).toISOString(),
            hasta: dayStart(addDays(fecha, n)).toISOString(),
          }),
      ),
      n === 1 ? tramos(cols) : null,
      n === 1 ? margenes() : null,
    ]);
    // a lost session first: the closures and the margins (admin paths)
    // then answer 403
    const bad = got.filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (bad.length) throw bad.find((e) => e.expired) || bad[0];
    if (stale()) return title;
    const [{ citas: all }, tr, mg] = got.map((r) => r.value);
    const citas = all.filter((c) => !ver || c.barbero_id === ver);
    await withClients(citas);
    if (stale()) return title;
    // what is shown: the appointments, the hours, which rows are past
    const was = seen;
    seen = JSON.stringify([
      citas,
      tr && [...tr],
      mg && [...mg],
      Math.floor(Date.now() / 6e4 / (cfg().paso_min || 15)),
    ]);
    if (quiet && seen === was) {
      const old = body.querySelector('.rejilla');
      if (old) moveNow(old);
      return title;
    }
    const place = quiet && where(body, title);
    if (quiet) keep = { open: body.querySelector('.detalle li.cita')?.dataset.cita };
    const byDay = new Map();
    for (const c of citas) {
      const d = ymd(new Date(c.fecha_inicio));
      if (!byDay.has(d)) byDay.set(d, []);
      byDay.get(d).push(c);
    }
    const list = [];
    if (!citas.length) list.push(h('p', {}, 'No hay citas.'));
    for (const [d, cs] of byDay) {
      if (n > 1) list.push(h('h3', {}, dateLabel(d)));
      list.push(
        h(
          'ul',
          { class: 'cards' },
          cs.map((c) => row(c, me, show)),
        ),
      );
    }
    // the kept card, wherever it is shown (grid detail or list)
    const refocus = () => {
      const li = [...body.querySelectorAll('li.cita')].find(
        (e) => e.dataset.cita === keep.open && e.offsetParent !== null,
      );
      if (li)
        focus(
          (keep.at && li.querySelector(keep.at)) ||
            li.querySelector('.asistencia button') ||
            li.querySelector('h3'),
        );
    };
    if (n > 1) {
      body.replaceChildren(title, ...list);
      if (place) place();
      else if (keep && keep.open) refocus();
      return title;
    }
    const detail = h('div', { class: 'detalle' });
    const openCard = (c) => {
      const close = h(
        'button',
        { type: 'button', class: 'link', onclick: () => detail.replaceChildren() },
        'Cerrar',
      );
      const card = row(c, me, show);
      detail.replaceChildren(h('ul', { class: 'cards' }, card), close);
      return card;
    };
    const grid = dayGrid({
      fecha,
      barberos: cols,
      tramos: tr,
      margenes: mg,
      citas,
      badge: (c) => {
        const t = noShows(c.perfil);
        return t ? h('span', { class: 'aviso' }, t) : null;
      },
      onFree: (b, inicio) => book({ barbero: b.id, inicio }),
      onCita: (c) => focus(openCard(c).querySelector('h3')),
    });
    body.replaceChildren(
      title,
      h('div', { class: 'solo-ancho' }, h('div', { class: 'rejilla-marco' }, grid), detail),
      h('div', { class: 'solo-estrecho' }, ...list),
    );
    if (keep && keep.open) {
      const c = citas.find((x) => x.id === keep.open);
      if (c) openCard(c);
      if (!place) refocus();
    }
    if (place) {
      place();
      return title;
    }
    // the first time today's grid is shown, the current time is in view
    // (and the whole grid's frame, with the barbers' names)
    const line = grid.querySelector('.ahora');
    if (!atNow && line && line.offsetParent !== null) {
      atNow = true;
      line.scrollIntoView({ block: 'center' });
      grid.parentElement.scrollIntoView({ block: 'nearest' });
    }
    return title;
  }
  await show();
}

// Where the reader is in box: the scroll (the window's, the grid's) and
// the focus, put back by the function returned once box is drawn anew (the
// focus on the control of the same tag and words, of the same appointment;
// gone, on title).
function where(box, title) {
  const grid = () => box.querySelector('.rejilla-marco') || {};
  const at = [window.scrollX, window.scrollY, grid().scrollTop, grid().scrollLeft];
  const key = (e) =>
    [
      e.tagName,
      e.getAttribute('aria-label') || e.textContent,
      e.closest('[data-cita]')?.dataset.cita,
    ].join('|');
  const a = document.activeElement;
  const had = a !== box && box.contains(a) && key(a);
  return () => {
    window.scrollTo(at[0], at[1]);
    [grid().scrollTop, grid().scrollLeft] = at.slice(2);
    if (!had) return;
    const el = [...box.querySelectorAll('*')].find((e) => e.offsetParent && key(e) === had);
    (el || title).focus({ preventScroll: true });
  };
}

// The clients shown, as the desk's search gives them (GET /api/clientes?id=),
// asked once per client however many of her appointments are shown: her
// no-shows (perfil.no_presentado) and her record (c.ficha: whether she
// uses her account, her e-mail), for "Corregir datos".
async function withClients(citas) {
  const ids = [...new Set(citas.filter((c) => c.perfil).map((c) => c.cliente_id))];
  const n = new Map();
  await Promise.all(
    ids.map(async (id) => {
      const { clientes } = await get('/api/clientes?' + qs({ id }));
      if (clientes.length) n.set(id, clientes[0]);
    }),
  );
  for (const c of citas)
    if (c.perfil) {
      c.ficha = n.get(c.cliente_id) || null;
      c.perfil.no_presentado = c.ficha ? c.ficha.no_presentado || 0 : 0;
      c.perfil.completadas = c.ficha ? c.ficha.completadas || 0 : 0;
    }
}

// The marks made on this page (appointment id -> the shop's date the mark
// was made): a mark can be taken back on the day it was made (the API's
// rule), whatever the appointment's own day, and the listing does not say
// when a mark was made; so a card of an earlier day marked this morning
// (yesterday's late appointments, one tapped wrong) keeps its "Deshacer".
const markedOn = new Map();

// Attendance of an appointment that has started: came (completada) or
// not (no_presentado), undone the same day (back to confirmada).
function attendance(c, redraw) {
  const err = alertBox();
  const set = async (estado, msg) => {
    try {
      await post(`/api/citas/${encodeURIComponent(c.id)}/asistencia`, { estado });
      if (estado === 'confirmada') markedOn.delete(c.id);
      else markedOn.set(c.id, today());
      announce(msg);
      // drawn again with its card open, its new state and the next action
      await redraw({ open: c.id });
    } catch (ex) {
      showError(err, ex);
    }
  };
  const who = (c.perfil && c.perfil.nombre) || 'el cliente';
  if (c.estado === 'confirmada' && new Date(c.fecha_inicio) <= Date.now())
    return h(
      'div',
      { class: 'asistencia' },
      h(
        'p',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            'aria-label': `${who} vino`,
            onclick: () => set('completada', `Marcada: ${who} vino`),
          },
          'Vino',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'aria-label': `${who} no vino`,
            onclick: () => set('no_presentado', `Marcada: ${who} no vino`),
          },
          'No vino',
        ),
      ),
      err,
    );
  if (
    (c.estado === 'completada' || c.estado === 'no_presentado') &&
    (ymd(new Date(c.fecha_inicio)) === today() || markedOn.get(c.id) === today())
  )
    return h(
      'div',
      { class: 'asistencia' },
      h(
        'p',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            onclick: () => set('confirmada', 'Asistencia deshecha'),
          },
          'Deshacer',
        ),
      ),
      err,
    );
  return null;
}

// A client calls to move or cancel: staff may at any time (docs/api.md),
// here for an appointment that has not started yet; the client hears of it
// as from her own change (e-mail, WhatsApp).
function change(c, more, redraw) {
  if (c.estado !== 'confirmada' || new Date(c.fecha_inicio) <= Date.now()) return null;
  const err = alertBox();
  const who = (c.perfil && c.perfil.nombre) || 'el cliente';
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          'aria-label': `Cambiar la hora de ${who}`,
          onclick: () => reschedule(c, more, () => redraw({ open: c.id })),
        },
        'Cambiar hora',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'aria-label': `Cancelar la cita de ${who}`,
          onclick: () =>
            askCancel(more, err, async () => {
              await post(`/api/citas/${encodeURIComponent(c.id)}/cancelar`);
              announce(`Cita de ${who} cancelada`);
              await redraw({ open: c.id });
            }),
        },
        'Cancelar cita',
      ),
    ),
    err,
  );
}

function row(c, me, redraw) {
  const cl = c.perfil || {};
  const more = h('div', { class: 'mas' });
  const warn = noShows(cl);
  const li = h(
    'li',
    { class: 'card cita' + (c.estado === 'cancelada' ? ' cancelled' : ''), 'data-cita': c.id },
    h(
      'p',
      { class: 'when' },
      h('strong', {}, `${hm(c.fecha_inicio)}–${hm(c.fecha_fin)}`),
      ` · ${c.barbero ? c.barbero.nombre : ''}`,
    ),
    h('h3', { tabindex: '-1' }, cl.nombre || 'Cliente sin nombre'),
    warn ? h('p', { class: 'aviso' }, warn) : null,
    cuts(cl) ? h('p', { class: 'hint' }, cuts(cl)) : null,
    cl.telefono ? h('p', {}, 'Teléfono: ', telLink(cl.telefono)) : null,
    // a desk client's details corrected here: the day drawn again with
    // them, this card open and its heading (her name) focused
    c.ficha ? fixClient(c.ficha, () => redraw({ open: c.id, at: 'h3' })) : null,
    h(
      'p',
      {},
      `${c.servicio ? c.servicio.nombre : ''}${c.estado !== 'confirmada' ? ' · ' + estadoLabel(c.estado) : ''}`,
    ),
    c.notas ? h('p', { class: 'notes' }, 'Notas: ' + c.notas) : null,
    attendance(c, redraw),
    change(c, more, redraw),
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
  let citas;
  try {
    ({ citas } = await get(
      '/api/citas?' + qs({ cliente_id: c.cliente_id, hasta: c.fecha_inicio, limit: 1000 }),
    ));
  } catch (e) {
    const err = alertBox();
    showError(err, e);
    list.replaceChildren(err);
    return;
  }
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
