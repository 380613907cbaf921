#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""check-spec.py SPEC UAPI GENL: TAP.  Checks the YAML description of the
"dp" generic netlink family (netlink/dp.yaml) against the kernel's side:
  - commands: names and numbers of enum dp_cmd in UAPI (uapi/linux/dp.h),
    do or dump and GENL_UNS_ADMIN_PERM or GENL_ADMIN_PERM from the ops table in GENL
    (module/dp_genl.c); a do request's attributes must have a policy entry;
  - attributes: names and numbers of enum dp_attr; each one's type as the
    kernel's policy (NLA_U32, NLA_STRING with .len, NLA_BINARY with .len)
    and its nla_put_*() calls say, and as its uapi comment says where that
    starts with a type; the u64 nests (counters, ep-stats) and the pad;
  - ep-stats: its names and numbers as the uapi comment lists them;
  - the family name and version (DP_GENL_NAME, DP_GENL_VERSION), and its
    one global policy (kernel-policy)."""
import glob
import os
import re
import sys

import yaml

spec_path, uapi_path, genl_path = sys.argv[1:4]
spec = yaml.safe_load(open(spec_path))
uapi = open(uapi_path).read()
genl = open(genl_path).read()
results = []


def check(name, ok, diag=""):
    results.append((bool(ok), name, diag))


def enum_body(name):
    m = re.search(r"enum %s \{(.*?)\};" % name, uapi, re.S)
    body = re.sub(r"/\*.*?\*/", lambda c: c.group(0) if c.group(0).count("\n") == 0 else "", m.group(1), flags=re.S)
    return body


def enum_entries(name, prefix):
    """[(spec name, value, comment)] of a uapi enum, UNSPEC and __MAX left out."""
    out, val = [], 0
    for line in enum_body(name).splitlines():
        m = re.match(r"\s*(\w+)\s*(?:=\s*(\d+))?,?\s*(?:/\*\s*(.*?)\s*\*/)?\s*$", line)
        if not m:
            continue
        ident, explicit, comment = m.groups()
        if explicit:
            val = int(explicit)
        if not ident.startswith("__") and not ident.endswith("_UNSPEC"):
            out.append((ident[len(prefix):].lower().replace("_", "-"), val, comment or ""))
        val += 1
    return out


def spec_numbered(items):
    """[(name, value)] of a spec list: value given, else one more than the last."""
    out, val = [], 0
    for it in items:
        val = it.get("value", val + 1)
        out.append((it["name"], val))
    return out


def ident(name, prefix="DP_A_"):
    return prefix + name.upper().replace("-", "_")


# the family
check("family name is DP_GENL_NAME",
      spec.get("name") == re.search(r'#define DP_GENL_NAME\s+"(\w+)"', uapi).group(1))
check("version is DP_GENL_VERSION",
      spec.get("version") == int(re.search(r"#define DP_GENL_VERSION\s+(\d+)", uapi).group(1)))

# one policy for the whole family (struct genl_family .policy), not per op
fam = re.search(r"struct genl_family \w+[^=;]*= \{(.*?)\};", genl, re.S)
glob_policy = bool(fam and re.search(r"\.policy\s*=", fam.group(1)))
check("kernel-policy: %s, as the family's" % spec.get("kernel-policy", "split"),
      (spec.get("kernel-policy") == "global") == glob_policy)

# multicast groups: the spec's, DP_GENL_MCGRP_*, and the family's .mcgrps
groups = {g["name"] for g in spec.get("mcast-groups", {}).get("list", [])}
kgroups = set(re.findall(r'#define DP_GENL_MCGRP_\w+\s+"(\w+)"', uapi))
check("multicast groups equal the DP_GENL_MCGRP_* names", groups == kgroups,
      "spec %s, uapi %s" % (sorted(groups), sorted(kgroups)))
check("the family registers its multicast groups (.mcgrps)",
      bool(fam and re.search(r"\.mcgrps\s*=", fam.group(1))) == bool(groups))

# commands
ops = spec["operations"]["list"]
kcmds = [(n, v) for n, v, _ in enum_entries("dp_cmd", "DP_CMD_")]
check("commands: names and numbers equal enum dp_cmd", spec_numbered(ops) == kcmds,
      "spec %s\nuapi %s" % (spec_numbered(ops), kcmds))
table = {}
for m in re.finditer(r"\{\s*\.cmd\s*=\s*DP_CMD_(\w+),(.*?)\}", genl, re.S):
    table[m.group(1).lower().replace("_", "-")] = m.group(2)
policy = {}
pm = re.search(r"nla_policy dp_genl_policy\[.*?\] = \{(.*?)\};", genl, re.S)
for m in re.finditer(r"\[DP_A_(\w+)\]\s*=\s*\{([^}]*)\}", pm.group(1)):
    policy[m.group(1).lower().replace("_", "-")] = m.group(2)
for op in ops:
    if "event" in op:	# a notification: in no ops table, sent to its group
        check("event %s: to a multicast group of the spec" % op["name"],
              op.get("mcgrp") in groups, "groups %s" % sorted(groups))
        continue
    body = table.get(op["name"])
    if body is None:
        check("command %s: in the kernel's ops table" % op["name"], False)
        continue
    kind = "dump" if ".dumpit" in body else "do"
    check("command %s: %s, as the ops table" % (op["name"], kind), kind in op and
          ("do" if kind == "dump" else "dump") not in op)
    admin = "GENL_UNS_ADMIN_PERM" in body
    init_admin = re.search(r"\bGENL_ADMIN_PERM\b", body) is not None
    check("command %s: %s" % (op["name"], "uns-admin-perm" if admin else
                              "admin-perm" if init_admin else "no privilege"),
          ("uns-admin-perm" in op.get("flags", [])) == admin and
          ("admin-perm" in op.get("flags", [])) == init_admin)
    req = (op.get(kind, {}).get("request") or {}).get("attributes", [])
    check("command %s: request attributes have a policy entry" % op["name"],
          all(a in policy for a in req), "no policy: %s" % [a for a in req if a not in policy])
check("every kernel command is in the spec",
      set(table) == {o["name"] for o in ops if "event" not in o},
      "kernel %s" % sorted(table))

# attributes: names and numbers
sets = {s["name"]: s for s in spec["attribute-sets"]}
attrs = sets["dp"]["attributes"]
kattrs = enum_entries("dp_attr", "DP_A_")
check("attributes: names and numbers equal enum dp_attr", spec_numbered(attrs) == [
    (n, v) for n, v, _ in kattrs], "spec %s\nuapi %s" % (spec_numbered(attrs), kattrs))

# the kernel's types: policy, then the put calls
NLA = {"NLA_U32": "u32", "NLA_STRING": "string", "NLA_BINARY": "binary", "NLA_FLAG": "flag",
       "NLA_S32": "s32", "NLA_U64": "u64", "NLA_NESTED": "nest"}
PUT = {"nla_put_u32": "u32", "nla_put_s32": "s32", "nla_put_string": "string",
       "nla_put": "binary", "nla_put_flag": "flag", "nla_nest_start": "nest",
       "nla_nest_start_noflag": "nest", "nla_put_u64_64bit": "u64"}
IFNAMSIZ = 16
consts = {"IFNAMSIZ": IFNAMSIZ}
# the constants a policy's .len may name: the module's headers
for path in glob.glob(os.path.join(os.path.dirname(genl_path) or ".", "*.h")):
    for m in re.finditer(r"#define (\w+)\s+(\d+)\b", open(path).read()):
        consts[m.group(1)] = int(m.group(2))


def cexpr(e):
    """A policy length: a number, a constant, or "CONSTANT - 1"."""
    names = re.findall(r"[A-Z_][A-Z0-9_]*", e)
    missing = [n for n in names if n not in consts]
    if missing or not re.fullmatch(r"[\w\s+-]+", e):
        return "unknown (%s)" % e
    return eval(re.sub(r"[A-Z_][A-Z0-9_]*", lambda m: str(consts[m.group(0)]), e), {})


kernel = {}  # name -> set of types
for m in re.finditer(r"\b(nla_put\w*|nla_nest_start\w*)\(\s*\w+,\s*DP_A_(\w+)", genl):
    kernel.setdefault(m.group(2).lower().replace("_", "-"), set()).add(PUT[m.group(1)])
for m in re.finditer(r"nla_put_u64_64bit\([^;]*?,\s*DP_A_(\w+)\)", genl):
    kernel.setdefault(m.group(1).lower().replace("_", "-"), set()).add("pad")
for name, body in policy.items():
    kernel.setdefault(name, set()).add(NLA[re.search(r"\.type\s*=\s*(\w+)", body).group(1)])
# nests whose members are u64 by index: nest start, then u64 puts of "i + 1"
u64_nests = set()
for m in re.finditer(r"nla_nest_start\(\s*\w+,\s*DP_A_(\w+)\);(.*?)nla_nest_end", genl, re.S):
    if re.search(r"nla_put_u64_64bit\(\s*\w+,\s*i \+ 1,", m.group(2)):
        u64_nests.add(m.group(1).lower().replace("_", "-"))

COMMENT = {"u32": "u32", "s32": "s32", "string": "string", "binary": "binary",
           "nested": "nest", "flag": "flag"}
for (kname, _, comment), a in zip(kattrs, attrs):
    name, typ = a["name"], a["type"]
    if name != kname:
        continue
    ktypes = kernel.get(name, set())
    want = typ
    if typ == "indexed-array":
        want = "nest"
    ok = ktypes == {want}
    diag = "spec %s, kernel %s" % (typ, sorted(ktypes) or "unused")
    if typ == "pad" and not ktypes:
        # its number is counter 14's inside DP_A_COUNTERS: the numbered
        # nests pad with type 0 (checked below), so nothing emits it
        ok, diag = True, diag + " (reserved)"
    word = comment.split(":")[0].split(",")[0].split()[0] if comment.split() else ""
    if word in COMMENT and COMMENT[word] != want:
        ok, diag = False, diag + ", uapi comment %s" % word
    if name in u64_nests:
        sub = sets.get(a.get("nested-attributes"), {}).get("attributes", [])
        ok = ok and (a.get("sub-type") == "u64" if typ == "indexed-array"
                     else bool(sub) and all(s["type"] == "u64" for s in sub))
        diag += ", a nest of u64 by index in the kernel"
    elif typ == "indexed-array":
        ok, diag = False, diag + ", not a u64 nest in the kernel"
    if name in policy:
        lm = re.search(r"\.len\s*=\s*([^,}]+)", policy[name])
        klen = cexpr(lm.group(1).strip()) if lm else None
        slen = (a.get("checks") or {}).get("max-len")
        ok = ok and klen == slen
        diag += ", policy len %s, spec max-len %s" % (klen, slen)
    check("attribute %s: %s" % (name, typ), ok, diag)

# the u64 nests number their members 1..n: their pad must be type 0
pads = re.findall(r"nla_put_u64_64bit\(\s*\w+,\s*i \+ 1,[^;]*?,\s*(\w+)\)", genl)
check("u64 nests pad with attribute type 0, no member's number",
      bool(pads) and all(p == "DP_A_UNSPEC" for p in pads), "pads %s" % pads)

# ep-stats: numbers and names as the uapi comment lists them
cm = re.search(r"nested u64, the values of struct dp_ep_stats:(.*?)\*/", uapi, re.S)
listed = [(n.replace("_", "-"), int(v)) for v, n in
          re.findall(r"(\d+) (\w+)", re.sub(r"\s*\*\s*", " ", cm.group(1)))]
check("ep-stats: names and numbers as uapi/linux/dp.h lists them",
      spec_numbered(sets["ep-stats"]["attributes"]) == listed,
      "spec %s\nuapi %s" % (spec_numbered(sets["ep-stats"]["attributes"]), listed))

# the edge-state enum
kstates = [n for n, _, _ in enum_entries("dp_edge_state", "DP_EDGE_")]
defs = {d["name"]: d for d in spec.get("definitions", [])}
check("edge-state: entries equal enum dp_edge_state",
      defs.get("edge-state", {}).get("entries") == kstates, "uapi %s" % kstates)
kev = [(n, v) for n, v, _ in enum_entries("dp_event", "DP_EV_")]
sev = defs.get("event", {})
check("event: entries and numbers equal enum dp_event",
      list(zip(sev.get("entries", []), range(sev.get("value-start", 0), 99))) == kev,
      "uapi %s" % kev)

print("TAP version 13")
print("1..%d" % len(results))
for i, (ok, name, diag) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok and diag:
        for line in diag.splitlines():
            print("# " + line)
sys.exit(0 if all(r[0] for r in results) else 1)
