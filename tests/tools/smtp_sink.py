#!/usr/bin/python3
"""smtp_sink.py - a real SMTP server for the tests (aiosmtpd), listening on
127.0.0.1 only, that keeps every message it accepts.

Each accepted message becomes one JSON file in --dir, written to a hidden
temporary name first and renamed into place, so a reader sees either the
whole file or none:

    {"mail_from": "...", "rcpt_tos": ["..."], "tls": true|false,
     "auth_login": "..." or null, "data_b64": "<the raw message, base64>"}

Files are named <nanoseconds>-<sequence>.json, so sorting the names sorts
the messages by arrival.

Options:
    --dir DIR                 where messages are saved (required)
    --port N                  port to listen on; 0 (default) picks a free
                              one. The port is printed alone on the first
                              line of stdout as soon as the server listens.
    --tls-cert F --tls-key F  offer STARTTLS with this certificate and key
    --auth-user U --auth-password P
                              offer AUTH (PLAIN, LOGIN) and require it
                              before MAIL; with --tls-cert, AUTH is offered
                              only after STARTTLS

One line per event goes to stderr (connections, AUTH outcomes by login
name, saved messages); the password is never printed. SIGTERM or SIGINT
stops the server and the process exits with status 0.
"""

import argparse
import asyncio
import base64
import hmac
import json
import logging
import os
import signal
import ssl
import sys
import time

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


def log(msg):
    print(f"smtp_sink: {msg}", file=sys.stderr, flush=True)


class Saver:
    """The aiosmtpd handler: accepts every recipient, saves every message."""

    def __init__(self, folder, reject=None):
        self.folder = folder
        self.seq = 0
        self.reject = reject

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        # a recipient the "relay" does not know: refused for good, as 5xx says
        if self.reject and self.reject in address:
            log(f"refused recipient {address}")
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.seq += 1
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "tls": session.ssl is not None,
            "auth_login": (
                session.auth_data.login.decode("utf-8", "replace")
                if isinstance(session.auth_data, LoginPassword)
                else None
            ),
            "data_b64": base64.b64encode(envelope.original_content or b"").decode("ascii"),
        }
        name = f"{time.time_ns()}-{self.seq:06d}.json"
        tmp = os.path.join(self.folder, f".{name}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(self.folder, name))
        log(f"saved {name}: from {envelope.mail_from} to {', '.join(envelope.rcpt_tos)}"
            f" ({len(envelope.original_content or b'')} bytes, tls={record['tls']})")
        return "250 OK: saved"


class QuietDeprecation(logging.Filter):
    """Drops aiosmtpd's note that it uses its own deprecated attribute."""

    def filter(self, record):
        return "login_data is deprecated" not in record.getMessage()


def make_authenticator(user, password):
    want_user = user.encode("utf-8")
    want_pass = password.encode("utf-8")

    def authenticate(server, session, envelope, mechanism, auth_data):
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        ok = hmac.compare_digest(auth_data.login, want_user) and hmac.compare_digest(
            auth_data.password, want_pass
        )
        who = auth_data.login.decode("utf-8", "replace")
        log(f"AUTH {mechanism} for {who!r}: {'accepted' if ok else 'refused'}")
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

    return authenticate


def main():
    p = argparse.ArgumentParser(description="SMTP sink for the tests")
    p.add_argument("--dir", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--auth-user")
    p.add_argument("--auth-password")
    p.add_argument("--reject-rcpt", help="refuse recipients containing this text with 550")
    a = p.parse_args()
    if bool(a.tls_cert) != bool(a.tls_key):
        p.error("--tls-cert and --tls-key go together")
    if bool(a.auth_user) != bool(a.auth_password):
        p.error("--auth-user and --auth-password go together")
    os.makedirs(a.dir, exist_ok=True)
    logging.getLogger("mail.log").addFilter(QuietDeprecation())

    tls = None
    if a.tls_cert:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(a.tls_cert, a.tls_key)

    handler = Saver(a.dir, a.reject_rcpt)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    def factory():
        kw = {}
        if a.auth_user:
            kw = {
                "authenticator": make_authenticator(a.auth_user, a.auth_password),
                "auth_required": True,
                # with TLS on offer, AUTH waits for STARTTLS as a real relay does
                "auth_require_tls": tls is not None,
            }
        return SMTP(handler, hostname="sink.test", tls_context=tls, loop=loop, **kw)

    server = loop.run_until_complete(
        loop.create_server(factory, host="127.0.0.1", port=a.port, reuse_address=True)
    )
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    log(f"listening on 127.0.0.1:{port} (starttls={'yes' if tls else 'no'}, "
        f"auth={'yes' if a.auth_user else 'no'}, folder {a.dir})")

    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    loop.run_until_complete(stop)
    server.close()
    loop.run_until_complete(server.wait_closed())
    loop.close()
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
