"""Runs the differential script against a Firestore REST endpoint and normalises the answers.

Used by test_differential.py (Hearth, and the official emulator when it is installed) and as a
recorder: `python diffrun.py --record` starts the official Cloud Firestore emulator, runs the script
and rewrites fixtures/emulator.json, so machines without the emulator still assert its answers.
"""
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "emulator.json")
DEVIATIONS = os.path.join(HERE, "fixtures", "deviations.json")
RULES = os.path.join(HERE, "diff.rules")
PROJECT = "demo-diff"

sys.path.insert(0, HERE)
import diffcases  # noqa: E402

TIME_KEYS = {"readTime", "updateTime", "createTime", "commitTime", "expireTime"}
AUTO_ID = re.compile(r"/[A-Za-z0-9]{20}(?=$|/)")
LONG_NUMBER = re.compile(r"\d{13,}")
SERVER_TIME = re.compile(r"^20[2-9]\d-\d\d-\d\dT")


def _substitute(value, env, quote=False):
    if isinstance(value, str):
        for k, v in env.items():
            value = value.replace("${" + k + "}", urllib.parse.quote(v, safe="") if quote else v)
        return value
    if isinstance(value, list):
        return [_substitute(x, env) for x in value]
    if isinstance(value, dict):
        # Values spliced into the query string are percent-encoded (tokens hold `+` and `/`).
        return {k: _substitute(v, env, quote=(k == "q")) for k, v in value.items()}
    return value


def _dig(data, path):
    for part in path.split("."):
        if isinstance(data, list):
            data = data[int(part)]
        else:
            data = data[part]
    return data


def _first_line(message, status):
    """The line of an error message the suite compares.

    Hearth puts Firestore's wording first and its own detail after it. A rules denial is compared
    by its decision alone: production says "Missing or insufficient permissions." and Hearth adds its
    rules trace on the next line, while the emulator's message is "No matching allow statements" or an
    empty line and then a trace of every rule it tried (its own format, not a documented one).
    """
    lines = message.split("\n")
    if status == "PERMISSION_DENIED" and lines[0].strip() in ("", "Missing or insufficient permissions.",
                                                              "No matching allow statements"):
        return "<rules denial>"
    return lines[0].strip()


def first_denial(message):
    """`<reason> for 'get' @ L5`: the first of the failed allows a rules denial's message joins (the
    emulator's starts with an empty line, Hearth's with `Missing or insufficient permissions.`, and
    goes on with its trace); a denial without one (`No matching allow statements`) as it is worded."""
    lines = [line for line in message.split("\n") if line.strip() not in ("", "Missing or insufficient permissions.")]
    for line in lines:
        found = re.match(r"(.*?) for '\w+' @ L\d+", line)
        if found:
            return found.group(0)
    return lines[0] if lines else message


def normalise(status, text, env_values):
    """The comparable form of one answer: status, and the JSON body with times, ids, tokens replaced."""
    try:
        body = json.loads(text) if text.strip() else None
    except ValueError:
        body = {"text": text.strip()}

    def walk(v, key=None):
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if k in TIME_KEYS and isinstance(x, str):
                    out[k] = "<T>"
                elif k == "transaction" and isinstance(x, str):
                    out[k] = "<TX>"
                elif k == "nextPageToken" and isinstance(x, str):
                    out[k] = "<PAGE>"
                elif k == "timestampValue" and isinstance(x, str) and SERVER_TIME.match(x):
                    # A server timestamp (REQUEST_TIME) has millisecond precision: at most 3 digits.
                    fraction = x.rstrip("Z").partition(".")[2]
                    out[k] = "<T ms>" if len(fraction) <= 3 else "<T finer than ms>"
                elif k == "message" and isinstance(x, str) and key == "error":
                    out[k] = LONG_NUMBER.sub("<N>", x)
                else:
                    out[k] = walk(x, k)
            return out
        if isinstance(v, list):
            return [walk(x, key) for x in v]
        if isinstance(v, str):
            if len(v) > 200:
                # Large documents are compared by length and digest, keeping the fixture small.
                return f"<{len(v)} chars sha1:{hashlib.sha1(v.encode()).hexdigest()[:12]}>"
            for name, val in env_values.items():
                if val and len(val) > 3:
                    v = v.replace(val, "<" + name + ">")
            return AUTO_ID.sub("/<ID>", v)
        return v

    return {"status": status, "body": walk(body)}


def comparable(answer):
    """The part of a normalised answer the suite compares: error messages cut to their first line."""
    body = answer["body"]
    if isinstance(body, dict) and isinstance(body.get("error"), dict) and isinstance(body["error"].get("message"), str):
        error = dict(body["error"], message=_first_line(body["error"]["message"], body["error"].get("status")))
        return {"status": answer["status"], "body": dict(body, error=error)}
    if isinstance(body, list) and any("<ID>" in json.dumps(e, sort_keys=True) for e in body):
        # A server-generated id sorts anywhere among the other names (each server draws its own),
        # so a result holding one is compared as a set of elements; order is checked everywhere else.
        return {"status": answer["status"], "body": sorted(body, key=lambda e: json.dumps(e, sort_keys=True))}
    docs = body.get("documents") if isinstance(body, dict) else None
    if isinstance(docs, list) and any("<ID>" in json.dumps(e, sort_keys=True) for e in docs):
        # The same for a listing's page (`{"documents": [...]}`): where the generated id falls among
        # the page's names depends on the id each server drew.
        return {"status": answer["status"], "body": dict(body, documents=sorted(docs, key=lambda e: json.dumps(e, sort_keys=True)))}
    return answer


def run(base_url, cases=None):
    """Sends every case in order; returns {name: normalised answer}."""
    cases = cases if cases is not None else diffcases.cases()
    session = requests.Session()
    env = {}
    out = {}
    root = f"/v1/projects/{PROJECT}/databases/(default)/documents"
    for c in cases:
        c = _substitute(c, env)
        path = c["p"]
        target = base_url + (path[1:] if path.startswith("^") else root + path)
        if c.get("q"):
            target += "?" + c["q"]
        headers = {}
        auth = c.get("a", "owner")
        if auth == "owner":
            headers["Authorization"] = "Bearer owner"
        elif auth is not None:
            headers["Authorization"] = "Bearer " + diffcases.mock_token(auth)
        if "raw_auth" in c:
            headers["Authorization"] = c["raw_auth"]
        data = None
        if "raw" in c:
            data = c["raw"].encode()
            headers["Content-Type"] = "application/json"
        elif "b" in c:
            data = json.dumps(c["b"]).encode()
            headers["Content-Type"] = "application/json"
        if os.environ.get("DIFF_TRACE"):
            print(c["name"], file=sys.stderr, flush=True)
        try:
            r = session.request(c.get("m", "GET"), target, data=data, headers=headers, timeout=15)
        except requests.RequestException as e:
            # A server that never answers is an answer too; later cases still run on a new connection.
            out[c["name"]] = {"status": 0, "body": {"text": type(e).__name__}}
            session = requests.Session()
            continue
        text = r.text
        for var, where in (c.get("save") or {}).items():
            try:
                env[var] = str(_dig(r.json(), where))
            except (ValueError, KeyError, IndexError, TypeError):
                env[var] = "<unset:" + var + ">"
        out[c["name"]] = normalise(r.status_code, text, env)
    return out


def emulator_command():
    """The official emulator's launcher when the Google Cloud CLI has it installed, else None."""
    gcloud = shutil.which("gcloud")
    if not gcloud:
        return None
    sdk = os.path.dirname(os.path.dirname(os.path.realpath(gcloud)))
    launcher = os.path.join(sdk, "platform", "cloud-firestore-emulator", "cloud_firestore_emulator")
    if not os.path.exists(launcher) or not shutil.which("java"):
        return None
    return launcher


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_emulator(rules=RULES):
    """Starts the official emulator on a free port with `rules` (diff.rules); returns (process, base URL)."""
    launcher = emulator_command()
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="firestore-emulator-", suffix=".log", delete=False)
    proc = subprocess.Popen([launcher, "start", "--host=127.0.0.1", f"--port={port}", f"--rules={rules}",
                             "--database-mode=firestore-native"], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if requests.get(url + "/", timeout=1).status_code == 200:
                return proc, url
        except requests.RequestException:
            pass
        if proc.poll() is not None:
            raise RuntimeError("the Firestore emulator exited: " + open(log.name).read())
        time.sleep(0.25)
    stop_emulator(proc)
    raise RuntimeError("the Firestore emulator did not start in 90 s")


def stop_emulator(proc):
    # The launcher is a shell script running java: end the whole process group it leads.
    try:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass


def reset(base_url):
    requests.delete(f"{base_url}/emulator/v1/projects/{PROJECT}/databases/(default)/documents", timeout=30)


def load(path):
    with open(path) as f:
        return json.load(f)


def prepare_hearth(url, rules=RULES):
    """Installs `rules` (diff.rules) for the suite's project on a running Hearth and empties the project."""
    with open(rules) as f:
        source = f.read()
    r = requests.put(f"{url}/emulator/v1/projects/{PROJECT}:securityRules",
                     json={"rules": {"files": [{"name": os.path.basename(rules), "content": source}]}}, timeout=30)
    r.raise_for_status()
    reset(url)


def write_deviations(url):
    """Runs the script against a running Hearth at `url`; keeps its answers for the deviation cases."""
    import deviations
    prepare_hearth(url)
    answers = run(url)
    out = {}
    for name, cls in sorted(deviations.by_case().items()):
        cite, why = deviations.CLASSES[cls]
        out[name] = {"class": cls, "cite": cite, "why": why, "hearth": answers[name]}
    with open(DEVIATIONS, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"kept Hearth's answers for {len(out)} documented deviations in {DEVIATIONS}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--deviations":
        write_deviations(sys.argv[2].rstrip("/"))
        return 0
    if "--record" not in sys.argv:
        print("usage: python diffrun.py --record            (runs the official emulator, rewrites fixtures/emulator.json)\n"
              "       python diffrun.py --deviations URL    (a running Hearth's answers for the documented deviations)")
        return 2
    if not emulator_command():
        print("the official Cloud Firestore emulator is not installed (gcloud components install cloud-firestore-emulator)")
        return 1
    return record(FIXTURE)


def record(fixture, cases=None, rules=RULES):
    """Runs `cases` (default: this module's) on a fresh official emulator with `rules` and writes its
    answers into `fixture`; the recording flow of every differential fixture."""
    proc, url = start_emulator(rules)
    try:
        reset(url)
        answers = run(url, cases)
    finally:
        stop_emulator(proc)
    with open(fixture, "w") as f:
        json.dump(answers, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"recorded {len(answers)} answers into {fixture}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
