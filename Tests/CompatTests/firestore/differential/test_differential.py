"""Differential suite: Hearth's Firestore REST answers against the official Cloud Firestore emulator's.

diffcases.py is the script (hundreds of requests, run in order); fixtures/emulator.json holds the
emulator's normalised answers, recorded with `python diffrun.py --record`, so the Hearth half asserts
them on machines without the emulator. fixtures/deviations.json lists the cases where the emulator
contradicts Firestore's documentation: there Hearth follows the docs (each entry cites them, and
docs/firestore.md lists them) and the suite asserts Hearth's documented answer instead. diffgrpc.py
sends the database-level cases (commit, batchGet, runQuery, …) over gRPC as well, against
fixtures/emulator-grpc.json. When the emulator is installed, the last test runs both against it
too and checks the recordings still hold.
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
    print(f"\ndifferential over REST: {agree} of {len(got)} answers agree ({len(DEVIATIONS)} of them documented deviations)")
    assert not mismatches, f"{len(mismatches)} of {len(got)} answers differ:\n" + "\n".join(mismatches)


def grpc_available():
    try:
        import google.cloud.firestore_v1  # noqa: F401
        import grpc  # noqa: F401
        return True
    except ImportError:
        return False


@pytest.mark.skipif(not grpc_available(), reason="google-cloud-firestore and grpcio are not installed (make venv installs them)")
def test_hearth_answers_over_grpc_as_the_official_emulator(hearth):
    import diffgrpc
    recorded = diffrun.load(diffgrpc.FIXTURE)
    kept = diffrun.load(diffgrpc.DEVIATIONS)
    assert sorted(c["name"] for c in diffgrpc.grpc_cases()) == sorted(recorded), \
        "fixtures/emulator-grpc.json is stale: run `python diffgrpc.py --record`"
    assert {n: d["class"] for n, d in kept.items()} == {n: c for n, c in deviations.by_case().items() if n in recorded}, \
        "fixtures/deviations-grpc.json does not match deviations.py: run `python diffgrpc.py --deviations URL`"
    url = hearth["services"]["firestore"]["url"].rstrip("/")
    diffrun.prepare_hearth(url)
    got = diffgrpc.run(url.split("//", 1)[1])
    expected = {n: kept[n]["hearth"] if n in kept else recorded[n] for n in recorded}
    mismatches = [describe(n, got[n], expected[n]) for n in got
                  if diffrun.comparable(got[n]) != diffrun.comparable(expected[n])]
    documented = sum(1 for n in kept if diffrun.comparable(kept[n]["hearth"]) != diffrun.comparable(recorded[n]))
    print(f"\ndifferential over gRPC: {len(got) - len(mismatches)} of {len(got)} answers agree "
          f"({documented} of them documented deviations)")
    assert not mismatches, f"{len(mismatches)} of {len(got)} gRPC answers differ:\n" + "\n".join(mismatches)


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
        grpc_got, grpc_recorded = {}, {}
        if grpc_available():
            import diffgrpc
            diffrun.reset(url)
            grpc_got, grpc_recorded = diffgrpc.run(url.split("//", 1)[1]), diffrun.load(diffgrpc.FIXTURE)
    finally:
        diffrun.stop_emulator(proc)
    stale = [describe(n, got[n], FIXTURE[n]) for n in got if diffrun.comparable(got[n]) != diffrun.comparable(FIXTURE[n])]
    stale += [describe("grpc " + n, grpc_got[n], grpc_recorded[n]) for n in grpc_got
              if diffrun.comparable(grpc_got[n]) != diffrun.comparable(grpc_recorded[n])]
    assert not stale, f"{len(stale)} recorded answers no longer hold (re-record):\n" + "\n".join(stale)
