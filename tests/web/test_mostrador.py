#!/usr/bin/python3
"""web/mostrador - the shop's front desk: on a phone a barber books a new
client ("Nueva cita": a client who has no account, the slot picker) and a
walk-in ("Ahora"), marks a no-show and sees it counted on the client's
cards (and takes back a mark made this morning on yesterday's card); puts a phone caller on a full day's waiting list (with a
confirmation), sees her entry under her name and takes her off, and is
told when a client has no way to be told, and records her WhatsApp consent;
puts a new caller on the waiting list with no booking (registered, with her
WhatsApp consent, on a shop that sends WhatsApp) and books another new
client who accepts WhatsApp and one with an e-mail and no phone; a new
client's refused field is said under it;
on a tablet the day is a grid with a column per barber, and a tap on
free time opens the booking with that barber and hour; the administrator
closes a day over two bookings and cancels them with a message. A walk-in's
refusal ("… está ocupado ahora") goes once another barber is chosen. The service
is chosen on purpose (none preselected); after a booking the announcement
covers none of the day's controls; the desk's hours have no online notice."""
import datetime
import os
import socket
import sys
import urllib.error
import urllib.request
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402

try:
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select
except ImportError:  # webtest.main skips the test
    Select = Keys = None

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


def control(br, label):
    """The form control its visible <label> names."""
    lab = next(e for e in br.d.find_elements(By.TAG_NAME, "label") if e.text.strip() == label and e.is_displayed())
    return br.d.find_element(By.ID, lab.get_attribute("for"))


def refused_on(br, el, words):
    """A new client's field the API refused, said at the field: the focus on
    it, marked aria-invalid and described (besides its hints) by the line
    right under it, which says words and is in the window with it; not on the
    form's own error line. Returns the line."""
    br.wait(lambda: br.active() == el, what="the focus on the refused field")
    line = br.wait(lambda: br.d.execute_script("const n = arguments[0].nextElementSibling; return n && n.id && !n.hidden && n.textContent.includes(arguments[1]) ? n : null", el, words),
                   what="%r right under its field" % words)
    assert el.get_attribute("aria-invalid") == "true", el.get_attribute("aria-invalid")
    assert line.get_attribute("id") in (el.get_attribute("aria-describedby") or "").split(), el.get_attribute("aria-describedby")
    assert line.get_attribute("role") == "alert"
    assert br.d.execute_script("return [arguments[0], arguments[1]].every(e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })", el, line), "the field or its refusal out of the window"
    assert not [e for e in br.d.find_elements(By.CSS_SELECTOR, "main form > .alert") if e.is_displayed()]
    return line


def edited_clears(br, el, line, keys):
    """An edit of the refused field takes its line and its mark away."""
    el.send_keys(keys)
    br.wait(lambda: not line.is_displayed(), what="the refusal gone with the edit")
    assert el.get_attribute("aria-invalid") is None, el.get_attribute("aria-invalid")
    assert line.get_attribute("id") not in (el.get_attribute("aria-describedby") or "").split(), el.get_attribute("aria-describedby")


def grid_at_tablet(srv, br, day, b):
    """1024x768: the day's grid opens on the barber's own column; with every
    barber, a column each; booked and free time; a tap on free time."""
    br.d.set_window_size(1024, 768)
    br.open("/agenda?fecha=" + day.isoformat())
    br.focused_heading("Agenda")
    def shown():
        return next((g for g in br.d.find_elements(By.CSS_SELECTOR, ".rejilla") if g.is_displayed()), None)

    def heads():
        try:
            return [e.text for e in shown().find_elements(By.CSS_SELECTOR, "section.col h3")]
        except Exception:  # not drawn yet, or drawn again meanwhile
            return None
    br.wait(lambda: shown() and heads() == [b["nombre"]], what=lambda: "the barber's own column, not %s" % heads())
    assert control(br, "Ver").get_attribute("value") == b["id"]
    Select(control(br, "Ver")).select_by_visible_text("Todos los barberos")
    _, barberos = srv.catalog()
    br.wait(lambda: heads() == [x["nombre"] for x in barberos], what=lambda: "a column per barber, not %s" % heads())
    col = next(c for c in shown().find_elements(By.CSS_SELECTOR, "section.col") if c.find_element(By.TAG_NAME, "h3").text == b["nombre"])
    booked = col.find_element(By.CSS_SELECTOR, ".bloque")
    assert "10:00" in booked.text and "Carla Gómez" in booked.text, booked.text
    # the 10:00 booking takes its rows; the lunch break is not free
    labels = [e.get_attribute("aria-label") for e in col.find_elements(By.CSS_SELECTOR, ".libre")]
    assert "Nueva cita con %s a las 09:45" % b["nombre"] in labels, labels
    assert "Nueva cita con %s a las 10:00" % b["nombre"] not in labels
    assert "Nueva cita con %s a las 14:00" % b["nombre"] not in labels
    # touch targets: a free row and a booking are at least 44 px high
    low = br.d.execute_script("return [...arguments[0].querySelectorAll('.libre, .bloque')].map(e => e.getBoundingClientRect().height).filter(x => x < 44)", shown())
    assert not low, "grid targets under 44 px: %s" % low
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
    br.wait(lambda: shown(), what="the grid again")
    br.d.set_window_size(390, 844)


def card(br, needle):
    """The visible agenda card that names needle."""
    return br.wait(lambda: next((c for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.is_displayed() and needle in c.text), None), what="the card of " + needle)


def card_text(br, needle):
    """The text of the visible card that names needle ('' while it is drawn again)."""
    try:
        return next((c.text for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.is_displayed() and needle in c.text), "")
    except Exception:
        return ""


def phone_desk(srv, br, b, s, day):
    """390x844: a new client by phone, a walk-in, a no-show."""
    br.open("/agenda")
    br.focused_heading("Agenda")
    br.click("Nueva cita")
    br.focused_heading("Nueva cita")
    br.check("Mostrador - nueva cita")
    br.click("Cliente nuevo")
    br.fill("Nombre", "Rosa Díaz")
    br.fill("Teléfono", "622 333 444")
    assert control(br, "Barbero").get_attribute("value") == b["id"]
    # with several services none is preselected: the hours wait for it, and
    # sending without it says so, with the focus on the field
    servicio = control(br, "Servicio")
    assert len(srv.catalog()[0]) > 1
    assert servicio.get_attribute("value") == "", servicio.get_attribute("value")
    assert Select(servicio).first_selected_option.text == "Elige un servicio"
    br.see("Elige el servicio para ver las horas libres.")
    assert not [e for e in br.d.find_elements(By.CSS_SELECTOR, "button.slot") if e.is_displayed()]
    br.click("Reservar cita")
    br.see("Elige el servicio que se va a hacer.")
    br.wait(lambda: br.active() == servicio, what="the focus on the service")
    br.check("Mostrador - nueva cita sin servicio")
    Select(servicio).select_by_value(s["id"])
    assert "Elige el servicio que se va a hacer." not in br.text()
    # a day ahead (today's first free hour may be in minutes, when the
    # walk-in below sits down)
    on = br.wait(lambda: next((e for e in br.d.find_elements(By.CSS_SELECTOR, ".days button.day[data-fecha='%s']" % day.isoformat()) if e.is_enabled()), None), what="the day's hours read")
    br.d.execute_script("arguments[0].scrollIntoView({block:'center'})", on)
    on.click()
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".days button.day[aria-pressed='true'][data-fecha='%s']" % day.isoformat()), what="the day shown")
    slot = br.wait(lambda: next((e for e in br.d.find_elements(By.CSS_SELECTOR, "button.slot") if e.is_displayed() and e.get_attribute("aria-label").startswith(ui_day(day) + ", ")), None), what="a free slot that day")
    when = slot.get_attribute("aria-label")
    br.d.execute_script("arguments[0].scrollIntoView({block:'center'})", slot)
    slot.click()
    br.see(when)
    br.check("Mostrador - nueva cita cliente nuevo")
    # a phone the shop cannot use: said plainly under the field, which has
    # the focus; typing in it again takes the words away
    br.allowed_errors.append(r"/api/agenda/citas - Failed to load resource: the server responded with a status of 400")
    tel = br.fill("Teléfono", "12")
    br.click("Reservar cita")
    line = refused_on(br, tel, "El teléfono no es válido: de 6 a 15 cifras")
    br.check("Mostrador - teléfono rechazado en su campo")
    edited_clears(br, tel, line, "3")
    br.fill("Teléfono", "622 333 444")
    br.click("Reservar cita")
    br.focused_heading(when.split(",")[0])
    rosa = card(br, "Rosa Díaz")
    # the announcement covers nothing: the day's next controls (her card's,
    # "Nueva cita") can be tapped at once, even at the bottom of the screen
    # (where a floating box would sit); its words are shown under the day's
    # heading, where the focus is
    br.wait(lambda: "Cita reservada: Rosa Díaz" in br.d.find_element(By.ID, "status").get_attribute("textContent"), what="the announcement")
    for e in rosa.find_elements(By.CSS_SELECTOR, "button, a") + [br.button("Nueva cita")]:
        for block in ("end", "start"):
            br.d.execute_script("arguments[0].scrollIntoView({block: arguments[1]})", e, block)
            br.hittable(e)
    assert br.d.execute_script("const n = document.activeElement.nextElementSibling; return n && n.textContent").startswith("Cita reservada: Rosa Díaz")
    assert "622 333 444" in rosa.text
    found = srv.ok("GET", "/api/clientes?q=rosa", token=srv.admin)["clientes"]
    assert [(c["nombre"], c["telefono"], c["puede_entrar"]) for c in found] == [("Rosa Díaz", "622 333 444", False)], found
    mine = [c for c in srv.ok("GET", "/api/citas?cliente_id=" + found[0]["id"], token=srv.admin)["citas"]]
    assert len(mine) == 1 and mine[0]["barbero_id"] == b["id"] and mine[0]["estado"] == "confirmada", mine

    # a walk-in: Carla is already a client; she sits down now
    br.click("Nueva cita")
    br.fill("Buscar cliente (nombre, teléfono o correo)", "611222")
    br.click("Carla Gómez · 611222333 · carla@example.com")
    br.see("Cliente: Carla Gómez")
    Select(control(br, "Servicio")).select_by_value(s["id"])
    br.click("Ahora (sin cita, ya está aquí)")
    br.see("Hora: ahora")
    # the test runs at any hour: outside the barber's hours too
    box = control(br, "Fuera de horario (aunque el barbero no trabaje a esa hora)")
    box.click()
    br.check("Mostrador - sin cita ahora")
    br.click("Reservar cita")
    carla = card(br, "Carla Gómez")
    br.check("Mostrador - dia con asistencia")
    # another walk-in for the same barber meanwhile: he is busy, and it says so
    br.allowed_errors.append(r"/api/agenda/citas - Failed to load resource: the server responded with a status of 409")
    br.click("Nueva cita")
    br.fill("Buscar cliente (nombre, teléfono o correo)", "rosa")
    br.wait(lambda: next((e for e in br.d.find_elements(By.CSS_SELECTOR, "button") if e.text.startswith("Rosa Díaz") and e.is_displayed()), None), what="Rosa in the search").click()
    Select(control(br, "Servicio")).select_by_value(s["id"])
    br.click("Ahora (sin cita, ya está aquí)")
    control(br, "Fuera de horario (aunque el barbero no trabaje a esa hora)").click()
    br.click("Reservar cita")
    br.see("está ocupado ahora: elige otra hora u otro barbero")
    # another barber chosen: the refusal, about the barber, goes at once
    other = next(x for x in srv.catalog()[1] if x["id"] != b["id"])
    Select(control(br, "Barbero")).select_by_value(other["id"])
    br.wait(lambda: "está ocupado ahora" not in br.text(), what="the refusal gone with its barber")
    assert not [e for e in br.d.find_elements(By.CSS_SELECTOR, "main .alert") if e.is_displayed()]
    # back at the day, afresh (the transfer budget counts from a page's start)
    br.open("/agenda")
    br.focused_heading("Agenda")
    carla = card(br, "Carla Gómez")
    # she did not come after all
    br.click("No vino", within=carla)
    br.wait(lambda: "No vino" in card_text(br, "Carla Gómez") and "Deshacer" in card_text(br, "Carla Gómez"), what="the no-show")
    # the focus is on her card's next action, not thrown to the top
    br.wait(lambda: br.active().text == "Deshacer", what="focus on Deshacer")
    br.see("1 vez no vino")
    cid = next(c for c in srv.ok("GET", "/api/clientes?q=carla", token=srv.admin)["clientes"])
    assert cid["no_presentado"] == 1, cid
    br.check("Mostrador - no vino")
    # a mistake: taken back the same day, then she did come
    br.click("Deshacer", within=card(br, "Carla Gómez"))
    br.wait(lambda: "Deshacer" not in card_text(br, "Carla Gómez"), what="the mark taken back")
    br.wait(lambda: br.active().text == "Vino", what="focus on Vino")
    br.click("Vino", within=card(br, "Carla Gómez"))
    br.wait(lambda: "Deshacer" in card_text(br, "Carla Gómez") and "1 vez no vino" not in br.text(), what="came")
    # her completed cuts counted on her card, as her no-shows are
    br.wait(lambda: "1 corte hecho aquí" in card_text(br, "Carla Gómez"), what="her completed cut, counted")
    # on a tablet's grid her card stays open under it, with its new state
    # and "Deshacer" (when the grid shows her hour)
    br.d.set_window_size(1024, 768)
    block = next((e for e in br.d.find_elements(By.CSS_SELECTOR, ".rejilla .bloque") if e.is_displayed() and "Carla Gómez" in e.text), None)
    if block:
        block.click()
        br.click("Deshacer", within=card(br, "Carla Gómez"))
        br.wait(lambda: br.active().text == "Vino" and br.active().find_element(By.XPATH, "ancestor::div[contains(@class,'detalle')]"), what="the card kept open in the grid")
        br.click("Vino", within=card(br, "Carla Gómez"))
        br.wait(lambda: br.active().text == "Deshacer" and br.active().find_element(By.XPATH, "ancestor::div[contains(@class,'detalle')]"), what="the card kept open, Deshacer")
    br.d.set_window_size(390, 844)
    estados = [c["estado"] for c in srv.ok("GET", "/api/citas?cliente_id=" + cid["id"], token=srv.admin)["citas"]]
    assert sorted(estados) == ["completada", "confirmada"], estados


def desk_notice(srv, br, s, bb):
    """The desk's hours have no online notice (GET /api/agenda/huecos): a
    free time within it, today, is offered at "Nueva cita", not on /reservar."""
    now = datetime.datetime.now(MADRID)
    today = now.date()
    week = srv.ok("GET", "/api/barberos/%s/horario" % bb["id"])["horario"]
    dia = today.isoweekday()
    # the barber works all day today, whatever the hour the test runs at
    srv.ok("PUT", "/api/admin/barberos/%s/horario" % bb["id"],
           {"horario": [x for x in week if x["dia"] != dia] + [{"dia": dia, "inicio": "00:00", "fin": "24:00"}]}, token=srv.admin)
    notice = datetime.timedelta(minutes=srv.ok("GET", "/api/config")["antelacion_min"])
    q = "servicio_id=%s&fecha=%s&barbero_id=%s" % (s["id"], today.isoformat(), bb["id"])
    def at(x):
        return datetime.datetime.fromisoformat(x["inicio"].replace("Z", "+00:00")).astimezone(MADRID)
    soon = [at(x) for x in srv.ok("GET", "/api/agenda/huecos?" + q, token=srv.admin)["huecos"] if at(x) < now + notice]
    if soon:  # none only when the day is about to end
        hhmm = soon[0].strftime("%H:%M")
        todays = "button.slot[aria-label^='%s']" % "%s, " % ui_day(today)
        br.open("/agenda")
        br.focused_heading("Agenda")
        br.click("Nueva cita")
        br.focused_heading("Nueva cita")
        Select(control(br, "Servicio")).select_by_value(s["id"])
        Select(control(br, "Barbero")).select_by_value(bb["id"])
        br.wait(lambda: hhmm in [e.text for e in br.d.find_elements(By.CSS_SELECTOR, todays) if e.is_displayed()],
                what=lambda: "%s offered at the desk, not only %s" % (hhmm, [e.text for e in br.d.find_elements(By.CSS_SELECTOR, "button.slot")][:8]))
        br.click("Volver a la agenda")
        br.open("/reservar?servicio=%s&barbero=%s" % (s["id"], bb["id"]))
        br.focused_heading("Elige día y hora")
        day_btn = "document.querySelector(\".days button.day[data-fecha='%s']\")" % today.isoformat()
        br.wait(lambda: br.d.execute_script("const b = %s; return !!b && !b.getAttribute('aria-label').endsWith(', cargando')" % day_btn), what="today read online")
        if br.d.execute_script("return !%s.disabled" % day_btn):
            br.d.execute_script("%s.click()" % day_btn)
            br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, todays), what="today's online hours")
            offered = [e.text for e in br.d.find_elements(By.CSS_SELECTOR, todays)]
            assert hhmm not in offered, (hhmm, offered)
    srv.ok("PUT", "/api/admin/barberos/%s/horario" % bb["id"], {"horario": week}, token=srv.admin)


def ui_day(d):
    """A date as the app words it: "martes 14 de octubre"."""
    dias = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
    meses = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"]
    return "%s %d de %s" % (dias[d.weekday()], d.day, meses[d.month - 1])


def waiting_list(srv, br, b, s, day):
    """390x844: Carla calls for a day with no free hour: the desk puts her on
    its waiting list, confirms, sees the entry under her name and removes it;
    Rosa (no e-mail, no WhatsApp) cannot be told: the desk is told so, and
    records her WhatsApp consent given on the phone, then withdraws it."""
    br.allowed_errors.append(r"/api/lista-espera - Failed to load resource: the server responded with a status of 400")
    # Carla gave her WhatsApp consent in her account and withdrew it there
    carla = srv.login("carla@example.com", "secreto1")
    srv.ok("PUT", "/api/auth/me/whatsapp", {"acepta": True}, token=carla)
    srv.ok("PUT", "/api/auth/me/whatsapp", {"acepta": False}, token=carla)
    br.open("/agenda")
    br.focused_heading("Agenda")
    br.click("Nueva cita")
    br.focused_heading("Nueva cita")
    br.fill("Buscar cliente (nombre, teléfono o correo)", "611222")
    # her completed cut in the search's result too, in the card's words
    br.click("Carla Gómez · 611222333 · carla@example.com · 1 corte hecho aquí")
    br.see("Cliente: Carla Gómez · 611222333 · carla@example.com · 1 corte hecho aquí")
    br.see("No está en ninguna lista de espera.")
    # the desk sees she withdrew it herself, and is not told to ask her again
    br.see("Lo retiró desde su cuenta el ")
    assert "Pregúntale" not in br.d.find_element(By.CSS_SELECTOR, ".whatsapp").text
    assert control(br, "Barbero").get_attribute("value") == b["id"]
    Select(control(br, "Servicio")).select_by_value(s["id"])
    br.d.execute_script("arguments[0].value = arguments[1]", control(br, "Día"), day.isoformat())
    br.click("Añadir a la lista de espera")
    br.see("¿Añadir a Carla Gómez a la lista de espera?")
    br.check("Mostrador - lista de espera confirmar")
    assert srv.ok("GET", "/api/lista-espera?cliente_id=" + carla_id(srv), token=srv.admin)["entradas"] == []
    br.click("Sí, añadir")
    br.see("Carla Gómez está en la lista de espera")
    entradas = srv.ok("GET", "/api/lista-espera?cliente_id=" + carla_id(srv), token=srv.admin)["entradas"]
    assert [(e["fecha"], e["servicio_id"], e["barbero_id"]) for e in entradas] == [(day.isoformat(), s["id"], b["id"])], entradas
    # her entry under her name, removable
    quitar = br.wait(lambda: next((e for e in br.d.find_elements(By.CSS_SELECTOR, "button") if e.is_displayed() and (e.get_attribute("aria-label") or "").startswith("Quitar de la lista de espera")), None), what="the entry's Quitar")
    br.check("Mostrador - lista de espera añadida")
    quitar.click()
    br.see("No está en ninguna lista de espera.")
    br.focused_heading("En la lista de espera")
    assert srv.ok("GET", "/api/lista-espera?cliente_id=" + carla_id(srv), token=srv.admin)["entradas"] == []
    # Rosa, booked at the desk with a phone only: no way to tell her
    br.click("Cambiar cliente")
    br.fill("Buscar cliente (nombre, teléfono o correo)", "Rosa")
    br.click("Rosa Díaz · 622 333 444")
    br.see("Cliente: Rosa Díaz")
    br.d.execute_script("arguments[0].value = arguments[1]", control(br, "Día"), day.isoformat())
    br.click("Añadir a la lista de espera")
    br.click("Sí, añadir")
    br.see("El cliente no tiene correo ni WhatsApp para avisarle")
    br.check("Mostrador - lista de espera sin canal")
    # she agrees on the phone to WhatsApp notices: the desk records it, and takes it back
    rosa = next(c for c in srv.ok("GET", "/api/clientes?q=rosa", token=srv.admin)["clientes"])["id"]
    box = control(br, "Acepta avisos por WhatsApp")
    br.wait(lambda: box.is_enabled(), what="her consent read")
    assert not box.is_selected()
    box.click()
    br.see("avisos de la lista de espera al +34622333444")
    br.see("Registrado en el mostrador el ")
    assert box.is_selected()
    br.check("Mostrador - WhatsApp aceptado")
    assert srv.ok("GET", "/api/clientes/%s/whatsapp" % rosa, token=srv.admin)["whatsapp"]["acepta"] is True
    br.wait(lambda: box.is_enabled(), what="the consent recorded")
    box.click()
    br.see("Pregúntale si quiere recibir por WhatsApp")
    br.see("Retirado en el mostrador el ")
    assert not box.is_selected()
    assert srv.ok("GET", "/api/clientes/%s/whatsapp" % rosa, token=srv.admin)["whatsapp"]["acepta"] is False
    br.click("Volver a la agenda")
    br.button("Nueva cita")


def new_caller(srv, br):
    """390x844: a caller the shop does not know, for a full day: "Cliente
    nuevo" is put on the waiting list with no booking (POST /api/clientes,
    then her WhatsApp consent, then the entry), on a shop that sends
    WhatsApp (a server of its own; the messages' API is a closed port); her
    phone refused first, said under its field. One who does not accept WhatsApp
    and has no e-mail is refused by the list, and stays registered and
    chosen: her WhatsApp ticked, she is added. Then a new client booked with
    "Acepta avisos por WhatsApp" ticked has her consent recorded, and one
    with an e-mail and no phone is booked."""
    # this shop sends no WhatsApp: the new client's box is not offered
    br.open("/agenda")
    br.click("Nueva cita")
    br.click("Cliente nuevo")
    br.fill("Nombre", "Elena Ruiz")
    br.fill("Teléfono", "655 111 222")
    assert "Acepta avisos por WhatsApp" not in br.text()
    br.click("Volver a la agenda")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed = free.getsockname()[1]
    wa = webtest.Server(srv.proc.args[0], {
        "BARBERIA_WHATSAPP_TOKEN": "EAAtestTOKEN", "BARBERIA_WHATSAPP_PHONE_NUMBER_ID": "1234567",
        "BARBERIA_WHATSAPP_API_URL": "http://127.0.0.1:%d/v21.0" % closed})
    # under another name: its session cookie leaves the first shop's alone
    # (a cookie is the host's, whatever the port)
    wa.base = wa.base.replace("127.0.0.1", "localhost")
    br.s = wa
    try:
        assert wa.ok("GET", "/api/config")["whatsapp"] is True
        br.allowed_errors.append(r"/api/clientes - Failed to load resource: the server responded with a status of 400")
        servicios, _ = wa.catalog()
        s = servicios[0]
        day = working_day(datetime.datetime.now(MADRID).date())
        br.sign_in("admin@barberia.local", wa.admin_password, "/agenda")
        br.focused_heading("Agenda")
        br.click("Nueva cita")
        br.focused_heading("Nueva cita")
        br.click("Cliente nuevo")
        br.fill("Nombre", "Elena Ruiz")
        # asked only once a phone is typed
        assert "Acepta avisos por WhatsApp" not in br.text()
        tel = br.fill("Teléfono", "12")
        box = br.wait(lambda: control(br, "Acepta avisos por WhatsApp"), what="the WhatsApp box")
        box.click()
        Select(control(br, "Servicio")).select_by_value(s["id"])
        b = control(br, "Barbero").get_attribute("value")
        br.d.execute_script("arguments[0].value = arguments[1]", control(br, "Día"), day.isoformat())
        br.click("Añadir a la lista de espera")
        br.see("¿Añadir a Elena Ruiz a la lista de espera? %s, %s, con " % (s["nombre"], ui_day(day)))
        br.check("Mostrador - cliente nuevo a la lista de espera")
        assert wa.ok("GET", "/api/clientes?q=elena", token=wa.admin)["clientes"] == []
        # a phone the shop cannot use: said as for a booking, on its field
        br.click("Sí, añadir")
        refused_on(br, tel, "El teléfono no es válido")
        assert wa.ok("GET", "/api/clientes?q=elena", token=wa.admin)["clientes"] == []
        br.fill("Teléfono", "655 111 222")
        br.click("Añadir a la lista de espera")
        br.click("Sí, añadir")
        br.see("Elena Ruiz está en la lista de espera")
        # she is the chosen client now: her name, her consent, her entry
        br.see("Cliente: Elena Ruiz · 655 111 222")
        br.see("Registrado en el mostrador el ")
        br.wait(lambda: control(br, "Acepta avisos por WhatsApp").is_selected(), what="her consent shown")
        br.wait(lambda: next((e for e in br.d.find_elements(By.CSS_SELECTOR, "button") if e.is_displayed() and (e.get_attribute("aria-label") or "").startswith("Quitar de la lista de espera")), None), what="her entry")
        br.check("Mostrador - cliente nuevo en la lista de espera")
        found = wa.ok("GET", "/api/clientes?q=elena", token=wa.admin)["clientes"]
        assert [(c["nombre"], c["telefono"]) for c in found] == [("Elena Ruiz", "655 111 222")], found
        eid = found[0]["id"]
        entradas = wa.ok("GET", "/api/lista-espera?cliente_id=" + eid, token=wa.admin)["entradas"]
        assert [(e["fecha"], e["servicio_id"], e["barbero_id"]) for e in entradas] == [(day.isoformat(), s["id"], b)], entradas
        assert wa.ok("GET", "/api/citas?cliente_id=" + eid, token=wa.admin)["citas"] == []
        assert wa.ok("GET", "/api/clientes/%s/whatsapp" % eid, token=wa.admin)["whatsapp"]["acepta"] is True
        br.click("Volver a la agenda")
        # without it, no notice could reach a phone-only caller: the list
        # refuses her, and she stays registered and chosen, to tick it
        br.allowed_errors.append(r"/api/lista-espera - Failed to load resource: the server responded with a status of 400")
        br.click("Nueva cita")
        br.click("Cliente nuevo")
        br.fill("Nombre", "Inés Mora")
        br.fill("Teléfono", "655 333 444")
        Select(control(br, "Servicio")).select_by_value(s["id"])
        br.d.execute_script("arguments[0].value = arguments[1]", control(br, "Día"), day.isoformat())
        br.click("Añadir a la lista de espera")
        br.click("Sí, añadir")
        br.see("El cliente no tiene correo ni WhatsApp para avisarle")
        br.see("Cliente: Inés Mora · 655 333 444")
        ines = wa.ok("GET", "/api/clientes?q=ines", token=wa.admin)["clientes"]
        assert len(ines) == 1 and wa.ok("GET", "/api/lista-espera?cliente_id=" + ines[0]["id"], token=wa.admin)["entradas"] == [], ines
        box = control(br, "Acepta avisos por WhatsApp")
        br.wait(lambda: box.is_enabled(), what="her consent read")
        box.click()
        br.see("Registrado en el mostrador el ")
        br.click("Añadir a la lista de espera")
        br.click("Sí, añadir")
        br.see("Inés Mora está en la lista de espera")
        assert len(wa.ok("GET", "/api/lista-espera?cliente_id=" + ines[0]["id"], token=wa.admin)["entradas"]) == 1
        assert len(wa.ok("GET", "/api/clientes?q=ines", token=wa.admin)["clientes"]) == 1
        br.click("Volver a la agenda")
        # a new client booked, accepting WhatsApp: her consent recorded too
        br.click("Nueva cita")
        br.click("Cliente nuevo")
        br.fill("Nombre", "Pablo Ruiz")
        br.fill("Teléfono", "655 222 333")
        control(br, "Acepta avisos por WhatsApp").click()
        Select(control(br, "Servicio")).select_by_value(s["id"])
        br.click("Ahora (sin cita, ya está aquí)")
        control(br, "Fuera de horario (aunque el barbero no trabaje a esa hora)").click()
        br.click("Reservar cita")
        card(br, "Pablo Ruiz")
        br.wait(lambda: "Acepta avisos por WhatsApp" in br.d.find_element(By.ID, "status").get_attribute("textContent"), what="the consent said")
        pablo = wa.ok("GET", "/api/clientes?q=pablo", token=wa.admin)["clientes"]
        assert len(pablo) == 1 and wa.ok("GET", "/api/clientes/%s/whatsapp" % pablo[0]["id"], token=wa.admin)["whatsapp"]["acepta"] is True, pablo
        # a new client who gives an e-mail and no phone: the phone is needed
        # only while the e-mail is empty; she is booked (with another barber:
        # Pablo's is with him)
        br.click("Nueva cita")
        br.click("Cliente nuevo")
        br.fill("Nombre", "Sara León")
        tel = control(br, "Teléfono")
        assert tel.get_attribute("required") == "true"
        email = br.fill("Correo electrónico (opcional)", "sara@example.com")
        assert tel.get_attribute("required") is None
        email.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
        br.wait(lambda: tel.get_attribute("required") == "true", what="the phone needed again")
        email.send_keys("sara@example.com")
        assert "Acepta avisos por WhatsApp" not in br.text()
        Select(control(br, "Servicio")).select_by_value(s["id"])
        Select(control(br, "Barbero")).select_by_value(wa.catalog()[1][-1]["id"])
        br.click("Ahora (sin cita, ya está aquí)")
        control(br, "Fuera de horario (aunque el barbero no trabaje a esa hora)").click()
        br.click("Reservar cita")
        br.wait(lambda: "Cita reservada: Sara León" in br.d.find_element(By.ID, "status").get_attribute("textContent"), what="Sara booked")
        sara = wa.ok("GET", "/api/clientes?q=sara", token=wa.admin)["clientes"]
        assert [(c["nombre"], c["telefono"], c["email"]) for c in sara] == [("Sara León", None, "sara@example.com")], sara
        assert len(wa.ok("GET", "/api/citas?cliente_id=" + sara[0]["id"], token=wa.admin)["citas"]) == 1
    finally:
        br.s = srv
        try:
            br.open("/agenda")  # off that shop's pages (they ask every 60 s) before it stops
        finally:
            wa.stop()
    br.focused_heading("Agenda")


def carla_id(srv):
    return next(c for c in srv.ok("GET", "/api/clientes?q=carla", token=srv.admin)["clientes"])["id"]


def closure(srv, br, day, b, s):
    """The administrator closes a barber's day over two bookings and
    cancels them with a message; the barber's calendar link, renewed; a
    service's clean-up margin."""
    t1, _ = srv.signup("luis@example.com", "Luis Prado", "633000111")
    t2, _ = srv.signup("marta@example.com", "Marta Vela", "633000222")
    ids = [srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": utc(day, hh)}, token=tok)["cita"]["id"] for tok, hh in ((t1, 11), (t2, 17))]
    # booked at the desk with a phone only: no cancellation reaches her
    ids.append(srv.ok("POST", "/api/agenda/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": utc(day, 12),
                                                    "cliente": {"nombre": "Nuria Sanz", "telefono": "644 555 666"}}, token=srv.admin)["cita"]["id"])
    br.click("Salir")
    br.button("Entrar")  # signed out (the app forgot the session) before leaving the page
    br.sign_in("admin@barberia.local", srv.admin_password, "/admin")
    br.focused_heading("Administración")
    br.click("Cierres y días libres")
    br.focused_heading("Cierres y días libres")
    Select(control(br, "Quién")).select_by_visible_text(b["nombre"])
    for label in ("Desde (fecha)", "Hasta (fecha, incluida)"):
        br.d.execute_script("arguments[0].value = arguments[1]", control(br, label), day.isoformat())
    br.fill("Motivo (opcional)", "Formación")
    br.click("Añadir")
    br.focused_heading("Este cierre coincide con 3 citas")
    # the list shows the new closure at once, in words, and the form is empty again
    br.see(b["nombre"] + ": el " )
    br.see(" · Formación")
    assert "No hay cierres ni días libres." not in br.text()
    assert control(br, "Motivo (opcional)").get_attribute("value") == ""
    assert control(br, "Desde (fecha)").get_attribute("value") == ""
    br.see("Luis Prado")
    br.see("Marta Vela")
    # whom no cancellation reaches: the shop is to call her
    br.see("Nuria Sanz")
    br.see("Sin correo ni WhatsApp: llama al 644 555 666")
    tel = br.d.find_element(By.CSS_SELECTOR, "main .confirm a[href^='tel:']")
    assert tel.get_attribute("href") == "tel:644555666", tel.get_attribute("href")
    # a touch target of its own on a phone: 44 x 44 px at least
    br.tap_target(tel)
    assert "Cada cliente recibe" not in br.text()
    br.see("hay que llamarlos")
    br.fill("Mensaje para los clientes (opcional)", "Carlos está de formación ese día. Te esperamos otro día.")
    br.check("Mostrador - cierre con citas")
    br.click("Cancelar las 3 citas y avisar a 2 clientes")
    br.focused_heading("3 citas canceladas; 2 clientes avisados; 1 sin aviso: hay que llamarlos")
    br.see("Sin correo ni WhatsApp: llama al 644 555 666")
    assert br.d.find_element(By.CSS_SELECTOR, "main .confirm a[href^='tel:']").get_attribute("href") == "tel:644555666"
    assert "Luis Prado" not in br.text()
    br.check("Mostrador - cierre cancelado, a quién llamar")
    br.click("Entendido")
    br.focused_heading("Cierres y días libres")
    citas = srv.ok("GET", "/api/citas?desde=%s&hasta=%s" % (day.isoformat(), (day + datetime.timedelta(days=1)).isoformat()), token=srv.admin)["citas"]
    assert sorted(c["estado"] for c in citas if c["id"] in ids) == ["cancelada"] * 3, citas
    br.click("Citas afectadas")
    br.focused_heading("Este cierre no coincide con ninguna cita")
    br.click("Entendido")
    br.focused_heading("Cierres y días libres")
    # deleting asks first
    br.click("Borrar")
    br.see("¿Borrar el cierre de " + b["nombre"])
    assert len(srv.ok("GET", "/api/admin/ausencias", token=srv.admin)["ausencias"]) == 1
    br.click("No, mantenerlo")
    br.click("Borrar")
    br.click("Sí, borrar")
    br.see("No hay cierres ni días libres.")
    assert srv.ok("GET", "/api/admin/ausencias", token=srv.admin)["ausencias"] == []

    br.click("Barberos")
    br.focused_heading("Barberos")
    br.click("Crear enlace del calendario", within=barber_card(br, b))
    url = br.wait(lambda: feed_link(br), what="the feed link")
    assert "/api/barberos/%s/agenda.ics?token=" % b["id"] in url, url
    with urllib.request.urlopen(url, timeout=30) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/calendar")
    br.check("Mostrador - enlace del calendario")
    # renewed: a new link, the old one stops working
    br.click("Renovar enlace", within=barber_card(br, b))
    br.wait(lambda: feed_link(br) not in (None, url), what="the new link")
    try:
        urllib.request.urlopen(url, timeout=30)
        raise AssertionError("the old link still works")
    except urllib.error.HTTPError as e:
        assert e.code == 404, e.code

    # a service's clean-up margin
    br.click("Servicios")
    br.focused_heading("Servicios")
    svc = br.wait(lambda: next((c for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.text.startswith(s["nombre"])), None), what="the service")
    m = svc.find_element(By.CSS_SELECTOR, "input[type=number][max='120']")
    m.clear()
    m.send_keys("10")
    br.click("Guardar", within=svc)
    br.wait(lambda: next(x for x in srv.ok("GET", "/api/admin/servicios", token=srv.admin)["servicios"] if x["id"] == s["id"])["margen_min"] == 10, what="the margin stored")


def feed_link(br):
    """The calendar link shown (None while it is drawn)."""
    try:
        return next((e.get_attribute("value") for e in br.d.find_elements(By.CSS_SELECTOR, "input[readonly]") if e.is_displayed()), None)
    except Exception:
        return None


def barber_card(br, b):
    return br.wait(lambda: next((c for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.find_element(By.TAG_NAME, "h3").text == b["nombre"]), None), what="the barber's card")


def now_line(srv, br, b, s):
    """On a tablet today's grid marks the current time with a line across
    the columns, scrolled into view when the agenda opens; a no-show's
    block says so in words, not by its colour alone."""
    now = datetime.datetime.now(MADRID)
    if not datetime.time(0, 10) <= now.time() <= datetime.time(22, 30):
        return  # the appointment that widens today's grid to now would cross midnight
    start = (now - datetime.timedelta(minutes=2)).astimezone(datetime.timezone.utc)
    cita = srv.ok("POST", "/api/agenda/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": start.strftime("%Y-%m-%dT%H:%M:00Z"),
                                                "cliente_id": carla_id(srv), "fuera_de_horario": True}, token=srv.admin)["cita"]
    srv.ok("POST", "/api/citas/%s/asistencia" % cita["id"], {"estado": "no_presentado"}, token=srv.admin)
    br.d.set_window_size(1024, 500)
    br.open("/agenda?fecha=" + now.date().isoformat())
    Select(br.wait(lambda: control(br, "Ver"), what="the barber filter")).select_by_visible_text("Todos los barberos")

    def lines():
        return [e for e in br.d.find_elements(By.CSS_SELECTOR, ".rejilla .ahora") if e.is_displayed()]
    br.wait(lambda: len(lines()) == len(srv.catalog()[1]) + 1, what=lambda: "a line in the axis and each column, not %d" % len(lines()))
    top, height = br.d.execute_script("return [arguments[0].getBoundingClientRect().top, innerHeight]", lines()[0])
    assert 0 <= top <= height, "the current time is out of view: line at %s of %s px" % (top, height)
    block = br.wait(lambda: next((e for e in br.d.find_elements(By.CSS_SELECTOR, ".rejilla .bloque") if e.is_displayed() and "Carla Gómez" in e.text and "No vino" in e.text), None),
                    what="Carla's no-show block, in words")
    assert "no_presentado" in block.get_attribute("class")
    br.d.set_window_size(390, 844)


def marked_this_morning(srv, br, b, s):
    """Yesterday's appointment marked this morning (a late one, tapped
    wrong): its card keeps "Deshacer", as the API lets a mark be taken back
    on the day it was made, whatever the appointment's day (the card used to
    offer it only for today's appointments, so the wrong no-show stayed)."""
    yesterday = datetime.datetime.now(MADRID).date() - datetime.timedelta(days=1)
    token, _ = srv.signup("berta.ayer@example.com", "Berta Ayer", "622333444")
    cita = srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": utc(yesterday, 12)}, token=token)["cita"]
    br.d.set_window_size(390, 844)
    br.open("/agenda?fecha=%s&barbero=%s" % (yesterday.isoformat(), b["id"]))
    br.focused_heading("Agenda")
    br.click("No vino", within=card(br, "Berta Ayer"))
    br.wait(lambda: "Deshacer" in card_text(br, "Berta Ayer"), what="the no-show, with Deshacer")
    br.wait(lambda: br.active().text == "Deshacer", what="focus on Deshacer")
    br.click("Deshacer", within=card(br, "Berta Ayer"))
    br.wait(lambda: "Deshacer" not in card_text(br, "Berta Ayer"), what="the mark taken back")
    estado = next(c for c in srv.ok("GET", "/api/citas?cliente_id=" + cita["cliente_id"], token=srv.admin)["citas"] if c["id"] == cita["id"])["estado"]
    assert estado == "confirmada", estado


def test(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    client, _ = srv.signup("carla@example.com", "Carla Gómez", "611222333")
    _, barber_user = srv.signup("barbero@example.com", "Pepe Barbero")
    srv.ok("PATCH", "/api/admin/usuarios", {"userId": barber_user, "rol": "barbero"}, token=srv.admin)
    # the barber's account speaks for barber b: the agenda opens on b
    srv.ok("PATCH", "/api/admin/barberos/" + b["id"], {"usuario_id": barber_user}, token=srv.admin)
    today = datetime.datetime.now(MADRID).date()
    day = working_day(today)
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": utc(day, 10)}, token=client)

    br.sign_in("barbero@example.com", "secreto1", "/agenda")
    br.focused_heading("Agenda")
    grid_at_tablet(srv, br, day, b)
    phone_desk(srv, br, b, s, day)
    desk_notice(srv, br, s, barberos[-1])
    waiting_list(srv, br, b, s, working_day(day))
    new_caller(srv, br)
    closure(srv, br, working_day(day), b, s)
    now_line(srv, br, barberos[-1], s)
    marked_this_morning(srv, br, b, s)


if __name__ == "__main__":
    webtest.main(test)
