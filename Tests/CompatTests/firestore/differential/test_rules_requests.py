"""Differential: rules decided at request time, on Hearth and on the official Cloud Firestore emulator.

rulesrtcases.py loads one rules file with some 580 expression cases (string, list, set, map, math,
timestamp, duration, hashing, latlng, type, path and conversion built-ins, int/float equality and
overflow, null and missing fields, auth token claims, short-circuits with errors, functions and lets)
and runs a GET for each, then writes through `:commit` (masks, merges, transforms, batches with
getAfter/existsAfter, get/exists of missing documents and collections), a transaction, `runQuery`
and ListDocuments (request.query), and recursive wildcards. The emulator's answers are in
fixtures/emulator-rules-requests.json; when it is installed the last test asks it again.

Compared per case: the HTTP status and error status (the decision), and for a rules denial the first
`<reason> for '<method>' @ L<line>` of its message. docs/rules.md ("Decisions at request time") lists
what differs on purpose.
"""
import pytest

import diffrun
import rulesrtcases as rc

FIXTURE = diffrun.load(rc.FIXTURE)

# Firebase's reference documents these otherwise than the emulator answers; Hearth follows the
# reference (docs/rules.md): name -> (Hearth's HTTP status, why).
DOCUMENTED = {
    "get_missing_doc": (404, "rules.firestore.get: 'the document, or null if it does not exist'; the emulator fails the call"),
    "get_missing_null": (200, "the same, for a create"),
    "math_is_infinite": (404, "rules.math documents isInfinite; the emulator has no such function"),
    "replace_missing_group": (403, "the emulator fails the request (500: RE2/J's 'n > number of groups'); Hearth denies it"),
    "replace_named_missing": (403, "the same, RE2/J's \"group 'nope' not found\""),
    "replace_brace_number": (403, "the same: `${1}` names a group called '1'"),
    "replace_brace_unclosed": (403, "the same, \"named capture group is missing trailing '}'\""),
}

# Known gaps (docs/rules.md): the emulator allows, Hearth denies. A map's `values()` come in the
# order its entries were written there (a literal's, a request's JSON fields', kept when stored; its
# keys() sorted); Hearth's maps keep key order only. The empty pattern splits a surrogate pair
# there (Java's UTF-16 strings); Hearth's strings hold whole characters.
GAPS = {
    "map_values_literal_order": "values() of a map literal in the literal's order",
    "map_values_nested_order": "the same, a nested literal",
    "map_values_three_order": "the same, three entries",
    "map_values_length_order": "the same, keys of two lengths",
    "values_written_order": "a document's values() in its fields' written order",
    "split_empty_astral": "split('') splits a surrogate pair there",
    "replace_empty_astral": "replace('', …) inserts inside a surrogate pair there",
}

# The emulator judges each allow twice and words the first judgement `evaluation error at L5:24`
# where the condition reads a document (resource, request.resource, get/exists); Hearth names the
# reason of its one judgement (`false`, `Null value error.`). Same decision.
FIRST_PASS = {
    "array_union_present", "batch_half", "batch_pair_wrong", "delete_missing_doc", "delete_wrong_resource",
    "exists_profile_bob", "get_missing_field", "get_profile_bob", "increment_by_two", "mask_delete_field_b",
    "mask_update_b", "mask_whole_doc_same_b", "resource_data_missing_doc", "resource_data_missing_doc_ne",
    "txn_commit_bad", "batch_create_without_delete", "batch_delete_one_after",
}

# Same decision, each server's own words.
OWN_MESSAGE = {
    "dur_bad_unit": "the emulator says 'Invalid regular expression pattern. Pattern: y.' of an unknown unit",
    "method_update": "for an update under `allow write` the emulator names the create it tried",
    "batch_delete_then_get_after": "the emulator's first line names the batch's delete (allowed: `if true`), "
                                   "Hearth the create whose getAfter() is null",
    "list_no_page_size": "the emulator pages ListDocuments by 30 and tells the rules limit 30; Hearth returns "
                         "every document and tells none (null <= 10 is an error)",
    # A method given the wrong number of arguments: the emulator names its signature, Hearth does not
    # keep that table (docs/rules.md, *Check diagnostics*).
    "ts_hours_tz": "'Incorrect number of arguments. … Expected: timestamp.hours().' there, not found here",
    "ts_day_tz": "the same, timestamp.day()",
    "ts_date_tz": "the same, timestamp.date()",
}

# get()/exists() of a collection: the emulator prints the path as a protocol buffer.
SERVICE_CALL = {"exists_collection", "exists_collection_path", "get_collection"}


def decision(answer):
    return answer["status"], answer["code"]


def test_fixture_is_recorded():
    names = set(rc.EXPRS) | {c[0] for c in rc.write_cases()} | {"_load"}
    assert set(FIXTURE) == names, "stale fixture: python rulesrtcases.py --record"
    assert FIXTURE["_load"]["status"] == 200
    for name in FIRST_PASS:
        assert diffrun.first_denial(FIXTURE[name]["message"]).startswith("evaluation error at L"), name
    for name, (status, _) in DOCUMENTED.items():
        assert FIXTURE[name]["status"] != status, f"{name}: the emulator now answers as the reference says"
    for name in GAPS:
        assert FIXTURE[name]["status"] in (200, 404), f"{name}: the emulator no longer allows it"


@pytest.fixture(scope="module")
def hearth_answers(hearth):
    return rc.run(hearth["services"]["firestore"]["url"].rstrip("/"))


@pytest.mark.parametrize("name", sorted(set(FIXTURE) - {"_load"}))
def test_hearth_decides_as_the_emulator(hearth_answers, name):
    emulator, hearth = FIXTURE[name], hearth_answers[name]
    if name in DOCUMENTED:
        assert hearth["status"] == DOCUMENTED[name][0], f"{name}: {hearth}"
        return
    if name in GAPS:
        assert hearth["status"] == 403, f"{name}: {hearth} (a gap closed? drop it from GAPS)"
        return
    assert decision(hearth) == decision(emulator), f"{name}: emulator {emulator}, hearth {hearth}"
    if emulator["code"] != "PERMISSION_DENIED" or name in FIRST_PASS or name in OWN_MESSAGE:
        return
    want, got = diffrun.first_denial(emulator["message"]), diffrun.first_denial(hearth["message"])
    if name in SERVICE_CALL:
        function = "get" if "get" in name else "exists"
        assert f"Service call error. Function: [{function}]" in emulator["message"]
        assert got.startswith(f"Service call error. Function: [{function}], Argument: [/databases/"), got
        return
    assert got == want


@pytest.mark.skipif(not diffrun.emulator_command(), reason="the official Cloud Firestore emulator is not installed")
def test_the_emulator_still_answers_as_recorded():
    assert rc.emulator_answers() == FIXTURE
