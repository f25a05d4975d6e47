#!/usr/bin/python3
"""web/origin - the session cookie speaks only for the service's own pages.
An administrator signs in through the web app; a page served from another
port of the same host (same-site, so the SameSite=Lax cookie goes along)
then tries, with her cookie, a booking as a text/plain form and, as no-cors
fetches, another booking, a cancel, a new service and a logout: nothing
changes (checked through the API) and her session still works. Then the
web app, opened as http://localhost:PORT while the server was reached as
127.0.0.1 (its public URL), signs in, books, cancels and signs out - its
writes go through."""
import datetime
import functools
import http.server
import json
import os
import sys
import tempfile
import threading
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402

ATTACK = """<!doctype html>
<html lang="en"><meta charset="utf-8"><title>Win a free haircut</title>
<iframe name="sink" title="sink"></iframe>
<form id="form" method="POST" action="%(target)s/api/citas" enctype="text/plain" target="sink">
<input type="hidden" name='%(form_name)s' value='%(form_value)s'>
</form>
<script>
const target = %(target_js)s;
const send = (path, body) =>
  fetch(target + path, {method: 'POST', mode: 'no-cors', credentials: 'include', body})
    .then(() => 'sent', (e) => 'failed: ' + e);
(async () => {
  const done = [];
  done.push(await send('/api/citas', %(fetch_cita)s));
  done.push(await send('/api/citas/%(cita)s/cancelar', ''));
  done.push(await send('/api/admin/servicios', %(servicio)s));
  await new Promise((loaded) => {
    document.querySelector('iframe').onload = loaded;
    document.getElementById('form').submit();
  });
  done.push('form');
  done.push(await send('/api/auth/logout', ''));
  document.body.dataset.done = JSON.stringify(done);
})();
</script>
"""


def free_slots(srv, servicio, barbero, n):
    """n free slots of barbero for servicio from today on, none overlapping another."""
    out, end = [], ""
    day = datetime.date.today()
    for _ in range(60):
        q = "/api/disponibilidad?servicio_id=%s&barbero_id=%s&fecha=%s" % (servicio, barbero, day.isoformat())
        for h in srv.ok("GET", q)["huecos"]:
            if h["inicio"] >= end:
                out.append(h["inicio"])
                end = h["fin"]
        if len(out) >= n:
            return out[:n]
        day += datetime.timedelta(days=1)
    raise AssertionError("fewer than %d free slots in 60 days" % n)


def session_cookie(br):
    c = next((c for c in br.d.get_cookies() if c["name"] == "barberia_session"), None)
    assert c, "no session cookie in the browser: %s" % br.d.get_cookies()
    return c["value"]


def me_by_cookie(srv, cookie):
    """GET /api/auth/me with the session as the cookie: the status."""
    req = urllib.request.Request(srv.base + "/api/auth/me")
    req.add_header("Cookie", "barberia_session=" + cookie)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def attack_page(target, barbero, servicio, cita, fechas):
    """The page of another origin, with what it needs to know written in."""
    fields = {"barbero_id": barbero, "servicio_id": servicio, "fecha_inicio": fechas[0]}
    # a text/plain form sends name=value: the JSON object split around an '='
    form_json = json.dumps(dict(fields, notas="X"))
    cut = form_json.index('"X"') + 1
    return ATTACK % {
        "target": target,
        "target_js": json.dumps(target),
        "form_name": form_json[:cut],
        "form_value": form_json[cut:],
        "fetch_cita": json.dumps(json.dumps(dict(fields, fecha_inicio=fechas[1]))),
        "cita": cita,
        "servicio": json.dumps(json.dumps({"nombre": "Intruso", "duracion_min": 10, "precio": 1})),
    }


def serve_folder(folder):
    """Python's http.server on a free loopback port, serving folder."""
    handler = functools.partial(QuietHandler, directory=folder)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def signin(br, base, email, password, heading):
    br.d.get(base + "/entrar")
    br.focused_heading("Entrar")
    br.fill("Correo electrónico", email)
    br.fill("Contraseña", password)
    br.click("Entrar")
    br.focused_heading(heading)


def test(srv, br):
    servicios, barberos = srv.catalog()
    s, b = servicios[0], barberos[0]
    fechas = free_slots(srv, s["id"], b["id"], 3)
    admin_email = "admin@barberia.local"

    # --- a page of another origin, the administrator signed in -----------------------
    signin(br, srv.base, admin_email, srv.admin_password, "Administración")
    cookie = session_cookie(br)
    cita = srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": fechas[2]},
                  token=srv.admin)["cita"]["id"]
    before_citas = srv.ok("GET", "/api/citas", token=srv.admin)["citas"]
    before_servicios = srv.ok("GET", "/api/admin/servicios", token=srv.admin)["servicios"]
    folder = tempfile.mkdtemp(prefix="barberia-attack-")
    with open(os.path.join(folder, "index.html"), "w") as f:
        f.write(attack_page(srv.base, b["id"], s["id"], cita, fechas))
    attacker = serve_folder(folder)
    try:
        other = "http://127.0.0.1:%d" % attacker.server_address[1]
        assert other != srv.base
        br.d.get(other + "/")
        done = br.wait(lambda: br.d.execute_script("return document.body && document.body.dataset.done"),
                       timeout=30, what="the attack page's requests")
        assert json.loads(done) == ["sent", "sent", "sent", "form", "sent"], done
    finally:
        attacker.shutdown()
        attacker.server_close()
    # what that page's refused requests wrote to the console is not the app's
    br.d.get_log("browser")

    citas = srv.ok("GET", "/api/citas", token=srv.admin)["citas"]
    assert citas == before_citas, "the page of another origin changed the citas: %s" % citas
    assert next(c for c in citas if c["id"] == cita)["estado"] == "confirmada"
    after = srv.ok("GET", "/api/admin/servicios", token=srv.admin)["servicios"]
    assert after == before_servicios, "the page of another origin changed the services: %s" % after
    assert me_by_cookie(srv, cookie) == 200, "the page of another origin signed the administrator out"
    br.d.get(srv.base + "/admin")
    br.focused_heading("Administración")
    br.check("Admin tras la pagina ajena")

    # --- the web app under another name of the same server --------------------------
    br.click("Salir")
    br.wait(lambda: me_by_cookie(srv, cookie) == 401, what="the administrator's sign-out")
    host = srv.base.replace("127.0.0.1", "localhost")
    assert host != srv.base
    srv.signup("lola@example.com", "Lola Ruiz")
    signin(br, host, "lola@example.com", "secreto1", "Mis citas")
    br.d.get(host + "/reservar?servicio=%s&barbero=%s" % (s["id"], b["id"]))
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, ".slots button.slot"), what="free slots")
    br.d.find_element(By.CSS_SELECTOR, ".slots button.slot").click()
    br.focused_heading("Confirma tu cita")
    br.click("Confirmar cita")
    br.focused_heading("¡Cita reservada!")
    br.check("Reserva como localhost")
    mine = [c for c in srv.ok("GET", "/api/citas", token=srv.admin)["citas"] if c["perfil"]["nombre"] == "Lola Ruiz"]
    assert len(mine) == 1 and mine[0]["estado"] == "confirmada", mine
    br.click("Ver mis citas")
    br.focused_heading("Mis citas")
    br.click("Cancelar cita")
    br.click("Sí, cancelar")
    br.see("No tienes citas próximas")
    mine = [c for c in srv.ok("GET", "/api/citas", token=srv.admin)["citas"] if c["id"] == mine[0]["id"]]
    assert mine[0]["estado"] == "cancelada", mine
    lola = session_cookie(br)
    assert me_by_cookie(srv, lola) == 200
    br.click("Salir")
    br.wait(lambda: me_by_cookie(srv, lola) == 401, what="the sign-out as localhost")


if __name__ == "__main__":
    webtest.main(test)
