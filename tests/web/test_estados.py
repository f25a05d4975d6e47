#!/usr/bin/python3
"""web/estados - an appointment's state in words, the same on every page:
Confirmada, Cancelada, Vino (completada), No vino (no_presentado), never
the API's values; and a walk-in marked as a no-show while it would still be
running is over: "Mis citas" lists it under "Anteriores", not "Próximas".
Seen by the client in "Mis citas" and behind the appointment's personal
link (/c/<token>, read from the e-mail the real SMTP sink received).
Every state: axe-core, 360 px, transfer budget, console (webtest.py)."""
import datetime
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By, free_slot  # noqa: E402

RAW = ("confirmada", "cancelada", "completada", "no_presentado")


def section(br, title):
    """The texts of the cards under the <h2> title of Mis citas."""
    return br.d.execute_script(
        "const h = [...document.querySelectorAll('main h2')].find(e => e.textContent === arguments[0]);"
        "const ul = h && h.nextElementSibling;"
        "return ul && ul.tagName === 'UL' ? [...ul.children].map(li => li.innerText) : [];", title)


def card_with(cards, needle):
    found = [c for c in cards if needle in c]
    assert len(found) == 1, (needle, cards)
    return found[0]


def no_raw(text):
    words = re.findall(r"[a-z_]+", text)
    assert not [w for w in words if w in RAW], text


def link_of(sink, srv, to, subject, n):
    """The personal link of the n-th such mail (oldest first)."""
    deadline = time.time() + 60
    while time.time() < deadline:
        texts = [t for rcpt, subj, t in sink.messages() if to in rcpt and subject in subj]
        if len(texts) > n:
            m = re.search(re.escape(srv.base) + r"(/c/[A-Za-z0-9_-]{64})", texts[n])
            assert m, texts[n]
            return m.group(1)
        time.sleep(0.1)
    raise AssertionError("no mail %d %r to %s" % (n, subject, to))


def test(srv, br, sink):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    token, uid = srv.signup("rosa.estados@example.com", "Rosa Estados", "611000111")
    # one to come (confirmed)
    inicio, _ = free_slot(srv, s["id"], b["id"], after=2)
    srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": inicio}, token=token)
    confirmada = link_of(sink, srv, "rosa.estados@example.com", "Cita confirmada", 0)
    # a walk-in at the desk, started a moment ago and not over, and a no-show
    ahora = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    walkin = srv.ok("POST", "/api/agenda/citas", {"barbero_id": barberos[1]["id"], "servicio_id": s["id"], "fecha_inicio": ahora,
                                                "cliente_id": uid, "fuera_de_horario": True}, token=srv.admin)["cita"]
    time.sleep(1.1)
    srv.ok("POST", "/api/citas/%s/asistencia" % walkin["id"], {"estado": "no_presentado"}, token=srv.admin)
    assert datetime.datetime.fromisoformat(walkin["fecha_fin"].replace("Z", "+00:00")) > datetime.datetime.now(datetime.timezone.utc)
    noshow = link_of(sink, srv, "rosa.estados@example.com", "Cita confirmada", 1)
    # an earlier cut she came to
    past = srv.ok("POST", "/api/citas", {"barbero_id": barberos[2]["id"], "servicio_id": s["id"], "fecha_inicio": "2024-03-05T10:00:00Z"}, token=token)["cita"]
    srv.ok("POST", "/api/citas/%s/asistencia" % past["id"], {"estado": "completada"}, token=srv.admin)

    br.sign_in("rosa.estados@example.com", "secreto1", "/mis-citas")
    br.focused_heading("Mis citas")
    br.see("Anteriores")
    proximas, anteriores = section(br, "Próximas"), section(br, "Anteriores")
    assert len(proximas) == 1 and "Confirmada" in proximas[0] and b["nombre"] in proximas[0], proximas
    assert "No vino" in card_with(anteriores, barberos[1]["nombre"]), anteriores
    assert "Vino" in card_with(anteriores, barberos[2]["nombre"]), anteriores
    assert "No vino" not in card_with(anteriores, barberos[2]["nombre"]), anteriores
    no_raw(br.text())
    br.check("Estados - mis citas")

    # behind the personal links
    br.open(noshow)
    br.focused_heading("Tu cita")
    estado = br.d.find_element(By.CSS_SELECTOR, "dd.estado").text
    assert estado == "No vino", estado
    br.check("Estados - enlace no vino")
    br.open(confirmada)
    br.focused_heading("Tu cita")
    assert br.d.find_element(By.CSS_SELECTOR, "dd.estado").text == "Confirmada"


if __name__ == "__main__":
    webtest.main(test, mail=True)
