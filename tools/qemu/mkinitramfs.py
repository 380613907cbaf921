#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Build the guest initramfs for one kernel version (see docs/harness.md).

Contents: busybox-static with its applet links, iproute2's ip/tc/ss with their
shared libraries and the dynamic loader, the kernel modules the tests need
(decompressed: busybox insmod cannot read .ko.xz/.ko.zst; from
/lib/modules/KVER, or from a modules_install root given by --moddir), dp.ko at
/usr/lib/dp/dp.ko, whatever the other parts installed under the staging
directory (libdp, dpctl, dpperf, selftests) plus the libraries those link
against, the guest init and its helpers, and users root, alice (1001), bob (1002).

The tree is assembled under OUT.d/ and packed as a newc cpio with every file
owned by root and mtime 0, so the archive depends only on its inputs.
"""
import argparse
import gzip
import lzma
import os
import shutil
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Loaded at boot in this order (dependencies first), when the kernel has them
# as modules; built-in ones are skipped.
BOOT_MODULES = ["virtio_pci", "virtio_net", "veth", "sch_netem"]
# In the image for modprobe, not loaded at boot.  The tulip and e1000 drivers
# load when the guest has such a NIC (cluster.py --nic, dpg.modprobe), so that
# by default dp's own tulip backend finds the device unbound.
EXTRA_MODULES = ["tulip", "e1000", "dummy", "ifb", "macvlan", "sch_tbf"]
# Real tools where busybox's applet lacks features (ip netns, tc qdiscs,
# setpriv --reuid).  /bin/sh is dash, as on Debian: busybox-static's ash runs
# its own applets before $PATH (FEATURE_SH_STANDALONE), so under it "ip" would
# be busybox's ip.  bash is there for scripts that ask for it.
HOST_BINARIES = ["/usr/sbin/ip", "/usr/sbin/tc", "/usr/bin/ss", "/usr/bin/setpriv",
                 "/usr/bin/dash", "/usr/bin/bash"]

PASSWD = """root:x:0:0:root:/root:/bin/sh
alice:x:1001:1001:alice:/home/alice:/bin/sh
bob:x:1002:1002:bob:/home/bob:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
"""
GROUP = """root:x:0:
alice:x:1001:
bob:x:1002:
nogroup:x:65534:
"""
SHADOW = """root::19000:0:99999:7:::
alice:!:19000:0:99999:7:::
bob:!:19000:0:99999:7:::
nobody:!:19000:0:99999:7:::
"""


def die(msg):
    sys.exit("mkinitramfs: " + msg)


def mkdirs(root, *paths):
    for p in paths:
        os.makedirs(os.path.join(root, p), exist_ok=True)


def put(root, path, data, mode=0o644):
    dst = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(dst, mode)


def copy_file(root, src, dst=None):
    """Copy src (following symlinks) to the same path (or dst) in root."""
    dst = os.path.join(root, (dst or src).lstrip("/"))
    if os.path.lexists(dst):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(src, dst)


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def shared_libs(path, env):
    """Absolute paths of the libraries (and loader) ldd reports for path."""
    r = subprocess.run(["ldd", path], capture_output=True, text=True, env=env)
    if r.returncode != 0:  # static binary, kernel module, ...
        return []
    libs = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if "not found" in line:
            print(f"mkinitramfs: warning: {path}: {line}", file=sys.stderr)
        elif "=>" in line:
            target = line.split("=>", 1)[1].split("(")[0].strip()
            if target:
                libs.append(target)
        elif line.startswith("/"):
            libs.append(line.split()[0])
    return libs


def add_libs(root, elfs, stage):
    """Copy every library the ELF files need, except those in the stage."""
    env = dict(os.environ)
    if stage:
        libdirs = [os.path.join(stage, d) for d in
                   ("usr/lib", "usr/lib/x86_64-linux-gnu", "usr/local/lib", "lib")]
        env["LD_LIBRARY_PATH"] = ":".join(d for d in libdirs if os.path.isdir(d))
    seen = set()
    for elf in elfs:
        for lib in shared_libs(elf, env):
            if lib in seen or (stage and lib.startswith(stage + "/")):
                continue
            seen.add(lib)
            copy_file(root, lib)


def install_busybox(root):
    bb = "/bin/busybox"
    if not os.path.exists(bb):
        die("/bin/busybox missing (package busybox-static)")
    copy_file(root, bb, "/usr/bin/busybox")
    out = subprocess.run([bb, "--list-full"], capture_output=True, text=True,
                         check=True).stdout
    for applet in out.split():
        if applet == "linuxrc" or applet.endswith("/busybox"):
            continue
        # merged /usr: bin -> usr/bin, sbin -> usr/sbin
        if not applet.startswith("usr/"):
            applet = "usr/" + applet
        dst = os.path.join(root, applet)
        if os.path.lexists(dst):  # a real binary is already there
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.symlink(os.path.relpath(os.path.join(root, "usr/bin/busybox"),
                                   os.path.dirname(dst)), dst)


def strip_ext(rel):
    for ext in (".xz", ".zst", ".gz"):
        if rel.endswith(ext):
            return rel[: -len(ext)]
    return rel


def modname(rel):
    return os.path.basename(strip_ext(rel))[:-3].replace("-", "_")


def read_module(path):
    if path.endswith(".xz"):
        with open(path, "rb") as f:
            return lzma.decompress(f.read())
    if path.endswith(".gz"):
        with open(path, "rb") as f:
            return gzip.decompress(f.read())
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], capture_output=True,
                              check=True).stdout
    with open(path, "rb") as f:
        return f.read()


def install_modules(root, kver, modroot="/"):
    """Copy the modules the guest needs from MODROOT/lib/modules/KVER."""
    mdir = f"/lib/modules/{kver}"
    src = os.path.join(modroot, mdir.lstrip("/"))
    deps, byname = {}, {}
    with open(os.path.join(src, "modules.dep")) as f:
        for line in f:
            mod, _, rest = line.partition(":")
            deps[mod] = rest.split()
            byname[modname(mod)] = mod
    builtin = set()
    with open(os.path.join(src, "modules.builtin")) as f:
        for line in f:
            builtin.add(modname(line.strip()))

    order = []

    def visit(rel):
        if rel in order:
            return
        for d in deps[rel]:
            visit(d)
        order.append(rel)

    for name in BOOT_MODULES + [None] + EXTRA_MODULES:
        if name is None:
            nboot = len(order)
            continue
        if name in builtin:
            continue
        if name not in byname:
            print(f"mkinitramfs: warning: no module {name} in {kver}",
                  file=sys.stderr)
            continue
        visit(byname[name])

    dst_dir = os.path.join(root, mdir.lstrip("/"))
    for rel in order:
        put(root, os.path.join(mdir, strip_ext(rel)),
            read_module(os.path.join(src, rel)))
    for f in ("modules.builtin", "modules.builtin.modinfo", "modules.order"):
        if os.path.exists(os.path.join(src, f)):
            shutil.copy2(os.path.join(src, f), dst_dir)
    # modules.dep and friends for the subset, so modprobe works in the guest
    subprocess.run(["depmod", "-b", root, kver], check=True)
    put(root, "/usr/lib/dp/modules.load",
        "".join(os.path.join(mdir, strip_ext(r)) + "\n" for r in order[:nboot]))
    return [modname(r) for r in order]


def cpio_newc(root, out):
    """Pack root as a newc cpio: uid/gid 0, mtime 0, sorted, plus /dev/console."""
    ino = [1]

    def entry(name, mode, data=b"", rdev=(0, 0), nlink=1):
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (
            ino[0], mode, 0, 0, nlink, 0, len(data), 0, 0,
            rdev[0], rdev[1], len(name_b), 0))
        ino[0] += 1
        out.write(hdr.encode() + name_b)
        out.write(b"\0" * ((4 - (110 + len(name_b)) % 4) % 4))
        out.write(data)
        out.write(b"\0" * ((4 - len(data) % 4) % 4))

    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        names = sorted(dirnames + filenames)
        for n in names:
            full = os.path.join(dirpath, n)
            rel = os.path.normpath(os.path.join(rel_dir, n))
            st = os.lstat(full)
            perm = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                entry(rel, stat.S_IFLNK | 0o777, os.readlink(full).encode())
            elif stat.S_ISDIR(st.st_mode):
                entry(rel, stat.S_IFDIR | perm, nlink=2)
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    entry(rel, stat.S_IFREG | perm, f.read())
    entry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1))
    entry("TRAILER!!!", 0)


def build_tree(root, kver, stage, ko, modroot="/", extra_bins=()):
    if os.path.lexists(root):
        shutil.rmtree(root)
    mkdirs(root, "usr/bin", "usr/sbin", "usr/lib/x86_64-linux-gnu", "usr/lib64",
           "dev", "proc", "sys", "run", "tmp", "etc/dp", "root", "mnt", "var",
           "home/alice", "home/bob", "usr/lib/dp")
    for link, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"),
                         ("lib", "usr/lib"), ("lib64", "usr/lib64"),
                         ("var/run", "../run"), ("var/tmp", "../tmp")):
        os.symlink(target, os.path.join(root, link))
    os.chmod(os.path.join(root, "tmp"), 0o1777)

    elfs = []
    if stage and os.path.isdir(stage):
        # run-time files only: no headers, static libraries or pkg-config data
        shutil.copytree(stage, root, symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("include", "pkgconfig", "*.a"))
        for dirpath, _, filenames in os.walk(stage):
            for n in filenames:
                p = os.path.join(dirpath, n)
                if not os.path.islink(p) and is_elf(p) and not n.endswith(".ko"):
                    elfs.append(p)
    for b in HOST_BINARIES + list(extra_bins):
        if os.path.exists(b):
            copy_file(root, b)
            elfs.append(b)
        else:
            print(f"mkinitramfs: warning: {b} missing", file=sys.stderr)
    add_libs(root, elfs, stage and os.path.abspath(stage))
    os.symlink("dash", os.path.join(root, "usr/bin/sh"))
    install_busybox(root)

    guest = os.path.join(HERE, "guest")
    shutil.copy2(os.path.join(guest, "init"), os.path.join(root, "init"))
    os.chmod(os.path.join(root, "init"), 0o755)
    for tool in ("dp-load", "dp-barrier", "dp-link"):
        shutil.copy2(os.path.join(guest, tool), os.path.join(root, "usr/bin", tool))
        os.chmod(os.path.join(root, "usr/bin", tool), 0o755)
    # init's check of the emulated CPU (cpucheck.c), static: no libraries
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-O2", "-Wall", "-Wextra",
                    "-Werror", "-static", "-o", os.path.join(root, "usr/bin/dpg-cpucheck"),
                    os.path.join(HERE, "cpucheck.c")], check=True)
    # the harness's own guest-side self-tests (cluster.py --mode faults)
    os.makedirs(os.path.join(root, "usr/lib/dp/harness"), exist_ok=True)
    for test in ("faults-selftest.sh",):
        shutil.copy2(os.path.join(guest, test), os.path.join(root, "usr/lib/dp/harness", test))
        os.chmod(os.path.join(root, "usr/lib/dp/harness", test), 0o755)
    if ko and os.path.exists(ko):
        # build/KVER/src/dp.ko keeps the debug info for decoding oopses
        subprocess.run(["strip", "--strip-debug", "-o",
                        os.path.join(root, "usr/lib/dp/dp.ko"), ko], check=True)
    else:
        print(f"mkinitramfs: note: no dp.ko for {kver} ({ko})", file=sys.stderr)
    mods = install_modules(root, kver, modroot)

    put(root, "/etc/passwd", PASSWD)
    put(root, "/etc/group", GROUP)
    put(root, "/etc/shadow", SHADOW, 0o600)
    put(root, "/etc/hostname", "dpguest\n")
    put(root, "/etc/hosts", "127.0.0.1 localhost\n")
    put(root, "/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n")
    put(root, "/etc/ld.so.conf", "/usr/local/lib\n/usr/lib/x86_64-linux-gnu\n/usr/lib\n")
    subprocess.run(["/sbin/ldconfig", "-r", root], check=True)
    return mods


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kver", required=True)
    ap.add_argument("--out", required=True, help="output cpio (.gz: gzip it)")
    ap.add_argument("--stage", help="staging root installed by the other parts")
    ap.add_argument("--ko", help="dp.ko built for KVER")
    ap.add_argument("--moddir", default="/",
                    help="root the kernel's modules were installed under (make "
                         "modules_install INSTALL_MOD_PATH=...; default /)")
    ap.add_argument("--bin", action="append", default=[], metavar="PATH",
                    help="one more host binary (and its libraries) for the image, "
                         "e.g. /usr/bin/perf for make profile; repeatable")
    a = ap.parse_args()

    for b in a.bin:
        if not os.path.exists(b):
            die(f"{b} missing")
    mdir = os.path.join(a.moddir, "lib/modules", a.kver)
    if not os.path.isdir(mdir):
        die(f"{mdir} missing")
    root = a.out + ".d"
    mods = build_tree(root, a.kver, a.stage, a.ko, a.moddir, a.bin)
    tmp = a.out + ".tmp"
    with open(tmp, "wb") as raw:
        if a.out.endswith(".gz"):
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as gz:
                cpio_newc(root, gz)
        else:
            cpio_newc(root, raw)
    os.replace(tmp, a.out)
    print(f"mkinitramfs: {a.out} ({os.path.getsize(a.out) // 1024} KiB, "
          f"modules: {' '.join(mods)})")


if __name__ == "__main__":
    main()
