"""webtest.py - what the browser tests share: a real `barberia serve` on a
free loopback port with a temporary data folder and demo data, the API
(urllib) to seed and check data, and headless Chromium (Debian's chromium +
chromedriver, python3-selenium) with the checks every page state gets:
axe-core finds no violation, nothing scrolls sideways at 360 px, no
announcement covers a control, the page's transfer (the browser's own
resource timings) stays under 100 KB, and the console shows no error.

Run as: /usr/bin/python3 tests/web/test_x.py --bin build/normal/barberia
Exit status 77 (skipped) when Chromium or selenium is missing.
Screenshots (390x844 and 1280x800) go to $BARBERIA_SCREENSHOTS when set.
"""
import argparse
import base64
import datetime
import email
import email.policy
import glob
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tests", "tools", "web")
AXE = os.path.join(TOOLS, "node_modules", "axe-core", "axe.min.js")
CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
BUDGET = 100 * 1024

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
except ImportError:
    webdriver = None


def skip(why):
    print("skipped: " + why, file=sys.stderr)
    sys.exit(77)


def install_axe():
    """axe-core from the committed lock file (npm ci), once."""
    if os.path.exists(AXE):
        return
    if not shutil.which("npm"):
        skip("npm is missing (scripts/deps --test installs it)")
    with open(os.path.join(TOOLS, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(AXE):
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                           cwd=TOOLS, check=True, stdout=subprocess.DEVNULL)


class Server:
    """`barberia serve --demo` on 127.0.0.1:<free port>, data in a temp folder."""

    def __init__(self, binary, env=None):
        self.dir = tempfile.mkdtemp(prefix="barberia-web-")
        e = {k: v for k, v in os.environ.items() if not k.startswith("BARBERIA_")}
        # the tests' shop is in Madrid (their texts say "hora de Madrid")
        e["BARBERIA_TZ"] = "Europe/Madrid"
        e.update(env or {})
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.proc = subprocess.Popen(
            [binary, "serve", "--demo", "--listen", "127.0.0.1:0", "--data", os.path.join(self.dir, "data")],
            stdout=subprocess.PIPE, stderr=self.log, env=e, text=True)
        self.admin_password = None
        for line in self.proc.stdout:
            m = re.match(r"\s*password:\s*(\S+)", line)
            if m:
                self.admin_password = m.group(1)
                break
        deadline = time.time() + 20
        self.base = None
        while time.time() < deadline and not self.base:
            self.log.seek(0)
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+) ", self.log.read())
            if m:
                self.base = m.group(1)
            else:
                time.sleep(0.05)
        if not self.base:
            self.stop()
            raise RuntimeError("the server did not start")
        self.admin = self.login("admin@barberia.local", self.admin_password)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        status = self.proc.wait()
        self.log.seek(0)
        text = self.log.read()
        shutil.rmtree(self.dir, ignore_errors=True)
        if status != 0 or "ERROR: AddressSanitizer" in text or "runtime error:" in text:
            raise AssertionError("server exit %d; log:\n%s" % (status, text[-4000:]))

    def call(self, method, path, body=None, token=None, raw=None, ctype=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        if data is not None:
            req.add_header("Content-Type", ctype or "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def ok(self, method, path, body=None, token=None, **kw):
        st, js = self.call(method, path, body, token, **kw)
        assert 200 <= st < 300, "%s %s -> %d %s" % (method, path, st, js)
        return js

    def login(self, email, password):
        return self.ok("POST", "/api/auth/login", {"email": email, "password": password})["token"]

    def signup(self, email, nombre, telefono=None, password="secreto1"):
        js = self.ok("POST", "/api/auth/signup", {"email": email, "password": password, "nombre": nombre, "telefono": telefono})
        return js["token"], js["user"]["id"]

    def upload(self, token, cita_id, tipo, png):
        b = "----barberiatest"
        parts = []
        for k, v in (("cita_id", cita_id), ("tipo", tipo)):
            parts.append(('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (b, k, v)).encode())
        parts.append(('--%s\r\nContent-Disposition: form-data; name="file"; filename="f.png"\r\nContent-Type: image/png\r\n\r\n' % b).encode() + png + b"\r\n")
        parts.append(("--%s--\r\n" % b).encode())
        return self.ok("POST", "/api/fotos", token=token, raw=b"".join(parts), ctype="multipart/form-data; boundary=" + b)

    def catalog(self):
        return self.ok("GET", "/api/servicios")["servicios"], self.ok("GET", "/api/barberos")["barberos"]


# A real 64x64 PNG (a photo stand-in), written once per run.
def png_bytes():
    import struct
    import zlib
    w = h = 64
    rows = b"".join(b"\x00" + b"".join(bytes((x * 4 % 256, y * 4 % 256, 128)) for x in range(w)) for y in range(h))

    def chunk(t, d):
        c = struct.pack(">I", len(d)) + t + d
        return c + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class DevTools:
    """A DevTools connection of its own to the browser's page (the CDP's
    WebSocket, read by a thread), for what needs the protocol's events:
    serve(pattern, body) answers every request whose URL matches pattern
    (the Fetch domain's wildcards) with body, as JavaScript with 200, until
    stop(). The standard library only: a minimal WebSocket client."""

    def __init__(self, driver):
        addr = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        with urllib.request.urlopen("http://%s/json/list" % addr, timeout=30) as r:
            targets = json.loads(r.read())
        page = next(t for t in targets if t["type"] == "page")
        u = urllib.parse.urlparse(page["webSocketDebuggerUrl"])
        self.sock = socket.create_connection((u.hostname, u.port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (u.path, u.hostname, u.port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            c = self.sock.recv(1)
            if not c:
                raise AssertionError("DevTools closed the connection")
            head += c
        assert head.split(b"\r\n")[0].split(b" ")[1] == b"101", head
        self.sock.settimeout(None)
        self.lock = threading.Lock()
        self.ids = 0
        self.answers = {}
        self.answered = threading.Condition()
        self.handlers = {}
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _frame(self, data):
        hdr = bytearray([0x81])
        n = len(data)
        if n < 126:
            hdr.append(0x80 | n)
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            hdr += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        mask = os.urandom(4)
        return bytes(hdr) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))

    def _exact(self, n):
        out = b""
        while len(out) < n:
            c = self.sock.recv(n - len(out))
            if not c:
                raise EOFError
            out += c
        return out

    def _message(self):
        data = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7f
            if n == 126:
                n = int.from_bytes(self._exact(2), "big")
            elif n == 127:
                n = int.from_bytes(self._exact(8), "big")
            mask = self._exact(4) if b1 & 0x80 else None
            part = self._exact(n)
            if mask:
                part = bytes(b ^ mask[i % 4] for i, b in enumerate(part))
            if b0 & 0x0f == 8:
                raise EOFError
            if b0 & 0x0f in (0, 1, 2):
                data += part
                if b0 & 0x80:
                    return json.loads(data)

    def _read(self):
        try:
            while True:
                m = self._message()
                if "id" in m:
                    with self.answered:
                        self.answers[m["id"]] = m
                        self.answered.notify_all()
                elif m.get("method") in self.handlers:
                    self.handlers[m["method"]](m["params"])
        except (EOFError, OSError):
            pass

    def send(self, method, params=None, wait=True):
        with self.lock:
            self.ids += 1
            i = self.ids
            self.sock.sendall(self._frame(json.dumps({"id": i, "method": method, "params": params or {}}).encode()))
        if not wait:
            return None
        with self.answered:
            self.answered.wait_for(lambda: i in self.answers, 30)
            m = self.answers.pop(i, None)
        assert m and "error" not in m, "%s: %s" % (method, m)
        return m["result"]

    def serve(self, pattern, body):
        def paused(p):
            self.send("Fetch.fulfillRequest", {
                "requestId": p["requestId"], "responseCode": 200,
                "responseHeaders": [{"name": "Content-Type", "value": "text/javascript"},
                                    {"name": "Cache-Control", "value": "no-store"}],
                "body": base64.b64encode(body.encode()).decode()}, wait=False)
        self.handlers["Fetch.requestPaused"] = paused
        self.send("Fetch.enable", {"patterns": [{"urlPattern": pattern}]})

    def stop(self):
        self.send("Fetch.disable")
        self.sock.close()


class Browser:
    def __init__(self, server, name):
        self.s = server
        self.name = name
        self.shots = os.environ.get("BARBERIA_SCREENSHOTS")
        o = webdriver.ChromeOptions()
        o.binary_location = CHROMIUM
        for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                  "--window-size=390,844", "--lang=es-ES", "--disable-extensions", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update"):
            o.add_argument(a)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.d = webdriver.Chrome(service=Service(DRIVER), options=o)
        self.d.set_window_size(390, 844)
        self.d.set_script_timeout(30)
        self.allowed_errors = []  # regexps of console lines a test expects
        self.states = 0

    def quit(self):
        self.d.quit()

    # --- finding and acting ----------------------------------------------------
    def wait(self, fn, timeout=15, what="condition"):
        try:
            # a redraw may replace an element between two looks at it
            return WebDriverWait(self.d, timeout, poll_frequency=0.05,
                                 ignored_exceptions=(NoSuchElementException,
                                                     StaleElementReferenceException)).until(lambda d: fn())
        except Exception:
            what = what() if callable(what) else what
            raise AssertionError("timed out waiting for %s on %s; page:\n%s" % (what, self.d.current_url, self.text()[:3000]))

    def text(self):
        try:
            return self.d.find_element(By.ID, "main").text
        except Exception:
            return ""

    def see(self, needle, timeout=15):
        self.wait(lambda: needle in self.text(), timeout, repr(needle))

    def button(self, label, timeout=15, within=None):
        """The first enabled button or link whose text is label (exact)."""
        def find():
            # the page first, then the header's navigation
            roots = [within] if within else [self.d.find_element(By.ID, "main"), self.d]
            for root in roots:
                for e in root.find_elements(By.CSS_SELECTOR, "button, a"):
                    try:
                        if e.text.strip() == label and e.is_displayed() and e.is_enabled():
                            return e
                    except Exception:
                        pass
            return None
        return self.wait(find, timeout, "button " + repr(label))

    def click(self, label, **kw):
        e = self.button(label, **kw)
        self.d.execute_script("arguments[0].scrollIntoView({block:'center'})", e)
        e.click()
        return e

    def sign_in(self, email, password, volver):
        """Signs in through /entrar, to come back to volver."""
        self.open("/entrar?volver=" + volver)
        self.enter(email, password)

    def enter(self, email, password):
        """Fills the sign-in form on the page and sends it."""
        self.fill("Correo electrónico", email)
        self.fill("Contraseña", password)
        self.click("Entrar")

    def fill(self, label, value):
        """Types into the input its <label> names."""
        lab = self.wait(lambda: next((l for l in self.d.find_elements(By.TAG_NAME, "label") if l.text.strip() == label and l.is_displayed()), None), what="label " + label)
        inp = self.d.find_element(By.ID, lab.get_attribute("for"))
        inp.clear()
        inp.send_keys(value)
        return inp

    def active(self):
        return self.d.switch_to.active_element

    def focused_heading(self, needle):
        js = "const e = document.activeElement; return /^H[1-4]$/.test(e.tagName) && e.textContent.includes(arguments[0])"
        self.wait(lambda: self.d.execute_script(js, needle),
                  what=lambda: "focus on heading %r (focused: %s)" % (needle, self.d.execute_script("return document.activeElement.outerHTML.slice(0, 200)")))

    def open(self, path):
        self.d.get(self.s.base + path)
        self.wait(lambda: self.d.execute_script("return !!document.querySelector('main h1')"), what="page")

    def resources(self):
        return self.d.execute_script("return performance.getEntriesByType('resource').map(e => ({name: e.name, size: e.transferSize, type: e.initiatorType}))")

    # --- what covers what ----------------------------------------------------------
    # the announcement's boxes (the live region, and its words shown in the
    # page), where they show; over(rect): those that overlap rect
    COVER_JS = ("const boxes = [...document.querySelectorAll('#status, .said')]"
                ".map(a => [a, a.getBoundingClientRect()]).filter(([, q]) => q.width > 1 && q.height > 1);"
                "const over = (r) => boxes.filter(([, q]) => q.left < r.right && q.right > r.left && q.top < r.bottom && q.bottom > r.top)"
                ".map(([a]) => a.outerHTML.slice(0, 120));")

    def hittable(self, el):
        """el can be tapped where it is: the point at its centre (in the
        window) hits el itself, and no announcement covers any of it."""
        js = self.COVER_JS + (
            "const e = arguments[0], r = e.getBoundingClientRect();"
            "const x = r.left + r.width / 2, y = r.top + r.height / 2;"
            "const hit = document.elementFromPoint(x, y);"
            "return {inView: x >= 0 && y >= 0 && x < innerWidth && y < innerHeight,"
            " hit: !!hit && (hit === e || e.contains(hit)), at: hit ? hit.outerHTML.slice(0, 120) : null, over: over(r)}")
        got = self.d.execute_script(js, el)
        what = el.get_attribute("outerHTML")[:120]
        assert got["inView"], "not in the window: %s" % what
        assert got["hit"] and not got["over"], "%s is covered: at its centre %s; announcements over it: %s" % (what, got["at"], got["over"])

    def broken_module_said(self, module, error, error_logged=False):
        """The page says a module of the app arrived but failed to run, in
        its own words (not "No hay conexión", nor the browser's error, whose
        kind is error), and the console has the app's line naming module (its
        name before the hash) and, with error_logged, that kind."""
        self.see("Esta página no se pudo abrir. Recarga la página; si sigue igual, avisa a la barbería.")
        assert "No hay conexión" not in self.text() and error not in self.text(), self.text()
        logged = [e["message"] for e in self.d.get_log("browser") if e["level"] == "SEVERE"]
        assert any("No se pudo ejecutar" in m and module + "." in m and (not error_logged or error in m)
                   for m in logged), logged

    def tap_target(self, el):
        """el is a touch target of its own: 44 x 44 CSS px at least, on a
        phone-sized window (390 px wide at most)."""
        w, h, win = self.d.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return [r.width, r.height, innerWidth]", el)
        assert w >= 44 and h >= 44 and win <= 390, "%s is %sx%s px (window %s)" % (
            el.get_attribute("outerHTML")[:80], w, h, win)

    # --- the checks every state gets ---------------------------------------------
    def offline(self, on):
        """Cuts the browser off the network (on) or gives it back: then
        returns once the page reaches the server again, as a person would
        only act once her phone shows it is back."""
        self.d.execute_cdp_cmd("Network.enable", {})
        self.d.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": on, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        if not on:
            reach = ("const done = arguments[arguments.length - 1];"
                     "fetch('/healthz', {cache: 'no-store'}).then(r => done(r.ok), () => done(false));")
            self.wait(lambda: self.d.execute_async_script(reach), what="the network back")

    def check(self, state):
        """axe-core, no sideways scroll at 360 px, no announcement over a control, transfer budget, console; screenshots."""
        self.states += 1
        d = self.d
        time.sleep(0.15)  # let an announcement or a focus change settle
        if not self.d.execute_script("return !!window.axe"):
            with open(AXE) as f:
                d.execute_script(f.read())
        res = d.execute_async_script(
            "const cb = arguments[arguments.length - 1];"
            "axe.run(document, {resultTypes: ['violations']}).then(r => cb(r.violations.map(v => "
            "({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.html)})))).catch(e => cb([{id: 'axe-error', help: String(e)}]))")
        assert not res, "%s: axe-core violations: %s" % (state, json.dumps(res, indent=1, ensure_ascii=False))
        size = d.get_window_size()
        d.set_window_size(360, 800)
        time.sleep(0.1)
        wide = d.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth, [...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(0, 3).map(e => e.outerHTML.slice(0, 120))]")
        assert wide[0] <= wide[1], "%s: scrolls sideways at 360 px: %s" % (state, wide)
        primary = d.execute_script("const b = document.querySelector('main .primary'); if (!b) return true; const r = b.getBoundingClientRect(); return r.left >= 0 && r.right <= document.documentElement.clientWidth")
        assert primary, "%s: the primary button is cut at 360 px" % state
        d.set_window_size(size["width"], size["height"])
        small = d.execute_script("return [...document.querySelectorAll('button, a, input, select, textarea')].filter(e => { const r = e.getBoundingClientRect(); return r.width && r.height && (r.width < 24 || r.height < 24) && !(e.closest('p, li, dd') && e.tagName === 'A' && !e.classList.contains('button')); }).map(e => e.outerHTML.slice(0, 100))")
        assert not small, "%s: targets smaller than 24x24 px: %s" % (state, small)
        covered = d.execute_script(self.COVER_JS + "return [...document.querySelectorAll('button, a, input, select, textarea')].map(e => [e, e.getBoundingClientRect()]).filter(([, r]) => r.width && r.height && r.bottom > 0 && r.top < innerHeight).map(([e, r]) => [e.outerHTML.slice(0, 100), over(r)]).filter(([, o]) => o.length)")
        assert not covered, "%s: an announcement covers controls: %s" % (state, covered)
        # this page's transfer: since the load, or since the app last
        # changed page without a reload (its 'page' mark)
        total = d.execute_script(
            "const m = performance.getEntriesByName('page', 'mark').pop(); const since = m ? m.startTime : 0;"
            "const n = performance.getEntriesByType('navigation')[0];"
            "return performance.getEntriesByType('resource').filter(e => e.startTime >= since).reduce((a, e) => a + e.transferSize, 0) + (!m && n ? n.transferSize : 0)")
        assert total < BUDGET, "%s: page transfer %d bytes (budget %d)" % (state, total, BUDGET)
        self.console(state)
        if self.shots:
            os.makedirs(self.shots, exist_ok=True)
            slug = re.sub(r"[^a-z0-9]+", "-", state.lower()).strip("-")
            for w, h, tag in ((390, 844, "phone"), (1280, 800, "desktop")):
                d.set_window_size(w, h)
                time.sleep(0.15)
                d.save_screenshot(os.path.join(self.shots, "%s-%s-%s.png" % (self.name, slug, tag)))
            d.set_window_size(size["width"], size["height"])

    def console(self, state):
        bad = []
        for e in self.d.get_log("browser"):
            if e["level"] not in ("SEVERE", "ERROR"):
                continue
            if any(re.search(p, e["message"]) for p in self.allowed_errors):
                continue
            bad.append(e["message"])
        assert not bad, "%s: console errors: %s" % (state, bad)


def main(test, env=None, mail=False):
    """Runs test(srv, br); env: more settings for the server (a dict). With
    mail, the server sends to an SMTP sink, and test(srv, br, sink) reads it."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    if webdriver is None:
        skip("python3-selenium is missing (scripts/deps --test installs it)")
    if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
        skip("chromium or chromium-driver is missing (scripts/deps --test installs them)")
    install_axe()
    sink = Sink(tempfile.mkdtemp(prefix="barberia-web-mail-")) if mail else None
    if sink:
        env = dict(env or {}, BARBERIA_SMTP_URL="smtp://127.0.0.1:%d" % sink.port,
                   BARBERIA_SMTP_FROM="citas@barberia.test")
    srv = Server(a.bin, env)
    br = None
    try:
        br = Browser(srv, os.path.splitext(os.path.basename(sys.argv[0]))[0].replace("test_", ""))
        if sink:
            test(srv, br, sink)
        else:
            test(srv, br)
        print("ok: %d page states checked" % br.states)
    finally:
        if br:
            br.quit()
        srv.stop()
        if sink:
            sink.stop()


SMTP_SINK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "smtp_sink.py")


class Sink:
    """The SMTP sink (tests/tools/smtp_sink.py) the server sends to: its messages as
    (recipients, subject, plain text)."""

    def __init__(self, root):
        self.dir = os.path.join(root, "mail")
        os.makedirs(self.dir, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, SMTP_SINK, "--dir", self.dir, "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = int(self.proc.stdout.readline().strip())

    def messages(self):
        out = []
        for p in sorted(glob.glob(os.path.join(self.dir, "*.json"))):
            with open(p) as f:
                j = json.load(f)
            m = email.message_from_bytes(base64.b64decode(j["data_b64"]), policy=email.policy.default)
            text = m.get_body(preferencelist=("plain",)).get_content()
            out.append((j["rcpt_tos"], str(m["subject"]), text))
        return out

    def wait(self, to, subject, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for rcpt, subj, text in self.messages():
                if to in rcpt and subject in subj:
                    return text
            time.sleep(0.1)
        raise AssertionError("no %r mail to %s" % (subject, to))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def free_slot(srv, servicio, barbero, skip=0, after=1):
    """The first free slot from `after` days on (after skipping `skip`), and its day."""
    day = datetime.date.today() + datetime.timedelta(days=after)
    for _ in range(30):
        js = srv.ok("GET", "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s" % (servicio, day.isoformat(), barbero))
        if len(js["huecos"]) > skip:
            return js["huecos"][skip]["inicio"], day.isoformat()
        day += datetime.timedelta(days=1)
    raise AssertionError("no free slot")
