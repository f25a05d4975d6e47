// mostrador.js - "Nueva cita" at the front desk (barbero, admin): the
// client (found with GET /api/clientes?q=, or a new one: nombre, teléfono,
// correo), the service and the barber, the hour (the booking's slot picker,
// the hour tapped on the agenda's grid, or "Ahora" for a walk-in) and notes;
// POST /api/agenda/citas. A full day: the chosen client (or a new one,
// registered with POST /api/clientes) on its waiting list, and her entries
// shown under her name (espera.js). The client's WhatsApp consent, as she
// gives it in person or on the phone (deskWhatsApp; a new client's box).
import { api, get, post, qs, cfg, loadCatalog } from './api.js';
import {
  h,
  focus,
  announce,
  alertBox,
  showError,
  fieldError,
  whenFull,
  hm,
  euros,
  dayLabel,
  noWhatsApp,
} from './ui.js';
import { picker } from './slots.js';
import { deskList, deskWaitForm } from './espera.js';

let uid = 0;

// The API's refusals of a client's fields (a new client's at booking,
// POST /api/agenda/citas, as cliente.<campo>; registered alone, POST
// /api/clientes; a correction's, PATCH /api/clientes/{id}): the field (of a
// form's nombre, tel, email) and, for a value it cannot take, what the desk
// is told instead of the API's words
const BAD_NAME = 'Escribe el nombre del cliente (una línea).';
const BAD_TEL =
  'El teléfono no es válido: de 6 a 15 cifras (puede llevar +, espacios, guiones o paréntesis).';
const BAD_EMAIL = 'El correo electrónico no es válido.';
const FIELD_ERRORS = {
  'Faltan campos requeridos': ['nombre', BAD_NAME], // POST /api/clientes: no name
  'Campo inválido: cliente.nombre': ['nombre', BAD_NAME],
  'Campo inválido: nombre': ['nombre', BAD_NAME],
  'Campo inválido: cliente.telefono': ['tel', BAD_TEL],
  'Campo inválido: telefono': ['tel', BAD_TEL],
  'Email inválido': ['email', BAD_EMAIL],
  'El email ya está registrado': ['email', 'Ese correo electrónico ya es de otra cuenta.'],
  'Indique el teléfono o el email del cliente': [
    'tel',
    'Hace falta el teléfono o el correo electrónico del cliente.',
  ],
};
// a client's field the API refused, of inputs {nombre, tel, email}: said
// under it (fieldError); false for other refusals
function badClientField(inputs, ex) {
  const bad = FIELD_ERRORS[ex.message];
  if (bad) fieldError(inputs[bad[0]], bad[1]);
  return bad;
}
// a labelled control: [label, control]
function field(label, attrs) {
  const id = 'm' + ++uid;
  return [
    h('label', { for: id }, label),
    h(attrs.tag || 'input', Object.assign({ id }, attrs, { tag: null })),
  ];
}
// a checkbox inside its label: [label, box]
function check(label, attrs) {
  const [l, box] = field(label, Object.assign({ type: 'checkbox' }, attrs));
  l.className = 'check';
  l.prepend(box, ' ');
  return [l, box];
}
// the line of text that describes el
function hintFor(el, text) {
  const p = h('p', { class: 'hint', id: el.id + '-d' }, text);
  el.setAttribute('aria-describedby', p.id);
  return p;
}

// "Ana Pérez · 600111222 · 2 veces no vino · 5 cortes hechos aquí": how a
// client is named in a list (the search's results) and once chosen, with
// her counts in the agenda card's words.
export function clientLine(c) {
  return [c.nombre || 'Sin nombre', c.telefono, c.email, noShows(c), cuts(c)]
    .filter(Boolean)
    .join(' · ');
}
// The count of completed cuts, when there is any (the API's completadas):
// a regular, at a glance.
export function cuts(c) {
  const n = c && c.completadas;
  return n ? (n === 1 ? '1 corte hecho aquí' : `${n} cortes hechos aquí`) : '';
}
// The count of no-shows, when there is any (the API's no_presentado).
export function noShows(c) {
  const n = c && c.no_presentado;
  return n ? `${n} ${n === 1 ? 'vez' : 'veces'} no vino` : '';
}

// "Corregir datos" of a client the desk made and who has not claimed her
// account (GET /api/clientes: puede_entrar false): a name misheard, a number
// or an address mistyped, corrected in place (PATCH /api/clientes/{id}; an
// emptied phone or e-mail is removed). saved(cliente) shows her new details
// where they were shown and puts the focus on them; a refused field says
// why under it, with the focus on it (fieldError), any other error shows
// in the form. A fieldset, not a form: it may sit inside "Nueva cita"'s
// (Enter saves it, and books nothing).
export function fixClient(cliente, saved) {
  // one who uses her account: hers to change ("Mi cuenta")
  if (cliente.puede_entrar)
    return h('p', { class: 'hint' }, 'Tiene cuenta: cambia sus datos desde «Mi cuenta».');
  // a deleted account (no phone, no address: a desk client keeps one)
  if (!cliente.telefono && !cliente.email) return null;
  const name = cliente.nombre || 'el cliente';
  const box = h('div', { class: 'corregir' });
  const open = h(
    'button',
    { type: 'button', 'aria-label': `Corregir datos de ${name}`, onclick: () => edit() },
    'Corregir datos',
  );
  const closed = () => h('p', { class: 'actions' }, open);
  function edit() {
    const [ln, nombre] = field('Nombre', {
      autocomplete: 'off',
      maxlength: 200,
      value: cliente.nombre || '',
    });
    const [lt, tel] = field('Teléfono', {
      type: 'tel',
      autocomplete: 'off',
      maxlength: 40,
      value: cliente.telefono || '',
    });
    const [le, email] = field('Correo electrónico', {
      type: 'email',
      autocomplete: 'off',
      maxlength: 320,
      value: cliente.email || '',
    });
    const inputs = { nombre, tel, email };
    const err = alertBox();
    const ok = h('button', { type: 'button', class: 'primary', onclick: save }, 'Guardar');
    async function save() {
      err.hidden = true;
      // what changed; an emptied phone or e-mail is removed (null)
      const body = {};
      const now = (el) => el.value.trim();
      if (now(nombre) !== (cliente.nombre || '')) body.nombre = now(nombre);
      if (now(tel) !== (cliente.telefono || '')) body.telefono = now(tel) || null;
      if (now(email) !== (cliente.email || '')) body.email = now(email) || null;
      if (!Object.keys(body).length) {
        showError(err, 'No has cambiado ningún dato.');
        return focus(err);
      }
      ok.disabled = true;
      try {
        const { cliente: c } = await api(
          'PATCH',
          `/api/clientes/${encodeURIComponent(cliente.id)}`,
          body,
        );
        announce(`Datos de ${c.nombre} corregidos.`);
        await saved(c);
      } catch (ex) {
        ok.disabled = false;
        if (badClientField(inputs, ex)) return;
        showError(err, ex);
        focus(err);
      }
    }
    for (const el of [nombre, tel, email])
      el.addEventListener('keydown', (e) => {
        if (e.key !== 'Enter') return;
        e.preventDefault();
        if (!ok.disabled) save();
      });
    box.replaceChildren(
      h(
        'fieldset',
        { class: 'form' },
        h('legend', {}, `Corregir datos de ${name}`),
        ln,
        nombre,
        lt,
        tel,
        le,
        email,
        h('p', { class: 'hint' }, 'Deja el teléfono o el correo en blanco para quitarlo.'),
        err,
        h(
          'p',
          { class: 'actions' },
          ok,
          h(
            'button',
            {
              type: 'button',
              onclick: () => {
                box.replaceChildren(closed());
                open.focus();
              },
            },
            'No cambiar',
          ),
        ),
      ),
    );
    nombre.focus();
  }
  box.append(closed());
  return box;
}

// Who made the last change of a WhatsApp consent, and on which day: the
// desk (registrado_por, a staff user's id) or the client from her account.
function consentBy(w) {
  const on = dayLabel(w.acepta ? w.otorgado_en : w.retirado_en);
  if (w.registrado_por) return `${w.acepta ? 'Registrado' : 'Retirado'} en el mostrador el ${on}.`;
  return `Lo ${w.acepta ? 'aceptó' : 'retiró'} desde su cuenta el ${on}.`;
}

const WA = 'Acepta avisos por WhatsApp';
const ASK_WA =
  'Pregúntale si quiere recibir por WhatsApp sus confirmaciones, cambios, recordatorios y avisos de la lista de espera.';
const waPath = (id) => `/api/clientes/${encodeURIComponent(id)}/whatsapp`;
// Records what a client says to WhatsApp notices, in person or on the phone
// (PUT /api/clientes/{id}/whatsapp: her profile's number): her consent.
const putConsent = (id, acepta) =>
  api('PUT', waPath(id), { acepta }).then(({ whatsapp }) => whatsapp);

// "Acepta avisos por WhatsApp" for a client chosen at the desk: her consent
// as GET /api/clientes/{id}/whatsapp reads it; ticking or unticking records
// it (putConsent). Returns {el, record(acepta)}: record, the same as a tick,
// once her consent is read.
export function deskWhatsApp(cliente) {
  const name = cliente.nombre || 'El cliente';
  const [lw, box] = check(WA, { disabled: true });
  const hint = hintFor(box);
  const err = alertBox();
  const show = (w) => {
    box.checked = w.acepta;
    hint.textContent = w.acepta
      ? `Confirmaciones, cambios, recordatorios y avisos de la lista de espera al ${w.telefono}. ${consentBy(w)}`
      : w.retirado_en && !w.registrado_por
        ? consentBy(w) // she withdrew it herself: not asked again here
        : [w.retirado_en ? consentBy(w) : '', ASK_WA].filter(Boolean).join(' ');
    hint.textContent += noWhatsApp();
  };
  const record = async (acepta) => {
    box.checked = acepta;
    box.disabled = true;
    err.hidden = true;
    try {
      show(await putConsent(cliente.id, acepta));
      announce(
        acepta
          ? `${name} acepta avisos por WhatsApp`
          : `${name} ya no recibirá avisos por WhatsApp`,
      );
    } catch (ex) {
      box.checked = !acepta;
      showError(err, ex);
    }
    box.disabled = false;
  };
  box.addEventListener('change', () => record(box.checked));
  const read = get(waPath(cliente.id)).then(
    ({ whatsapp }) => {
      show(whatsapp);
      box.disabled = false;
    },
    (ex) => showError(err, ex),
  );
  return {
    el: h('div', { class: 'whatsapp' }, lw, hint, err),
    record: (acepta) => read.then(() => record(acepta)),
  };
}

// Shows the form in box. barbero: the barber's id to preselect; inicio: an
// ISO instant already chosen (the grid); onDone(cita), onCancel().
export async function nueva(box, { barbero, inicio, onDone, onCancel }) {
  const { servicios, barberos } = await loadCatalog();
  const st = { cliente: null, nuevo: false, inicio: inicio || null, ahora: false };
  const t = h('h2', { tabindex: '-1' }, 'Nueva cita');
  const err = alertBox();
  // a refusal goes once what it speaks of changes (of: 'barbero hora', ...)
  let about = '';
  const refuse = (what, of = '') => {
    showError(err, what);
    about = of;
  };
  const changed = (k) => {
    if (about.includes(k)) err.hidden = true;
  };

  // --- the client ------------------------------------------------------------
  const who = h('div');
  const [ls, search] = field('Buscar cliente (nombre, teléfono o correo)', {
    type: 'search',
    autocomplete: 'off',
  });
  const found = h('p', { class: 'hint', role: 'status' });
  const results = h('div', { class: 'choices' });
  let timer = 0;
  let asked = '';
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(find, 250);
  });
  async function find() {
    const q = search.value.trim();
    if (q.length < 2) {
      results.replaceChildren();
      found.textContent = '';
      return;
    }
    asked = q;
    // one page: the desk picks from a few, and types more to narrow them
    let list, more;
    try {
      ({ clientes: list, siguiente: more } = await get('/api/clientes?' + qs({ q, limit: 20 })));
    } catch (ex) {
      found.textContent = ex.message;
      return;
    }
    if (asked !== q) return;
    found.textContent = more
      ? `Más de ${list.length} clientes: escribe más para acotar.`
      : list.length
        ? `${list.length} ${list.length === 1 ? 'cliente' : 'clientes'}`
        : 'Ningún cliente con esos datos.';
    results.replaceChildren(
      ...list.map((c) =>
        h(
          'button',
          {
            type: 'button',
            class: 'choice',
            onclick: () => {
              st.cliente = c;
              changed('cliente');
              drawWho();
              focus(who.querySelector('p'));
            },
          },
          clientLine(c),
        ),
      ),
    );
  }
  const fresh = {};
  let esperas = null; // the chosen client's waiting-list entries
  let whats = null; // and her WhatsApp consent
  function drawWho() {
    esperas = null;
    if (st.cliente) {
      esperas = deskList(st.cliente);
      whats = deskWhatsApp(st.cliente);
      who.replaceChildren(
        h('p', {}, 'Cliente: ', h('strong', {}, clientLine(st.cliente))),
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            onclick: () => {
              st.cliente = null;
              drawWho();
              search.focus();
            },
          },
          'Cambiar cliente',
        ),
        fixClient(st.cliente, (c) => {
          st.cliente = c;
          drawWho();
          focus(who.querySelector('p'));
          find(); // the search's list, with her new details
        }),
        whats.el,
        esperas.el,
      );
    } else if (st.nuevo) {
      const [ln, nombre] = field('Nombre', { required: true, autocomplete: 'off', maxlength: 200 });
      const [lt, tel] = field('Teléfono', {
        type: 'tel',
        required: true,
        autocomplete: 'off',
        maxlength: 40,
      });
      // the phone or the e-mail: with an e-mail, the phone may stay empty
      const [le, email] = field('Correo electrónico (opcional)', {
        type: 'email',
        autocomplete: 'off',
        maxlength: 320,
        oninput: () => (tel.required = !email.value.trim()),
      });
      // her consent, asked while the shop sends WhatsApp and a phone is typed
      const [lw, wa] = check(WA);
      const waLine = cfg().whatsapp ? h('div', {}, lw, hintFor(wa, ASK_WA)) : null;
      const showWa = () => waLine && (waLine.hidden = !tel.value.trim());
      tel.addEventListener('input', showWa);
      Object.assign(fresh, { nombre, tel, email, wa: waLine && wa });
      nombre.value = /\d/.test(search.value) ? '' : search.value.trim();
      tel.value = /\d/.test(search.value) ? search.value.trim() : '';
      showWa();
      who.replaceChildren(
        ln,
        nombre,
        lt,
        tel,
        waLine,
        le,
        email,
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            onclick: () => {
              st.nuevo = false;
              drawWho();
              search.focus();
            },
          },
          'Buscar un cliente existente',
        ),
      );
    } else {
      who.replaceChildren(
        ls,
        search,
        found,
        results,
        h(
          'p',
          {},
          h(
            'button',
            {
              type: 'button',
              onclick: () => {
                st.nuevo = true;
                changed('cliente');
                drawWho();
                focus(fresh.nombre.value ? fresh.tel : fresh.nombre);
              },
            },
            'Cliente nuevo',
          ),
        ),
      );
    }
  }
  drawWho();
  // a new client's name, phone or e-mail typed again
  who.addEventListener('input', (e) => {
    if (e.target !== search) changed('cliente');
  });
  const newClient = () => ({
    nombre: fresh.nombre.value.trim(),
    telefono: fresh.tel.value.trim(),
    email: fresh.email.value.trim() || undefined,
  });
  // "Acepta avisos por WhatsApp" ticked for a new client (with a phone)
  const wantsWa = () => Boolean(fresh.wa && fresh.wa.checked && fresh.tel.value.trim());
  // a new client's field the API refused (booking her, registering her):
  // said under that field, not here; false for other refusals
  const badField = (ex) => {
    if (!st.nuevo || !badClientField(fresh, ex)) return false;
    err.hidden = true;
    return true;
  };
  // A new client registered without a booking (for the waiting list, POST
  // /api/clientes): then she is the chosen client, and her WhatsApp consent
  // is recorded when she gave it. Resolves to her, or to null when a field
  // was refused (said on it).
  async function register() {
    const wa = wantsWa();
    let c;
    try {
      ({ cliente: c } = await post('/api/clientes', newClient()));
    } catch (ex) {
      if (badField(ex)) return null;
      throw ex;
    }
    st.cliente = c;
    st.nuevo = false;
    drawWho();
    if (wa) await whats.record(true);
    return c;
  }

  // --- service and barber -------------------------------------------------------
  // chosen on purpose: with several services none is preselected (a
  // forgotten choice would book the wrong one); with one, it is that one
  const [lsv, servicio] = field('Servicio', { tag: 'select', 'aria-required': 'true' });
  if (servicios.length > 1) servicio.append(h('option', { value: '' }, 'Elige un servicio'));
  servicio.append(
    ...servicios.map((s) =>
      h('option', { value: s.id }, `${s.nombre} · ${s.duracion_min} min · ${euros(s.precio)}`),
    ),
  );
  const svcErr = alertBox();
  svcErr.id = servicio.id + '-e';
  servicio.setAttribute('aria-describedby', svcErr.id);
  servicio.addEventListener('change', () => {
    if (servicio.value) svcErr.hidden = true;
    changed('servicio');
  });
  const [lb, barber] = field('Barbero', { tag: 'select' });
  barber.append(
    ...barberos.map((b) => h('option', { value: b.id, selected: b.id === barbero }, b.nombre)),
  );
  barber.addEventListener('change', () => changed('barbero'));

  // --- the hour -------------------------------------------------------------------
  const when = h('div');
  let shown = null; // the slot picker shown
  // a full day: the client on its waiting list (shown with the picker)
  const espera = deskWaitForm({
    cliente: () => st.cliente || (st.nuevo ? { nombre: fresh.nombre.value.trim() } : null),
    register,
    servicio: () => servicios.find((s) => s.id === servicio.value),
    barbero: () => barberos.find((b) => b.id === barber.value),
    day: () => (shown ? shown.day() : null),
    onAdded: () => esperas && esperas.load(),
  });
  function drawWhen(openPicker) {
    const ahora = h(
      'button',
      {
        type: 'button',
        onclick: () => {
          st.ahora = true;
          st.inicio = null;
          changed('hora');
          drawWhen();
          focus(when.querySelector('p'));
        },
      },
      'Ahora (sin cita, ya está aquí)',
    );
    espera.hidden = Boolean(((st.inicio || st.ahora) && !openPicker) || !servicio.value);
    if ((st.inicio || st.ahora) && !openPicker) {
      when.replaceChildren(
        h(
          'p',
          {},
          'Hora: ',
          h('strong', {}, st.ahora ? `ahora (${hm(new Date())})` : whenFull(st.inicio)),
        ),
        h(
          'p',
          { class: 'actions' },
          h('button', { type: 'button', onclick: () => drawWhen(true) }, 'Elegir otra hora'),
          st.ahora ? null : ahora,
        ),
      );
      return;
    }
    if (!servicio.value) {
      // the free hours depend on the service: the picker waits for it
      shown = null;
      when.replaceChildren(
        h('p', { class: 'actions' }, ahora),
        h('p', { class: 'hint' }, 'Elige el servicio para ver las horas libres.'),
      );
      return null;
    }
    // the desk's own free slots: from now on, without the online notice
    const pk = picker({
      huecos: '/api/agenda/huecos?' + qs({ servicio_id: servicio.value, barbero_id: barber.value }),
      heading: 'Elige día y hora',
      onPick: (hu) => {
        st.inicio = hu.inicio;
        st.ahora = false;
        changed('hora');
        drawWhen();
        focus(when.querySelector('p'));
      },
    });
    when.replaceChildren(h('p', { class: 'actions' }, ahora), pk.el);
    shown = pk;
    pk.open();
    return pk;
  }
  drawWhen();
  // Another service or barber: the picker shows theirs while no hour is
  // chosen; an hour chosen (or tapped on the grid) stays, and the booking's
  // answer judges it (a 409, or out of hours)
  const again = () => {
    if (!st.inicio && !st.ahora) drawWhen();
  };
  servicio.addEventListener('change', again);
  barber.addEventListener('change', again);

  const [lnt, notas] = field('Notas para el barbero (opcional)', {
    tag: 'textarea',
    rows: '2',
    maxlength: '500',
  });
  const [lfh, fuera] = check('Fuera de horario (aunque el barbero no trabaje a esa hora)');
  fuera.addEventListener('change', () => changed('fuera'));

  const btn = h('button', { type: 'submit', class: 'primary' }, 'Reservar cita');
  const form = h(
    'form',
    {
      class: 'form',
      onsubmit: async (e) => {
        e.preventDefault();
        err.hidden = true;
        const body = {
          barbero_id: barber.value,
          servicio_id: servicio.value,
          fecha_inicio: st.ahora ? new Date().toISOString() : st.inicio,
          notas: notas.value.trim() || undefined,
          fuera_de_horario: fuera.checked || undefined,
        };
        if (st.cliente) body.cliente_id = st.cliente.id;
        else if (st.nuevo) body.cliente = newClient();
        if (!body.cliente_id && !body.cliente) {
          refuse('Elige un cliente o añade uno nuevo.', 'cliente');
          return search.focus();
        }
        if (!body.servicio_id) {
          showError(svcErr, 'Elige el servicio que se va a hacer.');
          return servicio.focus();
        }
        if (!body.fecha_inicio) return refuse('Elige la hora, o «Ahora».', 'hora');
        btn.disabled = true;
        try {
          const { cita } = await post('/api/agenda/citas', body);
          const name = st.cliente ? st.cliente.nombre : body.cliente.nombre;
          // a new client's WhatsApp consent; refused, said (she is booked)
          const wa =
            body.cliente && wantsWa()
              ? await putConsent(cita.cliente_id, true).then(
                  () => `. ${WA}`,
                  (ex) => `. No se pudo guardar que acepta avisos por WhatsApp: ${ex.message}`,
                )
              : '';
          announce(`Cita reservada: ${name}, ${whenFull(cita.fecha_inicio)}${wa}`);
          onDone(cita);
        } catch (ex) {
          btn.disabled = false;
          if (badField(ex)) return;
          // a walk-in whose barber is with someone: said as it is
          if (ex.status === 409 && st.ahora && ex.message === 'El horario ya no está disponible') {
            const who = barber.selectedOptions[0] ? barber.selectedOptions[0].textContent : '';
            refuse(
              `${who || 'El barbero'} está ocupado ahora: elige otra hora u otro barbero.`,
              'barbero hora',
            );
            return focus(err);
          }
          // an hour taken, or out of the barber's hours
          const hour = ex.status === 409 || ex.message === 'Fuera del horario del barbero';
          refuse(ex, hour ? 'hora barbero servicio fuera' : '');
          focus(err);
        }
      },
    },
    h('fieldset', {}, h('legend', {}, 'Cliente'), who),
    lsv,
    servicio,
    svcErr,
    lb,
    barber,
    h('fieldset', {}, h('legend', {}, 'Hora'), when, espera),
    lnt,
    notas,
    lfh,
    err,
    h(
      'p',
      { class: 'actions sticky' },
      btn,
      h('button', { type: 'button', class: 'ghost', onclick: onCancel }, 'Volver a la agenda'),
    ),
  );
  box.replaceChildren(t, form);
  focus(t);
  return t;
}
