// cuenta.js - the client's own account: a forgotten password
// (POST /api/auth/recuperar), the page of its link (/restablecer#token=...,
// POST /api/auth/restablecer), the page that confirms a new address
// (/confirmar-email#token=...), and "Mi cuenta" (PATCH and DELETE
// /api/auth/me, GET /api/auth/me/datos, /api/auth/me/consentimientos,
// GET/PUT /api/auth/me/whatsapp).
import { api, get, post, session, signedIn, signedOut } from './api.js';
import { h, page, alertBox, showError, go, announce, focus, dayLabel, noWhatsApp } from './ui.js';

function field(id, label, attrs, hint) {
  const a = Object.assign({ id, name: id }, attrs);
  if (hint) a['aria-describedby'] = id + '-ayuda';
  return [
    h('label', { for: id }, label),
    hint ? h('p', { class: 'hint', id: id + '-ayuda' }, hint) : null,
    h('input', a),
  ];
}

// A page that takes the place of this one in the history (Back does not
// come back to it): signing in for a page that needs it, or where a link's
// page leads once used.
function instead(path) {
  history.replaceState(null, '', path);
  window.dispatchEvent(new Event('popstate'));
}

// The API's word for a phone it refuses, with what it takes (the front
// desk's hint, mostrador.js).
const TEL_HINT = 'de 6 a 15 cifras (puede llevar +, espacios, guiones o paréntesis).';

// Another action starts: what an earlier one said it did is no longer news.
function clearOk() {
  for (const e of document.querySelectorAll('#main .ok[data-done]')) e.hidden = true;
}

// A form that sends its data and shows what came back, or the error; the
// focus goes to that line (the button was disabled meanwhile).
function form(label, fields, send, opts) {
  const err = alertBox();
  err.setAttribute('tabindex', '-1');
  const ok = h('p', { class: 'ok', role: 'status', tabindex: '-1', 'data-done': '', hidden: true });
  const btn = h('button', { type: 'submit', class: (opts && opts.cls) || 'primary' }, label);
  const f = h(
    'form',
    {
      class: 'form',
      method: 'post',
      onsubmit: async (e) => {
        e.preventDefault();
        btn.disabled = true;
        err.hidden = true;
        clearOk();
        let to = null;
        try {
          const msg = await send(new FormData(f), f);
          if (msg) {
            ok.textContent = msg;
            ok.hidden = false;
            to = ok;
          }
        } catch (ex) {
          showError(err, ex);
          to = err;
        }
        btn.disabled = false;
        if (to && to.isConnected) to.focus();
      },
    },
    ...fields,
    err,
    ok,
    h('p', { class: 'actions' }, btn),
  );
  return f;
}

// The token of a link, from the fragment (which no server ever sees),
// then taken off the address bar.
function linkToken() {
  const t = new URLSearchParams(location.hash.slice(1)).get('token');
  if (location.hash) history.replaceState(null, '', location.pathname);
  return t;
}

export function recuperar() {
  page(
    '¿Olvidaste tu contraseña?',
    h(
      'p',
      {},
      'Escribe el correo de tu cuenta y te enviaremos un enlace para elegir una contraseña nueva. ' +
        'Si te dimos de alta en la barbería y aún no tienes contraseña, sirve igual.',
    ),
    form(
      'Enviar enlace',
      field('email', 'Correo electrónico', {
        type: 'email',
        autocomplete: 'email',
        inputmode: 'email',
        required: true,
      }),
      async (d) => {
        await post('/api/auth/recuperar', { email: d.get('email') });
        return 'Si ese correo es de una cuenta, te llegará un enlace en unos minutos. Sirve una vez durante 30 minutos.';
      },
    ),
    h('p', {}, h('a', { class: 'tap', href: '/entrar' }, 'Volver a entrar')),
  );
}

let resetToken = null;
export function restablecer() {
  resetToken = linkToken() || resetToken;
  if (!resetToken) {
    page(
      'Enlace incompleto',
      h('p', {}, 'Abre el enlace tal como llegó en el correo, o pide otro.'),
      h('p', {}, h('a', { class: 'tap', href: '/recuperar' }, 'Pedir otro enlace')),
    );
    return;
  }
  page(
    'Elige tu contraseña',
    form(
      'Guardar y entrar',
      field(
        'password',
        'Contraseña nueva',
        { type: 'password', autocomplete: 'new-password', minlength: '6', required: true },
        'Mínimo 6 caracteres.',
      ),
      async (d) => {
        await post('/api/auth/restablecer', { token: resetToken, password: d.get('password') });
        resetToken = null;
        await signedIn();
        announce('Contraseña guardada. Sesión iniciada');
        instead('/mis-citas');
      },
    ),
    h('p', {}, h('a', { class: 'tap', href: '/recuperar' }, 'Pedir otro enlace')),
  );
}

export async function confirmarEmail() {
  const t = linkToken();
  const box = alertBox();
  page('Confirmar tu nuevo correo', box);
  if (!t) {
    showError(box, 'Abre el enlace tal como llegó en el correo.');
    return;
  }
  try {
    const r = await post('/api/auth/confirmar-email', { token: t });
    box.remove();
    document
      .getElementById('main')
      .append(
        h('p', { class: 'ok', role: 'status' }, `Listo: tu cuenta usa ahora ${r.email}.`),
        h('p', {}, h('a', { class: 'tap', href: '/entrar' }, 'Entrar')),
      );
    await session(true);
  } catch (e) {
    showError(box, e);
  }
}

function section(title, ...kids) {
  const id = 'sec-' + title.toLowerCase().replace(/[^a-z]+/g, '-');
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), ...kids);
}

// Who made the last change of her WhatsApp consent, and on which day, told
// to her as the front desk reads it (mostrador.js, consentBy).
function consentBy(w) {
  const on = dayLabel(w.acepta ? w.otorgado_en : w.retirado_en);
  if (w.registrado_por) return `${w.acepta ? 'Registrado' : 'Retirado'} en el mostrador el ${on}.`;
  return `Lo ${w.acepta ? 'aceptaste' : 'retiraste'} desde tu cuenta el ${on}.`;
}

// "Avisos por WhatsApp": whether they are on, to which number, since when
// (w: GET /api/auth/me/whatsapp's consent, or an error when it could not be
// read); turning them on for a number (her profile's phone by default) or
// off (PUT). Returns the section and profile(tel), which makes a phone just
// saved in "Tus datos" the default while she has not typed another.
function whatsapp(w, phone) {
  const estado = h('p', { id: 'whatsapp-estado', tabindex: '-1' });
  const err = alertBox();
  const num = h('input', {
    id: 'whatsapp-tel',
    name: 'whatsapp-tel',
    type: 'tel',
    autocomplete: 'tel',
    'aria-describedby': 'whatsapp-tel-ayuda',
  });
  const activar = h('button', { type: 'submit', class: 'primary' });
  const desactivar = h(
    'button',
    { type: 'button', onclick: () => send(false) },
    'Desactivar avisos por WhatsApp',
  );
  const actions = h('p', { class: 'actions' });
  let on = false;
  const show = (c) => {
    on = c.acepta;
    estado.textContent = on
      ? `Recibes avisos por WhatsApp en el ${c.telefono}. ${consentBy(c)}`
      : ['No recibes avisos por WhatsApp.', c.retirado_en ? consentBy(c) : '']
          .filter(Boolean)
          .join(' ');
    num.value = num.defaultValue = (on ? c.telefono : phone || c.telefono) || '';
    activar.textContent = on ? 'Cambiar número' : 'Activar avisos por WhatsApp';
    actions.replaceChildren(...(on ? [activar, desactivar] : [activar]));
  };
  async function send(acepta) {
    clearOk();
    activar.disabled = desactivar.disabled = true;
    err.hidden = true;
    try {
      const tel = num.value.trim();
      const body = acepta && tel ? { acepta, telefono: tel } : { acepta };
      const { whatsapp: c } = await api('PUT', '/api/auth/me/whatsapp', body);
      show(c);
      announce(
        acepta
          ? `Avisos por WhatsApp activados en el ${c.telefono}`
          : 'Avisos por WhatsApp desactivados',
      );
      focus(estado); // the button was disabled (and "Desactivar" is gone)
    } catch (ex) {
      showError(err, ex);
      if (acepta) num.focus();
    }
    activar.disabled = desactivar.disabled = false;
  }
  if (w instanceof Error) {
    show({ acepta: false });
    estado.textContent = 'No hemos podido leer tus avisos por WhatsApp.';
    showError(err, w);
  } else show(w);
  const f = h(
    'form',
    {
      class: 'form',
      method: 'post',
      onsubmit: (e) => {
        e.preventDefault();
        send(true);
      },
    },
    h('label', { for: num.id }, 'Número de WhatsApp'),
    h(
      'p',
      { class: 'hint', id: 'whatsapp-tel-ayuda' },
      'Te enviaremos por WhatsApp las confirmaciones, cambios y recordatorios de tus citas y los avisos de horas libres, con tu enlace personal.',
      noWhatsApp(),
    ),
    num,
    err,
    actions,
  );
  return {
    el: section('Avisos por WhatsApp', estado, f),
    profile(tel) {
      phone = tel;
      if (!on && num.value === num.defaultValue) num.value = num.defaultValue = tel || '';
    },
  };
}

export async function cuenta() {
  const me = await session(true);
  if (!me) {
    instead('/entrar?volver=/cuenta');
    return;
  }
  const p = me.perfil || {};
  const [{ consentimientos: c }, w] = await Promise.all([
    get('/api/auth/me/consentimientos'),
    get('/api/auth/me/whatsapp').then(
      (r) => r.whatsapp,
      (ex) => ex,
    ),
  ]);
  const wa = whatsapp(w, p.telefono);

  const datos = form(
    'Guardar',
    [
      ...field('nombre', 'Nombre', { autocomplete: 'name', value: p.nombre || '' }),
      ...field('telefono', 'Teléfono', {
        type: 'tel',
        autocomplete: 'tel',
        value: p.telefono || '',
      }),
    ],
    async (d, f) => {
      const tel = f.elements.telefono;
      tel.removeAttribute('aria-invalid');
      try {
        await api('PATCH', '/api/auth/me', {
          nombre: d.get('nombre'),
          telefono: d.get('telefono') || null,
        });
      } catch (ex) {
        if (ex.message !== 'Teléfono inválido') throw ex;
        // the server's words, and what it takes; the field marked
        tel.setAttribute('aria-invalid', 'true');
        throw new Error(`${ex.message}: ${TEL_HINT}`);
      }
      wa.profile(d.get('telefono'));
      await session(true);
      return 'Datos guardados.';
    },
  );

  const clave = form(
    'Cambiar contraseña',
    [
      ...field('actual', 'Contraseña actual', {
        type: 'password',
        autocomplete: 'current-password',
        required: true,
      }),
      ...field(
        'nueva',
        'Contraseña nueva',
        { type: 'password', autocomplete: 'new-password', minlength: '6', required: true },
        'Mínimo 6 caracteres. Se cerrarán tus sesiones en otros dispositivos.',
      ),
    ],
    async (d, f) => {
      await api('PATCH', '/api/auth/me', {
        password: d.get('nueva'),
        password_actual: d.get('actual'),
      });
      f.reset();
      return 'Contraseña cambiada.';
    },
  );

  const correo = form(
    'Cambiar correo',
    [
      ...field(
        'email-nuevo',
        'Correo electrónico nuevo',
        { type: 'email', autocomplete: 'email', inputmode: 'email', required: true },
        `Ahora: ${me.user.email}. El cambio se hace al abrir el enlace que enviaremos al nuevo.`,
      ),
      ...field('email-clave', 'Contraseña actual', {
        type: 'password',
        autocomplete: 'current-password',
        required: true,
      }),
    ],
    async (d, f) => {
      const r = await api('PATCH', '/api/auth/me', {
        email: d.get('email-nuevo'),
        password_actual: d.get('email-clave'),
      });
      f.reset();
      return `Te hemos enviado un enlace a ${r.email_pendiente}.`;
    },
  );

  const fotos = h('input', {
    type: 'checkbox',
    id: 'fotos',
    checked: c.fotos === true,
    onchange: async (e) => {
      clearOk();
      const want = e.target.checked;
      if (!want && !confirm('Se borrarán las fotos de tus cortes. ¿Seguir?')) {
        e.target.checked = true;
        return;
      }
      try {
        await post('/api/auth/me/consentimientos', { fotos: want });
        announce(want ? 'Permiso para fotos dado' : 'Permiso retirado y fotos borradas');
      } catch (ex) {
        e.target.checked = !want;
        announce(ex.message);
      }
    },
  });

  const borrar = form(
    'Eliminar mi cuenta',
    field('borrar-clave', 'Tu contraseña, para confirmar', {
      type: 'password',
      autocomplete: 'current-password',
      required: true,
    }),
    async (d) => {
      await api('DELETE', '/api/auth/me', { password: d.get('borrar-clave') });
      signedOut();
      announce('Tu cuenta se ha eliminado');
      go('/');
    },
    { cls: 'danger' },
  );

  page(
    'Mi cuenta',
    section('Tus datos', datos),
    section('Contraseña', clave),
    section('Correo electrónico', correo),
    section(
      'Fotos de tus cortes',
      h(
        'p',
        { class: 'check' },
        fotos,
        h('label', { for: 'fotos' }, ' Acepto que la barbería guarde fotos de mis cortes'),
      ),
      h('p', { class: 'hint' }, 'Si lo retiras, borramos las que haya.'),
    ),
    wa.el,
    section(
      'Tus datos, para llevártelos',
      h(
        'p',
        {},
        h(
          'a',
          { class: 'tap', href: '/api/auth/me/datos', download: 'mis-datos.json', id: 'descargar' },
          'Descargar mis datos (JSON)',
        ),
      ),
    ),
    section(
      'Eliminar la cuenta',
      h(
        'p',
        {},
        'Se cancelan tus citas futuras y se borran tu acceso, tu teléfono, tu correo y tus fotos. ' +
          'Las citas pasadas quedan en los libros de la barbería sin tu nombre.',
      ),
      borrar,
    ),
  );
}
