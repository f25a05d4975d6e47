#!/usr/bin/python3
"""web/clientes - the front desk corrects a client it made, on a phone
(390x844): a walk-in booked through "Nueva cita" with a mistyped phone is
corrected from her agenda card ("Corregir datos": her details in place;
nothing changed is said; "No cambiar" gives the focus back to the button; an
e-mail another account has is refused, said in the form with the focus on
the e-mail field; the phone corrected and an e-mail added; the phone
removed; a bad phone and a client left with no phone nor e-mail refused),
and from "Nueva cita" once she is chosen (Enter saves, and books nothing).
A client who signed up herself has no "Corregir datos", only the hint that
she changes them in her account. Her "Mis citas" past the cut-off, in a shop whose phone is
not set, says to call the shop, with no number.
Every state: axe-core, 360 px, transfer budget, console (webtest.py)."""
import datetime
import os
import sys
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
HINT = "Tiene cuenta: cambia sus datos desde «Mi cuenta»."


def control(br, label):
    """The visible form control its <label> names."""
    lab = br.wait(lambda: next((e for e in br.d.find_elements(By.TAG_NAME, "label") if e.text.strip() == label and e.is_displayed()), None), what="label " + label)
    return br.d.find_element(By.ID, lab.get_attribute("for"))


def card(br, needle):
    """The visible agenda card that names needle."""
    return br.wait(lambda: next((c for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.is_displayed() and needle in c.text), None), what="the card of " + needle)


def card_text(br, needle):
    """The text of the visible card that names needle ('' while it is drawn again)."""
    try:
        return next((c.text for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.is_displayed() and needle in c.text), "")
    except Exception:
        return ""


def fix_box(br):
    """The correction's fieldset shown."""
    return br.wait(lambda: next((f for f in br.d.find_elements(By.CSS_SELECTOR, ".corregir fieldset") if f.is_displayed()), None), what="the correction's form")


def focus_on(br, el, what):
    br.wait(lambda: br.active() == el, what=lambda: "the focus on %s, not %s" % (what, br.active().get_attribute("outerHTML")[:120]))


def cliente(srv, cid):
    got = srv.ok("GET", "/api/clientes?id=" + cid, token=srv.admin)["clientes"]
    assert len(got) == 1, got
    return got[0]


def announced(br, msg):
    """msg read out (the live region) and shown right after the focus."""
    br.wait(lambda: msg in br.d.find_element(By.ID, "status").get_attribute("textContent"), what="the announcement " + msg)
    br.wait(lambda: br.d.execute_script("const n = document.activeElement.nextElementSibling; return !!n && n.textContent === arguments[0]", msg),
            what="%r shown after the focus" % msg)


def from_card(srv, br, s):
    """A walk-in booked as a new client with a mistyped phone; her details
    corrected from her card."""
    br.open("/agenda")
    br.focused_heading("Agenda")
    br.click("Nueva cita")
    br.focused_heading("Nueva cita")
    br.click("Cliente nuevo")
    br.fill("Nombre", "Lola Ruiz")
    br.fill("Teléfono", "699 000 11")  # a digit short of her number
    Select(control(br, "Servicio")).select_by_value(s["id"])
    br.click("Ahora (sin cita, ya está aquí)")
    br.see("Hora: ahora")
    control(br, "Fuera de horario (aunque el barbero no trabaje a esa hora)").click()
    br.click("Reservar cita")
    lola = card(br, "Lola Ruiz")
    assert "699 000 11" in lola.text, lola.text
    found = srv.ok("GET", "/api/clientes?q=lola", token=srv.admin)["clientes"]
    assert [(c["nombre"], c["telefono"], c["email"], c["puede_entrar"]) for c in found] == [("Lola Ruiz", "699 000 11", None, False)], found
    lid = found[0]["id"]

    # the form, in place, with her details; "No cambiar" gives the focus back
    fix = br.click("Corregir datos", within=lola)
    box = fix_box(br)
    assert box.find_element(By.TAG_NAME, "legend").text == "Corregir datos de Lola Ruiz"
    nombre, tel, email = control(br, "Nombre"), control(br, "Teléfono"), control(br, "Correo electrónico")
    assert [e.get_attribute("value") for e in (nombre, tel, email)] == ["Lola Ruiz", "699 000 11", ""]
    assert [e.get_attribute("autocomplete") for e in (nombre, tel, email)] == ["off"] * 3
    assert [e.get_attribute("type") for e in (tel, email)] == ["tel", "email"]
    focus_on(br, nombre, "Nombre")
    # touch targets on a phone: every control of the form 44 px high at least
    low = br.d.execute_script("return [...arguments[0].querySelectorAll('input, button')].map(e => [e.outerHTML.slice(0, 60), e.getBoundingClientRect().height]).filter(x => x[1] < 44)", box)
    assert not low, low
    br.check("Clientes - corregir datos en la tarjeta")
    # nothing changed: said, with the focus on it
    br.click("Guardar", within=box)
    br.wait(lambda: br.active().text == "No has cambiado ningún dato.", what="nothing to save, said")
    br.click("No cambiar", within=box)
    br.wait(lambda: not br.d.find_elements(By.CSS_SELECTOR, ".corregir fieldset"), what="the form closed")
    focus_on(br, fix, "Corregir datos")
    assert cliente(srv, lid)["telefono"] == "699 000 11"

    # an e-mail another account has: the API's answer in the form, the
    # focus on the e-mail field (still in the tab order), nothing changed
    br.allowed_errors.append(r"/api/clientes/.* - Failed to load resource: the server responded with a status of 4(00|09)")
    br.click("Corregir datos", within=card(br, "Lola Ruiz"))
    box = fix_box(br)
    br.fill("Teléfono", "699 000 111")
    email = br.fill("Correo electrónico", "carla@example.com")
    br.click("Guardar", within=box)
    br.wait(lambda: "Ese correo electrónico ya es de otra cuenta." in box.text,
            what="the refusal in the form, in the desk's words")
    focus_on(br, email, "the e-mail field")
    assert email.get_attribute("aria-invalid") == "true", email.get_attribute("aria-invalid")
    said = br.d.find_element("id", email.get_attribute("aria-describedby"))
    assert "otra cuenta" in said.text, said.text
    assert email.get_attribute("tabindex") is None, email.get_attribute("tabindex")
    got = cliente(srv, lid)
    assert (got["telefono"], got["email"]) == ("699 000 11", None), got
    br.check("Clientes - correo ya registrado")

    # a phone the shop cannot use: said plainly, the focus on the phone
    tel = br.fill("Teléfono", "12")
    br.click("Guardar", within=box)
    br.wait(lambda: "El teléfono no es válido" in box.text, what="the bad phone said")
    focus_on(br, tel, "the phone field")

    # corrected: the phone, and an e-mail added
    br.fill("Teléfono", "699 000 111")
    br.fill("Correo electrónico", "lola@example.com")
    br.click("Guardar", within=box)
    br.wait(lambda: "699 000 111" in card_text(br, "Lola Ruiz"), what="the new phone on her card")
    br.focused_heading("Lola Ruiz")
    announced(br, "Datos de Lola Ruiz corregidos.")
    assert not br.d.find_elements(By.CSS_SELECTOR, ".corregir fieldset")
    tel_link = card(br, "Lola Ruiz").find_element(By.CSS_SELECTOR, "a[href^='tel:']")
    assert tel_link.get_attribute("href") == "tel:699000111", tel_link.get_attribute("href")
    got = cliente(srv, lid)
    assert (got["nombre"], got["telefono"], got["email"], got["puede_entrar"]) == ("Lola Ruiz", "699 000 111", "lola@example.com", False), got
    br.check("Clientes - datos corregidos")

    # the phone emptied: removed (she keeps her e-mail)
    br.click("Corregir datos", within=card(br, "Lola Ruiz"))
    assert control(br, "Correo electrónico").get_attribute("value") == "lola@example.com"
    br.fill("Teléfono", "")
    br.click("Guardar", within=fix_box(br))
    br.wait(lambda: "Teléfono:" not in card_text(br, "Lola Ruiz") and "Corregir datos" in card_text(br, "Lola Ruiz"), what="the phone gone from her card")
    assert cliente(srv, lid)["telefono"] is None
    # and the e-mail too would leave no way to reach her: refused
    br.click("Corregir datos", within=card(br, "Lola Ruiz"))
    box = fix_box(br)
    br.fill("Correo electrónico", "")
    br.click("Guardar", within=box)
    br.wait(lambda: "Hace falta el teléfono o el correo electrónico del cliente." in box.text,
            what="the refusal")
    focus_on(br, control(br, "Teléfono"), "the phone field")
    br.fill("Teléfono", "699 000 111")
    br.fill("Correo electrónico", "lola@example.com")
    br.click("Guardar", within=box)
    br.wait(lambda: "699 000 111" in card_text(br, "Lola Ruiz"), what="her phone back")
    return lid


def from_desk(srv, br, lid):
    """"Nueva cita": the chosen client's details corrected (Enter saves and
    books nothing); a client with her own account has no "Corregir datos"."""
    citas = len(srv.ok("GET", "/api/citas?cliente_id=" + lid, token=srv.admin)["citas"])
    br.click("Nueva cita")
    br.focused_heading("Nueva cita")
    br.fill("Buscar cliente (nombre, teléfono o correo)", "lola")
    br.click("Lola Ruiz · 699 000 111 · lola@example.com")
    br.see("Cliente: Lola Ruiz")
    br.click("Corregir datos")
    fix_box(br)
    nombre = control(br, "Nombre")
    focus_on(br, nombre, "Nombre")
    br.check("Clientes - corregir datos en nueva cita")
    nombre.send_keys(Keys.END, " Gil", Keys.ENTER)
    chosen = br.wait(lambda: next((p for p in br.d.find_elements(By.CSS_SELECTOR, "form p") if p.text.startswith("Cliente: Lola Ruiz Gil")), None), what="the chosen client's new name")
    focus_on(br, chosen, "the chosen client")
    announced(br, "Datos de Lola Ruiz Gil corregidos.")
    assert not br.d.find_elements(By.CSS_SELECTOR, ".corregir fieldset")
    assert cliente(srv, lid)["nombre"] == "Lola Ruiz Gil"
    assert len(srv.ok("GET", "/api/citas?cliente_id=" + lid, token=srv.admin)["citas"]) == citas, "Enter booked"
    assert "Elige el servicio que se va a hacer." not in br.text()
    # the search's list shows her new name too
    br.click("Cambiar cliente")
    br.button("Lola Ruiz Gil · 699 000 111 · lola@example.com")
    # Carla signed up herself: her details are hers to change
    br.fill("Buscar cliente (nombre, teléfono o correo)", "carla")
    br.click("Carla Gómez · 611222333 · carla@example.com")
    br.see("Cliente: Carla Gómez")
    br.see(HINT)
    assert not [e for e in br.d.find_elements(By.CSS_SELECTOR, "main button") if e.text == "Corregir datos"]
    br.check("Clientes - clienta con cuenta en nueva cita")
    br.click("Volver a la agenda")
    br.button("Nueva cita")


def test(srv, br):
    servicios, barberos = srv.catalog()
    s = servicios[0]
    carla, _ = srv.signup("carla@example.com", "Carla Gómez", "611222333")
    # Carla's appointment in 40 minutes: past the cut-off (2 hours)
    late = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0) + datetime.timedelta(minutes=40)
    me = srv.ok("GET", "/api/auth/me", token=carla)["user"]["id"]
    srv.ok("POST", "/api/agenda/citas", {"barbero_id": barberos[1]["id"], "servicio_id": s["id"], "fecha_inicio": late.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                         "cliente_id": me, "fuera_de_horario": True}, token=srv.admin)

    br.sign_in("admin@barberia.local", srv.admin_password, "/agenda")
    br.focused_heading("Agenda")
    lid = from_card(srv, br, s)
    from_desk(srv, br, lid)
    # Carla's card: no "Corregir datos", the hint instead
    br.open("/agenda?fecha=" + late.astimezone(MADRID).date().isoformat())
    br.focused_heading("Agenda")
    c = card(br, "Carla Gómez")
    assert HINT in c.text, c.text
    assert "Corregir datos" not in c.text, c.text
    br.check("Clientes - tarjeta de clienta con cuenta")

    # her "Mis citas" past the cut-off: the shop has no phone set
    br.click("Salir")
    br.button("Entrar")
    br.sign_in("carla@example.com", "secreto1", "/mis-citas")
    br.focused_heading("Mis citas")
    br.see("Ya no se puede cambiar ni cancelar desde aquí: llama a la barbería.")
    assert not br.d.find_elements(By.CSS_SELECTOR, "main a[href^='tel:']")
    br.check("Clientes - mis citas sin teléfono de la barbería")


if __name__ == "__main__":
    webtest.main(test)
