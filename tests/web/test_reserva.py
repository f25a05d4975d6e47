#!/usr/bin/python3
"""web/reserva - the booking's and the desk's edges:
- the confirm step with the server out of reach says so, with "Reintentar",
  never "Comprobando…" for ever; a page whose module cannot be loaded says
  "No hay conexión con el servidor", not the browser's words; one that
  arrives but fails to run says "Esta página no se pudo abrir…" (logged),
  with "Recargar la página";
- the picker opened on a given day (?fecha=) draws its week, "‹ Semana
  anterior" disabled in the first one;
- each step is a history entry: Back from the confirm step shows the hours
  with the choices kept; after "¡Cita reservada!" the address has no
  inicio, so a reload does not call her own slot taken; the deadline names
  the zone; "Mis citas" shows no stray "null", and a photo's "Borrar" asks
  first, also on a cancelled appointment (which has no uploads);
- signed up on the way to a booking: Back shows neither the sign-up form
  nor her own slot as taken ("Ya tienes esta cita"); /registro and /entrar
  signed in send her on;
- the waiting list's day follows the picker's (next week, a day tapped,
  back), and takes a full day she writes in it; "Avísame si se libera"
  tapped twice sends once;
- at the desk, the waiting list's day follows its picker, and another
  client chosen clears "… está en la lista de espera";
- a refused sign-up and a "Confirmar cita" with the session gone put the
  focus on the error, and the menu then offers "Entrar";
- the service links are 44 px high and the agenda's phone links 44 x 44 px;
- today's grid at 1280x800 during a walk-in: the current time's line lies
  over the block, every element of a column takes its whole width;
Every state: axe-core, 360 px, transfer budget, console (webtest.py)."""
import datetime
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402


def slots(br):
    return br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")


def confirm_last_slot(br):
    """Taps the day's last free slot: the confirm step."""
    slot = slots(br)[-1]
    br.d.execute_script("arguments[0].scrollIntoView({block:'center'})", slot)
    slot.click()
    br.focused_heading("Confirma tu cita")


def active_alert(br, needle):
    js = "const e = document.activeElement; return e.getAttribute('role') === 'alert' && e.textContent.includes(arguments[0])"
    br.wait(lambda: br.d.execute_script(js, needle),
            what=lambda: "focus on the error %r (focused: %s)" % (needle, br.d.execute_script("return document.activeElement.outerHTML.slice(0, 200)")))


def nav_items(br):
    return [e.text.strip() for e in br.d.find_elements(By.CSS_SELECTOR, "#nav li") if e.text.strip()]


def signed_out_edges(srv, br, s, b):
    # the service links are 44 px targets
    br.open("/")
    br.see(s["nombre"])
    low = br.d.execute_script("return [...document.querySelectorAll('main .cards a')].map(a => a.getBoundingClientRect().height).filter(x => x < 44)")
    assert not low, low

    # the picker opened on a day of the first week: that week drawn
    day = (datetime.date.today() + datetime.timedelta(days=2)).isoformat()
    br.open("/reservar?servicio=%s&barbero=%s&fecha=%s" % (s["id"], b["id"], day))
    br.focused_heading("Elige día y hora")
    br.wait(lambda: len(br.d.find_elements(By.CSS_SELECTOR, ".days button.day")) == 7, what="the week's seven days")
    prev = br.d.find_element(By.XPATH, "//button[normalize-space()='‹ Semana anterior']")
    assert not prev.is_enabled()
    br.wait(lambda: br.d.find_element(By.CSS_SELECTOR, ".days button[aria-pressed='true']").get_attribute("data-fecha") == day,
            what="the asked day pressed")
    br.check("Reserva - dia pedido")

    # the server out of reach at the confirm step
    br.open("/reservar?servicio=%s&barbero=%s" % (s["id"], b["id"]))
    slot = slots(br)[-1]
    br.allowed_errors.append(r"ERR_INTERNET_DISCONNECTED")
    br.offline(True)
    br.d.execute_script("arguments[0].scrollIntoView({block:'center'})", slot)
    slot.click()
    br.see("4. Confirma tu cita")
    active_alert(br, "No hay conexión con el servidor")
    assert "Comprobando" not in br.text(), br.text()
    br.offline(False)
    br.check("Reserva - confirmar sin conexion")
    br.click("Reintentar")
    br.see("Para confirmar, crea tu cuenta")
    assert "No hay conexión" not in br.text()

    # a page whose module is not loaded yet, offline
    br.open("/entrar")
    br.offline(True)
    br.click("¿Olvidaste tu contraseña?")
    br.see("No hay conexión con el servidor")
    assert "Failed to fetch" not in br.text() and "import" not in br.text(), br.text()
    br.offline(False)
    br.check("Reserva - modulo sin conexion")
    # a page whose module arrives but fails to run: not "No hay conexión"
    # (the network was there) but its own words, logged, and a reload
    br.open("/entrar")
    tools = webtest.DevTools(br.d)
    tools.serve("*/app/cuenta.*", "export const roto = undefined.campo;")
    br.click("¿Olvidaste tu contraseña?")
    br.focused_heading("Algo ha fallado")
    br.broken_module_said("cuenta", "TypeError", error_logged=True)
    assert not [e for e in br.d.find_elements(By.TAG_NAME, "button") if e.text == "Reintentar"]
    tools.stop()
    br.check("Reserva - modulo roto")
    br.click("Recargar la página")
    br.focused_heading("¿Olvidaste tu contraseña?")

    # a refused sign-up: the focus on the error
    srv.signup("ya.esta@example.com", "Ya Está")
    br.allowed_errors.append(r"/api/auth/signup - .*status of 409")
    br.open("/registro")
    br.fill("Nombre", "Otra Persona")
    br.fill("Correo electrónico", "ya.esta@example.com")
    br.fill("Contraseña", "secreto1")
    br.click("Crear cuenta")
    active_alert(br, "Si ya tenías cuenta")
    br.check("Reserva - registro rechazado")


def pressed(br):
    """The day the picker shows open ("2031-05-04"), or None."""
    return br.d.execute_script("const e = document.querySelector('.days [aria-pressed=true]'); return e && e.dataset.fecha")


def week(br):
    return br.d.execute_script("return [...document.querySelectorAll('.days [data-fecha]')].map(e => e.dataset.fecha)")


def set_day(br, field, day):
    """Writes a day into a date field as typing does (its input event)."""
    br.d.execute_script("arguments[0].value = arguments[1];"
                        "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));"
                        "arguments[0].dispatchEvent(new Event('change', {bubbles: true}))", field, day)


def ui_day(d):
    """A date ("2031-05-04") as the app words it: "domingo 4 de mayo"."""
    d = datetime.date.fromisoformat(d)
    dias = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
    meses = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"]
    return "%s %d de %s" % (dias[d.weekday()], d.day, meses[d.month - 1])


def full_day(srv, s, b):
    """The barber's first day from tomorrow with free hours, then filled
    (the desk books each of its free slots): a full day."""
    _, day = webtest.free_slot(srv, s["id"], b["id"])
    for n in range(100):
        huecos = srv.ok("GET", "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s" % (s["id"], day, b["id"]))["huecos"]
        if not huecos:
            return day
        srv.ok("POST", "/api/agenda/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": huecos[0]["inicio"],
                                             "cliente": {"nombre": "Cliente %d" % n, "telefono": "600 100 %03d" % n}}, token=srv.admin)
    raise AssertionError("the day never filled")


def signup_then_back(srv, br, s, b):
    """Signed out: a slot, "Crear cuenta y reservar", signed up, booked;
    Back never shows the sign-up form again nor calls her own slot taken;
    /registro and /entrar signed in send her on."""
    br.open("/reservar?servicio=%s&barbero=%s" % (s["id"], b["id"]))
    confirm_last_slot(br)
    br.click("Crear cuenta y reservar")
    br.focused_heading("Crear cuenta")
    br.fill("Nombre", "Nora Vuelve")
    br.fill("Correo electrónico", "nora.vuelve@example.com")
    br.fill("Contraseña", "secreto1")
    br.click("Crear cuenta")
    br.focused_heading("Confirma tu cita")
    br.click("Confirmar cita")
    br.focused_heading("¡Cita reservada!")
    tok = srv.login("nora.vuelve@example.com", "secreto1")
    cita = srv.ok("GET", "/api/citas", token=tok)["citas"][0]
    # Back: not the sign-up form (she is signed in), but the hours, her
    # slot said to be hers, not taken by someone else
    br.d.back()
    br.see("Ya tienes esta cita")
    br.focused_heading("Elige día y hora")
    assert "/registro" not in br.d.current_url and "inicio=" not in br.d.current_url, br.d.current_url
    assert "Lo sentimos" not in br.text() and "Crear cuenta" not in br.text(), br.text()
    br.button("Mis citas", within=br.d.find_element(By.CSS_SELECTOR, "main .ok"))
    br.check("Reserva - atras tras registrarse")
    # Back again: the hours as she first saw them
    br.d.back()
    br.wait(lambda: "Ya tienes esta cita" not in br.text(), what="the step before")
    br.focused_heading("Elige día y hora")
    slots(br)
    time.sleep(0.3)
    assert "Lo sentimos" not in br.text() and "Crear cuenta" not in br.text(), br.text()
    assert [c["id"] for c in srv.ok("GET", "/api/citas", token=tok)["citas"]] == [cita["id"]]
    # the sign-up and sign-in pages, signed in: on to where she was going
    br.open("/registro?volver=%2Fmis-citas")
    br.focused_heading("Mis citas")
    assert br.d.current_url.endswith("/mis-citas"), br.d.current_url
    br.open("/entrar")
    br.focused_heading("Mis citas")
    assert "Contraseña" not in br.text(), br.text()
    # a volver that is one "/" to a prefix check but another host to the
    # browser ("/\\host", "/<tab>/host") is not where she goes, nor does it
    # end in an error naming that host: her own page
    for v in ("%2F%5Cexample.com%2Fx", "%2F%09%2Fexample.com", "%2F%5C"):
        br.open("/entrar?volver=" + v)
        br.focused_heading("Mis citas")
        assert br.d.current_url == srv.base + "/mis-citas", br.d.current_url


def waiting_day(srv, br, s, b):
    """390x844, signed in: the waiting list's day follows the day the picker
    shows (next week, a day tapped, back); a full day, disabled in the
    picker, is hers to choose in the field, and the list is that day's."""
    full = full_day(srv, s, b)
    br.open("/reservar?servicio=%s&barbero=%s" % (s["id"], b["id"]))
    br.focused_heading("Elige día y hora")
    slots(br)

    def field():
        return br.d.find_element(By.ID, "espera-fecha").get_attribute("value")

    def follows(what):
        br.wait(lambda: pressed(br) and field() == pressed(br),
                what=lambda: "the waiting list's day (%s) following the picker's (%s) %s" % (field(), pressed(br), what))
        return field()

    first = follows("when it opens")
    week1 = week(br)
    assert full in week1, (full, week1)
    day = br.d.find_element(By.CSS_SELECTOR, ".days button[data-fecha='%s']" % full)
    assert not day.is_enabled() and "sin horas libres" in day.get_attribute("aria-label")
    # the next week: the field follows
    br.click("Semana siguiente ›")
    br.wait(lambda: pressed(br) and pressed(br) not in week1, what="the next week open")
    follows("in the next week")
    # another day tapped
    other = next(e for e in br.d.find_elements(By.CSS_SELECTOR, ".days button.day") if e.is_enabled() and e.get_attribute("aria-pressed") != "true")
    want = other.get_attribute("data-fecha")
    other.click()
    br.wait(lambda: pressed(br) == want, what="the day tapped open")
    follows("to the day tapped")
    br.click("‹ Semana anterior")
    br.wait(lambda: pressed(br) == first, what="the first week again")
    follows("back in the first week")
    # the full day: hers to choose in the field
    set_day(br, br.d.find_element(By.ID, "espera-fecha"), full)
    br.click("Avísame si se libera")
    br.see("Te avisaremos por correo si se libera una hora el %s." % ui_day(full))
    assert field() == full and pressed(br) == first
    tok = srv.login("nora.vuelve@example.com", "secreto1")
    entradas = srv.ok("GET", "/api/lista-espera", token=tok)["entradas"]
    assert [(e["fecha"], e["barbero_id"]) for e in entradas] == [(full, b["id"])], entradas
    br.check("Reserva - espera de un dia lleno")
    # a tap in the picker: the field follows it again
    br.d.find_element(By.CSS_SELECTOR, ".days button[data-fecha='%s']" % first).click()
    follows("after her tap")
    assert field() == first
    return full


def signed_in_booking(srv, br, s, b):
    _, uid = srv.signup("marta.reserva@example.com", "Marta Reserva")
    br.sign_in("marta.reserva@example.com", "secreto1", urllib.parse.quote("/reservar?servicio=%s&barbero=%s" % (s["id"], b["id"])))
    br.focused_heading("Elige día y hora")

    # "Avísame si se libera" tapped twice: one request, one answer
    btn = br.button("Avísame si se libera")
    br.d.execute_script("arguments[0].click(); arguments[0].click();", btn)
    br.see("Te avisaremos por correo")
    time.sleep(1)
    assert "Ya estás en la lista" not in br.text(), br.text()
    tok = srv.login("marta.reserva@example.com", "secreto1")
    assert len(srv.ok("GET", "/api/lista-espera", token=tok)["entradas"]) == 1

    # Back from the confirm step: the hours, the choices kept
    confirm_last_slot(br)
    br.button("Confirmar cita")
    assert "inicio=" in br.d.current_url
    br.d.back()
    br.focused_heading("Elige día y hora")
    br.see("Servicio: " + s["nombre"])
    assert "inicio=" not in br.d.current_url, br.d.current_url
    confirm_last_slot(br)
    br.click("Confirmar cita")
    br.focused_heading("¡Cita reservada!")
    deadline = br.d.find_element(By.CSS_SELECTOR, "main .deadline").text
    assert "Puedes cancelar hasta" in deadline and "(hora de Madrid)" in deadline, deadline
    assert "inicio=" not in br.d.current_url, br.d.current_url
    br.check("Reserva - reservada")
    # a reload: the hours again, not her slot "taken"
    br.d.refresh()
    br.focused_heading("Elige día y hora")
    assert "Lo sentimos" not in br.text(), br.text()

    # "Mis citas": no stray "null"; a photo's "Borrar" asks first
    tok = srv.login("marta.reserva@example.com", "secreto1")
    srv.ok("POST", "/api/auth/me/consentimientos", {"fotos": True}, token=tok)
    cita = srv.ok("GET", "/api/citas", token=tok)["citas"][0]
    srv.upload(tok, cita["id"], "antes", webtest.png_bytes())
    br.open("/mis-citas")
    br.focused_heading("Mis citas")
    br.see(s["nombre"])
    assert "null" not in br.text(), br.text()
    assert "(hora de Madrid), y cambiar" in br.text(), br.text()
    br.click("Borrar")
    br.see("¿Borrar la foto de antes?")
    assert len(srv.ok("GET", "/api/fotos?cita_id=" + cita["id"], token=tok)["fotos"]) == 1
    br.check("Reserva - borrar foto")
    br.click("Sí, borrar")
    br.see("Sin fotos.")
    assert not srv.ok("GET", "/api/fotos?cita_id=" + cita["id"], token=tok)["fotos"]
    # cancelled, its photos are still hers to see and delete (asked first),
    # with no uploads
    srv.upload(tok, cita["id"], "despues", webtest.png_bytes())
    srv.ok("POST", "/api/citas/%s/cancelar" % cita["id"], token=tok)
    br.open("/mis-citas")
    br.focused_heading("Mis citas")
    card = br.wait(lambda: next((c for c in br.d.find_elements(By.CSS_SELECTOR, "li.card.cancelled") if "Cancelada" in c.text), None), what="the cancelled appointment")
    br.wait(lambda: card.find_elements(By.CSS_SELECTOR, "img[alt='Foto de después']"), what="its photo")
    assert not card.find_elements(By.CSS_SELECTOR, "input[type=file]") and not br.d.find_elements(By.ID, "foto-despues-" + cita["id"])
    br.check("Reserva - fotos de una cita cancelada")
    br.click("Borrar", within=card)
    br.see("¿Borrar la foto de después?")
    br.click("No, mantenerla", within=card)
    assert card.find_elements(By.CSS_SELECTOR, "img[alt='Foto de después']")
    br.click("Borrar", within=card)
    br.click("Sí, borrar", within=card)
    br.wait(lambda: "Sin fotos." in card.text, what="the photo deleted")
    br.focused_heading("Fotos")
    assert not srv.ok("GET", "/api/fotos?cita_id=" + cita["id"], token=tok)["fotos"]

    # the session ends before "Confirmar cita": the focus on the error, the menu says "Entrar"
    br.open("/reservar?servicio=%s&barbero=%s" % (s["id"], b["id"]))
    confirm_last_slot(br)
    assert "Salir" in nav_items(br), nav_items(br)
    srv.ok("PATCH", "/api/admin/usuarios", {"userId": uid, "password": "otraclave1"}, token=srv.admin)
    br.allowed_errors.append(r"status of 401")
    br.click("Confirmar cita")
    active_alert(br, "Tu sesión ha caducado")
    br.wait(lambda: "Entrar" in nav_items(br) and "Salir" not in nav_items(br), what=lambda: "the menu signed out: %s" % nav_items(br))
    br.check("Reserva - confirmar caducada")


def desk(srv, br, s, b):
    _, barberos = srv.catalog()
    br.sign_in("admin@barberia.local", srv.admin_password, "/agenda")
    br.focused_heading("Agenda")
    desk_waiting_list(srv, br, s, barberos[1])
    # a walk-in now, with a phone (outside the hours if need be)
    for bb in barberos:
        st, js = srv.call("POST", "/api/agenda/citas", {
            "barbero_id": bb["id"], "servicio_id": s["id"],
            "fecha_inicio": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "fuera_de_horario": True, "cliente": {"nombre": "Nico Ahora", "telefono": "633 444 555"}}, token=srv.admin)
        if st == 201:
            walkin = bb
            break
    else:
        raise AssertionError("no barber free now: %s" % js)
    br.open("/agenda")
    br.focused_heading("Agenda")
    # the phone on the card: a 44 x 44 px target
    tel = br.wait(lambda: next((a for a in br.d.find_elements(By.CSS_SELECTOR, "main a[href^='tel:']") if a.is_displayed()), None), what="the phone link")
    assert tel.rect["height"] >= 44 and tel.rect["width"] >= 44, tel.rect

    # 1280x800: the grid; the line over the block, no column split
    br.d.set_window_size(1280, 800)
    grid = br.wait(lambda: next((g for g in br.d.find_elements(By.CSS_SELECTOR, ".rejilla") if g.is_displayed()), None), what="the grid")
    col = br.wait(lambda: next((c for c in grid.find_elements(By.CSS_SELECTOR, "section.col") if c.find_element(By.TAG_NAME, "h3").text == walkin["nombre"]), None), what="the barber's column")
    br.wait(lambda: col.find_elements(By.CSS_SELECTOR, ".ahora"), what="the current time's line")
    widths = br.d.execute_script(
        "const body = arguments[0].querySelector('.cuerpo'); const w = body.getBoundingClientRect().width;"
        "return [w, [...body.children].map(e => [e.className, e.getBoundingClientRect().width])]", col)
    narrow = [(c, w) for c, w in widths[1] if w < widths[0] - 6]
    assert not narrow, "elements narrower than their column (%s): %s" % (widths[0], narrow)
    br.check("Reserva - rejilla ahora")
    br.d.set_window_size(390, 844)

    # Informes: no stray "null" when no appointment was counted at today's price
    br.open("/admin")
    br.focused_heading("Administración")
    br.click("Informes")
    br.focused_heading("Informes")
    br.button("Descargar CSV")
    assert "null" not in br.text(), br.text()


def desk_waiting_list(srv, br, s, b):
    """The desk puts a client on a day's waiting list (the day follows its
    picker); another client chosen, or "Cliente nuevo": what was said of
    the first one goes."""
    from selenium.webdriver.support.ui import Select
    br.open("/agenda")
    br.focused_heading("Agenda")
    br.click("Nueva cita")
    br.focused_heading("Nueva cita")
    br.fill("Buscar cliente (nombre, teléfono o correo)", "Nora")
    br.click("Nora Vuelve · nora.vuelve@example.com")
    br.see("Cliente: Nora Vuelve")

    def control(label):
        lab = next(e for e in br.d.find_elements(By.TAG_NAME, "label") if e.text.strip() == label and e.is_displayed())
        return br.d.find_element(By.ID, lab.get_attribute("for"))
    Select(control("Servicio")).select_by_value(s["id"])
    Select(control("Barbero")).select_by_value(b["id"])
    slots(br)
    field = br.d.find_element(By.ID, "espera-mostrador-fecha")
    br.wait(lambda: pressed(br) and field.get_attribute("value") == pressed(br),
            what=lambda: "the desk's day (%s) following its picker's (%s)" % (field.get_attribute("value"), pressed(br)))
    br.click("Añadir a la lista de espera")
    br.click("Sí, añadir")
    said = "Nora Vuelve está en la lista de espera"
    br.see(said)
    br.check("Reserva - mostrador, en la lista de espera")
    br.click("Cambiar cliente")
    br.wait(lambda: said not in br.text(), what="the line about Nora gone")
    br.click("Cliente nuevo")
    time.sleep(0.2)
    assert said not in br.text(), br.text()
    br.check("Reserva - mostrador, cliente nuevo")


def test(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    signed_out_edges(srv, br, s, b)
    signup_then_back(srv, br, s, barberos[1])
    waiting_day(srv, br, s, barberos[1])
    br.click("Salir")
    br.see("Reserva tu cita")
    signed_in_booking(srv, br, s, b)
    desk(srv, br, s, b)


if __name__ == "__main__":
    webtest.main(test)
