#!/usr/bin/python3
"""A TCP proxy in front of PostgreSQL that can lose the answer to a COMMIT.

Usage: pgproxy.py UPSTREAM_HOST UPSTREAM_PORT CONTROL_DIR

It listens on a free loopback port, prints "port N" on its standard output,
and relays every connection to the server unchanged (an SSL or GSS
encryption request is answered "no" by the proxy itself, so the session
runs in clear and can be read). It reads what clients send, message by
message, to find their COMMITs; the server's answers are relayed as bytes.

Control, by files in CONTROL_DIR (standard library only, no control port):
  arm      when it exists, the next COMMIT a client sends (a simple query, or
           an extended-protocol Parse of "COMMIT" up to the Sync after it)
           in a transaction that ran a statement containing the text of its
           line "match=TEXT" (any transaction without one) is relayed to the
           server, and the client's connection is closed at once: the
           server commits, the client never hears so. The file is removed
           when it fires. With a line "refuse", the proxy also creates
           CONTROL_DIR/refusing.
  refusing while it exists, every new connection is closed as soon as it is
           accepted (so a client cannot ask the server anything else).
The server side of a cut connection is half-closed after the COMMIT: the
server reads all that was relayed, commits, answers into the void and ends
the session.
"""
import os
import socket
import struct
import sys
import threading

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def is_commit(query):
    return query.strip().rstrip(b";").strip().upper() == b"COMMIT"


def close_quietly(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class Session:
    def __init__(self, client, upstream, control):
        self.client = client
        self.upstream = upstream
        self.control = control
        self.cut = threading.Event()
        self.server = None
        self.names = {}  # prepared statement name -> its text
        self.ran = []  # the statements of the transaction so far

    def fires(self):
        """Whether the armed cut applies to this COMMIT (and disarms it)."""
        arm = os.path.join(self.control, "arm")
        ran, self.ran = self.ran, []
        try:
            with open(arm) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return False
        match = [ln[6:].encode() for ln in lines if ln.startswith("match=")]
        if match and not any(match[0] in q for q in ran):
            return False
        try:
            os.unlink(arm)
        except FileNotFoundError:
            return False  # another connection's COMMIT took it
        if "refuse" in lines:
            open(os.path.join(self.control, "refusing"), "w").close()
        print("pgproxy: a COMMIT went to the server; cutting its client off", file=sys.stderr,
              flush=True)
        return True

    def startup(self):
        """Relays the startup packet, answering encryption requests "no"."""
        while True:
            head = recv_exact(self.client, 8)
            length, code = struct.unpack("!II", head)
            if code in (SSL_REQUEST, GSSENC_REQUEST) and length == 8:
                self.client.sendall(b"N")
                continue
            self.server.sendall(head + recv_exact(self.client, length - 8))
            return

    def client_to_server(self):
        commit_sent = False
        try:
            self.startup()
            while True:
                kind = recv_exact(self.client, 1)
                head = recv_exact(self.client, 4)
                body = recv_exact(self.client, struct.unpack("!I", head)[0] - 4)
                last = False
                if kind == b"Q":
                    query = body.rstrip(b"\0")
                    self.ran.append(query)
                    last = is_commit(query) and self.fires()
                elif kind == b"P":
                    name, query = body.split(b"\0", 2)[:2]
                    self.names[name] = query
                    commit_sent = commit_sent or is_commit(query)
                elif kind == b"B":
                    self.ran.append(self.names.get(body.split(b"\0", 2)[1], b""))
                elif kind == b"S" and commit_sent:
                    commit_sent = False
                    last = self.fires()
                if last:
                    # the client is gone before the server can answer
                    self.cut.set()
                    close_quietly(self.client)
                self.server.sendall(kind + head + body)
                if last:
                    break
        except (EOFError, OSError):
            pass
        if not self.cut.is_set():
            self.cut.set()
            close_quietly(self.client)
        try:
            self.server.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def server_to_client(self):
        try:
            while True:
                data = self.server.recv(65536)
                if not data:
                    break
                if not self.cut.is_set():
                    self.client.sendall(data)
        except OSError:
            pass
        if not self.cut.is_set():
            self.cut.set()
            close_quietly(self.client)
        close_quietly(self.server)

    def run(self):
        try:
            self.server = socket.create_connection(self.upstream)
        except OSError:
            close_quietly(self.client)
            return
        threading.Thread(target=self.client_to_server, daemon=True).start()
        threading.Thread(target=self.server_to_client, daemon=True).start()


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: pgproxy.py UPSTREAM_HOST UPSTREAM_PORT CONTROL_DIR")
    upstream = (sys.argv[1], int(sys.argv[2]))
    control = sys.argv[3]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print("port %d" % listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        if os.path.exists(os.path.join(control, "refusing")):
            close_quietly(client)
            continue
        Session(client, upstream, control).run()


if __name__ == "__main__":
    main()
