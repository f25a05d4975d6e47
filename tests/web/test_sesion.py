#!/usr/bin/python3
"""web/sesion - requests that fail while a page is open: the session ended
meanwhile (an administrator set a new password, which signs the user out
everywhere) or the server out of reach (the browser offline). Each page
says so where the answer was awaited, in Spanish, never "Cargando…" for
ever nor an empty list; a lost session says "Tu sesión ha caducado" with a
link that signs in and comes back to the same page:
- /agenda: the Día/Semana/Anterior/Hoy/Siguiente buttons and "Ver";
- /mis-citas: "Cambiar hora" (the slot picker: a day not read is not a day
  without free slots) and "Cancelar cita".
A cookie of the session's name set by a page on another port is deleted by
the first answer that sees it (the request itself is answered signed-out).
"Salir" with the server out of reach says the session is still open (and
keeps "Salir" in the menu), never "Has salido".
Every state: axe-core, 360 px, transfer budget, console (webtest.py)."""
import datetime
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402


def expired_link(br, page):
    """The "session expired" line and its link, which returns to page."""
    br.see("Tu sesión ha caducado")
    a = br.button("Entra de nuevo")
    href = urllib.parse.urlsplit(a.get_attribute("href"))
    assert href.path == "/entrar", href
    volver = urllib.parse.parse_qs(href.query)["volver"][0]
    assert volver.startswith(page), volver
    return a


def agenda(srv, br):
    _, uid = srv.signup("pepe.sesion@example.com", "Pepe Sesión")
    srv.ok("PATCH", "/api/admin/usuarios", {"userId": uid, "rol": "barbero"}, token=srv.admin)
    br.sign_in("pepe.sesion@example.com", "secreto1", "/agenda")
    br.focused_heading("Agenda")
    br.see("No hay citas")

    # the server out of reach: "Ver" another barber
    br.allowed_errors.append(r"ERR_INTERNET_DISCONNECTED")
    br.offline(True)
    Select(br.d.find_element(By.ID, "ver-barbero")).select_by_index(1)
    br.see("No hay conexión con el servidor")
    assert "Cargando" not in br.text(), br.text()
    br.wait(lambda: "No hay conexión" in br.active().text, what="focus on the error")
    br.offline(False)
    br.check("Sesion - agenda sin conexion")
    br.click("Reintentar")
    br.see("No hay citas")
    # and a week button, still offline
    br.offline(True)
    br.click("Semana")
    br.see("No hay conexión con el servidor")
    br.offline(False)
    br.click("Reintentar")
    br.see("Semana del")
    br.see("No hay citas")

    # the session ends (a new password): the next view says so
    srv.ok("PATCH", "/api/admin/usuarios", {"userId": uid, "password": "otraclave1"}, token=srv.admin)
    br.allowed_errors.append(r"status of 401")
    # the day's closures and margins (GET /api/admin/ausencias, /servicios)
    # answer 403 without a session, as every admin path: the page still says
    # the session expired
    br.allowed_errors.append(r"/api/admin/(ausencias|servicios) - .*status of 403")
    br.click("Siguiente ›")
    a = expired_link(br, "/agenda")
    assert "Cargando" not in br.text(), br.text()
    assert not br.d.find_elements(By.XPATH, "//main//button[normalize-space()='Reintentar']")
    br.check("Sesion - agenda caducada")
    for label in ("Día", "‹ Anterior", "Hoy"):
        br.click(label)
        expired_link(br, "/agenda")
    Select(br.d.find_element(By.ID, "ver-barbero")).select_by_index(0)
    a = expired_link(br, "/agenda")
    # signing in again comes back to the agenda
    a.click()
    br.focused_heading("Entrar")
    br.enter("pepe.sesion@example.com", "otraclave1")
    br.focused_heading("Agenda")
    br.see("No hay citas")
    assert br.d.current_url.startswith(srv.base + "/agenda"), br.d.current_url


def free_slot(srv, servicio, barbero, after=2):
    day = datetime.date.today() + datetime.timedelta(days=after)
    for _ in range(30):
        js = srv.ok("GET", "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s" % (servicio, day.isoformat(), barbero))
        if js["huecos"]:
            return js["huecos"][0]["inicio"]
        day += datetime.timedelta(days=1)
    raise AssertionError("no free slot")


def no_slots_said(br):
    t = br.text()
    assert "No quedan horas libres" not in t and "No hay horas libres" not in t, t


def mis_citas(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    token, uid = srv.signup("lola.sesion@example.com", "Lola Sesión")
    inicio = free_slot(srv, s["id"], b["id"])
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": inicio}, token=token)
    br.click("Salir")
    br.sign_in("lola.sesion@example.com", "secreto1", "/mis-citas")
    br.focused_heading("Mis citas")

    # offline: the picker says the hours could not be read
    br.offline(True)
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    br.see("No se pudieron cargar las horas. Inténtalo de nuevo.")
    no_slots_said(br)
    br.offline(False)
    br.check("Sesion - horas sin conexion")
    # a tap on a day not read asks again
    day = br.d.find_element(By.CSS_SELECTOR, ".days button.day")
    assert day.is_enabled() and "no se pudo cargar" in day.get_attribute("aria-label"), day.get_attribute("aria-label")
    day.click()
    br.wait(lambda: "No se pudieron cargar" not in br.text(), what="the error gone")
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot, .slots p.hint"), what="the day read")
    br.click("No cambiar")

    # the session ends: the picker and the cancel say so
    srv.ok("PATCH", "/api/admin/usuarios", {"userId": uid, "password": "otraclave1"}, token=srv.admin)
    br.click("Cambiar hora")
    br.focused_heading("Elige la nueva hora")
    expired_link(br, "/mis-citas")
    no_slots_said(br)
    br.check("Sesion - horas caducada")
    br.click("No cambiar")
    br.click("Cancelar cita")
    br.click("Sí, cancelar")
    a = expired_link(br, "/mis-citas")
    assert "No autenticado" not in br.text(), br.text()
    br.check("Sesion - cancelar caducada")
    assert srv.ok("GET", "/api/citas", token=srv.admin)["citas"][0]["estado"] == "confirmada"
    a.click()
    br.focused_heading("Entrar")
    br.enter("lola.sesion@example.com", "otraclave1")
    br.focused_heading("Mis citas")
    br.see(s["nombre"])


def session_cookies(br):
    got = br.d.execute_cdp_cmd("Network.getCookies", {"urls": [br.s.base + "/api/auth/me"]})["cookies"]
    return sorted((c["path"], c["value"]) for c in got if c["name"] == "barberia_session")


def status_of_me(br):
    return br.d.execute_async_script(
        "const done = arguments[0];"
        "fetch('/api/auth/me', {credentials: 'same-origin'}).then((r) => done(r.status), (e) => done(String(e)));")


def shadowed(br):
    """A page of another origin of the site (another port of this host) sets
    a cookie of the session's name at a longer path: the browser sends both,
    and neither is believed. The first answer deletes the copy, so the next
    request is hers again, and her own cookie stays."""
    ours = session_cookies(br)
    assert [p for p, _ in ours] == ["/"], ours
    br.d.execute_cdp_cmd("Network.enable", {})
    br.d.execute_cdp_cmd("Network.setCookie", {"name": "barberia_session", "value": "sombra", "url": br.s.base + "/api/auth", "path": "/api"})
    assert session_cookies(br) == sorted(ours + [("/api", "sombra")]), session_cookies(br)
    assert status_of_me(br) == 401
    assert session_cookies(br) == ours, session_cookies(br)
    assert status_of_me(br) == 200


def salir(br):
    """"Salir" with the server out of reach does not say she is out: her
    session is still open, and on a shared computer the next person would
    have it. The menu keeps "Salir"; back online, it ends the session."""
    br.offline(True)
    br.click("Salir")
    br.see("No se ha cerrado la sesión. No hay conexión con el servidor")
    assert "Has salido" not in br.text(), br.text()
    br.button("Salir")
    br.offline(False)
    assert status_of_me(br) == 200
    br.check("Sesion - salir sin conexion")
    br.click("Salir")
    br.see("Has salido")
    br.button("Entrar")
    assert status_of_me(br) == 401


def test(srv, br):
    agenda(srv, br)
    mis_citas(srv, br)
    shadowed(br)
    salir(br)


if __name__ == "__main__":
    webtest.main(test)
