"""Doc snippets run as written: every fenced block in docs/*.md and README.md marked
`<!-- doc-test: run -->` is executed (sh with bash, python with the venv's python) twice in a row
against a fresh Hearth, and a following block marked `<!-- doc-test: output -->` must be what it
prints. A page's snippets share one working directory (with the repo's `rules/` copied in) and the
exports of that Hearth, as a reader's shell would after `eval "$(jq … ready.json)"`."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from hearthharness import REPO, hearth_bin, start_hearth, stop_hearth

FENCE = re.compile(r"(?:<!-- doc-test: (run|output) -->\n)?```(\w*)\n(.*?)\n```", re.S)

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
        for i, m in enumerate(blocks):
            if m.group(1) != "run":
                continue
            expected = None
            if i + 1 < len(blocks) and blocks[i + 1].group(1) == "output":
                expected = blocks[i + 1].group(3)
            found.append(pytest.param(page, m.group(2), m.group(3), expected,
                                      id=f"{os.path.relpath(page, REPO)}#{i}-{m.group(2)}"))
    return found


def test_the_docs_have_runnable_snippets():
    assert len(snippets()) >= 2


@pytest.mark.parametrize("page,language,code,expected", snippets())
def test_snippet_runs_twice_as_written(page, language, code, expected):
    work = tempfile.mkdtemp(prefix="hearth-doc-")
    shutil.copytree(os.path.join(REPO, "rules"), os.path.join(work, "rules"))
    proc, ready, _ = start_hearth()
    try:
        env = dict(os.environ, **ready["env"], HEARTH=hearth_bin(), HEARTH_READY=os.path.join(work, "ready.json"))
        for run in (1, 2):
            if language == "sh":
                r = subprocess.run(["bash", "-c", PRELUDE + code], cwd=work, env=env, capture_output=True, text=True, timeout=120)
            elif language == "python":
                r = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=120)
            else:
                pytest.fail(f"{page}: no runner for ```{language}")
            assert r.returncode == 0, f"run {run} of a snippet in {page} failed ({r.returncode}):\n{code}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
            if expected is not None:
                assert r.stdout.strip() == expected.strip(), f"run {run}: {page} shows\n{expected}\nbut the snippet printed\n{r.stdout}"
    finally:
        stop_hearth(proc)
        shutil.rmtree(work, ignore_errors=True)
