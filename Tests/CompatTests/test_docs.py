"""Doc snippets run as written: every fenced block in docs/*.md and README.md marked
`<!-- doc-test: run -->` is executed (sh with bash, python with the venv's python) twice in a row
against a fresh Hearth, and a following block marked `<!-- doc-test: output -->` must be what it
prints — compared without whitespace (so JSON may be shown pretty), `…` standing for any text.
A page's `<!-- doc-test: setup -->` blocks (its helpers) run first in the same shell, their output
discarded. Snippets run in a scratch directory with the repo's `rules/` copied in, with the exports
of that Hearth and `HEARTH_READY` naming its ready file, as a reader's shell would have them."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from hearthharness import REPO, hearth_bin, start_hearth, stop_hearth

FENCE = re.compile(r"(?:<!-- doc-test: (run|output|setup|skip:[^>]*) -->\n)?```(\w*)\n(.*?)\n```", re.S)

# Stand-ins a snippet may call for what only the reader has: the app's own test command.
PRELUDE = """
set -euo pipefail
npm() { [ -n "${FIREBASE_AUTH_EMULATOR_HOST:-}" ] && [ -n "${AWS_ENDPOINT_URL_S3:-}" ] && echo "app tests ran against $FIRESTORE_EMULATOR_HOST"; }
"""


def snippets():
    """(page, index, language, code, expected output or None) for every block marked run."""
    found = []
    for page in sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))) + [os.path.join(REPO, "README.md")]:
        blocks = list(FENCE.finditer(open(page).read()))
        setup = ""
        for i, m in enumerate(blocks):
            if m.group(1) == "setup":
                setup += m.group(3) + "\n"
            if m.group(1) != "run":
                continue
            expected = None
            if i + 1 < len(blocks) and blocks[i + 1].group(1) == "output":
                expected = blocks[i + 1].group(3)
            code = m.group(3) if m.group(2) != "sh" or not setup else "{\n" + setup + "} > /dev/null\n" + m.group(3)
            found.append(pytest.param(page, m.group(2), code, expected,
                                      id=f"{os.path.relpath(page, REPO)}#{i}-{m.group(2)}"))
    return found


def matches(expected, output):
    """Whether `output` is `expected` ignoring whitespace, with each `…` matching any text."""
    squash = lambda t: re.sub(r"\s+", "", t)
    pattern = ".*?".join(re.escape(part) for part in squash(expected).split("…"))
    return re.fullmatch(pattern, squash(output), re.S) is not None


def test_the_matcher():
    assert matches('{"a": 1,\n "b": "x…z"}', '{"a":1,"b":"xyyz"}')
    assert not matches('{"a": 2}', '{"a":1}')


def test_every_shell_snippet_is_run_or_says_why_not():
    """A new shell block must be marked run/setup (and so tested) or `skip: <reason>`."""
    unmarked = []
    for page in sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))) + [os.path.join(REPO, "README.md")]:
        for m in re.finditer(r"(<!-- doc-test: ([^>]*)-->\n)?```(sh|bash|shell)\n(.*?)\n```", open(page).read(), re.S):
            marker = (m.group(2) or "").strip()
            if not (marker in ("run", "setup") or (marker.startswith("skip:") and len(marker) > len("skip: "))):
                unmarked.append(f"{os.path.relpath(page, REPO)}: {m.group(4).splitlines()[0]}")
    assert not unmarked, "shell snippets neither run nor marked `<!-- doc-test: skip: reason -->`:\n" + "\n".join(unmarked)


def test_the_docs_have_runnable_snippets():
    assert len(snippets()) >= 9


@pytest.mark.parametrize("page,language,code,expected", snippets())
def test_snippet_runs_twice_as_written(page, language, code, expected):
    work = tempfile.mkdtemp(prefix="hearth-doc-")
    shutil.copytree(os.path.join(REPO, "rules"), os.path.join(work, "rules"))
    proc, ready, tmp = start_hearth()
    try:
        env = dict(os.environ, **ready["env"], HEARTH=hearth_bin(), HEARTH_READY=os.path.join(tmp, "ready.json"))
        for run in (1, 2):
            if language == "sh":
                r = subprocess.run(["bash", "-c", PRELUDE + code], cwd=work, env=env, capture_output=True, text=True, timeout=120)
            elif language == "python":
                r = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=120)
            else:
                pytest.fail(f"{page}: no runner for ```{language}")
            assert r.returncode == 0, f"run {run} of a snippet in {page} failed ({r.returncode}):\n{code}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
            if expected is not None:
                assert matches(expected, r.stdout), f"run {run}: {page} shows\n{expected}\nbut the snippet printed\n{r.stdout}"
    finally:
        stop_hearth(proc)
        shutil.rmtree(work, ignore_errors=True)
