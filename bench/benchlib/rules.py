"""Rules micro-benchmarks through `hearth rules bench`, which compiles a rules file and judges test
cases in process, on the path Firestore requests take (the verdict without a trace; a denial judged
again with one), reporting medians of five rounds. Parsing is the in-process compile (parse + check)
of a generated 500-line file; one decision is the first ALLOW case of the shipped suites
(`rules/tests/files-*.json`) judged N times. The CLI timings of `hearth rules check` are kept as
extra fields (they add process start-up and file reading).
"""
import json
import os
import statistics
import subprocess
import time

from .httpc import NotAvailable

TRIVIAL = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{document=**} {
      allow read, write: if false;
    }
  }
}
"""


def generate_rules(lines=500):
    """A realistic rules file of about `lines` lines: helper functions and per-collection matches with
    the constructs real files use (keys().hasOnly, is, size, matches, diff().affectedKeys, get/exists)."""
    out = ["rules_version = '2';", "service cloud.firestore {", "  match /databases/{database}/documents {",
           "    function signedIn() {", "      return request.auth != null;", "    }"]
    i = 0
    while len(out) < lines - 24:
        out += [
            f"    function isOwner{i}(uid) {{",
            "      return signedIn() && request.auth.uid == uid;",
            "    }",
            f"    function validItem{i}(d) {{",
            "      return d.keys().hasOnly(['title', 'body', 'tags', 'createdAt', 'visibility'])",
            "        && d.title is string && d.title.size() > 0 && d.title.size() <= 200",
            "        && (!('tags' in d) || (d.tags is list && d.tags.size() <= 10))",
            "        && d.visibility in ['public', 'private']",
            "        && d.createdAt == request.time;",
            "    }",
            f"    match /col{i}/{{uid}}/items/{{itemId}} {{",
            f"      allow read: if isOwner{i}(uid) || resource.data.visibility == 'public';",
            f"      allow create: if isOwner{i}(uid) && validItem{i}(request.resource.data)",
            "        && itemId.matches('^[A-Za-z0-9_-]{1,64}$');",
            f"      allow update: if isOwner{i}(uid)",
            "        && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title', 'body', 'tags']);",
            f"      allow delete: if isOwner{i}(uid)",
            "        && exists(/databases/$(database)/documents/admins/$(request.auth.uid)) == false;",
            "    }",
        ]
        i += 1
    while len(out) < lines - 3:
        out.append("    // padding to the exact line count")
    out += ["  }", "}", ""]
    return "\n".join(out)


def _time_cmd(argv, reps):
    times = []
    last = None
    for _ in range(reps):
        t0 = time.perf_counter()
        last = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), last


def _bench(binary, rules_file, suite_file, iterations):
    """`hearth rules bench --json` → its parsed report."""
    r = subprocess.run([binary, "rules", "bench", rules_file, suite_file, "--iterations", str(iterations), "--json"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise NotAvailable(f"hearth rules bench {os.path.basename(rules_file)} → exit {r.returncode}: "
                           f"{' '.join((r.stdout + r.stderr).split())[:200]}")
    return json.loads(r.stdout)


def _case(root, suite_name, fallback_method):
    """The first ALLOW case of a shipped suite (rules/tests/files-*.json), so the request shape is the
    one the rules' own tests use; a minimal owner request when the suite is not there."""
    path = os.path.join(root, "rules", "tests", suite_name)
    try:
        with open(path) as f:
            for case in json.load(f).get("testCases", []):
                if case.get("expectation") == "ALLOW":
                    return case
    except (OSError, ValueError):
        pass
    return {"expectation": "ALLOW",
            "request": {"auth": {"uid": "u1"}, "method": fallback_method, "time": "2026-01-01T00:00:00Z",
                        "path": "/databases/(default)/documents/users/u1/files/f1"},
            "resource": {"data": {"ownerUid": "u1"}}}


def rules(ctx):
    binary = ctx.hearth_bin
    keys = ("rules.parse", "rules.eval.create", "rules.eval.get")
    if not os.access(binary, os.X_OK):
        for k in keys:
            ctx.results.na(k, "hearth", f"no hearth binary at {binary}")
        return
    d = ctx.run_dir
    reps = ctx.s.rules_reps
    empty = os.path.join(d, "suite-empty.json")
    with open(empty, "w") as f:
        json.dump({"testCases": []}, f)
    try:
        f500 = os.path.join(d, "rules-500.rules")
        with open(f500, "w") as f:
            f.write(generate_rules(500))
        _, r = _time_cmd([binary, "rules", "check", f500], 1)
        if r.returncode != 0:
            raise NotAvailable(f"hearth rules check of the 500-line file → exit {r.returncode}: "
                               f"{' '.join((r.stdout + r.stderr).split())[:200]}")
        report = _bench(binary, f500, empty, 1)
        t_check, _ = _time_cmd([binary, "rules", "check", f500], reps)
        ctx.results.put("rules.parse", "hearth", report["compileMs"], cli_check_500_ms=t_check * 1e3)
        ctx.log(f"  rules compile of 500 lines {report['compileMs']:.2f} ms in process; "
                f"`hearth rules check` {t_check * 1e3:.1f} ms")
    except NotAvailable as e:
        ctx.results.na("rules.parse", "hearth", str(e))

    shipped = ctx.rules_file
    for key, suite, method in (("rules.eval.create", "files-create.json", "create"),
                               ("rules.eval.get", "files-read.json", "get")):
        try:
            if not shipped or not os.path.exists(shipped):
                raise NotAvailable("rules/firestore.rules is not shipped yet")
            case = _case(ctx.root, suite, method)
            one = os.path.join(d, f"suite-{method}-1.json")
            with open(one, "w") as f:
                json.dump({"testCases": [case]}, f)
            report = _bench(binary, shipped, one, ctx.s.rules_cases)
            row = report["cases"][0]
            if not row["allowed"]:
                raise NotAvailable(f"the shipped rules deny the first ALLOW case of {suite}")
            ctx.results.put(key, "hearth", row["nsPerDecision"] / 1e3, iterations=report["iterations"],
                            with_coverage_us=row["nsPerDecisionWithCoverage"] / 1e3)
            ctx.log(f"  rules {method}: {row['nsPerDecision'] / 1e3:.2f} µs/decision in process "
                    f"({row['nsPerDecisionWithCoverage'] / 1e3:.2f} µs with coverage)")
        except (NotAvailable, KeyError, IndexError, ValueError) as e:
            ctx.results.na(key, "hearth", str(e))
