// main.js - starts the app: settings, session, navigation, and the page of
// the current path (its module loaded on demand).
import { loadConfig, session, signedOut, post, rol, loadModule } from './api.js';
import { h, page, go, announce, failure } from './ui.js';

const pages = {
  '/': () => loadModule('./book.js').then((m) => m.home()),
  '/reservar': () => loadModule('./book.js').then((m) => m.book()),
  '/entrar': () => loadModule('./auth.js').then((m) => m.signin()),
  '/registro': () => loadModule('./auth.js').then((m) => m.signup()),
  '/mis-citas': () => loadModule('./citas.js').then((m) => m.mine()),
  '/agenda': () => loadModule('./agenda.js').then((m) => m.agenda()),
  '/admin': () => loadModule('./admin.js').then((m) => m.admin()),
  '/cuenta': () => loadModule('./cuenta.js').then((m) => m.cuenta()),
  '/recuperar': () => loadModule('./cuenta.js').then((m) => m.recuperar()),
  '/restablecer': () => loadModule('./cuenta.js').then((m) => m.restablecer()),
  '/confirmar-email': () => loadModule('./cuenta.js').then((m) => m.confirmarEmail()),
  // an appointment's personal link: /c/<token>
  '/c/': () => loadModule('./gestion.js').then((m) => m.show()),
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

// Signs out; the menu keeps "Salir" while the session may still be open.
async function signout() {
  try {
    await post('/api/auth/logout');
  } catch (e) {
    // a 401: the session had already ended. Any other failure (no
    // connection, a busy server) left it open: saying "Has salido" would
    // leave the next person at this computer signed in as her.
    if (e.status !== 401) {
      announce('No se ha cerrado la sesión. ' + e.message);
      return;
    }
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
    page('Algo ha fallado', failure(e, render));
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
