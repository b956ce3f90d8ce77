#!/usr/bin/env python3
"""A TCP proxy on loopback that a test can cut and restore, so that one
relay loses NATS while another keeps it:

  tcpproxy.py LISTEN_PORT TARGET_PORT

SIGUSR1 cuts: every connection is closed and the port stops listening
(a reconnecting client is refused).  SIGUSR2 listens again.  Prints
"ready" once it listens.
"""
import selectors
import signal
import socket
import sys

sel = selectors.DefaultSelector()
listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
listener = None
pairs = {}
cut = False
want = None


def open_listener():
    global listener
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(64)
    listener.setblocking(False)
    sel.register(listener, selectors.EVENT_READ, None)


def close_all():
    global listener
    for s in list(pairs):
        try:
            sel.unregister(s)
        except (KeyError, ValueError):
            pass
        s.close()
    pairs.clear()
    if listener is not None:
        sel.unregister(listener)
        listener.close()
        listener = None


def on_signal(sig, frame):
    global want
    want = sig


signal.signal(signal.SIGUSR1, on_signal)
signal.signal(signal.SIGUSR2, on_signal)
open_listener()
print("ready", flush=True)
while True:
    if want == signal.SIGUSR1 and listener is not None:
        close_all()
    elif want == signal.SIGUSR2 and listener is None:
        open_listener()
    want = None
    for key, _ in sel.select(timeout=0.1):
        s = key.fileobj
        if s is listener:
            try:
                c, _ = listener.accept()
                t = socket.create_connection(("127.0.0.1", target_port))
            except OSError:
                continue
            c.setblocking(False)
            t.setblocking(False)
            pairs[c], pairs[t] = t, c
            sel.register(c, selectors.EVENT_READ, None)
            sel.register(t, selectors.EVENT_READ, None)
            continue
        if s not in pairs:
            continue
        try:
            data = s.recv(65536)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            data = b""
        peer = pairs[s]
        if data:
            try:
                peer.setblocking(True)
                peer.sendall(data)
                peer.setblocking(False)
                continue
            except OSError:
                pass
        for x in (s, peer):
            try:
                sel.unregister(x)
            except (KeyError, ValueError):
                pass
            x.close()
            pairs.pop(x, None)
