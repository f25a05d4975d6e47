// admin.js - administration: users (GET/PATCH /api/admin/usuarios),
// barbers, services, working hours and closures (the catalog API).
import { get, api, post, session, rol, loadModule } from './api.js';
import { h, page, focus, announce, alertBox, showError, failure, euros, fieldError } from './ui.js';
import { cierres as closures, feedLink, barberFields } from './avisos.js';

const DIAS = ['lunes', 'martes', 'miércoles', 'jueves', 'viernes', 'sábado', 'domingo'];
let uid = 0;
// a labelled input: [label, input]
function inp(label, attrs) {
  const id = 'f' + ++uid;
  const el = h(attrs.tag || 'input', Object.assign({ id, name: attrs.name }, attrs, { tag: null }));
  return [h('label', { for: id }, label), el];
}
function check(label, checked) {
  const id = 'f' + ++uid;
  const el = h('input', { id, type: 'checkbox', checked: !!checked });
  return [h('label', { for: id, class: 'check' }, el, ' ' + label), el];
}
// a form that calls send(), shows its error, and announces done; the tab
// is drawn again and the focus goes to the control marked with the same key
// (data-focus: this form's button drawn again, or what opened the form)
function form(fields, label, send, done, key) {
  const err = alertBox();
  const b = h('button', { type: 'submit', class: 'primary', 'data-focus': key }, label);
  return h(
    'form',
    {
      class: 'form',
      onsubmit: async (e) => {
        e.preventDefault();
        b.disabled = true;
        err.hidden = true;
        try {
          await send();
          announce(done);
          const t = await render();
          focus((key && box.querySelector(`[data-focus="${CSS.escape(key)}"]`)) || t);
        } catch (ex) {
          // a field's own refusal is said under the field (ex.field)
          if (!ex.field) showError(err, ex);
          b.disabled = false;
        }
      },
    },
    ...fields,
    err,
    h('p', { class: 'actions' }, b),
  );
}

const tabs = {
  usuarios: ['Usuarios', usuarios],
  barberos: ['Barberos', barberos],
  servicios: ['Servicios', servicios],
  horarios: ['Horarios', horarios],
  cierres: ['Cierres y días libres', cierres],
  informes: ['Informes', (t) => loadModule('./informes.js').then((m) => m.informes(t, box))],
};
let tab = 'usuarios';
let box = null;

export async function admin() {
  const me = await session();
  if (!me || rol(me) !== 'admin') {
    page(
      'Administración',
      h(
        'p',
        {},
        'Solo para administración. ',
        h('a', { class: 'tap', href: '/entrar?volver=/admin' }, 'Entrar'),
      ),
    );
    return;
  }
  const h1 = page('Administración');
  const bar = h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Secciones' });
  box = h('div');
  h1.after(bar, box);
  const drawTabs = () =>
    bar.replaceChildren(
      ...Object.entries(tabs).map(([k, [label]]) =>
        h(
          'button',
          {
            type: 'button',
            'aria-pressed': String(k === tab),
            onclick: async () => {
              tab = k;
              drawTabs();
              focus(await render());
            },
          },
          label,
        ),
      ),
    );
  drawTabs();
  await render();
}

async function render() {
  const [label, fn] = tabs[tab];
  const t = h('h2', { tabindex: '-1' }, label);
  box.replaceChildren(t, h('p', { class: 'hint' }, 'Cargando…'));
  try {
    await fn(t);
  } catch (ex) {
    // a tab not read, or its module (informes.js) not loaded: said, with
    // "Reintentar" (or "Recargar la página")
    box.replaceChildren(t, ...failure(ex, () => render().then(focus)));
  }
  return t;
}

let userQuery = ''; // the search stays while the tab is drawn again (after a save)
// an account its owner deleted keeps its profile for the shop's past
// (docs/api.md, DELETE /api/auth/me): nobody to edit, so not listed
const deleted = (u) => (u.email || '').endsWith('@eliminado.invalid');

async function usuarios(t) {
  const { usuarios: all } = await get('/api/admin/usuarios');
  const list = all.filter((u) => !deleted(u));
  const gone = all.length - list.length;
  const note = gone
    ? h(
        'p',
        { class: 'hint' },
        gone === 1
          ? 'Una cuenta eliminada por su titular no se muestra.'
          : `${gone} cuentas eliminadas por sus titulares no se muestran.`,
      )
    : null;
  const [sl, search] = inp('Buscar por nombre, correo o teléfono', {
    type: 'search',
    autocomplete: 'off',
    value: userQuery,
  });
  const ul = h('ul', { class: 'cards' });
  const draw = () => {
    userQuery = search.value;
    const q = search.value.trim().toLowerCase();
    // a phone matches however its digits are spaced ("611 22" finds 611223344)
    const digits = (v) => (v || '').replace(/\D/g, '');
    const qd = digits(q);
    const shown = list.filter(
      (u) =>
        !q ||
        [u.nombre, u.email, u.telefono].some((v) => v && v.toLowerCase().includes(q)) ||
        (qd.length >= 3 && digits(u.telefono).includes(qd)),
    );
    ul.replaceChildren(...shown.slice(0, 50).map(userCard));
  };
  search.addEventListener('input', draw);
  draw();
  box.replaceChildren(...[t, note, sl, search, ul].filter(Boolean));
}

function userCard(u) {
  const more = h('div');
  const [ln, nombre] = inp('Nombre', { value: u.nombre || '', autocomplete: 'off' });
  const [lt, tel] = inp('Teléfono', { type: 'tel', value: u.telefono || '', autocomplete: 'off' });
  const [lr, sel] = inp('Rol', { tag: 'select' });
  for (const r of ['cliente', 'barbero', 'admin'])
    sel.append(h('option', { value: r, selected: u.rol === r }, r));
  const [lp, pw] = inp('Nueva contraseña (vacío: no cambia)', {
    type: 'password',
    autocomplete: 'new-password',
    minlength: '6',
  });
  const edit = () => {
    more.replaceChildren(
      form(
        [ln, nombre, lt, tel, lr, sel, lp, pw],
        'Guardar cambios',
        () =>
          api('PATCH', '/api/admin/usuarios', {
            userId: u.id,
            nombre: nombre.value.trim() || undefined,
            telefono: tel.value.trim(),
            rol: sel.value,
            password: pw.value || undefined,
          }),
        'Usuario actualizado',
        'u:' + u.id,
      ),
    );
    focus(nombre);
  };
  return h(
    'li',
    { class: 'card' },
    h('h3', {}, u.nombre || '(sin nombre)'),
    h(
      'p',
      {},
      [
        u.email,
        u.telefono,
        u.rol,
        `${u.total_citas} citas`,
        u.completadas ? `${u.completadas} cortes` : '',
        u.no_presentado ? `${u.no_presentado} sin venir` : '',
      ]
        .filter(Boolean)
        .join(' · '),
    ),
    h(
      'p',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          'aria-label': `Editar a ${u.nombre || u.email}`,
          'data-focus': 'u:' + u.id,
          onclick: edit,
        },
        'Editar',
      ),
    ),
    more,
  );
}

async function barberos(t) {
  const [{ barberos: list }, { usuarios }] = await Promise.all([
    get('/api/admin/barberos'),
    get('/api/admin/usuarios'),
  ]);
  const [ln, nombre] = inp('Nombre', { required: true, autocomplete: 'off' });
  const [lf, foto] = inp('Foto (URL, opcional)', { type: 'url', autocomplete: 'off' });
  box.replaceChildren(
    t,
    h(
      'ul',
      { class: 'cards' },
      list.map((b) => {
        const [l1, n1] = inp('Nombre', { value: b.nombre, required: true, autocomplete: 'off' });
        const [l2, f1] = inp('Foto (URL)', {
          type: 'url',
          value: b.foto_url || '',
          autocomplete: 'off',
        });
        const [l3, a1] = check('Activo (se puede reservar)', b.activo);
        const av = barberFields(b, usuarios);
        return h(
          'li',
          { class: 'card' + (b.activo ? '' : ' cancelled') },
          h('h3', {}, b.nombre + (b.activo ? '' : ' (inactivo)')),
          form(
            [l1, n1, l2, f1, l3, ...av.els],
            'Guardar',
            () =>
              api('PATCH', `/api/admin/barberos/${encodeURIComponent(b.id)}`, {
                nombre: n1.value.trim(),
                foto_url: f1.value.trim() || null,
                activo: a1.checked,
                ...av.body(),
              }),
            'Barbero guardado',
            'b:' + b.id,
          ),
          feedLink(b),
        );
      }),
    ),
    h('h3', {}, 'Nuevo barbero'),
    form(
      [ln, nombre, lf, foto],
      'Añadir barbero',
      () =>
        post('/api/admin/barberos', {
          nombre: nombre.value.trim(),
          foto_url: foto.value.trim() || undefined,
        }),
      'Barbero añadido',
      'b:nuevo',
    ),
  );
}

async function servicios(t) {
  const { servicios: list } = await get('/api/admin/servicios');
  const fields = (s) => {
    const [l1, n] = inp('Nombre', {
      value: s ? s.nombre : '',
      required: true,
      autocomplete: 'off',
    });
    const [l2, d] = inp('Duración (minutos)', {
      type: 'number',
      min: '5',
      step: '5',
      value: s ? String(s.duracion_min) : '30',
      required: true,
    });
    // text, not a number input: "12,5" as the app writes prices, or "12.5"
    const [l3, p] = inp('Precio (€)', {
      type: 'text',
      value: s ? s.precio.toFixed(2).replace('.', ',') : '',
      required: true,
      inputmode: 'decimal',
      autocomplete: 'off',
    });
    const [l4, m] = inp('Margen de limpieza tras la cita (minutos)', {
      type: 'number',
      min: '0',
      max: '120',
      step: '5',
      value: s ? String(s.margen_min || 0) : '0',
    });
    const a = s ? check('Activo (se puede reservar)', s.activo) : [null, null];
    return {
      els: [l1, n, l2, d, l3, p, l4, m, a[0]],
      body: () =>
        Object.assign(
          {
            nombre: n.value.trim(),
            duracion_min: parseInt(d.value, 10),
            precio: price(p),
            margen_min: parseInt(m.value, 10) || 0,
          },
          a[1] ? { activo: a[1].checked } : {},
        ),
    };
  };
  const nuevo = fields(null);
  box.replaceChildren(
    t,
    h(
      'ul',
      { class: 'cards' },
      list.map((s) => {
        const f = fields(s);
        return h(
          'li',
          { class: 'card' + (s.activo ? '' : ' cancelled') },
          h('h3', {}, `${s.nombre} · ${euros(s.precio)}${s.activo ? '' : ' (inactivo)'}`),
          form(
            f.els,
            'Guardar',
            () => api('PATCH', `/api/admin/servicios/${encodeURIComponent(s.id)}`, f.body()),
            'Servicio guardado',
            's:' + s.id,
          ),
        );
      }),
    ),
    h('h3', {}, 'Nuevo servicio'),
    form(
      nuevo.els,
      'Añadir servicio',
      () => post('/api/admin/servicios', nuevo.body()),
      'Servicio añadido',
      's:nuevo',
    ),
  );
}

// A price in euros as typed: "12,5" or "12.5" (up to two decimals), else
// refused under its field (fieldError).
function price(el) {
  const m = /^(\d{1,6})(?:[.,](\d{1,2}))?$/.exec(el.value.trim());
  if (m) return Number(m[1] + '.' + (m[2] || '0'));
  const msg = 'Escribe el precio en euros, con coma o punto y hasta dos decimales: 12,50.';
  fieldError(el, msg);
  throw Object.assign(new Error(msg), { field: true });
}

let horarioDe = null;
async function horarios(t) {
  const { barberos: list } = await get('/api/admin/barberos');
  if (!list.length) {
    box.replaceChildren(t, h('p', {}, 'Añade antes un barbero.'));
    return;
  }
  if (!list.some((b) => b.id === horarioDe)) horarioDe = list[0].id;
  const [ls, sel] = inp('Barbero', { tag: 'select' });
  for (const b of list)
    sel.append(h('option', { value: b.id, selected: b.id === horarioDe }, b.nombre));
  sel.addEventListener('change', () => {
    horarioDe = sel.value;
    render();
  });
  const { horario } = await get(`/api/barberos/${encodeURIComponent(horarioDe)}/horario`);
  const rows = DIAS.map((d, i) => ({
    dia: i + 1,
    list: horario.filter((x) => x.dia === i + 1).map((x) => ({ inicio: x.inicio, fin: x.fin })),
  }));
  const days = h('div');
  const draw = () =>
    days.replaceChildren(
      ...rows.map((r) =>
        h(
          'fieldset',
          { class: 'day-hours' },
          h('legend', {}, DIAS[r.dia - 1]),
          r.list.length ? null : h('p', { class: 'hint' }, 'Cerrado'),
          ...r.list.map((x, k) => {
            const [l1, i1] = inp(`Desde (${DIAS[r.dia - 1]}, tramo ${k + 1})`, {
              type: 'time',
              value: x.inicio,
              required: true,
              onchange: () => {
                x.inicio = i1.value;
              },
            });
            const [l2, i2] = inp(`Hasta (${DIAS[r.dia - 1]}, tramo ${k + 1})`, {
              type: 'time',
              value: x.fin,
              required: true,
              onchange: () => {
                x.fin = i2.value;
              },
            });
            return h(
              'div',
              { class: 'interval' },
              l1,
              i1,
              l2,
              i2,
              h(
                'button',
                {
                  type: 'button',
                  class: 'link',
                  onclick: () => {
                    r.list.splice(k, 1);
                    draw();
                  },
                },
                'Quitar tramo',
              ),
            );
          }),
          h(
            'button',
            {
              type: 'button',
              class: 'link',
              onclick: () => {
                r.list.push({ inicio: '09:00', fin: '14:00' });
                draw();
              },
            },
            `Añadir tramo el ${DIAS[r.dia - 1]}`,
          ),
        ),
      ),
    );
  draw();
  box.replaceChildren(
    t,
    ls,
    sel,
    form(
      [days],
      'Guardar horario',
      () =>
        api('PUT', `/api/admin/barberos/${encodeURIComponent(horarioDe)}/horario`, {
          horario: rows.flatMap((r) =>
            r.list.map((x) => ({ dia: r.dia, inicio: x.inicio, fin: x.fin })),
          ),
        }),
      'Horario guardado',
      'horario',
    ),
  );
}

function cierres(t) {
  return closures(t, box, render);
}
