#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""End to end, without QEMU: the myrisim binary (built with ASan/UBSan) with
two fake guests that do what QEMU and dp's driver will do.  Each connects to
its host's socket as QEMU would (ivshmem server protocol), maps the memory it
is given, resets and starts its NIC through BAR2 and doorbell eventfds, and
h0 sends a packet to h1, who takes it from an RX slot after an MSI-X eventfd.
Then the control pipe: stats, a cable pulled and put back (link events), a
guest leaving and coming back.  KTAP on stdout.

usage: test_e2e.py MYRISIM HEADER   (HEADER: module/nic/dp_myri_sram.h)
"""
import mmap
import os
import re
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time

PLAN = 12
n_test = 0
n_fail = 0


def ok(cond, msg):
    global n_test, n_fail
    n_test += 1
    print(("ok %d " if cond else "not ok %d ") % n_test + msg, flush=True)
    if not cond:
        n_fail += 1


def header_defines(path):
    """The #defines of the shared SRAM header: numbers evaluated, strings kept."""
    raw = dict(re.findall(r"#define\s+(MYRI_\w+)\s+([^\n/]+)", open(path).read()))
    out = {}

    def value(name):
        if name not in out:
            v = raw[name].strip()
            if v.startswith('"'):
                out[name] = v.strip('"')
            else:
                v = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)u\b", r"\1", v)
                v = re.sub(r"MYRI_\w+", lambda m: str(value(m.group(0))), v)
                if not re.fullmatch(r"[0-9a-fA-Fx\s()*+<>-]+", v):
                    raise ValueError("%s: %s" % (name, v))
                out[name] = eval(v)  # noqa: S307 (arithmetic on our own header)
        return out[name]

    for name in raw:
        value(name)
    return out


class Guest:
    """One QEMU-and-driver: the socket, the memory, the eventfds."""
    # struct myri_ctl: host fields from MYRI_CTL_HOST_OFF, NIC fields from
    # MYRI_CTL_NIC_OFF, in the header's order
    HOST = ["host_state", "irq_armed", "sendq_prod", "recvq_prod", "eventq_cons"]
    NIC = ["nic_state", "link", "sendq_cons", "recvq_cons", "eventq_prod"]
    CTRS = ["tx_packets", "tx_bad", "tx_link_down", "rx_packets", "rx_crc",
            "rx_route", "rx_short", "rx_stops", "rx_idle", "rx_badslot"]

    def __init__(self, path, m):
        self.m = m
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.msgs = []
        vec = m["MYRI_VECTORS"]
        while len(self.msgs) < 3 + 2 * vec:
            r, _, _ = select.select([self.sock], [], [], 5)
            if not r:
                break
            data, fds, _, _ = socket.recv_fds(self.sock, 8, 1)
            if len(data) != 8:
                break
            self.msgs.append((struct.unpack("<q", data)[0], fds[0] if fds else None))
        self.mem = None
        if len(self.msgs) == 3 + 2 * vec:
            self.mem = mmap.mmap(self.msgs[2][1], m["MYRI_SRAM_SIZE"])
            self.db = [fd for _, fd in self.msgs[3:3 + vec]]
            self.irq = [fd for _, fd in self.msgs[3 + vec:]]
            for fd in self.irq:
                os.set_blocking(fd, False)

    def field(self, name):
        if name in self.HOST:
            return self.m["MYRI_CTL_HOST_OFF"] + 4 * self.HOST.index(name)
        if name in self.NIC:
            return self.m["MYRI_CTL_NIC_OFF"] + 4 * self.NIC.index(name)
        return self.m["MYRI_CTL_NIC_OFF"] + 24 + 8 * self.CTRS.index(name)

    def get(self, name):
        fmt = "<Q" if name in self.CTRS else "<I"
        return struct.unpack_from(fmt, self.mem, self.field(name))[0]

    def put(self, name, v):
        struct.pack_into("<I", self.mem, self.field(name), v)

    def ring(self, vec):
        os.write(self.db[vec], struct.pack("<Q", 1))

    def irq_wait(self, vec, secs=5):
        r, _, _ = select.select([self.irq[vec]], [], [], secs)
        if not r:
            return False
        os.read(self.irq[vec], 8)
        return True

    def wait(self, name, v, secs=5):
        end = time.time() + secs
        while time.time() < end:
            if self.get(name) == v:
                return True
            time.sleep(0.01)
        return False

    def start(self, slots):
        m = self.m
        self.put("host_state", m["MYRI_HOST_RESET"])
        self.ring(m["MYRI_DB_CTL"])
        ready = self.wait("nic_state", m["MYRI_NIC_READY"])
        for f in ("sendq_prod", "recvq_prod", "eventq_cons"):
            self.put(f, 0)
        for i in range(slots):
            struct.pack_into("<I", self.mem, m["MYRI_RECVQ_OFF"] + 4 * i, i)
        self.put("recvq_prod", slots)
        self.put("host_state", m["MYRI_HOST_RUN"])
        self.ring(m["MYRI_DB_CTL"])
        return ready and self.wait("nic_state", m["MYRI_NIC_RUN"])

    def send(self, route, ptype, payload):
        m = self.m
        prod = self.get("sendq_prod")
        i = prod % m["MYRI_SENDQ_LEN"]
        # the source is forged: the NIC must write its own address over it
        pkt = bytes(route) + struct.pack(">I", ptype) + b"\xee" * m["MYRI_SRC_LEN"] + payload
        start = m["MYRI_TXBUF_OFF"] + i * m["MYRI_SLOT_SIZE"]
        self.mem[start:start + len(pkt)] = pkt
        struct.pack_into("<II", self.mem, m["MYRI_SENDQ_OFF"] + 8 * i, len(pkt), 0)
        self.put("sendq_prod", prod + 1)
        self.ring(m["MYRI_DB_SEND"])

    def event(self):
        m = self.m
        cons = self.get("eventq_cons")
        if cons == self.get("eventq_prod"):
            return None
        off = m["MYRI_EVENTQ_OFF"] + 16 * (cons % m["MYRI_EVENTQ_LEN"])
        ev = struct.unpack_from("<IIII", self.mem, off)
        data = None
        if ev[0] == m["MYRI_EV_RECV"]:
            start = m["MYRI_RXBUF_OFF"] + ev[1] * m["MYRI_SLOT_SIZE"]
            data = bytes(self.mem[start:start + ev[2]])
        self.put("eventq_cons", cons + 1)
        self.ring(m["MYRI_DB_RECV"])
        return ev, data

    def close(self):
        if self.mem is not None:
            self.mem.close()
        for _, fd in self.msgs:
            if fd is not None:
                os.close(fd)
        self.sock.close()


def ctl(proc, line):
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    r, _, _ = select.select([proc.stdout], [], [], 5)
    return proc.stdout.readline().strip() if r else ""


def main():
    sim, hdr = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="myrisim-e2e-")
    proc = subprocess.Popen([sim, "-d", tmp, "-t", "one", "-c"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        return run(proc, tmp, hdr)
    finally:
        if proc.poll() is None:   # the test died early: never leave it behind
            proc.kill()
            proc.wait()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


def run(proc, tmp, hdr):
    m = header_defines(hdr)
    print("KTAP version 1\n1..%d" % PLAN, flush=True)
    socks = [os.path.join(tmp, "h%d.sock" % h) for h in (0, 1)]
    end = time.time() + 10
    while time.time() < end and not all(os.path.exists(s) for s in socks):
        time.sleep(0.05)
    g = [Guest(s, m) for s in socks]
    ok(all(x.mem is not None for x in g) and g[0].msgs[0][0] == 0,
       "two fake QEMUs served the ivshmem protocol (%d, %d messages)"
       % (len(g[0].msgs), len(g[1].msgs)))
    if any(x.mem is None for x in g):
        print("Bail out! no memory")
        return 1
    ok(all(bytes(x.mem[:16]) == m["MYRI_SIGNATURE"].encode() for x in g),
       "BAR2 carries the signature")
    ok(g[0].start(0) and g[1].start(64), "reset and start both NICs through BAR2 and DB_CTL")
    ok(g[1].irq_wait(m["MYRI_IRQ_CTL"]), "the NIC's state change raised IRQ_CTL")

    g[1].put("irq_armed", 1)
    payload = bytes((i * 7) & 0xff for i in range(1500))
    g[0].send([0x81], 0x0D500000, payload)
    got = g[1].irq_wait(m["MYRI_IRQ_EVENT"])
    ev = g[1].event()
    ok(got and ev is not None and ev[0][0] == m["MYRI_EV_RECV"] and
       ev[1] == struct.pack(">I", 0x0D500000) + bytes([0, 0x60, 0xdd, 0, 0, 0, 0, 0]) + payload,
       "h0 -> h1 1500 bytes: IRQ_EVENT, a RECV event, the bytes intact, h0's address "
       "stamped as the source")
    ok(g[0].get("tx_packets") == 1 and g[1].get("rx_packets") == 1 and
       g[0].get("sendq_cons") == 1, "the NICs counted it, h0's send slot came back")
    st = ctl(proc, "stats")
    ok(st.startswith("OK ") and "delivered=1" in st, "control pipe: %s" % st)
    ok(ctl(proc, "pull s0 1") == "OK" and g[1].irq_wait(m["MYRI_IRQ_CTL"]) and
       g[1].get("link") == 0, "pull h1's cable: link 0 and IRQ_CTL")
    ev = g[1].event()
    ok(ctl(proc, "plug s0 1") == "OK" and g[1].wait("link", 1) and ev is not None and
       ev[0][0] == m["MYRI_EV_LINK"] and ev[0][3] == 0, "a LINK down event, then plugged back")
    g[1].close()
    time.sleep(0.3)
    g[1] = Guest(socks[1], m)
    ok(g[1].mem is not None and g[1].get("nic_state") == m["MYRI_NIC_READY"] and
       g[1].get("rx_packets") == 0, "h1's guest left and came back: a fresh NIC, READY")
    ok(ctl(proc, "frob").startswith("ERR"), "a bad control line gets ERR")
    for x in g:
        x.close()
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    ok(proc.returncode == 0 and "Sanitizer" not in err and not os.path.exists(socks[0]),
       "SIGTERM: exit 0, no sanitizer report, sockets removed (rc %s)" % proc.returncode)
    for line in err.splitlines():
        print("# " + line)
    print("# %d of %d failed" % (n_fail, n_test))
    return 1 if n_fail or n_test != PLAN else 0


if __name__ == "__main__":
    sys.exit(main())
