"""The hub: health, the emulator map, the shared clock, the global reset."""
import calendar

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


FROZEN = calendar.timegm((2030, 5, 1, 12, 0, 0))
LAST_SECOND = calendar.timegm((9999, 12, 31, 23, 59, 59))


def test_clock_refuses_an_advance_past_the_dates_it_can_write(hub_url):
    """An advance that leaves years 1–9999 (or is no finite number) is refused and leaves the clock
    as it was; 1e300 seconds used to trap converting to microseconds and take the process down."""
    r = requests.put(f"{hub_url}/emulator/v1/clock", json={"frozenAt": "2030-05-01T12:00:00Z"})
    assert r.status_code == 200
    try:
        for seconds in [1e300, -1e300, 1e13, -1e12, LAST_SECOND + 1 - FROZEN]:
            r = requests.put(f"{hub_url}/emulator/v1/clock", json={"advanceSeconds": seconds})
            assert r.status_code == 400, (seconds, r.text)
            assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
            assert "between years 1 and 9999" in r.json()["error"]["message"]
            assert requests.get(f"{hub_url}/emulator/v1/clock").json()["now"] == "2030-05-01T12:00:00.000000Z"
        for frozen in ["0000-12-31T00:00:00Z", "9999-12-31T23:00:00-01:00"]:
            r = requests.put(f"{hub_url}/emulator/v1/clock", json={"frozenAt": frozen})
            assert r.status_code == 400, (frozen, r.text)
            assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
            assert requests.get(f"{hub_url}/emulator/v1/clock").json()["now"] == "2030-05-01T12:00:00.000000Z"
        # The last second of year 9999 is still a time the clock may show.
        r = requests.put(f"{hub_url}/emulator/v1/clock", json={"advanceSeconds": LAST_SECOND - FROZEN})
        assert r.status_code == 200, r.text
        assert r.json()["now"] == "9999-12-31T23:59:59.000000Z"
    finally:
        requests.put(f"{hub_url}/emulator/v1/clock", json={"mode": "system"})
    assert requests.get(f"{hub_url}/healthz").text == "ok"
