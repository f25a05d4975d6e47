#!/usr/bin/python3
"""web/informes - the owner opens the reports: the last 30 days by day with
a bar chart and the table, then by barber, then downloads the CSV and finds
what a Spanish spreadsheet needs in it (the byte order mark, ';' between
cells, decimal commas, CRLF). Before, the reports' module fails to run (the
app's words and "Recargar la página"), then cannot be loaded offline ("No hay
conexión" and "Reintentar"). Dates are written in words, as everywhere in
the app ("del jueves 29 de octubre al ..."), never "2026-10-29"; "Informe
actualizado" is said only once "Ver informe" is pressed."""
import datetime
import os
import re
import sys
import tempfile
import time
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402
from webtest import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402


DIAS = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
MESES = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"]


def in_words(d, today):
    """A date as the reports write it: "jueves 29 de octubre" (and its year
    when it is not this one)."""
    return "%s %d de %s%s" % (DIAS[d.weekday()], d.day, MESES[d.month - 1], "" if d.year == today.year else " de %d" % d.year)


def said(br):
    """What was announced (the live region, or its line in the page)."""
    return br.d.execute_script("return [document.getElementById('status').textContent, ...[...document.querySelectorAll('main .said')].map(e => e.textContent)].join(' ')")


def test(srv, br):
    servicios, barberos = srv.catalog()
    s = servicios[0]
    client, _ = srv.signup("rosa@example.com", "Rosa Díaz")
    # three appointments of the last days (the shop's dates: Europe/Madrid)
    madrid = zoneinfo.ZoneInfo("Europe/Madrid")
    today = datetime.datetime.now(madrid).date()
    for days, b in ((2, barberos[0]), (5, barberos[0]), (9, barberos[1])):
        day = today - datetime.timedelta(days=days)
        local = datetime.datetime(day.year, day.month, day.day, 11, 0, tzinfo=madrid)
        when = local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        srv.ok("POST", "/api/citas", {"barbero_id": b["id"], "servicio_id": s["id"], "fecha_inicio": when}, token=client)
    euros = ("%.2f" % (3 * s["precio"])).replace(".", ",")

    br.open("/entrar?volver=/admin")
    br.fill("Correo electrónico", "admin@barberia.local")
    br.fill("Contraseña", srv.admin_password)
    br.click("Entrar")
    br.focused_heading("Administración")

    # the reports' module (loaded when the tab opens) arrives but fails to
    # run (a fault of the app, not of the network): said so, logged, and the
    # way out is a reload
    tools = webtest.DevTools(br.d)
    tools.serve("*/app/informes.*", "export function informes( {")
    br.click("Informes")
    br.focused_heading("Informes")
    br.broken_module_said("informes", "SyntaxError")
    tools.stop()
    br.check("Informes - modulo roto")
    br.click("Recargar la página")
    br.focused_heading("Administración")
    # with the network gone: the app's own words and "Reintentar", never
    # the browser's; back online, "Reintentar" opens the reports
    br.allowed_errors.append(r"ERR_INTERNET_DISCONNECTED")
    br.offline(True)
    br.click("Informes")
    br.focused_heading("Informes")
    br.see("No hay conexión con el servidor")
    assert "Failed to fetch" not in br.text() and "import" not in br.text(), br.text()
    br.offline(False)
    br.check("Informes - sin conexion")
    br.click("Reintentar")
    br.wait(lambda: br.d.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar"), what="the chart")
    bars = br.d.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar")
    assert len(bars) == 30, len(bars)  # one a day
    # the period and the days in words
    desde = today - datetime.timedelta(days=29)
    chart = br.d.find_element(By.CSS_SELECTOR, "svg.chart").get_attribute("aria-label")
    assert chart.startswith("Ingresos por día, del %s al %s." % (in_words(desde, today), in_words(today, today))), chart
    days = [e.text for e in br.d.find_elements(By.CSS_SELECTOR, "table.report tbody th")]
    assert days == [in_words(desde + datetime.timedelta(days=i), today) for i in range(30)], days
    text = br.d.execute_script("return document.getElementById('main').textContent")
    assert not re.search(r"\d{4}-\d{2}", text), re.findall(r".{20}\d{4}-\d{2}.{10}", text)
    # drawn on opening the tab: nothing announced (nobody asked yet)
    time.sleep(0.3)
    assert "Informe actualizado" not in said(br), said(br)
    tall = [b for b in bars if float(b.get_attribute("height")) > 0]
    assert len(tall) == 3, [b.get_attribute("height") for b in bars]
    total = br.d.find_element(By.CSS_SELECTOR, "table.report tfoot tr")
    assert total.text.startswith("Total 3 "), total.text
    assert euros in total.text, (euros, total.text)
    br.check("Informes - por dia")

    lab = next(l for l in br.d.find_elements(By.TAG_NAME, "label") if l.text.strip() == "Agrupar por")
    Select(br.d.find_element(By.ID, lab.get_attribute("for"))).select_by_visible_text("Barbero")
    br.click("Ver informe")
    br.wait(lambda: "Informe actualizado" in said(br), what="the report announced once asked for")
    # the table is drawn anew: read it in the page, never through an element that may go stale
    first = "const th = document.querySelector('table.report thead th'); return th && th.textContent"
    br.wait(lambda: br.d.execute_script(first) == "Barbero", what="the barbers")
    rows = {r.find_element(By.TAG_NAME, "th").text: r.text for r in br.d.find_elements(By.CSS_SELECTOR, "table.report tbody tr")}
    assert rows[barberos[0]["nombre"]].startswith(barberos[0]["nombre"] + " 2 "), rows
    assert rows[barberos[1]["nombre"]].startswith(barberos[1]["nombre"] + " 1 "), rows
    br.check("Informes - por barbero")

    # the CSV, downloaded as a browser downloads it
    folder = tempfile.mkdtemp(prefix="barberia-csv-")
    br.d.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": folder})
    br.click("Descargar CSV")
    name = "informe-barbero-%s-%s.csv" % (today - datetime.timedelta(days=29), today)
    path = os.path.join(folder, name)
    br.wait(lambda: os.path.exists(path) and not os.path.exists(path + ".crdownload"), what="the download " + name)
    time.sleep(0.1)
    with open(path, "rb") as f:
        data = f.read()
    assert data.startswith(b"\xef\xbb\xbfBarbero;Citas;Confirmadas;"), data[:80]
    lines = data[3:].decode("utf-8").split("\r\n")
    assert lines[-1] == "", "every line ends in CRLF"
    assert all(l.count(";") == 11 for l in lines[:-1]), lines  # 12 cells a row
    total = [l for l in lines if l.startswith("Total;")][0]
    assert total.startswith("Total;3;3;0;0;0;%s;" % euros), total
    assert any(l.startswith(barberos[0]["nombre"] + ";2;") for l in lines), lines
    # by month: the months in words
    Select(br.d.find_element(By.ID, lab.get_attribute("for"))).select_by_visible_text("Mes")
    br.click("Ver informe")
    br.wait(lambda: br.d.execute_script(first) == "Mes", what="the months")
    months = [e.text for e in br.d.find_elements(By.CSS_SELECTOR, "table.report tbody th")]
    assert months[-1] == "%s de %d" % (MESES[today.month - 1], today.year), months
    assert all(re.fullmatch(r"(%s) de \d{4}" % "|".join(MESES), m) for m in months), months


if __name__ == "__main__":
    webtest.main(test)
