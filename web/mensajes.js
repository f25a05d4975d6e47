// mensajes.js - what was sent about an appointment (admin): each e-mail and
// WhatsApp message, whether it left and, for WhatsApp, whether it arrived.
import { get } from './api.js';
import { h, focus, whenLabel } from './ui.js';

const TIPOS = {
  confirmacion: 'Confirmación',
  cancelacion: 'Cancelación',
  reprogramacion: 'Cambio de hora',
  recordatorio: 'Recordatorio',
  cierre: 'Cancelación por cierre',
  aviso_espera: 'Aviso de hora libre (lista de espera)',
  aviso_cita: 'Aviso al barbero: cita nueva',
  aviso_cambio: 'Aviso al barbero: cita cambiada',
  aviso_cancelacion: 'Aviso al barbero: cita cancelada',
};
const ESTADOS = {
  pending: 'En cola',
  sent: 'Enviado',
  dropped: 'No se pudo enviar',
  skipped: 'No enviado',
};
const ENTREGAS = {
  sent: 'enviado',
  delivered: 'entregado',
  read: 'leído',
  failed: 'falló la entrega',
};

function line(m) {
  const canal = m.canal === 'whatsapp' ? 'WhatsApp' : 'Correo';
  const antes = m.antelacion_min
    ? m.antelacion_min % 60
      ? ` (${m.antelacion_min} min antes)`
      : ` (${m.antelacion_min / 60} h antes)`
    : '';
  const cuando = m.enviado_en ? ` · ${whenLabel(m.enviado_en)}` : '';
  const entrega = m.entrega
    ? ` · ${ENTREGAS[m.entrega] || m.entrega} ${m.entrega_en ? whenLabel(m.entrega_en) : ''}`
    : '';
  return h(
    'li',
    {},
    h('strong', {}, `${canal}: ${TIPOS[m.tipo] || m.tipo}${antes}`),
    ` · ${ESTADOS[m.estado] || m.estado}${cuando}${entrega}`,
    m.error && m.estado !== 'sent' ? h('span', { class: 'hint' }, ` (${m.error})`) : null,
  );
}

// Shows the messages of appointment c in the element more.
export async function mensajes(c, more) {
  const t = h('h4', { tabindex: '-1' }, 'Mensajes enviados');
  const list = h('div', {}, h('p', { class: 'hint' }, 'Cargando…'));
  more.replaceChildren(t, list);
  focus(t);
  const { mensajes } = await get(`/api/admin/citas/${encodeURIComponent(c.id)}/mensajes`);
  list.replaceChildren(
    mensajes.length
      ? h('ul', { class: 'mensajes' }, mensajes.map(line))
      : h('p', {}, 'No se ha enviado ningún mensaje.'),
  );
}
