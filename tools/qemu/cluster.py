#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Boot N dp test guests under QEMU (TCG) and judge their output.

  cluster.py --kernel KVER --guests N
             --mode check|cluster|demo|faults|icount|kselftest|mpi|mpidemo|mpiicount|
                    myri|myricore|ping|run|shell|tulip
             --out DIR [--timeout S] [--initramfs FILE] [--nic MODEL] [--cmd SH]
             [--nics K] [--nic-driver none] [--faults SPEC] [--vmlinuz FILE]
             [--mem MIB] [--fabric TOPO] [--myri-hosts H,H] [--no-nart]

Every guest boots /boot/vmlinuz-KVER (or --vmlinuz, e.g. the debug kernel of
make check-debug) with build/KVER/initramfs.cpio (tools/qemu/mkinitramfs.py)
and gets three serial ports:
  ttyS0  kernel console        -> DIR/MODE-gI.console.log
  ttyS1  barrier line          <-> this process (dp-barrier, dp-link: docs/harness.md)
  ttyS2  test output (KTAP)    -> DIR/MODE-gI.out.log
Guests are joined only through unix sockets: two guests by a direct dgram
pair, more through tools/qemu/dpswitch.c.  --faults SPEC (e.g.
drop=5,dup=2,reorder=5,corrupt=1,seed=42, or none) puts even two guests
behind dpswitch with those fault rates; guests change them at run time with
dp-link, whose commands this process forwards to dpswitch (docs/harness.md).
DIR/MODE-switch.log has the relay's log.  Mode icount boots one guest with
1 ns = 1 instruction (-icount shift=0,sleep=off) and two NICs on a QEMU hub;
--nics K gives one guest K NICs on a hub the same way (two tulips back to
back for dp's tulip backend: --nic tulip --nic-driver none --nics 2), and
--tap adds an e1000 for Linux on the same hub (dptap in the guest).
Mode tulip boots one guest with two tulips on a hub, left unbound, plus the
tap, and runs run_local.sh over them, then run_tulip.sh (dp's own tulip
driver).  Mode kselftest boots one guest from the image tools/kselftest.sh
makes (--initramfs) and runs the kselftest framework's run_kselftest.sh -c dp;
each test's "# "-prefixed output is counted as its nested KTAP.  Modes ping and faults
(2 guests, through the fault relay) are the harness's self-tests; mode run
runs --cmd in every guest (one KTAP result each); mode shell gives one
interactive guest on this terminal.
Modes mpi and mpidemo boot from the MPI image (tools/mpi/mkimage.sh,
build/KVER/initramfs-mpi.cpio, unless --initramfs says otherwise) and run
tools/mpi/guest-mpi.sh: mode mpi (make check, 4 guests) fi_info,
fi_pingpong, NetPIPE and mpi_test over Open MPI on dp's libfabric provider,
and mpi_test over Open MPI's TCP; mode mpidemo (make demo, 2 guests) NetPIPE
over dp and over TCP for the report (DIR/mpidemo.tsv); mode mpiicount (make
demo) the same NetPIPE runs in one guest under -icount, between its two NICs
(each in a netns of its own, as in mode icount: DIR/mpiicount.tsv).
--no-nart (mode cluster) gives the guests no NART file: each turns neighbour
discovery on and waits until it has found every other guest before the
exchange, then runs run_disc.sh (duplicate NIDs, static entries over
discovered ones, ageing out).
Mode myri (implies --nic myri: 2 guests on one switch or 4 across two)
runs the cross-guest exchange, then run_myri.sh (lossless streams over the
simulated fabric with its faults) in every guest.  Mode myricore boots one
guest with two simulated LANai cards (hosts h0 and h1 of the topology 'one',
a single switch) and runs run_local.sh over them (DPT_NIC=myri: dp's myri
backend drives both, node dpA on myri0 and dpB on myri1), as mode tulip does
over two tulips.  --myri-hosts 0,2 puts the second card on host h2 of the
topology 'default' instead, on the other switch: every packet between the
cards then crosses the link between the switches, and the run fails unless
the simulator's final counters show each delivered packet crossed as many
switches as the route has bytes (hops = delivered x route length).
--fabric TOPO starts the Myrinet fabric simulator (tools/myrisim: TOPO is a
topology file, "default" or "one") and gives guest I the simulated LANai of
host I, an ivshmem-doorbell device on socket hI.sock (docs/myrinet.md);
DIR/MODE-myrisim.log has its log and final counters.

Every guest runner's output is a document between DPG-DOC-BEGIN/END lines
(guest init); each mode declares the documents its guests must print (DOCS).
The run fails on a guest that does not finish, a missing document or one
whose runner exited non-zero, a missing or "not ok" KTAP result, a skip that
is not on the allow-list (--skips, tools/qemu/skips.txt), or a kernel log with an oops, BUG, WARNING, lockdep, KASAN or UBSAN
report, a hung task, or a kmemleak report (the guest init scans for leaks at
the end on kernels with kmemleak).  For demo, icount, mpidemo and mpiicount the lines
between DPPERF-BEGIN and DPPERF-END of every guest are saved, in guest
order, to DIR/MODE.tsv.
The last line printed is "cluster: P passed, F failed, S skipped".
"""
import argparse
import base64
import json
import os
import re
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ktap  # noqa: E402

KERNEL_BAD = re.compile(
    r"BUG:|WARNING:|Oops|general protection|KASAN|UBSAN|"
    r"possible circular locking|INFO: task .* blocked|Kernel panic|"
    r"unregister_netdevice: waiting|kernel BUG at|RIP: |"
    # lockdep's reports, but not a lockdep kernel's boot banner
    r"lockdep(?! checking is enabled)|"
    # kmemleak's report (the guest init prints it in the kernel log section)
    r"unreferenced object|suspected memory leak")



# A report's end marker; the judge prints the first report whole (a double
# fault or oops in CI is otherwise known by its first line only).
CRASH_END = re.compile(r"---\[ end (trace|Kernel panic)")
CRASH_LINES = 60


def crash_report(klog, bad):
    """The report around the first of @bad (the judge's bad lines) in a
    kernel log, from there to its end marker."""
    for i, line in enumerate(klog):
        if line.strip() in bad:
            block = []
            for ln in klog[i:i + CRASH_LINES]:
                block.append(ln.rstrip())
                if CRASH_END.search(ln):
                    break
            return block
    return []


# A debug kernel whose checker is built in but never started would pass
# every run: each must say at boot that it runs (make check-debug's kernels,
# tools/debug-kernel/).
CHECKER_BANNERS = {
    "-dpdebug": "KernelAddressSanitizer initialized",
    "-dpkcsan": "kcsan: enabled early",
}


def kcsan_dp(block):
    """Whether a KCSAN report is a race in dp's code: its headline (the
    racing functions, as KCSAN names them) names a function of dp.ko, or
    one of its two accesses was made by dp's code, the first frame of that
    access's stack being in dp.ko.  dp's frames further down only say what
    called into the kernel's racing code (a wake-up from dp's receive path
    into pollwake) or what an interrupt interrupted (dp_ep_read under the
    timer's own race): the kernel's, listed and not counted."""
    if "[dp]" in block[0]:
        return True
    first = False
    for ln in block[1:]:
        body = re.sub(r"^\[[ \d.]+\]", "", ln).strip()
        if re.match(r"(read|write|read-write)\b.* to 0x", body):
            first = True
        elif body and first:
            if "[dp]" in body:
                return True
            first = False
    return False


def kcsan_reports(lines):
    """KCSAN's data-race reports in a kernel log, split by whose they are:
    (dp's, the kernel's own; kcsan_dp() decides).  Each is the report's
    "BUG: KCSAN:" line; a report runs to its closing "=====" line.  Only
    dp's fail a run: the KCSAN kernel's own races are listed, not fixed
    here."""
    ours, theirs = [], []
    for i, ln in enumerate(lines):
        if "BUG: KCSAN:" not in ln:
            continue
        block = [ln]
        for nxt in lines[i + 1:i + 80]:
            if "BUG: KCSAN:" in nxt or re.search(r"={20,}", nxt):
                break
            block.append(nxt)
        (ours if kcsan_dp(block) else theirs).append(ln.strip())
    return ours, theirs


# The --tap NIC: a Linux e1000 on the hub besides the dp NICs.
TAP_MAC = "52:54:00:00:00:fe"
# Modes of one guest under -icount (1 ns = 1 instruction) with two NICs on
# a hub, each NIC its own node in a netns of its own: dpperf (icount) and
# NetPIPE over Open MPI (mpiicount, the MPI image).
ICOUNT_MODES = ("icount", "mpiicount")
MYRI_MODES = ("myri", "myricore")
# Modes that boot from the MPI image (tools/mpi/mkimage.sh).
MPI_MODES = ("mpi", "mpidemo", "mpiicount")


def mac(nid):
    return f"52:54:00:00:00:{nid:02x}"


def default_kernel():
    out = subprocess.run([os.path.join(TOP, "tools", "kvers.sh")],
                         capture_output=True, text=True, check=True).stdout
    return out.split()[0]


def ensure_switch():
    """Build build/qemu/dpswitch (tools/qemu/Makefile) if it is stale."""
    subprocess.run(["make", "-s", "-C", HERE, "../../build/qemu/dpswitch"], check=True)
    return os.path.join(TOP, "build", "qemu", "dpswitch")


def stop_proc(proc):
    """SIGTERM a helper process, SIGKILL it after 10 s; False if it had
    already exited (it died during the run)."""
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return True


class Relay:
    """dpswitch with its control pipe: dp-link commands go in, OK/ERR lines
    come back in order."""

    def __init__(self, exe, sockdir, n, spec, logpath):
        cmd = [exe, "-c"] + (["-f", spec] if spec is not None else [])
        self.proc = subprocess.Popen(
            cmd + [f"{sockdir}/switch.sock"] + [f"{sockdir}/g{g}.net" for g in range(n)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(logpath, "w"))
        self.logpath = logpath
        self.buf = b""
        self.pending = []  # (guest, tag) per command sent, in order
        self.eof = False
        os.set_blocking(self.proc.stdout.fileno(), False)

    def started(self):
        """Wait for the answer to a first stats: the spec was taken."""
        end = time.monotonic() + 10
        self.send("stats", None)
        while time.monotonic() < end and self.proc.poll() is None:
            for _, reply in self.replies():
                return reply.startswith("OK ")
            time.sleep(0.02)
        return False

    def send(self, cmd, who):
        try:
            self.proc.stdin.write(cmd.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            return False
        self.pending.append(who)
        return True

    def replies(self):
        """(who, reply) for every answer that arrived; once the relay is gone,
        an ERR for every command still waiting."""
        try:
            data = self.proc.stdout.read()
        except OSError:
            data = b""
        if data == b"":
            self.eof = True
        self.buf += data or b""
        out = []
        while b"\n" in self.buf and self.pending:
            line, self.buf = self.buf.split(b"\n", 1)
            out.append((self.pending.pop(0), line.decode(errors="replace")))
        if self.eof:
            out += [(who, "ERR the relay is gone") for who in self.pending]
            self.pending = []
        return out

    def stop(self):
        """SIGTERM; returns the last "faults:" line of its log (the final
        counters) and a problem, if it died before or exited badly."""
        problem = None
        if not stop_proc(self.proc):
            problem = f"dpswitch died during the run (exit {self.proc.returncode})"
        if not problem and self.proc.returncode != 0:
            problem = f"dpswitch exited {self.proc.returncode} on SIGTERM"
        last = [ln for ln in read(self.logpath).splitlines() if ln.startswith("dpswitch: faults:")]
        return (last[-1][len("dpswitch: faults: "):] if last else None), problem


MYRISIM = os.path.join(TOP, "build", "myrisim", "myrisim")


def build_myrisim():
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "tools", "myrisim")], check=True)
    return MYRISIM


class Fabric(Relay):
    """tools/myrisim: one ivshmem server socket per host, in SOCKDIR/myri,
    and its control pipe, which takes dp-link commands as the relay's does
    (set, block, pull, plug, stats, reset: docs/myrinet.md)."""

    def __init__(self, sockdir, topo, n, logpath):  # pylint: disable=super-init-not-called
        build_myrisim()
        self.dir = os.path.join(sockdir, "myri")
        os.mkdir(self.dir)
        self.logpath = logpath
        self.n = n
        self.proc = subprocess.Popen(
            [MYRISIM, "-d", self.dir, "-t", topo, "-c", "-v"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=open(logpath, "w"))
        self.buf = b""
        self.pending = []
        self.eof = False
        os.set_blocking(self.proc.stdout.fileno(), False)

    def socket(self, g):
        return os.path.join(self.dir, f"h{g}.sock")

    def started(self):  # pylint: disable=arguments-differ
        """Every guest's socket is there (the topology has enough hosts)."""
        end = time.monotonic() + 10
        while time.monotonic() < end and self.proc.poll() is None:
            if all(os.path.exists(self.socket(g)) for g in range(self.n)):
                return True
            time.sleep(0.02)
        return False

    def stop(self):
        """SIGTERM; a problem if it died before or exited badly."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        if not stop_proc(self.proc):
            return f"myrisim died during the run (exit {self.proc.returncode})"
        return None if self.proc.returncode == 0 else \
            f"myrisim exited {self.proc.returncode} on SIGTERM"


PERF_MODE = re.compile(r"^#? ?mode=([\w-]+)")
# The modes whose figures are real time (with ICOUNT_MODES, those that write a
# TSV): how much of the host other processes took during the run is written
# beside them (host_cpu()).
REALTIME_PERF_MODES = ("demo", "mpidemo")
QUIET_CORES = 0.1  # others' share of a core under which a run counts as quiet


def host_cpu():
    """CPU seconds the host has been busy (/proc/stat), and those of this
    process and its waited-for children (the guests' QEMUs, the relay, the
    fabric): their difference over a run is what other processes took."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")
    ours = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        ours += r.ru_utime + r.ru_stime
    return busy, ours


def others_note(before, after, elapsed):
    """What other processes took of the host over a run, as a line for the
    report's "Runs and problems" (or None if nothing was measured)."""
    if elapsed <= 0:
        return None
    others = max(0.0, (after[0] - before[0]) - (after[1] - before[1]))
    cores = others / elapsed
    verdict = "quiet" if cores < QUIET_CORES else \
        "NOT quiet: the real-time figures ran beside other work"
    return f"host: other processes took {others:.1f} CPU-s over the run's " \
        f"{elapsed:.0f} s ({cores:.2f} of a core): {verdict}"


LINK_TAG = re.compile(r"^[A-Za-z0-9]{1,16}$")
FREEZE = re.compile(r"^freeze (\d+)( heal)?$")
FREEZE_DELAY = 0.5  # s between the answer and the stop: the guest reads it
# The modes whose guests all meet at the "boot" barrier once in user space
# (guest/init, when there are two or more).
BOOT_BARRIER_MODES = ("check", "cluster", "demo", "faults", "mpi", "mpidemo", "myri",
                      "ping", "run", "kselftest")
BOOT_GRACE = 300  # s a guest may still not be in user space after the others ended


def stuck_at_boot(mode, alive, seen, n):
    """The guests of @alive (those still running, of @n) to give up on: every
    other guest has ended and none of these ever reached user space (never
    came to a barrier, @seen), so nothing is left for them to meet or do.
    A debug kernel's guest once hung at boot for the run's whole hour.
    [] if any of them got to user space, or none of the others ended."""
    if mode not in BOOT_BARRIER_MODES or n < 2 or not alive or len(alive) == n:
        return []
    if any(g in seen for g in alive):
        return []
    return list(alive)


class Barriers:
    """Host side of dp-barrier and dp-link: one listening unix socket per guest."""

    def __init__(self, sockdir, n, logf, relay=None):
        self.n = n
        self.logf = logf
        self.relay = relay
        self.sel = selectors.DefaultSelector()
        self.conns = {}  # guest -> socket
        self.bufs = {}
        self.waiting = {}  # barrier name -> set of guests
        self.paths = []
        self.pids = {}     # guest -> its QEMU's pid (set once they start)
        self.seen = set()  # guests that said anything (dp-barrier): in user space
        self.freezes = []  # [when, what, guest, heal]: SIGSTOP/SIGCONT due
        for g in range(n):
            path = os.path.join(sockdir, f"b{g}.sock")
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            s.listen(1)
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ, ("listen", g))
            self.paths.append(path)
        if relay:
            self.sel.register(relay.proc.stdout, selectors.EVENT_READ, ("relay", None))

    def log(self, msg):
        self.logf.write(f"{time.strftime('%H:%M:%S')} {msg}\n")
        self.logf.flush()

    def send(self, g, line):
        conn = self.conns.get(g)
        if conn:
            try:
                conn.sendall(line.encode() + b"\n")
            except OSError:
                pass

    def freeze(self, g, tag, m):
        """dp-link freeze S [heal]: stop guest g's QEMU for S seconds."""
        secs = int(m.group(1))
        if not 1 <= secs <= 60 or g not in self.pids:
            self.send(g, f"L {tag} ERR freeze needs 1..60 s and a running guest")
            return
        now = time.monotonic()
        self.freezes.append([now + FREEZE_DELAY, "stop", g, False])
        self.freezes.append([now + FREEZE_DELAY + secs, "cont", g, bool(m.group(2))])
        self.log(f"guest {g} link: freeze {secs} s{' then heal' if m.group(2) else ''}")
        self.send(g, f"L {tag} OK frozen={secs}")

    def run_freezes(self):
        """Carry out the stops and resumes that are due."""
        now = time.monotonic()
        for ev in sorted(e for e in self.freezes if e[0] <= now):
            self.freezes.remove(ev)
            _, what, g, heal = ev
            if what == "cont" and heal and self.relay and not self.relay.eof:
                self.relay.send("heal", None)
                time.sleep(0.2)  # the relay reads it before the guest sends again
            try:
                os.kill(self.pids[g], signal.SIGSTOP if what == "stop" else signal.SIGCONT)
            except OSError:
                pass
            self.log(f"guest {g} {'stopped' if what == 'stop' else 'resumed'}")

    def thaw_all(self):
        """Resume every guest still stopped (the run ends)."""
        for _, what, g, _ in self.freezes:
            if what == "cont" and g in self.pids:
                try:
                    os.kill(self.pids[g], signal.SIGCONT)
                except OSError:
                    pass
        self.freezes = []

    def link(self, g, rest):
        """'L TAG COMMAND' from guest g: forward COMMAND to the relay."""
        tag, _, cmd = rest.partition(" ")
        if not LINK_TAG.match(tag):
            self.log(f"guest {g}: bad dp-link tag {tag!r}")
            return
        self.log(f"guest {g} link: {cmd}")
        m = FREEZE.match(cmd)
        if m:
            self.freeze(g, tag, m)
            return
        if not self.relay:
            err = "ERR no fault relay in this run (cluster.py --faults SPEC)"
        elif len(cmd) > 400 or not cmd.isprintable():
            err = "ERR command too long or not printable"
        elif self.relay.eof or not self.relay.send(cmd, (g, tag)):
            err = "ERR the relay is gone"
        else:
            return
        self.log(f"guest {g} link: {err}")
        self.send(g, f"L {tag} {err}")

    def relay_replies(self):
        for who, reply in self.relay.replies():
            if who is None:
                continue
            g, tag = who
            self.log(f"guest {g} link: {reply}")
            self.send(g, f"L {tag} {reply}")

    def poll(self, timeout):
        self.run_freezes()
        for key, _ in self.sel.select(timeout):
            kind, g = key.data
            if kind == "relay":
                self.relay_replies()
                if self.relay.eof:
                    self.sel.unregister(key.fileobj)
                continue
            if kind == "listen":
                conn, _ = key.fileobj.accept()
                conn.setblocking(False)
                self.conns[g] = conn
                self.bufs[g] = b""
                self.sel.register(conn, selectors.EVENT_READ, ("conn", g))
                continue
            try:
                data = key.fileobj.recv(4096)
            except OSError:
                data = b""
            if not data:
                self.sel.unregister(key.fileobj)
                key.fileobj.close()
                self.conns.pop(g, None)
                continue
            self.bufs[g] += data
            while b"\n" in self.bufs[g]:
                line, self.bufs[g] = self.bufs[g].split(b"\n", 1)
                self.handle(g, line.decode(errors="replace").strip("\r\0 "))

    def handle(self, g, line):
        if line.startswith(("B ", "L ")):  # QEMU connects at its start, these come from user space
            self.seen.add(g)
        if line.startswith("L "):
            self.link(g, line[2:])
            return
        if not line.startswith("B "):
            if line:
                self.log(f"guest {g}: unexpected {line!r}")
            return
        name = line[2:]
        arrived = self.waiting.setdefault(name, set())
        arrived.add(g)
        self.log(f"guest {g} at {name} ({len(arrived)}/{self.n})")
        if len(arrived) == self.n:
            del self.waiting[name]
            self.log(f"release {name}")
            for conn in self.conns.values():
                try:
                    conn.sendall(f"GO {name}\n".encode())
                except OSError:
                    pass


def tcg_accel(a):
    """The -accel value: TCG, with one host thread for all of a guest's vCPUs
    when the guests' vCPUs outnumber the host's CPUs (--tcg-thread auto).

    QEMU's multi-threaded TCG (7.2, Debian 12) now and then ran stale or
    garbled code in a guest with 2 vCPUs while the host was oversubscribed:
    an int3 oops in sched_clock_tick 14 ms after the kernel patched that
    static branch at boot, and a double fault with a garbage EFLAGS in
    __kmalloc_node_track_caller, neither near dp.  Threads beyond the
    host's CPUs buy no speed, so those runs use one thread per guest, where
    QEMU switches vCPUs itself and code changes are seen at once.  -icount
    needs one thread anyway.  The Myrinet modes' simulator (myrisim) takes
    a CPU of its own: a guest of 2 vCPUs beside it on 2 cores had the int3
    oops in make check's myri core suite."""
    mode = a.tcg_thread
    if mode == "auto":
        sim = 1 if a.mode in MYRI_MODES else 0
        busy = a.smp > 1 and a.guests * a.smp + sim > (os.cpu_count() or 1)
        mode = "single" if busy or a.mode in ICOUNT_MODES else "multi"
    return f"tcg,thread={mode}"


def topo_routes(topo):
    """myrisim -r: {(src host, dst host): [route bytes as hex]} (None: no
    route); hosts numbered in the topology's order."""
    out = subprocess.run([build_myrisim(), "-r", "-t", topo], check=True,
                         capture_output=True, text=True).stdout
    names = []
    rows = [ln.split() for ln in out.splitlines() if ln.strip()]
    for r in rows:
        if r[0] not in names:
            names.append(r[0])
    return {(names.index(r[0]), names.index(r[1])): None if r[2] == "none" else r[2:]
            for r in rows}


def card_hosts(a, g):
    """The fabric hosts of guest g's cards: --myri-hosts, else g*K..g*K+K-1
    (K cards: --nics with --nic myri, else 1)."""
    cards = a.nics if a.nic == "myri" else 1
    hosts = getattr(a, "myri_hosts", None)
    return hosts if hosts else [g * cards + k for k in range(cards)]


def myri_routes(topo, g, n, nics=1, hosts=None):
    """dpg.myri for guest g: "NID=ROUTE" (ROUTE "87:80") for every other
    guest, from myrisim -r; host I of the topology is guest I, NID I+1.
    A guest with several cards (nics > 1, one guest) has hosts @hosts
    (default 0..nics-1), card K is NID K+1, and NID J+1's route is the one
    from card 0 to card J (to card 0: from card 1), as each card's node sees
    the other."""
    table = topo_routes(topo)
    routes = []
    if nics > 1:
        hosts = hosts or list(range(nics))
        for (src, dst), r in table.items():  # myrisim's order
            k = hosts.index(dst) if dst in hosts else nics
            if k < nics and src == hosts[1 if k == 0 else 0] and r:
                routes.append(f"{k + 1}={':'.join(r)}")
        return ",".join(routes)
    for dst in range(n):
        r = table.get((g, dst)) if dst != g else None
        if r:
            routes.append(f"{dst + 1}={':'.join(r)}")
    return ",".join(routes)


def qemu_cmd(a, g, kernel, initramfs, sockdir, out_prefix, timeout):
    cmd = qemu_nic_cmd(a, g, kernel, initramfs, sockdir, out_prefix, timeout)
    for k, h in enumerate(card_hosts(a, g) if a.fabric else []):
        cmd += ["-chardev", f"socket,id=myri{k},path={sockdir}/myri/h{h}.sock",
                "-device", f"ivshmem-doorbell,chardev=myri{k},vectors=3,addr={0x8 + k:#x}"]
    return cmd


def qemu_nic_cmd(a, g, kernel, initramfs, sockdir, out_prefix, timeout):
    nics = 2 if a.mode in ICOUNT_MODES else a.nics
    mods = [m for m in (a.nic_driver, "e1000" if a.tap else "none") if m != "none"]
    append = " ".join([
        "console=ttyS0,115200", "panic=-1", "loglevel=7", "printk.time=1",
        # no_timer_check: on a loaded host a TCG guest can miss the IO-APIC
        # timer check's few ticks and panic at boot ("IO-APIC + timer
        # doesn't work!"); KVM guests skip the check the same way
        "mitigations=off", "no_timer_check", "nokaslr" if a.mode in ICOUNT_MODES else "",
        "tsc=reliable" if a.mode in ICOUNT_MODES else "",
        f"dpg.id={g}", f"dpg.n={a.guests}", f"dpg.mode={a.mode}",
        f"dpg.kver={a.kernel}", f"dpg.nics={nics}", f"dpg.timeout={timeout}",
        "" if a.mode == "shell" else "dpg.out=ttyS2",
        "dpg.cmd=" + base64.b64encode(a.cmd.encode()).decode() if a.cmd else "",
        "dpg.modprobe=" + ",".join(mods) if mods else "",
        "dpg.backend=tulip" if nic_model(a.nic) == "tulip" and a.nic_driver == "none" else "",
        "dpg.backend=myri" if a.nic == "myri" else "",
        f"dpg.myri={myri_routes(a.fabric, g, a.guests, nics, card_hosts(a, g))}"
        if a.nic == "myri" else "",
        "dpg.myrihosts=" + ",".join(map(str, card_hosts(a, g)))
        if a.nic == "myri" and getattr(a, "myri_hosts", None) else "",
        f"dpg.tap={TAP_MAC}" if a.tap else "",
        "dpg.nart=0" if a.no_nart else "",
        f"dpg.only={os.environ['DPT_ONLY']}" if os.environ.get("DPT_ONLY") else "",
        a.append or ""]).split()
    cmd = ["qemu-system-x86_64", "-machine", "pc", "-accel", tcg_accel(a),
           "-cpu", a.cpu, "-m", str(a.mem), "-smp", str(a.smp),
           "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
           "-kernel", kernel, "-initrd", initramfs, "-append", " ".join(append),
           "-serial", f"file:{out_prefix}.console.log",
           "-chardev", f"socket,id=bar,path={sockdir}/b{g}.sock",
           "-serial", "chardev:bar",
           "-serial", f"file:{out_prefix}.out.log"]
    if a.mode == "shell":
        cmd[cmd.index(f"file:{out_prefix}.console.log")] = "mon:stdio"
    if a.nic == "myri":
        return cmd  # the simulated LANai is the only NIC: qemu_cmd adds it
    if a.mode in ICOUNT_MODES or nics > 1 or a.tap:
        if a.mode in ICOUNT_MODES:
            cmd += ["-icount", "shift=0,sleep=off"]
            if a.plugin:
                cmd += ["-plugin", a.plugin]
        for k in range(nics):
            cmd += ["-netdev", f"hubport,id=n{k},hubid=0",
                    "-device", f"{a.nic},netdev=n{k},mac={mac(k + 1)},addr={3 + k:#x}"]
        if a.tap:
            cmd += ["-netdev", "hubport,id=ntap,hubid=0",
                    "-device", f"e1000,netdev=ntap,mac={TAP_MAC},addr=0x10"]
        return cmd
    if a.guests == 1:
        net = "hubport,id=n0,hubid=0"
    elif a.guests == 2 and a.faults is None:
        net = (f"dgram,id=n0,local.type=unix,local.path={sockdir}/g{g}.net,"
               f"remote.type=unix,remote.path={sockdir}/g{1 - g}.net")
    else:
        net = (f"dgram,id=n0,local.type=unix,local.path={sockdir}/g{g}.net,"
               f"remote.type=unix,remote.path={sockdir}/switch.sock")
    cmd += ["-netdev", net,
            "-device", f"{a.nic},netdev=n0,mac={mac(g + 1)},addr=0x3"]
    return cmd


def section(text, begin, end):
    """Lines strictly between begin and end markers (all such blocks)."""
    out, inside = [], False
    for line in text.splitlines():
        s = line.strip()
        if s == begin:
            inside = True
        elif s == end:
            inside = False
        elif inside:
            out.append(line)
    return out


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().replace("\r", "")
    except FileNotFoundError:
        return ""


# The KTAP documents (guest init: doc NAME) every guest of a mode must print,
# each ending with its runner's exit status 0.  Mode check: the cross-guest
# exchange in every guest, the single-guest suite in guest 0 only.
DOCS = {"cluster": ["run_cluster"], "tulip": ["run_local", "run_tulip"],
        "faults": ["faults"], "ping": ["ping"], "run": ["run"],
        "kselftest": ["kselftest"], "demo": ["demo"], "icount": ["icount"],
        "myri": ["run_cluster", "run_myri"], "myricore": ["run_local"],
        "mpi": ["mpi"], "mpidemo": ["mpidemo"], "mpiicount": ["mpiicount"]}
# Modes whose documents must hold KTAP results (demo and icount print figures).
KTAP_MODES = ("check", "cluster", "faults", "kselftest", "mpi", "mpidemo", "mpiicount", "myri",
              "myricore",
              "ping", "run", "tulip")
ALLOW = os.path.join(HERE, "skips.txt")
DOC_BEGIN = re.compile(r"^DPG-DOC-BEGIN (\S+)\s*$")
DOC_END = re.compile(r"^DPG-DOC-END (\S+) rc=(\d+)\s*$")


def expected_docs(mode, g, disc=False):
    if mode == "check":
        return ["run_cluster"] + (["run_local"] if g == 0 else [])
    if mode == "cluster" and disc:  # --no-nart: discovery's own checks too
        return ["run_cluster", "run_disc"]
    return DOCS.get(mode, [])


def documents(lines):
    """Split a guest's output into its runners' documents: a list of
    (name, rc or None if it never ended, lines), and the lines outside."""
    docs, outside, cur = [], [], None
    for line in lines:
        s = line.strip()
        m = DOC_BEGIN.match(s)
        if m:
            if cur:
                docs.append(cur)
            cur = (m.group(1), None, [])
            continue
        m = DOC_END.match(s)
        if m and cur and m.group(1) == cur[0]:
            docs.append((cur[0], int(m.group(2)), cur[2]))
            cur = None
            continue
        (cur[2] if cur else outside).append(line)
    if cur:
        docs.append(cur)
    return docs, outside


KSFT_HEAD = re.compile(r"^# selftests: (\S+): (\S+)\s*$")
KSFT_RESULT = re.compile(r"^(not ok|ok) \d+ selftests: (\S+): (\S+)")


def unwrap_kselftest(lines):
    """The kselftest runner prints each test's output with "# " before every
    line, between "# selftests: COLLECTION: TEST" and its own result line:
    give those lines back as that result's indented subtests, so that the
    test's own KTAP is counted and checked, not only the runner's verdict."""
    out, inside = [], False
    for line in lines:
        if KSFT_HEAD.match(line):
            inside = True
            out.append(line)
        elif inside and KSFT_RESULT.match(line):
            inside = False
            out.append(line)
        elif inside and line.startswith("#"):
            out.append("  " + line[2:] if line.startswith("# ") else "  " + line[1:])
        else:
            out.append(line)
    return out


def judge_docs(mode, g, lines, allow, context, disc=False):
    """Count the documents' KTAP; every expected document must be there, end
    with status 0 and (KTAP modes) hold a KTAP document; no other may appear;
    every skip must be on the allow-list for context."""
    docs, outside = documents(lines)
    rep = ktap.Report()
    for name, _rc, text in docs:
        if name == "kselftest":
            text = unwrap_kselftest(text)
        r = ktap.parse("\n".join(text), f"g{g} {name}")
        if name == "kselftest":
            # "selftests: dp: run_local.sh/x" is the same check as run_local/x
            r.leaves = [(re.sub(r"^selftests: \S+: (\S+?)(\.sh)?(/|$)", r"\1\3", n), k, w)
                        for n, k, w in r.leaves]
        else:
            r.prefix(name)
        rep.add(r)
        if mode in KTAP_MODES and r.docs == 0:
            rep.fail(f"g{g}: {name}: no KTAP document")
    rest = ktap.parse("\n".join(outside), f"g{g}")
    rep.add(rest)
    want = expected_docs(mode, g, disc)
    seen = [name for name, _, _ in docs]
    for name in want:
        if name not in seen:
            rep.fail(f"g{g}: document {name} missing (its runner never started)")
    for name, rc, _ in docs:
        if name not in want:
            rep.fail(f"g{g}: unexpected document {name} in mode {mode}")
        elif rc is None:
            rep.fail(f"g{g}: {name} did not finish (no DPG-DOC-END)")
        elif rc != 0:
            rep.fail(f"g{g}: {name} exited {rc}")
    for name in sorted({x for x in seen if seen.count(x) > 1}):
        rep.fail(f"g{g}: document {name} printed {seen.count(name)} times")
    if allow is not None:
        rep.judge_skips(allow, context, f"g{g}")
    return rep


def judge(a, g, prefix, timed_out, qemu_rc, allow=None):
    """Per-guest report: KTAP counts plus the harness's own test."""
    out = read(prefix + ".out.log")
    console = read(prefix + ".console.log")
    dmesg = section(out, "DPG-DMESG-BEGIN", "DPG-DMESG-END")
    body, inside = [], False
    for line in out.splitlines():
        s = line.strip()
        if s == "DPG-DMESG-BEGIN":
            inside = True
        elif s == "DPG-DMESG-END":
            inside = False
        elif not inside:
            body.append(line)
    rep = judge_docs(a.mode, g, body, allow, f"{a.mode} {a.kernel}",
                     getattr(a, "no_nart", False))
    problems = []
    if timed_out:
        problems.append("host timeout")
    m = re.search(r"^DPG-DONE rc=(\d+)", out, re.M)
    if not m:
        qlog = read(prefix + ".qemu.log").strip().splitlines()
        problems.append("guest did not finish (no DPG-DONE)" +
                        (f"; qemu exit {qemu_rc}: {qlog[-1][:160]}"
                         if qemu_rc and qlog and not timed_out else ""))
    elif m.group(1) != "0":
        problems.append(f"guest runners exited {m.group(1)} (DPG-DONE)")
    if re.search(r"^# dpg: TIMEOUT", out, re.M):
        problems.append("guest timeout")
    emu = re.findall(r"^# dpg: EMULATOR: (.*)$", out, re.M)
    if emu:
        problems.append("emulated CPU: " + emu[-1][:200])
    if not dmesg and m:
        problems.append("no kernel log dump")
    klog = console.splitlines() + dmesg
    for suffix, banner in CHECKER_BANNERS.items():
        if a.kernel.endswith(suffix) and m and not any(banner in ln for ln in klog):
            problems.append(f"{a.kernel}: its checker did not start (no \"{banner}\" at boot)")
    _, kernels_own = kcsan_reports(klog)
    bad = sorted({ln.strip() for ln in klog
                  if KERNEL_BAD.search(ln) and ln.strip() not in kernels_own})
    crash = []
    if kernels_own:
        print(f"cluster: g{g}: {len(set(kernels_own))} KCSAN report(s) outside dp, "
              f"not counted, first: {kernels_own[0][:160]}")
    if bad:
        problems.append(f"kernel log: {len(bad)} bad line(s), first: {bad[0][:160]}")
        crash = [f"# kernel: {ln[:200]}" for ln in crash_report(klog, set(bad))]
    if a.mode in KTAP_MODES and rep.docs == 0:
        problems.append("no KTAP output")
    perf = section(out, "DPPERF-BEGIN", "DPPERF-END")
    if problems:
        rep.fail(f"g{g}: harness: " + "; ".join(problems), crash)
    else:
        rep.passed += 1  # the guest booted, finished and kept a clean kernel log
    return rep, perf, bad


def run(a):
    kernel = a.vmlinuz or f"/boot/vmlinuz-{a.kernel}"
    image = "initramfs-mpi.cpio" if a.mode in MPI_MODES else "initramfs.cpio"
    initramfs = a.initramfs or os.path.join(TOP, "build", a.kernel, image)
    for f in (kernel, initramfs):
        if not os.path.exists(f):
            sys.exit(f"cluster: {f} missing (make initramfs; MPI: tools/mpi/mkimage.sh KVER)")
    if a.mode in ICOUNT_MODES and a.guests != 1:
        sys.exit(f"cluster: {a.mode} mode runs one guest")
    if a.nics > 1 and a.guests != 1:
        sys.exit("cluster: --nics > 1 needs --guests 1 (the NICs share a QEMU hub)")
    if a.faults is not None and a.guests < 2:
        sys.exit("cluster: --faults needs --guests 2 or more (the relay is between guests)")
    if a.mode == "faults" and a.guests != 2:
        sys.exit("cluster: mode faults runs 2 guests")
    os.makedirs(a.out, exist_ok=True)
    for old in os.listdir(a.out):
        if old.startswith(f"{a.mode}-g") or old in (f"{a.mode}.tsv", f"{a.mode}-barrier.log",
                                                    f"{a.mode}-names.txt"):
            os.unlink(os.path.join(a.out, old))

    # Unix socket paths must stay short (108 bytes): keep them in /tmp.
    sockdir = tempfile.mkdtemp(prefix="dpq-")
    procs, relay, link, relay_problem = [], None, None, None
    fabric, fabric_problem = None, None
    logf = open(os.path.join(a.out, f"{a.mode}-barrier.log"), "w")
    guest_timeout = max(60, a.timeout - 30)  # the guest's watchdog fires first
    start = time.monotonic()
    cpu_before = host_cpu()
    timed_out = False
    try:
        if a.nic != "myri" and (a.guests > 2 or a.faults is not None):
            relay = Relay(ensure_switch(), sockdir, a.guests, a.faults,
                          os.path.join(a.out, f"{a.mode}-switch.log"))
            if not relay.started():
                sys.exit(f"cluster: dpswitch did not start: "
                         f"{read(relay.logpath).strip()[-300:]}")
        if a.fabric:
            hosts = 1 + max(h for g in range(a.guests) for h in card_hosts(a, g))
            fabric = Fabric(sockdir, a.fabric, hosts,
                            os.path.join(a.out, f"{a.mode}-myrisim.log"))
            if not fabric.started():
                sys.exit(f"cluster: myrisim did not start {hosts} hosts: "
                         f"{read(fabric.logpath).strip()[-300:]}")
        bar = Barriers(sockdir, a.guests, logf, fabric if a.nic == "myri" else relay)
        for g in range(a.guests):
            prefix = os.path.join(a.out, f"{a.mode}-g{g}")
            cmd = qemu_cmd(a, g, kernel, initramfs, sockdir, prefix, guest_timeout)
            with open(prefix + ".cmd", "w") as f:
                f.write(" ".join(cmd) + "\n")
            if a.mode == "shell":
                procs.append(subprocess.Popen(cmd))
            else:
                procs.append(subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL,
                    stdout=open(prefix + ".qemu.log", "w"), stderr=subprocess.STDOUT))
            bar.pids[g] = procs[-1].pid
        stuck_since = None
        while any(p.poll() is None for p in procs):
            if a.mode != "shell" and time.monotonic() - start > a.timeout:
                timed_out = True
                break
            bar.poll(0.2)
            stuck = stuck_at_boot(a.mode, [g for g, p in enumerate(procs) if p.poll() is None],
                                  bar.seen, len(procs))
            if not stuck:
                stuck_since = None
            elif stuck_since is None:
                stuck_since = time.monotonic()
            elif time.monotonic() - stuck_since > BOOT_GRACE:
                what = f"guest(s) {stuck} never reached user space, {BOOT_GRACE} s after " \
                    "the others ended: stopped"
                bar.log(what)
                print(f"cluster: {what}")
                break
    finally:
        if "bar" in locals():
            bar.thaw_all()
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if relay:
            link, relay_problem = relay.stop()
        if fabric:
            fabric_problem = fabric.stop()
        logf.close()
        shutil.rmtree(sockdir, ignore_errors=True)
    elapsed = time.monotonic() - start
    if a.mode == "shell":
        return 0
    host = others_note(cpu_before, host_cpu(), elapsed) \
        if a.mode in REALTIME_PERF_MODES else None

    total = ktap.Report()
    perf_all, summary = [], []
    allow = ktap.load_allow(a.skips) if a.skips != "none" else None
    for g, p in enumerate(procs):
        prefix = os.path.join(a.out, f"{a.mode}-g{g}")
        rep, perf, bad = judge(a, g, prefix, timed_out, p.returncode, allow)
        total.add(rep)
        perf_all += perf
        boot = re.search(r"starting \w+ after ([\d.]+)s", read(prefix + ".out.log"))
        summary.append({"guest": g, "passed": rep.passed, "failed": rep.failed,
                        "skipped": rep.skipped, "qemu_rc": p.returncode,
                        "boot_s": float(boot.group(1)) if boot else None,
                        "failures": rep.failures, "kernel_bad": bad,
                        "skips": rep.skips})
        print(f"cluster: {a.kernel} g{g}: {rep.line()}"
              f" (up {boot.group(1) if boot else '?'}s guest time)")
        for name, why in rep.skips:
            listed = allow is not None and ktap.allow_reason(
                allow, f"{a.mode} {a.kernel}", name) is not None
            print(f"cluster:   SKIP {name} # {why}{'' if listed else ' (NOT on the allow-list)'}")
        for what, notes in rep.failures_with_notes():
            print(f"cluster:   FAIL {what}")
            for note in notes:  # what the test said before it failed
                print(f"cluster:     {note}")
    if a.mode in REALTIME_PERF_MODES + ICOUNT_MODES:
        tsv = os.path.join(a.out, f"{a.mode}.tsv")
        modes = sorted({m.group(1) for m in map(PERF_MODE.match, perf_all) if m})
        with open(tsv, "w") as f:
            f.write("".join(line + "\n" for line in perf_all))
            if host:
                f.write("".join(f"# mode={m} {host}\n" for m in modes))
        if perf_all:
            print(f"cluster: {len(perf_all)} DPPERF lines -> {tsv}")
        else:
            total.fail("no DPPERF-BEGIN/END block from any guest")
            print("cluster:   FAIL no DPPERF-BEGIN/END block from any guest")
    ktap.write_names(os.path.join(a.out, f"{a.mode}-names.txt"), total)
    with open(os.path.join(a.out, f"{a.mode}-summary.json"), "w") as f:
        json.dump({"kernel": a.kernel, "mode": a.mode, "guests": summary, "link": link,
                   "elapsed_s": round(elapsed, 1), "host_timeout": timed_out,
                   "host": host}, f, indent=1)
    if host:
        print(f"cluster: {host}")
    if link and a.faults is not None:
        print(f"cluster: link: {link}")
    if fabric and a.mode == "myricore":
        fabric_hops(a, total, read(fabric.logpath))
    for problem in (relay_problem, fabric_problem):
        if problem:
            total.fail(problem)
            print(f"cluster:   FAIL {problem}")
    print(f"cluster: {a.kernel} {a.mode} x{a.guests} took {elapsed:.0f}s; logs in {a.out}")
    print(f"cluster: {total.line()}")
    return 1 if total.failed else 0


def fabric_hops(a, total, log):
    """Mode myricore: every packet the fabric delivered crossed as many
    switches as the route between the two cards has bytes (the routes both
    ways are as long), from myrisim's final counters; one result."""
    hosts = card_hosts(a, 0)
    table = topo_routes(a.fabric)
    lens = {len(table.get((hosts[0], hosts[1])) or []),
            len(table.get((hosts[1], hosts[0])) or [])}
    m = re.findall(r"^myrisim: sent=\d+ delivered=(\d+) hops=(\d+)", log, re.M)
    name = "fabric/hops"
    if len(lens) != 1 or 0 in lens or not m:
        ok, why = False, f"routes of {sorted(lens)} bytes, counters {'found' if m else 'missing'}"
    else:
        hop = lens.pop()
        delivered, hops = int(m[-1][0]), int(m[-1][1])
        ok = delivered > 0 and hops == delivered * hop
        why = (f"{delivered} packets delivered crossed {hops} switches "
               f"(routes of {hop} bytes: {delivered * hop} expected)")
    total.leaves.append((name, "pass" if ok else "fail", ""))
    if ok:
        total.passed += 1
    else:
        total.fail(f"{name}: {why}")
    print(f"cluster: {'ok  ' if ok else 'FAIL'} {name}: {why}")


def nic_model(nic):
    """The device model of -device spec @nic, its options left off
    ("e1000,mitigation=off": e1000)."""
    return nic.split(",")[0]


def nic_driver_of(nic):
    """The guest's Linux driver for -device @nic, or "none" where the guest
    needs none loaded by name."""
    return {"tulip": "tulip", "e1000": "e1000"}.get(nic_model(nic), "none")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", help="kernel version (default: tools/kvers.sh's first)")
    ap.add_argument("--guests", type=int, default=2)
    ap.add_argument("--mode", default="check",
                    choices=["check", "cluster", "demo", "faults", "icount", "kselftest",
                             "mpi", "mpidemo", "mpiicount", "myri", "myricore", "ping", "run",
                             "shell", "tulip"])
    ap.add_argument("--out", help="log directory (default build/results/KVER)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds for the whole run")
    ap.add_argument("--initramfs")
    ap.add_argument("--vmlinuz", help="kernel image to boot (default /boot/vmlinuz-KVER); "
                    "--kernel then names its version (modules, build/KVER/)")
    ap.add_argument("--nic", default="virtio-net-pci",
                    help="QEMU NIC model: virtio-net-pci (default), tulip, e1000; myri: "
                         "only the simulated Myrinet LANai (--fabric, default 'default'), "
                         "dp's myri backend, routes from the topology, dp-link commands "
                         "to the simulator's control pipe")
    ap.add_argument("--nic-driver",
                    help="Linux driver to load for --nic (default: tulip for tulip, "
                         "e1000 for e1000); 'none' leaves the NIC unbound, e.g. for "
                         "dp's own tulip backend")
    ap.add_argument("--nics", type=int, default=1,
                    help="NICs in the one guest (--guests 1), all on one QEMU hub, "
                         "MACs 52:54:00:00:00:01.. (e.g. two tulips back to back)")
    ap.add_argument("--tap", action="store_true",
                    help="one more NIC on the hub (--guests 1), an e1000 for Linux, "
                         "named dptap in the guest: selftests forge frames through it "
                         "(on by default in mode tulip)")
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--tcg-thread", choices=["auto", "single", "multi"], default="auto",
                    help="QEMU's TCG threads: one per vCPU (multi) or one per guest "
                         "(single); auto: single when the guests' vCPUs outnumber the "
                         "host's CPUs")
    ap.add_argument("--mem", type=int, default=512, help="MiB per guest")
    ap.add_argument("--cpu", default="max,cx16=off",
                    help="QEMU's -cpu model; by default max without CMPXCHG16B: "
                         "Debian 12's QEMU under TCG corrupts RFLAGS in it, and "
                         "guests died of it (docs/soak.md; every guest checks at "
                         "boot, tools/qemu/cpucheck.c)")
    ap.add_argument("--append", help="extra kernel command line")
    ap.add_argument("--plugin", metavar="SPEC",
                    help="mode icount: a QEMU TCG plugin, -plugin SPEC "
                    "(make profile's exact mode: insn-count.so,out=FILE)")
    ap.add_argument("--cmd", help="mode run: shell command for every guest")
    ap.add_argument("--no-nart", action="store_true",
                    help="mode cluster: the guests get no NART file; they turn neighbour "
                         "discovery on to find each other, then run run_disc.sh "
                         "(docs/discovery.md)")
    ap.add_argument("--fabric", metavar="TOPO",
                    help="attach guest I to host I of the Myrinet fabric simulator "
                         "(a topology file, default or one)")
    ap.add_argument("--myri-hosts", metavar="H,H",
                    help="mode myricore: the fabric hosts of the guest's two cards "
                         "(default 0,1 on the topology 'one'); 0,2 on 'default' (the "
                         "default then) puts them on different switches")
    ap.add_argument("--skips", default=ALLOW,
                    help="the skip allow-list (default tools/qemu/skips.txt): a skip not "
                         "listed for 'MODE KVER' fails the run; 'none': skips only counted")
    ap.add_argument("--faults", metavar="SPEC",
                    help="join the guests through dpswitch with these fault rates, e.g. "
                         "drop=5,dup=2,reorder=5,corrupt=1,seed=42 (percent of frames; "
                         "'none': the relay without faults); dp-link changes them at run "
                         "time (docs/harness.md)")
    a = ap.parse_args()
    a.kernel = a.kernel or default_kernel()
    if a.mode == "myri":
        a.nic = "myri"
    if a.myri_hosts:
        if a.mode != "myricore":
            sys.exit("cluster: --myri-hosts is for mode myricore")
        try:
            a.myri_hosts = [int(h) for h in a.myri_hosts.split(",")]
        except ValueError:
            sys.exit("cluster: --myri-hosts H,H: two host numbers")
        if len(a.myri_hosts) != 2 or len(set(a.myri_hosts)) != 2 or min(a.myri_hosts) < 0:
            sys.exit("cluster: --myri-hosts H,H: two different host numbers")
    if a.mode == "myricore":
        a.guests, a.nics, a.nic = 1, 2, "myri"
        a.fabric = a.fabric or ("default" if a.myri_hosts else "one")
    if a.nic == "myri":
        a.fabric = a.fabric or "default"
        a.nic_driver = "none"
        if a.faults is not None:
            sys.exit("cluster: --nic myri has no relay; faults are the simulator's (dp-link)")
    if a.nic_driver is None:
        a.nic_driver = nic_driver_of(a.nic)
    a.out = a.out or os.path.join(TOP, "build", "results", a.kernel)
    if not 1 <= a.guests <= 64:
        sys.exit("cluster: 1..64 guests")
    if a.mode in ICOUNT_MODES:
        a.guests, a.smp = 1, 1
    if a.mode == "tulip":
        a.guests, a.nics, a.nic, a.nic_driver, a.tap = 1, 2, "tulip", "none", True
    if a.tap and a.guests != 1:
        sys.exit("cluster: --tap needs --guests 1 (it joins the one guest's hub)")
    if a.mode == "faults" and a.faults is None:
        a.faults = "none"  # the self-test sets its own rates
    if a.no_nart and (a.mode != "cluster" or a.nic == "myri"):
        sys.exit("cluster: --no-nart is for mode cluster on Ethernet (myri has its own mapper)")
    # SIGTERM (a caller giving up) ends the run through its clean-up: the
    # guests and the relay are stopped, not left running without us
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(run(a))


if __name__ == "__main__":
    main()
