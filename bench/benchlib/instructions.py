"""Instructions counted by callgrind: the one way every bench/callgrind_*.py script runs Hearth under
valgrind and divides what it counted, and the counts published beside the rates (full runs only).

Wall-clock rates on a shared two-core machine move with whatever else runs; instruction counts repeat
to within a few per cent, so they show where a request's CPU goes and whether a change helped. Each
count runs its own Hearth under `valgrind --tool=callgrind --instr-atstart=no` (`counted`) and
instruments only while the load runs, after a warm-up. QUICK runs and machines without valgrind get
n/a with the reason.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from .procs import Hearth, Registry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def spread(n, clients, run):
    """Runs `run(k, count)` on `clients` threads at once, the `n` requests split as evenly as they go
    (the callgrind scripts' concurrent loads), and waits for all of them."""
    per = [n // clients + (1 if k < n % clients else 0) for k in range(clients)]
    threads = [threading.Thread(target=run, args=(k, per[k])) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def missing_tools(extra=()):
    """Why callgrind counts cannot run here (a sentence), or None when valgrind and `extra` are installed."""
    for tool in ("valgrind", "callgrind_control", *extra):
        if not shutil.which(tool):
            return f"{tool} is not installed (Debian package {'nghttp2-client' if tool == 'h2load' else 'valgrind'})"
    return None


def control(pid, *args):
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True, timeout=900)  # a dump under load can take minutes


def total_ir(out_dir):
    """Sum of the `totals:` Ir of the dumps callgrind wrote (each dump covers the time since the last)."""
    total = 0
    for name in os.listdir(out_dir):
        if not name.startswith("callgrind.out"):
            continue
        with open(os.path.join(out_dir, name)) as f:
            for line in f:
                m = re.match(r"totals: (\d+)", line)
                if m:
                    total += int(m.group(1))
    return total


def thread_totals(out_dir):
    """Instructions per thread (callgrind --separate-threads writes a dump per thread), largest first."""
    per = {}
    for name in os.listdir(out_dir):
        m = re.match(r"callgrind\.out\.\d+(?:\.\d+)?-(\d+)$", name)
        if not m:
            continue
        with open(os.path.join(out_dir, name)) as f:
            for line in f:
                t = re.match(r"totals: (\d+)", line)
                if t:
                    per[m.group(1)] = per.get(m.group(1), 0) + int(t.group(1))
    return sorted(per.values(), reverse=True)


def collect(work, keep):
    """The instructions counted in `work`'s dumps; the dumps are kept (for callgrind_annotate) or removed."""
    ir = total_ir(work)
    if keep:
        print(f"kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return ir


def counted(label, hearth_bin, n, prepare, load, rules=None, data_dir=False, keep=False, warm=50, unit="request",
            extra=(), threads=False):
    """Instructions per `unit` while `load(h, state, n)` runs, in a fresh Hearth under callgrind.

    `prepare(h)` seeds what the load needs and returns its state; `load(h, state, warm)` runs once
    uninstrumented first (token caches, prepared statements, first-call paths). `n` counts units (a
    request, a byte); a load may return how many it completed instead (a timed one). With
    `data_dir` Hearth stores on disk as `make bench` runs it, else in memory; `extra` adds
    `hearth start` options (e.g. `--threads`); `threads` also prints the busiest threads' counts
    per unit (a loop thread bounds a row that one connection carries)."""
    work = tempfile.mkdtemp(prefix="cg-", dir=os.path.join(ROOT, ".build"))
    reg = Registry()
    h = Hearth(reg, hearth_bin, work, data_dir=os.path.join(work, "data") if data_dir else None, rules=rules,
               extra=extra, log_name="hearth-cg")
    argv = h.argv()
    h.argv = lambda hub_port=0: ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                                 f"--separate-threads={'yes' if threads else 'no'}",
                                 f"--callgrind-out-file={work}/callgrind.out.%p"] + argv
    try:
        h.start(timeout=300)
        state = prepare(h)
        load(h, state, warm)
        control(h.pid, "-i", "on")
        t0 = time.time()
        n = load(h, state, n) or n
        control(h.pid, "-i", "off")
        control(h.pid, "-d")
        secs = time.time() - t0
    finally:
        reg.stop_all()
    busiest = thread_totals(work)[:4] if threads else []
    ir = collect(work, keep)
    digits = 1 if unit == "byte" else 0
    print(f"{label}: {ir / n:,.{digits}f} instructions per {unit} ({n:,} {unit}s, {secs:.1f}s under callgrind)")
    if busiest:
        print(f"  busiest threads, instructions per {unit}: " + ", ".join(f"{t / n:,.{digits}f}" for t in busiest))
    return ir / n


KEYS = {  # key → (scenario, which measurement)
    "cg.s3.get_presigned": ("S3 4 KiB presigned GET: instructions per request (callgrind, 1 conn)", "s3:get_presigned"),
    "cg.s3.put_presigned": ("S3 4 KiB presigned PUT: instructions per request (callgrind, 1 conn)", "s3:put_presigned"),
    "cg.s3.get_signed": ("S3 4 KiB header-signed GET: instructions per request (callgrind, 1 conn)", "s3:get_signed"),
    "cg.fs.get": ("Firestore get, user token, rules on: instructions per request (callgrind, REST, 1 conn)", "fs:get"),
}


def measure(ctx, n=500):
    """Stores an instruction count per key under system "hearth" (or n/a)."""
    if ctx.quick:
        for k in KEYS:
            ctx.results.na(k, "hearth", "QUICK run (callgrind needs ~2 minutes; the full run measures it)")
        return
    why = missing_tools()
    if why:
        for k in KEYS:
            ctx.results.na(k, "hearth", why)
        return
    import callgrind_get  # noqa: E402 — bench/ is on sys.path (run.py puts it there)
    import callgrind_s3  # noqa: E402
    for key, (_, what) in KEYS.items():
        family, kind = what.split(":")
        try:
            if family == "s3":
                v = callgrind_s3.measure(ctx.hearth_bin, kind, n, keep=False)
            else:
                v = callgrind_get.measure("REST get (user token, rules on)", ctx.hearth_bin, ctx.rules_for_hearth, n,
                                          callgrind_get.rest_load)
            ctx.results.put(key, "hearth", v, requests=n)
            ctx.log(f"  {key}: {v:,.0f} instructions per request")
        except (Exception, SystemExit) as e:  # a failed count is that row's n/a, never the run's end
            ctx.results.na(key, "hearth", f"{type(e).__name__}: {e}")


def rows(Row):
    return [Row(k, scenario, "instructions", higher_is_better=False) for k, (scenario, _) in KEYS.items()]
