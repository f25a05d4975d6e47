// grid.js - the agenda's day as a grid (wide screens): a column per barber,
// a row per paso_min minutes. Booked time shows the appointment (a tap opens
// its card); free time within the barber's hours is a button that starts a
// booking with that barber at that hour; the rest (off hours, a closure, the
// past, an appointment's clean-up margin after it) stays grey. On today's
// grid a line marks the current time.
import { cfg } from './api.js';
import { h, hm, ymd, dayStart, estadoLabel, today } from './ui.js';

const toMin = (s) => +s.slice(0, 2) * 60 + +s.slice(3, 5);
export const hhmm = (m) =>
  `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

// An appointment's local start and end in minutes of its day (an end on
// the next day is 24:00).
function span(c, fecha) {
  const a = toMin(hm(c.fecha_inicio));
  const b = ymd(new Date(c.fecha_fin)) > fecha ? 1440 : toMin(hm(c.fecha_fin));
  return [a, Math.max(b, a + 1)];
}

const at = (el, ahora, lo, paso) => (el.style.top = `calc(var(--fila) * ${(ahora - lo) / paso})`);
// A grid's current time lines moved to now (within their row).
export const moveNow = (g) =>
  g
    .querySelectorAll('.ahora')
    .forEach((el) => at(el, toMin(hm(Date.now())), g.dataset.lo, g.dataset.paso));

// barberos: the columns, in order; tramos: Map barber id -> [[from, to]]
// of minutes that day (empty: not working); margenes: Map service id ->
// its clean-up minutes (margen_min), busy after each of its appointments
// as the server counts them (docs/decisions.md); onFree(barbero, inicio
// ISO); onCita(cita, button); badge(cita) -> an element or null.
export function dayGrid({ fecha, barberos, tramos, margenes, citas, onFree, onCita, badge }) {
  const paso = cfg().paso_min || 15;
  const live = citas.filter((c) => c.estado !== 'cancelada');
  let lo = Infinity;
  let hi = -Infinity;
  for (const t of tramos.values())
    for (const [a, b] of t) {
      lo = Math.min(lo, a);
      hi = Math.max(hi, b);
    }
  for (const c of live) {
    const [a, b] = span(c, fecha);
    lo = Math.min(lo, a);
    hi = Math.max(hi, b);
  }
  if (lo === Infinity) [lo, hi] = [540, 1200];
  lo = Math.floor(lo / paso) * paso;
  hi = Math.ceil(hi / paso) * paso;
  const n = (hi - lo) / paso;
  const body = () => {
    const el = h('div', { class: 'cuerpo' });
    el.style.gridTemplateRows = `repeat(${n}, var(--fila))`;
    return el;
  };
  const place = (el, a, b) => {
    const r = Math.floor((a - lo) / paso) + 1;
    el.style.gridRow = `${r} / ${Math.max(Math.ceil((b - lo) / paso) + 1, r + 1)}`;
    return el;
  };
  const now = Date.now();
  // the current time, in minutes of the day, when the grid shows it
  const ahora = fecha === today() ? toMin(hm(now)) : -1;
  const marks = ahora >= lo && ahora < hi;
  // the current time's line: laid over the column, out of its grid, so it
  // takes no place a block or button would then be pushed beside
  const line = () => {
    const el = h('div', { class: 'ahora', 'aria-hidden': 'true' });
    at(el, ahora, lo, paso);
    return el;
  };

  const axis = body();
  for (let m = Math.ceil(lo / 60) * 60; m < hi; m += 60)
    axis.append(place(h('span', {}, hhmm(m)), m, m + paso));
  if (marks) axis.append(line());
  const cols = barberos.map((b) => {
    const mine = live.filter((c) => c.barbero_id === b.id).map((c) => [span(c, fecha), c]);
    // busy until each appointment's end plus its service's margin
    const busy = mine.map(([[a, e], c]) => [
      a,
      e + ((margenes && margenes.get(c.servicio_id)) || 0),
    ]);
    const items = mine.map(([[a, e], c]) => {
      const btn = h(
        'button',
        { type: 'button', class: 'bloque ' + c.estado, onclick: () => onCita(c, btn) },
        h('strong', {}, `${hm(c.fecha_inicio)}–${hm(c.fecha_fin)}`),
        h('span', {}, (c.perfil && c.perfil.nombre) || 'Cliente'),
        h('span', {}, c.servicio ? c.servicio.nombre : ''),
        // attendance in words, not by colour alone
        c.estado !== 'confirmada' ? h('span', { class: 'estado' }, estadoLabel(c.estado)) : null,
        badge(c),
      );
      return [a, place(btn, a, e)];
    });
    for (const [a, e] of tramos.get(b.id) || []) {
      for (let m = Math.ceil((a - lo) / paso) * paso + lo; m + paso <= e; m += paso) {
        if (busy.some(([x, y]) => x < m + paso && y > m)) continue;
        const at = dayStart(fecha, m);
        if (at.getTime() < now) continue;
        items.push([
          m,
          place(
            h(
              'button',
              {
                type: 'button',
                class: 'libre',
                'aria-label': `Nueva cita con ${b.nombre} a las ${hhmm(m)}`,
                onclick: () => onFree(b, at.toISOString()),
              },
              hhmm(m),
            ),
            m,
            m + paso,
          ),
        ]);
      }
    }
    items.sort((x, y) => x[0] - y[0]);
    const id = 'col-' + b.id;
    const el = body();
    el.append(...items.map((x) => x[1]));
    if (marks) el.append(line());
    return h(
      'section',
      { class: 'col', 'aria-labelledby': id },
      h('h3', { class: 'cab', id }, b.nombre),
      el,
    );
  });
  return h(
    'div',
    { class: 'rejilla', 'data-lo': lo, 'data-paso': paso },
    h('div', { class: 'col horas', 'aria-hidden': 'true' }, h('div', { class: 'cab' }), axis),
    ...cols,
  );
}
