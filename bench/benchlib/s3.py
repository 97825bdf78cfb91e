"""S3 scenarios: small objects under wrk (Hearth, moto, nginx, bare libmicrohttpd) and large objects."""
import hashlib
import shutil
import statistics
import subprocess
import threading
import time

from .httpc import Client, HarnessError, NotAvailable, download, expect, upload_file
from .loadgen import require_clean
from .procs import proc_status, reset_peak_rss

SMALL_BUCKET = "bench-small"
SIGNED_KEYS = 64        # distinct header-signed GETs replayed round-robin
CONNS = (1, 16)


def _put(ctx, client, port, path, body, what):
    host = f"127.0.0.1:{port}"
    h = ctx.signer.sign_headers("PUT", host, path, payload_hash=hashlib.sha256(body).hexdigest())
    return expect(client.request("PUT", path, body=body, headers=h), what)


def s3_small_requests(ctx, port, system):
    """Creates the bucket and objects on an S3 endpoint (Hearth or moto) and returns the wrk request
    lists: presigned GET, presigned PUT (same URL, overwriting) and header-signed GET."""
    host = f"127.0.0.1:{port}"
    body = ctx.read(ctx.obj4k)
    c = Client(port)
    try:
        h = ctx.signer.sign_headers("PUT", host, f"/{SMALL_BUCKET}")
        r = c.request("PUT", f"/{SMALL_BUCKET}", headers=h)
        if r.status not in (200, 409):
            expect(r, f"{system} CreateBucket")
        _put(ctx, c, port, f"/{SMALL_BUCKET}/obj4k", body, f"{system} PutObject 4 KiB")
        for i in range(SIGNED_KEYS):
            _put(ctx, c, port, f"/{SMALL_BUCKET}/h{i}", body, f"{system} PutObject 4 KiB")
        expires = 7 * 24 * 3600  # valid for the whole run (S3's maximum)
        get_path = ctx.signer.presign("GET", host, f"/{SMALL_BUCKET}/obj4k", expires=expires)
        put_path = ctx.signer.presign("PUT", host, f"/{SMALL_BUCKET}/put4k", expires=expires)
        reqs = {
            "get_presigned": [{"method": "GET", "path": get_path, "headers": {"Host": host}}],
            "put_presigned": [{"method": "PUT", "path": put_path, "headers": {"Host": host},
                               "body_file": ctx.obj4k}],
            "get_signed": [{"method": "GET", "path": f"/{SMALL_BUCKET}/h{i}",
                            "headers": ctx.signer.sign_headers("GET", host, f"/{SMALL_BUCKET}/h{i}")}
                           for i in range(SIGNED_KEYS)],
        }
        # One request of each kind first: a clear n/a beats a table of 403s, and the bytes must be right.
        r = expect(c.request("GET", get_path, headers={"Host": host}), f"{system} presigned GET")
        if r.body != body:
            raise NotAvailable(f"{system} presigned GET returned {len(r.body)} bytes that differ from the object")
        expect(c.request("PUT", put_path, body=body, headers={"Host": host}), f"{system} presigned PUT")
        r0 = reqs["get_signed"][0]
        r = expect(c.request("GET", r0["path"], headers=r0["headers"]), f"{system} header-signed GET")
        if r.body != body:
            raise NotAvailable(f"{system} header-signed GET returned different bytes")
        return reqs
    finally:
        c.close()


KINDS = ("get_presigned", "put_presigned", "get_signed")


def ceiling_requests(ctx, nginx, mhd, mhd_hello):
    """The static-file and bare-engine ceilings' requests: the same bytes, no signature to check.
    The GET ceilings stand for header-signed GETs too (the response is the same)."""
    out = []
    for system, port, path in (("nginx", nginx.port, "/obj4k"), ("mhd", mhd.port, "/obj4k"),
                               ("mhd_hello", mhd_hello.port, "/hello")):
        host = f"127.0.0.1:{port}"
        get = [{"method": "GET", "path": path, "headers": {"Host": host}}]
        reqs = {"get_presigned": get}
        if system != "mhd_hello":
            reqs["get_signed"] = get
        if system == "mhd":
            reqs["put_presigned"] = [{"method": "PUT", "path": "/put4k", "headers": {"Host": host},
                                      "body_file": ctx.obj4k}]
        out.append((system, port, reqs, "ceiling"))
    return out


def run_point(ctx, system, port, requests, key, conns, role, pin=True):
    """One wrk point stored under (key, system). At one connection with the server's pid in
    `ctx.server_pids` every run records its vCPU layout and is pinned unless `pin` is False.

    role "hearth": failures make the row n/a. "peer": failures are the peer's own, so the row keeps
    the successful requests per second (a 500 acknowledges no write) and a warning, with the rate of
    every answer beside it in `answered_rps`. moto's are 500s on concurrent overwrites of one key:
    its PutObject builds the answer's ETag by reading the new key's buffer, which a concurrent PUT
    of the same key has already replaced and closed (`ValueError: I/O operation on closed file` in
    moto's log; moto 5.1.22, docs/benchmarks.md). "ceiling": any failure is a broken harness."""
    # At one connection wrk and every thread of the server run in the pinned vCPU layout (layout.py:
    # an unpinned run measured whichever layout the kernel picked), the same for every system, and
    # the run records where each end ran. 16 connections: unpinned, nothing sampled, as before.
    s = ctx.wrk.run(port, requests, conns, f"{system}-{key}", profile=role == "hearth",
                    server_pid=ctx.server_pids.get(system) if conns == 1 else None, pin=None if pin else False)
    try:
        require_clean(s, f"{system} {key}")
        ctx.results.put(key, system, s["rps"], wrk=s)
    except NotAvailable as e:
        if role == "ceiling":
            raise HarnessError(str(e))
        if role == "hearth":
            ctx.results.na(key, system, str(e))
            return s
        good = max(0, s["requests"] - s["error_count"]) / (s["duration_us"] / 1e6)
        ctx.results.put(key, system, good, wrk=s, answered_rps=s["rps"],
                        warning=f"{system} failed {s['error_count']} of {s['requests']} requests "
                                f"({100 * s['error_count'] / max(1, s['requests']):.0f}%); only successes counted")
    v = ctx.results.get(key, system)
    placed = s.get("layout")
    where = "" if not placed else \
        f"  {'pinned ' if placed.get('pinned') else ''}{placed.get('layout')} ({placed.get('same_cpu_share')})"
    ctx.log(f"  {system:10s} {key:22s} {v if isinstance(v, float) else 0:>10,.0f} req/s  "
            f"p50 {s['lat_p50_us']} µs  errors {s['error_count']}{where}")
    return s


def run_small(ctx, systems):
    """wrk at 1 and 16 connections for each request kind, the systems of one point back to back so
    that whatever else the machine is doing at that moment weighs on all of them alike.

    `systems`: (name, port, requests by kind or a NotAvailable reason, role)."""
    for kind in KINDS:
        for conns in CONNS:
            key = f"s3.{kind}.c{conns}"
            for system, port, reqs, role in systems:
                if isinstance(reqs, str):
                    ctx.results.na(key, system, reqs)
                elif kind in reqs:
                    run_point(ctx, system, port, reqs[kind], key, conns, role)


def hash_ceiling(ctx, argv, size):
    """MB/s of a hashing command over the same bytes (page cache warm), median of a few runs."""
    subprocess.run(argv, capture_output=True, check=True)
    times = []
    for _ in range(ctx.s.sha_reps):
        t0 = time.perf_counter()
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        times.append(time.perf_counter() - t0)
        if r.returncode != 0:
            raise HarnessError(f"{argv[0]} failed: {r.stderr}")
    return size / 1e6 / statistics.median(times)


def large_objects(ctx, hearth, nginx):
    """PutObject with x-amz-content-sha256 = the real hash, GetObject, MB/s and peak RSS; ceilings
    sha256sum (PUT) and nginx static GET (GET)."""
    for size in ctx.s.large_sizes:
        path, digest = ctx.large_file(size)
        label = f"{size // (1 << 20)}m"
        ctx.results.put(f"s3.large.put.{label}", "sha256sum", hash_ceiling(ctx, ["sha256sum", path], size))
        # coreutils' sha256sum does not use the CPU's SHA extensions; libcrypto (which Hearth uses) does,
        # so `openssl dgst -sha256` is the stricter ceiling, shown beside the one the target names.
        if shutil.which("openssl"):
            ctx.results.put(f"s3.large.put.{label}", "openssl", hash_ceiling(ctx, ["openssl", "dgst", "-sha256", path], size))
        status, n, secs = download(nginx.port, f"/{path.rsplit('/', 1)[1]}",
                                   {"Host": f"127.0.0.1:{nginx.port}"})
        if status != 200 or n != size:
            raise HarnessError(f"nginx GET of {path} → {status}, {n} bytes")
        ctx.results.put(f"s3.large.get.{label}", "nginx", size / 1e6 / secs)

    try:
        hearth.check_alive()
        port = hearth.port("s3")
    except NotAvailable as e:
        for size in ctx.s.large_sizes:
            label = f"{size // (1 << 20)}m"
            for k in (f"s3.large.put.{label}", f"s3.large.get.{label}", f"footprint.peak_put.{label}"):
                ctx.results.na(k, "hearth", str(e))
        return
    host = f"127.0.0.1:{port}"
    c = Client(port)
    bucket_error = None
    try:
        r = c.request("PUT", "/bench-large", headers=ctx.signer.sign_headers("PUT", host, "/bench-large"))
        if r.status not in (200, 409):
            expect(r, "CreateBucket")
    except NotAvailable as e:
        bucket_error = str(e)
    finally:
        c.close()
    for size in ctx.s.large_sizes:
        label = f"{size // (1 << 20)}m"
        path, digest = ctx.large_file(size)
        key = f"/bench-large/obj-{label}"
        try:
            if bucket_error:
                raise NotAvailable(bucket_error)
            hearth.check_alive()
            headers = ctx.signer.sign_headers("PUT", host, key, headers={"Content-Type": "application/octet-stream"},
                                              payload_hash=digest)
            before = proc_status(hearth.pid).get("VmRSS", 0)
            exact_peak = reset_peak_rss(hearth.pid)
            sampler = _RSSSampler(hearth.pid)
            sampler.start()
            try:
                status, body, secs = upload_file(port, "PUT", key, headers, path, size)
            finally:
                sampler.stop()
            peak = proc_status(hearth.pid).get("VmHWM", 0) if exact_peak else sampler.peak
            if status != 200:
                raise NotAvailable(f"PutObject {size // (1 << 20)} MiB → {status}: "
                                   f"{(body or b'')[:160].decode('utf-8', 'replace')}")
            ctx.results.put(f"s3.large.put.{label}", "hearth", size / 1e6 / secs, seconds=secs)
            ctx.results.put(f"footprint.peak_put.{label}", "hearth", peak / 1024,
                            rss_before_mib=before / 1024, exact_vmhwm=exact_peak)
            ctx.log(f"  hearth PUT {label}: {size / 1e6 / secs:,.0f} MB/s, peak RSS {peak / 1024:,.1f} MiB")
        except NotAvailable as e:
            ctx.results.na(f"s3.large.put.{label}", "hearth", str(e))
            ctx.results.na(f"footprint.peak_put.{label}", "hearth", str(e))
            ctx.results.na(f"s3.large.get.{label}", "hearth", "no object (PUT failed)")
            continue
        try:
            headers = ctx.signer.sign_headers("GET", host, key)
            status, n, secs = download(port, key, headers)
            if status != 200 or n != size:
                raise NotAvailable(f"GetObject {size // (1 << 20)} MiB → {status}, {n} of {size} bytes")
            if ctx.quick:
                # Correctness once on the small QUICK object: the bytes that come back are the bytes sent.
                c = Client(port)
                r = c.request("GET", key, headers=ctx.signer.sign_headers("GET", host, key))
                c.close()
                if hashlib.sha256(r.body).hexdigest() != digest:
                    raise NotAvailable("GetObject returned different bytes than were put")
            ctx.results.put(f"s3.large.get.{label}", "hearth", size / 1e6 / secs, seconds=secs)
            ctx.log(f"  hearth GET {label}: {size / 1e6 / secs:,.0f} MB/s")
        except NotAvailable as e:
            ctx.results.na(f"s3.large.get.{label}", "hearth", str(e))


def put_large(ctx, port, size, bucket="bench-large"):
    """One PutObject of the `size` test file, signed with its real payload hash, as `large_objects`
    sends it; MB/s (for `bench/storage_rows.py`'s A/Bs)."""
    host = f"127.0.0.1:{port}"
    path, digest = ctx.large_file(size)
    c = Client(port)
    try:
        r = c.request("PUT", f"/{bucket}", headers=ctx.signer.sign_headers("PUT", host, f"/{bucket}"))
        if r.status not in (200, 409):
            expect(r, "CreateBucket")
    finally:
        c.close()
    key = f"/{bucket}/obj-{size >> 20}m"
    headers = ctx.signer.sign_headers("PUT", host, key, headers={"Content-Type": "application/octet-stream"},
                                      payload_hash=digest)
    status, body, secs = upload_file(port, "PUT", key, headers, path, size)
    if status != 200:
        raise NotAvailable(f"PutObject {size >> 20} MiB → {status}: {(body or b'')[:160].decode('utf-8', 'replace')}")
    return size / 1e6 / secs


class _RSSSampler(threading.Thread):
    """Fallback when VmHWM cannot be reset: samples VmRSS every 20 ms."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self._halt = pid, 0, threading.Event()

    def run(self):
        while not self._halt.is_set():
            self.peak = max(self.peak, proc_status(self.pid).get("VmRSS", 0))
            self._halt.wait(0.02)

    def stop(self):
        self._halt.set()
        self.join(2)


def seed_objects(ctx, port, count, bucket="bench-seed"):
    """Stores `count` 1 KiB objects (for start-up with data); returns seconds taken."""
    host = f"127.0.0.1:{port}"
    body = ctx.read(ctx.obj4k)[:1024]
    digest = hashlib.sha256(body).hexdigest()
    c = Client(port)
    t0 = time.perf_counter()
    try:
        r = c.request("PUT", f"/{bucket}", headers=ctx.signer.sign_headers("PUT", host, f"/{bucket}"))
        if r.status not in (200, 409):
            expect(r, "CreateBucket")
        for i in range(count):
            p = f"/{bucket}/o/{i:06d}"
            expect(c.request("PUT", p, body=body, headers=ctx.signer.sign_headers("PUT", host, p, payload_hash=digest)),
                   "PutObject")
    finally:
        c.close()
    return time.perf_counter() - t0
