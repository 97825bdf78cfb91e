#!/usr/bin/env python3
"""The link order of the code Hearth runs at start-up: `python3 bench/startup_order.py [--hearth-bin B]
[-o linker/startup.order]`.

Starts Hearth as `make bench` measures its idle RSS (a fresh data directory, the shipped rules, every
listener) under `valgrind --tool=callgrind`, stops it 1 s after its ready file appears, and writes
every function that ran and that the binary defines, one symbol a line, in the order callgrind first
met them. The release build (Makefile, RELEASE_FLAGS) hands the file to lld as
`--symbol-ordering-file`, so those functions sit side by side at the start of `.text`: the kernel maps
a binary's code in whole page-cache folios (up to 2 MiB on this kernel), and start-up code spread over
18 MiB of text kept ~11 MiB of it resident (docs/benchmarks.md, *Idle memory*).

A stale file costs memory, never correctness: lld skips names the binary no longer has. Regenerate it
after changes to start-up code from a release build (`make build`). Needs valgrind (Debian package
valgrind) and nm (binutils).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib.procs import Hearth, Registry  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def executed_functions(dump):
    """Function names in a callgrind dump (written with --compress-strings=no), first-seen order."""
    seen = {}
    with open(dump, errors="replace") as f:
        for line in f:
            m = re.match(r"c?fn=(.+)", line)
            if m:
                seen.setdefault(m.group(1).strip(), None)
    return list(seen)


def defined_symbols(binary):
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    return {parts[2] for parts in (line.split() for line in out.splitlines()) if len(parts) == 3}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "linker", "startup.order"))
    args = ap.parse_args()
    for tool in ("valgrind", "nm"):
        if not shutil.which(tool):
            print(f"{tool} is not installed", file=sys.stderr)
            return 2
    work = tempfile.mkdtemp(prefix="order-", dir=os.path.join(ROOT, ".build"))
    dump = os.path.join(work, "callgrind.out")
    reg = Registry()
    h = Hearth(reg, args.hearth_bin, work, data_dir=os.path.join(work, "data"),
               rules=os.path.join(ROOT, "rules", "firestore.rules"), log_name="hearth-order")
    argv = h.argv()
    # Mangled names (what the linker matches) and no name compression (one name per line).
    h.argv = lambda hub_port=0: ["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
                                 f"--callgrind-out-file={dump}"] + argv
    try:
        h.start(timeout=300)
        time.sleep(1)  # as make bench waits before it reads VmRSS
    finally:
        reg.stop_all()  # SIGTERM: callgrind writes the dump as the process exits
    try:
        ran = executed_functions(dump)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    defined = defined_symbols(args.hearth_bin)
    order = [name for name in ran if name in defined]
    if not order:
        print("callgrind saw no function of the binary run", file=sys.stderr)
        return 1
    with open(args.output, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"{args.output}: {len(order)} of {len(ran)} functions that ran at start-up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
