// espera.js - the waiting list: "Avísame si se libera" for a day in the
// booking flow (POST /api/lista-espera) and the client's own entries, each
// removable (GET, DELETE /api/lista-espera); at the front desk, a client
// put on the list and her entries (the same calls with cliente_id).
import { get, api, post, session, cfg, qs } from './api.js';
import { h, announce, focus, alertBox, showError, dateLabel, today, addDays } from './ui.js';

// A day a client may wait for: today up to the booking horizon, the
// picker's day (day()) to begin with.
function dayInput(id, day) {
  return h('input', {
    type: 'date',
    id,
    min: today(),
    max: addDays(today(), cfg().dias_max),
    value: day() || today(),
  });
}

// The field follows the day the picker shows (day()) unless she wrote
// another in it since; a tap in a picker makes it follow again. changed()
// runs on each change of the page; the watch ends with the form.
function follow(input, day, changed) {
  const main = document.getElementById('main');
  let given = input.value;
  let seen = day();
  let tap = false;
  let shown = false;
  const onTap = (e) => (tap = tap || !!e.target.closest('.picker'));
  input.oninput = () => (tap = false);
  const watch = new MutationObserver(() => {
    if (!input.isConnected) {
      if (shown) watch.disconnect();
      if (shown) main.removeEventListener('click', onTap, true);
      return;
    }
    shown = true;
    if (changed) changed();
    const d = day();
    if (!d) return;
    if (tap || (d !== seen && input.value === given)) input.value = given = d;
    tap = false;
    seen = d;
  });
  watch.observe(main, { childList: true, subtree: true, attributeFilter: ['aria-pressed'] });
  main.addEventListener('click', onTap, true);
}

// A small form under the slot picker: a day, and the button. servicio and
// barbero (null: any) come from the booking; day() the picker's day shown.
// A visitor sent to sign in comes back to the booking with the same choices
// and the day (?fecha=, which book.js hands back as back: the form offers it).
export function waitForm({ servicio, barbero, day, back }) {
  const err = alertBox();
  err.setAttribute('tabindex', '-1');
  const done = h('p', { role: 'status', tabindex: '-1' });
  const input = dayInput('espera-fecha', () =>
    /^\d{4}-\d{2}-\d{2}$/.test(back || '') && back >= today() ? back : day(),
  );
  follow(input, day);
  const btn = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        // disabled from the tap on, so that a second tap sends nothing
        btn.disabled = true;
        err.hidden = true;
        done.textContent = '';
        try {
          const me = await session();
          if (!me) {
            const volver =
              '/reservar?' +
              qs({ servicio, barbero: barbero || 'cualquiera', fecha: input.value || undefined });
            err.replaceChildren(
              h('a', { class: 'tap', href: '/entrar?' + qs({ volver }) }, 'Entra en tu cuenta'),
              ' para que te avisemos.',
            );
            err.hidden = false;
          } else {
            await post('/api/lista-espera', {
              servicio_id: servicio,
              fecha: input.value,
              barbero_id: barbero || undefined,
            });
            done.textContent = `Te avisaremos por correo si se libera una hora el ${dateLabel(input.value)}.`;
            announce(done.textContent, { shown: true });
          }
        } catch (e) {
          showError(err, e);
        }
        btn.disabled = false;
        focus(err.hidden ? done : err); // the button was disabled meanwhile
      },
    },
    'Avísame si se libera',
  );
  return h(
    'section',
    { class: 'espera' },
    h('h3', {}, '¿No hay una hora que te venga bien?'),
    h(
      'p',
      { class: 'hint' },
      'Elige el día, también uno completo, y te avisamos en cuanto se libere una hora.',
    ),
    h('p', {}, h('label', { for: 'espera-fecha' }, 'Día '), input, ' ', btn),
    err,
    done,
  );
}

// The client's entries, for "Mis citas".
export function waitList() {
  const title = h('h2', { tabindex: '-1' }, 'Avisos de horas libres');
  const box = h('section', { class: 'espera' }, title);
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
                      focus(title); // its button is gone
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

// --- the front desk: a client on the list -----------------------------------------

const naming = (e) =>
  `${e.servicio || 'Servicio'} · ${dateLabel(e.fecha)} · ${e.barbero ? 'con ' + e.barbero : 'con cualquier barbero'}`;

// The chosen client's entries at the front desk, each removable
// (GET, DELETE /api/lista-espera?cliente_id=). cliente: {id, nombre}.
// Returns {el, load}.
export function deskList(cliente) {
  const ask = '?cliente_id=' + encodeURIComponent(cliente.id);
  const list = h('ul');
  const err = alertBox();
  const title = h('h3', { tabindex: '-1' }, 'En la lista de espera');
  const el = h('div', { class: 'espera' }, title, list, err);
  const load = async () => {
    let entradas;
    try {
      ({ entradas } = await get('/api/lista-espera' + ask));
    } catch (ex) {
      showError(err, ex);
      return;
    }
    list.replaceChildren(
      ...(entradas.length
        ? entradas.map((e) => {
            const quitar = h(
              'button',
              {
                type: 'button',
                class: 'link',
                'aria-label': `Quitar de la lista de espera: ${naming(e)}`,
                onclick: async () => {
                  quitar.disabled = true;
                  try {
                    await api('DELETE', `/api/lista-espera/${encodeURIComponent(e.id)}${ask}`);
                    announce(`Quitado de la lista de espera: ${naming(e)}`);
                    await load();
                    focus(title); // its button is gone
                  } catch (ex) {
                    quitar.disabled = false;
                    showError(err, ex);
                  }
                },
              },
              'Quitar',
            );
            return h('li', {}, naming(e), ' ', quitar);
          })
        : [h('li', { class: 'hint' }, 'No está en ninguna lista de espera.')]),
    );
  };
  load();
  return { el, load };
}

// "Añadir a la lista de espera" at the front desk, for a full day: the
// day, then a confirmation naming the client, the day, the service and the
// barber; POST /api/lista-espera with cliente_id. cliente(), servicio(),
// barbero() give the form's current choices (cliente: {id, nombre}, a new
// one typed, {nombre}, or null), day() the picker's day; register() makes
// the new one a client (resolving to her, or to null: refused, and said);
// onAdded() after it is stored.
export function deskWaitForm({ cliente, register, servicio, barbero, day, onAdded }) {
  const err = alertBox();
  const done = h('p', { role: 'status' });
  const ask = h('div');
  const input = dayInput('espera-mostrador-fecha', day);
  // another client (or none): what was said or asked of the last one goes
  const who = () => (cliente() || {}).id || null;
  let client = who();
  follow(input, day, () => {
    if (who() === client) return;
    client = who();
    ask.replaceChildren();
    err.hidden = true;
    done.textContent = '';
  });
  const btn = h(
    'button',
    {
      type: 'button',
      onclick: () => {
        err.hidden = true;
        done.textContent = '';
        const c = cliente();
        if (!c) return showError(err, 'Elige antes un cliente o añade uno nuevo.');
        if (!input.value) return showError(err, 'Elige el día.');
        const fecha = input.value;
        const b = barbero();
        const what = `${servicio().nombre}, ${dateLabel(fecha)}, con ${b.nombre}`;
        const yes = h(
          'button',
          {
            type: 'button',
            class: 'primary',
            onclick: async () => {
              yes.disabled = true;
              try {
                // a new client is one first (her field refused: the focus is on it)
                const to = c.id ? c : await register();
                if (!to) return ask.replaceChildren();
                await post('/api/lista-espera', {
                  cliente_id: to.id,
                  servicio_id: servicio().id,
                  fecha,
                  barbero_id: b.id,
                });
                ask.replaceChildren();
                done.textContent = `${to.nombre || 'El cliente'} está en la lista de espera: ${what}. Le avisaremos si se libera una hora.`;
                announce(done.textContent, { shown: true });
                if (onAdded) onAdded();
              } catch (ex) {
                ask.replaceChildren();
                showError(err, ex);
              }
              btn.focus();
            },
          },
          'Sí, añadir',
        );
        const q = h(
          'p',
          {},
          `¿Añadir a ${c.nombre || 'este cliente'} a la lista de espera? ${what}.`,
        );
        ask.replaceChildren(
          q,
          h(
            'p',
            { class: 'actions' },
            yes,
            h(
              'button',
              {
                type: 'button',
                class: 'ghost',
                onclick: () => {
                  ask.replaceChildren();
                  btn.focus();
                },
              },
              'No',
            ),
          ),
        );
        yes.focus();
      },
    },
    'Añadir a la lista de espera',
  );
  return h(
    'section',
    { class: 'espera' },
    h('h3', {}, '¿No queda hora ese día?'),
    h(
      'p',
      { class: 'hint' },
      'Apúntalo en la lista de espera: le avisaremos por correo o WhatsApp si se libera una hora.',
    ),
    h('p', {}, h('label', { for: 'espera-mostrador-fecha' }, 'Día '), input, ' ', btn),
    ask,
    err,
    done,
  );
}
