#!/usr/bin/python3
"""web/cuenta - the client's own account, as she would use it on her
phone: "¿Olvidaste tu contraseña?" on the sign-in page, the link read from
the e-mail the real SMTP sink (tests/tools/smtp_sink.py) received, the
reset page (the token leaves the address bar, she is signed in), "Mi
cuenta" (a refused phone said with what it takes, profile saved, photo consent, her data downloaded as JSON, her
WhatsApp messages turned on for a number she types and off again) and the
deletion of her account (signed out; her sign-in no longer works).
Every state: axe-core, 360 px, transfer budget, console (webtest.py)."""
import atexit
import base64
import email
import email.policy
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402

SINK = os.path.join(webtest.ROOT, "tests", "tools", "smtp_sink.py")
MAILDIR = tempfile.mkdtemp(prefix="barberia-web-mail-")


def start_sink():
    p = subprocess.Popen(["/usr/bin/python3", SINK, "--dir", MAILDIR, "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(p.stdout.readline().strip())

    def stop():
        p.send_signal(signal.SIGTERM)
        p.wait(10)
        shutil.rmtree(MAILDIR, ignore_errors=True)
    atexit.register(stop)
    return port


def mail_text(to, needle, timeout=60):
    """The text of the message to `to` holding needle, once it arrives."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for path in sorted(glob.glob(os.path.join(MAILDIR, "*.json"))):
            with open(path) as f:
                m = json.load(f)
            if to not in m["rcpt_tos"]:
                continue
            msg = email.message_from_bytes(base64.b64decode(m["data_b64"]), policy=email.policy.default)
            text = msg.get_body(("plain",)).get_content()
            if needle in text:
                return text
        time.sleep(0.1)
    raise AssertionError("no message to %s holding %r" % (to, needle))


def own_targets(br, *labels):
    """Each link (in the page, not the menu) is a 44 x 44 px touch target."""
    main = br.d.find_element(By.ID, "main")
    for label in labels:
        br.tap_target(br.button(label, within=main))


def desk_client_signs_up(srv, br):
    """A client the front desk booked with her e-mail signs up herself: she
    is told a link to choose her password is on its way; it is, and with it
    she is in, her booking hers."""
    servicios, barberos = srv.catalog()
    addr = "lola@example.com"
    inicio, _ = webtest.free_slot(srv, servicios[0]["id"], barberos[0]["id"])
    cita = srv.ok("POST", "/api/agenda/citas", {"barbero_id": barberos[0]["id"], "servicio_id": servicios[0]["id"], "fecha_inicio": inicio,
                                                "cliente": {"nombre": "Lola Ruiz", "email": addr}}, token=srv.admin)["cita"]
    br.allowed_errors.append(r"/api/auth/signup - Failed to load resource: the server responded with a status of 409")
    br.open("/registro")
    br.focused_heading("Crear cuenta")
    own_targets(br, "Entra")
    br.fill("Nombre", "Lola Ruiz")
    br.fill("Correo electrónico", addr)
    br.fill("Contraseña", "la-de-lola")
    br.click("Crear cuenta")
    br.see("te hemos enviado un enlace para elegir tu contraseña")
    br.check("Crear cuenta - ya dada de alta")
    text = mail_text(addr, "#token=")
    br.d.get(re.search(r"(\S+/restablecer#token=[A-Za-z0-9_-]{43})", text).group(1))
    br.focused_heading("Elige tu contraseña")
    br.fill("Contraseña nueva", "la-de-lola")
    br.click("Guardar y entrar")
    br.focused_heading("Mis citas")
    token = srv.login(addr, "la-de-lola")
    assert [c["id"] for c in srv.ok("GET", "/api/citas", token=token)["citas"]] == [cita["id"]]


def test(srv, br):
    addr = "eva@example.com"
    srv.signup(addr, "Eva Gómez", password="antigua1")
    br.open("/entrar")
    br.focused_heading("Entrar")
    # the links that stand alone under a form are touch targets of their own
    # (a.tap: they were 19 px high, a line of text)
    own_targets(br, "¿Olvidaste tu contraseña?", "Crea tu cuenta")
    br.click("¿Olvidaste tu contraseña?")
    br.focused_heading("¿Olvidaste tu contraseña?")
    own_targets(br, "Volver a entrar")
    br.check("Recuperar")
    br.fill("Correo electrónico", addr)
    br.click("Enviar enlace")
    br.see("te llegará un enlace")
    br.check("Recuperar - enviado")

    text = mail_text(addr, "#token=")
    link = re.search(r"(\S+/restablecer#token=[A-Za-z0-9_-]{43})", text).group(1)
    assert link.startswith(srv.base + "/restablecer#token="), link
    br.d.get(link)
    br.focused_heading("Elige tu contraseña")
    # the token leaves the address bar (no history entry, no bookmark keeps it)
    assert "#" not in br.d.current_url and "token" not in br.d.current_url, br.d.current_url
    own_targets(br, "Pedir otro enlace")
    br.check("Restablecer")
    br.fill("Contraseña nueva", "nueva-clave-1")
    br.click("Guardar y entrar")
    br.focused_heading("Mis citas")
    br.check("Restablecer - dentro")
    assert srv.call("POST", "/api/auth/login", {"email": addr, "password": "antigua1"})[0] == 401
    srv.login(addr, "nueva-clave-1")

    br.click("Mi cuenta")
    br.focused_heading("Mi cuenta")
    br.check("Mi cuenta")
    # a phone the API refuses: its words, and what it takes (as the desk says it)
    br.allowed_errors.append(r"/api/auth/me - Failed to load resource: the server responded with a status of 400")
    tel = br.fill("Teléfono", "12")
    br.click("Guardar")
    br.see("Teléfono inválido: de 6 a 15 cifras (puede llevar +, espacios, guiones o paréntesis).")
    assert br.active().get_attribute("role") == "alert", br.active().tag_name
    assert tel.get_attribute("aria-invalid") == "true"
    br.check("Mi cuenta - teléfono inválido")
    br.fill("Teléfono", "+34 600 123 456")
    br.click("Guardar")
    br.see("Datos guardados.")
    assert tel.get_attribute("aria-invalid") is None
    # the focus goes to what was said, not to the top of the page
    assert br.active().text == "Datos guardados.", br.active().tag_name
    # the address is "Correo electrónico", as at sign-up
    assert "Correo electrónico nuevo" in br.text() and "Email" not in br.text()
    br.check("Mi cuenta - guardado")
    box = br.d.find_element(By.ID, "fotos")
    assert not box.is_selected()
    box.click()
    # another action: the earlier "saved" is no longer shown
    br.wait(lambda: "Datos guardados." not in br.text(), what="the old message gone")
    br.wait(lambda: srv.ok("GET", "/api/auth/me/consentimientos",
                           token=srv.login(addr, "nueva-clave-1"))["consentimientos"]["fotos"] is True,
            what="the photo consent recorded")

    a = br.d.find_element(By.ID, "descargar")
    assert a.get_attribute("download") == "mis-datos.json"
    datos = br.d.execute_async_script(
        "const cb = arguments[arguments.length - 1];"
        "fetch(arguments[0].href, {credentials: 'same-origin'}).then(r => r.json()).then(cb)", a)
    assert datos["user"]["email"] == addr, datos
    assert datos["perfil"]["telefono"] == "+34 600 123 456", datos
    assert datos["consentimientos"][0]["tipo"] == "fotos", datos

    # WhatsApp, from her own account: off at first, her profile's phone (just
    # saved) offered; a number the API refuses shows in the section; on for
    # the number she types, then off, each read back from the API
    token = srv.login(addr, "nueva-clave-1")

    def off_button():
        return [e for e in br.d.find_elements(By.TAG_NAME, "button")
                if e.text.strip() == "Desactivar avisos por WhatsApp" and e.is_displayed()]

    br.see("No recibes avisos por WhatsApp.")
    # this shop has no WhatsApp configured (GET /api/config): she is told so
    br.see("La barbería aún no envía mensajes por WhatsApp")
    assert not off_button()
    tel = br.d.find_element(By.ID, "whatsapp-tel")
    assert tel.get_attribute("value") == "+34 600 123 456", tel.get_attribute("value")
    br.allowed_errors.append(r"/api/auth/me/whatsapp - Failed to load resource: the server responded with a status of 400")
    br.fill("Número de WhatsApp", "12")
    br.click("Activar avisos por WhatsApp")
    br.see("Teléfono inválido")
    assert br.active().get_attribute("id") == "whatsapp-tel"
    br.check("Mi cuenta - WhatsApp, número inválido")
    assert srv.ok("GET", "/api/auth/me/whatsapp", token=token)["whatsapp"]["acepta"] is False

    br.fill("Número de WhatsApp", "612 345 678")
    br.click("Activar avisos por WhatsApp")
    br.see("Recibes avisos por WhatsApp en el +34612345678. Lo aceptaste desde tu cuenta el ")
    br.wait(lambda: br.active().get_attribute("id") == "whatsapp-estado", what="focus on the state")
    br.wait(lambda: "activados en el +34612345678" in br.d.find_element(By.ID, "status").get_attribute("textContent"),
            what="the announcement")
    assert "Teléfono inválido" not in br.text()
    assert br.button("Cambiar número") and br.button("Desactivar avisos por WhatsApp")
    br.check("Mi cuenta - WhatsApp activado")
    w = srv.ok("GET", "/api/auth/me/whatsapp", token=token)["whatsapp"]
    assert w["acepta"] is True and w["telefono"] == "+34612345678", w
    assert w["otorgado_en"] and w["retirado_en"] is None and w["registrado_por"] is None, w

    br.click("Desactivar avisos por WhatsApp")
    br.see("No recibes avisos por WhatsApp. Lo retiraste desde tu cuenta el ")
    br.wait(lambda: br.active().get_attribute("id") == "whatsapp-estado", what="focus on the state")
    br.button("Activar avisos por WhatsApp")
    assert not off_button()
    br.check("Mi cuenta - WhatsApp desactivado")
    w = srv.ok("GET", "/api/auth/me/whatsapp", token=token)["whatsapp"]
    assert w["acepta"] is False and w["retirado_en"] and w["registrado_por"] is None, w
    assert w["telefono"] == "+34612345678", w

    br.fill("Tu contraseña, para confirmar", "nueva-clave-1")
    br.click("Eliminar mi cuenta")
    br.see("Reserva tu cita")
    br.check("Cuenta eliminada")
    assert br.button("Entrar")  # signed out
    assert srv.call("POST", "/api/auth/login", {"email": addr, "password": "nueva-clave-1"})[0] == 401
    for path, heading in (("/mis-citas", "Mis citas"), ("/agenda", "Agenda"), ("/admin", "Administración")):
        br.open(path)
        br.focused_heading(heading)
        own_targets(br, "Entrar")
    desk_client_signs_up(srv, br)


if __name__ == "__main__":
    port = start_sink()
    webtest.main(test, {"BARBERIA_SMTP_URL": "smtp://127.0.0.1:%d" % port,
                        "BARBERIA_SMTP_FROM": "citas@barberia.test"})
