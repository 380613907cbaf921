#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Count KTAP / TAP 13 results, nested subtests included.

A leaf result counts as passed, failed or skipped (directive SKIP or TODO).
A result that closes a block of indented subtests is not counted again, unless
it says "not ok" while none of its subtests failed (then it is one failure).
Every plan is checked: each missing result counts as one failure, and so does a
"Bail out!" or a document that opened with a version line but has no plan (bare
result lines with neither version line nor plan are accepted).

As a command: ktap.py [FILE...] (default stdin) prints the failures and a last
line "P passed, F failed, S skipped"; exit status 1 if anything failed or no
result was found.
"""
import os
import re
import sys

VERSION = re.compile(r"^(\s*)(?:KTAP|TAP) version \d+")
PLAN = re.compile(r"^(\s*)1\.\.(\d+)")
RESULT = re.compile(r"^(\s*)(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*?))?\s*$")
BAIL = re.compile(r"^\s*Bail out!")


class Report:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.docs = 0
        self.failures = []  # descriptions

    def fail(self, what):
        self.failed += 1
        self.failures.append(what)

    def add(self, other):
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.docs += other.docs
        self.failures += other.failures

    def line(self):
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"


class _Level:
    def __init__(self):
        self.plan = None
        self.count = 0
        self.failed = False  # a failure was counted at or below this level
        self.done = False  # closed by a trailing plan: more results start a new block


def parse(text, label=""):
    rep = Report()
    levels = {}  # indent -> _Level, open blocks
    headed = set()  # indents whose current block opened with a version line
    pfx = f"{label}: " if label else ""

    def close(indent):
        lv = levels.pop(indent)
        if lv.plan is None:
            if indent in headed:
                rep.fail(f"{pfx}no plan (indent {indent}, {lv.count} results)")
        elif lv.count < lv.plan:
            for k in range(lv.count + 1, lv.plan + 1):
                rep.fail(f"{pfx}result {k} of {lv.plan} missing (indent {indent})")
        elif lv.count > lv.plan:
            rep.fail(f"{pfx}{lv.count} results for plan 1..{lv.plan} (indent {indent})")
        return lv

    def close_deeper(indent):
        """Close blocks deeper than indent; return whether any was open and failed."""
        had, failed = False, False
        for d in sorted((d for d in levels if d > indent), reverse=True):
            lv = close(d)
            had = True
            failed = failed or lv.failed
        return had, failed

    def level(indent):
        if indent not in levels:
            levels[indent] = _Level()
            headed.discard(indent)
        return levels[indent]

    for raw in text.splitlines():
        line = raw.rstrip("\r\n")
        m = VERSION.match(line)
        if m:
            ind = len(m.group(1))
            if ind == 0:
                close_deeper(-1)
                rep.docs += 1
            else:
                close_deeper(ind - 1)
            levels[ind] = _Level()
            headed.add(ind)
            continue
        if BAIL.match(line):
            rep.fail(f"{pfx}{line.strip()}")
            continue
        m = PLAN.match(line)
        if m:
            ind = len(m.group(1))
            close_deeper(ind)
            lv = levels.get(ind)
            if lv and lv.plan is None and lv.count:
                lv.plan = int(m.group(2))  # trailing plan: the block ends here
                lv.done = True
                continue
            if lv and lv.plan is not None:
                close(ind)  # a second plan at this depth: a new block
                headed.discard(ind)
            level(ind).plan = int(m.group(2))
            if ind == 0 and not rep.docs:
                rep.docs = 1
            continue
        m = RESULT.match(line)
        if not m:
            continue
        ind, status, _num, name, directive = m.groups()
        ind = len(ind)
        directive = (directive or "").strip()
        had_children, child_failed = close_deeper(ind)
        if ind in levels and levels[ind].done:
            close(ind)
        lv = level(ind)
        lv.count += 1
        skip = re.match(r"(?i)(skip|todo)\b", directive) is not None
        failed_now = False
        if had_children:
            if status == "not ok" and not child_failed and not skip:
                rep.fail(f"{pfx}not ok {name}")
                failed_now = True
        elif skip:
            rep.skipped += 1
        elif status == "ok":
            rep.passed += 1
        else:
            rep.fail(f"{pfx}not ok {name}" + (f" # {directive}" if directive else ""))
            failed_now = True
        if failed_now or child_failed:
            lv.failed = True
    close_deeper(-1)
    return rep


def main(argv):
    total = Report()
    files = argv[1:] or ["-"]
    for f in files:
        text = sys.stdin.read() if f == "-" else open(f, errors="replace").read()
        total.add(parse(text, "" if f == "-" else os.path.basename(f)))
    for what in total.failures:
        print(f"FAIL {what}")
    print(total.line())
    return 1 if total.failed or not (total.passed + total.skipped) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
