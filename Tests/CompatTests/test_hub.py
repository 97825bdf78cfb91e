"""The hub: health, the emulator map, the shared clock, the global reset."""
import requests


def test_healthz(hub_url):
    r = requests.get(f"{hub_url}/healthz")
    assert r.status_code == 200
    assert r.text == "ok"


def test_emulators_lists_every_listener(hearth, hub_url):
    body = requests.get(f"{hub_url}/emulators").json()
    for name, svc in hearth["services"].items():
        assert body[name]["port"] == svc["port"]
        assert body[name]["host"] == "127.0.0.1"


def test_clock_freeze_advance_and_release(hub_url):
    r = requests.put(f"{hub_url}/emulator/v1/clock", json={"frozenAt": "2030-05-01T12:00:00Z"})
    assert r.status_code == 200
    assert r.json() == {"now": "2030-05-01T12:00:00.000000Z", "mode": "frozen"}
    r = requests.put(f"{hub_url}/emulator/v1/clock", json={"advanceSeconds": 3600})
    assert r.json()["now"] == "2030-05-01T13:00:00.000000Z"
    assert requests.get(f"{hub_url}/emulator/v1/clock").json()["now"] == "2030-05-01T13:00:00.000000Z"
    r = requests.put(f"{hub_url}/emulator/v1/clock", json={"mode": "system"})
    assert r.json()["mode"] == "system"
    assert not r.json()["now"].startswith("2030-05-01T13:00:00")


def test_clock_rejects_bad_input(hub_url):
    for body in [{"frozenAt": "yesterday"}, {"mode": "sideways"}, {}]:
        r = requests.put(f"{hub_url}/emulator/v1/clock", json=body)
        assert r.status_code == 400
        assert r.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_reset_answers_empty_object(hub_url):
    r = requests.post(f"{hub_url}/emulator/v1/reset")
    assert r.status_code == 200
    assert r.json() == {}
