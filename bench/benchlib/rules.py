"""Rules micro-benchmarks through the CLI users run (`hearth rules check|test`).

Hearth has no in-process rules benchmark hook, so these are end-to-end process timings turned into
per-unit estimates by difference: (4 500-line check − trivial check) ÷ 9 for a 500-line parse (4 500 lines
stay under the 256 KB source limit Firestore enforces), and
(suite of K cases − suite of 1 case) ÷ (K − 1) for one decision. Both include work the real hot path
does not (file reading, JSON decoding of each test case, printing each result), so they are upper bounds.
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
        last = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), last


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
    # Parsing: a 500-line file checks once for validity; the estimate divides a 9× longer file of the
    # same blocks by 9, which keeps process start-up noise (milliseconds) out of a sub-millisecond cost.
    files = {}
    for name, lines, text in (("500", 500, None), ("4500", 4_500, None), ("trivial", 0, TRIVIAL)):
        files[name] = os.path.join(d, f"rules-{name}.rules")
        with open(files[name], "w") as f:
            f.write(text if text is not None else generate_rules(lines))
    try:
        for name in ("500", "4500"):
            _, r = _time_cmd([binary, "rules", "check", files[name]], 1)
            if r.returncode != 0:
                raise NotAvailable(f"hearth rules check of the {name}-line file → exit {r.returncode}: "
                                   f"{' '.join((r.stdout + r.stderr).split())[:200]}")
        t500, _ = _time_cmd([binary, "rules", "check", files["500"]], reps)
        t4500, _ = _time_cmd([binary, "rules", "check", files["4500"]], reps)
        t0, _ = _time_cmd([binary, "rules", "check", files["trivial"]], reps)
        ctx.results.put("rules.parse", "hearth", max(0.0, (t4500 - t0) / 9 * 1e3),
                        check_500_ms=t500 * 1e3, check_4500_ms=t4500 * 1e3, check_trivial_ms=t0 * 1e3)
        ctx.log(f"  rules check: trivial {t0 * 1e3:.1f} ms, 500 lines {t500 * 1e3:.1f} ms, "
                f"4 500 lines {t4500 * 1e3:.1f} ms")
    except NotAvailable as e:
        ctx.results.na("rules.parse", "hearth", str(e))

    shipped = ctx.rules_file
    for key, suite, method in (("rules.eval.create", "files-create.json", "create"),
                               ("rules.eval.get", "files-read.json", "get")):
        try:
            if not shipped or not os.path.exists(shipped):
                raise NotAvailable("rules/firestore.rules is not shipped yet")
            case = _case(ctx.root, suite, method)
            k = ctx.s.rules_cases
            one, many = os.path.join(d, f"suite-{method}-1.json"), os.path.join(d, f"suite-{method}-{k}.json")
            with open(one, "w") as f:
                json.dump({"testCases": [case]}, f)
            with open(many, "w") as f:
                json.dump({"testCases": [case] * k}, f)
            _, r = _time_cmd([binary, "rules", "test", shipped, one], 1)
            if r.returncode != 0:
                raise NotAvailable(f"hearth rules test ({method} of users/{{uid}}/files) → exit {r.returncode}: "
                                   f"{' '.join((r.stdout + r.stderr).split())[:200]}")
            t1, _ = _time_cmd([binary, "rules", "test", shipped, one], reps)
            tk, r = _time_cmd([binary, "rules", "test", shipped, many], max(3, reps // 4))
            if r.returncode != 0:
                raise NotAvailable(f"hearth rules test with {k} cases → exit {r.returncode}")
            ctx.results.put(key, "hearth", max(0.0, (tk - t1) / (k - 1) * 1e6), cases=k,
                            one_case_ms=t1 * 1e3, many_cases_ms=tk * 1e3)
            ctx.log(f"  rules test {method}: 1 case {t1 * 1e3:.1f} ms, {k} cases {tk * 1e3:.1f} ms")
        except NotAvailable as e:
            ctx.results.na(key, "hearth", str(e))
