"""Runs a command-line S3 client (rclone, s3cmd, restic) with an environment of its own: only what the
test passes, so nothing of the user's (a config in $HOME, AWS_CA_BUNDLE, proxies) changes what it does."""
import subprocess


def run_cli(argv, env, check=True, input=None, timeout=120):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, input=input)
    if check:
        assert r.returncode == 0, f"{' '.join(argv)} failed ({r.returncode}): {r.stderr[-3000:]}"
    return r
