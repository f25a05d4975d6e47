#!/usr/bin/python3
"""web/mover - "Cambiar hora" in Mis citas on a phone, for an appointment
in a later week than the first free slot:
- the picker opens on the appointment's own day, her time shown as hers
  ("10:15 (tu hora actual)"), disabled: no move to the same time;
- a slot taken by someone else between choosing it and "Confirmar cambio"
  (409): the booking's friendly message under the refreshed day's heading,
  where the focus goes, inside the screen; the list no longer offers it
  and the appointment has not moved.
Every state: axe-core, 360 px, transfer budget, console (webtest.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By, free_slot  # noqa: E402


def test(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    token, _ = srv.signup("mar.mover@example.com", "Mar Mover")
    other, _ = srv.signup("otra.mover@example.com", "Otra")
    # her second free slot of a day at least 9 days ahead: a later week
    inicio, fecha = free_slot(srv, s["id"], b["id"], skip=1, after=9)
    cita = srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": inicio}, token=token)["cita"]

    br.sign_in("mar.mover@example.com", "secreto1", "/mis-citas")
    br.focused_heading("Mis citas")
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".days button.day[aria-pressed='true'][data-fecha='%s']" % fecha),
            what=lambda: "the appointment's day %s pressed (pressed: %s)" % (fecha, [e.get_attribute("data-fecha") for e in br.d.find_elements(By.CSS_SELECTOR, ".days button.day[aria-pressed='true']")]))
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="slots")
    slots = br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot")
    own = [e for e in slots if "(tu hora actual)" in e.text]
    assert len(own) == 1 and not own[0].is_enabled(), [e.text for e in slots]
    assert own[0].get_attribute("aria-label").endswith(", tu hora actual"), own[0].get_attribute("aria-label")
    br.check("Mover - su dia")

    # another slot, taken by someone else before she confirms
    # (one free for anyone: not overlapping her own appointment)
    moves = srv.ok("GET", "/api/citas/%s/huecos?fecha=%s" % (cita["id"], fecha), token=token)["huecos"]
    anyone = srv.ok("GET", "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s" % (s["id"], fecha, b["id"]))["huecos"]
    hu = [x for x in anyone if x["inicio"] in [m["inicio"] for m in moves]][0]
    assert len(slots) == len(moves), ([e.text for e in slots], moves)
    pick = slots[[m["inicio"] for m in moves].index(hu["inicio"])]
    assert pick.is_enabled()
    label = pick.get_attribute("aria-label")
    pick.click()
    br.see("Nueva hora:")
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": hu["inicio"]}, token=other)
    br.allowed_errors.append(r"/reprogramar - Failed to load resource: the server responded with a status of 409")
    br.click("Confirmar cambio")
    msg = "Lo sentimos: alguien acaba de reservar esa hora. Elige otra de la lista actualizada."
    br.see(msg)
    br.focused_heading("Horas libres el")
    # said right under the heading that has the focus, inside the screen
    where = br.d.execute_script(
        "const a = [...document.querySelectorAll('main .alert')].filter(e => !e.hidden);"
        "const t = document.activeElement; const r = a.length === 1 && a[0].getBoundingClientRect();"
        "return a.length === 1 && a[0].previousElementSibling === t && r.top >= 0 && r.bottom <= innerHeight"
        " ? 'ok' : [a.map(e => e.textContent), t.outerHTML.slice(0, 80), r && r.top, innerHeight]")
    assert where == "ok", where
    assert "El horario ya no está disponible" not in br.text(), br.text()
    br.wait(lambda: label not in [e.get_attribute("aria-label") for e in br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot")],
            what="the fresh list without the taken slot")
    br.check("Mover - hora perdida")
    mine = srv.ok("GET", "/api/citas", token=token)["citas"]
    assert [c["fecha_inicio"] for c in mine] == [cita["fecha_inicio"]], mine


if __name__ == "__main__":
    webtest.main(test)
