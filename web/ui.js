// ui.js - building the page: elements, steps and focus, announcements, and
// times in the shop's zone.
import { cfg, qs } from './api.js';

// h('button', {class: 'x', onclick: f}, 'text', child...) -> element
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of kids.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

const main = () => document.getElementById('main');

// Replaces the page: a heading (focused, so a screen reader starts there)
// and the content (null, undefined and false are left out, as in h()).
export function page(title, ...kids) {
  document.title = title + ' · Barbería';
  const h1 = h('h1', { tabindex: '-1' }, title);
  main().replaceChildren(
    h1,
    ...kids.flat().filter((c) => c !== null && c !== undefined && c !== false),
  );
  h1.focus();
  return h1;
}

// Moves the focus to a step's heading, a line or a control (a control
// keeps its place in the tab order; anything else becomes focusable).
export function focus(el) {
  if (!el) return;
  if (el.tabIndex < 0 && !el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
  el.focus();
}

// Says something to everyone, covering nothing: the live region (#status,
// role=status, out of sight) reads it out, and a line in the page's own
// flow shows it where the action left the focus (after the heading, line
// or form the focus is in), never over a control. While the action draws
// its result (a redraw, the focus moved, another page) the line follows
// the focus; the first tap or key (or 10 s) fixes it where it is, and it
// stays until the next announcement or until its part of the page is
// drawn again. shown: the page already shows these words (only read out).
let timer = 0;
let said = null; // the line shown
let until = 0; // it follows the focus until then
export function announce(msg, { shown = false } = {}) {
  const s = document.getElementById('status');
  s.textContent = '';
  clearTimeout(timer);
  setTimeout(() => {
    s.textContent = msg;
  }, 30);
  timer = setTimeout(() => {
    s.textContent = '';
  }, 8000);
  if (said) said.remove();
  said = shown ? null : h('p', { class: 'said' }, msg);
  until = Date.now() + 10000;
  place();
}
// Puts the line after the block that holds the focus (the page's heading
// when the focus is elsewhere): inside a list item, at its end; out of a
// row of buttons or a grid, after the whole row.
function place() {
  if (!said || Date.now() > until) return;
  const m = main();
  let at = document.activeElement;
  if (!at || at === m || !m.contains(at) || said.contains(at)) at = m.querySelector('h1');
  if (!at) return;
  let el = at.closest('li, p, h1, h2, h3, h4, form') || at;
  while (
    el.tagName !== 'LI' &&
    el.parentElement &&
    el.parentElement !== m &&
    /flex|grid/.test(getComputedStyle(el.parentElement).display)
  )
    el = el.parentElement;
  if (el.tagName === 'LI') {
    if (said.parentElement !== el || said.nextSibling) el.append(said);
  } else if (el.nextSibling !== said) el.after(said);
}
document.addEventListener('focusin', place);
new MutationObserver(place).observe(main(), { childList: true, subtree: true });
for (const ev of ['pointerdown', 'keydown']) document.addEventListener(ev, () => (until = 0), true);

// An error line inside a form or step (role=alert is read at once). A lost
// session (api.js: ApiError.expired) says so, with a way back to this page
// through signing in.
export const alertBox = () => h('p', { class: 'alert', role: 'alert', hidden: true });
export function showError(box, err) {
  if (err && err.expired) box.replaceChildren(...expiredText());
  else box.textContent = err && err.message ? err.message : String(err);
  box.hidden = false;
}
// A control's own refusal (err): a line right under it (role=alert), the
// control marked aria-invalid and described by the line besides its hints,
// and the focus on it; an edit of the control takes the line and the mark away.
export function fieldError(el, err) {
  const id = el.id + '-e';
  const by = (on) => {
    const ids = (el.getAttribute('aria-describedby') || '').split(' ').filter((d) => d && d !== id);
    if (on) ids.push(id);
    if (ids.length) el.setAttribute('aria-describedby', ids.join(' '));
    else el.removeAttribute('aria-describedby');
  };
  let box = document.getElementById(id);
  if (!box) {
    box = Object.assign(alertBox(), { id });
    el.after(box);
    el.addEventListener('input', () => {
      box.hidden = true;
      el.removeAttribute('aria-invalid');
      by(false);
    });
  }
  showError(box, err);
  el.setAttribute('aria-invalid', 'true');
  by(true);
  focus(el);
}
// A failure said in place, with its way out: the error line and
// "Reintentar" (again()), or, for a module of the app that failed to run
// (api.js: brokenModule), "Recargar la página".
export function failure(e, again) {
  const err = alertBox();
  showError(err, e);
  return [
    err,
    h(
      'p',
      {},
      e && e.broken
        ? h('button', { type: 'button', onclick: () => location.reload() }, 'Recargar la página')
        : h('button', { type: 'button', onclick: again }, 'Reintentar'),
    ),
  ];
}
export const expiredText = () => [
  'Tu sesión ha caducado. ',
  h(
    'a',
    { href: '/entrar?' + qs({ volver: location.pathname + location.search }) },
    'Entra de nuevo',
  ),
  ' para seguir.',
];

// Asks before a destructive action, in area (whatever it held is replaced):
// the question (a text, or an element such as a heading) gets the focus, then
// any more (what the action touches), then "yes" (a danger button: runs
// run(), disabled meanwhile; an error shows in the box itself, where the
// eyes and the focus are, and lets it be pressed again) and "no" (empties
// area and focuses back, or calls back if it is a function). Returns the
// box, for run() to redraw.
export function askFirst(area, { question, more = [], yes, no, run, back }) {
  const q = typeof question === 'string' ? h('p', { tabindex: '-1' }, question) : question;
  const err = alertBox();
  const ok = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        ok.disabled = true;
        try {
          await run();
        } catch (ex) {
          ok.disabled = false;
          showError(err, ex);
          focus(err);
        }
      },
    },
    yes,
  );
  const keep = () => {
    if (typeof back === 'function') return back();
    area.replaceChildren();
    if (back) back.focus();
  };
  const box = h(
    'div',
    { class: 'confirm' },
    q,
    more,
    err,
    h('p', { class: 'actions' }, ok, h('button', { type: 'button', onclick: keep }, no)),
  );
  area.replaceChildren(box);
  focus(q);
  return box;
}

// An appointment's state in words, the same on every page (the front
// desk's: "Vino", "No vino" for the attendance it marks).
const ESTADOS = {
  confirmada: 'Confirmada',
  cancelada: 'Cancelada',
  completada: 'Vino',
  no_presentado: 'No vino',
};
export const estadoLabel = (estado) => ESTADOS[estado] || estado;

export function go(path) {
  history.pushState(null, '', path);
  window.dispatchEvent(new Event('popstate'));
}

// A phone number as a link that calls it: a touch target of its own in a
// line of text (a.tap, 44 x 44 px).
export const telLink = (tel) =>
  h('a', { class: 'tap', href: 'tel:' + tel.replace(/[^+\d]/g, '') }, tel);

// An appointment that can no longer be changed here (past the cut-off):
// why (what), and the shop's phone to call (GET /api/config's telefono, or
// the appointment's own page's), when it has one.
export const callShop = (what, tel) =>
  tel ? [what + '. Llámanos: ', telLink(tel)] : what + ': llama a la barbería.';

// Said beside a WhatsApp consent while the shop has no WhatsApp configured
// (GET /api/config): it may still be given, and holds once the shop sends.
export const noWhatsApp = () =>
  cfg().whatsapp
    ? ''
    : ' La barbería aún no envía mensajes por WhatsApp: lo que se elija se guarda para cuando empiece.';

// --- times: always in the shop's zone --------------------------------------
const zona = () => cfg().zona;
export const zoneName = () => zona().split('/').pop().replace(/_/g, ' ');
const fmt = {};
function f(key, opts) {
  const k = key + zona();
  if (!fmt[k]) fmt[k] = new Intl.DateTimeFormat('es-ES', Object.assign({ timeZone: zona() }, opts));
  return fmt[k];
}
const parts = (key, opts, d) =>
  Object.fromEntries(
    f(key, opts)
      .formatToParts(d)
      .map((p) => [p.type, p.value]),
  );

// "2031-05-04" of an instant, in the shop's zone
export function ymd(d) {
  const p = parts('ymd', { year: 'numeric', month: '2-digit', day: '2-digit' }, d);
  return `${p.year}-${p.month}-${p.day}`;
}
export const today = () => ymd(new Date());
// "10:30"
export const hm = (d) =>
  f('hm', { hour: '2-digit', minute: '2-digit', hour12: false }).format(new Date(d));
// "martes 14 de octubre" of an instant
export function dayLabel(d) {
  const p = parts('day', { weekday: 'long', day: 'numeric', month: 'long' }, new Date(d));
  return `${p.weekday} ${p.day} de ${p.month}`;
}
// the same of a calendar date "2031-05-04" (noon UTC is that day in every zone we serve)
const noon = (s) => new Date(s + 'T12:00:00Z');
export const dateLabel = (s) => dayLabel(noon(s));
export function dateShort(s) {
  const p = parts('short', { weekday: 'short', day: 'numeric', month: 'short' }, noon(s));
  return [p.weekday.replace('.', ''), p.day, p.month.replace('.', '')];
}
export function addDays(s, n) {
  const d = new Date(Date.UTC(+s.slice(0, 4), +s.slice(5, 7) - 1, +s.slice(8, 10) + n));
  return d.toISOString().slice(0, 10);
}
// "martes 14 de octubre, 10:30"
export const whenLabel = (iso) => `${dayLabel(iso)}, ${hm(iso)}`;
// "martes 14 de octubre de 2031, 10:30 (hora de Madrid)"
export const whenFull = (iso) => `${whenLabel(iso)} (hora de ${zoneName()})`;

// The UTC instant at which a calendar date begins in the shop's zone (or,
// with min, that many minutes of local time after its midnight: 600 is 10:00).
export function dayStart(s, min = 0) {
  const guess = Date.UTC(+s.slice(0, 4), +s.slice(5, 7) - 1, +s.slice(8, 10), 0, min);
  let t = guess;
  for (let i = 0; i < 2; i++) {
    const p = parts(
      'off',
      {
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
      },
      new Date(t),
    );
    const asUtc = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
    t = guess - (asUtc - t);
  }
  return new Date(t);
}

export const euros = (n) =>
  new Intl.NumberFormat('es-ES', { style: 'currency', currency: 'EUR' }).format(n);
export const mins = (n) => `${n} min`;
