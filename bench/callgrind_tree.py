#!/usr/bin/env python3
"""A callgrind dump as a tree of inclusive costs per unit of work:
`python3 bench/callgrind_tree.py DUMP [--per N] [--root SUBSTRING] [--depth D] [--min K]`.

`callgrind_annotate --inclusive=yes` lists a function once per source file its code was inlined
from (`Sources/…/A.swift:f` and `Sources/…/B.swift:f` are the same function), which makes a
request's parts hard to add up. This reads the dump itself, merges those entries by function
name, and prints from each root (every function whose name contains --root; without it, the
thread entry points no one calls) the callees (a callee reached for part of its cost shows that
share of its own callees' costs: callgrind keeps no calling context beyond one level) whose inclusive cost per unit reaches --min
thousand instructions, down to --depth levels. Names are demangled when `swift-demangle` is on PATH
(shortened: no module prefixes, no argument lists). A function met again below itself (a cycle
callgrind did not split with `'2`) is shown but not expanded.
"""
import argparse
import collections
import re
import shutil
import subprocess
import sys


def parse(path):
    """(self cost per function, {caller: {callee: inclusive cost of the calls}})."""
    names = {}
    self_cost = collections.Counter()
    calls = collections.defaultdict(collections.Counter)
    fn = None
    pending_call = None  # callee of the `calls=` line just read
    cfn = None

    def name(spec):
        m = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not m:
            return spec
        key, text = m.group(1), m.group(2)
        if text is not None:
            names[key] = text
        return names[key]

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[-1]) if len(parts) > 1 else 0
                if pending_call is not None:
                    calls[fn][pending_call] += cost
                    pending_call = None
                elif fn is not None:
                    self_cost[fn] += cost
            elif line.startswith("fn="):
                fn = name(line[3:])
            elif line.startswith("cfn="):
                cfn = name(line[4:])
            elif line.startswith("calls="):
                pending_call = cfn
            # fl=, fi=, fe=, cfi=, cob=, ob=… : files and objects, merged away here.
    return self_cost, calls


def demangler():
    tool = shutil.which("swift-demangle")
    cache = {}

    def short(n):
        if n in cache:
            return cache[n]
        out = n
        if tool and n.startswith("$s"):
            base, _, suffix = n.partition("'")
            try:
                out = subprocess.run([tool, "-simplified", "-compact", base], capture_output=True, text=True).stdout.strip() or n
            except OSError:
                out = n
            if suffix:
                out += "'" + suffix
        out = re.sub(r"\((?:[^()]|\([^()]*\))*\)", "()", out)  # argument lists
        cache[n] = out[:150]
        return cache[n]

    return short


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--per", type=float, default=1, help="divide costs by this (commits, requests)")
    ap.add_argument("--root", action="append", help="substring of a root function's (mangled) name; repeatable")
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--min", type=float, default=5, help="thousand instructions per unit below which a callee is not shown")
    args = ap.parse_args()
    self_cost, calls = parse(args.dump)
    total = sum(self_cost.values())
    incl = {}

    def inclusive(f):
        if f not in incl:
            # A call of a function from itself is already inside its callers' cost.
            incl[f] = self_cost[f] + sum(c for g, c in calls[f].items() if g != f)
        return incl[f]

    short = demangler()
    per = args.per * 1000
    print(f"total {total / per:,.1f}k per unit ({total:,} instructions / {args.per:g})")
    incoming = collections.Counter()
    if args.root:
        roots = [f for f in set(self_cost) | set(calls) if any(r in f for r in args.root)]
    else:
        # Entry points: functions with cost that no counted call accounts for (thread starts,
        # and calls made before instrumentation began: their callers' frames were never counted).
        incoming = collections.Counter()
        for f in calls:
            for g, c in calls[f].items():
                if g != f:
                    incoming[g] += c
        roots = [f for f in set(self_cost) | set(calls) if inclusive(f) - incoming[f] >= args.min * per / 1000 * 1000]
    roots.sort(key=inclusive, reverse=True)

    def show(f, cost, depth, path):
        print(f"{'  ' * depth}{cost / per:8.1f}k  {short(f)}")
        if f in path:
            return
        if depth >= args.depth:
            return
        # Callgrind keeps one set of edges per function, not per calling context: a function
        # reached here for part of its cost passes that share of each callee's cost on.
        scale = cost / inclusive(f) if inclusive(f) else 0
        children = sorted(((g, c * scale) for g, c in calls[f].items()), key=lambda kv: kv[1], reverse=True)
        shown = 0
        for g, c in children:
            if g == f or c / per < args.min:
                continue
            show(g, c, depth + 1, path | {f})
            shown += c
        rest = cost - shown
        if rest / per >= args.min and children:
            print(f"{'  ' * (depth + 1)}{rest / per:8.1f}k  (self and smaller callees)")

    for r in roots:
        own = inclusive(r) - (incoming[r] if not args.root else 0)
        if own / per >= args.min:
            show(r, own, 0, frozenset())
    return 0


if __name__ == "__main__":
    sys.exit(main())
