// cuenta.js - the client's own account: a forgotten password
// (POST /api/auth/recuperar), the page of its link (/restablecer#token=...,
// POST /api/auth/restablecer), the page that confirms a new address
// (/confirmar-email#token=...), and "Mi cuenta" (PATCH and DELETE
// /api/auth/me, GET /api/auth/me/datos, /api/auth/me/consentimientos).
import { api, get, post, session, signedIn, signedOut } from './api.js';
import { h, page, alertBox, showError, go, announce } from './ui.js';

function field(id, label, attrs, hint) {
  const a = Object.assign({ id, name: id }, attrs);
  if (hint) a['aria-describedby'] = id + '-ayuda';
  return [
    h('label', { for: id }, label),
    hint ? h('p', { class: 'hint', id: id + '-ayuda' }, hint) : null,
    h('input', a),
  ];
}

// A form that sends its data and shows what came back, or the error.
function form(label, fields, send, opts) {
  const err = alertBox();
  const ok = h('p', { class: 'ok', role: 'status', hidden: true });
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
        ok.hidden = true;
        try {
          const msg = await send(new FormData(f), f);
          if (msg) {
            ok.textContent = msg;
            ok.hidden = false;
          }
        } catch (ex) {
          showError(err, ex);
        }
        btn.disabled = false;
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
    h('p', {}, h('a', { href: '/entrar' }, 'Volver a entrar')),
  );
}

let resetToken = null;
export function restablecer() {
  resetToken = linkToken() || resetToken;
  if (!resetToken) {
    page(
      'Enlace incompleto',
      h('p', {}, 'Abre el enlace tal como llegó en el correo, o pide otro.'),
      h('p', {}, h('a', { href: '/recuperar' }, 'Pedir otro enlace')),
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
        go('/mis-citas');
      },
    ),
    h('p', {}, h('a', { href: '/recuperar' }, 'Pedir otro enlace')),
  );
}

export async function confirmarEmail() {
  const t = linkToken();
  const box = alertBox();
  page('Confirmar tu nuevo email', box);
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
        h('p', {}, h('a', { href: '/entrar' }, 'Entrar')),
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

export async function cuenta() {
  const me = await session(true);
  if (!me) {
    go('/entrar?volver=/cuenta');
    return;
  }
  const p = me.perfil || {};
  const { consentimientos: c } = await get('/api/auth/me/consentimientos');

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
    async (d) => {
      await api('PATCH', '/api/auth/me', {
        nombre: d.get('nombre'),
        telefono: d.get('telefono') || null,
      });
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
    'Cambiar email',
    [
      ...field(
        'email-nuevo',
        'Email nuevo',
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
    section('Email', correo),
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
    section(
      'Tus datos, para llevártelos',
      h(
        'p',
        {},
        h(
          'a',
          { href: '/api/auth/me/datos', download: 'mis-datos.json', id: 'descargar' },
          'Descargar mis datos (JSON)',
        ),
      ),
    ),
    section(
      'Eliminar la cuenta',
      h(
        'p',
        {},
        'Se cancelan tus citas futuras y se borran tu acceso, tu teléfono, tu email y tus fotos. ' +
          'Las citas pasadas quedan en los libros de la barbería sin tu nombre.',
      ),
      borrar,
    ),
  );
}
