#!/usr/bin/python3
"""web/booking - a new visitor, as a person would: opens the home page,
books a free slot (service, barber, day opened on the first free one,
slot, confirm) signing up on the way, sees the confirmation (what, when
with the zone named, with whom, where, the cancel deadline, Google Calendar
and .ics), finds it in "Mis citas", uploads a before photo and sees it,
refuses one over 5 MB before sending it, reschedules it (its own time
offered too) and cancels it. A past cut shows its before/after photos
and "Repetir este corte" opens the booking on the day step with its service
and barber. Then books again with the keyboard only.
Every state: axe-core, 360 px, transfer budget, console (webtest.py)."""
import os
import sys
import tempfile
from urllib.parse import unquote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By, Keys  # noqa: E402


def availability_calls(br):
    return [r["name"] for r in br.resources() if "/api/disponibilidad" in r["name"]]


def installable(srv, br):
    """The phone's "add to home screen": the browser reads the app's manifest
    without an error and finds nothing that keeps it from installing it."""
    m = br.d.execute_cdp_cmd("Page.getAppManifest", {})
    assert m["url"] and not m["errors"], m
    app = m["manifest"]
    assert app["name"] == "Barbería" and app["display"] == "kStandalone", app
    assert app["startUrl"] == srv.base + "/" and app["scope"] == srv.base + "/", app
    assert [i["type"] for i in app["icons"]] == ["image/svg+xml"], app
    assert br.d.execute_cdp_cmd("Page.getInstallabilityErrors", {})["installabilityErrors"] == []


def test(srv, br):
    servicios, barberos = srv.catalog()
    assert len(servicios) > 1 and len(barberos) > 1  # the demo data: every step is shown
    br.open("/")
    br.see("Reserva tu cita")
    br.check("Inicio")
    installable(srv, br)
    choices = 0
    br.click("Reservar cita")
    br.focused_heading("Elige el servicio")
    br.check("Reservar - servicio")
    br.click("Corte clásico · 30 min · 15,00 €")
    choices += 1
    br.focused_heading("Elige barbero")
    assert br.button("Cualquier barbero")  # several barbers: "any" is offered
    br.check("Reservar - barbero")
    br.click("Lucía Ortega")
    choices += 1
    br.focused_heading("Elige día y hora")
    # the picker opens on the first day with a free slot; days without are disabled
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")
    days = br.d.find_elements(By.CSS_SELECTOR, ".days button.day")
    pressed = [d for d in days if d.get_attribute("aria-pressed") == "true"]
    assert len(pressed) == 1
    first_free = next(d for d in days if d.is_enabled())
    assert pressed[0] == first_free
    for d in days:
        label = d.get_attribute("aria-label")
        assert ("sin horas libres" in label) == (not d.is_enabled()), label
    # one request per day shown, none twice
    calls = availability_calls(br)
    assert len(calls) == len(set(calls)) and len(calls) >= 1, calls
    # the day's last slot: the first may fall inside the minimum notice
    # while the steps below run (the confirm step asks for the day again)
    slot = br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot")[-1]
    booked_day = next(d for d in days if d.get_attribute("aria-pressed") == "true").get_attribute("data-fecha")
    booked_time = slot.text
    label = slot.get_attribute("aria-label")  # "martes 14 de octubre, 10:30"
    assert label.count(",") == 1 and " de " in label and label.endswith(slot.text), label
    br.check("Reservar - dia y hora")
    slot.click()
    choices += 1
    br.focused_heading("Confirma tu cita")
    br.see("Para confirmar, crea tu cuenta")
    # entering the confirm step asked for that day again
    assert len(availability_calls(br)) == len(calls) + 1
    br.check("Reservar - confirmar sin cuenta")
    br.click("Crear cuenta y reservar")
    br.focused_heading("Crear cuenta")
    br.fill("Nombre", "Ana Pérez")
    br.fill("Correo electrónico", "ana@example.com")
    br.fill("Teléfono (opcional)", "600111222")
    pw = br.fill("Contraseña", "secreto1")
    assert pw.get_attribute("autocomplete") == "new-password"
    br.check("Crear cuenta")
    br.click("Crear cuenta")
    br.focused_heading("Confirma tu cita")
    br.see("Lucía Ortega")
    br.see("hora de Madrid")
    br.check("Reservar - confirmar")
    br.click("Confirmar cita")
    choices += 1
    assert choices <= 5
    br.focused_heading("¡Cita reservada!")
    for needle in ("Corte clásico", "Lucía Ortega", "hora de Madrid", "Puedes cancelar hasta", "Dónde"):
        br.see(needle)
    # no address set: the shop's name alone, never the server's host
    host = srv.base.split("//", 1)[1]
    assert host not in br.d.find_element("css selector", "main").text
    gcal = br.button("Añadir a Google Calendar").get_attribute("href")
    assert gcal.startswith("https://calendar.google.com/calendar/render?action=TEMPLATE"), gcal
    ics = br.button("Descargar .ics").get_attribute("href")
    assert ics.startswith("data:text/calendar") and "BEGIN:VEVENT" in unquote(ics)
    br.check("Cita reservada")
    citas = srv.ok("GET", "/api/citas", token=srv.admin)["citas"]
    assert len(citas) == 1 and citas[0]["perfil"]["nombre"] == "Ana Pérez"
    cita = citas[0]

    # my appointments (a link of its own: a 44 px target), a before photo
    br.tap_target(br.d.find_element(By.LINK_TEXT, "Ver mis citas"))
    br.click("Ver mis citas")
    br.focused_heading("Mis citas")
    br.see("Corte clásico con Lucía Ortega")
    br.check("Mis citas")
    png = os.path.join(tempfile.mkdtemp(), "antes.png")
    with open(png, "wb") as f:
        f.write(webtest.png_bytes())
    # her permission first: asked on the card, recorded, then the upload opens
    inp = br.d.find_element(By.ID, "foto-antes-" + cita["id"])
    assert not inp.is_enabled()
    client = srv.ok("GET", "/api/auth/me/consentimientos", token=srv.login("ana@example.com", "secreto1"))
    assert client["consentimientos"]["fotos"] is None, client
    br.d.find_element(By.ID, "permiso-fotos-" + cita["id"]).click()
    br.wait(lambda: br.d.find_element(By.ID, "foto-antes-" + cita["id"]).is_enabled(),
            what="the upload opened")
    assert not br.d.find_elements(By.ID, "permiso-fotos-" + cita["id"])
    # its box is gone: the focus moves on to the upload it opened
    br.wait(lambda: br.active().get_attribute("id") == "foto-antes-" + cita["id"], what="focus on the upload")
    client = srv.ok("GET", "/api/auth/me/consentimientos", token=srv.login("ana@example.com", "secreto1"))
    assert client["consentimientos"]["fotos"] is True, client
    br.d.find_element(By.ID, "foto-antes-" + cita["id"]).send_keys(png)
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, "img[alt='Foto de antes']"), what="the photo")
    br.wait(lambda: br.d.execute_script("const i = document.querySelector(\"img[alt='Foto de antes']\"); return i.complete && i.naturalWidth === 64"), what="the photo loaded")
    br.wait(lambda: br.active().get_attribute("id") == "foto-antes-" + cita["id"], what="focus back on the upload")
    inp = br.d.find_element(By.ID, "foto-antes-" + cita["id"])
    # no capture: the phone offers its camera or its gallery
    assert inp.get_attribute("accept") == "image/*" and inp.get_attribute("capture") is None
    br.check("Mis citas - foto")
    # a photo over 5 MB: refused at once in the server's words, nothing sent;
    # the earlier "Foto subida" goes, and so does the file
    assert "Foto subida" in [e.text for e in br.d.find_elements(By.CSS_SELECTOR, "main .said")]
    big = os.path.join(tempfile.mkdtemp(), "grande.jpg")
    with open(big, "wb") as f:
        f.truncate(5 * 1024 * 1024 + 1)
    sent = len([r for r in br.resources() if r["name"].endswith("/api/fotos")])
    br.d.find_element(By.ID, "foto-antes-" + cita["id"]).send_keys(big)
    br.see("Máximo 5MB por imagen")
    assert "Foto subida" not in br.text(), br.text()
    inp = br.d.find_element(By.ID, "foto-antes-" + cita["id"])
    assert inp.get_attribute("value") == "", inp.get_attribute("value")
    assert br.active() == inp
    assert len([r for r in br.resources() if r["name"].endswith("/api/fotos")]) == sent, "the photo was sent"
    assert len(srv.ok("GET", "/api/fotos?cita_id=" + cita["id"], token=srv.admin)["fotos"]) == 1
    br.check("Mis citas - foto demasiado grande")

    # reschedule
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")
    # the picker opens on her appointment's day, her own time marked as hers
    # (not to be chosen: a move to it would change nothing)
    pressed = br.d.find_element(By.CSS_SELECTOR, ".days button.day[aria-pressed='true']")
    assert pressed.get_attribute("data-fecha") == booked_day, pressed.get_attribute("data-fecha")
    slots = br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot")
    own = [e for e in slots if e.text == booked_time + " (tu hora actual)"]
    assert len(own) == 1 and not own[0].is_enabled(), [e.text for e in slots]
    target = [e for e in slots if e.is_enabled()][-1]
    new_label = target.get_attribute("aria-label")
    target.click()
    br.see("Nueva hora")
    br.check("Mis citas - cambiar hora")
    br.click("Confirmar cambio")
    # the confirm step shows the new time too: the change is done when the
    # list is drawn again without it
    br.wait(lambda: "Nueva hora" not in br.text(), what="the list drawn after the change")
    br.see(new_label.split(", ")[1])
    moved = srv.ok("GET", "/api/citas", token=srv.admin)["citas"]
    assert len(moved) == 1 and moved[0]["fecha_inicio"] != cita["fecha_inicio"], moved

    # cancel
    br.click("Cancelar cita")
    br.see("¿Seguro que quieres cancelar")
    br.check("Mis citas - cancelar")
    br.click("Sí, cancelar")
    br.see("No tienes citas próximas")
    assert srv.ok("GET", "/api/citas", token=srv.admin)["citas"][0]["estado"] == "cancelada"
    br.check("Mis citas - cancelada")

    # a past cut shows its before/after photos, and repeats in one step
    past_cut(srv, br)
    # again with the keyboard only, preselected by the link of a past cut
    keyboard_booking(srv, br)


def press_until(br, pred, what, limit=80):
    """Tabs until the focused element satisfies pred, then presses Enter."""
    for _ in range(limit):
        e = br.active()
        if pred(e):
            e.send_keys(Keys.ENTER)
            return
        e.send_keys(Keys.TAB)
    raise AssertionError("keyboard: never reached " + what)


def past_cut(srv, br):
    import datetime
    token = srv.login("ana@example.com", "secreto1")
    servicios, barberos = srv.catalog()
    s = next(x for x in servicios if x["nombre"] == "Corte y barba")
    b = next(x for x in barberos if x["nombre"] == "Mateo Ruiz")
    when = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=7)
    fecha = when.strftime("%Y-%m-%dT10:00:00.000Z")
    cita = srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": fecha}, token=token)["cita"]
    png = webtest.png_bytes()
    srv.upload(token, cita["id"], "antes", png)
    srv.upload(token, cita["id"], "despues", png)
    br.open("/mis-citas")
    br.focused_heading("Mis citas")
    br.see("Corte y barba con Mateo Ruiz")
    card = br.d.find_element(By.XPATH, "//li[contains(@class,'cita')][.//h3[text()='Corte y barba con Mateo Ruiz']]")
    assert card.find_elements(By.CSS_SELECTOR, "img[alt='Foto de antes']")
    assert card.find_elements(By.CSS_SELECTOR, "img[alt='Foto de después']")
    br.check("Mis citas - corte anterior")
    card.find_element(By.LINK_TEXT, "Repetir este corte").click()
    # the same service and barber, preselected: straight to the day
    br.focused_heading("Elige día y hora")
    br.see("Corte y barba")
    br.see("Mateo Ruiz")


def keyboard_booking(srv, br):
    servicios, barberos = srv.catalog()
    s = next(x for x in servicios if x["nombre"] == "Corte y barba")
    b = next(x for x in barberos if x["nombre"] == "Mateo Ruiz")
    br.open("/reservar?servicio=%s&barbero=%s" % (s["id"], b["id"]))
    br.focused_heading("Elige día y hora")  # both preselected: straight to the day
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")
    press_until(br, lambda e: e.tag_name == "button" and "slot" in (e.get_attribute("class") or ""), "a slot")
    br.focused_heading("Confirma tu cita")
    press_until(br, lambda e: e.text == "Confirmar cita", "Confirmar cita")
    br.focused_heading("¡Cita reservada!")
    br.see("Mateo Ruiz")
    br.check("Reserva con teclado")


if __name__ == "__main__":
    webtest.main(test)
