"""Instructions per request counted by callgrind, published beside the rates (full runs only).

Wall-clock rates on a shared two-core machine move with whatever else runs; instruction counts repeat
to within a few per cent, so they show where a request's CPU goes and whether a change helped. Each
count runs its own Hearth under `valgrind --tool=callgrind --instr-atstart=no` (bench/callgrind_s3.py,
bench/callgrind_get.py) and instruments only while the requests run, after a warm-up. QUICK runs and
machines without valgrind get n/a with the reason.
"""
import shutil

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
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        for k in KEYS:
            ctx.results.na(k, "hearth", "valgrind is not installed (Debian package valgrind)")
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
