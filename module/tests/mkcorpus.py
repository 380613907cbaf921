#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the wire seeds of the fuzz corpus (module/tests/corpus/) for wire
version 3.  Input format in fuzz_wire.c: u16 little-endian frame length
(top bit: the oracle seals the CRC), the frame, a pool-size byte, pool ops.
Run from anywhere: python3 module/tests/mkcorpus.py"""
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def frame(msg=b"", ver=3, typ=1, length=None, flags=0, dnid=11, snid=12,
          ddpid=200, sdpid=300, seq=1, ack=0, credit=0, sinc=0x5eed, dinc=0,
          good_crc=True):
    n = len(msg) if length is None else length
    hdr = struct.pack(">BBHHHIIIIIIIIII", ver, typ, n, flags, 0, dnid, snid,
                      ddpid, sdpid, 1000, seq, ack, credit, sinc, dinc)
    crc = crc32c(msg[:n] + hdr) if good_crc else 0x12345678
    return hdr + struct.pack(">I", crc) + msg


def seed(name, f, tail=b"\x00", seal=False):
    ln = len(f) | (0x8000 if seal else 0)
    with open(os.path.join(HERE, name), "wb") as out:
        out.write(struct.pack("<H", ln) + f + tail)


def main():
    seed("empty", b"", tail=b"")
    seed("short", frame()[:40], tail=b"\x02")
    seed("bad_version", frame(ver=1))
    seed("version_2", frame(ver=2))   # the CRC-first layout: dropped whole
    seed("bad_type", frame(typ=7))
    seed("bad_len", frame(b"abc", length=100), tail=b"\x00")
    seed("ctrl_len", frame(b"abc", typ=2))
    seed("bad_csum", frame(b"xyz", good_crc=False))
    seed("bad_addr", frame(b"a", dnid=0))
    seed("data_len0", frame())
    seed("raw_seq0", frame(b"r", flags=2, seq=0))
    seed("valid_1byte", frame(b"x"), tail=b"\x03\x00\x40\x81")
    seed("valid_1448", frame(bytes(i & 0xFF for i in range(1448))))
    seed("padded", frame(b"y") + bytes(13), tail=b"\x01")
    seed("ack", frame(typ=2, flags=1, seq=0, ack=41, credit=8192, dinc=7))
    seed("hello", frame(typ=3, seq=0xfffffff0))
    seed("reset", frame(typ=4, seq=0, dinc=0x5eed))
    seed("sealed_mutable", frame(b"mutate me", good_crc=False), seal=True)
    # a bundle (DP_WF_BUNDLE 0x400): three whole frames back to back
    seed("bundle", frame(b"one", flags=0x401, seq=7) + frame(b"2", seq=8) +
         frame(b"three!", seq=9) + bytes(5), tail=b"\x02")
    seed("bundle_bad_inner", frame(b"one", flags=0x400, seq=7) +
         frame(b"2", seq=8, good_crc=False) + frame(b"3", seq=9))
    # neighbour discovery: hold 4000 ms, reserved 0
    ann = struct.pack(">II", 4000, 0)
    seed("announce", frame(ann, typ=5, flags=0, dnid=0, ddpid=0, sdpid=0,
                           seq=0, sinc=0))
    seed("announce_long", frame(ann + b"v3", typ=5, dnid=0, ddpid=0, sdpid=0))
    seed("announce_short", frame(ann[:7], typ=5, dnid=0, ddpid=0, sdpid=0))
    seed("announce_to_node", frame(ann, typ=5, dnid=11, ddpid=0, sdpid=0))
    seed("announce_dpid", frame(ann, typ=5, dnid=0, ddpid=0, sdpid=300))
    seed("announce_mutable", frame(ann, typ=5, dnid=0, ddpid=0, sdpid=0,
                                   good_crc=False), seal=True)


if __name__ == "__main__":
    main()
