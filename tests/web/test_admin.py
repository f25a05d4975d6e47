#!/usr/bin/python3
"""web/admin - an administrator signs in, finds a user by searching and
changes their phone (the search stays, the focus returns to her card), changes a service's price, and sees the barbers and
the working hours. An account its owner deleted is not listed. A price is
taken with a decimal point or comma ("17.5", "12,5"), and anything else is
refused under the field; the hours' labels ("Desde (miércoles, tramo 1)")
never break inside a word at 640, 1024 and 1280 px."""
import os
import sys
import time

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
    price = card.find_element(By.ID, card.find_element(By.XPATH, ".//label[normalize-space()='Precio (€)']").get_attribute("for"))
    assert price.get_attribute("value") == "15,00", price.get_attribute("value")
    price.clear()
    price.send_keys("17.5")
    br.click("Guardar", within=card)
    br.see("Corte clásico · 17,50 €")
    br.wait(lambda: br.active().text == "Guardar" and br.active().find_element(By.XPATH, "ancestor::li").text.startswith("Corte clásico · 17,50 €"), what="focus on the service's Guardar")
    servicios, _ = srv.catalog()
    assert next(s for s in servicios if s["nombre"] == "Corte clásico")["precio"] == 17.5
    # a new service priced as the app writes prices, with a comma
    new = br.d.find_element(By.XPATH, "//h3[normalize-space()='Nuevo servicio']/following-sibling::form[1]")
    def field(form, label):
        return form.find_element(By.ID, form.find_element(By.XPATH, ".//label[normalize-space()='%s']" % label).get_attribute("for"))
    field(new, "Nombre").send_keys("Corte infantil")
    field(new, "Precio (€)").send_keys("12,5")
    br.click("Añadir servicio")
    br.see("Corte infantil · 12,50 €")
    servicios, _ = srv.catalog()
    assert next(s for s in servicios if s["nombre"] == "Corte infantil")["precio"] == 12.5, servicios
    # anything else is refused under the field, which takes the focus
    card = br.wait(lambda: next((c for c in br.d.find_elements(By.CSS_SELECTOR, "li.card") if c.text.startswith("Corte infantil")), None), what="the new service")
    price = field(card, "Precio (€)")
    price.clear()
    price.send_keys("12,5 euros")
    br.click("Guardar", within=card)
    msg = "Escribe el precio en euros, con coma o punto y hasta dos decimales: 12,50."
    br.see(msg)
    br.wait(lambda: br.active() == price, what="the focus on the price")
    assert price.get_attribute("aria-invalid") == "true"
    said = br.d.find_element(By.ID, price.get_attribute("aria-describedby"))
    assert said.text == msg, said.text
    br.check("Admin - precio rechazado")
    assert next(s for s in srv.catalog()[0] if s["nombre"] == "Corte infantil")["precio"] == 12.5

    br.click("Barberos")
    br.focused_heading("Barberos")
    br.see("Nuevo barbero")
    br.check("Admin - barberos")
    br.click("Horarios")
    br.focused_heading("Horarios")
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, "input[type=time]"), what="the hours")
    br.check("Admin - horarios")
    # every label of a time range breaks between words, if at all
    for w in (640, 1024, 1280):
        br.d.set_window_size(w, 800)
        time.sleep(0.2)
        broken = br.d.execute_script(MID_WORD)
        assert not broken, "%d px: labels broken inside a word: %s" % (w, broken)
    br.d.set_window_size(390, 844)


# the labels of the hours' ranges one of whose words is split across two
# lines: two letters next to each other on different lines
MID_WORD = """
const out = [];
for (const l of document.querySelectorAll('.interval label')) {
  const t = l.firstChild, r = document.createRange();
  let prev = null;
  for (let i = 0; i < t.length; i++) {
    r.setStart(t, i); r.setEnd(t, i + 1);
    const q = r.getClientRects()[0];
    if (!q) continue;
    if (prev !== null && /\\S/.test(t.data[i]) && /\\S/.test(t.data[i - 1]) && Math.abs(q.top - prev) > 2) {
      out.push(l.textContent);
      break;
    }
    prev = q.top;
  }
}
return out;
"""


if __name__ == "__main__":
    webtest.main(test)
