"""Rules decided at request time, on Hearth and on the official Cloud Firestore emulator.

One rules file (built here) gives each expression case a collection of its own, `/e<k>/{id}`, with
`allow get: if <expression>;` on a line of its own; a GET of a document there (signed in as a user with
custom claims, or signed out) is allowed (404: the document is missing) or denied (403, with the
emulator's `<reason> for 'get' @ L<line>`). The write cases write through `:commit` (batches), a
transaction and `runQuery` (list rules), with collections of their own. The emulator's answers are in
fixtures/emulator-rules-requests.json (`python rulesrtcases.py --record`); test_rules_requests.py
compares Hearth's with them.
"""
import base64
import json
import os
import sys

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "emulator-rules-requests.json")
PROJECT = "demo-rules-requests"
DOCS = f"projects/{PROJECT}/databases/(default)/documents"


def _b64(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def token(uid, **claims):
    """An unsigned ID token as @firebase/rules-unit-testing makes one (its mock user token)."""
    payload = {"iss": f"https://securetoken.google.com/{PROJECT}", "aud": PROJECT, "iat": 1700000000,
               "exp": 1700003600, "auth_time": 1700000000, "sub": uid, "user_id": uid,
               "firebase": {"sign_in_provider": "password", "identities": {"email": ["a@example.com"]}}}
    payload.update(claims)
    return _b64({"alg": "none", "type": "JWT"}) + "." + _b64(payload) + "."


ALICE = token("alice", email="a@example.com", email_verified=True, name="Alice", role="admin", level=3,
              groups=["g1", "g2"], org={"id": "o1"})
BOB = token("bob")

# name: expression (signed in as alice) — or (expression, "anon") signed out, (expression, "bob").
EXPRS = {
    # strings
    "matches_partial": "'abc'.matches('b')",
    "matches_full": "'abc'.matches('a.c')",
    "matches_anchors": "'abc'.matches('^abc$')",
    "matches_flag_i": "'ABC'.matches('(?i)abc')",
    "matches_dot_newline": "'a\\nb'.matches('a.b')",
    "matches_flag_s": "'a\\nb'.matches('(?s)a.b')",
    "matches_bad": "'a'.matches(id + '(')",
    "matches_class": "'a1_'.matches('\\\\w+')",
    "matches_unicode": "'\u00e9'.matches('.')",
    "split_empty_pieces": "'a,,b,'.split(',').size() == 4",
    "split_regex": "'a.b'.split('.').size() == 4",
    "split_class": "'a1b22c'.split('[0-9]+') == ['a', 'b', 'c']",
    "split_empty_sep": "'abc'.split('').size() == 3",
    "replace_all": "'aaa'.replace('a', 'b') == 'bbb'",
    "replace_regex": "'a1b22'.replace('[0-9]+', '#') == 'a#b#'",
    "replace_group": "'ab'.replace('(a)(b)', '$2$1') == 'ba'",
    "replace_group_backslash": "'ab'.replace('(a)(b)', '\\\\2\\\\1') == 'ba'",
    "lower_ascii": "'ABC'.lower() == 'abc'",
    "lower_unicode": "'\u00c4\u00c9'.lower() == '\u00e4\u00e9'",
    "upper_unicode": "'\u00e4\u00df'.upper() == '\u00c4SS'",
    "size_bmp": "'\u00e9t\u00e9'.size() == 3",
    "size_astral": "'\U0001F600'.size() == 1",
    "size_astral_2": "'\U0001F600'.size() == 2",
    "trim_spaces": "'  a b \\t'.trim() == 'a b'",
    "trim_nbsp": "'\u00a0a'.trim() == 'a'",
    "toutf8": "'\u00e9'.toUtf8() == b'\\xc3\\xa9'",
    "toutf8_size": "'\u00e9'.toUtf8().size() == 2",
    "string_index": "'abc'[1] == 'b'",
    "string_index_out": "'abc'[5] == 'b'",
    "string_slice": "'abcd'[1:3] == 'bc'",
    "string_concat": "'a' + 'b' == 'ab'",
    "string_less": "'B' < 'a'",
    "string_in": "'b' in 'abc'",
    "string_of_float": "string(1.0) == '1.0'",
    "string_of_big_float": "string(100000000000000000000.0) == '1.0E20'",
    "string_of_null": "string(null) == 'null'",
    "string_of_bool": "string(true) == 'true'",
    "string_of_list": "string([1, 'a']) == '[1, a]'",
    "int_of_string": "int('12') == 12",
    "int_of_float_string": "int('1.5') == 1",
    "int_of_float": "int(1.9) == 1 && int(-1.9) == -1",
    "float_of_string": "float('1.5') == 1.5",
    "float_of_int": "float(3) == 3.0",
    "int_of_huge_float": "int(1000000000000000000000000000000.0) > 0",
    # lists and sets
    "has_all": "[1, 2, 3].hasAll([1, 2])",
    "has_any_empty": "[1, 2].hasAny([])",
    "has_only_empty": "[].hasOnly([1])",
    "has_all_empty": "[].hasAll([])",
    "has_only_dupes": "[1, 1].hasOnly([1])",
    "to_set_size": "[1, 2, 2].toSet().size() == 2",
    "remove_all": "[1, 2, 1, 3].removeAll([1]) == [2, 3]",
    "concat": "[1].concat([2]) == [1, 2]",
    "list_plus": "[1] + [2] == [1, 2]",
    "in_list": "1 in [1, 2]",
    "in_list_float": "1.0 in [1, 2]",
    "list_index_out": "[1, 2][5] == 1",
    "list_index_negative": "[1, 2][-1] == 2",
    "list_slice": "[1, 2, 3][1:] == [2, 3]",
    "list_join": "['a', 'b'].join(',') == 'a,b'",
    "list_eq_order": "[1, 2] == [2, 1]",
    "set_eq": "[1, 2].toSet() == [2, 1].toSet()",
    "set_difference": "[1, 2].toSet().difference([2].toSet()) == [1].toSet()",
    "set_intersection": "[1, 2].toSet().intersection([2, 3].toSet()) == [2].toSet()",
    "set_union": "[1].toSet().union([2].toSet()).size() == 2",
    "set_has_all_list": "[1, 2].toSet().hasAll([1])",
    "set_in": "1 in [1, 2].toSet()",
    "nested_list_has_any": "[[1], [2]].hasAny([[2]])",
    "list_of_maps_in": "{'a': 1} in [{'a': 1}]",
    "list_size_null": "[null].size() == 1",
    # maps
    "map_get_default": "{'a': 1}.get('b', 0) == 0",
    "map_get_present": "{'a': 1}.get('a', 0) == 1",
    "map_get_path": "{'a': {'b': 2}}.get(['a', 'b'], 0) == 2",
    "map_get_path_missing": "{'a': {'b': 2}}.get(['a', 'c'], 7) == 7",
    "map_get_path_through_scalar": "{'a': 1}.get(['a', 'c'], 7) == 7",
    "map_get_null_value": "{'a': null}.get('a', 1) == null",
    "map_keys": "{'b': 1, 'a': 2}.keys() == ['a', 'b']",
    "map_keys_order": "{'b': 1, 'a': 2}.keys() == ['b', 'a']",
    "map_values": "{'b': 1, 'a': 2}.values().hasAll([1, 2])",
    "map_in": "'a' in {'a': 1}",
    "map_missing": "{'a': 1}.b == 1",
    "map_missing_index": "{'a': 1}['b'] == 1",
    "map_eq_numeric": "{'a': 1} == {'a': 1.0}",
    "map_size": "{'a': 1, 'b': 2}.size() == 2",
    "diff_affected": "{'a': 1, 'b': 2}.diff({'a': 1, 'b': 3, 'c': 4}).affectedKeys() == ['b', 'c'].toSet()",
    "diff_changed": "{'a': 1, 'b': 2}.diff({'a': 1, 'b': 3, 'c': 4}).changedKeys() == ['b'].toSet()",
    "diff_added": "{'a': 1}.diff({'a': 1, 'c': 4}).addedKeys() == ['c'].toSet()",
    "diff_removed": "{'a': 1}.diff({}).removedKeys() == ['a'].toSet()",
    "diff_unchanged": "{'a': 1, 'b': 1}.diff({'a': 1.0, 'b': 2}).unchangedKeys() == ['a'].toSet()",
    "diff_has_only": "{'a': 1}.diff({'a': 2}).affectedKeys().hasOnly(['a', 'z'])",
    "map_merge_plus": "({'a': 1} + {'b': 2}).size() == 2",
    # math and numbers
    "math_abs": "math.abs(-1) == 1",
    "math_ceil": "math.ceil(1.2) == 2",
    "math_ceil_type": "math.ceil(1.2) is int",
    "math_floor_int": "math.floor(3) == 3",
    "math_round_half": "math.round(2.5) == 3 && math.round(-2.5) == -3",
    "math_round_type": "math.round(2.5) is int",
    "math_sqrt": "math.sqrt(4) == 2.0",
    "math_sqrt_negative": "math.isNaN(math.sqrt(-1))",
    "math_pow": "math.pow(2, 10) == 1024",
    "math_pow_type": "math.pow(2, 10) is float",
    "math_is_infinite": "math.isInfinite(1.0 / 0.0)",
    "math_nan_eq": "math.isNaN(0.0 / 0.0)",
    "float_div_zero_int": "1.0 / 0 > 0",
    "int_div_zero": "1 / 0 == 0",
    "int_mod_zero": "1 % 0 == 0",
    "int_div_trunc": "-7 / 2 == -3",
    "int_mod_negative": "-7 % 3 == -1",
    "float_mod": "7.5 % 2 == 1.5",
    "int_overflow_add": "9223372036854775807 + 1 < 0",
    "int_overflow_mul": "4611686018427387904 * 2 < 0",
    "int_overflow_neg_div": "-9223372036854775808 / -1 < 0",
    "int_overflow_sub": "-9223372036854775807 - 2 > 0",
    "int_float_eq": "1 == 1.0",
    "int_float_lt": "1 < 1.5",
    "float_sum": "0.1 + 0.2 == 0.3",
    "int_plus_float": "(1 + 0.5) is float",
    "nan_ne": "(0.0 / 0.0) != (0.0 / 0.0)",
    "big_int_float_eq": "9007199254740993 == 9007199254740992.0",
    # timestamps and durations
    "time_after_2020": "request.time > timestamp.date(2020, 1, 1)",
    "time_minus_hour": "request.time - duration.value(1, 'h') < request.time",
    "time_year": "request.time.year() >= 2024",
    "ts_to_millis": "timestamp.date(2020, 1, 1).toMillis() == 1577836800000",
    "ts_value": "timestamp.value('2020-01-01T00:00:00Z') == timestamp.date(2020, 1, 1)",
    "ts_value_bad": "timestamp.value('yesterday') == request.time",
    "ts_value_offset": "timestamp.value('2020-01-01T01:00:00+01:00') == timestamp.date(2020, 1, 1)",
    "ts_date_invalid": "timestamp.date(2020, 2, 30) > request.time",
    "ts_day_of_week": "timestamp.date(2020, 1, 1).dayOfWeek() == 3",
    "ts_day_of_year": "timestamp.date(2020, 12, 31).dayOfYear() == 366",
    "ts_date_method": "timestamp.date(2020, 1, 1).date() == timestamp.date(2020, 1, 1)",
    "ts_time_method": "timestamp.date(2020, 1, 1).time() == duration.value(0, 's')",
    "ts_minus_ts": "timestamp.date(2020, 1, 2) - timestamp.date(2020, 1, 1) == duration.value(1, 'd')",
    "dur_units": "duration.value(1, 'd') == duration.value(24, 'h') && duration.value(1, 'w') == duration.value(7, 'd')",
    "dur_ms": "duration.value(1500, 'ms').seconds() == 1 && duration.value(1500, 'ms').nanos() == 500000000",
    "dur_bad_unit": "duration.value(1, 'y') > duration.value(0, 's')",
    "dur_time": "duration.time(1, 2, 3, 4) == duration.value(3723000000004, 'ns')",
    "dur_abs": "duration.abs(duration.value(-5, 's')) == duration.value(5, 's')",
    "dur_float_value": "duration.value(1.5, 's') == duration.value(1500, 'ms')",
    "ts_plus_dur": "timestamp.date(2020, 1, 1) + duration.value(1, 'd') == timestamp.date(2020, 1, 2)",
    "dur_plus_ts": "duration.value(1, 'd') + timestamp.date(2020, 1, 1) == timestamp.date(2020, 1, 2)",
    "ts_eq_int": "request.time == 0",
    "ts_hours": "timestamp.value('2020-01-01T05:06:07.123Z').hours() == 5 && timestamp.value('2020-01-01T05:06:07.123Z').nanos() == 123000000",
    "ts_seconds_method": "timestamp.value('2020-01-01T05:06:07.123Z').seconds() == 7",
    "ts_string": "string(timestamp.date(2020, 1, 1)) == '2020-01-01T00:00:00Z'",
    "dur_string": "string(duration.value(90, 's')) == '90s'",
    # hashing
    "hash_md5_bytes": "hashing.md5(b'abc') == b'\\x90\\x01\\x50\\x98\\x3c\\xd2\\x4f\\xb0\\xd6\\x96\\x3f\\x7d\\x28\\xe1\\x7f\\x72'",
    "hash_sha256_str_bytes": "hashing.sha256('abc') == hashing.sha256(b'abc')",
    "hash_sha256_b64": "hashing.sha256('abc').toBase64() == 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='",
    "hash_sha256_hex": "hashing.sha256('abc').toHexString() == 'BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD'",
    "hash_crc32": "hashing.crc32('abc').toHexString() == '352441C2'",
    "hash_crc32c": "hashing.crc32c('abc').size() == 4",
    "hash_int": "hashing.md5(1).size() == 16",
    "bytes_b64_url": "b'\\xfb\\xff'.toBase64() == '+/8='",
    # latlng
    "latlng_lat": "latlng.value(1, 2).latitude() == 1.0",
    "latlng_distance": "latlng.value(0, 0).distance(latlng.value(0, 1)) > 111000 && latlng.value(0, 0).distance(latlng.value(0, 1)) < 111400",
    "latlng_out_of_range": "latlng.value(100, 0).latitude() == 100",
    "latlng_eq": "latlng.value(1, 2) == latlng.value(1.0, 2.0)",
    # types
    "is_int": "1 is int && !(1 is float)",
    "is_float": "1.0 is float",
    "is_number": "1 is number && 1.0 is number",
    "is_path": "/databases/$(database)/documents/a is path",
    "is_path_string": "'a/b' is path",
    "is_map_null": "null is map",
    "is_map_auth": "request.auth is map",
    "is_map_token": "request.auth.token is map",
    "is_timestamp": "request.time is timestamp",
    "is_bool": "true is bool",
    "is_list_set": "[1].toSet() is list",
    "is_set": "[1].toSet() is set",
    "is_string_id": "id is string",
    "is_duration": "duration.value(1, 's') is duration",
    "is_latlng": "latlng.value(1, 2) is latlng",
    "is_bytes": "b'a' is bytes",
    "is_number_string": "'1' is number",
    "is_error": "(1 / 0) is int",
    # paths
    "path_literal_eq": "/databases/$(database)/documents/a/$(id) == path('/databases/' + database + '/documents/a/' + id)",
    "path_index": "/databases/$(database)/documents/a/$(id)[3] == 'a'",
    "path_interp_slash": "/databases/$(database)/documents/$('a/b') == /databases/$(database)/documents/a/b",
    "path_interp_int": "/databases/$(database)/documents/a/$(1) == /databases/$(database)/documents/a/1",
    "path_string": "string(/databases/$(database)/documents/a) == '/databases/(default)/documents/a'",
    "path_bind": "(/databases/$(database)/documents/a/$(id)).bind({'x': 1}) == 1",
    # null and missing
    "resource_null": "resource == null",
    "resource_data_missing_doc": "resource.data.x == 1",
    "resource_data_missing_doc_ne": "resource.data.x != 1",
    "request_resource_on_get": "request.resource == null",
    "auth_uid_signed_out": ("request.auth.uid == 'x'", "anon"),
    "auth_null_signed_out": ("request.auth == null", "anon"),
    "auth_token_signed_out": ("request.auth.token.email_verified == false", "anon"),
    "null_eq_null": "null == null",
    "null_lt": "null < 1",
    "null_member": "null.x == 1",
    "null_plus": "null + 1 == 1",
    # auth token claims
    "token_provider": "request.auth.token.firebase.sign_in_provider == 'password'",
    "token_identities": "request.auth.token.firebase.identities.email[0] == 'a@example.com'",
    "token_email_verified": "request.auth.token.email_verified == true",
    "token_email_verified_bob": ("request.auth.token.email_verified == true", "bob"),
    "token_email_missing_bob": ("request.auth.token.email == null", "bob"),
    "token_email_get_bob": ("request.auth.token.get('email', 'none') == 'none'", "bob"),
    "token_custom_string": "request.auth.token.role == 'admin'",
    "token_custom_int": "request.auth.token.level == 3 && request.auth.token.level is int",
    "token_custom_list": "'g2' in request.auth.token.groups",
    "token_custom_map": "request.auth.token.org.id == 'o1'",
    "token_name": "request.auth.token.name == 'Alice'",
    "token_sub": "request.auth.token.sub == request.auth.uid",
    "token_user_id": "request.auth.token.user_id == 'alice'",
    "token_aud": "request.auth.token.aud == 'demo-rules-requests'",
    "token_iss": "request.auth.token.iss == 'https://securetoken.google.com/demo-rules-requests'",
    "token_iat_type": "request.auth.token.iat is int",
    "token_iat_ts": "request.auth.token.iat is timestamp",
    "token_exp_value": "request.auth.token.exp == 1700003600",
    "token_auth_time": "request.auth.token.auth_time == 1700000000",
    "token_uid_key": "'uid' in request.auth.token",
    "token_phone_missing": "request.auth.token.phone_number == null",
    "token_tenant_missing": "request.auth.token.firebase.tenant == null",
    # short circuit
    "and_false_error": "false && (1 / 0 == 1)",
    "and_error_false": "(1 / 0 == 1) && false",
    "or_true_error": "true || (1 / 0 == 1)",
    "or_error_true": "(1 / 0 == 1) || true",
    "not_error": "!(1 / 0 == 1)",
    "ternary_error_cond": "(1 / 0 == 1) ? true : true",
    "ternary_skip_error": "true ? true : (1 / 0 == 1)",
    "error_eq_error": "(1 / 0) == (1 / 0)",
    "error_in_list": "[1 / 0, true].size() == 2",
    "missing_or_true": "resource.data.x == 1 || true",
    "non_bool_condition": "1",
    "non_bool_or": "1 || true",
    "string_condition": "'true'",
    "null_condition": "null",
    "and_non_bool": "true && 1",
    # functions, lets, ternaries
    "fn_calls_fn": "f1(1)",
    "fn_let": "f3(2)",
    "fn_let_error_unused": "f4()",
    "fn_ternary": "f5(true) == 'yes' && f5(false) == 'no'",
    "fn_path_var": "f6()",
    "debug_value": "debug(1) == 1",
    "in_map_keys_order": "['b', 'a'] == {'a': 1, 'b': 2}.keys()",
    # round two: what round one found, pinned down
    "split_trailing": "'a,,b,'.split(',') == ['a', '', 'b']",
    "split_all_empty": "','.split(',') == ['']",
    "split_leading_empty_match": "'ab'.split('x*') == ['', 'a', 'b']",
    "split_empty_string": "''.split(',') == ['']",
    "split_empty_pattern": "'abc'.split('') == ['', 'a', 'b', 'c']",
    "list_in_strict": "1.0 in [1]",
    "set_in_numeric": "1.0 in [1].toSet()",
    "list_eq_strict": "[1] == [1.0]",
    "set_eq_numeric": "[1].toSet() == [1.0].toSet()",
    "list_has_any_strict": "[1, 2].hasAny([1.0])",
    "list_has_only_strict": "[1].hasOnly([1.0])",
    "set_has_any_numeric": "[1].toSet().hasAny([1.0])",
    "remove_all_strict": "[1, 2].removeAll([1.0]) == [2]",
    "to_set_numeric": "[1, 1.0].toSet().size() == 1",
    "diff_numeric": "{'a': 1}.diff({'a': 1.0}).affectedKeys().size() == 0",
    "nested_map_list_strict": "{'a': [1]} == {'a': [1.0]}",
    "values_strict": "{'a': 1}.values() == [1.0]",
    "math_round_neg_half": "math.round(-2.5) == -2",
    "math_round_nan": "math.round(0.0 / 0.0) == 0",
    "math_round_big": "math.round(100000000000000000000.0) == 9223372036854775807",
    "math_floor_int_type": "math.floor(1) is float",
    "math_abs_min": "math.abs(-9223372036854775808) < 0",
    "string_small_float": "string(0.0001) == '1.0E-4'",
    "string_1e7": "string(10000000.0) == '1.0E7'",
    "string_1234567": "string(1234567.0) == '1234567.0'",
    "string_neg_zero": "string(-0.0) == '-0.0'",
    "string_sum": "string(0.1 + 0.2) == '0.30000000000000004'",
    "string_bytes": "string(b'a') == 'a'",
    "string_inf": "string(1.0 / 0.0) == 'Infinity'",
    "int_nan": "int(0.0 / 0.0) == 0",
    "int_inf": "int(1.0 / 0.0) == 9223372036854775807",
    "int_plus_sign": "int('+12') == 12",
    "int_exp_string": "int('1e3') == 1000",
    "float_exp_string": "float('1e3') == 1000.0",
    "float_blank_string": "float(' 1.5') == 1.5",
    "float_suffix": "float('1.5f') == 1.5",
    "int_of_bool": "int(true) == 1",
    "float_of_bool": "float(true) == 1.0",
    "min_mod_neg1": "-9223372036854775808 % -1 == 0",
    "neg_min": "-(-9223372036854775808) < 0",
    "float_mod_zero": "math.isNaN(1.0 % 0)",
    "float_mod_neg": "-7.5 % 2 == -1.5",
    "ts_value_nanos": "timestamp.value('2020-01-01T00:00:00.123456789Z').nanos() == 123456789",
    "ts_value_lower_z": "timestamp.value('2020-01-01T00:00:00z') == timestamp.date(2020, 1, 1)",
    "ts_value_no_zone": "timestamp.value('2020-01-01T00:00:00') == timestamp.date(2020, 1, 1)",
    "ts_value_year_1": "timestamp.value('0001-01-01T00:00:00Z') < timestamp.date(2020, 1, 1)",
    "ts_value_int": "timestamp.value(0) == timestamp.date(1970, 1, 1)",
    "ts_value_bool": "timestamp.value(true) == request.time",
    "ts_overflow": "timestamp.date(9999, 12, 31) + duration.value(2, 'd') > request.time",
    "bool_fn": "bool('true')",
    "bool_order": "false < true",
    "bytes_plus": "b'a' + b'b' == b'ab'",
    "string_times": "'a' * 2 == 'aa'",
    "int_in_int": "1 in 1",
    "not_int": "!1",
    "neg_string": "-'a' == 1",
    "null_minus": "null - 1 == 1",
    "null_times": "null * 1 == 1",
    "list_float_index": "[1, 2][1.0] == 2",
    "map_int_index": "{'a': 1}[1] == 1",
    "join_ints": "[1, 2].join(',') == '1,2'",
    "math_abs_string": "math.abs('a') == 1",
    "math_sqrt_string": "math.sqrt('a') == 1",
    "math_pow_string": "math.pow('a', 1) == 1",
    "map_get_int_key": "{'a': 1}.get(1, 2) == 2",
    "matches_int": "'abc'.matches(1)",
    "replace_int": "'a'.replace('a', 1) == 'b'",
    "list_concat_int": "[1].concat(1) == [1]",
    "list_has_all_int": "[1].hasAll(1)",
    "diff_int": "{'a': 1}.diff(1) == 1",
    "distance_int": "latlng.value(1, 1).distance(1) == 1",
    "latlng_string": "latlng.value('a', 1) == 1",
    "dur_abs_int": "duration.abs(1) == 1",
    "ts_date_string": "timestamp.date('a', 1, 1) == 1",
    "dur_value_int_unit": "duration.value(1, 2) == 1",
    "exists_int": "exists(1)",
    "hash_crc32_int": "hashing.crc32(1).size() == 1",
    "path_int": "path(1) == 1",
    "string_of_set": "string([1].toSet()) == ''",
    "exists_collection": "!exists(/databases/$(database)/documents/profiles)",
    "get_collection": "get(/databases/$(database)/documents/profiles) == null",
    "get_missing_doc": "get(/databases/$(database)/documents/profiles/nobody) == null",
    "let_error_used": "f7()",
    # round ten (faith37): time zones, path templates and bindings, functions at their edges
    "ts_hours_tz": "timestamp.date(2020, 1, 1).hours('America/New_York') == 19",
    "ts_day_tz": "timestamp.date(2020, 1, 1).day('UTC') == 1",
    "ts_date_tz": "timestamp.date(2020, 1, 1).date('Europe/Paris') == timestamp.date(2020, 1, 1)",
    "path_request_member": "request.path.id == 'doc1'",
    "path_request_index_name": "request.path['id'] == 'doc1'",
    "path_tmpl_member": "path('/a/{x}').x == 'v'",
    "path_tmpl_index": "path('/a/{x}')[1] == '{x}'",
    "path_tmpl_slice": "path('/a/{x}')[0:1] == path('/a')",
    "path_tmpl_eq": "path('/a/{x}') == path('/a/{x}')",
    "path_tmpl_ne": "path('/a/{x}') != path('/a/{x}')",
    "path_tmpl_string": "string(path('/a/{x}')) == '/a/'",
    "path_tmpl_exists": "exists(path('/databases/' + database + '/documents/profiles/{u}'))",
    "path_bind_eq": "path('/a/{x}').bind({'x': 'v'}) == path('/a/v')",
    "path_bind_int": "path('/a/{x}').bind({'x': 1}) == path('/a/1')",
    "path_bind_list": "path('/a/{x}').bind({'x': ['p']}) == path('/a/p')",
    "path_bind_partial_eq": "path('/a/{x}/{y}').bind({'x': 'v'}) == path('/a/v/{y}')",
    "path_bind_index": "path('/a/{x}').bind({'x': 'v'})[1] == 'v'",
    "path_bind_name": "path('/a/{x}').bind({'x': 'v'}).x == 'v'",
    "path_bind_index_name": "path('/a/{x}').bind({'x': 'v'})['x'] == 'v'",
    "path_size": "path('/a/b').size() == 2",
    "path_brace_segment": "(/databases/$(database)/documents/a/$('{x}'))[4] == '{x}'",
    "cmp_int_float_order": "9007199254740993 > 9007199254740992.0",
    "cmp_int_float_le": "9007199254740993 <= 9007199254740992.0",
    "string_order_utf16": "'\ue000' < '\U0001F600'",
    "string_order_utf16_back": "'\U0001F600' < '\uffff'",
    "string_order_bmp": "'a' < '\u00e9' && 'z' < '\u00e9'",
    "set_nan": "[0.0 / 0.0, 0.0 / 0.0].toSet().size() == 1",
    "set_nan_in": "(0.0 / 0.0) in [0.0 / 0.0].toSet()",
    "set_nested_numeric": "[[1], [1.0]].toSet().size() == 1",
    "set_negzero": "[0.0, -0.0].toSet().size() == 1",
    "list_nan_in": "(0.0 / 0.0) in [0.0 / 0.0]",
    "diff_nested_numeric": "{'a': {'b': [1]}}.diff({'a': {'b': [1.0]}}).unchangedKeys() == ['a'].toSet()",
    "diff_nan": "{'a': 0.0 / 0.0}.diff({'a': 0.0 / 0.0}).affectedKeys().size() == 0",
    "list_eq_negzero": "[0.0] == [-0.0]",
    "map_eq_negzero": "{'a': 0.0} == {'a': -0.0}",
    "list_in_negzero": "-0.0 in [0.0]",
    "remove_all_set": "[1, 2].removeAll([1].toSet()) == [2]",
    "replace_empty_pattern": "'ab'.replace('', '-') == '-a-b-'",
    "replace_group_zero": "'ab'.replace('a', '$0$0') == 'aab'",
    "replace_missing_group": "'ab'.replace('a', '$2') == 'b'",
    "float_hex": "float('0x1p3') == 8.0 && float('-0X10P0d') == -16.0",
    "float_hex_no_exponent": "float('0x1.8') == 1.5",
    "ts_value_leap": "timestamp.value('2016-12-31T23:59:60Z') == timestamp.date(2017, 1, 1)",
    "math_pow_overflow": "math.pow(10, 400) == 1.0 / 0.0",
    "math_ceil_neg_zero": "string(math.ceil(-0.5)) == '-0.0'",
    "math_round_inf": "math.round(1.0 / 0.0) == 9223372036854775807",
    "math_sqrt_inf": "math.sqrt(1.0 / 0.0) == 1.0 / 0.0",
    "lower_greek": "'\u03a3'.lower() == '\u03c3'",
    "upper_ligature": "'\ufb00'.upper() == 'FF'",
    "trim_em_space": "'\u2003a'.trim() == 'a'",
    "join_nested": "[[1]].join(',') == '[1]'",
    "join_floats": "[1.0, 2.5].join(',') == '1.0,2.5'",
    "latlng_lng_out": "latlng.value(0, 200).longitude() == 200",
    "latlng_antipode": "latlng.value(0, 0).distance(latlng.value(0, 180)) > 20015000",
    "hash_md5_float": "hashing.md5(1.0).size() == 16",
    "dur_times_int": "duration.value(1, 's') * 2 == duration.value(2, 's')",
    "dur_neg_millis": "duration.value(-1500, 'ms').seconds() == -1 && duration.value(-1500, 'ms').nanos() == -500000000",
    "ts_lt_int": "request.time < 1",
    "ts_before_epoch": "(timestamp.date(1970, 1, 1) - duration.value(1, 'ns')).nanos() == 999999999",
    "int_of_big_string": "int('9223372036854775808') > 0",
    "diff_null_arg": "{'a': 1}.diff(null) == null",
    # faith38: a bound path's variables by name, `{x}` segments in path literals, `${name}` in replace.
    "path_bind_partial_member": "path('/a/{x}/{y}').bind({'x': 'v'}).y == 'v'",
    "path_bind_partial_drops": "path('/a/{x}/{y}').bind({'x': 'v'}) == path('/a/v')",
    "path_bind_rebind": "path('/a/{x}').bind({'x': 'v'}).bind({'x': 'w'}) == path('/a/w')",
    "path_bind_rebind_unknown": "path('/a/{x}/{y}').bind({'x': 'v'}).bind({'y': 'w'}) == path('/a/v/w')",
    "path_bind_again_empty": "path('/a/{x}').bind({'x': 'v'}).bind({}).x == 'v'",
    "path_bind_slice_keeps": "path('/a/{x}').bind({'x': 'v'})[1:2].x == 'v'",
    "path_bind_slice_drops": "path('/a/{x}').bind({'x': 'v'})[0:1].x == 'v'",
    "path_bind_interpolated": "(/q/$(path('/a/{x}').bind({'x': 'v'}))).x == 'v'",
    "path_bind_slash_value": "path('/a/{x}').bind({'x': 'a/b'})[1] == 'a/b'",
    "path_bind_empty_value": "path('/a/{x}').bind({'x': ''}) == path('/a')",
    "path_bind_duplicate_var": "path('/a/{x}/{x}').bind({'x': 'v'}) == path('/a/v/v')",
    "path_bind_null_value": "path('/a/{x}').bind({'x': null}).x == 'null'",
    "path_bind_in_map": "{'p': path('/a/{x}').bind({'x': 'v'})}.p.x == 'v'",
    "path_bind_member_id": "path('/a/{x}').bind({'x': 'v'}).id == 'v'",
    "path_of_path": "path(path('/a/b')) == path('/a/b')",
    "path_literal_var_bind": "(/a/{x}).bind({'x': 'v'}) == path('/a/v')",
    "path_literal_var_name": "(/a/$(id)/{x}).bind({'x': 'v'}).x == 'v'",
    "path_literal_var_unbound": "(/a/{x})[1] == '{x}'",
    "path_literal_var_string": "string(/a/{x}) == '/a/'",
    "path_literal_var_blanks": "(/a/{ x }).bind({'x': 'v'}) == /a/v",
    "path_literal_var_two": "(/a/{x}/b/{y}).bind({'y': 'w'}) == /a/b/w",
    "replace_named_p": "'ab'.replace('(?P<first>a)(b)', '${first}') == 'a'",
    "replace_named_angle": "'ab'.replace('(?<first>a)(b)', '$2${first}') == 'ba'",
    "replace_named_unmatched": "'b'.replace('(?P<n>a)?b', '[${n}]') == '[null]'",
    "replace_numbered_unmatched": "'b'.replace('(a)?b', '[$1]') == '[]'",
    "replace_named_missing": "'ab'.replace('(?<first>a)(b)', '${nope}') == 'a'",
    "replace_brace_number": "'ab'.replace('(a)(b)', '${1}') == 'a'",
    "replace_brace_unclosed": "'ab'.replace('a', '${') == 'b'",
    "replace_dollar_last": "'ab'.replace('a', '$') == '$b'",
    "replace_dollar_letter": "'ab'.replace('(?<first>a)', '$first') == '$firstb'",
    "replace_escaped_brace": "'ab'.replace('(?P<a>a)', '$\\\\{a}') == '${a}b'",
    "replace_two_digits": "'abc'.replace('(a)(b)(c)', '$12') == 'a2'",
    "replace_no_match_bad_group": "'ab'.replace('x', '$2${nope}') == 'ab'",
    "path_empty_string": "path('') == path('/a')",
    "path_empty_segment": "path('/a//b') == path('/a/b')",
    "path_trailing_slash": "path('/a/b/') == path('/a/b')",
    "path_no_leading_slash": "path('a/b') == path('/a/b')",
    "map_values_literal_order": "{'b': 1, 'a': 2}.values() == [1, 2]",
    "path_tmpl_not_closed": "path('/a/{x}b') == null",
    "path_tmpl_bad_identifier": "path('/a/{x-y}') == null",
    "path_tmpl_blanks": "path('/a/{ x }').bind({'x': 'v'}) == path('/a/v')",
    "path_tmpl_twice": "path('/{x}/{x}') == null",
    "set_union_list": "[1, 2].toSet().union([3]).size() == 3",
    "set_intersection_list": "[1, 2].toSet().intersection([2]) == [2].toSet()",
    "matches_brace_literal": "'a{,2}'.matches('a{,2}')",
    "split_lone_brace": "'a}b'.split('}') == ['a', 'b']",
    # round twelve (faith39): timestamp.value(string) is protobuf-java-util's Timestamps.parse over a
    # lenient SimpleDateFormat (fields roll over, any width, blanks or a minus before a field, text
    # after the seconds ignored, nine fraction digits read)
    "tsp_feb30": "timestamp.value('2020-02-30T00:00:00Z') == timestamp.date(2020, 3, 1)",
    "tsp_apr31": "timestamp.value('2020-04-31T00:00:00Z') == timestamp.date(2020, 5, 1)",
    "tsp_hour24": "timestamp.value('2020-01-01T24:00:00Z') == timestamp.date(2020, 1, 2)",
    "tsp_min60": "timestamp.value('2020-01-01T00:60:00Z') == timestamp.value('2020-01-01T01:00:00Z')",
    "tsp_sec_3600": "timestamp.value('2020-01-01T00:00:3600Z') == timestamp.value('2020-01-01T01:00:00Z')",
    "tsp_month13": "timestamp.value('2020-13-01T00:00:00Z') == timestamp.date(2021, 1, 1)",
    "tsp_day00": "timestamp.value('2020-01-00T00:00:00Z') == timestamp.date(2019, 12, 31)",
    "tsp_month00": "timestamp.value('2020-00-01T00:00:00Z') == timestamp.date(2019, 12, 1)",
    "tsp_short_fields": "timestamp.value('2020-1-1T0:0:0Z') == timestamp.date(2020, 1, 1)",
    "tsp_month_3digit": "timestamp.value('2020-001-01T00:00:00Z') == timestamp.date(2020, 1, 1)",
    "tsp_year_2digit": "timestamp.value('20-01-01T00:00:00Z') < timestamp.date(100, 1, 1)",
    "tsp_lead_space": "timestamp.value(' 2020-01-01T00:00:00Z') == timestamp.date(2020, 1, 1)",
    "tsp_space_hour": "timestamp.value('2020-01-01T 1:00:00Z') == timestamp.value('2020-01-01T01:00:00Z')",
    "tsp_neg_hour": "timestamp.value('2020-01-02T-1:00:00Z') == timestamp.value('2020-01-01T23:00:00Z')",
    "tsp_trailing_text": "timestamp.value('2020-01-01T00:00:00abcZ') == timestamp.date(2020, 1, 1)",
    "tsp_trailing_text_dot": "timestamp.value('2020-01-01T00:00:00abc.5Z').nanos() == 500000000",
    "tsp_frac_10": "timestamp.value('2020-01-01T00:00:00.1234567891Z').nanos() == 123456789",
    "tsp_frac_10_unrounded": "timestamp.value('2020-01-01T00:00:00.1234567899Z').nanos() == 123456790",
    "tsp_frac_12": "timestamp.value('2020-01-01T00:00:00.123456789123Z').nanos() == 123456789",
    "tsp_frac_empty": "timestamp.value('2020-01-01T00:00:00.Z') == timestamp.date(2020, 1, 1)",
    "tsp_frac_letter": "timestamp.value('2020-01-01T00:00:00.5xZ') > request.time",
    "tsp_arabic_digits": "timestamp.value('\u0662\u0660\u0662\u0660-01-01T00:00:00Z') == timestamp.date(2020, 1, 1)",
    "tsp_offset_signed_hours": "timestamp.value('2020-01-01T00:00:00+-01:00') == timestamp.value('2020-01-01T01:00:00Z')",
    "tsp_offset_min60": "timestamp.value('2020-01-01T00:00:00+01:60') == timestamp.value('2019-12-31T22:00:00Z')",
    "tsp_offset_99h": "timestamp.value('2020-01-01T00:00:00+99:00') < timestamp.date(2020, 1, 1)",
    "tsp_offset_no_colon": "timestamp.value('2020-01-01T00:00:00+0100') < request.time",
    "tsp_offset_seconds": "timestamp.value('2020-01-01T00:00:00+01:00:00') < request.time",
    "tsp_offset_blank": "timestamp.value('2020-01-01T00:00:00+ 1:00') < request.time",
    "tsp_lower_z_offset": "timestamp.value('2020-01-01T00:00:00z+00:00') == timestamp.date(2020, 1, 1)",
    "tsp_plus_year": "timestamp.value('+2020-01-01T00:00:00Z') < request.time",
    "tsp_no_seconds": "timestamp.value('2020-01-01T00:00Z') < request.time",
    "tsp_after_z": "timestamp.value('2020-01-01T00:00:00Zx') < request.time",
    "tsp_year_10000_offset": "timestamp.value('10000-01-01T00:30:00+01:00') == timestamp.value('9999-12-31T23:30:00Z')",
    "tsp_year_1_offset": "timestamp.value('0001-01-01T00:00:00+01:00') < request.time",
    "tsp_tab_hour": "timestamp.value('2020-01-01T\t1:00:00Z') == timestamp.value('2020-01-01T01:00:00Z')",
    # milliseconds near Int64.min stopped Hearth (an overflow trap)
    "ts_millis_min": "timestamp.value(-9223372036854775808) < request.time",
    "ts_millis_min_plus_1": "timestamp.value(-9223372036854775807) < request.time",
    "ts_millis_max": "timestamp.value(9223372036854775807) > request.time",
    # durations within protobuf's ±315,576,000,000 s
    "dur12_max_s": "duration.value(315576000000, 's') > duration.value(0, 's')",
    "dur12_past_max": "duration.value(315576000001, 's') > duration.value(0, 's')",
    "dur12_past_min": "duration.value(-315576000001, 's') < duration.value(0, 's')",
    "dur12_int_max_s": "duration.value(9223372036854775807, 's') > duration.value(0, 's')",
    "dur12_int_max_ms": "duration.value(9223372036854775807, 'ms') > duration.value(0, 's')",
    "dur12_int_max_ns": "duration.value(9223372036854775807, 'ns').seconds() == 9223372036",
    "dur12_hours_max": "duration.value(87660000, 'h') == duration.value(315576000000, 's')",
    "dur12_hours_past": "duration.value(87660001, 'h') > duration.value(0, 's')",
    "dur12_minutes_past": "duration.value(5259600001, 'm') > duration.value(0, 's')",
    "dur12_days_past": "duration.value(3652501, 'd') > duration.value(0, 's')",
    "dur12_weeks_past": "duration.value(521787, 'w') > duration.value(0, 's')",
    "dur12_plus_past": "duration.value(315576000000, 's') + duration.value(1, 's') > duration.value(0, 's')",
    "dur12_minus_past": "duration.value(-315576000000, 's') - duration.value(1, 's') < duration.value(0, 's')",
    "dur12_nanos_past": "duration.value(315576000000, 's') + duration.value(999999999, 'ns') + duration.value(1, 'ns') > duration.value(0, 's')",
    "dur12_nanos_at": "duration.value(315576000000, 's') + duration.value(999999999, 'ns') > duration.value(0, 's')",
    "dur12_time_max": "duration.time(87660000, 0, 0, 0) == duration.value(87660000, 'h')",
    "dur12_time_past": "duration.time(87660001, 0, 0, 0) > duration.value(0, 's')",
    "dur12_time_past_neg": "duration.time(-87660001, 0, 0, 0) < duration.value(0, 's')",
    "dur12_time_3m_hours": "duration.time(3000000, 0, 0, 0) == duration.value(3000000, 'h')",
    "dur12_time_mixed_sign": "duration.time(0, 0, 1, -1).nanos() == 999999999",
    "dur12_ts_span": "timestamp.value('9999-12-31T23:59:59Z') - timestamp.value('0001-01-01T00:00:00Z') == duration.value(315537897599, 's')",
    # slices: a null bound is an absent one; anything else but an int is an error
    "slice_null_start": "[1, 2][null:] == [1, 2]",
    "slice_null_end": "[1, 2][:null] == [1, 2]",
    "slice_null_both": "[1, 2][null:null] == [1, 2]",
    "slice_string_null": "'ab'[null:1] == 'a'",
    "slice_string_bound": "[1, 2]['a':] == [1, 2]",
    "slice_bool_bound": "[1, 2][true:] == [2]",
    # a list's hasAll/hasAny/hasOnly take a list only; a set's a list or a set
    "list_has_any_set": "[1].hasAny([1].toSet())",
    "list_has_all_set": "[1, 2].hasAll([1].toSet())",
    "list_has_only_set": "[1].hasOnly([1, 2].toSet())",
    "keys_has_any_set": "{'a': 1}.keys().hasAny(['a'].toSet())",
    "set_has_any_set": "[1].toSet().hasAny([1].toSet())",
    "set_has_only_set": "[1].toSet().hasOnly([1, 2].toSet())",
    "list_has_any_map": "[1].hasAny({'a': 1})",
    # `{x=**}` in a path literal: a variable that binds a path; `{x=*}` one that binds a segment
    "glob_eq_null": "(/a/{x=**}) == null",
    "glob_ne_null": "(/a/{x=**}) != null",
    "glob_string": "string(/a/{x=**}) == '/a/'",
    "glob_is_path": "(/a/{x=**}) is path",
    "glob_exists": "exists(/databases/$(database)/documents/a/{x=**})",
    "glob_or_true": "(/a/{x=**}) == null || true",
    "glob_index": "(/a/{x=**})[0] == 'a'",
    "glob_member": "(/a/{x=**}).x == null",
    "glob_bind_string": "(/a/{x=**}).bind({'x': 'v'}) == /a/v",
    "glob_bind_int": "(/a/{x=**}).bind({'x': 1}) == /a/1",
    "glob_bind_path": "(/a/{x=**}).bind({'x': path('b/c')}) == /a/b/c",
    "glob_bind_path_name": "(/a/{x=**}).bind({'x': path('b/c')}).x == path('b/c')",
    "glob_bind_path_index": "(/a/{x=**}).bind({'x': path('b/c')})[2] == 'c'",
    "glob_bind_slice": "(/a/{x=**}).bind({'x': path('b/c')})[1:] == /b/c",
    "glob_bind_missing": "(/a/{x=**}/b).bind({}) == /a/b",
    "glob_blanks": "(/a/{ x = ** }) == null",
    "glob_two": "(/{x=**}/{y=**}).bind({'x': path('a'), 'y': path('b')}) == /a/b",
    "glob_eq_self": "(/a/{x=**}) == (/a/{x=**})",
    "glob_single_bind": "(/a/{x=*}).bind({'x': 'v'}) == /a/v",
    "glob_single_string": "string(/a/{x=*}) == '/a/'",
    "glob_path_fn": "path('/a/{x=**}').bind({'x': path('b')}) == path('/a/b')",
    # int() is Java's Long.parseLong: any script's decimal digits
    "int_arabic_digits": "int('\u0661\u0662') == 12",
    "int_fullwidth_digits": "int('\uff11\uff12') == 12",
    "int_arabic_negative": "int('-\u0661') == -1",
    "int_astral_digit": "int('\U0001D7CF') == 1",
    "int_sign_only": "int('+') == 0",
    # debug() answers its first value, of any number
    "debug_two": "debug(1, 2) == 1",
    "debug_two_second": "debug(1, 2) == 2",
    "debug_three": "debug(1, 2, 3) == 1",
    "debug_none": "debug() == null",
    # a map's values() in the order its entries were written there (keys() sorted); key order here
    "map_values_nested_order": "{'z': {'b': 1, 'a': 2}}.z.values() == [1, 2]",
    "map_values_three_order": "{'c': 1, 'a': 2, 'b': 3}.values() == [1, 2, 3]",
    "map_values_length_order": "{'c': 1, 'bb': 2}.values() == [1, 2]",
    "map_keys_length_order": "{'bb': 1, 'c': 2}.keys() == ['bb', 'c']",
    "map_dup_key_last": "{'a': 1, 'a': 2}.a == 2",
    # the empty pattern splits a surrogate pair there (Java's UTF-16 strings)
    "split_empty_astral": "'a\U0001F600b'.split('').size() == 5",
    "replace_empty_astral": "'\U0001F600'.replace('', '-').size() == 5",
    "split_empty_astral_join": "'a\U0001F600b'.split('').join('') == 'a\U0001F600b'",
    # probed, the same on both
    "math_isnan_string": "!math.isNaN('a')",
    "math_isnan_int": "!math.isNaN(1)",
    "math_round_neg_inf": "math.round(-1.0 / 0.0) < 0",
    "math_floor_inf_float": "math.floor(1.0 / 0.0) is float",
    "math_pow_nan_zero": "math.pow(0.0 / 0.0, 0) == 1.0",
    "math_sqrt_neg_zero": "string(math.sqrt(-0.0)) == '-0.0'",
    "string_bytes_utf8": "string(b'\xc3\xa9') == '\u00e9'",
    "string_map_error": "string({'a': 1}) == ''",
    "float_null_error": "float(null) == 0.0",
    "float_unicode_digit": "float('\u0661') == 1.0",
    "int_trailing_blank": "int('12 ') == 12",
    "in_null_nulls": "null in [null]",
    "in_list_lists": "[1] in [[1]]",
    "in_map_float_list": "{'a': 1} in [{'a': 1.0}]",
    "in_null_list": "1 in null",
    "in_map_int_key": "1 in {'a': 1}",
    "has_any_null_arg": "[].hasAny(null)",
    "diff_null_removed": "{'a': null}.diff({}).removedKeys() == ['a'].toSet()",
    "diff_type_changed": "{'a': 1}.diff({'a': '1'}).changedKeys() == ['a'].toSet()",
    "diff_negzero_same": "{'a': 0.0}.diff({'a': -0.0}).changedKeys().size() == 0",
    "diff_list_arg": "{'a': 1}.diff([1]) == null",
    "set_bool_int": "[true, 1].toSet().size() == 2",
    "set_index_error": "[1].toSet()[0] == 1",
    "cmp_list_error": "[1] < [2]",
    "cmp_map_error": "{'a': 1} < {'a': 2}",
    "dur_lt_ts_error": "duration.value(1, 's') < request.time",
    "dur_time_float": "duration.time(1.5, 0, 0, 0) == duration.value(90, 'm')",
    "dur_mul_int": "duration.value(1, 's') * 2 == duration.value(2, 's')",
    "ts_plus_dur_past": "timestamp.date(2020, 1, 1) + duration.value(315576000000, 's') > request.time",
    "req_keys": "request.keys().hasAll(['auth', 'method', 'path', 'time'])",
    "is_mapdiff_map": "{}.diff({}) is map",
    "str_lower_dotted_i": "'\u0130'.lower() == '\u0130'",
    "str_matches_astral_dot": "'\U0001F600'.matches('.')",
    "latlng_compare": "latlng.value(0, 0) < latlng.value(1, 1)",
    "bytes_index": "b'abc'[0] == 97",
    "hash_crc32c_hex": "hashing.crc32c('abc').toHexString() == 'B73F4D36'",
    # `in` a map takes a string key; `[]` only on lists, strings, paths and maps; null conversions
    "in_map_null_key": "null in {'a': 1}",
    "not_in_map_int_key": "!(1 in {'a': 1})",
    "index_int": "1[0] == 1",
    "index_timestamp": "request.time[0] == 1",
    "index_list_null": "[1][null] == 1",
    "int_null_error": "int(null) == 0",
    "path_null_error": "path(null) == null",
    # RE2's counts up to 1000 and the emulator's 20 nested groups (a pattern computed at run time:
    # a constant one past either refuses the file there)
    "matches_count_1000": "'x'.matches('x{0,1000}')",
    "matches_count_1001": "'x'.matches(request.method.size() > 0 ? 'x{0,1001}' : 'y')",
    "matches_nested_20": "'x'.matches('((((((((((((((((((((x))))))))))))))))))))')",
    "matches_nested_21": "'x'.matches(request.method.size() > 0 ? '(((((((((((((((((((((x)))))))))))))))))))))' : 'y')",
    "matches_property_l": "'a'.matches('\\\\p{L}')",
    "split_property_lu": "'A'.split('\\\\p{Lu}') == ['']",
    "matches_property_not_l": "'1'.matches('\\\\P{L}')",
    "matches_property_greek": "'\\u03b1'.matches('\\\\p{Greek}')",
    "split_nested_21": "'x'.split(request.method.size() > 0 ? '(((((((((((((((((((((x)))))))))))))))))))))' : 'y').size() == 1",
}

FUNCTIONS = """    function f1(x) { return f2(x + 1); }
    function f2(y) { return y == 2; }
    function f3(x) { let y = x * 2; let z = y + 1; return z == 5; }
    function f4() { let bad = 1 / 0; return true; }
    function f5(b) { return b ? 'yes' : 'no'; }
    function f6() { return database == '(default)'; }
    function f7() { let bad = 1 / 0; let good = true; return good && bad; }
"""

# Write rules: (match line, allow lines). Their cases below.
WRITE_RULES = """    match /mask/{id} {
      allow get: if true;
      allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['a']);
    }
    match /merged/{id} {
      allow get: if true;
      allow update: if request.resource.data.keys().hasAll(['a', 'b']) && request.resource.data.b == resource.data.b;
    }
    match /stamped/{id} {
      allow create: if request.resource.data.t == request.time;
      allow update: if request.resource.data.n == resource.data.n + 1;
    }
    match /arrays/{id} {
      allow update: if request.resource.data.tags.size() == resource.data.tags.size() + 1
                    && request.resource.data.tags.hasAll(resource.data.tags);
    }
    match /pairs/{id} {
      allow create: if getAfter(/databases/$(database)/documents/pairs2/$(id)).data.x == 1;
    }
    match /pairs2/{id} {
      allow create: if existsAfter(/databases/$(database)/documents/pairs/$(id));
    }
    match /needsget/{id} {
      allow create: if get(/databases/$(database)/documents/profiles/$(request.auth.uid)).data.ok == true;
    }
    match /needsmissing/{id} {
      allow create: if get(/databases/$(database)/documents/profiles/nobody).data.ok == true;
    }
    match /needsmissing2/{id} {
      allow create: if get(/databases/$(database)/documents/profiles/nobody) == null;
    }
    match /needsmissing3/{id} {
      allow create: if !exists(/databases/$(database)/documents/profiles/nobody);
    }
    match /needsexists/{id} {
      allow create: if exists(/databases/$(database)/documents/profiles/$(request.auth.uid));
    }
    match /getstring/{id} {
      allow create: if get('/databases/' + database + '/documents/profiles/' + request.auth.uid).data.ok == true;
    }
    match /getcoll/{id} {
      allow create: if exists(/databases/$(database)/documents/profiles);
    }
    match /profiles/{id} {
      allow read: if true;
    }
    match /q/{id} {
      allow list: if request.query.limit <= 10;
    }
    match /qo/{id} {
      allow list: if request.query.offset == 5;
    }
    match /qord/{id} {
      allow list: if request.query.orderBy == 'n';
    }
    match /qordsize/{id} {
      allow list: if request.query.orderBy.size() == 1;
    }
    match /qnolimit/{id} {
      allow list: if request.query.limit == null;
    }
    match /qnooffset/{id} {
      allow list: if request.query.offset == 0;
    }
    match /rec/{rest=**} {
      allow get: if rest == /a/b/c;
    }
    match /rec2/{rest=**} {
      allow get: if rest[1] == 'b';
    }
    match /rec3/{rest=**} {
      allow get: if string(rest) == 'a/b/c';
    }
    match /rec4/{rest=**} {
      allow get: if rest == path('a/b/c');
    }
    match /rec5/{a}/{rest=**} {
      allow get: if rest is path;
    }
    match /created/{id} {
      allow create: if request.resource.data.size() == 2 && request.resource.id == id
                    && request.resource.__name__ == /databases/$(database)/documents/created/$(id);
    }
    match /delres/{id} {
      allow delete: if request.resource == null && resource.data.x == 1;
    }
    match /methods/{id} {
      allow read: if request.method == 'get';
      allow write: if request.method == 'create';
    }
    match /wdel/{id} {
      allow delete: if request.resource.data.x == 1;
    }
    match /wdel2/{id} {
      allow delete: if request.resource == null;
    }
    match /wa/{id} {
      allow delete: if !existsAfter(/databases/$(database)/documents/wb/$(id));
    }
    match /wb/{id} {
      allow delete: if getAfter(/databases/$(database)/documents/wa/$(id)) == null;
    }
    match /wc/{id} {
      allow create: if !existsAfter(/databases/$(database)/documents/wd/$(id)) && exists(/databases/$(database)/documents/wd/$(id));
    }
    match /wd/{id} {
      allow create, delete: if true;
    }
    match /we/{id} {
      allow create: if getAfter(/databases/$(database)/documents/wd/$(id)).data.x == 1;
    }
    match /wv/{id} {
      allow create: if request.resource.data.values() == [1, 2];
    }
    match /txn/{id} {
      allow read: if true;
      allow update: if get(/databases/$(database)/documents/txn/$(id)).data.n + 1 == request.resource.data.n;
    }
"""


def rules():
    lines = ["rules_version = '2';", "service cloud.firestore {", "  match /databases/{database}/documents {"]
    lines += FUNCTIONS.rstrip("\n").split("\n")
    lines += WRITE_RULES.rstrip("\n").split("\n")
    for k, (name, expr) in enumerate(EXPRS.items()):
        expr = expr[0] if isinstance(expr, tuple) else expr
        lines.append(f"    match /e{k}/{{id}} {{ allow get: if {expr}; }}")
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def s(v):
    return {"stringValue": v}


def i(v):
    return {"integerValue": str(v)}


def arr(*vs):
    return {"arrayValue": {"values": list(vs)}}


def doc(path, **fields):
    return {"update": {"name": f"{DOCS}/{path}", "fields": fields}}


# Each write case: (name, auth, method, path after /documents, body). Setup writes go as the owner.
def write_cases():
    c = []
    def add(name, body, auth="alice", path=":commit", method="POST"):
        c.append((name, auth, method, path, body))
    setup = [doc("mask/m1", a=i(1), b=i(2)), doc("merged/m1", a=i(1), b=i(2)), doc("stamped/s1", n=i(1)),
             doc("arrays/a1", tags=arr(s("x"))), doc("profiles/alice", ok={"booleanValue": True}),
             doc("delres/d1", x=i(1)), doc("delres/d2", x=i(2)), doc("txn/t1", n=i(1)),
             doc("methods/m1", x=i(1)), doc("wdel/d1", x=i(1)), doc("wdel2/d1", x=i(1)), doc("wa/a1", x=i(1)),
             doc("wb/a1", x=i(1)), doc("wa/a2", x=i(1)), doc("wb/a2", x=i(1)), doc("wd/d1", x=i(1)), doc("wd/d2", x=i(1))]
    add("setup", {"writes": setup}, auth="owner")
    add("mask_update_a", {"writes": [dict(doc("mask/m1", a=i(5)), updateMask={"fieldPaths": ["a"]})]})
    add("mask_update_b", {"writes": [dict(doc("mask/m1", b=i(5)), updateMask={"fieldPaths": ["b"]})]})
    add("mask_update_absent_field", {"writes": [dict(doc("mask/m1"), updateMask={"fieldPaths": ["zz"]})]})
    add("mask_whole_doc_same_b", {"writes": [doc("mask/m1", a=i(6), b=i(5))]})
    add("mask_delete_field_b", {"writes": [dict(doc("mask/m1"), updateMask={"fieldPaths": ["b"]})]})
    add("merge_keeps_b", {"writes": [dict(doc("merged/m1", a=i(9)), updateMask={"fieldPaths": ["a"]})]})
    add("set_drops_b", {"writes": [doc("merged/m1", a=i(9))]})
    add("server_time_create", {"writes": [dict(doc("stamped/s2", n=i(0)), updateTransforms=[
        {"fieldPath": "t", "setToServerValue": "REQUEST_TIME"}])]})
    add("client_time_create", {"writes": [doc("stamped/s3", t={"timestampValue": "2020-01-01T00:00:00Z"})]})
    add("increment_update", {"writes": [dict(doc("stamped/s1"), updateMask={"fieldPaths": []}, updateTransforms=[
        {"fieldPath": "n", "increment": i(1)}])]})
    add("increment_by_two", {"writes": [dict(doc("stamped/s1"), updateMask={"fieldPaths": []}, updateTransforms=[
        {"fieldPath": "n", "increment": i(2)}])]})
    add("array_union", {"writes": [dict(doc("arrays/a1"), updateMask={"fieldPaths": []}, updateTransforms=[
        {"fieldPath": "tags", "appendMissingElements": arr(s("y"))["arrayValue"]}])]})
    add("array_union_present", {"writes": [dict(doc("arrays/a1"), updateMask={"fieldPaths": []}, updateTransforms=[
        {"fieldPath": "tags", "appendMissingElements": arr(s("x"))["arrayValue"]}])]})
    add("batch_pair", {"writes": [doc("pairs/p1", x=i(1)), doc("pairs2/p1", x=i(1))]})
    add("batch_pair_wrong", {"writes": [doc("pairs/p2", x=i(1)), doc("pairs2/p2", x=i(2))]})
    add("batch_half", {"writes": [doc("pairs/p3", x=i(1))]})
    add("get_profile", {"writes": [doc("needsget/n1", x=i(1))]})
    add("get_profile_bob", {"writes": [doc("needsget/n2", x=i(1))]}, auth="bob")
    add("get_missing_field", {"writes": [doc("needsmissing/n1", x=i(1))]})
    add("get_missing_null", {"writes": [doc("needsmissing2/n1", x=i(1))]})
    add("exists_missing", {"writes": [doc("needsmissing3/n1", x=i(1))]})
    add("exists_profile", {"writes": [doc("needsexists/n1", x=i(1))]})
    add("exists_profile_bob", {"writes": [doc("needsexists/n2", x=i(1))]}, auth="bob")
    add("get_string_path", {"writes": [doc("getstring/n1", x=i(1))]})
    add("exists_collection_path", {"writes": [doc("getcoll/n1", x=i(1))]})
    add("created_id", {"writes": [doc("created/c1", x=i(1), y=i(2))]})
    add("created_id_3_fields", {"writes": [doc("created/c2", x=i(1), y=i(2), z=i(3))]})
    add("delete_with_resource", {"writes": [{"delete": f"{DOCS}/delres/d1"}]})
    add("delete_wrong_resource", {"writes": [{"delete": f"{DOCS}/delres/d2"}]})
    add("delete_missing_doc", {"writes": [{"delete": f"{DOCS}/delres/none"}]})
    add("method_create", {"writes": [doc("methods/m2", x=i(1))]})
    add("method_update", {"writes": [doc("methods/m1", x=i(2))]})
    add("method_get", None, method="GET", path="/methods/m1")
    # round twelve (faith39): request.resource on a delete, getAfter/existsAfter across a batch's deletes
    add("delete_request_resource_data", {"writes": [{"delete": f"{DOCS}/wdel/d1"}]})
    add("delete_request_resource_null", {"writes": [{"delete": f"{DOCS}/wdel2/d1"}]})
    add("batch_delete_both_after", {"writes": [{"delete": f"{DOCS}/wa/a1"}, {"delete": f"{DOCS}/wb/a1"}]})
    add("batch_delete_one_after", {"writes": [{"delete": f"{DOCS}/wa/a2"}]})
    add("batch_delete_then_create", {"writes": [{"delete": f"{DOCS}/wd/d1"}, doc("wc/d1", y=i(1))]})
    add("batch_create_without_delete", {"writes": [doc("wc/d2", y=i(1))]})
    add("batch_delete_then_get_after", {"writes": [{"delete": f"{DOCS}/wd/d2"}, doc("we/d2", y=i(1))]})
    # a document's values() in the order its fields were written there (the request's JSON)
    add("values_written_order", {"writes": [{"update": {"name": f"{DOCS}/wv/v1", "fields": {"b": i(1), "a": i(2)}}}]})
    def query(name, coll, **sq):
        body = {"structuredQuery": dict({"from": [{"collectionId": coll}]}, **sq)}
        add(name, body, path=":runQuery")
    query("query_limit_5", "q", limit=5)
    query("query_limit_50", "q", limit=50)
    query("query_no_limit", "q")
    query("query_offset_5", "qo", offset=5)
    query("query_offset_none", "qo")
    query("query_order_n", "qord", orderBy=[{"field": {"fieldPath": "n"}, "direction": "ASCENDING"}])
    query("query_order_size", "qordsize", orderBy=[{"field": {"fieldPath": "n"}, "direction": "ASCENDING"}])
    query("query_limit_null", "qnolimit")
    query("query_offset_zero", "qnooffset")
    query("query_offset_zero_given", "qnooffset", offset=0)
    add("list_limit_rest", None, method="GET", path="/q?pageSize=5")
    add("list_no_page_size", None, method="GET", path="/q")
    for name, p in (("rec_path_eq", "/rec/a/b/c"), ("rec_index", "/rec2/a/b/c"), ("rec_string", "/rec3/a/b/c"),
                    ("rec_path_fn", "/rec4/a/b/c"), ("rec_zero_segments", "/rec5/x")):
        add(name, None, method="GET", path=p)
    # A transaction: begin, read, commit with the read's update.
    add("txn_begin", {"options": {"readWrite": {}}}, path=":beginTransaction")
    add("txn_commit_ok", {"writes": [doc("txn/t1", n=i(2))], "transaction": "${txn}"})
    add("txn_begin2", {"options": {"readWrite": {}}}, path=":beginTransaction")
    add("txn_commit_bad", {"writes": [doc("txn/t1", n=i(9))], "transaction": "${txn}"})
    return c


def _headers(auth):
    if auth == "owner":
        return {"Authorization": "Bearer owner"}
    if auth == "anon":
        return {}
    return {"Authorization": "Bearer " + {"alice": ALICE, "bob": BOB}[auth]}


def _answer(r):
    try:
        body = r.json()
    except ValueError:
        body = {}
    if isinstance(body, list):
        err = next((e.get("error") for e in body if isinstance(e, dict) and "error" in e), None)
    else:
        err = body.get("error") if isinstance(body, dict) else None
    return {"status": r.status_code, "code": (err or {}).get("status"), "message": (err or {}).get("message")}


def put_rules(url):
    r = requests.put(f"{url}/emulator/v1/projects/{PROJECT}:securityRules",
                     json={"rules": {"files": [{"name": "firestore.rules", "content": rules()}]}}, timeout=120)
    return r.status_code, r.text


def run(url):
    status, text = put_rules(url)
    assert status == 200, text
    requests.delete(f"{url}/emulator/v1/projects/{PROJECT}/databases/(default)/documents", timeout=30)
    base = f"{url}/v1/{DOCS}"
    out = {"_load": {"status": status, "issues": sorted(json.loads(text).get("issues", []), key=json.dumps)}}
    for k, (name, expr) in enumerate(EXPRS.items()):
        auth = expr[1] if isinstance(expr, tuple) else "alice"
        out[name] = _answer(requests.get(f"{base}/e{k}/doc1", headers=_headers(auth), timeout=30))
    env = {}
    for name, auth, method, path, body in write_cases():
        if body is not None and "${txn}" in json.dumps(body):
            body = json.loads(json.dumps(body).replace("${txn}", env.get("txn", "")))
        r = requests.request(method, base + path, json=body,
                             headers=_headers(auth), timeout=30)
        if name.startswith("txn_begin"):
            env["txn"] = r.json().get("transaction", "")
        out[name] = _answer(r)
    return out


def emulator_answers():
    sys.path.insert(0, HERE)
    import diffrun
    proc, url = diffrun.start_emulator()
    try:
        return run(url)
    finally:
        diffrun.stop_emulator(proc)


if __name__ == "__main__":
    if "--rules" in sys.argv:
        print(rules())
    elif "--run" in sys.argv:
        print(json.dumps(run(sys.argv[-1].rstrip("/")), indent=1, sort_keys=True))
    elif "--record" in sys.argv:
        answers = emulator_answers()
        with open(FIXTURE, "w") as f:
            f.write(json.dumps(answers, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(answers)} answers in {FIXTURE}")
    else:
        print("usage: python rulesrtcases.py --record | --rules | --run URL")
        sys.exit(2)
