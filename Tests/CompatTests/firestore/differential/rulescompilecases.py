"""Rules files for PUT /emulator/v1/projects/P:securityRules, each answered by the official emulator
(fixtures/emulator-rules-compile.json, and for RUN_CASES the denial of a request that runs a failing call:
fixtures/emulator-rules-runtime.json; both recorded with `python rulescompilecases.py --record`) and by Hearth.

What is compared, per case (see test_rules_compile.py): the status always (does the file load?); for a
200, each issue's line, severity and description; for a 400, the first error's line and column, and
its description where Hearth words it as the emulator does.
"""
import json
import os
import sys

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "emulator-rules-compile.json")
RUN_FIXTURE = os.path.join(HERE, "fixtures", "emulator-rules-runtime.json")
PROJECT = "demo-rules-compile"

H = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"
T = "\n  }\n}\n"
def w(body, head=H):
    return head + body + T


# A storage block granting everything, for files that declare both services.
STORAGE = "service firebase.storage {\n  match /b/{bucket}/o {\n    match /{all=**} { allow read, write: if true; }\n  }\n}\n"


CASES = {
 "ok": w("    match /a/{id} { allow read: if true; }"),
 "undef_called": w("    match /a/{id} { allow read: if nope(); }"),
 "undef_uncalled_in_fn": w("    function f() { return nope(); }\n    match /a/{id} { allow read: if true; }"),
 "undef_ns": w("    match /a/{id} { allow read: if math.nope(1); }"),
 "unknown_var": w("    match /a/{id} { allow read: if foo == 1; }"),
 "arity_user": w("    function f(a) { return a; }\n    match /a/{id} { allow read: if f(1, 2); }"),
 "arity_builtin": w("    match /a/{id} { allow read: if exists(); }"),
 "arity_method": w("    match /a/{id} { allow read: if 'x'.size(1) == 1; }"),
 "unknown_method": w("    match /a/{id} { allow read: if 'x'.nope() == 1; }"),
 "type_err": w("    match /a/{id} { allow read: if 1 + 'a' == 2; }"),
 "type_cond": w("    match /a/{id} { allow read: if 1; }"),
 "unused_fn": w("    function f() { return true; }\n    match /a/{id} { allow read: if true; }"),
 "unused_let": w("    function f() { let x = 1; return true; }\n    match /a/{id} { allow read: if f(); }"),
 "dup_match": w("    match /a/{id} { allow read: if true; }\n    match /a/{id} { allow write: if true; }"),
 "dup_fn": w("    function f() { return true; }\n    function f() { return false; }\n    match /a/{id} { allow read: if f(); }"),
 "no_version": w("    match /a/{id} { allow read: if true; }", head="service cloud.firestore {\n  match /databases/{database}/documents {\n"),
 "v1": w("    match /a/{id} { allow read: if true; }", head="rules_version = '1';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"),
 "v1_recursive_mid": w("    match /a/{x=**}/b { allow read: if true; }", head="rules_version = '1';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"),
 "missing_semicolon_fn": w("    function f() { let x = 1 return x == 1; }\n    match /a/{id} { allow read: if f(); }"),
 "missing_brace": w("    match /a/{id} { allow read: if true;"),
 "missing_paren": w("    match /a/{id} { allow read: if (true; }"),
 "assign_eq": w("    match /a/{id} { allow read: if id = 'x'; }"),
 "bad_segment": w("    match /a/{id-x} { allow read: if true; }"),
 "bad_segment2": w("    match /a/b c { allow read: if true; }"),
 "bad_method": w("    match /a/{id} { allow reed: if true; }"),
 "missing_if": w("    match /a/{id} { allow read: true; }"),
 "extra_token": w("    match /a/{id} { allow read: if true true; }"),
 "unterminated_string": w("    match /a/{id} { allow read: if id == 'x; }"),
 "bad_is_type": w("    match /a/{id} { allow read: if id is nope; }"),
 "recursion": w("    function f() { return f(); }\n    match /a/{id} { allow read: if f(); }"),
 "bad_service": "rules_version = '2';\nservice cloud.nope {\n  match /x { allow read; }\n}\n",
 "allow_outside": w("    allow read: if true;"),
 "dup_param": w("    function f(a, a) { return a; }\n    match /a/{id} { allow read: if f(1, 1); }"),
 "dup_pathvar": w("    match /a/{id}/b/{id} { allow read: if true; }"),
 "two_recursive": w("    match /a/{x=**}/b/{y=**} { allow read: if true; }"),
 "bad_regex": w("    match /a/{id} { allow read: if id.matches('('); }"),
 "shadow_builtin": w("    function exists(p) { return true; }\n    match /a/{id} { allow read: if exists(1); }"),
 "unknown_request_field": w("    match /a/{id} { allow read: if request.nope == 1; }"),
 "empty": "",
 "svc_other": "rules_version = '2';\nservice foo.bar {\n  match /databases/{d}/documents { match /a/{id} { allow read: if true; } }\n}\n",
 # Both known services in one file (loads; Firestore is judged by its own block), one declared twice.
 "svc_fs_storage": w("    match /a/{id} { allow read: if true; }") + STORAGE,
 "svc_storage_fs": "rules_version = '2';\n" + STORAGE + w("    match /a/{id} { allow read: if true; }", head=H[len("rules_version = '2';\n"):]),
 "svc_storage_warn": w("    match /a/{id} { allow read: if true; }") + STORAGE.replace("if true", "if nope()"),
 "svc_storage_error": w("    match /a/{id} { allow read: if true; }") + STORAGE.replace("if true", "if nope(;"),
 "svc_two_fs": w("    match /a/{id} { allow read: if true; }") + w("    match /b/{id} { allow read: if true; }", head=H[len("rules_version = '2';\n"):]),
 "svc_two_storage": "rules_version = '2';\n" + STORAGE + STORAGE,
 # Float literals with an exponent: the emulator's grammar has none.
 "float_exp": w("    match /a/{id} { allow read: if 1e3 == 1000.0; }"),
 "float_exp_neg": w("    match /a/{id} { allow read: if 1.5e-3 > 0.0; }"),
 "float_exp_upper": w("    match /a/{id} { allow read: if 1.5E3 > 0.0; }"),
 "float_exp_plus": w("    match /a/{id} { allow read: if 2e+3 > 0.0; }"),
 # The other number literals users try (issue 20, flaky35): the emulator's grammar has decimal ints and
 # floats with one `.` (`1.` and `.5` included) and nothing else — no hex, unsigned suffix, `_`,
 # leading zero, unary plus or exponent (`1.e3` is `1.` then `e3`) — and whole numbers past int64 are
 # `Invalid number literal …`, but for -9223372036854775808 (RUN_CASES' number_literals has the values).
 "float_dot_exp": w("    match /a/{id} { allow read: if 1.e3 == 1000.0; }"),
 "float_trailing_dot": w("    match /a/{id} { allow read: if 1. == 1.0; }"),
 "float_leading_dot": w("    match /a/{id} { allow read: if .5 == 0.5; }"),
 "float_dot_name": w("    match /a/{id} { allow read: if 1.size() == 1; }"),
 "float_two_dots": w("    match /a/{id} { allow read: if 1.0.5 == 1; }"),
 "float_spaced_dot": w("    match /a/{id} { allow read: if 1 .5 == 1; }"),
 "int_hex": w("    match /a/{id} { allow read: if 0x10 == 16; }"),
 "int_hex_upper": w("    match /a/{id} { allow read: if 0X10 == 16; }"),
 "int_hex_past_int64": w("    match /a/{id} { allow read: if -0x8000000000000000 < 0; }"),
 "int_unsigned": w("    match /a/{id} { allow read: if 1u == 1; }"),
 "float_unsigned": w("    match /a/{id} { allow read: if 1.5u == 1.5; }"),
 "int_underscore": w("    match /a/{id} { allow read: if 1_000 == 1000; }"),
 "int_leading_zero": w("    match /a/{id} { allow read: if 01 == 1; }"),
 "int_zeros": w("    match /a/{id} { allow read: if 00 == 0; }"),
 "unary_plus": w("    match /a/{id} { allow read: if +1 == 1; }"),
 "unary_plus_inner": w("    match /a/{id} { allow read: if 1 == +1; }"),
 "unary_plus_paren": w("    match /a/{id} { allow read: if (+1) == 1; }"),
 "empty_condition": w("    match /a/{id} { allow read: if ; }"),
 "int_past_int64": w("    match /a/{id} { allow read: if 9223372036854775808 > 0; }"),
 "int_far_past_int64": w("    match /a/{id} { allow read: if 99999999999999999999 > 0; }"),
 "int_min": w("    match /a/{id} { allow read: if -9223372036854775808 < 0; }"),
 "int_below_min": w("    match /a/{id} { allow read: if -9223372036854775809 < 0; }"),
 "int_min_parenthesised": w("    match /a/{id} { allow read: if -(9223372036854775808) < 0; }"),
 "float_method": w("    match /a/{id} { allow read: if 1..size() == 1; }"),
 # faith38: a `/` followed at once by a path character starts a path on the emulator, even after an
 # operand (`10/2`); only `10 / 2` and `10/ 2` divide. `{x}` segments in path literals.
 "divide_no_space": w("    match /a/{id} { allow read: if 10/2 == 5; }"),
 "divide_space_before": w("    match /a/{id} { allow read: if 10 /2 == 5; }"),
 "divide_paren": w("    match /a/{id} { allow read: if (10)/(2) == 5; }"),
 "divide_dollar": w("    match /a/{id} { allow read: if 10/$(2) == 5; }"),
 "divide_space_after": w("    match /a/{id} { allow read: if 10/ 2 == 5 && 10 / 2 == 5; }"),
 "path_literal_variable": w("    match /a/{id} { allow read: if (/a/{x}/$(id)).bind({'x': 'v'}) == /a/v/$(id); }"),
 "path_literal_variable_twice": w("    match /a/{id} { allow read: if (/a/{x}/{x}) == null; }"),
 "path_literal_variable_suffix": w("    match /a/{id} { allow read: if (/a/{x}b) == null; }"),
}

# Files that load with a warning and a call that fails when a request runs it: the rules, then the
# document a GET asks for. What is compared is the denial's message.
RUN_CASES = {
 "user_extra_arg": (w("    function f(a) { return a; }\n    match /a/{id} { allow get: if f(1, 2); }"), "a/x"),
 "user_no_arg": (w("    function f(a) { return a; }\n    match /a/{id} { allow get: if f(); }"), "a/x"),
 "user_two_params": (w("    function f(a, b) { return a && b; }\n    match /a/{id} { allow get: if f(true); }"), "a/x"),
 "user_no_params": (w("    function f() { return true; }\n    match /a/{id} { allow get: if f(1); }"), "a/x"),
 "undefined": (w("    match /a/{id} { allow get: if nope(); }"), "a/x"),
 "builtin_no_arg": (w("    match /a/{id} { allow get: if exists(); }"), "a/x"),
 "namespaced_extra_arg": (w("    match /a/{id} { allow get: if math.abs(1, 2) == 1; }"), "a/x"),
 "method_extra_arg": (w("    match /a/{id} { allow get: if 'x'.size(1) == 1; }"), "a/x"),
 # Beside cloud.firestore, a storage block whose `match /{all=**}` would match any Firestore path
 # judges nothing there: the Firestore block's false decides.
 # Number literals' values: every comparison holds on the emulator, so the negation denies (a wrong
 # value would allow, and the GET would find no document: 404). Then a method called on `1.`.
 "number_literals": (w("    match /a/{id} { allow get: if !(.5 == 0.5 && 1. == 1.0 && 5. == 5.0 && -1. == -1.0"
                       " && [1., 2.] == [1.0, 2.0] && 0. == 0 && - 9223372036854775808 < 0"
                       " && -9223372036854775808 == -9223372036854775807 - 1 && 9223372036854775807 > 0"
                       " && 1000000000000000000000.0 > 0.0 && 1.1234567890123456789 > 1.0 && 0.0 == -0.0); }"), "a/x"),
 "float_method": (w("    match /a/{id} { allow get: if 1..size() == 1; }"), "a/x"),
 "storage_block_ignored": (w("    match /a/{id} { allow get: if false; }")
                           + "service firebase.storage {\n  match /{all=**} { allow read, write: if true; }\n}\n", "a/x"),
}


def put(url, source):
    r = requests.put(f"{url}/emulator/v1/projects/{PROJECT}:securityRules",
                     json={"rules": {"files": [{"name": "firestore.rules", "content": source}]}}, timeout=30)
    return {"status": r.status_code, "body": r.json()}


def run(url):
    return {name: put(url, source) for name, source in CASES.items()}


def run_time(url):
    """Each RUN_CASES file loaded, then its GET: the load's status, the GET's status and message."""
    out = {}
    for name, (source, doc) in RUN_CASES.items():
        loaded = put(url, source)["status"]
        r = requests.get(f"{url}/v1/projects/{PROJECT}/databases/(default)/documents/{doc}", timeout=30)
        out[name] = {"load": loaded, "status": r.status_code, "message": r.json().get("error", {}).get("message")}
    return out


def emulator_answers():
    """Every case's answer from a fresh official emulator: (CASES' loads, RUN_CASES' denials)."""
    sys.path.insert(0, HERE)
    import diffrun
    proc, url = diffrun.start_emulator()
    try:
        return run(url), run_time(url)
    finally:
        diffrun.stop_emulator(proc)


def record():
    answers, denials = emulator_answers()
    for path, recorded in ((FIXTURE, answers), (RUN_FIXTURE, denials)):
        with open(path, "w") as f:
            f.write(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(recorded)} answers in {path}")


if __name__ == "__main__":
    if "--record" not in sys.argv:
        print("usage: python rulescompilecases.py --record   (runs the official emulator, rewrites the fixture)")
        sys.exit(2)
    record()
