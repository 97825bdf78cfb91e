"""The hub's `POST /v1/projects/{p}:test`, shaped like Google's firebaserules.projects.test."""
import copy
import json
import os

import requests

from hearthharness import REPO


def suite(name):
    with open(os.path.join(REPO, "rules", "tests", name)) as f:
        return json.load(f)


def rules_source():
    with open(os.path.join(REPO, "rules", "firestore.rules")) as f:
        return f.read()


def test_shipped_suite_passes_through_the_api(hub_url):
    body = {"source": {"files": [{"name": "firestore.rules", "content": rules_source()}]}, "testSuite": suite("files-read.json")}
    r = requests.post(f"{hub_url}/v1/projects/demo-hearth:test", json=body)
    assert r.status_code == 200, r.text
    results = r.json()["testResults"]
    assert len(results) == len(body["testSuite"]["testCases"])
    assert all(t["state"] == "SUCCESS" for t in results), results


def test_a_wrong_expectation_fails(hub_url):
    cases = suite("files-read.json")["testCases"]
    flipped = []
    for expectation in ("ALLOW", "DENY"):
        case = copy.deepcopy(next(c for c in cases if c["expectation"] == expectation))
        case["expectation"] = "DENY" if expectation == "ALLOW" else "ALLOW"
        flipped.append(case)
    body = {"source": {"files": [{"name": "firestore.rules", "content": rules_source()}]},
            "testSuite": {"testCases": flipped}}
    results = requests.post(f"{hub_url}/v1/projects/demo-hearth:test", json=body).json()["testResults"]
    assert [t["state"] for t in results] == ["FAILURE", "FAILURE"]


def test_invalid_rules_report_issues(hub_url):
    body = {"source": {"files": [{"name": "bad.rules", "content": "service cloud.firestore { match /x { allow read: if ; } }"}]},
            "testSuite": {"testCases": []}}
    r = requests.post(f"{hub_url}/v1/projects/demo-hearth:test", json=body)
    issues = r.json().get("issues", [])
    assert issues and issues[0]["severity"] == "ERROR"
    assert issues[0]["sourcePosition"]["fileName"] == "bad.rules"


def test_malformed_json_is_invalid_argument(hub_url):
    r = requests.post(f"{hub_url}/v1/projects/demo-hearth:test", data="{nope", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
