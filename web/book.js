// book.js - the home page and booking: service -> barber -> day and free
// slot -> confirm -> confirmation.
import { get, post, qs, loadCatalog, session, cfg } from './api.js';
import {
  h,
  page,
  focus,
  announce,
  alertBox,
  showError,
  whenFull,
  euros,
  mins,
  ymd,
  today,
  addDays,
  telLink,
} from './ui.js';
import { picker } from './slots.js';
import { waitForm } from './espera.js';

// The confirmation's "Dónde": the shop's name and, when set, its address
// (GET /api/config), as the e-mails and the appointment's link say it.
const where = () => [cfg().tienda || 'Barbería', cfg().direccion].filter(Boolean).join(', ');

export async function home() {
  const { servicios } = await loadCatalog();
  page(
    'Reserva tu cita',
    h('p', { class: 'lead' }, 'Elige servicio, barbero y hora en menos de un minuto.'),
    h('p', {}, h('a', { class: 'button primary', href: '/reservar' }, 'Reservar cita')),
    h('h2', {}, 'Servicios'),
    h(
      'ul',
      { class: 'cards' },
      servicios.map((s) =>
        h(
          'li',
          { class: 'card' },
          h(
            'a',
            { class: 'tap', href: '/reservar?servicio=' + encodeURIComponent(s.id) },
            s.nombre,
          ),
          h('span', { class: 'hint' }, ` · ${mins(s.duracion_min)} · ${euros(s.precio)}`),
        ),
      ),
    ),
  );
}

// The day the picker shows, for the waiting list: the day open, or, on a
// week where none is (every day full), its first day.
function shownDay(pk) {
  const days = [...pk.el.querySelectorAll('.days [data-fecha]')].map((b) => b.dataset.fecha);
  return days.includes(pk.day()) ? pk.day() : days[0] || pk.day();
}

const serviceText = (s) => `${s.nombre} · ${mins(s.duracion_min)} · ${euros(s.precio)}`;

export async function book() {
  const params = new URLSearchParams(location.search);
  const { servicios, barberos } = await loadCatalog();
  const st = { servicio: null, barbero: null, hueco: null, fecha: null };
  st.servicio =
    servicios.find((s) => s.id === params.get('servicio')) ||
    (servicios.length === 1 ? servicios[0] : null);
  const pb = params.get('barbero');
  st.barbero = barberos.find((b) => b.id === pb) || (barberos.length === 1 ? barberos[0] : null);
  if (pb === 'cualquiera' && barberos.length > 1) st.barbero = 'any';

  const h1 = page('Reservar cita');
  const summary = h('ol', { class: 'summary', 'aria-label': 'Tu reserva' });
  const stepBox = h('div');
  h1.after(summary, stepBox);
  if (!servicios.length || !barberos.length) {
    stepBox.append(h('p', {}, 'Todavía no hay servicios o barberos disponibles.'));
    return;
  }

  // The address holds the choices made: each step is a history entry of
  // its own (push), so Back shows the step before, drawn again from its
  // address (main.js: popstate); replace corrects the current one.
  const keepUrl = (push) => {
    if (!stepBox.isConnected) return; // another page is shown meanwhile
    const q = new URLSearchParams();
    if (st.servicio) q.set('servicio', st.servicio.id);
    if (st.barbero) q.set('barbero', st.barbero === 'any' ? 'cualquiera' : st.barbero.id);
    if (st.hueco) q.set('inicio', st.hueco.inicio);
    const url = '/reservar' + (q.toString() ? '?' + q : '');
    if (url === location.pathname + location.search) return;
    if (push) history.pushState(null, '', url);
    else history.replaceState(null, '', url);
  };
  const barberName = (id) => (barberos.find((b) => b.id === id) || {}).nombre || '';

  function renderSummary() {
    const items = [];
    const change = (label, fn) =>
      h('button', { type: 'button', class: 'link', onclick: fn }, label);
    if (st.servicio)
      items.push(
        h(
          'li',
          {},
          h('span', {}, 'Servicio: ', h('strong', {}, st.servicio.nombre)),
          servicios.length > 1
            ? change('Cambiar servicio', () => {
                st.servicio = null;
                st.hueco = null;
                next();
              })
            : null,
        ),
      );
    if (st.barbero)
      items.push(
        h(
          'li',
          {},
          h(
            'span',
            {},
            'Barbero: ',
            h('strong', {}, st.barbero === 'any' ? 'Cualquier barbero' : st.barbero.nombre),
          ),
          barberos.length > 1
            ? change('Cambiar barbero', () => {
                st.barbero = null;
                st.hueco = null;
                next();
              })
            : null,
        ),
      );
    summary.replaceChildren(...items);
    summary.hidden = !items.length;
  }

  function step(title, ...kids) {
    const t = h('h2', { tabindex: '-1' }, title);
    stepBox.replaceChildren(t, ...kids);
    return t;
  }

  function chooseService() {
    const t = step(
      '1. Elige el servicio',
      h(
        'div',
        { class: 'choices' },
        servicios.map((s) =>
          h(
            'button',
            {
              type: 'button',
              class: 'choice',
              onclick: () => {
                st.servicio = s;
                next();
              },
            },
            serviceText(s),
          ),
        ),
      ),
    );
    return t;
  }

  function chooseBarber() {
    const opts = barberos.map((b) =>
      h(
        'button',
        {
          type: 'button',
          class: 'choice',
          onclick: () => {
            st.barbero = b;
            next();
          },
        },
        b.nombre,
      ),
    );
    if (barberos.length > 1) {
      opts.unshift(
        h(
          'button',
          {
            type: 'button',
            class: 'choice',
            onclick: () => {
              st.barbero = 'any';
              next();
            },
          },
          'Cualquier barbero',
        ),
      );
    }
    return step('2. Elige barbero', h('div', { class: 'choices' }, opts));
  }

  let pk = null;
  // lostMessage: the slot asked for is gone (said as an error); ownNote: it
  // is hers already (a line of its own). Either shows above the fresh list.
  async function chooseSlot(lostMessage, ownNote) {
    pk = picker({
      servicio: st.servicio.id,
      barbero: st.barbero === 'any' ? null : st.barbero.id,
      heading: '3. Elige día y hora',
      onPick: (hu, fecha) => {
        st.hueco = hu;
        st.fecha = fecha;
        next();
      },
    });
    stepBox.replaceChildren(
      pk.el,
      waitForm({
        servicio: st.servicio.id,
        barbero: st.barbero === 'any' ? null : st.barbero.id,
        day: () => shownDay(pk),
        back: params.get('fecha'),
      }),
    );
    if (lostMessage || ownNote) {
      const a = ownNote || alertBox();
      if (!ownNote) showError(a, lostMessage);
      pk.title.after(a);
      await pk.refresh(st.fecha);
      focus(pk.title);
      return pk.title;
    }
    focus(pk.title);
    // back from signing in to be told of a day (or from a notice's link):
    // that day is shown, beside the form that offers it
    const asked = params.get('fecha');
    const inRange = (d) => d >= today() && d <= addDays(today(), cfg().dias_max);
    if (asked && /^\d{4}-\d{2}-\d{2}$/.test(asked) && inRange(asked)) await pk.refresh(asked);
    else await pk.open();
    return pk.title;
  }

  // Her own confirmed appointment for this service (and barber, when one
  // was chosen) starting at inicio, or null (also when it cannot be read).
  async function ownAt(inicio, me) {
    const t = Date.parse(inicio);
    try {
      const { citas } = await get(
        '/api/citas?' +
          qs({
            estado: 'confirmada',
            desde: new Date(t).toISOString(),
            hasta: new Date(t + 60000).toISOString(),
          }),
      );
      return (
        citas.find(
          (c) =>
            c.cliente_id === me.user.id &&
            c.servicio_id === st.servicio.id &&
            Date.parse(c.fecha_inicio) === t &&
            (st.barbero === 'any' || c.barbero_id === st.barbero.id),
        ) || null
      );
    } catch {
      return null;
    }
  }

  const otherTime = () =>
    h(
      'button',
      {
        type: 'button',
        class: 'ghost',
        onclick: () => {
          st.hueco = null;
          next();
        },
      },
      'Elegir otra hora',
    );

  async function confirm() {
    const t = step(
      '4. Confirma tu cita',
      h('p', { class: 'hint' }, 'Comprobando que la hora sigue libre…'),
    );
    focus(t);
    // the slot may have gone meanwhile: ask for the day again
    let huecos, me;
    try {
      ({ huecos } = await (
        pk ||
        picker({ servicio: st.servicio.id, barbero: st.barbero === 'any' ? null : st.barbero.id })
      ).fetchDay(st.fecha || ymd(new Date(st.hueco.inicio)), true));
      me = await session();
    } catch (ex) {
      // not read (no connection, the server down): said, with a way to ask again
      const err = alertBox();
      showError(err, ex);
      const again = ex.expired
        ? null
        : h('button', { type: 'button', class: 'primary', onclick: confirm }, 'Reintentar');
      stepBox.querySelector('.hint').remove();
      t.after(err, h('p', { class: 'actions' }, again, otherTime()));
      focus(err);
      return t;
    }
    const fresh = huecos.find(
      (x) =>
        x.inicio === st.hueco.inicio &&
        (st.barbero === 'any' || !x.barberos || x.barberos.includes(st.barbero.id)),
    );
    if (!fresh) {
      const inicio = st.hueco.inicio;
      st.fecha = st.fecha || ymd(new Date(inicio));
      st.hueco = null;
      keepUrl();
      // taken by herself (Back to this step once she booked it): not "taken"
      const own = me && (await ownAt(inicio, me));
      if (own) {
        announce('Ya tienes esta cita', { shown: true });
        return chooseSlot(
          null,
          h(
            'p',
            { class: 'ok' },
            `Ya tienes esta cita: ${st.servicio.nombre} con ${barberName(own.barbero_id)}, ${whenFull(own.fecha_inicio)}. Está en `,
            h('a', { href: '/mis-citas' }, 'Mis citas'),
            '. Si quieres otra, elige día y hora.',
          ),
        );
      }
      announce('Esa hora ya no está libre', { shown: true });
      return chooseSlot(
        'Lo sentimos: esa hora acaba de ocuparse. Elige otra de la lista actualizada.',
      );
    }
    st.hueco = fresh;
    const s = st.servicio;
    const barberoId = st.barbero === 'any' ? fresh.barberos[0] : st.barbero.id;
    const notas = h('textarea', { id: 'notas', name: 'notas', rows: '2', maxlength: '500' });
    const err = alertBox();
    const details = h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Servicio'),
      h('dd', {}, serviceText(s)),
      h('dt', {}, 'Cuándo'),
      h('dd', {}, whenFull(fresh.inicio)),
      h('dt', {}, 'Barbero'),
      h('dd', {}, barberName(barberoId)),
    );
    const back = otherTime();
    if (!me) {
      const volver = encodeURIComponent(location.pathname + location.search);
      t.after(
        details,
        h('p', {}, 'Para confirmar, crea tu cuenta o entra: tu hora te espera aquí.'),
        h(
          'p',
          { class: 'actions' },
          h(
            'a',
            { class: 'button primary', href: '/registro?volver=' + volver },
            'Crear cuenta y reservar',
          ),
          h('a', { class: 'button', href: '/entrar?volver=' + volver }, 'Ya tengo cuenta'),
        ),
        // a client the shop registered with no e-mail (told of a freed
        // slot by WhatsApp) has no account to enter: she books by phone
        cfg().telefono
          ? h(
              'p',
              {},
              'Si te dimos de alta sin correo, resérvala por teléfono: ',
              telLink(cfg().telefono),
            )
          : null,
        h('p', {}, back),
      );
      stepBox.querySelector('.hint').remove();
      return t;
    }
    const btn = h('button', { type: 'submit', class: 'primary' }, 'Confirmar cita');
    const form = h(
      'form',
      {
        class: 'form',
        onsubmit: async (e) => {
          e.preventDefault();
          btn.disabled = true;
          try {
            const { cita } = await post('/api/citas', {
              barbero_id: barberoId,
              servicio_id: s.id,
              fecha_inicio: fresh.inicio,
              notas: notas.value.trim() || undefined,
            });
            done(cita, barberName(barberoId));
          } catch (ex) {
            btn.disabled = false;
            if (ex.status === 409) {
              st.hueco = null;
              keepUrl();
              announce('Esa hora ya no está libre', { shown: true });
              chooseSlot(
                'Lo sentimos: alguien acaba de reservar esa hora. Elige otra de la lista actualizada.',
              );
            } else {
              showError(err, ex);
              focus(err); // the button had the focus, and was disabled
            }
          }
        },
      },
      h('label', { for: 'notas' }, 'Notas para el barbero (opcional)'),
      notas,
      err,
      h('p', { class: 'actions sticky' }, btn, back),
    );
    stepBox.querySelector('.hint').remove();
    t.after(details, form);
    return t;
  }

  function done(cita, barbero) {
    const s = st.servicio;
    // booked: a reload shows the hours again, not this slot as taken
    st.hueco = null;
    keepUrl();
    const limit = new Date(
      new Date(cita.fecha_inicio).getTime() - cfg().limite_cancelacion_min * 60000,
    );
    const title = `${s.nombre} con ${barbero}`;
    page(
      '¡Cita reservada!',
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Qué'),
        h('dd', {}, serviceText(s)),
        h('dt', {}, 'Cuándo'),
        h('dd', {}, whenFull(cita.fecha_inicio)),
        h('dt', {}, 'Con quién'),
        h('dd', {}, barbero),
        h('dt', {}, 'Dónde'),
        h('dd', {}, where()),
      ),
      h(
        'p',
        { class: 'deadline' },
        `Puedes cancelar hasta el ${whenFull(limit)}, y cambiar la hora hasta entonces.`,
      ),
      h(
        'p',
        { class: 'actions' },
        h(
          'a',
          { class: 'button', href: gcalLink(title, cita), target: '_blank', rel: 'noopener' },
          'Añadir a Google Calendar',
        ),
        h(
          'a',
          { class: 'button', href: icsHref(title, cita), download: 'cita-barberia.ics' },
          'Descargar .ics',
        ),
      ),
      h('p', {}, h('a', { class: 'tap', href: '/mis-citas' }, 'Ver mis citas')),
    );
    announce('Cita reservada', { shown: true }); // the page's heading
  }

  let drawn = false; // the first step drawn corrects the address; later ones add to it
  async function next() {
    keepUrl(drawn);
    drawn = true;
    renderSummary();
    if (!st.servicio) return focus(chooseService());
    if (!st.barbero) return focus(chooseBarber());
    if (!st.hueco) return chooseSlot();
    return confirm();
  }

  const inicio = params.get('inicio');
  if (inicio && st.servicio && st.barbero) st.hueco = { inicio };
  return next();
}

const stamp = (iso) => iso.replace(/[-:]/g, '').replace(/\.\d+/, '');

export function gcalLink(title, cita) {
  const q = new URLSearchParams({
    action: 'TEMPLATE',
    text: title,
    dates: `${stamp(cita.fecha_inicio)}/${stamp(cita.fecha_fin)}`,
    details: 'Reservada en ' + location.origin,
  });
  return 'https://calendar.google.com/calendar/render?' + q;
}

export function icsHref(title, cita) {
  const esc = (s) => s.replace(/[\\;,]/g, (c) => '\\' + c);
  const ics = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Barberia//ES',
    'BEGIN:VEVENT',
    `UID:${cita.id}@${location.host}`,
    `DTSTAMP:${stamp(new Date().toISOString())}`,
    `DTSTART:${stamp(cita.fecha_inicio)}`,
    `DTEND:${stamp(cita.fecha_fin)}`,
    `SUMMARY:${esc(title)}`,
    `LOCATION:${esc(where())}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
  return 'data:text/calendar;charset=utf-8,' + encodeURIComponent(ics);
}
