"""The web UI's speed (issue 16), in headless Chromium driven by selenium: the first page to
interactive, the data browser's first page on a large collection, and the request log's first
page after many requests. Skipped (n/a with the reason) without chromium, chromedriver or selenium."""
import os
import shutil
import statistics
import time

from .context import DOC_NAME_PREFIX, DOCS
from .firebase import Client
from .httpc import NotAvailable, expect
from .procs import Hearth, proc_status

KEYS = ["ui.first_page", "ui.fs_page", "ui.log_page"]


def sizes(ctx):
    """(documents, log entries): the issue's 100,000 each, or a small QUICK pass that says so."""
    return (2_000, 2_000) if ctx.quick else (100_000, 100_000)


def rows(ctx):
    from .report import Row
    docs, entries = sizes(ctx)
    quick = " (QUICK: small sizes)" if ctx.quick else ""
    reps = 3 if ctx.quick else 10
    return [
        Row("ui.first_page", f"UI first page to interactive (the app's `hearth-ready` mark), headless Chromium, "
            f"median of {reps}", "ms", target=("max", None, 300, "< 300 ms"), higher_is_better=False),
        Row("ui.fs_page", f"UI data browser: first page of a {docs:,}-document collection shown{quick}", "ms",
            target=("max", None, 300, "< 300 ms") if not ctx.quick else None, higher_is_better=False),
        Row("ui.log_page", f"UI request log: first page of a log holding {entries:,} requests (`--request-log`){quick}", "ms",
            target=("max", None, 300, "< 300 ms") if not ctx.quick else None, higher_is_better=False),
    ]


def browser():
    """A headless Chromium, or NotAvailable saying what is missing."""
    try:
        from selenium import webdriver
    except ImportError:
        raise NotAvailable("selenium is not installed (Tests/CompatTests/requirements.txt)")
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not chrome or not driver:
        raise NotAvailable("Chromium or chromedriver is not installed (Debian's chromium and chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
              "--no-first-run", "--disable-extensions", "--disable-background-networking"]:
        opts.add_argument(a)
    try:
        d = webdriver.Chrome(service=webdriver.ChromeService(executable_path=driver), options=opts)
    except Exception as e:  # a browser that cannot start here (sandbox, display) is n/a, not a harness failure
        raise NotAvailable(f"headless Chromium did not start: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    d.set_page_load_timeout(30)
    d.set_script_timeout(60)
    return d


# Switches the page to `hash` and resolves with the milliseconds until `selector` matches `count`
# elements (the page drawn with its data).
TIME_VIEW = """
const [hash, selector, count, done] = arguments;
const t0 = performance.now();
location.hash = hash;
const check = () => {
  if (document.querySelectorAll(selector).length >= count) { done(performance.now() - t0); return; }
  if (performance.now() - t0 > 30000) { done(-1); return; }
  requestAnimationFrame(check);
};
check();
"""


def time_view(d, hash_, selector, count, reps):
    times = []
    for _ in range(reps):
        d.execute_script("location.hash = '#/clock'")
        time.sleep(0.2)
        ms = d.execute_async_script(TIME_VIEW, hash_, selector, count)
        if ms < 0:
            raise NotAvailable(f"{hash_} did not show {count} × {selector} within 30 s")
        times.append(ms)
    return times


def first_page(ctx, d, ui, reps):
    """Fresh loads of the overview: navigation start → the `hearth-ready` mark (and domInteractive)."""
    ready, interactive = [], []
    for _ in range(reps):
        d.get("about:blank")
        d.get(f"{ui}/#/overview")
        for _ in range(300):
            mark = d.execute_script("const m = performance.getEntriesByName('hearth-ready'); return m.length ? m[0].startTime : null")
            if mark is not None:
                break
            time.sleep(0.01)
        else:
            raise NotAvailable("the overview never set its hearth-ready mark")
        ready.append(mark)
        interactive.append(d.execute_script("return performance.getEntriesByType('navigation')[0].domInteractive"))
    return ready, interactive


def seed(client, count, batch=500):
    for lo in range(0, count, batch):
        writes = [{"update": {"name": f"{DOC_NAME_PREFIX}/big/d{i:06d}",
                              "fields": {"n": {"integerValue": str(i)}, "title": {"stringValue": f"document {i}"}}}}
                  for i in range(lo, min(count, lo + batch))]
        expect(client.request("POST", f"{DOCS}:commit", body={"writes": writes}, headers={"Authorization": "Bearer owner"}),
               "Firestore admin commit")


def fill_log(ctx, h, entries):
    """Requests through the Firestore port until the log has seen `entries` of them (wrk, 16 conns)."""
    hub = Client(h.port("hub"))
    port = h.port("firestore")
    req = {"method": "GET", "path": f"{DOCS}/big/d000001",
           "headers": {"Host": f"127.0.0.1:{port}", "Authorization": "Bearer owner"}}
    try:
        for _ in range(30):
            latest = expect(hub.request("GET", "/emulator/v1/requests?limit=1"), "request log").json()["latest"]
            if latest >= entries:
                return latest
            ctx.wrk.run(port, [req], 16, "ui-log-fill", duration=1 if ctx.quick else 3, profile=False)
        raise NotAvailable(f"the log saw only {latest:,} requests")
    finally:
        hub.close()


def failure(e):
    """A short reason for an n/a row (selenium's messages carry a stack trace)."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def run(ctx):
    ctx.log("UI in headless Chromium")
    docs, entries = sizes(ctx)
    reps = 3 if ctx.quick else 10
    try:
        d = browser()
    except NotAvailable as e:
        for k in KEYS:
            ctx.results.na(k, "hearth", str(e))
        return
    from selenium.common.exceptions import WebDriverException
    # The log keeps every one of the requests made (--request-log), so the page reads a full log.
    h = Hearth(ctx.registry, ctx.hearth_bin, ctx.run_dir, rules=ctx.rules_for_hearth, log_name="hearth-ui",
               extra=["--request-log", str(entries)])
    try:
        h.start()
        ui = f"http://127.0.0.1:{h.port('ui')}"
        ready, interactive = first_page(ctx, d, ui, reps)
        ctx.results.put("ui.first_page", "hearth", statistics.median(ready), runs_ms=ready,
                        dom_interactive_ms=statistics.median(interactive))
        ctx.log(f"  first page ready {statistics.median(ready):.0f} ms (domInteractive {statistics.median(interactive):.0f} ms)")
        try:
            c = Client(h.port("firestore"))
            t0 = time.perf_counter()
            seed(c, docs)
            c.close()
            ctx.log(f"  seeded {docs:,} documents in {time.perf_counter() - t0:.1f}s")
            times = time_view(d, "#/firestore/big", "#documents li", 50, reps)
            ctx.results.put("ui.fs_page", "hearth", statistics.median(times), runs_ms=times, documents=docs)
            ctx.log(f"  data browser first page {statistics.median(times):.0f} ms")
        except (NotAvailable, WebDriverException) as e:
            ctx.results.na("ui.fs_page", "hearth", failure(e))
        try:
            seen = fill_log(ctx, h, entries)
            times = time_view(d, "#/requests", "#requests-body tr", 100, reps)
            rss = proc_status(h.pid).get("VmRSS", 0) / 1024
            ctx.results.put("ui.log_page", "hearth", statistics.median(times), runs_ms=times, requests_seen=seen,
                            rss_mib_with_full_log=round(rss, 1))
            ctx.log(f"  request log first page {statistics.median(times):.0f} ms after {seen:,} requests")
        except (NotAvailable, WebDriverException) as e:
            ctx.results.na("ui.log_page", "hearth", failure(e))
    except (NotAvailable, WebDriverException) as e:
        for k in KEYS:
            if ctx.results.get(k, "hearth") is None:
                ctx.results.na(k, "hearth", failure(e))
    finally:
        d.quit()
        h.stop()
