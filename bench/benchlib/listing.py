"""Firestore documents.list: the first page of the runQuery collections (1,000 … 100,000 documents).

`fsrows.py` times `list_load` on each collection it seeded, for Hearth and for the official emulator
alike (same user token, same rules), in the rounds of `pairs.py`. A page is an indexed range read, so
its latency should not grow with the collection: `fs.list_flat` compares the largest collection with
the smallest.
"""
from .context import DOCS
from .httpc import Client, NotAvailable, expect
from .loadgen import require_clean
from .pairs import Load
from .report import Row

PAGE = 50  # the data browser's page


def warm_up(ctx, port, req, name, system):
    """An untimed wrk run of `req` before the timed rounds, for every system alike (the JVM a longer one,
    as the gRPC rows have): the query and list rows used to warm only the peer, so Hearth's first timed
    row after a seed ran cold (docs/benchmarks.md, listbench). None in QUICK runs."""
    if not ctx.quick:
        ctx.wrk.once(port, [req], 1, f"{name}-warmup", duration=3 if system != "hearth" else 1, profile=False)


def list_load(ctx, port, user, size, system):
    """A `pairs.Load` of GET …/users/{uid}/files?pageSize=50 (user token) on a collection of `size`
    documents, checked once for the first 50 names and a next page; warm_up before the rounds."""
    path = f"{DOCS}/users/{user.uid}/files?pageSize={PAGE}"
    headers = {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {user.id_token}"}
    c = Client(port)
    try:
        r = expect(c.request("GET", path, headers=headers), f"{system} Firestore documents.list")
    finally:
        c.close()
    body = r.json() or {}
    got = [d.get("name", "").rsplit("/", 1)[-1] for d in body.get("documents", [])]
    want = [f"f{i:06d}" for i in range(min(PAGE, size))]
    if got != want or not body.get("nextPageToken"):
        raise NotAvailable(f"documents.list returned {got[:3]}… instead of {want[:3]}… with a next page")
    req = {"method": "GET", "path": path, "headers": headers}

    def once():
        s = require_clean(ctx.wrk.once(port, [req], 1, f"{system}-fs-list-{size}", profile=system == "hearth"),
                          f"{system} Firestore documents.list")
        return s["rps"], {"wrk": s}
    return Load(once, lambda: warm_up(ctx, port, req, f"{system}-fs-list-{size}", system))


def rows(ctx, emu, x10):
    """The list rows beside the runQuery rows."""
    q = ctx.s.query_sizes
    out = [Row(f"fs.list.{size}", f"Firestore documents.list first page (pageSize {PAGE}), {size:,} docs, 1 conn",
               "req/s", peers=emu, target=x10) for size in q]
    out.append(Row("fs.list_flat", f"documents.list page latency at {q[-1]:,} vs {q[0]:,} docs", "µs",
                   hearth_key=(f"fs.list_latency.{q[-1]}", "hearth"),
                   ceilings=[(f"at {q[0]:,} docs", (f"fs.list_latency.{q[0]}", "hearth"))],
                   target=("max_ratio", f"at {q[0]:,} docs", 2.0, f"≤ 2× the {q[0]:,}-doc latency"),
                   higher_is_better=False, plain_ratio=True))
    return out
