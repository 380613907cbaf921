#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the harness itself: the KTAP counter, the skip allow-list,
the judgement of a guest's documents and exit codes, check.sh's unit stage,
dpswitch and its fault-injection control channel (the fault engine's own tests: test_faults.c).

  test_harness.py DPSWITCH TEST_KTAP_H   (prints KTAP; exit 1 on any failure)
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ktap  # noqa: E402

results = []


def check(name, cond, detail=""):
    results.append((name, bool(cond), detail))


def counts(text):
    r = ktap.parse(text)
    return (r.passed, r.failed, r.skipped)


def test_ktap():
    check("ktap: flat plan", counts("KTAP version 1\n1..2\nok 1 a\nok 2 b\n") == (2, 0, 0))
    check("ktap: missing result fails",
          counts("KTAP version 1\n1..3\nok 1 a\nok 2 b\n") == (2, 1, 0))
    check("ktap: not ok fails", counts("TAP version 13\n1..1\nnot ok 1 - a\n") == (0, 1, 0))
    check("ktap: SKIP and TODO are skips",
          counts("KTAP version 1\n1..2\nok 1 a # SKIP no nic\nnot ok 2 b # TODO\n") == (0, 0, 2))
    nested = ("KTAP version 1\n1..2\n    KTAP version 1\n    # Subtest: s\n    1..2\n"
              "    ok 1 x\n    not ok 2 y\nnot ok 1 s\nok 2 t\n")
    check("ktap: nested leaves counted once", counts(nested) == (2, 1, 0))
    check("ktap: parent not ok without failing child",
          counts("KTAP version 1\n1..1\n    1..1\n    ok 1 x\nnot ok 1 s\n") == (1, 1, 0))
    check("ktap: trailing plans, two blocks",
          counts("ok 1 a\nok 2 b\n1..2\nok 1 c\n1..1\n") == (3, 0, 0))
    check("ktap: headed document without plan fails",
          counts("KTAP version 1\nok 1 a\n") == (1, 1, 0))
    check("ktap: two documents", counts("KTAP version 1\n1..1\nok 1 a\n"
                                        "KTAP version 1\n1..1\nnot ok 1 b\n") == (1, 1, 0))
    check("ktap: bail out fails", counts("KTAP version 1\n1..1\nBail out! x\n")[1] == 2)
    # A program that skips as a whole is one skip, with its parent's name.
    whole = ("KTAP version 1\n1..2\n  KTAP version 1\n  1..0 # SKIP x\n"
             "ok 1 a # SKIP\nok 2 b\n")
    r = ktap.parse(whole)
    check("ktap: a whole-program skip counts as one skip",
          (r.passed, r.failed, r.skipped) == (1, 0, 1) and r.skips == [("a", "x")],
          f"{r.line()} {r.skips}")
    check("ktap: a lone skipped document (plan 1..0, SKIP) is one skip",
          counts("KTAP version 1\n1..0 # SKIP no tulip\n") == (0, 0, 1))
    check("ktap: an empty plan without SKIP fails",
          counts("KTAP version 1\n1..0\n")[1] == 1)
    check("ktap: a parent SKIP over passing subtests is one skip",
          counts("KTAP version 1\n1..1\n  KTAP version 1\n  1..1\n  ok 1 x\n"
                 "ok 1 a # SKIP late\n") == (1, 0, 1))
    r = ktap.parse("KTAP version 1\n1..2\n  KTAP version 1\n  1..2\n  ok 1 x # SKIP why\n"
                   "  ok 2 y\nok 1 a\nok 2 b # SKIP netdev only\n")
    check("ktap: skips are named by their path",
          r.skips == [("a/x", "why"), ("b", "netdev only")], str(r.skips))
    r = ktap.parse("KTAP version 1\n1..1\n  KTAP version 1\n  1..2\n  # early\n  ok 1 x\n"
                   "  # pid 7 still running\n  #   task 7: dp_wait\n  not ok 2 y\nnot ok 1 a\n")
    check("ktap: a failure carries the diagnostics since the result before it",
          r.failures_with_notes() == [("not ok y", ["# pid 7 still running",
                                                    "#   task 7: dp_wait"])],
          str(r.failures_with_notes()))
    many = "".join(f"# line {i}\n" for i in range(80))
    r = ktap.parse(f"KTAP version 1\n1..2\nok 1 a\n{many}not ok 2 b\n")
    r2 = ktap.Report()
    r2.fail("first")
    r2.add(r)
    notes = r2.failures_with_notes()
    keep = ktap.NOTES_HEAD + ktap.NOTES_TAIL
    check("ktap: of many, the first and the last ones, kept through Report.add",
          notes[0] == ("first", []) and len(notes[1][1]) == keep + 1
          and notes[1][1][0] == "# line 0" and notes[1][1][ktap.NOTES_HEAD] ==
          f"# ... {40 + 40 - keep} lines ..." and notes[1][1][-1] == "# line 79", str(notes))


def write_allow(d, lines):
    path = os.path.join(d, "skips.txt")
    with open(path, "w") as f:
        f.write("# test\n" + "".join(line + "\n" for line in lines))
    return ktap.load_allow(path)


def test_allow():
    """An unlisted skip fails; a listed one is only counted."""
    d = tempfile.mkdtemp(prefix="dpallow-")
    try:
        allow = write_allow(d, ["tulip * | run_local/send_fault_rtnl | netdev only",
                                "unit | a | why"])
        text = "KTAP version 1\n1..2\nok 1 send_fault_rtnl # SKIP netdev\nok 2 b\n"
        r = ktap.parse(text)
        r.prefix("run_local")
        bad = r.judge_skips(allow, "tulip 6.1.0-56-amd64")
        check("allow: a listed skip stays a skip", not bad and r.failed == 0 and r.skipped == 1)
        r = ktap.parse(text)
        r.prefix("run_local")
        bad = r.judge_skips(allow, "check 6.1.0-56-amd64")
        check("allow: the same skip in another context fails and is still counted",
              len(bad) == 1 and r.failed == 1 and r.skipped == 1, r.line())
        try:
            write_allow(d, ["unit | a"])
            check("allow: an entry without a reason is refused", False)
        except ValueError:
            check("allow: an entry without a reason is refused", True)
        write_allow(d, ["unit | a | why"])
        p = subprocess.run([sys.executable, os.path.join(HERE, "ktap.py"), "--allow",
                            os.path.join(d, "skips.txt"), "--context", "unit", "-"],
                           input="KTAP version 1\n1..1\nok 1 q # SKIP no\n",
                           capture_output=True, text=True)
        check("allow: ktap.py --allow fails an unlisted skip",
              p.returncode == 1 and p.stdout.splitlines()[-1] == "0 passed, 1 failed, 1 skipped",
              p.stdout)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def guest_out(docs, done_rc=0):
    """A guest's ttyS2 output as the guest init prints it: (name, rc, KTAP)."""
    out = "# dpg: guest 0 of 2, mode check\n"
    for name, rc, text in docs:
        out += f"DPG-DOC-BEGIN {name}\n{text}"
        if rc is not None:
            out += f"DPG-DOC-END {name} rc={rc}\n"
    return out + f"DPG-DMESG-BEGIN\n[0.0] Linux\nDPG-DMESG-END\nDPG-DONE rc={done_rc}\n"


def judged(mode, g, out, allow=None, kernel="6.12.117+deb12-amd64"):
    import argparse
    import cluster
    d = tempfile.mkdtemp(prefix="dpjudge-")
    try:
        prefix = os.path.join(d, f"{mode}-g{g}")
        with open(prefix + ".out.log", "w") as f:
            f.write(out)
        open(prefix + ".console.log", "w").close()
        a = argparse.Namespace(mode=mode, kernel=kernel)
        return cluster.judge(a, g, prefix, False, 0, allow)[0]
    finally:
        shutil.rmtree(d, ignore_errors=True)


OK_DOC = "KTAP version 1\n1..1\nok 1 t\n"


def init_doc(cmd):
    """The guest init's own doc() and run_ktap() run on cmd, in sh."""
    src = open(os.path.join(HERE, "guest", "init")).read()
    funcs = []
    for fn in ("log", "doc", "run_ktap"):
        start = src.index(f"\n{fn}() {{") + 1
        end = src.index("\n}\n", start) + 3 if fn != "log" else src.index("\n", start) + 1
        funcs.append(src[start:end])
    script = "".join(funcs) + cmd + '\necho "last=$?"\n'
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True).stdout


def test_judge():
    """The host's judgement of a guest: documents, exit codes, skips."""
    good = guest_out([("run_cluster", 0, OK_DOC), ("run_local", 0, OK_DOC)])
    r = judged("check", 0, good)
    check("judge: a complete check guest passes", r.failed == 0 and r.passed == 3, r.line())
    r = judged("check", 1, guest_out([("run_cluster", 0, OK_DOC)]))
    check("judge: the second check guest owes only run_cluster", r.failed == 0, r.line())
    r = judged("check", 0, guest_out([("run_cluster", 0, OK_DOC)]))
    check("judge: a missing document fails",
          r.failed == 1 and "run_local missing" in r.failures[0], str(r.failures))
    r = judged("check", 0, guest_out([("run_cluster", 0, OK_DOC), ("run_local", 1, OK_DOC)]))
    check("judge: a runner exiting 1 fails though its KTAP passed",
          r.failed == 1 and "run_local exited 1" in r.failures[0], str(r.failures))
    r = judged("check", 0, guest_out([("run_cluster", 0, OK_DOC), ("run_local", None, OK_DOC)]))
    check("judge: a runner that never ended fails", r.failed >= 1, str(r.failures))
    r = judged("check", 0, guest_out([("run_cluster", 0, OK_DOC), ("run_local", 0, "")]))
    check("judge: a document without KTAP fails", r.failed >= 1, str(r.failures))
    r = judged("check", 0, good.replace("DPG-DONE rc=0", "DPG-DONE rc=1"))
    check("judge: DPG-DONE rc=1 fails", r.failed == 1, str(r.failures))
    out = init_doc("doc run_local sh -c 'echo KTAP version 1; echo 1..1; echo ok 1 t; exit 1'")
    check("judge: guest init passes a runner's status on",
          "DPG-DOC-END run_local rc=1" in out and "last=1" in out, out)
    out = init_doc("doc run_local run_ktap /nonexistent/run_local.sh")
    check("judge: guest init fails a missing runner",
          "not ok 1 run_local.sh missing" in out and "last=1" in out, out)
    skipped = "KTAP version 1\n1..1\n  KTAP version 1\n  1..0 # SKIP relay silent\n" \
              "ok 1 rel_cluster # SKIP relay silent\n"
    d = tempfile.mkdtemp(prefix="dpallow-")
    try:
        allow = write_allow(d, ["tulip * | run_local/send_fault_rtnl | netdev only"])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    r = judged("run", 0, guest_out([("run", 0, skipped)]), allow)
    check("judge: an unlisted skip fails the run and is counted",
          r.failed == 1 and r.skipped == 1 and "rel_cluster" in r.failures[0], str(r.failures))


KCSAN_DP = """[  50.1] ==================================================================
[  50.1] BUG: KCSAN: data-race in dp_snd_send [dp] / dp_snd_ack [dp]
[  50.1] write to 0xffff888004d8 of 4 bytes by interrupt on cpu 1:
[  50.1]  dp_snd_ack+0x1c/0x80 [dp]
[  50.1] read to 0xffff888004d8 of 4 bytes by task 80 on cpu 0:
[  50.1]  dp_snd_send+0x2a/0x300 [dp]
[  50.1] =================================================================="""
KCSAN_CORE = """[  60.2] ==================================================================
[  60.2] BUG: KCSAN: data-race in tick_sched_do_timer / tick_nohz_next_event
[  60.2] read to 0xffffffff8241 of 4 bytes by task 0 on cpu 1:
[  60.2]  tick_nohz_next_event+0x3a/0x1c0
[  60.2] =================================================================="""
KCSAN_MIXED = KCSAN_CORE.replace("tick_nohz_next_event+0x3a/0x1c0",
                                 "dp_mdr_rcv+0x9/0x90 [dp]\n[  60.2]  tick_nohz_next_event+0x3a/0x1c0")
# The kernel's own race in its wake-up, reached from dp's receive path.
KCSAN_CALLED = KCSAN_CORE.replace("tick_nohz_next_event+0x3a/0x1c0",
                                  "pollwake+0xc1/0x100\n[  60.2]  dp_pool_deliver+0x261/0x2b0 [dp]")
# The kernel's own race, made by the timer interrupt while dp's read() ran.
KCSAN_IRQ = """[  78.9] BUG: KCSAN: data-race in __hrtimer_run_queues / hrtimer_active
[  78.9]
[  78.9] read to 0xffff88805d41db18 of 8 bytes by interrupt on cpu 1:
[  78.9]  hrtimer_active+0x79/0xe0
[  78.9]  asm_sysvec_apic_timer_interrupt+0x16/0x20
[  78.9]  syscall_enter_from_user_mode+0xd/0x20
[  78.9]
[  78.9] write to 0xffff88805d41db18 of 8 bytes by interrupt on cpu 0:
[  78.9]  __hrtimer_run_queues+0x115/0x420
[  78.9]  hrtimer_interrupt+0x1c7/0x3a0
[  78.9]  __sysvec_apic_timer_interrupt+0x8e/0x1c0
[  78.9]  asm_sysvec_apic_timer_interrupt+0x16/0x20
[  78.9]  _raw_spin_unlock_irq+0x2b/0x40
[  78.9]  dp_ep_read+0xd5/0x250 [dp]
[  78.9]
[  78.9] =================================================================="""
# dp's own receive path in the tulip's interrupt races with a reader.
KCSAN_DP_IRQ = KCSAN_IRQ.replace("BUG: KCSAN: data-race in __hrtimer_run_queues / hrtimer_active",
                                 "BUG: KCSAN: data-race in x / y").replace(
    "hrtimer_active+0x79/0xe0", "dp_pool_deliver+0x10/0x90 [dp]\n[  78.9]  dp_tulip_irq+0x5/0x50 [dp]")


def test_kcsan():
    """A KCSAN report fails a run only if it names dp's code."""
    import cluster
    lines = (KCSAN_DP + "\n" + KCSAN_CORE).splitlines()
    ours, theirs = cluster.kcsan_reports(lines)
    check("kcsan: a race in dp is dp's, the kernel's own is not",
          len(ours) == 1 and "dp_snd_send" in ours[0] and len(theirs) == 1
          and "tick_sched" in theirs[0], f"{ours} {theirs}")
    ours, theirs = cluster.kcsan_reports(KCSAN_MIXED.splitlines())
    check("kcsan: a race with dp's code on either side is dp's", len(ours) == 1 and not theirs,
          f"{ours} {theirs}")
    ours, theirs = cluster.kcsan_reports(KCSAN_CALLED.splitlines())
    check("kcsan: the kernel's race in code dp called is not dp's", not ours and len(theirs) == 1,
          f"{ours} {theirs}")
    ours, theirs = cluster.kcsan_reports(KCSAN_IRQ.splitlines())
    check("kcsan: the kernel's race in an interrupt that only interrupted dp is not dp's",
          not ours and len(theirs) == 1, f"{ours} {theirs}")
    ours, theirs = cluster.kcsan_reports(KCSAN_DP_IRQ.splitlines())
    check("kcsan: dp's code inside an interrupt is dp's", len(ours) == 1 and not theirs,
          f"{ours} {theirs}")
    good = guest_out([("run_cluster", 0, OK_DOC), ("run_local", 0, OK_DOC)])
    r = judged("check", 0, good, kernel="6.1.192-dpkcsan")
    check("kcsan: a KCSAN kernel that never enabled KCSAN fails",
          r.failed == 1 and "did not start" in r.failures[0], f"{r.line()} {r.failures}")
    good = good.replace("[0.0] Linux", "[0.0] Linux\n[0.1] kcsan: enabled early")
    r = judged("check", 0, good, kernel="6.1.192-dpkcsan")
    check("kcsan: one that did passes", r.failed == 0, f"{r.line()} {r.failures}")
    for text, fails, what in ((KCSAN_CORE, False, "the kernel's own race passes"),
                              (KCSAN_DP, True, "a race in dp fails the run")):
        r = judged("check", 0, good.replace("[0.0] Linux", "[0.0] Linux\n" + text))
        check(f"kcsan: judge: {what}", (r.failed == 1) == fails, f"{r.line()} {r.failures}")


def test_kselftest_doc():
    """The kselftest runner's "# "-prefixed output is counted as its nested
    KTAP, named as the same suite run directly."""
    text = ("TAP version 13\n1..1\n# selftests: dp: run_local.sh\n# KTAP version 1\n"
            "# 1..2\n#   KTAP version 1\n#   1..2\n#   ok 1 one\n#   not ok 2 two\n"
            "# not ok 1 bind\n#   KTAP version 1\n#   1..0 # SKIP whole\n"
            "# ok 2 xfer # SKIP whole\nnot ok 1 selftests: dp: run_local.sh # exit=1\n")
    r = judged("kselftest", 0, guest_out([("kselftest", 1, text)]))
    check("kselftest: nested results counted, one program skip, runner's exit fails",
          (r.passed, r.skipped) == (2, 1) and r.failed == 2
          and r.skips == [("run_local/xfer", "whole")], f"{r.line()} {r.skips} {r.failures}")


def test_unit_stage():
    """check.sh's unit stage: a listed target that cannot run fails."""
    d = tempfile.mkdtemp(prefix="dpunit-")
    try:
        os.makedirs(os.path.join(d, "broken"))
        with open(os.path.join(d, "broken", "Makefile"), "w") as f:
            f.write("check:\n\tthis is not a recipe line\n  oops: =\n")
        os.makedirs(os.path.join(d, "good"))
        with open(os.path.join(d, "good", "Makefile"), "w") as f:
            f.write("check:\n\t@echo 'KTAP version 1'; echo 1..1; echo ok 1 fine\n")
        env = dict(os.environ, CHECK_LOGS=os.path.join(d, "logs"),
                   CHECK_UNIT=f"{d}/good:check {d}/broken:check {d}/none:check "
                              f"{d}/good:nosuchtarget")
        p = subprocess.run([os.path.join(TOP, "tools", "check.sh"), "unit"], env=env,
                           capture_output=True, text=True)
        last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
        check("unit stage: a broken Makefile, a missing one and a missing target fail",
              p.returncode == 1 and last == "1 passed, 3 failed", p.stdout[-400:])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_ktap_h(exe):
    """selftests/dp/ktap.h prints the version line, the plan, then the results,
    whatever way the program ends; a forked child's diagnostic goes out at once."""
    for how, want, rc in (("finish", (2, 0, 0), 0), ("skip", (2, 0, 1), 0),
                          ("exit", (2, 1, 0), 0), ("term", (2, 1, 0), -15),
                          ("segv", (2, 1, 0), -11)):
        p = subprocess.run([exe, how], capture_output=True, text=True)
        lines = [ln for ln in p.stdout.splitlines() if not ln.startswith("# from the child")]
        check(f"ktap.h: {how}: version line, plan, results",
              lines[:2] == ["KTAP version 1", f"1..{sum(want)}"]
              and counts(p.stdout) == want and p.returncode == rc
              and "# from the child" in p.stdout, p.stdout)


def test_kernel_bad():
    """The judge's kernel-log pattern on a debug kernel's lines."""
    import cluster
    bad = ["BUG: KASAN: slab-use-after-free in dp_pool_put+0x12/0x40 [dp]",
           "UBSAN: shift-out-of-bounds in module/dp_ring.c:40:9",
           "WARNING: possible recursive locking detected",
           "INFO: lockdep is turned off.",
           "BUG: sleeping function called from invalid context at mm/slab.h:723",
           "unreferenced object 0xffff888003a1c000 (size 64):",
           "kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"]
    fine = ["rcu: \tRCU lockdep checking is enabled.",
            "kasan: KernelAddressSanitizer initialized",
            "kmemleak: Kernel memory leak detector initialized (mem pool available: 15074)",
            "dp: node 1 attached to eth0"]
    for line in bad:
        check(f"judge: bad line {line[:40]!r}", cluster.KERNEL_BAD.search(line))
    for line in fine:
        check(f"judge: harmless line {line[:40]!r}", not cluster.KERNEL_BAD.search(line))


def test_crash_report():
    """A guest's crash is reported whole, from its first line to its end."""
    import cluster
    log = ["[    6.1] dp: Directed Point loaded, node 2",
           "[    6.5] Oops: double fault: 0000 [#1] PREEMPT SMP NOPTI",
           "[    6.5] RIP: 0010:__kmalloc_node_track_caller_noprof+0xd5/0x3f0",
           "[    6.5] Call Trace:",
           "[    6.5]  dp_netdev_xmit+0x4c/0x140 [dp]",
           "[    6.5] ---[ end Kernel panic - not syncing: Fatal exception ]---",
           "[    6.6] after the end"]
    def bad(lines):
        return {ln.strip() for ln in lines if cluster.KERNEL_BAD.search(ln)}
    rep = cluster.crash_report(log, bad(log))
    check("crash: starts at the oops", rep and rep[0] == log[1], str(rep))
    check("crash: keeps the RIP and the trace", log[2] in rep and log[4] in rep, str(rep))
    check("crash: ends at its end marker", rep and rep[-1] == log[5], str(rep))
    check("crash: none in a clean log", cluster.crash_report(log[:1], bad(log[:1])) == [])
    long = [log[1]] + [f"[ 7.{i}]  f{i}+0x1/0x2" for i in range(200)]
    check("crash: at most CRASH_LINES lines",
          len(cluster.crash_report(long, bad(long))) == cluster.CRASH_LINES)


def test_tcg_accel():
    """One TCG thread per guest once the vCPUs outnumber the host's CPUs."""
    import argparse
    import cluster
    cpus = os.cpu_count() or 1

    def accel(guests, smp, mode="check", thread="auto"):
        return cluster.tcg_accel(argparse.Namespace(guests=guests, smp=smp, mode=mode,
                                                    tcg_thread=thread))
    check("tcg: oversubscribed guests get one thread each",
          accel(cpus, 2) == "tcg,thread=single")
    check("tcg: one vCPU per guest keeps multi", accel(cpus + 1, 1) == "tcg,thread=multi")
    check("tcg: icount is single", accel(1, 1, "icount") == "tcg,thread=single")
    check("tcg: the Myrinet simulator counts as a CPU taken",
          accel(1, cpus, "myricore") == "tcg,thread=single" and
          accel(1, cpus, "check") == "tcg,thread=multi")
    check("tcg: an explicit choice wins", accel(cpus, 2, thread="multi") == "tcg,thread=multi")


def test_host_note():
    """What other processes took of the host over a real-time run."""
    import cluster
    note = cluster.others_note
    # busy and ours, CPU-s: the host busy 30 s more over 30 s, ours 29 of them
    quiet = note((100.0, 10.0), (130.0, 39.0), 30)
    check("host: others' 1 CPU-s of 30 s is quiet",
          "took 1.0 CPU-s over the run's 30 s (0.03 of a core): quiet" in quiet)
    busy = note((100.0, 10.0), (160.0, 40.0), 30)
    check("host: a core of others is not", "(1.00 of a core): NOT quiet" in busy)
    check("host: ours alone, never below 0", "took 0.0 CPU-s" in note((0, 0), (5, 6), 5))
    check("host: no run, no note", note((0, 0), (1, 1), 0) is None)
    host_busy, ours = cluster.host_cpu()
    check("host: /proc/stat and rusage read", host_busy > 0 and ours > 0)
    check("host: the perf lines' modes",
          [cluster.PERF_MODE.match(x).group(1) for x in
           ("# mode=realtime dpperf client", "mode=mpi-icount\tdp\tmpilat")]
          == ["realtime", "mpi-icount"])


def test_stuck_at_boot():
    """A guest that never reached user space once the others ended."""
    import cluster
    stuck = cluster.stuck_at_boot
    check("boot: a guest not in user space after the other ended is given up",
          stuck("check", [0], set(), 2) == [0])
    check("boot: not while another guest runs", stuck("check", [0, 1], {1}, 2) == [])
    check("boot: not one that reached user space (mode check's guest 0 alone)",
          stuck("check", [0], {0, 1}, 2) == [])
    check("boot: not a lone guest", stuck("run", [0], set(), 1) == [])
    check("boot: not a mode without the boot barrier", stuck("icount", [0], set(), 2) == [])
    check("boot: two left, one in user space: both wait", stuck("cluster", [0, 2], {2}, 3) == [])
    check("boot: nothing left running", stuck("check", [], set(), 2) == [])
    with tempfile.TemporaryDirectory(prefix="dpq-t") as d, open(os.devnull, "w") as null:
        bar = cluster.Barriers(d, 1, null)
        bar.handle(0, "")
        bar.handle(0, "junk")
        check("boot: a stray line is not user space", not bar.seen)
        bar.handle(0, "B boot")
        check("boot: a barrier line is", bar.seen == {0})


def test_nic_driver():
    """The guest's driver for a -device spec with options (make profile's
    PROFILE_NIC=e1000,mitigation=off) is its name's, not none."""
    import cluster
    for nic, want in (("e1000", "e1000"), ("e1000,mitigation=off", "e1000"),
                      ("tulip", "tulip"), ("virtio-net-pci", "none"), ("myri", "none")):
        got = cluster.nic_driver_of(nic)
        check(f"nic driver: {nic} loads {want}", got == want, got)
    # the guest's command line, as qemu_cmd() builds it, for a spec with options
    import argparse
    a = argparse.Namespace(fabric=None, nic="e1000,mitigation=off", nics=1, mode="check",
                           guests=1, smp=1, tcg_thread="auto", cpu="max", mem=512, cmd=None,
                           nic_driver=cluster.nic_driver_of("e1000,mitigation=off"),
                           tap=False, no_nart=False, append=None, kernel="k", faults=None)
    cmd = " ".join(cluster.qemu_cmd(a, 0, "vmlinuz", "initrd", "/s", "/o", 60))
    check("nic driver: e1000,mitigation=off boots with e1000 loaded, options on the device",
          "dpg.modprobe=e1000" in cmd and "-device e1000,mitigation=off,netdev=n0" in cmd, cmd)
    a.nic, a.nic_driver = "tulip,romfile=", "none"
    cmd = " ".join(cluster.qemu_cmd(a, 0, "vmlinuz", "initrd", "/s", "/o", 60))
    check("nic driver: a tulip spec with options, no driver, is dp's tulip backend",
          "dpg.backend=tulip" in cmd and "dpg.modprobe" not in cmd, cmd)


def test_myri_cards():
    """Mode myricore: one guest, two LANai cards (hosts h0 and h1 of 'one'),
    each card's node with the route to the other."""
    import argparse
    import cluster
    check("myri: routes between the two cards of one guest",
          cluster.myri_routes("one", 0, 1, 2) == "2=81,1=80",
          cluster.myri_routes("one", 0, 1, 2))
    check("myri: routes from guest 1 to the others (one card each)",
          cluster.myri_routes("default", 1, 4) == "1=80,3=87:80,4=87:81",
          cluster.myri_routes("default", 1, 4))
    a = argparse.Namespace(fabric="one", nic="myri", nics=2, mode="myricore", guests=1,
                           smp=1, tcg_thread="auto", cpu="max", mem=512, cmd=None,
                           nic_driver="none", tap=False, no_nart=False, append=None,
                           kernel="k", faults=None)
    cmd = " ".join(cluster.qemu_cmd(a, 0, "vmlinuz", "initrd", "/s", "/o", 60))
    check("myri: one ivshmem-doorbell per card, on its own host's socket",
          "path=/s/myri/h0.sock" in cmd and "path=/s/myri/h1.sock" in cmd and
          cmd.count("ivshmem-doorbell") == 2 and "addr=0x9" in cmd and
          "dpg.myri=2=81,1=80" in cmd and "dpg.nics=2" in cmd and
          "dpg.myrihosts" not in cmd, cmd)
    check("myri: the second card on the other switch: two-byte routes both ways",
          cluster.myri_routes("default", 0, 1, 2, [0, 2]) == "2=87:80,1=87:80",
          cluster.myri_routes("default", 0, 1, 2, [0, 2]))
    a.fabric, a.myri_hosts = "default", [0, 2]
    cmd = " ".join(cluster.qemu_cmd(a, 0, "vmlinuz", "initrd", "/s", "/o", 60))
    check("myri: --myri-hosts 0,2 gives the cards hosts h0 and h2",
          "path=/s/myri/h0.sock" in cmd and "path=/s/myri/h2.sock" in cmd and
          "h1.sock" not in cmd and "dpg.myrihosts=0,2" in cmd and
          "dpg.myri=2=87:80,1=87:80" in cmd, cmd)
    log = "myrisim: 2 hosts\nmyrisim: sent=10 delivered=9 hops=%d bad_route=1\n"
    for hops, good in ((18, True), (17, False), (9, False)):
        rep = ktap.Report()
        cluster.fabric_hops(a, rep, log % hops)
        check(f"myri: fabric/hops with {hops} switches for 9 packets of 2-byte routes: "
              f"{'pass' if good else 'fail'}",
              (rep.passed, rep.failed) == ((1, 0) if good else (0, 1)), rep.line())
    rep = ktap.Report()
    cluster.fabric_hops(a, rep, "myrisim: died\n")
    check("myri: fabric/hops without the final counters fails", rep.failed == 1, rep.line())


def frame(dst, src, tag):
    return bytes(dst) + bytes(src) + b"\x88\xb5" + tag.ljust(46, b"\0")


# A frame that must arrive is waited for this long; one that must not is
# shown absent by a marker sent after it on the same path arriving first
# (dpswitch forwards in order), not by a short timeout.
RECV_S = 5.0


def tag_of(f):
    return f[14:].rstrip(b"\0") if f else None


def test_switch(exe):
    d = tempfile.mkdtemp(prefix="dpsw-")
    paths = [os.path.join(d, f"p{i}") for i in range(3)]
    socks = []
    for p in paths:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(p)
        s.settimeout(RECV_S)
        socks.append(s)
    sw = os.path.join(d, "sw")
    proc = subprocess.Popen([exe, sw] + paths, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(50):
            if os.path.exists(sw):
                break
            time.sleep(0.05)

        def recv(i):
            try:
                return socks[i].recv(70000)
            except socket.timeout:
                return None

        mac = [[0x52, 0x54, 0, 0, 0, i + 1] for i in range(3)]
        bcast = [0xff] * 6
        socks[0].sendto(frame(bcast, mac[0], b"hello"), sw)
        got = [recv(1), recv(2)]
        socks[1].sendto(frame(mac[0], mac[1], b"to0"), sw)  # port 0 learned
        first0 = recv(0)
        check("dpswitch: broadcast floods to the other ports, not back",
              tag_of(got[0]) == b"hello" and tag_of(got[1]) == b"hello"
              and tag_of(first0) == b"to0", f"port 0 got {tag_of(first0)} first")
        socks[0].sendto(frame(mac[2], mac[0], b"to2?"), sw)  # port 2 not learned yet
        got = [recv(1), recv(2)]
        check("dpswitch: learned unicast goes to one port (port 2's next frame is the next one)",
              tag_of(first0) == b"to0" and tag_of(got[1]) == b"to2?", f"port 2 got {tag_of(got[1])}")
        check("dpswitch: unknown unicast floods", tag_of(got[0]) == b"to2?" and got[1])
        big = frame(mac[1], mac[0], b"jumbo") + b"\x5a" * 9000
        socks[0].sendto(big, sw)
        check("dpswitch: 9 KB frame passes whole", recv(1) == big)
        for k in range(200):  # more than the kernel's 10-datagram queue
            socks[0].sendto(frame(mac[1], mac[0], b"burst%d" % k), sw)
        n = 0
        while n < 200 and recv(1) is not None:
            n += 1
        check("dpswitch: a 200-frame burst arrives whole", n == 200, f"got {n}")
    finally:
        proc.terminate()
        err = proc.communicate(timeout=5)[1]
        for s in socks:
            s.close()
        for p in paths:
            os.unlink(p)
        os.rmdir(d)
    check("dpswitch: exits on SIGTERM and reports", proc.returncode == 0 and "port 0" in err)


class Relay:
    """dpswitch -c with two ports and a line-based control pipe."""

    def __init__(self, exe, spec=None):
        self.d = tempfile.mkdtemp(prefix="dpsw-")
        self.paths = [os.path.join(self.d, f"p{i}") for i in range(2)]
        self.socks = []
        for p in self.paths:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(p)
            s.settimeout(RECV_S)
            self.socks.append(s)
        self.sw = os.path.join(self.d, "sw")
        self.proc = subprocess.Popen(
            [exe, "-c"] + (["-f", spec] if spec else []) + [self.sw] + self.paths,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(50):
            if os.path.exists(self.sw):
                break
            time.sleep(0.05)
        self.mac = [[0x52, 0x54, 0, 0, 0, i + 1] for i in range(2)]

    def ctl(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().rstrip("\n")

    def stats(self):
        return dict(kv.split("=", 1) for kv in self.ctl("stats").split()[1:])

    def send(self, src, tag):
        self.socks[src].sendto(frame(self.mac[1 - src], self.mac[src], tag), self.sw)

    def recv(self, i):
        try:
            return self.socks[i].recv(70000)
        except socket.timeout:
            return None

    def wait_frames(self, n):
        """Until the relay has taken n frames (it reads them one per loop)."""
        for _ in range(100):
            if int(self.stats()["frames"]) >= n:
                return
            time.sleep(0.02)

    def close(self):
        self.proc.terminate()
        err = self.proc.communicate(timeout=5)[1]
        for s in self.socks:
            s.close()
        for p in self.paths:
            os.unlink(p)
        os.rmdir(self.d)
        return err


def test_relay(exe):
    r = Relay(exe, "seed=5")
    try:
        st = r.ctl("stats")
        check("relay: stats answers OK with counters", st.startswith("OK frames=0 passed=0 "), st)
        r.send(0, b"a")
        check("relay: with no faults a frame passes", r.recv(1) is not None)
        st = r.ctl("partition")
        r.send(0, b"b")
        r.send(1, b"c")
        r.wait_frames(3)
        parted = r.stats()["partitioned"]
        st2 = r.ctl("heal")
        r.send(1, b"d")
        r.send(0, b"d2")
        got = [tag_of(r.recv(0)), tag_of(r.recv(1))]
        check("relay: partition answers OK and cuts both directions",
              st.startswith("OK ") and st.endswith("partition=all") and parted == "2"
              and got == [b"d", b"d2"], f"{st}; after heal got {got}")
        check("relay: heal lets frames pass again", st2.endswith("partition=none"), st2)
        st = r.ctl("set drop=100")
        r.send(0, b"e")
        r.wait_frames(6)
        dropped = r.stats()["dropped"]
        r.ctl("set drop=0")
        r.send(0, b"e2")
        got = tag_of(r.recv(1))
        check("relay: set drop=100 drops, stats counts it",
              " drop=100 " in st and got == b"e2" and dropped == "1", f"{st}; got {got}")
        r.ctl("set drop=100")
        st = r.ctl("set drop=1000")
        check("relay: a bad value answers ERR and changes nothing",
              st.startswith("ERR ") and r.stats()["drop"] == "100", st)
        check("relay: an unknown command answers ERR", r.ctl("frobnicate").startswith("ERR "))
        check("relay: an over-long line answers ERR",
              r.ctl("set " + "x" * 5000).startswith("ERR line longer"))
        # Port 1 reads nothing: 10 frames fill its socket, the rest wait in
        # the relay's queue, and a partition drops those.
        r.ctl("reset")
        base = int(r.stats()["frames"])
        for k in range(40):
            r.send(0, b"q%d" % k)
        r.wait_frames(base + 40)
        r.ctl("partition")
        r.ctl("heal")
        r.send(0, b"end")
        n = 0
        while True:
            t = tag_of(r.recv(1))
            if t is None or t == b"end":
                break
            n += 1
        check("relay: a partition also drops the frames queued on the cut link",
              0 < n < 40, f"{n} of 40 arrived")
    finally:
        err = r.close()
    check("relay: logs commands and final counters",
          "ctl 'partition' -> OK" in err and "lost to the partition" in err
          and "dpswitch: faults: frames=" in err, err[-300:])
    p = subprocess.run([exe, "-f", "drop=7,bogus=1", "/nonexistent/sw", "/nonexistent/p"],
                       capture_output=True, text=True)
    check("relay: a bad -f spec exits 2 with the reason",
          p.returncode == 2 and "unknown key 'bogus'" in p.stderr, p.stderr)


def main():
    test_ktap()
    test_allow()
    test_judge()
    test_kcsan()
    test_kselftest_doc()
    test_unit_stage()
    test_ktap_h(sys.argv[2])
    test_kernel_bad()
    test_crash_report()
    test_tcg_accel()
    test_host_note()
    test_stuck_at_boot()
    test_nic_driver()
    test_myri_cards()
    test_switch(sys.argv[1])
    test_relay(sys.argv[1])
    print("KTAP version 1")
    print(f"1..{len(results)}")
    for i, (name, ok, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} {name}" + (f" # {detail}" if detail and not ok else ""))
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
