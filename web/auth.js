// auth.js - sign in, sign up (POST /api/auth/login, /api/auth/signup).
import { post, session, signedIn, rol } from './api.js';
import { h, page, focus, alertBox, showError, announce } from './ui.js';

function field(id, label, attrs, hint) {
  const input = h('input', Object.assign({ id, name: id, required: true }, attrs));
  return [
    h('label', { for: id }, label),
    hint ? h('p', { class: 'hint', id: id + '-ayuda' }, hint) : null,
    input,
  ];
}

// ?volver= as a path of this origin, or null. It is judged as the browser
// reads it: "/\\host" or "/<tab>/host" start with one "/" but name another
// host (history.replaceState refuses those: sign-in then ended on an error
// naming it).
function ownPath(v) {
  if (!v || !v.startsWith('/')) return null;
  try {
    const u = new URL(v, location.origin);
    return u.origin === location.origin ? u.pathname + u.search + u.hash : null;
  } catch {
    return null;
  }
}

// Where to go once signed in: ?volver= when it is a page of ours, else
// her role's page. It takes the place of the sign-in page in the history
// (replaceState): Back never shows the form again, nor re-runs the step
// that sent her here (a booking she has just made).
function after(me) {
  const v = ownPath(new URLSearchParams(location.search).get('volver'));
  const r = rol(me);
  const to = v || (r === 'admin' ? '/admin' : r === 'barbero' ? '/agenda' : '/mis-citas');
  history.replaceState(null, '', to);
  window.dispatchEvent(new Event('popstate'));
}

// explain(err) -> extra content shown after an error's message, or null
function form(submitLabel, fields, send, explain = () => null) {
  const err = alertBox();
  const btn = h('button', { type: 'submit', class: 'primary' }, submitLabel);
  const f = h(
    'form',
    {
      class: 'form',
      method: 'post',
      novalidate: false,
      onsubmit: async (e) => {
        e.preventDefault();
        btn.disabled = true;
        err.hidden = true;
        try {
          await send(new FormData(f));
          const me = await signedIn();
          announce('Sesión iniciada');
          after(me);
        } catch (ex) {
          showError(err, ex);
          const more = explain(ex);
          if (more) err.append(' ', ...more);
          btn.disabled = false;
          focus(err); // the button had the focus, and was disabled
        }
      },
    },
    ...fields,
    err,
    h('p', { class: 'actions' }, btn),
  );
  return f;
}

const keep = () => location.search;

// Signed in already (Back or Forward to these pages, a bookmark): on to
// where she was going.
async function already() {
  const me = await session().catch(() => null);
  if (me) after(me);
  return !!me;
}

export async function signin() {
  if (await already()) return;
  page(
    'Entrar',
    form(
      'Entrar',
      [
        ...field('email', 'Correo electrónico', {
          type: 'email',
          autocomplete: 'username',
          inputmode: 'email',
        }),
        ...field('password', 'Contraseña', { type: 'password', autocomplete: 'current-password' }),
      ],
      (d) => post('/api/auth/login', { email: d.get('email'), password: d.get('password') }),
    ),
    h('p', {}, h('a', { class: 'tap', href: '/recuperar' }, '¿Olvidaste tu contraseña?')),
    h(
      'p',
      {},
      '¿Primera vez? ',
      h('a', { class: 'tap', href: '/registro' + keep() }, 'Crea tu cuenta'),
    ),
  );
}

export async function signup() {
  if (await already()) return;
  page(
    'Crear cuenta',
    form(
      'Crear cuenta',
      [
        ...field('nombre', 'Nombre', { autocomplete: 'name' }),
        ...field('email', 'Correo electrónico', {
          type: 'email',
          autocomplete: 'email',
          inputmode: 'email',
        }),
        ...field('telefono', 'Teléfono (opcional)', {
          type: 'tel',
          autocomplete: 'tel',
          required: false,
        }),
        ...field(
          'password',
          'Contraseña',
          {
            type: 'password',
            autocomplete: 'new-password',
            minlength: '6',
            'aria-describedby': 'password-ayuda',
          },
          'Mínimo 6 caracteres.',
        ),
      ],
      (d) =>
        post('/api/auth/signup', {
          nombre: d.get('nombre'),
          email: d.get('email'),
          password: d.get('password'),
          telefono: d.get('telefono') || undefined,
        }),
      // the address is taken: hers from the front desk (a link to choose
      // her password is on its way to it), or an account she forgot
      (ex) =>
        ex.status === 409
          ? [
              'Si la barbería ya te dio de alta con este correo, te hemos enviado un enlace para ' +
                'elegir tu contraseña. Si ya tenías cuenta, ',
              h('a', { href: '/entrar' + keep() }, 'entra'),
              ' o ',
              h('a', { href: '/recuperar' }, 'recupera tu contraseña'),
              '.',
            ]
          : null,
    ),
    h('p', {}, '¿Ya tienes cuenta? ', h('a', { class: 'tap', href: '/entrar' + keep() }, 'Entra')),
  );
}
