"""NFC/NFD differential over REST and the rules: Hearth's answers against the official emulator's.

unicodecases.py sends the same requests (two field names, map keys and document IDs differing only in
Unicode normalisation; filters, masks and rules comparing such strings) in order, with unicode.rules;
fixtures/emulator-unicode.json holds the emulator's normalised answers (`python unicodecases.py
--record`), so the Hearth half asserts them on machines without the emulator, and the last test checks
the recording still holds when the emulator is installed.
"""
import json
import os

import pytest

import diffrun
import unicodecases

FIXTURE = diffrun.load(unicodecases.FIXTURE)


def describe(name, got, want):
    return (f"{name}:\n  hearth:   {json.dumps(got, sort_keys=True, ensure_ascii=False)[:600]}\n"
            f"  expected: {json.dumps(want, sort_keys=True, ensure_ascii=False)[:600]}")


def mismatches(got):
    return [describe(n, got[n], FIXTURE[n]) for n in got if diffrun.comparable(got[n]) != diffrun.comparable(FIXTURE[n])]


def test_fixture_is_current():
    assert sorted(c["name"] for c in unicodecases.cases()) == sorted(FIXTURE), \
        "fixtures/emulator-unicode.json is stale: run `python unicodecases.py --record`"


def test_hearth_keeps_nfc_and_nfd_apart_as_the_official_emulator_does(hearth):
    url = hearth["services"]["firestore"]["url"].rstrip("/")
    diffrun.prepare_hearth(url, unicodecases.RULES)
    try:
        got = diffrun.run(url, unicodecases.cases())
    finally:
        diffrun.prepare_hearth(url)  # the other differential tests expect diff.rules
    wrong = mismatches(got)
    assert not wrong, f"{len(wrong)} of {len(got)} answers differ:\n" + "\n".join(wrong)


@pytest.mark.skipif(not diffrun.emulator_command(), reason="the official Cloud Firestore emulator is not installed "
                    "(gcloud components install cloud-firestore-emulator); the Hearth half still asserts its recorded answers")
@pytest.mark.skipif(os.environ.get("HEARTH_DIFF_EMULATOR") == "0", reason="HEARTH_DIFF_EMULATOR=0")
def test_official_emulator_still_answers_as_recorded():
    proc, url = diffrun.start_emulator(unicodecases.RULES)
    try:
        diffrun.reset(url)
        got = diffrun.run(url, unicodecases.cases())
    finally:
        diffrun.stop_emulator(proc)
    stale = mismatches(got)
    assert not stale, f"{len(stale)} recorded answers no longer hold (re-record):\n" + "\n".join(stale)
