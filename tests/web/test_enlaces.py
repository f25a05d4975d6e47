#!/usr/bin/python3
"""web/enlaces - the appointment's personal link and the waiting list, as a
client would use them on her phone, with the e-mails read from the real SMTP
sink the server sends to:
- the confirmation's link opens the appointment without signing in; "Cambiar
  hora" (the slot picker, then a confirmation) moves it, and "Cancelar" (after
  a confirmation) cancels it; the link then shows it cancelled; past the
  cut-off the link and her "Mis citas" show the shop's phone to call; a
  change confirmed on a page drawn before the appointment was cancelled
  elsewhere is refused as such, not as a time someone else took;
- a signed-in client asks "Avísame si se libera" for a day; another client's
  cancel frees a slot; the notice's link opens the booking on that slot and
  she books it.
Every state: axe-core, 360 px, transfer budget, console (webtest.py)."""
import datetime
import os
import re
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By, free_slot  # noqa: E402

def manage_by_link(srv, br, sink, s, b):
    token, _ = srv.signup("ana.enlace@example.com", "Ana Enlace")
    inicio, _ = free_slot(srv, s["id"], b["id"])
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": inicio}, token=token)
    text = sink.wait("ana.enlace@example.com", "Cita confirmada")
    m = re.search(re.escape(srv.base) + r"(/c/[A-Za-z0-9_-]{64})", text)
    assert m, text
    link = m.group(1)
    # not signed in in this browser
    br.open(link)
    br.focused_heading("Tu cita")
    br.see(s["nombre"])
    br.see(b["nombre"])
    br.see("Confirmada")
    br.check("Enlace - cita")
    # change the time: the picker, then the confirmation
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")
    slots = br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot")
    # on her appointment's day, her own time marked and not to be chosen
    own = [e for e in slots if "(tu hora actual)" in e.text]
    assert len(own) == 1 and not own[0].is_enabled(), [e.text for e in slots]
    pick = [e for e in slots if e.is_enabled()][0]
    label = pick.get_attribute("aria-label")
    br.check("Enlace - elegir hora")
    pick.click()
    br.see("Nueva hora:")
    br.check("Enlace - confirmar cambio")
    br.click("Confirmar cambio")
    br.see(label)  # the new time, on the page the answer rendered
    br.focused_heading("Tu cita")
    br.check("Enlace - cambiada")
    # cancel, after a confirmation
    br.click("Cancelar")
    br.see("¿Seguro que quieres cancelar esta cita?")
    br.check("Enlace - confirmar cancelacion")
    br.click("Sí, cancelar")
    br.focused_heading("Cita cancelada")
    br.see("Esta cita está cancelada.")
    # said once: the heading says it, no line repeats it under it
    said = br.d.execute_script("return document.querySelectorAll('main .said').length")
    assert said == 0, "the cancellation is said twice: %s" % br.text()[:300]
    br.check("Enlace - cancelada")
    # the link shows it cancelled afterwards, and offers nothing to change
    br.open(link)
    br.focused_heading("Cita cancelada")
    assert not [e for e in br.d.find_elements(By.TAG_NAME, "button") if e.text == "Cambiar hora"]
    # past the cut-off: the shop's phone, a touch target of its own on a
    # phone (44 x 44 px at least)
    late = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=40)).strftime("%Y-%m-%dT%H:%M:00Z")
    me = srv.ok("GET", "/api/auth/me", token=token)["user"]["id"]
    srv.ok("POST", "/api/agenda/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": late,
                                         "cliente_id": me, "fuera_de_horario": True}, token=srv.admin)
    def new_link():
        for rcpt, _, text in sink.messages():
            m = re.search(re.escape(srv.base) + r"(/c/[A-Za-z0-9_-]{64})", text)
            if "ana.enlace@example.com" in rcpt and m and m.group(1) != link:
                return m.group(1)
        return None
    late_link = br.wait(new_link, timeout=60, what="the late appointment's e-mail")
    br.open(late_link)
    br.focused_heading("Tu cita")
    br.see("Ya no se puede cambiar por aquí. Llámanos: +34 910 000 000")
    tel = br.d.find_element(By.CSS_SELECTOR, "main a[href^='tel:']")
    assert tel.get_attribute("href") == "tel:+34910000000", tel.get_attribute("href")
    br.tap_target(tel)
    br.check("Enlace - pasado el limite")
    # and her "Mis citas" says the same, with the same link
    br.sign_in("ana.enlace@example.com", "secreto1", "/mis-citas")
    br.focused_heading("Mis citas")
    br.see("Ya no se puede cambiar ni cancelar desde aquí. Llámanos: +34 910 000 000")
    tel = br.d.find_element(By.CSS_SELECTOR, "main .cards a[href^='tel:']")
    assert tel.get_attribute("href") == "tel:+34910000000", tel.get_attribute("href")
    br.tap_target(tel)
    br.check("Enlace - mis citas pasado el limite")
    # a broken link says so
    br.open(link[:-3] + "AAA")
    br.focused_heading("Enlace no válido")
    br.allowed_errors.append(r"/api/gestion/.* 404")
    br.check("Enlace - no valido")


def change_on_a_stale_page(srv, br, sink, s, b):
    """A new time confirmed on the link's page after the appointment was
    cancelled elsewhere (her e-mail on another device, the shop): the
    refusal is said as the API words it, on the page drawn again as the
    appointment is now, never as a time someone else just took (the page
    used to say that for every 409, and offer the list again)."""
    token, _ = srv.signup("eva.vieja@example.com", "Eva Vieja")
    inicio, _ = free_slot(srv, s["id"], b["id"], after=3)
    cita = srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": inicio}, token=token)["cita"]
    text = sink.wait("eva.vieja@example.com", "Cita confirmada")
    m = re.search(re.escape(srv.base) + r"(/c/[A-Za-z0-9_-]{64})", text)
    assert m, text
    br.open(m.group(1))
    br.focused_heading("Tu cita")
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    free = lambda: [e for e in br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot") if e.is_enabled()]
    br.wait(free, what="free slots")
    free()[0].click()
    br.see("Nueva hora:")
    # cancelled elsewhere while the page is open
    srv.ok("POST", "/api/citas/%s/cancelar" % cita["id"], token=token)
    br.allowed_errors.append(r"/api/gestion/.* - Failed to load resource: the server responded with a status of 409")
    br.click("Confirmar cambio")
    br.see("Esta cita está cancelada.")
    br.see("La cita está cancelada")
    assert "alguien acaba de reservar" not in br.text(), br.text()[:400]
    assert br.active().text == "La cita está cancelada", br.active().get_attribute("outerHTML")[:200]
    br.check("Enlace - cambio de una cita cancelada entretanto")


def waiting_list_to_booking(srv, br, sink, s, b):
    other, _ = srv.signup("otro.cliente@example.com", "Otro Cliente")
    # a day past the first free one, so that the picker shows it only when asked to
    inicio, fecha = free_slot(srv, s["id"], b["id"], after=9)
    cita = srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": inicio}, token=other)["cita"]
    srv.signup("eva.espera@example.com", "Eva Espera")
    # signed out: she is sent to sign in, and back to the same service, barber and day
    br.open("/")
    br.d.delete_all_cookies()
    br.d.execute_script("localStorage.clear()")
    br.open("/reservar?servicio=%s&barbero=%s" % (s["id"], b["id"]))
    br.focused_heading("Elige día y hora")
    day = br.d.find_element(By.ID, "espera-fecha")
    br.d.execute_script("arguments[0].value = arguments[1]", day, fecha)
    br.click("Avísame si se libera")
    br.click("Entra en tu cuenta")
    br.enter("eva.espera@example.com", "secreto1")
    br.focused_heading("Elige día y hora")
    br.see("¿No hay una hora que te venga bien?")
    assert "servicio=%s" % s["id"] in br.d.current_url and "barbero=%s" % b["id"] in br.d.current_url, br.d.current_url
    day = br.d.find_element(By.ID, "espera-fecha")
    assert day.get_attribute("value") == fecha, (day.get_attribute("value"), fecha)
    # and the picker shows that day
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".days button.day[aria-pressed='true'][data-fecha='%s']" % fecha), what="the day asked about, shown")
    br.click("Avísame si se libera")
    br.see("Te avisaremos por correo")
    # the focus is on what was said (the button was disabled meanwhile)
    assert br.active().text.startswith("Te avisaremos por correo"), br.active().tag_name
    br.check("Espera - pedida")
    # her notices in "Mis citas"
    br.open("/mis-citas")
    br.see("Avisos de horas libres")
    br.see(s["nombre"])
    br.check("Espera - mis avisos")
    # the other client cancels: the slot frees, the notice comes
    srv.ok("POST", "/api/citas/%s/cancelar" % cita["id"], token=other)
    text = sink.wait("eva.espera@example.com", "Se ha liberado una hora")
    m = re.search(re.escape(srv.base) + r"(/reservar\?\S+)", text)
    assert m, text
    # opened signed out, as a client the shop registered without an e-mail
    # (told by WhatsApp, no account to enter) would: the shop's phone to book by
    br.d.delete_all_cookies()
    br.d.execute_script("localStorage.clear()")
    br.open(m.group(1))
    br.see("Si te dimos de alta sin correo, resérvala por teléfono: +34 910 000 000")
    br.sign_in("eva.espera@example.com", "secreto1", urllib.parse.quote(m.group(1), safe=""))
    br.focused_heading("Confirma tu cita")
    br.check("Espera - reservar la hora libre")
    br.click("Confirmar cita")
    br.focused_heading("Cita reservada")
    br.check("Espera - reservada")
    mine = srv.ok("GET", "/api/citas", token=srv.login("eva.espera@example.com", "secreto1"))["citas"]
    assert [c for c in mine if c["fecha_inicio"] == inicio and c["estado"] == "confirmada"], mine


def test(srv, br, sink):
    servicios, barberos = srv.catalog()
    manage_by_link(srv, br, sink, servicios[0], barberos[0])
    change_on_a_stale_page(srv, br, sink, servicios[0], barberos[0])
    waiting_list_to_booking(srv, br, sink, servicios[0], barberos[-1])


if __name__ == "__main__":
    webtest.main(test, {"BARBERIA_SHOP_PHONE": "+34 910 000 000"}, mail=True)
