#!/usr/bin/python3
"""web/mensajes - the administrator opens an appointment's messages from the
agenda: each e-mail and WhatsApp message with its state (here, a shop with
neither configured: none); a barber has no such button."""
import datetime
import os
import sys
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402


def test(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    client, _ = srv.signup("carla@example.com", "Carla Gómez", "611222333")
    madrid = zoneinfo.ZoneInfo("Europe/Madrid")
    day = datetime.datetime.now(madrid).date() + datetime.timedelta(days=1)
    local = datetime.datetime(day.year, day.month, day.day, 10, 0, tzinfo=madrid)
    tomorrow = local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": tomorrow}, token=client)

    br.open("/entrar?volver=/agenda")
    br.fill("Correo electrónico", "admin@barberia.local")
    br.fill("Contraseña", srv.admin_password)
    br.click("Entrar")
    br.focused_heading("Agenda")
    br.click("Siguiente ›")
    br.see("Carla Gómez")
    br.click("Mensajes")
    br.focused_heading("Mensajes enviados")
    br.see("No se ha enviado ningún mensaje.")
    br.check("Agenda - mensajes de una cita")


if __name__ == "__main__":
    webtest.main(test)
