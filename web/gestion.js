// gestion.js - an appointment behind its personal link (/c/<token>, from
// every e-mail about it), without signing in: what, when, with whom; until
// the cut-off "Cambiar hora" and "Cancelar" (each after a confirmation);
// after it, the shop's phone. Opening the page changes nothing.
import { get, post } from './api.js';
import {
  h,
  page,
  focus,
  announce,
  alertBox,
  showError,
  whenFull,
  estadoLabel,
  callShop,
} from './ui.js';
import { picker } from './slots.js';
import { askCancel, TAKEN } from './citas.js';

const token = () => location.pathname.slice('/c/'.length);
const base = () => '/api/gestion/' + encodeURIComponent(token());

export async function show() {
  let g;
  try {
    g = await get(base());
  } catch (e) {
    if (e.status !== 404) throw e;
    page(
      'Enlace no válido',
      h('p', {}, 'Este enlace no corresponde a ninguna cita. Revisa que esté completo.'),
      h('p', {}, h('a', { class: 'tap', href: '/' }, 'Ir al inicio')),
    );
    return;
  }
  render(g);
}

// said: an error to show on the page drawn (a change refused because the
// page was out of date), with the focus on it.
function render(g, said) {
  const c = g.cita;
  const cancelada = c.estado === 'cancelada';
  const err = alertBox();
  const area = h('div');
  const t = g.tienda || {};
  const dl = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Servicio'),
    h('dd', {}, c.servicio ? c.servicio.nombre : ''),
    h('dt', {}, 'Barbero'),
    h('dd', {}, c.barbero ? c.barbero.nombre : ''),
    h('dt', {}, 'Cuándo'),
    h('dd', { class: 'when' }, whenFull(c.fecha_inicio)),
    h('dt', {}, 'Dónde'),
    h('dd', {}, [t.nombre || 'Barbería', t.direccion].filter(Boolean).join(', ')),
    h('dt', {}, 'Estado'),
    h('dd', { class: 'estado' }, estadoLabel(c.estado)),
  );
  const kids = [dl, err];
  if (cancelada) {
    kids.push(
      h('p', {}, 'Esta cita está cancelada.'),
      h('p', {}, h('a', { class: 'button primary', href: '/reservar' }, 'Reservar otra cita')),
    );
  } else if (g.puede_cambiar) {
    kids.push(
      h(
        'p',
        { class: 'hint' },
        `Puedes cambiarla o cancelarla hasta el ${whenFull(g.limite_cambio)}.`,
      ),
      h(
        'p',
        { class: 'actions' },
        h('button', { type: 'button', onclick: () => reschedule(c, area) }, 'Cambiar hora'),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () =>
              askCancel(area, err, async () => {
                render(await post(base() + '/cancelar'));
                announce('Cita cancelada', { shown: true }); // the page's heading says it
              }),
          },
          'Cancelar',
        ),
      ),
    );
  } else {
    kids.push(h('p', {}, callShop('Ya no se puede cambiar por aquí', t.telefono)));
  }
  kids.push(area);
  page(cancelada ? 'Cita cancelada' : 'Tu cita', ...kids);
  if (said) {
    showError(err, said);
    focus(err);
  }
}

function reschedule(c, area) {
  const pk = picker({
    huecos: base() + '/huecos',
    heading: 'Elige la nueva hora',
    actual: c.fecha_inicio,
    onPick: (hu, fecha) => {
      const ok = h(
        'button',
        {
          type: 'button',
          class: 'primary',
          onclick: async () => {
            ok.disabled = true;
            try {
              const g = await post(base() + '/reprogramar', { fecha_inicio: hu.inicio });
              render(g);
              announce('Cita cambiada al ' + whenFull(hu.inicio));
            } catch (ex) {
              ok.disabled = false;
              if (ex.status === 409 && ex.message === TAKEN) {
                // taken meanwhile: said beside the fresh list, where the focus goes
                box.remove();
                await pk.refresh(fecha);
                pk.say(
                  'Lo sentimos: alguien acaba de reservar esa hora. Elige otra de la lista actualizada.',
                );
                focus(pk.slotsTitle);
              } else if (ex.status === 409) {
                // the page is out of date (the cut-off passed, the shop
                // cancelled it meanwhile): drawn again as it is now, the
                // refusal said on it (with the shop's phone when it can no
                // longer be changed here)
                const now = await get(base()).catch(() => null);
                if (now) render(now, ex);
                else {
                  showError(boxErr, ex);
                  focus(boxErr);
                }
              } else {
                showError(boxErr, ex);
                focus(boxErr);
              }
            }
          },
        },
        'Confirmar cambio',
      );
      const t = h('p', { tabindex: '-1' }, `Nueva hora: ${whenFull(hu.inicio)}`);
      const boxErr = alertBox();
      const box = h('div', { class: 'confirm' }, t, boxErr, h('p', { class: 'actions' }, ok));
      area.querySelector('.confirm')?.remove();
      area.append(box);
      focus(t);
    },
  });
  area.replaceChildren(
    pk.el,
    h(
      'p',
      {},
      h(
        'button',
        { type: 'button', class: 'ghost', onclick: () => area.replaceChildren() },
        'No cambiar',
      ),
    ),
  );
  focus(pk.title);
  pk.open();
}
