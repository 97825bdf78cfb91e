#!/usr/bin/env python3
"""The link order of Hearth's code: `python3 bench/startup_order.py [--hearth-bin B] [--part
requests|startup|both] [-o linker/hearth.order]`.

The release build (Makefile, RELEASE_FLAGS) hands `linker/hearth.order` to lld as
`--symbol-ordering-file`, so the functions it names sit side by side at the start of `.text`, in two
sections (a `#` line starts each; lld skips such lines):

- **requests**: every function the binary defines that ran while the S3 small-object requests of
  `make bench` were served (the presigned GET first, then what the header-signed GET and the presigned
  PUT add), then what the Firestore requests of the one-connection / one-stream rows add (REST
  `:commit` at one connection, fs.commit.c1; gRPC GetDocument at one stream from h2load and from
  grpcload's light client, grpc.get.s1 and grpc.get.light.s1; grpcload's light REST transactions,
  fs.txn.light.c16), under `valgrind --tool=callgrind` instrumenting only while the requests ran (the
  requests and seeding of `bench/callgrind_s3.py`, `callgrind_commit.py`, `callgrind_get.py` and
  `callgrind_txnclient.py`'s client). The package's own functions come first, in that order, then
  the runtime's and libraries'. Spread over 18 MiB of text, the presigned GET's ~1,500 lines of code
  sat on ~200 pages; side by side they take a few dozen, which the instruction TLB and caches hold
  between one request and the next (docs/benchmarks.md, *s3get30*, *order30*).
- **start-up**: every function that ran while Hearth started as `make bench` measures its idle RSS (a
  fresh data directory, the shipped rules, every listener; stopped 1 s after its ready file appears):
  the kernel maps a binary's code in whole page-cache folios (up to 2 MiB on this kernel), and
  start-up code spread over 18 MiB of text kept ~11 MiB of it resident (docs/benchmarks.md, *Idle
  memory*). A function in both sections is placed where it first appears (requests).

Each section lists the functions in the order callgrind first met them, one mangled symbol a line.
`--part` regenerates one section and keeps the other as the file has it. A stale file costs time or
memory, never correctness: lld skips names the binary no longer has. Regenerate it after changes to
start-up code or to the request paths from a release build (`make build`). Needs valgrind (Debian
package valgrind), nm (binutils), h2load (nghttp2-client) and Go with golang-google-cloud-dev (bench/grpcload).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib.instructions import control  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTIONS = ("requests", "start-up")
HEADER = ("# Link order of hearth's functions for lld's --symbol-ordering-file (Makefile, RELEASE_FLAGS), made by\n"
          "# bench/startup_order.py: the S3 small-object and Firestore request paths, then start-up. Lines starting with # are comments.\n")


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


def read_sections(path):
    """The order file's sections: name → symbols (a file without section lines is all start-up)."""
    out = {name: [] for name in SECTIONS}
    current = "start-up"
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("# section: "):
                current = line[len("# section: "):]
            elif line and not line.startswith("#"):
                out.setdefault(current, []).append(line)
    return out


def startup_functions(hearth_bin, work):
    """Functions that ran while Hearth started (as `make bench` measures idle RSS), first-seen order."""
    dump = os.path.join(work, "callgrind.out")
    reg = Registry()
    h = Hearth(reg, hearth_bin, work, data_dir=os.path.join(work, "data"),
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
    return executed_functions(dump)


def release_objects():
    """The object files of the release build's own modules (test modules left out)."""
    objects = glob.glob(os.path.join(ROOT, ".build", "*", "release", "*.build", "**", "*.o"), recursive=True)
    return [o for o in objects if not os.path.dirname(o).split(os.sep)[-1].endswith("Tests.build")]


def own_functions():
    """Functions the package's own modules define (`make build` compiles each into its own section, as
    -function-sections asks), from the release build's object files. lld orders input sections, not
    symbols: a function of the Swift runtime, standard library or Foundation (static archives built
    without per-function sections) brings its whole object's code, often hundreds of KiB, along."""
    objects = release_objects()
    own = set()
    for i in range(0, len(objects), 200):
        out = subprocess.run(["nm", "--defined-only", *objects[i:i + 200]], capture_output=True, text=True).stdout
        own.update(p[2] for p in (line.split() for line in out.splitlines()) if len(p) == 3 and p[1] in "tTwW")
    return own


def firestore_requests(h, work):
    """(kind, run(n)) for the Firestore requests of the rows that miss at one connection or stream, in
    their drivers' shapes: REST `:commit` creates at one connection (callgrind_commit.py, fs.commit.c1),
    gRPC GetDocument at one stream from h2load (callgrind_get.py --only grpc, grpc.get.s1) and from
    grpcload's light client (grpc.get.light.s1), and grpcload's light REST transactions at 16 clients
    (callgrind_txnclient.py's client `raw`, fs.txn.light.c16). The grpcload runs are timed: `n` only
    sets their length (callgrind_get.run_grpcload)."""
    import types
    import callgrind_commit  # noqa: E402 — the bench's requests and seeding
    import callgrind_get  # noqa: E402
    from benchlib import grpcbench  # noqa: E402
    from benchlib.context import DOC_NAME_PREFIX  # noqa: E402
    user = callgrind_get.seed_user(h)
    port = h.port("firestore")
    frame = os.path.join(work, "getdoc.bin")
    with open(frame, "wb") as f:
        f.write(callgrind_get.framed_get(f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f0"))
    grpcload = grpcbench.build_grpcload(types.SimpleNamespace(build=os.path.join(ROOT, ".build"), grpcload=None))
    tags = iter(range(1_000_000))
    return [
        ("fs.commit.c1", lambda n: callgrind_commit.commits(port, user, n, 1, f"order-{next(tags)}")),
        ("grpc.get.s1", lambda n: callgrind_get.grpc_load(frame)(h, user, n)),
        ("grpc.get.light.s1", lambda n: callgrind_get.grpc_light_load(grpcload)(h, user, n)),
        ("fs.txn.light.c16", lambda n: callgrind_get.run_grpcload(
            grpcload, h, user, n, "txn", ["-uid", user.uid, "-tag", f"order-txn-{next(tags)}", "-client", "raw"], 16)),
    ]


def request_functions(hearth_bin, work, n=200, rules=None):
    """Functions that ran while the requests were served, first-seen order: the S3 presigned GET's
    first, then what the header-signed GET and the presigned PUT add, then what the Firestore requests
    of `firestore_requests` add (one dump per kind)."""
    import callgrind_s3  # noqa: E402 — the bench's requests and seeding
    from benchlib.sigv4 import Signer  # noqa: E402
    reg = Registry()
    h = Hearth(reg, hearth_bin, work, data_dir=os.path.join(work, "data"), rules=rules, log_name="hearth-order-requests")
    argv = h.argv()
    h.argv = lambda hub_port=0: ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--demangle=no",
                                 "--compress-strings=no", f"--callgrind-out-file={work}/requests.out"] + argv
    order = {}
    try:
        h.start(timeout=300)
        requests = callgrind_s3.seed(h.port("s3"), Signer())
        kinds = [(kind, lambda count, kind=kind: callgrind_s3.run(h.port("s3"), requests[kind], count))
                 for kind in ("get_presigned", "get_signed", "put_presigned")]
        kinds += firestore_requests(h, work)
        for kind, run in kinds:
            run(20)  # first-call paths, as the counts warm up
            control(h.pid, "-i", "on")
            run(n)
            control(h.pid, "-i", "off")
            control(h.pid, "-d")
            dumps = sorted((f for f in os.listdir(work) if f.startswith("requests.out.")),
                           key=lambda f: os.path.getmtime(os.path.join(work, f)))
            ran = executed_functions(os.path.join(work, dumps[-1]))
            added = sum(1 for name in ran if name not in order)
            for name in ran:
                order.setdefault(name, None)
            print(f"  {kind}: {len(ran)} functions ran, {added} not met before", file=sys.stderr)
    finally:
        reg.stop_all()
    return list(order)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "linker", "hearth.order"))
    ap.add_argument("--part", choices=("requests", "startup", "both"), default="both",
                    help="the section to regenerate (the other is kept as the file has it)")
    args = ap.parse_args()
    for tool in ("valgrind", "nm"):
        if not shutil.which(tool):
            print(f"{tool} is not installed", file=sys.stderr)
            return 2
    # What the run needs, checked before minutes of callgrind rather than found missing after them.
    if not os.access(args.hearth_bin, os.X_OK):
        print(f"no hearth binary at {args.hearth_bin}: build one with `make build` (a release build, as the "
              f"order is for) or name one with --hearth-bin", file=sys.stderr)
        return 2
    if args.part in ("requests", "both") and not release_objects():
        print("no object files of a release build under .build (run `make build` first): the requests section "
              "puts the package's own functions first and needs them to tell which those are", file=sys.stderr)
        return 2
    sections = read_sections(args.output)
    defined = defined_symbols(args.hearth_bin)
    os.makedirs(os.path.join(ROOT, ".build"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="order-", dir=os.path.join(ROOT, ".build"))
    try:
        if args.part in ("requests", "both"):
            # The package's own functions first, side by side; then the runtime's and library code the
            # requests run (each brings its object's whole section: they keep their first-met order).
            ran = [name for name in request_functions(args.hearth_bin, work, rules=os.path.join(ROOT, "rules", "firestore.rules"))
                   if name in defined]
            own = own_functions()
            sections["requests"] = [name for name in ran if name in own] + [name for name in ran if name not in own]
        if args.part in ("startup", "both"):
            sections["start-up"] = [name for name in startup_functions(args.hearth_bin, work) if name in defined]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not sections["requests"] or not sections["start-up"]:
        print("callgrind saw no function of the binary run (or the kept section is empty)", file=sys.stderr)
        return 1
    with open(args.output, "w") as f:
        f.write(HEADER)
        for name in SECTIONS:
            f.write(f"# section: {name}\n" + "\n".join(sections[name]) + "\n")
    placed = set(sections["requests"])
    print(f"{args.output}: {len(sections['requests'])} functions of the requests, "
          f"{len(sections['start-up'])} of start-up ({sum(1 for s in sections['start-up'] if s not in placed)} not among the requests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
