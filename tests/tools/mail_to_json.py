#!/usr/bin/python3
"""mail_to_json.py - reads a message saved by smtp_sink.py (or, with --raw,
a bare RFC 5322 message) with Python's email package and prints what a
test wants to assert on, as one JSON object:

    mail_from, rcpt_tos, tls, auth_login   the SMTP envelope (sink files)
    raw                                    the message as text
    header_names                           top-level header names, in order
    subject, from, to                      decoded header values
    to_addresses, to_names                 the To addresses and display names
    message_id, date
    structure                              content types, depth-first
    text, html                             the decoded text/plain, text/html
    ics_filename, ics_raw                  the text/calendar part
    ics                                    its content lines, unfolded:
                                           [{"name", "params", "value", "text"}]
                                           ("text" is the value with RFC 5545
                                           escapes undone)
    problems                               whatever breaks the rules: lines
                                           over 78 octets, bare CR or LF,
                                           non-ASCII octets, parser defects,
                                           .ics lines over 75 octets

Usage: mail_to_json.py [--raw] FILE
"""

import base64
import email
import email.policy
import json
import re
import sys


def unescape_text(v):
    out, i = [], 0
    while i < len(v):
        c = v[i]
        if c == "\\" and i + 1 < len(v):
            n = v[i + 1]
            out.append("\n" if n in "nN" else n)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_content_line(line):
    """NAME;P=V;P="V":VALUE -> (name, params, value); ':' in quotes is data."""
    quoted = False
    for i, c in enumerate(line):
        if c == '"':
            quoted = not quoted
        elif c == ":" and not quoted:
            head, value = line[:i], line[i + 1:]
            break
    else:
        return line, {}, ""
    parts = head.split(";")
    params = {}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        params[k.upper()] = v.strip('"')
    return parts[0].upper(), params, value


def parse_ics(raw_bytes, problems):
    for n, physical in enumerate(raw_bytes.split(b"\r\n")):
        if len(physical) > 75:
            problems.append(f"ics line {n + 1} has {len(physical)} octets")
        if b"\n" in physical or b"\r" in physical:
            problems.append(f"ics line {n + 1} has a bare CR or LF")
    text = raw_bytes.decode("utf-8")
    unfolded = re.sub(r"\r\n[ \t]", "", text)
    lines = []
    for line in unfolded.split("\r\n"):
        if not line:
            continue
        name, params, value = split_content_line(line)
        lines.append({"name": name, "params": params, "value": value,
                      "text": unescape_text(value)})
    return text, lines


def main():
    args = sys.argv[1:]
    bare = False
    if args and args[0] == "--raw":
        bare, args = True, args[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0], "rb") as f:
        blob = f.read()
    out = {}
    if bare:
        data = blob
    else:
        rec = json.loads(blob)
        data = base64.b64decode(rec["data_b64"])
        for k in ("mail_from", "rcpt_tos", "tls", "auth_login"):
            out[k] = rec.get(k)

    problems = []
    for n, line in enumerate(data.split(b"\r\n")):
        if len(line) > 78:
            problems.append(f"line {n + 1} has {len(line)} octets")
        if b"\n" in line or b"\r" in line:
            problems.append(f"line {n + 1} has a bare CR or LF")
    if any(b > 0x7F for b in data):
        problems.append("the message has non-ASCII octets")

    msg = email.message_from_bytes(data, policy=email.policy.default)
    out["raw"] = data.decode("ascii", "replace")
    out["header_names"] = list(msg.keys())
    out["subject"] = str(msg.get("subject", ""))
    out["from"] = str(msg.get("from", ""))
    out["to"] = str(msg.get("to", ""))
    to = msg.get("to")
    out["to_addresses"] = [a.addr_spec for a in to.addresses] if to is not None else []
    out["to_names"] = [a.display_name for a in to.addresses] if to is not None else []
    out["message_id"] = str(msg.get("message-id", ""))
    out["date"] = str(msg.get("date", ""))
    out["structure"] = []
    out["text"] = out["html"] = out["ics_filename"] = out["ics_raw"] = None
    out["ics"] = []
    for part in msg.walk():
        ctype = part.get_content_type()
        out["structure"].append(ctype)
        for d in part.defects:
            problems.append(f"{ctype}: {type(d).__name__}")
        if part.is_multipart():
            continue
        if ctype == "text/plain" and out["text"] is None:
            out["text"] = part.get_content()
        elif ctype == "text/html" and out["html"] is None:
            out["html"] = part.get_content()
        elif ctype == "text/calendar":
            out["ics_filename"] = part.get_filename()
            out["ics_method_param"] = part.get_param("method")
            out["ics_raw"], out["ics"] = parse_ics(part.get_payload(decode=True), problems)
    out["problems"] = problems
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
