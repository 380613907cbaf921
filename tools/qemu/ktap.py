#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Count KTAP / TAP 13 results, nested subtests included.

A leaf result counts as passed, failed or skipped (directive SKIP or TODO).
A result that closes a block of indented subtests is not counted again, unless
it says "not ok" while none of its subtests failed (then it is one failure),
or says SKIP while none of its subtests was skipped (then it is one skip).
A whole program that skips ("1..0 # SKIP reason") is one skip; an empty plan
without SKIP is a failure.  Every skip is recorded by name (the names of its
parents and its own, joined by "/") so that a harness can hold it against an
allow-list (load_allow, Report.judge_skips).
Every plan is checked: each missing result counts as one failure, and so does a
"Bail out!" or a document that opened with a version line but has no plan (bare
result lines with neither version line nor plan are accepted).

As a command: ktap.py [--allow FILE --context CTX] [FILE...] (default stdin)
prints the failures and a last line "P passed, F failed, S skipped"; exit
status 1 if anything failed or no result was found.  With --allow, a skip not
on the allow-list for context CTX (e.g. "unit", "check 6.12.x") is also one
failure (it still counts as skipped).
"""
import fnmatch
import os
import re
import sys

VERSION = re.compile(r"^(\s*)(?:KTAP|TAP) version \d+")
PLAN = re.compile(r"^(\s*)1\.\.(\d+)\s*(?:#\s*(.*?))?\s*$")
RESULT = re.compile(r"^(\s*)(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*?))?\s*$")
BAIL = re.compile(r"^\s*Bail out!")
DIAG = re.compile(r"^\s*#")
NOTES_HEAD, NOTES_TAIL = 10, 30  # diagnostic lines kept with a failed result: its first
#                                  and last ones (the first say what is wrong, a stuck
#                                  task's stacks may follow)


def _notes(diag):
    """The diagnostic lines to keep with a failed result."""
    if len(diag) <= NOTES_HEAD + NOTES_TAIL:
        return list(diag)
    cut = len(diag) - NOTES_HEAD - NOTES_TAIL
    return diag[:NOTES_HEAD] + [f"# ... {cut} lines ..."] + diag[-NOTES_TAIL:]


class Report:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.docs = 0
        self.failures = []  # descriptions
        self.notes = []  # per failure: the diagnostic lines before it
        self.leaves = []  # (name, kind, reason): every counted result, kind pass/fail/skip

    def fail(self, what, notes=()):
        self.failed += 1
        self.failures.append(what)
        self.notes.append(list(notes))

    def failures_with_notes(self):
        """(description, the diagnostic lines that came before it)."""
        return list(zip(self.failures, self.notes))

    def add(self, other):
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.docs += other.docs
        self.failures += other.failures
        self.notes += other.notes
        self.leaves += other.leaves

    @property
    def skips(self):
        """(name, reason) of every counted skip."""
        return [(n, r) for n, k, r in self.leaves if k == "skip"]

    def prefix(self, pfx):
        """Put pfx/ before every result's name (the document it came from)."""
        self.leaves = [(f"{pfx}/{n}", k, r) for n, k, r in self.leaves]

    def judge_skips(self, allow, context, label=""):
        """Every skip not allowed for context (allow_reason) becomes one
        failure too; returns the unlisted ones."""
        bad = [(n, r) for n, r in self.skips if allow_reason(allow, context, n) is None]
        pfx = f"{label}: " if label else ""
        for name, reason in bad:
            self.fail(f"{pfx}skip not on the allow-list: {name} # SKIP {reason}")
        return bad

    def line(self):
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"


class _Level:
    def __init__(self):
        self.plan = None
        self.count = 0
        self.leaves = []  # (name relative to this block, kind, reason)
        self.failed = False  # a failure was counted at or below this level
        self.done = False  # closed by a trailing plan: more results start a new block


def _is_skip(directive):
    return re.match(r"(?i)(skip|todo)\b", directive or "") is not None


def _reason(directive):
    return re.sub(r"(?i)^(skip|todo)\b\s*", "", directive or "").strip()


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
        """Close blocks deeper than indent; return whether any was open, whether
        one failed, and their results (for the result that closes them)."""
        had, failed, skips = False, False, []
        for d in sorted((d for d in levels if d > indent), reverse=True):
            lv = close(d)
            had = True
            failed = failed or lv.failed
            skips += lv.leaves
        return had, failed, skips

    def level(indent):
        if indent not in levels:
            levels[indent] = _Level()
            headed.discard(indent)
        return levels[indent]

    def close_all():
        rep.leaves.extend(close_deeper(-1)[2])

    diag = []  # the diagnostic lines since the last result
    for raw in text.splitlines():
        line = raw.rstrip("\r\n")
        if DIAG.match(line):
            diag.append(line.strip())
            continue
        m = VERSION.match(line)
        if m:
            ind = len(m.group(1))
            if ind == 0:
                close_all()
                rep.docs += 1
            else:
                # an unclosed block at this depth or deeper has no parent result
                rep.leaves.extend(close_deeper(ind - 1)[2])
            levels[ind] = _Level()
            headed.add(ind)
            continue
        if BAIL.match(line):
            rep.fail(f"{pfx}{line.strip()}")
            continue
        m = PLAN.match(line)
        if m:
            ind = len(m.group(1))
            rep.leaves.extend(close_deeper(ind)[2])
            lv = levels.get(ind)
            if lv and lv.plan is None and lv.count:
                lv.plan = int(m.group(2))  # trailing plan: the block ends here
                lv.done = True
                continue
            if lv and lv.plan is not None:
                if ind == 0:
                    rep.leaves.extend(close(ind).leaves)
                else:
                    close(ind)  # a second plan at this depth: a new block
                headed.discard(ind)
            lv = level(ind)
            lv.plan = int(m.group(2))
            if ind == 0 and not rep.docs:
                rep.docs = 1
            if lv.plan == 0:
                # a whole program (or block) that did not run: one skip
                if _is_skip(m.group(3)):
                    rep.skipped += 1
                    lv.leaves.append(("", "skip", _reason(m.group(3))))
                else:
                    rep.fail(f"{pfx}empty plan 1..0 without SKIP (indent {ind})")
                    lv.failed = True
            continue
        m = RESULT.match(line)
        if not m:
            continue
        ind, status, _num, name, directive = m.groups()
        ind = len(ind)
        notes, diag = diag, []
        directive = (directive or "").strip()
        had_children, child_failed, child_skips = close_deeper(ind)
        if ind in levels and levels[ind].done:
            lv = close(ind)
            if ind == 0:
                rep.leaves.extend(lv.leaves)
        lv = level(ind)
        lv.count += 1
        skip = _is_skip(directive)
        failed_now = False
        if had_children:
            if status == "not ok" and not child_failed and not skip:
                rep.fail(f"{pfx}not ok {name}")
                failed_now = True
            if failed_now:
                child_skips = child_skips + [("", "fail", "")]
            if skip and not any(k == "skip" for _, k, _ in child_skips):
                rep.skipped += 1  # the parent skipped what its subtests did not say
                child_skips = child_skips + [("", "skip", _reason(directive))]
            lv.leaves += [(f"{name}/{n}" if n else name, k, r) for n, k, r in child_skips]
        elif skip:
            rep.skipped += 1
            lv.leaves.append((name, "skip", _reason(directive)))
        elif status == "ok":
            rep.passed += 1
            lv.leaves.append((name, "pass", ""))
        else:
            rep.fail(f"{pfx}not ok {name}" + (f" # {directive}" if directive else ""),
                     _notes(notes))
            lv.leaves.append((name, "fail", ""))
            failed_now = True
        if failed_now or child_failed:
            lv.failed = True
    close_all()
    return rep


def load_allow(path):
    """The skip allow-list: lines "CONTEXT-GLOB | NAME-GLOB | reason" ('#'
    comments).  CONTEXT is what the harness names the run (e.g. "unit",
    "check 6.12.117+deb12-amd64", "tulip 6.1.0-56-amd64"); NAME is the skip's
    path of test names (document/test/subtest).  Each entry must give a
    reason."""
    allow = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [x.strip() for x in line.split("|", 2)]
            if len(parts) < 3 or not all(parts):
                raise ValueError(f"{path}:{n}: want CONTEXT | NAME | REASON: {line!r}")
            allow.append(tuple(parts))
    return allow


def allow_reason(allow, context, name):
    """The allow-list's reason for the skip name in context, or None."""
    for ctx, pat, reason in allow:
        if fnmatch.fnmatchcase(context, ctx) and fnmatch.fnmatchcase(name, pat):
            return reason
    return None


def write_names(path, rep):
    with open(path, "w") as f:
        f.write("".join(f"{n}\n" for n, _, _ in rep.leaves))


def check_key(name):
    """A result's name as one distinct check: numbers folded (the same
    check on another kernel, guest, NID or size of run is not another)."""
    return re.sub(r"\d+", "N", " ".join(name.split()))


def distinct(paths):
    """How many distinct checks the --names files hold."""
    keys = set()
    for p in paths:
        with open(p, errors="replace") as f:
            keys.update(check_key(line) for line in f if line.strip())
    return len(keys)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="count KTAP results")
    ap.add_argument("--allow", help="skip allow-list; any other skip fails")
    ap.add_argument("--context", default="", help="this run's name for the allow-list")
    ap.add_argument("--names", help="write every result's name to this file (for --distinct)")
    ap.add_argument("--prefix", default="", help="put this before every name (--names)")
    ap.add_argument("--distinct", action="store_true",
                    help="FILEs are --names files: print how many distinct checks they hold")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args(argv[1:])
    if a.distinct:
        print(distinct(a.files))
        return 0
    total = Report()
    for f in a.files or ["-"]:
        text = sys.stdin.read() if f == "-" else open(f, errors="replace").read()
        total.add(parse(text, "" if f == "-" else os.path.basename(f)))
    if a.allow:
        total.judge_skips(load_allow(a.allow), a.context)
    if a.names:
        if a.prefix:
            total.prefix(a.prefix)
        write_names(a.names, total)
    for what, notes in total.failures_with_notes():
        print(f"FAIL {what}")
        for note in notes:  # what the test said before it failed
            print(f"FAIL   {note}")
    print(total.line())
    return 1 if total.failed or not (total.passed + total.skipped) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
