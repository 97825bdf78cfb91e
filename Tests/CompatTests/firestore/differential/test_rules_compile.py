"""Differential: loading rules with PUT /emulator/v1/projects/P:securityRules, on Hearth and on the
official Cloud Firestore emulator (its answers in fixtures/emulator-rules-compile.json; when the
emulator is installed the last test asks it again).

The load itself must agree: a file the emulator loads (200, its issues warnings) Hearth loads, and a
file it refuses (400 "Error compiling rules:") Hearth refuses. Beyond that, per case: a 200's issues
(line, column, severity, description) where Hearth reports the same ones; a 400's first error position
and its description (exactly, or for syntax errors the emulator's `Unexpected 'x'` as the start of
Hearth's, which goes on to say what was expected). docs/rules.md lists what is left.
"""
import pytest

import diffrun
import rulescompilecases as rc

FIXTURE = diffrun.load(rc.FIXTURE)
RUN_FIXTURE = diffrun.load(rc.RUN_FIXTURE)

# Status differs on purpose (docs/rules.md, "Check diagnostics").
LOAD_DEVIATIONS = {
    "bad_regex": "Hearth's regular expressions are not RE2: a constant pattern it cannot compile is a warning "
                 "(the call fails at run time), since the emulator may accept it",
}
# 200 on both, but the emulator warns about more (or other) things than Hearth does.
# float_method: the emulator's checker types a method's receiver (`1..size()`: `Invalid type. Received
# one of [float].`); Hearth's does not, and the call fails at request time on both (RUN_CASES).
OTHER_WARNINGS = {"type_cond", "unused_let", "no_version", "v1", "shadow_builtin", "float_method"}
# 400 on both; the first error is placed differently (other parser, other recovery).
# path_literal_variable_suffix: `(/a/{x}b)` is refused by both; the emulator's first error is at the
# path's start ("Missing 'match' keyword before path."), Hearth's at the `b` after `{x}`.
OTHER_FIRST_POSITION = {"bad_segment", "bad_segment2", "unterminated_string", "two_recursive", "bad_is_type",
                        "path_literal_variable_suffix"}
# 400 on both; the first error's description is Hearth's own.
OWN_DESCRIPTION = {"bad_segment", "bad_segment2", "unterminated_string", "missing_brace", "missing_semicolon_fn",
                   "path_literal_variable_suffix"}
# A built-in or method given the wrong number of arguments: the emulator's run-time message names its
# signatures (`Expected: string.size().`); Hearth's is `Function not found error: Name: [size].`
BUILTIN_SIGNATURE = {"builtin_no_arg", "namespaced_extra_arg", "method_extra_arg"}


def issues(answer):
    return sorted((i["sourcePosition"].get("line"), i["sourcePosition"].get("column"), i["severity"], i["description"])
                  for i in answer["body"].get("issues", []))


def first_error(answer):
    line = answer["body"]["error"]["message"].split("\n")[1]
    position, _, description = line.partition(" ")
    return position, description


def differences(name, emulator, hearth):
    if emulator["status"] != hearth["status"]:
        return [f"status: emulator {emulator['status']}, hearth {hearth['status']}"]
    if emulator["status"] == 200:
        if name in OTHER_WARNINGS:
            return []
        want, got = issues(emulator), issues(hearth)
        return [] if want == got else [f"issues: emulator {want}, hearth {got}"]
    (want_at, want), (got_at, got) = first_error(emulator), first_error(hearth)
    out = []
    if name not in OTHER_FIRST_POSITION and want_at != got_at:
        out.append(f"first error at: emulator {want_at}, hearth {got_at}")
    if name not in OWN_DESCRIPTION:
        same = got == want or (want.startswith("Unexpected ") and got.startswith(want.rstrip(".")))
        if not same:
            out.append(f"first error: emulator {want!r}, hearth {got!r}")
    return out


def test_fixture_is_recorded():
    assert sorted(FIXTURE) == sorted(rc.CASES), "stale fixture: python rulescompilecases.py --record"
    assert sorted(RUN_FIXTURE) == sorted(rc.RUN_CASES), "stale fixture: python rulescompilecases.py --record"
    assert len(rc.CASES) >= 30
    for name in LOAD_DEVIATIONS:
        assert FIXTURE[name]["status"] in (200, 400)


@pytest.fixture(scope="module")
def hearth_answers(hearth):
    return rc.run(hearth["services"]["firestore"]["url"].rstrip("/"))


@pytest.mark.parametrize("name", sorted(rc.CASES))
def test_hearth_loads_as_the_emulator(hearth_answers, name):
    emulator, hearth = FIXTURE[name], hearth_answers[name]
    if name in LOAD_DEVIATIONS:
        assert emulator["status"] != hearth["status"], f"{name}: now agrees, drop the deviation"
        return
    assert not differences(name, emulator, hearth), f"{name}: {differences(name, emulator, hearth)}"


def test_an_undefined_function_loads_and_fails_at_request_time(hearth):
    """The emulator warns about `nope()` and loads the file; the call fails when a request runs it."""
    import requests
    url = hearth["services"]["firestore"]["url"].rstrip("/")
    rules = rc.w("    match /a/{id} { allow get: if nope(); }\n    match /b/{id} { allow get: if true; }")
    assert rc.put(url, rules)["status"] == 200
    denied = requests.get(f"{url}/v1/projects/{rc.PROJECT}/databases/(default)/documents/a/x", timeout=30)
    assert denied.status_code == 403
    assert "Function not found error: Name: [nope]. for 'get' @ L4" in denied.json()["error"]["message"]
    assert requests.get(f"{url}/v1/projects/{rc.PROJECT}/databases/(default)/documents/b/x", timeout=30).status_code == 404


@pytest.fixture(scope="module")
def hearth_denials(hearth):
    return rc.run_time(hearth["services"]["firestore"]["url"].rstrip("/"))


@pytest.mark.parametrize("name", sorted(rc.RUN_CASES))
def test_a_failing_call_is_denied_as_on_the_emulator(hearth_denials, name):
    emulator, hearth = RUN_FIXTURE[name], hearth_denials[name]
    assert (hearth["load"], hearth["status"]) == (emulator["load"], emulator["status"])
    want, got = diffrun.first_denial(emulator["message"]), diffrun.first_denial(hearth["message"])
    if name in BUILTIN_SIGNATURE:
        assert want.startswith("Incorrect number of arguments.") and got.startswith("Function not found error: Name: ["), \
            f"{name}: now {got!r}, the emulator {want!r}"
        return
    assert got == want


@pytest.mark.skipif(not diffrun.emulator_command(), reason="the official Cloud Firestore emulator is not installed")
def test_the_emulator_still_answers_as_recorded():
    assert rc.emulator_answers() == (FIXTURE, RUN_FIXTURE)
