#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the seed corpus of fuzz_codec (corpus_codec/): one file per case.

The byte layout is the one fuzz_codec.c reads: ring size byte, counter
start byte, then operations (0 send, 1 release, 2 walk, 3 read, 4 burst,
5 a run of fragments to the large-message receiver).
Run from module/tests after changing that layout; the files are in git.
"""
import os
import struct

SEND, RELEASE, WALK, READ, BURST, FRAG = range(6)
FIRST, MID, LAST = 1, 2, 3
HERE = os.path.dirname(os.path.abspath(__file__))


def send(length, nids=(11, 12), dpids=(100, 200), uid=1000, seq=1, ack=0,
         fl=0, typ=1, pad=0, cut=0, version=None, flags=0, credit=0,
         incs=(0x1234, 0x5678), flip=None):
    """fl bits: 1 raw type, 2 length not reduced, 4 cut, 8 version byte,
    16 flip bit (flip >> 13) of byte (flip & 0x1fff) % frame length."""
    if version is not None:
        fl |= 8
    if flip is not None:
        fl |= 16
    b = struct.pack(">BBBHH10IBB", SEND, fl, typ, length, flags, nids[0],
                    nids[1], dpids[0], dpids[1], uid, seq, ack, credit,
                    incs[0], incs[1], pad, cut)
    b += struct.pack(">H", flip) if flip is not None else b""
    return b + (bytes([version]) if version is not None else b"")


def release(n):
    return bytes([RELEASE, n])


def burst(n, length):
    return struct.pack(">BBH", BURST, n - 1, length)


def frag(frs, abort=False):
    """frs: (kind, wire length, total[, extra bits]); extra: 4 raw, 16
    total taken modulo the pool's largest message + 2."""
    b = bytes([FRAG, (len(frs) - 1) | (0x80 if abort else 0)])
    for f in frs:
        kind, length, total = f[:3]
        extra = f[3] if len(f) > 3 else 0
        b += struct.pack(">BHI", kind | extra, length - 1, total)
    return b


def ring(size_shift, start=0):
    return bytes([size_shift, start])


WALK_B, READ_B = bytes([WALK]), bytes([READ])

SEEDS = {
    # 32 KiB ring from 0: one message in, seen, read out
    "basic": ring(8) + send(100) + WALK_B + READ_B + WALK_B,
    # 1 KiB ring: the third 300-byte message needs a wrap token
    "wrap_1k": ring(3) + send(300) + send(300, seq=2) + release(1) +
    send(300, seq=3) + WALK_B + release(0xff) + WALK_B,
    # counters just below 2^32: wraps of the data area and of a u32
    "high_2p32": ring(4, 0x80 | 3) + burst(20, 200) + WALK_B + release(5) +
    burst(10, 90) + WALK_B + release(0xff) + burst(3, 500) + WALK_B,
    # counters near 2^62, from an offset inside the area
    "high_2p62": ring(5, 0xc0 | 17) + burst(40, 150) + release(0x83) + WALK_B,
    "start_offset": ring(2, 0x40 | 5) + burst(8, 40) + READ_B + READ_B + WALK_B,
    # every decode drop: cut short, foreign version, type, len, zero address
    "drops": ring(8) + send(10, fl=4, cut=20) + send(10, version=1) +
    send(10, fl=1, typ=7) + send(10, fl=4, cut=1) + send(10, nids=(0, 12)) +
    send(10, dpids=(100, 0)) + WALK_B,
    # control frames (ACK, HELLO, RESET) decode and stay out of the ring;
    # one with a length is dropped
    "control": ring(8) + send(0, fl=1, typ=2, flags=1, ack=7, credit=4096) +
    send(0, fl=1, typ=3, seq=0xfffffff0, incs=(9, 0)) + send(0, fl=1, typ=4, flags=0x10) +
    send(4, typ=2, fl=1) + send(20, flags=3, credit=1 << 31) + WALK_B,
    # neighbour discovery: ANNOUNCE to no node from no endpoint with its
    # 8 bytes (or more) decodes and stays out of the ring; with a DPID, a
    # destination NID or fewer bytes it is dropped
    "announce": ring(8) + send(8, fl=1, typ=5, nids=(0, 12), dpids=(0, 0)) +
    send(12, fl=1, typ=5, nids=(0, 12), dpids=(0, 0)) +
    send(7, fl=1, typ=5, nids=(0, 12), dpids=(0, 0)) +
    send(8, fl=1, typ=5, nids=(11, 12), dpids=(0, 0)) +
    send(8, fl=1, typ=5, nids=(0, 12), dpids=(0, 300)) + WALK_B,
    # one flipped bit: in the header, the message, the checksum, the padding
    "corrupt": ring(8) + send(100, flip=(3 << 13) | 9) + send(100, flip=60) +
    send(100, flip=(7 << 13) | 50) + send(10, pad=20, flip=70) +
    send(100, flip=2) + WALK_B,
    # link padding after the message is ignored
    "padded": ring(8) + send(14, pad=32) + send(0, pad=46) + WALK_B + READ_B,
    # fill to full, drops, release all, fill again
    "full": ring(6) + burst(64, 1000) + WALK_B + release(0xff) + burst(64, 1000) +
    release(1) + burst(2, 0) + WALK_B,
    # the largest wire message into the largest ring; too big for a small one
    "big": ring(11) + send(65535, fl=2) + WALK_B + READ_B,
    "too_big": ring(0) + send(33, fl=2) + send(32, fl=2) + WALK_B,
    # a large message in four fragments on a 1500-byte link, then again
    "frag_whole": ring(8) + frag([(FIRST, 1448, 5000), (MID, 1448, 0),
                                  (MID, 1448, 0), (LAST, 660, 0)]) * 2,
    # every bad fragment: none open, too short, too big, raw, first while
    # open, a last too early and too long; then an abort of the open one
    "frag_bad": ring(8) + frag([(MID, 100, 0), (LAST, 100, 0), (FIRST, 4, 9000),
                                (FIRST, 1448, 0xffffffff), (FIRST, 1448, 9000, 4),
                                (FIRST, 1448, 1444), (FIRST, 1448, 3000),
                                (FIRST, 1448, 3000), (LAST, 1000, 0),
                                (MID, 1556, 0), (LAST, 1557, 0)], abort=True) +
    frag([(FIRST, 1448, 3000), (LAST, 1556, 0)]),
}


def main():
    out = os.path.join(HERE, "corpus_codec")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
