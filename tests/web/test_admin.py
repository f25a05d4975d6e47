#!/usr/bin/python3
"""web/admin - an administrator signs in, finds a user by searching and
changes their phone (the search stays, the focus returns to her card), changes a service's price, and sees the barbers and
the working hours. An account its owner deleted is not listed."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402


def test(srv, br):
    _, dani = srv.signup("dani@example.com", "Dani Soto", "600000001")
    srv.signup("eva@example.com", "Eva Luna")
    gone, _ = srv.signup("fede@example.com", "Fede Gil")
    srv.ok("DELETE", "/api/auth/me", {"password": "secreto1"}, token=gone)
    br.open("/entrar")
    br.fill("Correo electrónico", "admin@barberia.local")
    br.fill("Contraseña", srv.admin_password)
    br.click("Entrar")
    br.focused_heading("Administración")
    br.see("Dani Soto")
    br.see("Una cuenta eliminada por su titular no se muestra.")
    assert "eliminado.invalid" not in br.text() and "Cliente eliminado" not in br.text()
    br.check("Admin - usuarios")
    # a phone is found however its digits are spaced
    br.fill("Buscar por nombre, correo o teléfono", "600 000")
    br.wait(lambda: "Eva Luna" not in br.text(), what="the search by phone")
    br.see("Dani Soto")
    br.fill("Buscar por nombre, correo o teléfono", "dani")
    br.wait(lambda: "Eva Luna" not in br.text(), what="the search")
    br.click("Editar")
    br.fill("Teléfono", "699 888 777")
    br.check("Admin - editar usuario")
    br.click("Guardar cambios")
    br.see("699 888 777")
    # the search and its filter stay; the focus is back on her "Editar"
    assert br.d.find_element(By.CSS_SELECTOR, "main input[type=search]").get_attribute("value") == "dani"
    assert "Eva Luna" not in br.text()
    br.wait(lambda: br.active().get_attribute("aria-label") == "Editar a Dani Soto", what="focus on her Editar")
    users = srv.ok("GET", "/api/admin/usuarios", token=srv.admin)["usuarios"]
    assert next(u for u in users if u["id"] == dani)["telefono"] == "699 888 777"

    br.click("Servicios")
    br.focused_heading("Servicios")
    br.check("Admin - servicios")
    card = br.wait(lambda: next((c for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.text.startswith("Corte clásico")), None), what="the service")
    price = card.find_element(By.CSS_SELECTOR, "input[type=number][step='0.01']")
    price.clear()
    price.send_keys("17.5")
    br.click("Guardar", within=card)
    br.see("Corte clásico · 17,50 €")
    br.wait(lambda: br.active().text == "Guardar" and br.active().find_element(By.XPATH, "ancestor::li").text.startswith("Corte clásico · 17,50 €"), what="focus on the service's Guardar")
    servicios, _ = srv.catalog()
    assert next(s for s in servicios if s["nombre"] == "Corte clásico")["precio"] == 17.5

    br.click("Barberos")
    br.focused_heading("Barberos")
    br.see("Nuevo barbero")
    br.check("Admin - barberos")
    br.click("Horarios")
    br.focused_heading("Horarios")
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, "input[type=time]"), what="the hours")
    br.check("Admin - horarios")


if __name__ == "__main__":
    webtest.main(test)
