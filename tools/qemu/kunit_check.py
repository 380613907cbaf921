#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check a guest's kselftest run with a parser we did not write: the kernel
tree's tools/testing/kunit/kunit_parser.py.

  kunit_check.py KTREE OUT_LOG

OUT_LOG is a guest's ttyS2 log of cluster.py --mode kselftest.  The
framework's own document (run_kselftest.sh -c dp: TAP 13, one result per
test) is parsed as it is, then every test's nested KTAP (the lines the runner
printed with "# " before them) on its own.  Each must parse with status
SUCCESS and no parse errors, and the counts of the nested KTAP must equal
those of our ktap.py.  Prints both parsers' counts; the last line is
"P passed, F failed, S skipped" of kunit_parser's nested counts, with one
failure more for every disagreement; exit 1 on any.
"""
import io
import os
import re
import sys
import contextlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cluster  # noqa: E402
import ktap  # noqa: E402


def kunit(parser, lines):
    """kunit_parser's Test for these lines, and what it printed."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        test = parser.parse_run_tests(line + "\n" for line in lines)
    return test, buf.getvalue()


def main(argv):
    ktree, log = argv[1], argv[2]
    sys.path.insert(0, os.path.join(ktree, "tools", "testing", "kunit"))
    import kunit_parser
    body = open(log, errors="replace").read().replace("\r", "").splitlines()
    docs = [d for d in cluster.documents(body)[0] if d[0] == "kselftest"]
    problems = []
    if not docs:
        print("kunit_check: no kselftest document in", log)
        print("0 passed, 1 failed, 0 skipped")
        return 1
    text = docs[0][2]
    top, out = kunit(kunit_parser, text)
    print(f"kunit_check: run_kselftest.sh's TAP: status {top.status.name}, {top.counts}")
    if top.status != kunit_parser.TestStatus.SUCCESS or top.counts.errors:
        problems.append(f"the framework's TAP: {top.status.name}, {top.counts}")
        sys.stdout.write(out[-2000:])
    passed = failed = skipped = 0
    nested, cur = [], None
    for line in text:
        if cluster.KSFT_HEAD.match(line):
            cur = []
            nested.append((cluster.KSFT_HEAD.match(line).group(2), cur))
        elif cur is not None and cluster.KSFT_RESULT.match(line):
            cur = None
        elif cur is not None and line.startswith("#"):
            cur.append(line[2:] if line.startswith("# ") else line[1:])
    for name, lines in nested:
        t, out = kunit(kunit_parser, lines)
        ours = ktap.parse("\n".join(lines))
        c = t.counts
        print(f"kunit_check: {name}: kunit_parser: status {t.status.name}, {c}; "
              f"ktap.py: {ours.line()}")
        passed, failed, skipped = passed + c.passed, failed + c.failed + c.crashed, \
            skipped + c.skipped
        if t.status != kunit_parser.TestStatus.SUCCESS or c.errors:
            problems.append(f"{name}: kunit_parser says {t.status.name}, {c}")
            sys.stdout.write("".join(ln + "\n" for ln in out.splitlines()
                                     if re.search(r"(?i)error|fail|crash", ln))[-3000:])
        if (c.passed, c.failed + c.crashed, c.skipped) != \
                (ours.passed, ours.failed, ours.skipped):
            problems.append(f"{name}: kunit_parser counts {c} but ktap.py {ours.line()}")
    if not nested:
        problems.append("no test of collection dp in the framework's output")
    for p in problems:
        print(f"FAIL {p}")
    print(f"{passed} passed, {failed + len(problems)} failed, {skipped} skipped")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
