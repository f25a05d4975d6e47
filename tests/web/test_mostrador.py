#!/usr/bin/python3
"""web/mostrador - the shop's front desk: on a phone a barber books a new
client ("Nueva cita": a client who has no account, the slot picker) and a
walk-in ("Ahora"), marks a no-show and sees it counted on the client's
cards; on a tablet the day is a grid with a column per barber, and a tap on
free time opens the booking with that barber and hour; the administrator
closes a day over two bookings and cancels them with a message."""
import datetime
import os
import sys
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402

MADRID = zoneinfo.ZoneInfo("Europe/Madrid")


def utc(day, hour, minute=0):
    """The instant of a local time in the shop's zone (Europe/Madrid)."""
    local = datetime.datetime(day.year, day.month, day.day, hour, minute, tzinfo=MADRID)
    return local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def working_day(after):
    """The first day after `after` that the default week works (not Sunday)."""
    day = after + datetime.timedelta(days=1)
    while day.isoweekday() == 7:
        day += datetime.timedelta(days=1)
    return day


def sign_in(br, email, password, volver):
    br.open("/entrar?volver=" + volver)
    br.fill("Correo electrónico", email)
    br.fill("Contraseña", password)
    br.click("Entrar")


def control(br, label):
    """The form control its visible <label> names."""
    lab = next(e for e in br.d.find_elements(By.TAG_NAME, "label") if e.text.strip() == label and e.is_displayed())
    return br.d.find_element(By.ID, lab.get_attribute("for"))


def grid_at_tablet(srv, br, day, s, b):
    """1024x768: the day's grid; booked and free time; a tap on free time."""
    br.d.set_window_size(1024, 768)
    br.open("/agenda?fecha=" + day.isoformat())
    br.focused_heading("Agenda")
    grid = br.wait(lambda: next((g for g in br.d.find_elements(By.CSS_SELECTOR, ".rejilla") if g.is_displayed()), None), what="the grid")
    heads = [e.text for e in grid.find_elements(By.CSS_SELECTOR, "section.col h3")]
    _, barberos = srv.catalog()
    assert heads == [x["nombre"] for x in barberos], heads
    col = next(c for c in grid.find_elements(By.CSS_SELECTOR, "section.col") if c.find_element(By.TAG_NAME, "h3").text == b["nombre"])
    booked = col.find_element(By.CSS_SELECTOR, ".bloque")
    assert "10:00" in booked.text and "Carla Gómez" in booked.text, booked.text
    # the 10:00 booking takes its rows: no free button at 10:00 or 10:15
    labels = [e.get_attribute("aria-label") for e in col.find_elements(By.CSS_SELECTOR, ".libre")]
    assert "Nueva cita con %s a las 09:45" % b["nombre"] in labels, labels
    assert "Nueva cita con %s a las 10:00" % b["nombre"] not in labels
    assert "Nueva cita con %s a las 14:00" % b["nombre"] not in labels  # the lunch break
    br.check("Mostrador - rejilla tablet")
    booked.click()
    br.focused_heading("Carla Gómez")
    br.click("Cerrar")
    free = col.find_element(By.CSS_SELECTOR, ".libre[aria-label='Nueva cita con %s a las 11:30']" % b["nombre"])
    br.d.execute_script("arguments[0].scrollIntoView({block:'center'})", free)
    free.click()
    br.focused_heading("Nueva cita")
    assert control(br, "Barbero").get_attribute("value") == b["id"]
    br.see("11:30")
    br.check("Mostrador - nueva cita desde la rejilla")
    br.click("Volver a la agenda")
    br.focused_heading("")
    br.d.set_window_size(390, 844)


def test(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    client, _ = srv.signup("carla@example.com", "Carla Gómez", "611222333")
    _, barber_id = srv.signup("barbero@example.com", "Pepe Barbero")
    srv.ok("PATCH", "/api/admin/usuarios", {"userId": barber_id, "rol": "barbero"}, token=srv.admin)
    today = datetime.datetime.now(MADRID).date()
    day = working_day(today)
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": utc(day, 10)}, token=client)

    sign_in(br, "barbero@example.com", "secreto1", "/agenda")
    br.focused_heading("Agenda")
    grid_at_tablet(srv, br, day, s, b)


if __name__ == "__main__":
    webtest.main(test)
