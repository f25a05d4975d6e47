// citas.js - my appointments: upcoming and past, cancel and reschedule
// within the rules, before/after photos, "Repetir este corte".
import { get, post, api, qs, session, cfg, rol } from './api.js';
import {
  h,
  page,
  focus,
  announce,
  askFirst,
  alertBox,
  showError,
  whenFull,
  euros,
  estadoLabel,
  callShop,
} from './ui.js';
import { picker } from './slots.js';
import { waitList } from './espera.js';

export async function mine() {
  const me = await session();
  if (!me) {
    page(
      'Mis citas',
      h(
        'p',
        {},
        'Entra para ver tus citas. ',
        h('a', { class: 'tap', href: '/entrar?volver=/mis-citas' }, 'Entrar'),
      ),
    );
    return;
  }
  const [{ citas: listed }, { consentimientos }] = await Promise.all([
    get('/api/citas'),
    get('/api/auth/me/consentimientos'),
  ]);
  // staff are listed every appointment of the shop (the agenda's): here
  // only those they booked for themselves
  const staff = rol(me) !== 'cliente';
  const citas = staff ? listed.filter((c) => c.cliente_id === me.user.id) : listed;
  // upcoming: not cancelled and not over; one whose attendance is marked
  // (it has started) is over already
  const now = Date.now();
  const marked = (c) => c.estado === 'completada' || c.estado === 'no_presentado';
  const upcoming = citas.filter(
    (c) => c.estado !== 'cancelada' && new Date(marked(c) ? c.fecha_inicio : c.fecha_fin) > now,
  );
  const past = citas.filter((c) => !upcoming.includes(c)).reverse();
  page(
    'Mis citas',
    h('p', {}, h('a', { class: 'button primary', href: '/reservar' }, 'Reservar otra cita')),
    staff
      ? h(
          'p',
          { class: 'hint' },
          'Aquí están las citas que reservaste para ti. Las de la barbería están en la ',
          h('a', { href: '/agenda' }, 'Agenda'),
          '.',
        )
      : null,
    h('h2', {}, 'Próximas'),
    upcoming.length
      ? h(
          'ul',
          { class: 'cards' },
          upcoming.map((c) => card(c, me, true, consentimientos)),
        )
      : h('p', {}, 'No tienes citas próximas.'),
    h('h2', {}, 'Anteriores'),
    past.length
      ? h(
          'ul',
          { class: 'cards' },
          past.slice(0, 20).map((c) => card(c, me, false, consentimientos)),
        )
      : h('p', {}, 'Aún no hay citas anteriores.'),
    waitList(),
  );
}

const changeable = (c) =>
  c.estado !== 'cancelada' &&
  new Date(c.fecha_inicio).getTime() - cfg().limite_cancelacion_min * 60000 > Date.now();

function card(c, me, upcoming, consent) {
  const li = h('li', { class: 'card cita' + (c.estado === 'cancelada' ? ' cancelled' : '') });
  const title = h(
    'h3',
    { tabindex: '-1' },
    `${c.servicio ? c.servicio.nombre : 'Cita'} con ${c.barbero ? c.barbero.nombre : ''}`,
  );
  const err = alertBox();
  const area = h('div');
  li.append(
    title,
    h('p', { class: 'when' }, whenFull(c.fecha_inicio)),
    h(
      'p',
      { class: 'hint' },
      [c.servicio ? euros(c.servicio.precio) : '', estadoLabel(c.estado)]
        .filter(Boolean)
        .join(' · '),
    ),
    ...(c.notas ? [h('p', { class: 'notes' }, 'Notas: ' + c.notas)] : []),
    err,
  );
  const actions = h('p', { class: 'actions' });
  if (upcoming) {
    if (changeable(c)) {
      const limit = new Date(
        new Date(c.fecha_inicio).getTime() - cfg().limite_cancelacion_min * 60000,
      );
      li.append(
        h(
          'p',
          { class: 'hint' },
          `Puedes cancelar hasta el ${whenFull(limit)}, y cambiar la hora hasta entonces.`,
        ),
      );
      actions.append(
        h('button', { type: 'button', onclick: () => reschedule(c, area, mine) }, 'Cambiar hora'),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () =>
              askCancel(area, err, async () => {
                await post(`/api/citas/${encodeURIComponent(c.id)}/cancelar`);
                announce('Cita cancelada');
                await mine();
              }),
          },
          'Cancelar cita',
        ),
      );
    } else if (c.estado !== 'cancelada') {
      li.append(
        h(
          'p',
          { class: 'hint' },
          callShop('Ya no se puede cambiar ni cancelar desde aquí', cfg().telefono),
        ),
      );
    }
  } else if (c.estado !== 'cancelada') {
    actions.append(
      h(
        'a',
        {
          class: 'button',
          href: '/reservar?' + qs({ servicio: c.servicio_id, barbero: c.barbero_id }),
        },
        'Repetir este corte',
      ),
    );
  }
  li.append(actions, area);
  // a cancelled one: the photos taken meanwhile, still to see and delete,
  // and no uploads
  li.append(photos(c, me, false, consent, { upload: c.estado !== 'cancelada' }));
  return li;
}

// What the API answers (409) when another booking took the time meanwhile;
// its other 409s (the cut-off passed, the appointment was cancelled or its
// attendance marked meanwhile) are said as they are.
export const TAKEN = 'El horario ya no está disponible';

// Asks before cancelling an appointment, here and on its own page
// (gestion.js); run() cancels it.
export const askCancel = (area, err, run) =>
  askFirst(area, {
    question: '¿Seguro que quieres cancelar esta cita? ',
    yes: 'Sí, cancelar',
    no: 'No, mantenerla',
    err,
    run,
  });

// "Cambiar hora" for one appointment, in area: the picker of the times it
// could move to, then a confirmation; done() draws the page again after it.
export function reschedule(c, area, done) {
  const pk = picker({
    huecos: `/api/citas/${encodeURIComponent(c.id)}/huecos`,
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
              await post(`/api/citas/${encodeURIComponent(c.id)}/reprogramar`, {
                fecha_inicio: hu.inicio,
              });
              announce('Cita cambiada al ' + whenFull(hu.inicio));
              await done();
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

// Her "yes" to photos of her cuts, asked before her first upload and
// recorded; every photo box of the page opens once it is given.
function askConsent(c, consent, err) {
  const id = `permiso-fotos-${c.id}`;
  const box = h('input', {
    type: 'checkbox',
    id,
    onchange: async () => {
      box.disabled = true;
      try {
        await post('/api/auth/me/consentimientos', { fotos: true });
        consent.fotos = true;
        for (const q of document.querySelectorAll('.photos .consent')) q.remove();
        for (const i of document.querySelectorAll('.photos .upload input')) i.disabled = false;
        announce('Permiso para fotos dado');
        // its box is gone: on to this card's first upload
        document.getElementById(`foto-antes-${c.id}`)?.focus();
      } catch (ex) {
        box.checked = false;
        box.disabled = false;
        showError(err, ex);
      }
    },
  });
  return h(
    'div',
    { class: 'consent' },
    h(
      'p',
      { class: 'check' },
      box,
      h('label', { for: id }, ' Acepto que la barbería guarde fotos de mis cortes'),
    ),
    h('p', { class: 'hint' }, 'Puedes retirarlo en Mi cuenta: entonces las borramos.'),
  );
}

// The photos of a cita: view, add (camera or gallery; up to the API's 5 MB,
// checked first), delete own. On her
// own appointment (consent given: her answer from /api/auth/me/consentimientos)
// adding waits for her permission. Without upload (a cancelled appointment):
// view and delete own only, and nothing shown when it has no photos.
export function photos(c, me, readOnly, consent, { upload = true } = {}) {
  const box = h('div', { class: 'photos' });
  const list = h('div', { class: 'thumbs' });
  const err = alertBox();
  const title = h('h4', { tabindex: '-1' }, 'Fotos');
  const asking = h('div'); // "¿Borrar la foto…?", asked first
  box.append(title, list, asking, err);
  const ask =
    upload && !readOnly && consent && me && c.cliente_id === me.user.id && consent.fotos !== true;
  if (ask) box.append(askConsent(c, consent, err));
  if (!upload) box.hidden = true; // until it has photos to show
  const load = async () => {
    try {
      const { fotos } = await get('/api/fotos?' + qs({ cita_id: c.id }));
      if (fotos.length) box.hidden = false;
      list.replaceChildren(
        ...(fotos.length
          ? fotos.map((f) =>
              h(
                'figure',
                {},
                h(
                  'a',
                  { href: f.url, target: '_blank', rel: 'noopener' },
                  h('img', {
                    src: f.url,
                    alt: `Foto de ${f.tipo === 'despues' ? 'después' : 'antes'}`,
                    loading: 'lazy',
                    width: '96',
                    height: '96',
                  }),
                ),
                h(
                  'figcaption',
                  {},
                  f.tipo === 'despues' ? 'Después' : 'Antes',
                  !readOnly && me && f.cliente_id === me.user.id
                    ? h(
                        'button',
                        {
                          type: 'button',
                          class: 'link',
                          'aria-label': `Borrar foto de ${f.tipo === 'despues' ? 'después' : 'antes'}`,
                          onclick: (ev) =>
                            askFirst(asking, {
                              question: `¿Borrar la foto de ${f.tipo === 'despues' ? 'después' : 'antes'}? No se puede deshacer.`,
                              yes: 'Sí, borrar',
                              no: 'No, mantenerla',
                              back: ev.currentTarget,
                              run: async () => {
                                await api('DELETE', '/api/fotos?' + qs({ id: f.id }));
                                asking.replaceChildren();
                                announce('Foto borrada');
                                await load();
                                focus(title); // its button is gone
                              },
                            }),
                        },
                        'Borrar',
                      )
                    : null,
                ),
              ),
            )
          : [h('p', { class: 'hint' }, 'Sin fotos.')]),
      );
    } catch (ex) {
      box.hidden = false;
      showError(err, ex);
    }
  };
  if (!readOnly && upload) {
    for (const [tipo, label] of [
      ['antes', 'Añadir foto de antes'],
      ['despues', 'Añadir foto de después'],
    ]) {
      const id = `foto-${tipo}-${c.id}`;
      const input = h('input', {
        type: 'file',
        id,
        accept: 'image/*',
        disabled: ask,
        onchange: async () => {
          const file = input.files[0];
          if (!file) return;
          err.hidden = true;
          try {
            if (file.size > 5242880) throw new Error('Máximo 5MB por imagen');
            const fd = new FormData();
            fd.append('cita_id', c.id);
            fd.append('tipo', tipo);
            fd.append('file', file);
            await api('POST', '/api/fotos', fd);
            announce('Foto subida');
            input.value = '';
            await load();
          } catch (ex) {
            // the file goes, and an earlier "Foto subida" (announced over)
            input.value = '';
            announce('', { shown: true });
            showError(err, ex);
          }
          input.focus(); // the control she used, past the list drawn again
        },
      });
      box.append(h('div', { class: 'upload' }, h('label', { for: id }, label), input));
    }
  }
  load();
  return box;
}
