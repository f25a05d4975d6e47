// informes.js - the owner's reports (GET /api/admin/informes): a period and a
// grouping, a bar chart drawn here as SVG, the table of figures, and the same
// report as a CSV file for a spreadsheet.
import { get, qs } from './api.js';
import {
  h,
  today,
  addDays,
  euros,
  alertBox,
  showError,
  announce,
  dateLabel,
  dateShort,
} from './ui.js';

const GRUPOS = { dia: 'Día', mes: 'Mes', barbero: 'Barbero', servicio: 'Servicio' };
const MEDIDAS = {
  ingresos: ['Ingresos', (g) => g.ingresos, euros],
  citas: ['Citas', (g) => g.citas, String],
  ocupacion: ['Ocupación', (g) => g.ocupacion || 0, (v) => pct(v)],
};
const pct = (v) =>
  v === null || v === undefined
    ? '—'
    : new Intl.NumberFormat('es-ES', { style: 'percent', maximumFractionDigits: 1 }).format(v);
const SVG = 'http://www.w3.org/2000/svg';

// Dates in the app's words: "miércoles 29 de octubre" (with its year
// when it is not this one's), a month "octubre de 2026"; short under a
// bar: "mié 29 oct", "oct 2026".
const year = (s) => (s.slice(0, 4) === today().slice(0, 4) ? '' : ' de ' + s.slice(0, 4));
const fecha = (s) => dateLabel(s) + year(s);
const month = (s, short) =>
  new Intl.DateTimeFormat('es-ES', {
    month: short ? 'short' : 'long',
    year: 'numeric',
    timeZone: 'UTC',
  })
    .format(new Date(s + '-15T12:00:00Z'))
    .replace('.', '');
// a group's name: a day's or a month's in words, a barber's or a service's as it is
const groupName = (inf, g, short) =>
  inf.agrupar === 'dia'
    ? short
      ? dateShort(g.clave).join(' ')
      : fecha(g.clave)
    : inf.agrupar === 'mes'
      ? month(g.clave, short)
      : g.nombre;
let uid = 0;

function field(label, el) {
  el.id = 'inf' + ++uid;
  return [h('label', { for: el.id }, label), el];
}

function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...kids);
  return el;
}

// Bars of one measure per group; the table below holds the same figures.
function chart(inf, medida) {
  const [name, value, fmt] = MEDIDAS[medida];
  const W = 640,
    H = 220,
    top = 24,
    bottom = 28;
  const vals = inf.grupos.map(value);
  const max = Math.max(...vals, 0) || 1;
  const n = Math.max(inf.grupos.length, 1);
  const step = W / n;
  const title = `${name} por ${GRUPOS[inf.agrupar].toLowerCase()}, del ${fecha(inf.desde)} al ${fecha(inf.hasta)}`;
  const bars = inf.grupos.map((g, i) => {
    const bh = (vals[i] / max) * (H - top - bottom);
    const x = i * step + step * 0.1;
    return svg(
      'rect',
      {
        x: x.toFixed(1),
        y: (H - bottom - bh).toFixed(1),
        width: Math.max(step * 0.8, 0.5).toFixed(1),
        height: bh.toFixed(1),
        class: 'bar',
      },
      svg('title', {}, `${groupName(inf, g)}: ${fmt(vals[i])}`),
    );
  });
  // a name under each bar when they fit, else the first and the last
  const few = inf.grupos.length <= 12;
  const labels = inf.grupos
    .map((g, i) => [g, i])
    .filter(([, i]) => few || i === 0 || i === inf.grupos.length - 1)
    .map(([g, i]) => {
      const label = groupName(inf, g, true);
      const text = label.length > 14 ? label.slice(0, 13) + '…' : label;
      const anchor = few ? 'middle' : i === 0 ? 'start' : 'end';
      const x = few ? i * step + step / 2 : i === 0 ? 0 : W;
      return svg('text', { x: x.toFixed(1), y: H - 8, 'text-anchor': anchor }, text);
    });
  return svg(
    'svg',
    {
      viewBox: `0 0 ${W} ${H}`,
      role: 'img',
      'aria-label': `${title}. Máximo ${fmt(Math.max(...vals, 0))}. Los datos están en la tabla.`,
      class: 'chart',
    },
    svg('title', {}, title),
    svg('line', { x1: 0, x2: W, y1: H - bottom, y2: H - bottom, class: 'axis' }),
    svg('text', { x: 0, y: 14 }, `${name}: máximo ${fmt(Math.max(...vals, 0))}`),
    ...bars,
    ...labels,
  );
}

function table(inf) {
  const cols = [
    ['Citas', (g) => g.citas],
    ['Completadas', (g) => g.completadas],
    ['No presentados', (g) => g.no_presentados],
    ['Canceladas', (g) => g.canceladas],
    ['Ingresos', (g) => euros(g.ingresos) + (g.precio_estimado ? ' *' : '')],
    ['Previstos', (g) => euros(g.ingresos_previstos)],
    ['Min. reservados', (g) => g.minutos_reservados],
    ['Min. abiertos', (g) => g.minutos_abiertos],
    ['Ocupación', (g) => pct(g.ocupacion)],
  ];
  const row = (label, g, total) =>
    h(
      'tr',
      { class: total ? 'total' : null },
      h('th', { scope: 'row' }, label),
      cols.map(([, f]) => h('td', {}, String(f(g)))),
    );
  return h(
    'div',
    { class: 'table-scroll', role: 'region', 'aria-label': 'Tabla del informe', tabindex: '0' },
    h(
      'table',
      { class: 'report' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, GRUPOS[inf.agrupar]),
          cols.map(([c]) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        inf.grupos.map((g) => row(groupName(inf, g), g)),
      ),
      h('tfoot', {}, row('Total', inf.total, true)),
    ),
  );
}

// The reports tab of the administration: t its heading, box its container.
export async function informes(t, box) {
  const hoy = today();
  const desde = h('input', { type: 'date', required: true, value: addDays(hoy, -29) });
  const hasta = h('input', { type: 'date', required: true, value: hoy });
  const agrupar = h(
    'select',
    {},
    Object.entries(GRUPOS).map(([v, l]) => h('option', { value: v }, l)),
  );
  const medida = h(
    'select',
    {},
    Object.entries(MEDIDAS).map(([v, [l]]) => h('option', { value: v }, l)),
  );
  const err = alertBox();
  const out = h('div');
  const csv = h('a', { class: 'button', download: '' }, 'Descargar CSV');
  let last = null;
  const draw = () => {
    if (!last) return;
    const estimadas = last.total.citas_precio_estimado;
    out.replaceChildren(
      ...[
        chart(last, medida.value),
        table(last),
        estimadas
          ? h(
              'p',
              { class: 'hint' },
              `* ${estimadas} cita${estimadas === 1 ? '' : 's'} sin precio guardado: ` +
                'se cuentan al precio de hoy del servicio.',
            )
          : null,
        h(
          'p',
          { class: 'hint' },
          'Ingresos: citas completadas y confirmadas ya pasadas. Previstos: confirmadas por ' +
            'venir. Ocupación: minutos reservados sobre los abiertos según los horarios.',
        ),
        h('p', { class: 'actions' }, csv),
      ].filter(Boolean),
    );
  };
  // asked: the user pressed "Ver informe" (the first drawing says nothing)
  const show = async (asked) => {
    err.hidden = true;
    const q = qs({ desde: desde.value, hasta: hasta.value, agrupar: agrupar.value });
    try {
      last = await get('/api/admin/informes?' + q);
    } catch (ex) {
      showError(err, ex);
      last = null;
      out.replaceChildren();
      return;
    }
    csv.href = '/api/admin/informes?' + q + '&formato=csv';
    draw();
    if (asked) announce('Informe actualizado');
  };
  medida.addEventListener('change', draw);
  const form = h(
    'form',
    {
      class: 'form',
      onsubmit: (e) => {
        e.preventDefault();
        show(true);
      },
    },
    field('Desde', desde),
    field('Hasta (incluido)', hasta),
    field('Agrupar por', agrupar),
    field('Gráfico', medida),
    h('p', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Ver informe')),
  );
  box.replaceChildren(t, form, err, out);
  await show();
}
