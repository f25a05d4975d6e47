#!/usr/bin/python3
"""web/agenda - a barber opens the agenda: the day's and the week's
appointments of every barber with the client's name, phone and notes, the
photos, and the client's earlier cuts (with their photos) one tap away; he
moves one appointment a client calls about (her time shown as the
appointment's, "hora actual de la cita", not his), then cancels it. His
"Mis citas" lists only what he booked for himself. On the shop's screen
(1280x800, 1024x768) the grid keeps the barbers' names in sight wherever it
is scrolled (opened on the current time too), and a day left open shows
what was booked meanwhile: read again when the page is shown again, never
over a form of the agenda, keeping the scroll and the focus, saying
nothing; nor does it offer the clean-up margin after an appointment (the
desk's booking would be refused there)."""
import datetime
import os
import sys
import time
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402


MADRID = zoneinfo.ZoneInfo("Europe/Madrid")


def utc(day, hour, minute=0):
    """The instant of a local time in the shop's zone."""
    local = datetime.datetime(day.year, day.month, day.day, hour, minute, tzinfo=MADRID)
    return local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def weekday_ahead():
    """A day from the day after tomorrow on that the demo week works morning
    and afternoon (Monday to Friday)."""
    day = datetime.datetime.now(MADRID).date() + datetime.timedelta(days=2)
    while day.isoweekday() > 5:
        day += datetime.timedelta(days=1)
    return day


def grid(br):
    """The day's grid shown (None while it is drawn)."""
    return next((g for g in br.d.find_elements(By.CSS_SELECTOR, ".rejilla") if g.is_displayed()), None)


# every column's heading (a barber's name) is inside the window and not
# under anything: the point at its middle hits it
NAMES_SHOWN = (
    "return [...document.querySelectorAll('.rejilla section.col h3.cab')].map(e => {"
    " const r = e.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;"
    " const hit = document.elementFromPoint(x, y);"
    " return r.top >= 0 && r.bottom <= innerHeight && !!hit && e.contains(hit) ? '' : e.textContent + ' at ' + Math.round(r.top); })"
    ".filter(Boolean)")


def names_in_sight(srv, br, s, client_id):
    """1280x800, 1024x768: the grid scrolled to its last free time (the
    focus moved there), or opened on the current time, still shows every
    barber's name over its column."""
    day = weekday_ahead()
    _, barberos = srv.catalog()
    for w, hh in ((1280, 800), (1024, 768)):
        br.d.set_window_size(w, hh)
        br.open("/agenda?fecha=" + day.isoformat())
        br.focused_heading("Agenda")
        br.wait(lambda: grid(br) and len(grid(br).find_elements(By.CSS_SELECTOR, "h3.cab")) == len(barberos), what="the grid")
        last = grid(br).find_elements(By.CSS_SELECTOR, "section.col")[-1].find_elements(By.CSS_SELECTOR, ".libre")[-1]
        br.d.execute_script("arguments[0].focus()", last)
        time.sleep(0.2)
        br.hittable(last)
        hidden = br.d.execute_script(NAMES_SHOWN)
        assert not hidden, "%dx%d, at %s: barbers' names out of sight: %s" % (w, hh, last.text, hidden)
        if w == 1280:
            br.check("Agenda - rejilla al final del dia")
    # today, opened on the current time (an appointment now widens the grid
    # to it, whatever the hour the test runs at)
    now = datetime.datetime.now(MADRID)
    if datetime.time(0, 10) <= now.time() <= datetime.time(22, 30):
        start = (now - datetime.timedelta(minutes=2)).astimezone(datetime.timezone.utc)
        srv.ok("POST", "/api/agenda/citas", {"barbero_id": barberos[-1]["id"], "servicio_id": s["id"], "cliente_id": client_id,
                                             "fecha_inicio": start.strftime("%Y-%m-%dT%H:%M:00Z"), "fuera_de_horario": True}, token=srv.admin)
        br.open("/agenda")
        br.focused_heading("Agenda")
        line = br.wait(lambda: next((e for e in br.d.find_elements(By.CSS_SELECTOR, ".rejilla .ahora") if e.is_displayed()), None), what="the current time's line")
        top = br.d.execute_script("return arguments[0].getBoundingClientRect().top", line)
        assert 0 <= top <= 768, "the current time is out of view: %s" % top
        hidden = br.d.execute_script(NAMES_SHOWN)
        assert not hidden, "opened on the current time: barbers' names out of sight: %s" % hidden


def left_open(srv, br, s, b, client):
    """1024x768: the day left open on the shop's screen. A booking made
    online meanwhile shows once the page is shown again (visibilitychange),
    its time no longer offered; the focus stays on the free time it had,
    the scroll where it was, nothing announced. Not while a form of the
    agenda ("Cambiar hora") is open; after it, with its card still open."""
    day = weekday_ahead()
    br.d.set_window_size(1024, 768)
    br.open("/agenda?fecha=" + day.isoformat())
    br.focused_heading("Agenda")

    def col():
        g = grid(br)
        return g and next((c for c in g.find_elements(By.CSS_SELECTOR, "section.col") if c.find_element(By.TAG_NAME, "h3").text == b["nombre"]), None)

    def free(hhmm):
        return "Nueva cita con %s a las %s" % (b["nombre"], hhmm)

    def offered():
        try:
            return [e.get_attribute("aria-label") for e in col().find_elements(By.CSS_SELECTOR, ".libre")]
        except Exception:  # drawn again meanwhile
            return []

    def booked():
        try:
            return [e.text.split("\n")[0] for e in col().find_elements(By.CSS_SELECTOR, ".bloque")]
        except Exception:
            return None
    br.wait(lambda: free("12:00") in offered(), what="12:00 free")
    later = col().find_element(By.CSS_SELECTOR, ".libre[aria-label='%s']" % free("17:00"))
    br.d.execute_script("arguments[0].focus()", later)
    time.sleep(0.2)
    place = "const m = document.querySelector('.solo-ancho .rejilla-marco'); return [scrollY, m.scrollTop]"
    before = br.d.execute_script(place)
    # booked online, behind the desk's back
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": utc(day, 12)}, token=client)
    br.d.execute_script("document.dispatchEvent(new Event('visibilitychange'))")
    br.wait(lambda: booked() and booked()[0].startswith("12:00"), what=lambda: "the online booking in the grid, not %s" % booked())
    assert free("12:00") not in offered(), offered()
    assert br.active().get_attribute("aria-label") == free("17:00"), br.active().get_attribute("outerHTML")
    assert br.d.execute_script(place) == before, (br.d.execute_script(place), before)
    assert br.d.find_element(By.ID, "status").get_attribute("textContent") == ""
    assert not br.d.find_elements(By.CSS_SELECTOR, "main .said")
    br.check("Agenda - dia releido")
    # her card open, "Cambiar hora" under way: nothing is drawn over it
    block = col().find_element(By.CSS_SELECTOR, ".bloque")
    br.d.execute_script("arguments[0].scrollIntoView({block:'center'})", block)
    block.click()
    br.focused_heading("Carla Gómez")
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": utc(day, 9)}, token=client)
    time.sleep(1.6)  # past the tap that opened it
    br.d.execute_script("window.dispatchEvent(new Event('focus'))")
    time.sleep(1.5)
    assert [x[:5] for x in booked()] == ["12:00"], booked()
    assert br.d.find_elements(By.CSS_SELECTOR, ".detalle .picker"), "the picker was taken away"
    br.click("No cambiar")
    time.sleep(1.6)
    br.d.execute_script("window.dispatchEvent(new Event('focus'))")
    br.wait(lambda: booked() and [x[:5] for x in booked()] == ["09:00", "12:00"], what=lambda: "the second booking, not %s" % booked())
    assert "Carla Gómez" in br.d.find_element(By.CSS_SELECTOR, ".detalle li.cita h3").text, "her card is still open"


def new_booking_by_keyboard(br):
    """On a small phone (360x740), "Nueva cita" walked with Tab: every control
    the focus reaches is in sight, none under the bar of "Reservar cita" and
    "Volver a la agenda" stuck to the window's bottom (it hid the barber's
    list and "Ahora")."""
    size = br.d.get_window_size()
    br.d.set_window_size(360, 740)
    br.click("Nueva cita")
    br.focused_heading("Nueva cita")
    under = ("const a = document.activeElement, s = document.querySelector('main .sticky');"
             "const r = a.getBoundingClientRect(), q = s.getBoundingClientRect();"
             "return s.contains(a) || a === document.body ? null :"
             " [a.outerHTML.slice(0, 80), r.top < q.bottom && r.bottom > q.top, r.top >= 0 && r.bottom <= innerHeight]")
    seen = 0
    for _ in range(40):
        br.active().send_keys(webtest.Keys.TAB)
        time.sleep(0.05)
        got = br.d.execute_script(under)
        if got is None:
            if br.active().text == "Volver a la agenda":
                break
            continue
        seen += 1
        assert not got[1] and got[2], "under the bar or out of sight: %s" % got[0]
    assert seen >= 5, seen
    br.click("Volver a la agenda")
    br.d.set_window_size(size["width"], size["height"])


def margin_kept(srv, br, client, client_id):
    """1280x800, signed in as a barber: a 30-minute service given a
    15-minute clean-up margin, booked 10:00-10:30 (online: the plain
    overlap). The grid offers no free time at 10:30, where the desk's
    booking is refused (409), and offers 10:45, where it is taken."""
    servicios, barberos = srv.catalog()
    s = next(x for x in servicios if x["nombre"] == "Corte clásico" and x["duracion_min"] == 30)
    b = barberos[1]
    day = weekday_ahead()
    srv.ok("PATCH", "/api/admin/servicios/" + s["id"], {"margen_min": 15}, token=srv.admin)
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": utc(day, 10)}, token=client)
    br.d.set_window_size(1280, 800)
    br.open("/agenda?fecha=" + day.isoformat())
    br.focused_heading("Agenda")

    def offered():
        try:
            g = grid(br)
            col = g and next((c for c in g.find_elements(By.CSS_SELECTOR, "section.col") if c.find_element(By.TAG_NAME, "h3").text == b["nombre"]), None)
            return col and [e.get_attribute("aria-label") for e in col.find_elements(By.CSS_SELECTOR, ".libre")]
        except Exception:  # drawn again meanwhile
            return None
    free = "Nueva cita con %s a las %%s" % b["nombre"]
    hours = br.wait(offered, what="%s's column" % b["nombre"])
    assert free % "09:45" in hours and free % "10:45" in hours, hours
    for taken in ("10:00", "10:15", "10:30"):
        assert free % taken not in hours, (taken, hours)
    br.check("Agenda - margen de limpieza")
    # the server agrees with the grid: the desk's booking is refused in the
    # margin and taken right after it
    desk = {"barbero_id": b["id"], "servicio_id": s["id"], "cliente_id": client_id}
    st, js = srv.call("POST", "/api/agenda/citas", dict(desk, fecha_inicio=utc(day, 10, 30)), token=srv.admin)
    assert st == 409, (st, js)
    srv.ok("POST", "/api/agenda/citas", dict(desk, fecha_inicio=utc(day, 10, 45)), token=srv.admin)
    srv.ok("PATCH", "/api/admin/servicios/" + s["id"], {"margen_min": 0}, token=srv.admin)


def test(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    client, client_id = srv.signup("carla@example.com", "Carla Gómez", "611222333")
    _, barber_id = srv.signup("barbero@example.com", "Pepe Barbero")
    srv.ok("PATCH", "/api/admin/usuarios", {"userId": barber_id, "rol": "barbero"}, token=srv.admin)
    # an earlier cut with a photo, and one tomorrow at 10:00
    past = srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": "2024-03-05T10:00:00Z", "notas": "Degradado bajo, nuca cuadrada"}, token=client)["cita"]
    srv.upload(client, past["id"], "despues", webtest.png_bytes())
    # "tomorrow" is the shop's (Europe/Madrid, the default zone): between
    # 22:00 and 24:00 UTC today there is already tomorrow; and the next day
    # the default week works (a Sunday is off)
    madrid = zoneinfo.ZoneInfo("Europe/Madrid")
    today = datetime.datetime.now(madrid).date()
    day = today + datetime.timedelta(days=1)
    while day.isoweekday() == 7:
        day += datetime.timedelta(days=1)
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
    for _ in range((day - today).days):
        br.click("Siguiente ›")
        # the bar is drawn anew: the button pressed keeps the focus (with the
        # keyboard, the next press is the same key; it was left to <body>)
        assert br.active().text == "Siguiente ›", br.active().tag_name
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
    assert br.active().text == "Semana" and br.active().get_attribute("aria-pressed") == "true", br.active().tag_name
    br.check("Agenda - semana")
    new_booking_by_keyboard(br)
    # the client calls: the barber moves her appointment, then cancels it
    # (the agenda opened afresh on her day: the transfer budget counts from a
    # page's start)
    br.open("/agenda?vista=dia&fecha=" + day.isoformat())
    br.focused_heading("Agenda")
    br.see("Carla Gómez")
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    # her time, shown to staff as the appointment's, not "tu hora actual"
    own = br.wait(lambda: [e for e in br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot.actual")], what="the appointment's own time")
    assert len(own) == 1 and own[0].text == "10:00 (hora actual de la cita)" and not own[0].is_enabled(), [e.text for e in own]
    assert own[0].get_attribute("aria-label").endswith(", hora actual de la cita"), own[0].get_attribute("aria-label")
    assert "tu hora actual" not in br.text()
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
    names_in_sight(srv, br, s, client_id)
    left_open(srv, br, s, b, client)
    margin_kept(srv, br, client, client_id)
    br.d.set_window_size(390, 844)
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
