#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""json-test.py DPCTL FAKENL_SO: TAP.  Runs every dpctl command against
fakenl.so (a stand-in for dp.ko's generic netlink family) twice, as text and
with -j: the JSON must parse and hold exactly what the text says (the text
is parsed by its own grammar), and a few values the fake serves are checked
in both.  Commands that change the node must print nothing either way and
send the same requests with and without -j."""
import json
import os
import re
import subprocess
import sys
import tempfile

dpctl, fake = sys.argv[1], sys.argv[2]
results = []


def run(args, log=None, stdin=None):
    env = dict(os.environ, LD_PRELOAD=fake)
    if log:
        env["FAKENL_LOG"] = log
    p = subprocess.run([dpctl] + args, capture_output=True, text=True, env=env,
                       input=stdin, timeout=10)
    return p.returncode, p.stdout, p.stderr


def value(tok):
    if tok in ("none", "-"):
        return None
    return int(tok) if re.fullmatch(r"-?\d+", tok) else tok


def pairs(toks):
    if len(toks) % 2:
        raise ValueError("odd name/value list: %r" % toks)
    return {toks[i]: value(toks[i + 1]) for i in range(0, len(toks), 2)}


def parse_node(text):  # "name value" per line; also stats
    return pairs(text.split())


def parse_nart(text):  # "NID MAC [ROUTE]  [# discovered heard_ms N]"
    out = []
    for line in text.splitlines():
        entry, _, comment = line.partition("#")
        nid, mac, *route = entry.split()
        disc = pairs(comment.split()[1:]) if comment else {}
        if comment and comment.split()[0] != "discovered":
            raise ValueError("comment %r" % comment)
        out.append({"nid": int(nid), "lladdr": value(mac),
                    "route": value(route[0]) if route else None,
                    "origin": "discovered" if comment else "static",
                    "heard_ms": disc.get("heard_ms")})
    return out


def parse_ep(text):
    eps = []
    for line in text.splitlines():
        toks = line.split()
        if not line.startswith(" "):
            eps.append(dict(pairs(toks), edges=[], rx_peers=[]))
        elif toks and toks[0] == "edge":
            eps[-1]["edges"].append(pairs(toks[1:]))
        elif toks and toks[0] == "rx_peer":
            eps[-1]["rx_peers"].append(pairs(toks[1:]))
        else:
            eps[-1]["stats"] = pairs(toks)
    return eps


def parse_map(text):
    """The summary comment, then NART lines ("# no NID: " before a host without one)."""
    lines = text.splitlines()
    m = re.fullmatch(r"# myri map: own port (\d+), (\d+) switches, (\d+) hosts, (\d+) probes",
                     lines[0])
    hosts = []
    for line in lines[1:]:
        nid, mac, route = line.replace("# no NID: ", "").split()
        hosts.append({"nid": int(nid), "lladdr": mac, "route": route})
    if len(hosts) != int(m.group(3)):
        raise ValueError("hosts counted %s, listed %d" % (m.group(3), len(hosts)))
    return {"self_port": int(m.group(1)), "switches": int(m.group(2)),
            "probes": int(m.group(4)), "truncated": False, "hosts": hosts}


def map_expect(d):
    return [("own port", d["self_port"] == 2), ("one switch", d["switches"] == 1),
            ("two hosts", [h["nid"] for h in d["hosts"]] == [5, 0]),
            ("route", d["hosts"][0] == {"nid": 5, "lladdr": "00:60:dd:00:00:05",
                                        "route": "80"}),
            ("ports probed", d["probes"] > 8)]


def check(name, ok, diag=""):
    results.append((ok, name, diag))


def compare(args, parse, expect, label=None):
    rc_t, text, err_t = run(args)
    label = label or " ".join(args)
    rc_j, js, err_j = run(["-j"] + args)
    try:
        got = json.loads(js)
        parsed = True
    except ValueError as e:
        got, parsed = "%s: %r" % (e, js), False
    check("dpctl -j %s: exit 0 and the output parses as JSON" % label,
          rc_t == 0 and rc_j == 0 and parsed, err_t + err_j + (got if not parsed else ""))
    if not parsed:
        return
    try:
        want = parse(text)
    except (ValueError, IndexError, KeyError) as e:
        want = "text unparsable: %s: %r" % (e, text)
    check("dpctl -j %s: JSON equals the text output" % label, got == want,
          "json %r\ntext %r" % (got, want))
    try:
        expected = expect(got)
    except (KeyError, IndexError, TypeError) as e:
        expected = [("shape: %s" % e, False)]
    bad = [k for k, ok in expected if not ok]
    check("dpctl %s: the fake's values shown (%d checked)" % (label, len(expected)),
          not bad, "wrong: %s" % bad)


def node_expect(d):
    return [("nid", d.get("nid") == 7), ("backend", d.get("backend") == "netdev"),
            ("ifname", d.get("ifname") == 'eth"0\\'),
            ("lladdr", d.get("lladdr") == "52:54:00:ab:cd:07"),
            ("max_msg", d.get("max_msg") == 1448),
            ("disc_interval_ms", d.get("disc_interval_ms") == 500)]


def nart_expect(v):
    return [("3 entries", len(v) == 3),
            ("16-byte address", v[1]["lladdr"] == ":".join("%02x" % (i * 17) for i in range(16))),
            ("route", v[0]["route"] == "87:80" and v[1]["route"] is None),
            ("origins", [e["origin"] for e in v] == ["static", "discovered", "static"]),
            ("heard_ms of the discovered only", [e["heard_ms"] for e in v] == [None, 120, None]),
            ("no address, older module", v[2] == {"nid": 4000000000, "lladdr": None, "route": None,
                                                  "origin": "static", "heard_ms": None})]


def stats_expect(d):
    return [("tx_bytes 64-bit", d.get("tx_bytes") == (1 << 40) + 1003),
            ("rx_drop_full", d.get("rx_drop_full") == 1039),
            ("discovery's conflicts", d.get("disc_conflict") == 1000 + 3 * 31),
            ("newer counter named", d.get("counter_32") == 99)]


def ep_expect(v):
    e0 = v[0]
    return [("3 endpoints", [e["dpid"] for e in v] == [100, 101, 102]),
            ("continuation joined", [x["nid"] for x in e0["edges"]] == [2, 3, 4]
             and [x["nid"] for x in e0["rx_peers"]] == [2, 4]),
            ("negative credit", e0["edges"][0]["credit_left"] == -64),
            ("failed session errno", e0["edges"][1]["err"] == "ETIMEDOUT"),
            ("idle: no heard_ms", e0["edges"][2]["heard_ms"] is None),
            ("timeouts and undone", [(x.get("timeouts"), x.get("undone"))
                                     for x in e0["edges"]] == [(14, 2), (None, None), (28, 4)]),
            ("raw mode and tx_seq", v[1]["mode"] == "raw" and v[1]["edges"] == [
                {"nid": 2, "dpid": 201, "tx_seq": 42}]),
            ("pool bytes taken, messages open", e0["taken"] == 2 * 1088 and e0["open"] == 1),
            ("writes corked, a u64", e0["corked"] == 5000000100),
            ("older module: six stats", len(v[1]["stats"]) == 6),
            ("older module: no taken, no open, no corked",
             "taken" not in v[1] and "open" not in v[1] and "corked" not in v[1]),
            ("no bind flags: no mode", "mode" not in v[2] and v[2]["admit"] == "uid")]


compare(["node"], parse_node, node_expect)
compare(["node", "show"], parse_node, node_expect)
compare(["nart"], parse_nart, nart_expect)
compare(["nart", "show"], parse_nart, nart_expect)
compare(["stats"], parse_node, stats_expect)
compare(["stats", "rx_drop_full"], lambda t: {"rx_drop_full": int(t)},
        lambda d: [("value", d == {"rx_drop_full": 1039})])
compare(["ep"], parse_ep, ep_expect)
compare(["discover"], parse_node,
        lambda d: [("on every 500 ms", d == {"discover": "on", "interval_ms": 500})])
compare(["myri", "map", "show", "ports", "8", "wait", "1"], parse_map, map_expect,
        "myri map show")

with tempfile.TemporaryDirectory() as tmp:
    nart = os.path.join(tmp, "nart")
    with open(nart, "w") as f:
        f.write("# three nodes\n1 52:54:00:00:00:01\n\n2 52:54:00:00:00:02  # b\n"
                "3 00:60:dd:00:00:02 87:80\n")
    compare(["nart", "check", nart], lambda t: {"entries": int(t.split()[0])}
            if t.split()[1:] == ["entries"] else None,
            lambda d: [("entries", d == {"entries": 3})], "nart check FILE")

    for args in (["node", "set", "nid", "3", "dev", "eth0"], ["node", "set", "backend", "netdev"],
                 ["node", "detach"], ["nart", "add", "9", "52:54:00:00:00:09"],
                 ["nart", "add", "9", "00:60:dd:00:00:09", "87:80"],
                 ["nart", "del", "9"], ["nart", "flush"], ["nart", "load", nart],
                 ["stats", "reset"], ["discover", "on"], ["discover", "on", "250"],
                 ["discover", "off"]):
        logs = []
        outs = []
        for j in ([], ["-j"]):
            log = os.path.join(tmp, "log%d" % len(logs))
            rc, out, err = run(j + args, log)
            outs.append((rc, out, err))
            logs.append(open(log).read() if os.path.exists(log) else "")
        check("dpctl [-j] %s: exit 0, no output, the same requests"
              % " ".join(args).replace(nart, "FILE"),
              all(o == (0, "", "") for o in outs) and logs[0] and logs[0] == logs[1],
              "%r %r" % (outs, logs))

    # myri map prints the map, then loads the host with a NID (NID 5) only
    outs, logs = [], []
    for j in ([], ["-j"]):
        log = os.path.join(tmp, "map%d" % len(logs))
        outs.append(run(j + ["myri", "map", "ports", "4", "wait", "1"], log))
        logs.append(open(log).read() if os.path.exists(log) else "")
    sets = [line for line in logs[0].splitlines() if line.startswith("cmd %d " % 5)]
    check("dpctl [-j] myri map: exit 0, the same requests, one NART_SET (the host with a NID)",
          all(o[0] == 0 and o[1] and not o[2] for o in outs) and logs[0] == logs[1] and
          len(sets) == 1 and logs[0].count("cmd %d " % 11) >= 3, "%r %r" % (outs, logs))



# ep watch MS COUNT: COUNT dumps, each what "ep" prints: text leads each with
# "# t_ms N" (N rising from 0), JSON prints each as one array on its own line.
def watch_check():
    rc, one, err = run(["ep"])
    rcj, onej, errj = run(["-j", "ep"])
    rc, out, err = run(["ep", "watch", "20", "3"])
    parts = re.split(r"^# t_ms (\d+)\n", out, flags=re.M)
    t = [int(x) for x in parts[1::2]]
    check("dpctl ep watch 20 3: 3 dumps, each as dpctl ep's, t_ms from 0 rising",
          rc == 0 and not err and parts[0] == "" and parts[2::2] == [one] * 3
          and len(t) == 3 and t[0] < 20 and t[1] >= 20 and t[2] >= t[1] + 20,
          "%r" % ((rc, out, err),))
    rc, out, err = run(["-j", "ep", "watch", "10", "2"])
    lines = out.splitlines()
    ok = rc == 0 and not err and len(lines) == 2 and onej.count("\n") == 1
    try:
        ok = ok and [json.loads(x) for x in lines] == [json.loads(onej)] * 2
    except ValueError:
        ok = False
    check("dpctl -j ep watch 10 2: 2 lines, each dpctl -j ep's array", ok,
          "%r" % ((rc, out, err),))


watch_check()

# Refused before anything is sent: an interval out of range, a bad word.
for args in (["discover", "on", "99"], ["discover", "on", "60001"], ["discover", "on", "x"],
             ["discover", "maybe"], ["ep", "watch"], ["ep", "watch", "0"],
             ["ep", "watch", "60001"], ["ep", "watch", "10", "0"], ["ep", "watch", "10", "1", "2"],
             ["ep", "show"]):
    rc, out, err = run(args)
    check("dpctl %s: refused" % " ".join(args), rc != 0 and not out, "%r" % ((rc, out, err),))

print("TAP version 13")
print("1..%d" % len(results))
for i, (ok, name, diag) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok:
        for line in diag.splitlines():
            print("# " + line)
sys.exit(0 if all(r[0] for r in results) else 1)
