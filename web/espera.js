// espera.js - the waiting list: "Avísame si se libera" for a day in the
// booking flow (POST /api/lista-espera) and the client's own entries, each
// removable (GET, DELETE /api/lista-espera).
import { get, api, post, session, cfg } from './api.js';
import { h, announce, alertBox, showError, dateLabel, today, addDays } from './ui.js';

// A small form under the slot picker: a day, and the button. servicio and
// barbero (null: any) come from the booking; day() the picker's day shown.
export function waitForm({ servicio, barbero, day }) {
  const err = alertBox();
  const done = h('p', { role: 'status' });
  const input = h('input', {
    type: 'date',
    id: 'espera-fecha',
    min: today(),
    max: addDays(today(), cfg().dias_max),
    value: day() || today(),
  });
  const btn = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        err.hidden = true;
        done.textContent = '';
        const me = await session();
        if (!me) {
          showError(err, new Error('Entra en tu cuenta para que te avisemos.'));
          return;
        }
        btn.disabled = true;
        try {
          await post('/api/lista-espera', {
            servicio_id: servicio,
            fecha: input.value,
            barbero_id: barbero || undefined,
          });
          done.textContent = `Te avisaremos por e-mail si se libera una hora el ${dateLabel(input.value)}.`;
          announce(done.textContent);
        } catch (e) {
          showError(err, e);
        } finally {
          btn.disabled = false;
        }
      },
    },
    'Avísame si se libera',
  );
  return h(
    'section',
    { class: 'espera' },
    h('h3', {}, '¿No hay una hora que te venga bien?'),
    h('p', { class: 'hint' }, 'Elige el día y te avisamos en cuanto se libere una hora.'),
    h('p', {}, h('label', { for: 'espera-fecha' }, 'Día '), input, ' ', btn),
    err,
    done,
  );
}

// The client's entries, for "Mis citas".
export function waitList() {
  const box = h('section', { class: 'espera' }, h('h2', {}, 'Avisos de horas libres'));
  const list = h('ul', { class: 'cards' });
  const err = alertBox();
  box.append(list, err);
  const load = async () => {
    try {
      const { entradas } = await get('/api/lista-espera');
      list.replaceChildren(
        ...(entradas.length
          ? entradas.map((e) => {
              const quitar = h(
                'button',
                {
                  type: 'button',
                  class: 'ghost',
                  'aria-label': `Quitar el aviso del ${dateLabel(e.fecha)}`,
                  onclick: async () => {
                    quitar.disabled = true;
                    try {
                      await api('DELETE', '/api/lista-espera/' + encodeURIComponent(e.id));
                      announce('Aviso quitado');
                      await load();
                    } catch (ex) {
                      quitar.disabled = false;
                      showError(err, ex);
                    }
                  },
                },
                'Quitar',
              );
              return h(
                'li',
                { class: 'card' },
                h('p', {}, `${e.servicio || 'Servicio'} · ${dateLabel(e.fecha)}`),
                h('p', { class: 'hint' }, e.barbero ? `Con ${e.barbero}` : 'Con cualquier barbero'),
                h('p', { class: 'actions' }, quitar),
              );
            })
          : [h('li', {}, 'No tienes avisos pendientes.')]),
      );
    } catch (ex) {
      showError(err, ex);
    }
  };
  load();
  return box;
}
