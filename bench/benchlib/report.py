"""Results, targets, the table on stdout and the JSON in .build/bench/latest.json."""
import os
import platform
import re
import shutil
import subprocess


class NA:
    """A value that could not be measured, with the reason."""

    def __init__(self, reason):
        self.reason = reason

    def __repr__(self):
        return f"n/a: {self.reason}"


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class Results:
    """Measured values keyed by (scenario key, system), plus details for the JSON."""

    def __init__(self):
        self.values = {}
        self.details = {}

    def put(self, key, system, value, **details):
        self.values[(key, system)] = value
        if details:
            self.details[(key, system)] = details

    def na(self, key, system, reason):
        self.values[(key, system)] = NA(reason)

    def get(self, key, system):
        return self.values.get((key, system))


def fmt(v, unit):
    if v is None:
        return "—"
    if isinstance(v, NA):
        return "n/a"
    if unit in ("req/s", "flows/s", "commits/s", "calls/s", "txn/s"):
        return f"{v:,.0f} {unit}"
    if unit == "MB/s":
        return f"{v:,.0f} MB/s"
    if unit == "ms":
        return f"{v:,.1f} ms" if v < 100 else f"{v:,.0f} ms"
    if unit == "µs":
        return f"{v:,.2f} µs" if v < 10 else f"{v:,.1f} µs"
    if unit == "MiB":
        return f"{v:,.1f} MiB"
    if unit == "instructions":
        return f"{v / 1000:,.0f}k instructions"
    if unit == "threads":
        return f"{v:+,.0f}"
    return f"{v:,.3g} {unit}"


def ratio_text(r):
    if r >= 10:
        return f"{r:,.0f}×"
    return f"{r:.2f}×"


class Row:
    """One table line: Hearth against peers and ceilings for one scenario.

    `peers`/`ceilings` are lists of (label, system key); `target` is (kind, reference label or None,
    threshold, text), or a list of them (met when every one that can be judged is), with kind "max"
    (Hearth ≤ threshold), "min" (Hearth ≥ threshold), "min_ratio" (Hearth ÷ reference ≥ threshold),
    "max_ratio" (Hearth ÷ reference ≤ threshold) or "max_inverse_ratio" (reference ÷ Hearth ≥
    threshold: a latency or size `threshold`× smaller than the reference's).

    `floor`: the label of a ceiling that is the least any design within the non-negotiables must do
    (the HTTP/2 floor of the one-stream gets), measured in the same rounds. A "min_ratio" target against
    a peer that Hearth misses is then judged "bound" — not met, not NO — when the floor's own ratio to
    that peer is below the threshold too: no design on these libraries passes it on this run's machine.
    With the floor at or above the threshold the miss stays NO."""

    def __init__(self, key, scenario, unit, peers=(), ceilings=(), target=None, higher_is_better=True, note=None,
                 hearth_key=None, plain_ratio=False, floor=None):
        self.key, self.scenario, self.unit = key, scenario, unit
        # Ratios read "Hearth is N× better" (speed-up), or with plain_ratio simply Hearth ÷ reference.
        self.plain_ratio = plain_ratio
        self.peers, self.ceilings = list(peers), list(ceilings)
        self.target, self.higher_is_better, self.note = target, higher_is_better, note
        self.hearth_key = hearth_key or (key, "hearth")
        self.floor = floor

    def evaluate(self, results, judge=True):
        hearth = results.get(*self.hearth_key)
        refs, warnings = {}, {}
        for label, sk in self.peers + self.ceilings:
            k = sk if isinstance(sk, tuple) else (self.key, sk)
            refs[label] = results.get(*k)
            w = results.details.get(k, {}).get("warning")
            if w:
                warnings[label] = w
        ratios = []
        if is_num(hearth):
            for label, v in refs.items():
                if is_num(v) and v > 0 and hearth > 0:
                    r = hearth / v if (self.higher_is_better or self.plain_ratio) else v / hearth
                    ratios.append((label, r))
        verdicts, texts, bounds = [], [], []
        floor = refs.get(self.floor) if self.floor else None
        peer_labels = {l for l, _ in self.peers}
        targets = self.target if isinstance(self.target, list) else ([self.target] if self.target else [])
        for kind, ref, threshold, text in targets:
            texts.append(text)
            one = None
            if judge and is_num(hearth):
                if kind == "max":
                    one = hearth <= threshold
                elif kind == "min":
                    one = hearth >= threshold
                elif kind in ("min_ratio", "max_ratio", "max_inverse_ratio"):
                    rv = refs.get(ref)
                    if is_num(rv) and rv > 0:
                        q = hearth / rv
                        if kind == "min_ratio":
                            one = q >= threshold
                        elif kind == "max_ratio":
                            one = q <= threshold
                        else:  # latencies: the reference takes `threshold`× as long or longer
                            one = rv / max(hearth, 1e-12) >= threshold
            if kind == "min_ratio" and ref in peer_labels and is_num(floor) and is_num(refs.get(ref)) and refs[ref] > 0:
                fq = floor / refs[ref]
                bounds.append({"ceiling": self.floor, "ref": ref, "ratio": fq, "threshold": threshold})
                if judge and one is False and fq < threshold:
                    one = "bound"
            verdicts.append(one)
        met = combine(verdicts)
        target_text = "; ".join(texts)
        rounds = {}
        for system, k in [("hearth", self.hearth_key)] + [(sk, (self.key, sk)) for _, sk in self.peers + self.ceilings
                                                           if not isinstance(sk, tuple)]:
            rs = results.details.get(k, {}).get("rounds")
            if rs:
                rounds[system] = [r["value"] for r in rs if r.get("value") is not None]
        pair = results.details.get(self.hearth_key, {}).get("pair_rounds") or []
        return {
            "rounds": rounds, "disturbed": [sum(1 for r in pair if r["machine"].get("disturbed")), len(pair)],
            "key": self.key, "scenario": self.scenario, "unit": self.unit,
            "hearth": hearth, "refs": refs, "ratios": ratios,
            "target": target_text, "met": met, "note": self.note,
            "peers": [l for l, _ in self.peers], "ceilings": [l for l, _ in self.ceilings],
            "plain_ratio": self.plain_ratio, "warnings": warnings, "bounds": bounds,
        }


def combine(verdicts):
    """A row's Met from its targets' verdicts (True, False, "bound", or None for one that cannot be
    judged, left out): NO when any is missed, else "bound" when any is bound by the floor, else yes
    when every judged one is met; None when none could be judged."""
    judged = [v for v in verdicts if v is not None]
    if not judged:
        return None
    if any(v is False for v in judged):
        return False
    return "bound" if "bound" in judged else True


def render_table(evaluated, quick):
    """A Markdown table (scenario, Hearth, peer, ceiling, ratios, target, met) and the n/a reasons."""
    lines = ["| Scenario | Hearth | Peer | Ceiling | Ratio (>1×: Hearth better) | Rounds (min–max) | Target | Met |",
             "|---|---|---|---|---|---|---|---|"]
    reasons = []
    index = {}
    flagged = False

    def note(subject, reason):
        """The footnote number of `reason`; one note per distinct reason (a peer that is absent is
        absent from every row)."""
        if reason not in index:
            reasons.append((subject, reason))
            index[reason] = len(reasons)
        return index[reason]

    for e in evaluated:
        u = e["unit"]
        h = e["hearth"]
        htext = fmt(h, u)
        if isinstance(h, NA):
            htext = f"n/a [{note(e['scenario'], h.reason)}]"

        def refs_text(labels):
            out = []
            for l in labels:
                v = e["refs"].get(l)
                if v is None:
                    continue
                if isinstance(v, NA):
                    out.append(f"{l}: n/a [{note(e['scenario'] + ' — ' + l, v.reason)}]")
                elif l in e["warnings"]:
                    out.append(f"{l}: {fmt(v, u)} [{note(e['scenario'] + ' — ' + l, e['warnings'][l])}]")
                else:
                    out.append(f"{l}: {fmt(v, u)}")
            return "; ".join(out) or "—"

        if e["plain_ratio"]:
            ratios = "; ".join(f"Hearth ÷ {l} = {r:.2f}" for l, r in e["ratios"]) or "—"
        else:
            ratios = "; ".join(f"{ratio_text(r)} {l}" for l, r in e["ratios"]) or "—"
        if e.get("bounds"):
            # The floor's own ratio to the peer beside Hearth's: what the "bound" verdict rests on.
            ratios += "; " + "; ".join(f"{b['ceiling']} ÷ {b['ref']} = {ratio_text(b['ratio'])}" for b in e["bounds"])
        met = {True: "yes", False: "**NO**", None: "—", "bound": "bound"}[e["met"]]
        if quick and e["target"]:
            met = "(quick)"
        scen = e["scenario"] + (f" ({e['note']})" if e["note"] else "")
        lines.append(f"| {scen} | {htext} | {refs_text(e['peers'])} | {refs_text(e['ceilings'])} | {ratios} | "
                     f"{rounds_text(e)} | {e['target'] or '—'} | {met} |")
        flagged = flagged or e["disturbed"][0] > 0
    notes = [f"[{i}] {s}: {r}" for i, (s, r) in enumerate(reasons, 1)]
    if flagged:
        notes.append("⚑ k/N: k of the row's N rounds (both sides) ran while the hypervisor stole CPU or other "
                     "processes (other tenants, the idle peer server) used it; each round's figures are in the "
                     "JSON report (`pair_rounds`).")
    return "\n".join(lines), notes


def rounds_text(e):
    """Every side's rounds as min–max (one value when it ran once), then ⚑ k/N when k rounds of the
    row were disturbed: "hearth 10,512–10,746; emulator 1,050–1,091 ⚑1/6"."""
    parts = []
    for system, values in e["rounds"].items():
        if not values:
            continue
        lo, hi = (bare(fmt(v, e["unit"]), e["unit"]) for v in (min(values), max(values)))
        parts.append(f"{system} {lo}" + (f"–{hi}" if len(values) > 1 else ""))
    if not parts:
        return "—"
    k, n = e["disturbed"]
    return "; ".join(parts) + (f" ⚑{k}/{n}" if k else "")


def bare(text, unit):
    """A formatted value without its unit (the column's cells repeat the row's)."""
    return text[:-len(unit)].strip() if text.endswith(unit) else text


def jsonable(v):
    if isinstance(v, NA):
        return {"na": v.reason}
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def _run(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        return (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return ""


def machine_info(hearth_bin, moto_bin):
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            cpu = m.group(1).strip() if m else ""
    except OSError:
        pass
    free = _run(["free", "-h"])
    mem = ""
    for line in free.splitlines():
        if line.startswith("Mem:"):
            mem = line.split()[1]
    info = {
        "nproc": _run(["nproc"]),
        "cpu": cpu,
        "memory": mem,
        "free_h": free,
        "kernel": platform.release(),
        "loadavg_at_end": loadavg(),
        "wrk": _run(["wrk", "-v"]).splitlines()[0] if shutil.which("wrk") else "",
        "nginx": _run([shutil.which("nginx") or "/usr/sbin/nginx", "-v"]),
        "moto": _run([moto_bin.replace("moto_server", "python"), "-c",
                      "import moto; print('moto', moto.__version__)"]) if os.path.exists(moto_bin) else "",
        "hearth": _run([hearth_bin, "--version"]) if os.access(hearth_bin, os.X_OK) else "missing",
        "hearth_binary": hearth_bin,
        "libmicrohttpd": _run(["dpkg-query", "-W", "-f=${Version}", "libmicrohttpd-dev"]),
        "sqlite": _run(["dpkg-query", "-W", "-f=${Version}", "libsqlite3-dev"]),
    }
    return info
