#!/usr/bin/env python3
"""Raw HTTP on one new connection, for the live tests: bytes exactly as
given (malformed, split, pipelined, trickled), then what comes back.

  rawhttp.py [OPTIONS] PORT STEP...

STEPs, in order:
  send:TEXT     send TEXT, its escapes read as printf's: \\r \\n \\t \\\\ \\xHH \\NNN
  stdin         send the bytes of stdin
  pause:SECS    wait SECS seconds
  head          read until the end of an answer's head (an interim 100
                Continue, say), SECS of --timeout at most
  drip:SECS:TEXT  send TEXT one byte every SECS seconds, stopping early
                when the relay closes the connection

Then read until the relay closes the connection, --answers answers have
come, or --timeout seconds (5) pass with nothing new.  Options:
  --tls CAFILE  TLS first, the server's name "localhost" checked with CAFILE
  --answers N   stop reading after N answers (status lines)
  --timeout S   the read's limit, from the last byte received (5)
  --t0 FILE     write the wall-clock time (ms since the epoch) of the first
                byte sent to FILE: the start of an interval the relay's own
                log stamps end
  --out MODE    what to print (default raw):
                  raw       everything received, then "<EOF>" if the relay
                            closed the connection
                  statuses  the answers' status codes, space-separated
                  first     the first answer's status code, or "closed"
A connection refused or reset counts as closed.  Exit 0 unless the
arguments are wrong.
"""
import re
import socket
import sys
import time

STATUS = re.compile(rb"HTTP/1\.[01] ([0-9]{3}) ")


def unescape(text):
    """TEXT with \\r \\n \\t \\\\, \\xHH and octal \\NNN escapes as bytes."""
    out, i, b = bytearray(), 0, text.encode("utf-8", "surrogateescape")
    esc = {ord("r"): b"\r", ord("n"): b"\n", ord("t"): b"\t", ord("\\"): b"\\"}
    while i < len(b):
        c = b[i + 1] if b[i] == ord("\\") and i + 1 < len(b) else None
        if c in esc:
            out += esc[c]
            i += 2
        elif c == ord("x") and i + 3 < len(b):
            out.append(int(b[i + 2:i + 4], 16))
            i += 4
        elif c is not None and ord("0") <= c <= ord("7"):
            j = i + 1
            while j < min(i + 4, len(b)) and ord("0") <= b[j] <= ord("7"):
                j += 1
            out.append(int(b[i + 1:j], 8) & 0xff)
            i = j
        else:
            out.append(b[i])
            i += 1
    return bytes(out)


def main(argv):
    opts = {"tls": None, "answers": 0, "timeout": 5.0, "t0": None,
            "out": "raw"}
    while argv and argv[0].startswith("--"):
        k = argv.pop(0)[2:]
        if k not in opts or not argv:
            sys.exit(__doc__)
        opts[k] = argv.pop(0)
    if len(argv) < 1:
        sys.exit(__doc__)
    port, steps = int(argv[0]), argv[1:]
    timeout, answers = float(opts["timeout"]), int(opts["answers"])
    got, closed, t0 = b"", False, [None]

    def stamp():
        if t0[0] is None:
            t0[0] = int(time.time() * 1000)
            if opts["t0"]:
                with open(opts["t0"], "w") as f:
                    f.write("%d\n" % t0[0])

    def recv(s):
        """One read: the bytes, b"" once the relay closed, None on timeout."""
        try:
            return s.recv(65536)
        except socket.timeout:
            return None
        except OSError:
            return b""

    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if opts["tls"]:
            import ssl
            ctx = ssl.create_default_context(cafile=opts["tls"])
            s = ctx.wrap_socket(s, server_hostname="localhost")
    except OSError:
        s, closed = None, True
    for step in steps if s else []:
        kind, _, arg = step.partition(":")
        try:
            if kind == "send":
                stamp()
                s.sendall(unescape(arg))
            elif kind == "stdin":
                stamp()
                s.sendall(sys.stdin.buffer.read())
            elif kind == "pause":
                time.sleep(float(arg))
            elif kind == "head":
                s.settimeout(timeout)
                while b"\r\n\r\n" not in got:
                    d = recv(s)
                    if not d:
                        closed = d == b""
                        break
                    got += d
            elif kind == "drip":
                secs, _, text = arg.partition(":")
                for c in unescape(text):
                    stamp()
                    s.sendall(bytes([c]))
                    time.sleep(float(secs))
                    s.setblocking(False)
                    try:
                        d = s.recv(65536)
                        if not d:
                            closed = True
                            break
                        got += d
                    except BlockingIOError:
                        pass
                    s.setblocking(True)
            else:
                sys.exit(__doc__)
        except OSError:
            closed = True
        if closed:
            break
    if s and not closed:
        s.settimeout(timeout)
        while not answers or len(STATUS.findall(got)) < answers:
            d = recv(s)
            if d is None:
                break
            if not d:
                closed = True
                break
            got += d
    codes = [c.decode() for c in STATUS.findall(got)]
    if opts["out"] == "statuses":
        print(" ".join(codes))
    elif opts["out"] == "first":
        print(codes[0] if codes else "closed")
    else:
        sys.stdout.write(got.decode("utf-8", "replace") +
                         ("<EOF>" if closed else ""))


main(sys.argv[1:])
