// main.js - starts the app: settings, session, navigation, and the page of
// the current path (its module loaded on demand).
import { loadConfig, session, signedOut, post, rol, noConnection } from './api.js';
import { h, page, go, announce, alertBox, showError } from './ui.js';

// A page's module that could not be loaded: the server is out of reach.
const load = (p) =>
  p.catch(() => {
    throw noConnection();
  });
const pages = {
  '/': () => load(import('./book.js')).then((m) => m.home()),
  '/reservar': () => load(import('./book.js')).then((m) => m.book()),
  '/entrar': () => load(import('./auth.js')).then((m) => m.signin()),
  '/registro': () => load(import('./auth.js')).then((m) => m.signup()),
  '/mis-citas': () => load(import('./citas.js')).then((m) => m.mine()),
  '/agenda': () => load(import('./agenda.js')).then((m) => m.agenda()),
  '/admin': () => load(import('./admin.js')).then((m) => m.admin()),
  '/cuenta': () => load(import('./cuenta.js')).then((m) => m.cuenta()),
  '/recuperar': () => load(import('./cuenta.js')).then((m) => m.recuperar()),
  '/restablecer': () => load(import('./cuenta.js')).then((m) => m.restablecer()),
  '/confirmar-email': () => load(import('./cuenta.js')).then((m) => m.confirmarEmail()),
  // an appointment's personal link: /c/<token>
  '/c/': () => load(import('./gestion.js')).then((m) => m.show()),
};
const pageOf = (path) => pages[path] || (path.startsWith('/c/') ? pages['/c/'] : undefined);

async function nav() {
  const me = await session();
  const r = rol(me);
  const here = location.pathname;
  const link = (href, text) =>
    h('a', { href, 'aria-current': here === href ? 'page' : null }, text);
  const items = [link('/reservar', 'Reservar')];
  if (me) {
    items.push(link('/mis-citas', 'Mis citas'));
    if (r === 'barbero' || r === 'admin') items.push(link('/agenda', 'Agenda'));
    if (r === 'admin') items.push(link('/admin', 'Admin'));
    items.push(link('/cuenta', 'Mi cuenta'));
    items.push(h('button', { type: 'button', class: 'link', onclick: signout }, 'Salir'));
  } else {
    items.push(link('/entrar', 'Entrar'), link('/registro', 'Crear cuenta'));
  }
  document.getElementById('nav').replaceChildren(
    h(
      'ul',
      {},
      items.map((i) => h('li', {}, i)),
    ),
  );
}

async function signout() {
  try {
    await post('/api/auth/logout');
  } catch {
    /* the session is gone either way */
  }
  signedOut();
  announce('Has salido');
  go('/');
}

let shown = 0;
async function render() {
  const show = pageOf(location.pathname);
  // a page change without a reload: what it loads is counted from here
  if (shown++) performance.mark('page');
  await nav();
  try {
    if (show) await show();
    else page('Página no encontrada', h('p', {}, h('a', { href: '/' }, 'Volver al inicio')));
  } catch (e) {
    const err = alertBox();
    showError(err, e);
    page(
      'Algo ha fallado',
      err,
      h('p', {}, h('button', { type: 'button', onclick: render }, 'Reintentar')),
    );
  }
}

// Links to our own pages change the page without reloading.
document.addEventListener('click', (e) => {
  const a = e.target.closest('a[href]:not([href^="#"])');
  if (
    !a ||
    e.defaultPrevented ||
    e.button !== 0 ||
    e.metaKey ||
    e.ctrlKey ||
    e.shiftKey ||
    a.target ||
    a.hasAttribute('download')
  )
    return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !pageOf(url.pathname)) return;
  e.preventDefault();
  go(url.pathname + url.search);
});
window.addEventListener('popstate', render);
// a session gone while a page is open: the menu offers signing in again
window.addEventListener('signedout', () => nav().catch(() => {}));

loadConfig().then(render);
