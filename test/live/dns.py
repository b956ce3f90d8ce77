#!/usr/bin/env python3
"""A tiny DNS server for the live tests (UDP, 127.0.0.1): answers A queries
from its table, NXDOMAIN for names it does not know, and an empty answer
for other types of known names.  The relay is pointed at it with
TREATY_RELAY_DNS_SERVER, so no /etc/hosts or outside resolver is involved.

Usage: dns.py PORT NAME=ADDR[,ADDR...] ...
"""
import socket
import struct
import sys

PORT = int(sys.argv[1])
TABLE = {}
for arg in sys.argv[2:]:
    name, addrs = arg.split("=", 1)
    TABLE[name.lower().rstrip(".")] = addrs.split(",")


def qname(msg, off):
    labels = []
    while msg[off]:
        n = msg[off]
        labels.append(msg[off + 1:off + 1 + n].decode("ascii"))
        off += 1 + n
    return ".".join(labels).lower(), off + 1


sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", PORT))
while True:
    msg, peer = sock.recvfrom(512)
    if len(msg) < 12:
        continue
    qid, _flags, qd = struct.unpack(">HHH", msg[:6])
    if qd != 1:
        continue
    name, end = qname(msg, 12)
    qtype = struct.unpack(">H", msg[end:end + 2])[0]
    question = msg[12:end + 4]
    answers = b""
    if name not in TABLE:
        rcode, count = 3, 0
    else:
        rcode, count = 0, 0
        if qtype == 1:
            for a in TABLE[name]:
                answers += struct.pack(">HHHIH", 0xC00C, 1, 1, 60, 4)
                answers += socket.inet_aton(a)
                count += 1
    head = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, count, 0, 0)
    sock.sendto(head + question + answers, peer)
