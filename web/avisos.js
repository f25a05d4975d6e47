// avisos.js - the administrator's closures and days off over existing
// bookings (POST /api/admin/ausencias answers with the appointments they
// meet; GET .../{id}/citas; POST .../{id}/cancelar-citas cancels them all
// with a message to each client), and a barber's calendar feed link
// (POST /api/admin/barberos/{id}/feed makes a new one, DELETE revokes it).
import { get, api, post } from './api.js';
import {
  h,
  focus,
  askFirst,
  announce,
  alertBox,
  showError,
  whenLabel,
  dateLabel,
  telLink,
} from './ui.js';

let uid = 0;
function field(label, attrs) {
  const id = 'av' + ++uid;
  return [
    h('label', { for: id }, label),
    h(attrs.tag || 'input', Object.assign({ id }, attrs, { tag: null })),
  ];
}

// What the shop must do itself for an appointment whose client no
// cancellation reaches (no e-mail, no WhatsApp): call her, or nothing at all.
function callLine(c) {
  if (c.avisable) return null;
  return h(
    'span',
    { class: 'call' },
    c.cliente_telefono
      ? [' · Sin correo ni WhatsApp: llama al ', telLink(c.cliente_telefono), ' para avisarle']
      : ' · Sin correo, WhatsApp ni teléfono: no hay forma de avisarle',
  );
}
const citaLine = (c) =>
  h(
    'li',
    {},
    h('strong', {}, whenLabel(c.fecha_inicio)),
    ` · ${c.cliente_nombre || 'Cliente sin nombre'} · ${c.servicio_nombre} con ${c.barbero_nombre}`,
    callLine(c),
  );
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

// The appointments a closure meets, and one action that cancels them all
// with a message (to each client it reaches; the others are to be called),
// shown in area with the focus on its heading. done(): after cancelling or
// leaving them.
// The most appointments the API lists for a closure (docs/api.md); a list
// that long may go on: "Cancelar" cancels them all, listed or not.
const LISTED_MAX = 500;

function afectadas(area, a, list, done) {
  const n = list.length;
  const mute = list.filter((c) => !c.avisable).length;
  const t = h(
    'h3',
    { tabindex: '-1' },
    n >= LISTED_MAX
      ? `Este cierre coincide con ${n} citas o más (aquí, las ${n} primeras; se cancelan todas)`
      : n
        ? `Este cierre coincide con ${plural(n, 'cita', 'citas')}`
        : 'Este cierre no coincide con ninguna cita',
  );
  if (!n) {
    area.replaceChildren(
      h(
        'div',
        { class: 'confirm' },
        t,
        h('p', {}, h('button', { type: 'button', onclick: done }, 'Entendido')),
      ),
    );
    focus(t);
    return;
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
  // after cancelling: who must still be called, if anyone
  const called = (canceladas) => {
    // the rows listed before (their phones as shown), then any booked since
    const known = new Map(list.map((c) => [c.id, c]));
    const k = canceladas.length;
    const left = canceladas.map((c) => known.get(c.id) || c).filter((c) => !c.avisable);
    const sent = k - left.length;
    if (!left.length) {
      announce(`${plural(k, 'cita cancelada', 'citas canceladas')}; clientes avisados`);
      done();
      return;
    }
    const msgs = [plural(k, 'cita cancelada', 'citas canceladas')];
    if (sent) msgs.push(`${plural(sent, 'cliente avisado', 'clientes avisados')}`);
    msgs.push(`${left.length} sin aviso: hay que llamarlos`);
    const said = msgs.join('; ');
    const t2 = h('h3', { tabindex: '-1' }, said);
    box.replaceChildren(
      t2,
      h('p', {}, 'Estos clientes no reciben el aviso: llámalos para decírselo.'),
      h('ul', {}, left.map(citaLine)),
      h('p', {}, h('button', { type: 'button', onclick: done }, 'Entendido')),
    );
    announce(said, { shown: true }); // its heading
    focus(t2);
  };
  const box = askFirst(area, {
    question: t,
    more: [
      h('ul', {}, list.map(citaLine)),
      h('div', { class: 'form' }, lm, msg),
      h(
        'p',
        { class: 'hint' },
        !mute
          ? 'Cada cliente recibe la cancelación por correo o WhatsApp con este mensaje.'
          : n - mute
            ? `Quien tiene correo o WhatsApp recibe la cancelación con este mensaje; a ${plural(mute, 'cliente', 'clientes')} sin correo ni WhatsApp hay que llamarlos.`
            : 'Ninguno de estos clientes tiene correo ni WhatsApp: hay que llamarlos.',
      ),
      err,
    ],
    yes: !mute
      ? n === 1
        ? 'Cancelar la cita y avisar'
        : `Cancelar las ${n} citas y avisar`
      : (n === 1 ? 'Cancelar la cita' : `Cancelar las ${n} citas`) +
        (n - mute ? ` y avisar a ${plural(n - mute, 'cliente', 'clientes')}` : ''),
    no: 'Dejarlas como están',
    back: done,
    err,
    run: async () => {
      err.hidden = true;
      const { canceladas } = await post(
        `/api/admin/ausencias/${encodeURIComponent(a.id)}/cancelar-citas`,
        { mensaje: msg.value.trim() || undefined },
      );
      called(canceladas);
    },
  });
}

// "del lunes 1 de diciembre al viernes 5 de diciembre", or one day
const span = (a) =>
  a.desde === a.hasta
    ? `el ${dateLabel(a.desde)}`
    : `del ${dateLabel(a.desde)} al ${dateLabel(a.hasta)}`;

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
  const listBox = h('div');
  const after = async () => {
    focus(await render());
  };
  const card = (a) => {
    const more = h('div');
    const what = `${name(a.barbero_id)} ${span(a)}`;
    const del = h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-label': `Borrar: ${what}`,
        onclick: () =>
          askFirst(more, {
            question: `¿Borrar el cierre de ${what}? `,
            yes: 'Sí, borrar',
            no: 'No, mantenerlo',
            back: del,
            err,
            run: async () => {
              await api('DELETE', `/api/admin/ausencias/${encodeURIComponent(a.id)}`);
              announce('Cierre borrado');
              await after();
            },
          }),
      },
      'Borrar',
    );
    return h(
      'li',
      { class: 'card' },
      h(
        'p',
        {},
        h('strong', {}, name(a.barbero_id)),
        `: ${span(a)}${a.motivo ? ' · ' + a.motivo : ''}`,
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
                afectadas(more, a, rows, after);
              } catch (ex) {
                showError(err, ex);
              }
            },
          },
          'Citas afectadas',
        ),
        del,
      ),
      more,
    );
  };
  const drawList = (rows) =>
    listBox.replaceChildren(
      rows.length
        ? h('ul', { class: 'cards' }, rows.map(card))
        : h('p', {}, 'No hay cierres ni días libres.'),
    );
  drawList(ausencias);
  const add = h('button', { type: 'submit', class: 'primary' }, 'Añadir');
  const ferr = alertBox();
  const form = h(
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
          form.reset();
          announce('Cierre añadido');
          const rows = r.afectadas || [];
          if (!rows.length) {
            add.disabled = false;
            await after();
            return;
          }
          // the list shows the new closure; its appointments come below
          drawList((await get('/api/admin/ausencias')).ausencias);
          afectadas(panel, r.ausencia, rows, after);
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
  );
  box.replaceChildren(t, err, listBox, h('h3', {}, 'Nuevo cierre o día libre'), form, panel);
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
