// avisos.js - the administrator's closures and days off over existing
// bookings (POST /api/admin/ausencias answers with the appointments they
// meet; GET .../{id}/citas; POST .../{id}/cancelar-citas cancels them all
// with a message to each client), and a barber's calendar feed link
// (POST /api/admin/barberos/{id}/feed makes a new one, DELETE revokes it).
import { get, api, post } from './api.js';
import { h, focus, announce, alertBox, showError, whenLabel } from './ui.js';

let uid = 0;
function field(label, attrs) {
  const id = 'av' + ++uid;
  return [
    h('label', { for: id }, label),
    h(attrs.tag || 'input', Object.assign({ id }, attrs, { tag: null })),
  ];
}

// The appointments a closure meets, and one action that cancels them all
// with a message. done(): after cancelling or leaving them.
function afectadas(a, list, done) {
  const n = list.length;
  const t = h(
    'h3',
    { tabindex: '-1' },
    n
      ? `Este cierre coincide con ${n} ${n === 1 ? 'cita' : 'citas'}`
      : 'Este cierre no coincide con ninguna cita',
  );
  const box = h('div', { class: 'confirm' }, t);
  if (!n) {
    box.append(h('p', {}, h('button', { type: 'button', onclick: done }, 'Entendido')));
    return box;
  }
  const [lm, msg] = field('Mensaje para los clientes (opcional)', {
    tag: 'textarea',
    rows: '3',
    maxlength: '1000',
  });
  msg.value = a.motivo
    ? `Lo sentimos: ese día no podremos atenderte (${a.motivo}). Reserva otra hora cuando quieras.`
    : 'Lo sentimos: ese día no podremos atenderte. Reserva otra hora cuando quieras.';
  const err = alertBox();
  const yes = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        yes.disabled = true;
        err.hidden = true;
        try {
          const { canceladas } = await post(
            `/api/admin/ausencias/${encodeURIComponent(a.id)}/cancelar-citas`,
            { mensaje: msg.value.trim() || undefined },
          );
          const k = canceladas.length;
          announce(`${k} ${k === 1 ? 'cita cancelada' : 'citas canceladas'}; clientes avisados`);
          done();
        } catch (ex) {
          yes.disabled = false;
          showError(err, ex);
        }
      },
    },
    n === 1 ? 'Cancelar la cita y avisar' : `Cancelar las ${n} citas y avisar`,
  );
  box.append(
    h(
      'ul',
      {},
      list.map((c) =>
        h(
          'li',
          {},
          h('strong', {}, whenLabel(c.fecha_inicio)),
          ` · ${c.cliente_nombre || 'Cliente sin nombre'} · ${c.servicio_nombre} con ${c.barbero_nombre}`,
        ),
      ),
    ),
    h('div', { class: 'form' }, lm, msg),
    h('p', { class: 'hint' }, 'Cada cliente recibe la cancelación por correo con este mensaje.'),
    err,
    h(
      'p',
      { class: 'actions' },
      yes,
      h('button', { type: 'button', onclick: done }, 'Dejarlas como están'),
    ),
  );
  return box;
}

// The admin page's "Cierres y días libres" tab: t its heading, box its
// area, render() draws the tab again.
export async function cierres(t, box, render) {
  const [{ ausencias }, { barberos: list }] = await Promise.all([
    get('/api/admin/ausencias'),
    get('/api/admin/barberos'),
  ]);
  const name = (id) =>
    id ? (list.find((b) => b.id === id) || {}).nombre || id : 'Toda la barbería';
  const [lb, sel] = field('Quién', { tag: 'select' });
  sel.append(
    h('option', { value: '' }, 'Toda la barbería (cerrado)'),
    ...list.map((b) => h('option', { value: b.id }, b.nombre)),
  );
  const [ld, desde] = field('Desde (fecha)', { type: 'date', required: true });
  const [lh, hasta] = field('Hasta (fecha, incluida)', { type: 'date', required: true });
  const [lm, motivo] = field('Motivo (opcional)', { autocomplete: 'off' });
  const err = alertBox();
  const panel = h('div');
  const show = (a, rows) => {
    panel.replaceChildren(
      afectadas(a, rows, async () => {
        focus(await render());
      }),
    );
    focus(panel.querySelector('h3'));
  };
  const card = (a) => {
    const more = h('div');
    return h(
      'li',
      { class: 'card' },
      h(
        'p',
        {},
        h('strong', {}, name(a.barbero_id)),
        `: del ${a.desde} al ${a.hasta}${a.motivo ? ' · ' + a.motivo : ''}`,
      ),
      h(
        'p',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              try {
                const { afectadas: rows } = await get(
                  `/api/admin/ausencias/${encodeURIComponent(a.id)}/citas`,
                );
                more.replaceChildren(
                  afectadas(a, rows, async () => {
                    focus(await render());
                  }),
                );
                focus(more.querySelector('h3'));
              } catch (ex) {
                showError(err, ex);
              }
            },
          },
          'Citas afectadas',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: async () => {
              try {
                await api('DELETE', `/api/admin/ausencias/${encodeURIComponent(a.id)}`);
                announce('Cierre borrado');
                render();
              } catch (ex) {
                showError(err, ex);
              }
            },
          },
          'Borrar',
        ),
      ),
      more,
    );
  };
  const add = h('button', { type: 'submit', class: 'primary' }, 'Añadir');
  const ferr = alertBox();
  box.replaceChildren(
    t,
    err,
    ausencias.length
      ? h('ul', { class: 'cards' }, ausencias.map(card))
      : h('p', {}, 'No hay cierres ni días libres.'),
    h('h3', {}, 'Nuevo cierre o día libre'),
    h(
      'form',
      {
        class: 'form',
        onsubmit: async (e) => {
          e.preventDefault();
          add.disabled = true;
          ferr.hidden = true;
          try {
            const r = await post('/api/admin/ausencias', {
              barbero_id: sel.value || null,
              desde: desde.value,
              hasta: hasta.value,
              motivo: motivo.value.trim() || undefined,
            });
            announce('Cierre añadido');
            const rows = r.afectadas || [];
            if (!rows.length) {
              focus(await render());
              return;
            }
            show(r.ausencia, rows);
          } catch (ex) {
            showError(ferr, ex);
          }
          add.disabled = false;
        },
      },
      lb,
      sel,
      ld,
      desde,
      lh,
      hasta,
      lm,
      motivo,
      ferr,
      h('p', { class: 'actions' }, add),
    ),
    panel,
  );
}

// A barber's e-mail (where the notices of their bookings go) and the
// account that speaks for them (a user of rol barbero): the fields and
// their part of PATCH /api/admin/barberos/{id}.
export function barberFields(b, usuarios) {
  const [le, email] = field('Correo del barbero (avisos de sus citas)', {
    type: 'email',
    value: b.email || '',
    autocomplete: 'off',
  });
  const [lu, cuenta] = field('Su cuenta para entrar (rol barbero)', { tag: 'select' });
  cuenta.append(
    h('option', { value: '' }, 'Ninguna'),
    ...usuarios
      .filter((u) => u.rol === 'barbero' || u.id === b.usuario_id)
      .map((u) =>
        h(
          'option',
          { value: u.id, selected: u.id === b.usuario_id },
          u.nombre ? `${u.nombre} (${u.email})` : u.email,
        ),
      ),
  );
  return {
    els: [le, email, lu, cuenta],
    body: () => ({ email: email.value.trim() || null, usuario_id: cuenta.value || null }),
  };
}

// A barber's calendar feed: a new private link to subscribe to (the old
// one stops working), renewed or revoked.
export function feedLink(b) {
  const out = h('div');
  const err = alertBox();
  const base = `/api/admin/barberos/${encodeURIComponent(b.id)}/feed`;
  let live = !!b.feed; // a link works now (the admin's listing says; never the link itself)
  const draw = (url) => {
    const kids = [h('h4', {}, 'Calendario del barbero')];
    if (url) {
      const [lu, inp] = field(`Enlace de suscripción de ${b.nombre}`, {
        value: url,
        readonly: true,
      });
      kids.push(
        h('div', { class: 'form' }, lu, inp),
        h(
          'p',
          { class: 'hint' },
          'Añádelo en Google Calendar («Desde URL») o en el calendario del móvil. Quien lo tenga ve las citas: guárdalo en privado.',
        ),
        h(
          'p',
          { class: 'actions' },
          h(
            'a',
            { class: 'button', href: url.replace(/^https?:/, 'webcal:') },
            'Suscribirse (webcal)',
          ),
        ),
      );
    } else
      kids.push(
        h(
          'p',
          { class: 'hint' },
          live
            ? 'Tiene un enlace activo (no se puede volver a mostrar): renovarlo da uno nuevo y anula el anterior.'
            : 'Un enlace privado con sus citas para su calendario.',
        ),
      );
    kids.push(
      err,
      h(
        'p',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            'aria-label': live
              ? `Renovar enlace (calendario de ${b.nombre})`
              : `Crear enlace del calendario de ${b.nombre}`,
            onclick: async () => {
              try {
                const r = await post(base);
                live = true;
                draw(r.url);
                announce('Enlace del calendario creado; el anterior ya no funciona');
                focus(out.querySelector('input'));
              } catch (ex) {
                showError(err, ex);
              }
            },
          },
          live ? 'Renovar enlace' : 'Crear enlace del calendario',
        ),
        live &&
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              'aria-label': `Anular enlace (calendario de ${b.nombre})`,
              onclick: async () => {
                try {
                  await api('DELETE', base);
                  live = false;
                  draw(null);
                  announce('Enlace del calendario anulado');
                } catch (ex) {
                  showError(err, ex);
                }
              },
            },
            'Anular enlace',
          ),
      ),
    );
    out.replaceChildren(...kids);
  };
  draw(null);
  return out;
}
