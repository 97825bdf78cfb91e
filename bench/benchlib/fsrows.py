"""The Firestore rows of `make bench`: Hearth and the official Cloud Firestore emulator side by side.

Both servers stay up for the whole phase and every row with a peer runs in interleaved rounds
(`pairs.py`): REST get, commit and batchGet; gRPC GetDocument (h2load and the light client), Commit, the
Write stream and the REST transaction (through net/http and through grpcload's light HTTP/1.1 client);
with the HTTP/2 floor (`h2floor.py`: a polling and a blocking floor loop, fresh processes for the
gRPC rows) as two more sides of the one-stream gets' rounds; then, on a fresh emulator (`fresh_peer`), gRPC RunQuery and BatchGetDocuments, runQuery and
documents.list on 1,000 and 10,000 documents; then the listener rows, last, because the emulator's
1,000-listener attempt can leave its JVM unresponsive (the eighth session's run). Hearth's rows without
a peer (100,000 documents, the grpc-go client rows) run in the same phase, in rounds of Hearth alone.

The emulator gets the same rules file, the same users' ID tokens (signed up on Hearth's Auth), the same
data and the same load generators, and a longer warm-up before its rounds (JIT); QUICK runs skip it
unless asked (`--peer`).
"""
import os
import time

from . import firebase, grpcbench, grpcreads, h2floor, listing
from .httpc import NotAvailable
from .pairs import HEARTH, PEER, Pairing, Side
from .procs import OfficialFirestore, proc_status
from .s3 import run_point

# The emulator never had 10,000 idle listeners current: "only 0 of 10000 listeners became current
# within 240s" in every full run that tried (docs/benchmarks.md, runs of 2 and 3 December). Its attempt
# is capped at this many seconds, the reason recorded; Hearth keeps the full 240 s allowance.
PEER_IDLE_TIMEOUT = 30

REST_KEYS = ["fs.get.c1", "fs.get.c16", "fs.commit.c1", "fs.commit.c16", "fs.batchget.c16"]
GRPC_KEYS = ["grpc.get.s1", "grpc.get.s16", "grpc.get.light.s1", "grpc.get.light.s16", "grpc.commit.s16", "rt.write.s16"]
GRPCGO_KEYS = ["grpc.commit.grpcgo.s16", "rt.write.grpcgo.s16"]
# The transaction through Go's net/http (no target: its client's CPU competes with the servers') and
# through grpcload's light HTTP/1.1 client (the judged row), both against the emulator.
TXN_KEYS = list(grpcbench.TXN_CLIENTS)


def rt_keys(ctx):
    return ([f"rt.latency.{n}" for n in ctx.s.listener_counts] + [f"rt.latency99.{n}" for n in ctx.s.listener_counts]
            + [f"rt.latency99.grpcgo.{ctx.s.listener_counts[-1]}", "rt.idle.rss", "rt.idle.threads"])


def query_keys(sizes):
    return ([f"fs.query.{n}" for n in sizes] + [f"fs.query_latency.{n}" for n in sizes]
            + [f"fs.list.{n}" for n in sizes] + [f"fs.list_latency.{n}" for n in sizes])


def hearth_keys(ctx):
    """Every key this phase stores for Hearth (n/a with one reason when Hearth is not running)."""
    return (REST_KEYS + ["rules.insitu"] + GRPC_KEYS + GRPCGO_KEYS + TXN_KEYS + grpcreads.KEYS
            + query_keys(ctx.s.query_sizes) + ["footprint.docs"] + rt_keys(ctx))


def peer_keys(ctx):
    return (REST_KEYS + GRPC_KEYS + TXN_KEYS + grpcreads.KEYS + query_keys(ctx.s.query_sizes[:2])
            + [k for k in rt_keys(ctx) if ".grpcgo." not in k] + ["startup.empty", "footprint.idle"])


def signer(auth_port):
    """sign_up(email) → a fresh user on Hearth's Auth (its tokens work on the official emulator too)."""
    def sign_up(email):
        c = firebase.Client(auth_port)
        try:
            return firebase.sign_up(c, email)
        finally:
            c.close()
    return sign_up


def start_peer(ctx):
    """The official emulator started as users start it, its start-up time and idle RSS recorded; None
    (with every peer key n/a and the reason) when it is switched off, absent or does not start."""
    if not ctx.peer:
        ctx.log("peer: the official Firestore emulator is off (QUICK runs skip it unless --peer)")
        return None
    if not OfficialFirestore.available():
        for k in peer_keys(ctx):
            ctx.results.na(k, PEER, "gcloud (Google Cloud CLI with the Firestore emulator) is not installed")
        return None
    ctx.log("peer: the official Cloud Firestore emulator")
    emu = OfficialFirestore(ctx.registry, ctx.run_dir, ctx.rules_for_hearth)
    try:
        emu.start()
    except NotAvailable as e:
        for k in peer_keys(ctx):
            ctx.results.na(k, PEER, str(e))
        return None
    ctx.results.put("startup.empty", PEER, emu.startup_seconds * 1e3)
    time.sleep(1)  # as Hearth's idle RSS: 1 s after the first answer
    st = proc_status(emu.pid)
    ctx.results.put("footprint.idle", PEER, st.get("VmRSS", 0) / 1024, threads=st.get("Threads"))
    ctx.log(f"  started in {emu.startup_seconds:.1f}s, RSS {st.get('VmRSS', 0) / 1024:.0f} MiB")
    return emu


def firestore(ctx, h, user, peer_rows_only=False):
    """Every Firestore row of Hearth's main instance `h` (user: a user of its Auth, or None), with the
    official emulator's beside it when it runs; with `peer_rows_only` (`--only fs`) just the rows that
    have it as their peer. Returns the documents stored in Hearth for the runQuery rows (start-up with
    data reuses them)."""
    emu = start_peer(ctx)
    sides = [Side(HEARTH, h.proc.pid, polls=h.busy_poll)] + ([Side(PEER, emu.proc.pid)] if emu else [])
    pairing = Pairing(ctx, sides, ctx.s.rounds, harness_pid=os.getpid(), hop=getattr(ctx, "hop_probe", None))
    ctx.pairing = pairing
    servers = {HEARTH: h.port("firestore")}
    if emu:
        servers[PEER] = emu.port
    phase = Phase(ctx, pairing, h, emu, servers, user, peer_rows_only)
    try:
        seq = getattr(ctx, "sequence", None)
        return phase.sequence(seq) if seq else phase.run()
    finally:
        if phase.emu:
            phase.emu.stop()


class Phase:
    """The rows in order, each side's loads prepared on its own server, then measured by `pairing`."""

    def __init__(self, ctx, pairing, hearth, emu, servers, user, peer_rows_only):
        self.ctx, self.pairing, self.hearth, self.emu = ctx, pairing, hearth, emu
        ctx.server_pids.update({HEARTH: hearth.pid, **({PEER: emu.pid} if emu else {})})
        self.servers, self.user = servers, user
        self.hearth_rows = not peer_rows_only  # Hearth's rows without a peer
        self.auth_port = hearth.port("auth")

    def warm(self, system):
        """Seconds of warm-up before the rounds: a JVM needs its hot paths compiled first."""
        return 0 if self.ctx.quick else (5 if system == PEER else 1)

    def loads(self, make):
        """{system: make(system, port)} for every server, or the reason its set-up failed (a string: every
        key of that side is then n/a with it)."""
        out = {}
        for system, port in self.servers.items():
            gone = self.gone(system)
            if gone:
                out[system] = gone
                continue
            try:
                out[system] = make(system, port)
            except (NotAvailable, OSError) as e:  # OSError: a socket timeout from a server that stopped answering
                out[system] = f"{type(e).__name__}: {e}" if isinstance(e, OSError) else str(e)
        return out

    def gone(self, system):
        """Why `system`'s server cannot be measured any more (it exited), or None."""
        p = (self.hearth if system == HEARTH else self.emu).proc
        return None if p is not None and p.poll() is None else \
            f"{system} is not running (exit {p.returncode if p else '?'})"

    def measure(self, key, per_system, **kw):
        """per_system: {system: {key: Load or reason} or one reason for every key}."""
        loads = {s: (v if isinstance(v, str) else v.get(key, f"{key} not prepared")) for s, v in per_system.items()}
        return self.pairing.run(key, loads, **kw)

    def run(self):
        ctx, user = self.ctx, self.user
        ctx.log(f"Firestore REST{', Hearth and the official emulator' if self.emu else ''} in rounds")
        # Set up even when no REST row is wanted: it stores users/{uid}/files/f0…f9, which the gRPC rows read.
        rest = self.loads(lambda system, port: firebase.rest_loads(ctx, port, user, system))
        for key in filter(self.wanted, REST_KEYS):
            if key.startswith("fs.get.") and getattr(ctx, "nginx_get", None):
                # The HTTP-path ceiling right beside it: nginx answering a static 4 KiB file.
                conns = int(key.rsplit("c", 1)[1])
                # Unpinned like the get beside it (recorded, not pinned: see wrk_load).
                run_point(ctx, "nginx", ctx.nginx_get[0], ctx.nginx_get[1], key, conns, "ceiling", pin=False)
            self.measure(key, rest)
        if self.hearth_rows and self.wanted("rules.insitu"):
            firebase.rules_insitu(ctx, self.servers[HEARTH], user)

        ctx.log("Firestore over gRPC")
        grpc = self.loads(lambda system, port: grpcbench.grpc_loads(ctx, system, port, user, self.warm(system)))
        self.grpc_rows(grpc)
        if self.hearth_rows and any(map(self.wanted, GRPCGO_KEYS)):
            go = {HEARTH: grpcbench.grpcgo_loads(ctx, self.servers[HEARTH], user, self.warm(HEARTH))}
            for key in filter(self.wanted, GRPCGO_KEYS):
                self.measure(key, go)
        if any(map(self.wanted, TXN_KEYS)):
            txn = self.loads(lambda system, port: {key: grpcbench.txn_load(ctx, system, port, user, self.warm(system), client)
                                                   for key, client in grpcbench.TXN_CLIENTS.items()})
            for key in filter(self.wanted, TXN_KEYS):
                self.measure(key, txn)
        sizes = ctx.s.query_sizes if self.hearth_rows else ctx.s.query_sizes[:2]
        if not any(map(self.wanted, grpcreads.KEYS + query_keys(sizes) + rt_keys(ctx))):
            return 0
        self.fresh_peer()
        if any(map(self.wanted, grpcreads.KEYS)):
            reads = self.loads(lambda system, port: grpcreads.loads_for(ctx, system, port, self.auth_port, self.warm(system)))
            for key in filter(self.wanted, grpcreads.KEYS):
                self.measure(key, reads)
        docs = self.queries() if any(map(self.wanted, query_keys(sizes))) else 0
        if any(map(self.wanted, rt_keys(ctx))):
            self.listeners()
        return docs

    def sequence(self, keys):
        """`run.py --sequence`: the REST, gRPC and transaction rows in the order given, a key as often as
        it is named, on this one Hearth (and peer) — to measure a row after what other rows leave behind,
        and again before it; `KEY:N` runs that step in N rounds a side instead of `--rounds`. Each run of a row is kept in `ctx.sequence_log` ({step, key, rounds}); the
        results table keeps a row's last run."""
        ctx = self.ctx
        known = REST_KEYS + GRPC_KEYS + GRPCGO_KEYS + TXN_KEYS
        steps = [(k.split(":")[0], int(k.split(":")[1]) if ":" in k else None) for k in keys]
        keys = [k for k, _ in steps]
        unknown = [k for k in keys if k not in known]
        if unknown:
            raise NotAvailable(f"--sequence: not a REST, gRPC or transaction row: {', '.join(unknown)}")
        ctx.sequence_log = []
        # The REST set-up stores users/{uid}/files/f0…f9, which the gRPC rows read: always first.
        rest = self.loads(lambda system, port: firebase.rest_loads(ctx, port, self.user, system))
        grpc = go = txn = None
        saved, saved_rounds = getattr(ctx, "rows_only", None), self.pairing.rounds
        try:
            for step, (key, rounds) in enumerate(steps, 1):
                ctx.log(f"  sequence step {step}: {key}")
                first = len(self.pairing.log)
                ctx.rows_only = [key]
                self.pairing.rounds = rounds or ctx.s.rounds
                if key in REST_KEYS:
                    self.measure(key, rest)
                elif key in GRPC_KEYS:
                    grpc = grpc or self.loads(lambda system, port: grpcbench.grpc_loads(ctx, system, port, self.user,
                                                                                          self.warm(system)))
                    self.grpc_rows(grpc)
                elif key in GRPCGO_KEYS:
                    go = go or {HEARTH: grpcbench.grpcgo_loads(ctx, self.servers[HEARTH], self.user, self.warm(HEARTH))}
                    self.measure(key, go)
                else:
                    txn = txn or self.loads(lambda system, port: {
                        k: grpcbench.txn_load(ctx, system, port, self.user, self.warm(system), client)
                        for k, client in grpcbench.TXN_CLIENTS.items()})
                    self.measure(key, txn)
                ctx.sequence_log.append({"step": step, "key": key, "rounds": self.pairing.log[first:]})
        finally:
            ctx.rows_only, self.pairing.rounds = saved, saved_rounds
        return 0

    def wanted(self, key):
        """Whether `key` is measured: every row, or with `run.py --rows` (ctx.rows_only) those named
        or under a named prefix (grpc.get: grpc.get.s1, grpc.get.light.s16, …)."""
        only = getattr(self.ctx, "rows_only", None)
        return not only or any(key == p or key.startswith(p + ".") for p in only)

    def grpc_rows(self, grpc):
        """The gRPC rows; the one-stream gets (`h2floor.KEYS`) with the HTTP/2 floor's two designs as
        sides of their rounds (fresh floors started for them, answering Hearth's bytes, stopped after
        them), the better design's best round stored as the row's floor (`h2floor.pick`)."""
        keys = [k for k in GRPC_KEYS if self.wanted(k)]
        floor_keys = [k for k in keys if k in h2floor.KEYS]
        floors = []
        if floor_keys:
            self.ctx.log("  the HTTP/2 floor beside the one-stream gets")
            started = h2floor.start_beside(self.ctx, self.servers[HEARTH], self.user)
            if isinstance(started, str):
                self.ctx.log(f"  {started}")
                floor_loads = dict.fromkeys((name for name, _ in h2floor.DESIGNS), started)
            else:
                floors = started
                floor_loads = {f.name: grpcbench.grpc_loads(self.ctx, f.name, f.port, self.user, self.warm(f.name))
                               for f in floors}
        try:
            for key in keys:
                if key not in floor_keys:
                    self.measure(key, grpc)
                    continue
                for f in floors:
                    self.pairing.sides[f.name] = Side(f.name, f.proc.pid)
                    if f.proc.poll() is not None:
                        floor_loads[f.name] = f"{f.name} exited ({f.proc.returncode})"
                try:
                    self.measure(key, dict(grpc, **floor_loads))
                finally:
                    for f in floors:
                        self.pairing.sides.pop(f.name, None)
                h2floor.pick(self.ctx.results, key)
        finally:
            for f in floors:
                self.ctx.log(f"  {f.name} stopped: {f.stop()}")

    def fresh_peer(self):
        """A fresh emulator for the read rows, as they always had. Its runQuery slows with every
        document it holds, not just the collection's: with the tens of thousands the commit rows had
        left, runQuery on 1,000 documents ran at 4–5 req/s (the first run of this phase) against
        109–134 in earlier runs. Its own clear (DELETE …/documents) does not undo it: 114–145 req/s
        fresh, 30 with 20,000 other documents, 41–48 after the clear (docs/benchmarks.md, benchpair).
        Hearth keeps its documents: its reads walk an index, and its rows always ran with them."""
        if not self.emu or self.gone(PEER):
            return
        self.emu.stop()
        self.emu = OfficialFirestore(self.ctx.registry, self.ctx.run_dir, self.ctx.rules_for_hearth)
        self.emu.log = os.path.join(self.ctx.run_dir, "firestore-emulator-reads.log")
        try:
            self.emu.start()
        except NotAvailable as e:
            self.ctx.log(f"  emulator: the fresh one did not start ({e})")
            return
        self.servers[PEER] = self.emu.port
        self.ctx.server_pids[PEER] = self.emu.pid
        self.pairing.sides[PEER] = Side(PEER, self.emu.proc.pid)
        self.ctx.log(f"  emulator: a fresh one for the read rows, started in {self.emu.startup_seconds:.1f}s")

    def queries(self):
        """runQuery and documents.list on collections of growing size (the JVM stores 100,000 documents
        slowly: the peer stops at 10,000); Hearth's RSS with every collection loaded."""
        ctx = self.ctx
        seeded = 0
        for size in ctx.s.query_sizes if self.hearth_rows else ctx.s.query_sizes[:2]:
            ctx.log(f"Firestore runQuery and documents.list on {size:,} documents")
            users = self.loads(lambda system, port, size=size: (
                None if system == PEER and size not in ctx.s.query_sizes[:2]
                else firebase.seed_collection(ctx, port, self.auth_port, size, system)))
            if isinstance(users.get(HEARTH), firebase.User):
                seeded += size
            for key, make in ((f"fs.query.{size}", firebase.query_load), (f"fs.list.{size}", listing.list_load)):
                per = {}
                for system, user in users.items():
                    if user is None or isinstance(user, str):
                        if user:
                            per[system] = user
                        continue
                    try:
                        per[system] = make(ctx, self.servers[system], user, size, system)
                    except (NotAvailable, OSError) as e:
                        per[system] = str(e)
                latency = key.replace(f".{size}", f"_latency.{size}")
                self.pairing.run(key, per, derived={latency: lambda d: d["wrk"]["lat_mean_us"]})
        if not self.hearth_rows:
            return seeded
        if seeded:
            ctx.results.put("footprint.docs", HEARTH, proc_status(self.hearth.pid).get("VmRSS", 0) / 1024,
                            documents=seeded)
        else:
            ctx.results.na("footprint.docs", HEARTH, "no documents could be loaded")
        return seeded

    def listeners(self):
        """Commit → snapshot latency with 1, 100 and 1,000 listeners (one round each side above one
        listener: the emulator's 100-listener point alone takes minutes, and its ratios are in the
        thousands), Hearth's largest point through grpc-go's listeners too, then idle listeners."""
        ctx = self.ctx
        ctx.log("realtime listeners")
        sign_up = signer(self.auth_port)
        for n in ctx.s.listener_counts:
            per = {}
            for system, port in self.servers.items():
                per[system] = self.gone(system) or grpcbench.listen_load(ctx, system, port, sign_up, n)
            self.pairing.run(f"rt.latency.{n}", per, higher_is_better=False,
                             rounds=ctx.s.rounds if n == 1 else 1,
                             derived={f"rt.latency99.{n}": lambda d: d["p99_ms"]})
        n = ctx.s.listener_counts[-1]
        if self.hearth_rows:
            go = grpcbench.listen_load(ctx, HEARTH, self.servers[HEARTH], sign_up, n, client="grpc", p99=True)
            self.pairing.run(f"rt.latency99.grpcgo.{n}", {HEARTH: go}, higher_is_better=False, rounds=1)
        grpcbench.idle_listeners(ctx, HEARTH, self.servers[HEARTH], self.hearth.pid, sign_up)
        if self.emu:
            gone = self.gone(PEER)
            if gone:
                ctx.results.na("rt.idle.rss", PEER, gone)
                ctx.results.na("rt.idle.threads", PEER, gone)
            else:
                grpcbench.idle_listeners(ctx, PEER, self.servers[PEER], self.emu.pid, sign_up, timeout=PEER_IDLE_TIMEOUT)
