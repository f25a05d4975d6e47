#!/usr/bin/python3
"""web/agenda - a barber opens the agenda: the day's and the week's
appointments of every barber with the client's name, phone and notes, the
photos, and the client's earlier cuts (with their photos) one tap away; he
moves one appointment a client calls about, then cancels it. His
"Mis citas" lists only what he booked for himself."""
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
    client, _ = srv.signup("carla@example.com", "Carla Gómez", "611222333")
    _, barber_id = srv.signup("barbero@example.com", "Pepe Barbero")
    srv.ok("PATCH", "/api/admin/usuarios", {"userId": barber_id, "rol": "barbero"}, token=srv.admin)
    # an earlier cut with a photo, and one tomorrow at 10:00
    past = srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": "2024-03-05T10:00:00Z", "notas": "Degradado bajo, nuca cuadrada"}, token=client)["cita"]
    srv.upload(client, past["id"], "despues", webtest.png_bytes())
    # "tomorrow" is the shop's (Europe/Madrid, the default zone): between
    # 22:00 and 24:00 UTC today there is already tomorrow
    madrid = zoneinfo.ZoneInfo("Europe/Madrid")
    day = datetime.datetime.now(madrid).date() + datetime.timedelta(days=1)
    local = datetime.datetime(day.year, day.month, day.day, 10, 0, tzinfo=madrid)
    tomorrow = local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": tomorrow, "notas": "Lo mismo que la última vez"}, token=client)

    br.open("/entrar?volver=/agenda")
    br.fill("Correo electrónico", "barbero@example.com")
    br.fill("Contraseña", "secreto1")
    br.click("Entrar")
    br.focused_heading("Agenda")
    br.see("No hay citas")  # today
    br.check("Agenda - hoy vacio")
    br.click("Siguiente ›")
    br.see("Carla Gómez")
    for needle in ("611222333", "Lo mismo que la última vez", b["nombre"], s["nombre"]):
        br.see(needle)
    tel = br.d.find_element(By.CSS_SELECTOR, "a[href^='tel:']")
    assert tel.get_attribute("href") == "tel:611222333"
    br.check("Agenda - dia")
    br.click("Cortes anteriores")
    br.focused_heading("Cortes anteriores de Carla Gómez")
    br.see("Degradado bajo, nuca cuadrada")
    br.wait(lambda: br.d.execute_script("const i = document.querySelector(\"img[alt='Foto de después']\"); return !!i && i.complete && i.naturalWidth === 64"), what="the earlier cut's photo")
    br.check("Agenda - cortes anteriores")
    br.click("Semana")
    br.see("Semana del")
    br.see("Carla Gómez")
    br.check("Agenda - semana")
    # the client calls: the barber moves her appointment, then cancels it
    # (the agenda opened afresh on her day: the transfer budget counts from a
    # page's start)
    br.open("/agenda?vista=dia&fecha=" + day.isoformat())
    br.focused_heading("Agenda")
    br.see("Carla Gómez")
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    free = br.wait(lambda: [e for e in br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot") if e.is_enabled() and e.is_displayed()], what="free slots")
    free[-1].click()
    br.check("Agenda - cambiar hora")
    br.click("Confirmar cambio")
    def moved():
        c = [x for x in srv.ok("GET", "/api/citas", token=client)["citas"] if x["estado"] == "confirmada" and x["fecha_inicio"] > "2025"]
        return c and c[0]["fecha_inicio"] != tomorrow.replace("Z", ".000Z") and c[0]
    cita = br.wait(moved, what="the appointment moved")
    br.see("Carla Gómez")
    br.click("Cancelar cita")
    br.click("Sí, cancelar")
    br.wait(lambda: srv.ok("GET", "/api/citas", token=client)["citas"][-1]["estado"] == "cancelada" or None, what="the appointment cancelled")
    assert [x["id"] for x in srv.ok("GET", "/api/citas", token=client)["citas"] if x["estado"] == "cancelada"] == [cita["id"]]
    br.check("Agenda - cancelada")
    # his "Mis citas" holds his own appointments, not the shop's
    br.open("/mis-citas")
    br.focused_heading("Mis citas")
    br.see("Las de la barbería están en la")
    br.see("No tienes citas próximas")
    assert "Lo mismo que la última vez" not in br.text() and s["nombre"] + " con" not in br.text()
    br.check("Mis citas - barbero")
    # a client may not see it
    br.click("Salir")
    br.open("/entrar?volver=/agenda")
    br.fill("Correo electrónico", "carla@example.com")
    br.fill("Contraseña", "secreto1")
    br.click("Entrar")
    br.see("La agenda es para barberos")


if __name__ == "__main__":
    webtest.main(test)
