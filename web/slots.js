// slots.js - the day and free-slot picker (booking and rescheduling).
// Days shown are a week at a time; each day shown is asked for once
// (GET /api/disponibilidad), days without a free slot are disabled, and the
// picker opens on the first day that has one. A day that cannot be read
// is not a day without slots: the picker says the request failed (a lost
// session: that it expired, with a link to sign in again), and a tap on
// that day asks again.
import { get, qs, cfg } from './api.js';
import {
  h,
  announce,
  alertBox,
  showError,
  today,
  addDays,
  dateLabel,
  dateShort,
  whenLabel,
  zoneName,
  ymd,
} from './ui.js';

// `huecos`, when given, names where a day's slots are read instead (a move:
// GET /api/citas/{id}/huecos, where the appointment's own time is free; the
// desk: GET /api/agenda/huecos?servicio_id=&barbero_id=, with no minimum
// notice), `fecha` added to its query;
// `actual`, the start of the appointment being moved: the picker opens on
// its day and shows that time as hers, not to be chosen ("tu hora actual";
// at the front desk, the agenda, staff read "hora actual de la cita").
export function picker({ servicio, barbero, huecos, onPick, heading, actual }) {
  const cache = new Map(); // fecha -> Promise of the answer
  // the time of the appointment being moved: shown, never counted as free
  const hers = (hu) => actual && new Date(hu.inicio).getTime() === new Date(actual).getTime();
  const free = (hs) => hs.filter((hu) => !hers(hu)).length;
  const url = (fecha) =>
    huecos
      ? huecos + (huecos.includes('?') ? '&' : '?') + qs({ fecha })
      : '/api/disponibilidad?' + qs({ servicio_id: servicio, fecha, barbero_id: barbero });
  const fetchDay = (fecha, fresh) => {
    if (fresh || !cache.has(fecha)) {
      const p = get(url(fecha)).catch((e) => {
        cache.delete(fecha);
        throw e;
      });
      cache.set(fecha, p);
    }
    return cache.get(fecha);
  };
  const first = today();
  const last = addDays(first, cfg().dias_max);
  let start = first;
  let chosen = null;

  const title = h('h2', { tabindex: '-1' }, heading || 'Elige día y hora');
  const note = h('p', { class: 'hint' }, `Horas en hora de ${zoneName()}.`);
  const prev = h(
    'button',
    { type: 'button', class: 'ghost', onclick: () => week(addDays(start, -7)) },
    '‹ Semana anterior',
  );
  const next = h(
    'button',
    { type: 'button', class: 'ghost', onclick: () => week(addDays(start, 7)) },
    'Semana siguiente ›',
  );
  const days = h('div', { class: 'days', role: 'group', 'aria-label': 'Días' });
  const slotsTitle = h('h3', { tabindex: '-1' });
  const slots = h('div', { class: 'slots', role: 'group', 'aria-labelledby': 'slots-title' });
  slotsTitle.id = 'slots-title';
  const msg = h('p', { class: 'hint', role: 'status' });
  // a failed request, or a word about the list (a slot lost meanwhile)
  const alert = alertBox();
  const fail = (e) => {
    msg.textContent = '';
    showError(alert, e.expired ? e : 'No se pudieron cargar las horas. Inténtalo de nuevo.');
  };
  let lastFail = null; // the error of the last week() that had one
  const el = h(
    'section',
    { class: 'picker' },
    title,
    note,
    h('div', { class: 'weeknav' }, prev, next),
    days,
    msg,
    slotsTitle,
    alert,
    slots,
  );

  async function week(s, autoOpen) {
    start = s < first ? first : s;
    prev.disabled = start <= first;
    next.disabled = addDays(start, 7) > last;
    const fechas = [];
    for (let i = 0; i < 7; i++) {
      const d = addDays(start, i);
      if (d <= last) fechas.push(d);
    }
    days.replaceChildren(
      ...fechas.map((d) => {
        const [wd, n, m] = dateShort(d);
        return h(
          'button',
          {
            type: 'button',
            class: 'day',
            disabled: true,
            'data-fecha': d,
            'aria-label': dateLabel(d) + ', cargando',
          },
          h('span', {}, wd),
          h('strong', {}, n),
          h('span', {}, m),
        );
      }),
    );
    let failed = null;
    const answers = await Promise.all(
      fechas.map((d) =>
        fetchDay(d).catch((e) => {
          failed = failed || e;
          return null;
        }),
      ),
    );
    if (start !== (s < first ? first : s)) return null; // another week was asked meanwhile
    lastFail = failed;
    let firstFree = null;
    answers.forEach((a, i) => {
      const b = days.children[i];
      const n = a ? free(a.huecos) : 0;
      // a day not read stays enabled: a tap asks again
      b.disabled = a ? n === 0 : false;
      b.setAttribute(
        'aria-label',
        dateLabel(fechas[i]) +
          (!a
            ? ', no se pudo cargar'
            : n
              ? `, ${n} ${n === 1 ? 'hora libre' : 'horas libres'}`
              : ', sin horas libres'),
      );
      b.onclick = () => openDay(fechas[i], true);
      if (n && !firstFree) firstFree = fechas[i];
    });
    if (autoOpen) return firstFree;
    if (chosen && fechas.includes(chosen)) await openDay(chosen, false);
    else if (firstFree) await openDay(firstFree, false);
    else {
      slotsTitle.textContent = 'Horas libres'; // no day open
      slots.replaceChildren();
      msg.textContent = failed ? '' : 'No quedan horas libres esta semana.';
    }
    if (failed) fail(failed);
    return firstFree;
  }

  async function openDay(fecha, moveFocus, fresh) {
    chosen = fecha;
    for (const b of days.children)
      b.setAttribute('aria-pressed', String(b.dataset.fecha === fecha));
    alert.hidden = true;
    let failed = null;
    const a = await fetchDay(fecha, fresh).catch((e) => {
      failed = e;
      return null;
    });
    msg.textContent = '';
    if (failed) fail(failed);
    const huecos = a ? a.huecos : [];
    const suya = location.pathname.startsWith('/agenda')
      ? 'hora actual de la cita'
      : 'tu hora actual';
    slotsTitle.textContent = `Horas libres el ${dateLabel(fecha)}`;
    slots.replaceChildren(
      ...huecos.map((hu) => {
        const time = hu.local || whenLabel(hu.inicio).split(', ')[1];
        return hers(hu)
          ? h(
              'button',
              {
                type: 'button',
                class: 'slot actual',
                disabled: true,
                'aria-label': `${whenLabel(hu.inicio)}, ${suya}`,
              },
              `${time} (${suya})`,
            )
          : h(
              'button',
              {
                type: 'button',
                class: 'slot',
                'aria-label': whenLabel(hu.inicio),
                onclick: () => onPick(hu, fecha),
              },
              time,
            );
      }),
    );
    if (!free(huecos) && a)
      slots.append(h('p', { class: 'hint' }, 'Este día ya no quedan horas libres.'));
    if (moveFocus) slotsTitle.focus();
    return a ? huecos : null;
  }

  // Opens on the day of the appointment being moved, or else on the first
  // day with a free slot, looking ahead week by week.
  // The first day of the week (counted from today) a day falls in.
  const weekOf = (fecha) => {
    const n = Math.round((Date.parse(fecha) - Date.parse(first)) / 86400000);
    return addDays(first, n - (n % 7));
  };

  async function open() {
    const own = actual && ymd(new Date(actual));
    if (own && own >= first && own <= last) {
      chosen = own;
      await week(weekOf(own));
      return own;
    }
    msg.textContent = 'Buscando horas libres…';
    for (let s = first; s <= last; s = addDays(s, 7)) {
      const free = await week(s, true);
      if (free) {
        msg.textContent = '';
        await openDay(free, false);
        if (lastFail) fail(lastFail);
        return free;
      }
      if (lastFail) {
        // not "no free slots": that week could not be read
        slotsTitle.textContent = 'Horas libres';
        slots.replaceChildren();
        fail(lastFail);
        return null;
      }
    }
    msg.textContent = 'No hay horas libres en las próximas semanas.';
    await week(first);
    return null;
  }

  // Asks for a day again (the confirm step, a lost slot): the fresh list.
  // Its week is drawn first when not shown yet (the picker opened on that day).
  async function refresh(fecha) {
    if (!days.children.length || fecha < start || fecha >= addDays(start, 7)) {
      chosen = fecha;
      await week(weekOf(fecha));
    }
    const huecos = await openDay(fecha, false, true);
    if (!huecos) return []; // not read: said, and its day stays as it was
    const i = [...days.children].findIndex((b) => b.dataset.fecha === fecha);
    if (i >= 0) {
      days.children[i].disabled = free(huecos) === 0;
      days.children[i].setAttribute(
        'aria-label',
        dateLabel(fecha) +
          (free(huecos)
            ? `, ${free(huecos)} ${free(huecos) === 1 ? 'hora libre' : 'horas libres'}`
            : ', sin horas libres'),
      );
    }
    return huecos;
  }

  // A word about the list, under the day's heading (a slot lost meanwhile).
  const say = (text) => showError(alert, text);

  return { el, title, slotsTitle, open, refresh, say, fetchDay, announce, day: () => chosen };
}
