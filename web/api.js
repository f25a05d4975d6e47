// api.js - the JSON API of the same origin (the session cookie goes along).
// expired: a 401 from anything but signing in (a session ended: signed
// out elsewhere, a new password, an administrator's change); the flag of
// signedIn() goes with it.
export class ApiError extends Error {
  constructor(status, message, expired) {
    super(message);
    this.status = status;
    this.expired = !!expired;
  }
}

// The server out of reach (a request, or a page's module, not loaded).
export const noConnection = () =>
  new ApiError(0, 'No hay conexión con el servidor. Inténtalo de nuevo.');
// A module of the app that arrived but failed to run (a fault of the app,
// not of the network): trying again in this page would fail the same.
export const brokenModule = () =>
  Object.assign(
    new ApiError(
      0,
      'Esta página no se pudo abrir. Recarga la página; si sigue igual, avisa a la barbería.',
    ),
    { broken: true },
  );

// Loads a module of the app when it is needed (a page's own, such as
// book.js, or one a page opens, such as informes.js), for every page and
// part of a page alike; spec is its relative address, as import() takes it. When import() fails, the module's address is asked for again,
// past the browser's cache: an answer means the network was there and the
// module failed to run (brokenModule, logged with console.error) unless a
// second import() works (the network was back by then); none, that the
// server is out of reach (noConnection). The second import names the file
// with a query: some browsers keep a failed import for the page's life.
export async function loadModule(spec) {
  try {
    return await import(spec);
  } catch {
    const url = new URL(spec, import.meta.url).href;
    const res = navigator.onLine ? await fetch(url, { cache: 'no-store' }).catch(() => null) : null;
    if (!res || !res.ok) throw noConnection();
    try {
      return await import(url + '?' + Date.now());
    } catch (again) {
      console.error('No se pudo ejecutar ' + url + ':', again);
      throw brokenModule();
    }
  }
}

export async function api(method, path, body) {
  const opt = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body instanceof FormData) opt.body = body;
  else if (body !== undefined) {
    opt.headers['Content-Type'] = 'application/json';
    opt.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, opt);
  } catch {
    throw noConnection();
  }
  let data = null;
  if (res.status !== 204) {
    try {
      data = await res.json();
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const expired = res.status === 401 && !path.startsWith('/api/auth/login');
    if (expired) signedOut();
    throw new ApiError(res.status, (data && data.error) || 'Error ' + res.status, expired);
  }
  return data;
}

export const get = (path) => api('GET', path);
export const post = (path, body) => api('POST', path, body === undefined ? {} : body);
export const qs = (o) =>
  Object.entries(o)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v))
    .join('&');

// The session cookie is HttpOnly: a flag remembers that we signed in, so a
// visitor who never did is not asked (and answered 401) on every page.
const FLAG = 'barberia.sesion';
let mine = null;
export function session(refresh) {
  if (!localStorage.getItem(FLAG)) return Promise.resolve(null);
  if (refresh || !mine) {
    mine = get('/api/auth/me').catch((e) => {
      if (e.status === 401) {
        localStorage.removeItem(FLAG);
        return null;
      }
      throw e;
    });
  }
  return mine;
}
export function signedIn() {
  localStorage.setItem(FLAG, '1');
  return session(true);
}
// A session gone (signed out, or a 401: expired) fires 'signedout' on
// window, for the menu to offer signing in again.
export function signedOut() {
  localStorage.removeItem(FLAG);
  mine = null;
  window.dispatchEvent(new Event('signedout'));
}
export const rol = (me) => (me && me.perfil && me.perfil.rol) || 'cliente';

// The shop's settings (GET /api/config), with the defaults of docs/operations.md.
let config = null;
export async function loadConfig() {
  if (config) return config;
  const def = {
    zona: 'UTC',
    paso_min: 15,
    antelacion_min: 120,
    dias_max: 90,
    limite_cancelacion_min: 120,
    tienda: 'Barbería',
    direccion: null,
    telefono: null,
    whatsapp: true,
  };
  try {
    config = Object.assign(def, await get('/api/config'));
  } catch {
    config = def;
  }
  return config;
}
export const cfg = () => config;

// The public catalog, once per page load.
let catalog = null;
export function loadCatalog() {
  if (!catalog) {
    catalog = Promise.all([get('/api/servicios'), get('/api/barberos')])
      .then(([s, b]) => ({ servicios: s.servicios, barberos: b.barberos }))
      .catch((e) => {
        catalog = null;
        throw e;
      });
  }
  return catalog;
}
