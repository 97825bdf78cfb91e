"""Start-up: exec to the first 200, median of N starts, for Hearth (empty and with data) and moto."""
import shutil
import statistics
import os

from .httpc import NotAvailable
from .procs import Hearth, free_port, make_temp_dir, time_to_first_200


def hearth_startups(ctx, data_dir=None, n=None, rules=None):
    """Seconds to the first 200 on /healthz. With data_dir None every start gets a fresh empty one."""
    times = []
    for i in range(n or ctx.s.startups):
        fresh = data_dir is None
        dd = make_temp_dir(ctx.run_dir, "empty-") if fresh else data_dir
        try:
            port = free_port()
            h = Hearth(ctx.registry, ctx.hearth_bin, ctx.run_dir, data_dir=dd, rules=rules, log_name="startup")
            if not os.access(ctx.hearth_bin, os.X_OK):
                raise NotAvailable(f"no hearth binary at {ctx.hearth_bin}")
            times.append(time_to_first_200(ctx.registry, h.argv(hub_port=port), port, "/healthz", h.log,
                                           ctx.run_dir, timeout=60))
        finally:
            if fresh:
                shutil.rmtree(dd, ignore_errors=True)
    return statistics.median(times), times


def moto_startups(ctx, moto, n=None):
    times = []
    for _ in range(n or ctx.s.startups):
        port = free_port()
        times.append(time_to_first_200(ctx.registry, moto.argv(port), port, "/", moto.log, ctx.run_dir, timeout=120))
    return statistics.median(times), times
