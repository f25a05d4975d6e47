#!/usr/bin/python3
"""web/race - a slot lost meanwhile: a client reaches the confirm step, and
someone else books that slot before they confirm. Confirming gets a
friendly Spanish message and the fresh list (without the lost slot), and
no second appointment exists. Also: "cualquier barbero" names the barber
assigned; a slot taken before the confirm step is caught on entering it;
a shop with one service and one barber opens the booking on the day step,
with no "cualquier barbero"."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402


def signin(br, email):
    br.open("/entrar")
    br.focused_heading("Entrar")
    u = br.fill("Correo electrónico", email)
    p = br.fill("Contraseña", "secreto1")
    assert u.get_attribute("autocomplete") == "username"
    assert p.get_attribute("autocomplete") == "current-password"
    br.check("Entrar")
    br.click("Entrar")
    br.focused_heading("Mis citas")


def fresh_slots(br):
    """The day's slots once the list has been read again: buttons, or the
    hint that the day has none left (late in the day the lost slot may
    have been its last)."""
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot, .slots p.hint"),
            what="fresh slots")
    return [e.get_attribute("aria-label") for e in br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot")]


def to_confirm(br, servicio, barbero):
    br.open("/reservar?servicio=%s&barbero=%s" % (servicio, barbero))
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")
    slot = br.d.find_element(By.CSS_SELECTOR, ".slots button.slot")
    label = slot.get_attribute("aria-label")
    slot.click()
    br.focused_heading("Confirma tu cita")
    return label


def test(srv, br):
    servicios, barberos = srv.catalog()
    s = servicios[0]
    srv.signup("bea@example.com", "Bea")
    other, _ = srv.signup("otro@example.com", "Otro")
    signin(br, "bea@example.com")

    # 1. lost between the confirm step and the click
    b = barberos[0]
    label = to_confirm(br, s["id"], b["id"])
    inicio = br.d.execute_script("return new URLSearchParams(location.search).get('inicio')")
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": inicio}, token=other)
    br.allowed_errors.append(r"/api/citas - Failed to load resource: the server responded with a status of 409")
    br.click("Confirmar cita")
    br.see("alguien acaba de reservar esa hora")
    fresh = fresh_slots(br)
    assert label not in fresh, (label, fresh)
    br.check("Hora perdida al confirmar")
    mine = srv.ok("GET", "/api/citas", token=srv.admin)["citas"]
    assert len(mine) == 1 and mine[0]["perfil"]["nombre"] == "Otro"  # no extra row

    # 2. lost before the confirm step: caught on entering it
    b2 = barberos[1]
    br.open("/reservar?servicio=%s&barbero=%s" % (s["id"], b2["id"]))
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")
    slot = br.d.find_element(By.CSS_SELECTOR, ".slots button.slot")
    label2 = slot.get_attribute("aria-label")
    day2 = br.d.execute_script("return document.querySelector('.days [aria-pressed=true]').dataset.fecha")
    hu = srv.ok("GET", "/api/disponibilidad?servicio_id=%s&barbero_id=%s&fecha=%s" % (s["id"], b2["id"], day2))["huecos"][0]
    srv.ok("POST", "/api/citas", {"barbero_id": b2["id"], "servicio_id": s["id"], "fecha_inicio": hu["inicio"]}, token=other)
    slot.click()
    br.see("esa hora acaba de ocuparse")
    assert label2 not in fresh_slots(br)
    br.check("Hora perdida antes de confirmar")

    # 3. any barber: the confirmation names the one assigned
    br.open("/reservar?servicio=%s&barbero=cualquiera" % s["id"])
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")
    br.d.find_element(By.CSS_SELECTOR, ".slots button.slot").click()
    br.focused_heading("Confirma tu cita")
    br.click("Confirmar cita")
    br.focused_heading("¡Cita reservada!")
    names = [x["nombre"] for x in barberos]
    assert any(n in br.text() for n in names), br.text()
    br.check("Reserva con cualquier barbero")

    # 4. a shop with one service and one barber: both steps skipped, no "any barber"
    for x in servicios[1:]:
        srv.ok("PATCH", "/api/admin/servicios/" + x["id"], {"activo": False}, token=srv.admin)
    for x in barberos[1:]:
        srv.ok("PATCH", "/api/admin/barberos/" + x["id"], {"activo": False}, token=srv.admin)
    br.open("/reservar")
    br.focused_heading("Elige día y hora")
    br.see(servicios[0]["nombre"])
    br.see(barberos[0]["nombre"])
    text = br.text()
    assert "Cualquier barbero" not in text and "Cambiar barbero" not in text and "Cambiar servicio" not in text, text
    br.check("Reservar con un servicio y un barbero")


if __name__ == "__main__":
    webtest.main(test)
