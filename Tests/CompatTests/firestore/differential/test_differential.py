"""Differential suite: Hearth's Firestore REST answers against the official Cloud Firestore emulator's.

diffcases.py is the script (hundreds of requests, run in order); fixtures/emulator.json holds the
emulator's normalised answers, recorded with `python diffrun.py --record`, so the Hearth half asserts
them on machines without the emulator. fixtures/deviations.json lists the cases where the emulator
contradicts Firestore's documentation: there Hearth follows the docs (each entry cites them, and
docs/firestore.md lists them) and the suite asserts Hearth's documented answer instead. When the
emulator is installed, the second test runs the script against it too and checks the recording
still holds.
"""
import json
import os

import pytest
import deviations
import diffrun

FIXTURE = diffrun.load(diffrun.FIXTURE)
DEVIATIONS = diffrun.load(diffrun.DEVIATIONS)


def expected_for_hearth(name):
    if name in DEVIATIONS:
        return DEVIATIONS[name]["hearth"]
    return FIXTURE[name]


def describe(name, got, want):
    return f"{name}:\n  hearth:   {json.dumps(got, sort_keys=True)[:600]}\n  expected: {json.dumps(want, sort_keys=True)[:600]}"


def test_script_is_large_and_recorded():
    names = [c["name"] for c in diffrun.diffcases.cases()]
    assert len(names) >= 500
    assert sorted(names) == sorted(FIXTURE), "fixtures/emulator.json is stale: run `python diffrun.py --record`"
    assert {n: d["class"] for n, d in DEVIATIONS.items()} == deviations.by_case(), \
        "fixtures/deviations.json does not match deviations.py: run `python diffrun.py --deviations URL`"
    for name, dev in DEVIATIONS.items():
        assert dev["cite"] == deviations.CLASSES[dev["class"]][0]
        assert dev.get("cite", "").startswith("https://"), f"{name}: a deviation needs a documentation citation"
        assert diffrun.comparable(dev["hearth"]) != diffrun.comparable(FIXTURE[name]), \
            f"{name}: the emulator now agrees with the docs; drop the deviation"


def test_hearth_answers_as_the_official_emulator(hearth):
    url = hearth["services"]["firestore"]["url"].rstrip("/")
    diffrun.prepare_hearth(url)
    got = diffrun.run(url)
    mismatches = [describe(n, got[n], expected_for_hearth(n)) for n in got
                  if diffrun.comparable(got[n]) != diffrun.comparable(expected_for_hearth(n))]
    agree = len(got) - len(mismatches)
    print(f"\ndifferential: {agree} of {len(got)} answers agree ({len(DEVIATIONS)} of them documented deviations)")
    assert not mismatches, f"{len(mismatches)} of {len(got)} answers differ:\n" + "\n".join(mismatches)


@pytest.mark.skipif(not diffrun.emulator_command(), reason="the official Cloud Firestore emulator is not installed "
                    "(gcloud components install cloud-firestore-emulator); the Hearth half still asserts its recorded answers")
@pytest.mark.skipif(os.environ.get("HEARTH_DIFF_EMULATOR") == "0", reason="HEARTH_DIFF_EMULATOR=0")
def test_official_emulator_still_answers_as_recorded():
    # Requests the emulator never answers are recorded as such; waiting out their timeouts again adds nothing.
    cases = [c for c in diffrun.diffcases.cases() if FIXTURE[c["name"]]["status"] != 0]
    proc, url = diffrun.start_emulator()
    try:
        diffrun.reset(url)
        got = diffrun.run(url, cases)
    finally:
        diffrun.stop_emulator(proc)
    stale = [describe(n, got[n], FIXTURE[n]) for n in got if diffrun.comparable(got[n]) != diffrun.comparable(FIXTURE[n])]
    assert not stale, f"{len(stale)} recorded answers no longer hold (re-record):\n" + "\n".join(stale)
