#!/usr/bin/python3
"""web/mensajes - the administrator opens an appointment's messages from the
agenda: each e-mail and WhatsApp message with its state (here, a shop with
neither configured: none); a barber has no such button; each kind of
message in words (a mail server that does not answer: they wait in the
queue), the barber's notices too."""
import datetime
import os
import sys
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402


def test(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    client, _ = srv.signup("luis@example.com", "Luis Prado", "611222444")
    # the shop's next day that the default week works (a Sunday is off)
    madrid = zoneinfo.ZoneInfo("Europe/Madrid")
    today = datetime.datetime.now(madrid).date()
    day = today + datetime.timedelta(days=1)
    while day.isoweekday() == 7:
        day += datetime.timedelta(days=1)
    local = datetime.datetime(day.year, day.month, day.day, 10, 0, tzinfo=madrid)
    tomorrow = local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    # a client with no e-mail, a barber with none: nothing is sent about it
    srv.ok("POST", "/api/agenda/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": tomorrow,
                                         "cliente": {"nombre": "Carla Gómez", "telefono": "611222333"}}, token=srv.admin)
    # a barber with an e-mail and a client with one: her confirmation and his notice
    b2 = barberos[1]
    srv.ok("PATCH", "/api/admin/barberos/" + b2["id"], {"email": "b2@example.com"}, token=srv.admin)
    srv.ok("POST", "/api/citas", {"barbero_id": b2["id"], "servicio_id": s["id"], "fecha_inicio": tomorrow}, token=client)

    br.open("/entrar?volver=/agenda")
    br.fill("Correo electrónico", "admin@barberia.local")
    br.fill("Contraseña", srv.admin_password)
    br.click("Entrar")
    br.focused_heading("Agenda")
    for _ in range((day - today).days):
        br.click("Siguiente ›")
    br.see("Carla Gómez")
    br.click("Mensajes", within=card(br, "Carla Gómez"))
    br.focused_heading("Mensajes enviados")
    br.see("No se ha enviado ningún mensaje.")
    br.check("Agenda - mensajes de una cita")
    br.see("Luis Prado")
    br.click("Mensajes", within=card(br, "Luis Prado"))
    br.see("Correo: Confirmación")
    br.see("Correo: Aviso al barbero: cita nueva")
    assert "aviso_" not in br.text()
    br.check("Agenda - mensajes, los tipos en palabras")


def card(br, name):
    return br.wait(lambda: next((c for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.is_displayed() and name in c.text), None), what="the card of " + name)


if __name__ == "__main__":
    # a mail server that never answers: the messages stay in the queue
    webtest.main(test, {"BARBERIA_SMTP_URL": "smtp://127.0.0.1:9", "BARBERIA_SMTP_FROM": "citas@barberia.test"})
