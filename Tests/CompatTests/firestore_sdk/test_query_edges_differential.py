"""Queries at their edges, each case with the same REST calls against Hearth and the official Cloud
Firestore emulator (docs/benchmarks.md, *Faithfulness after the thirty-fifth session, round nine
(faith36)*); every expected answer is the emulator's, recorded.

- Every value type in one field (null, booleans, NaN, ±Infinity, int64 edges, −0.0 beside 0, integers
  beside equal doubles, timestamps before and after the epoch, strings with a zero byte, combining
  and non-BMP characters, bytes, references, geo points, arrays, vectors, maps): its order both ways,
  and `<`, `<=`, `>`, `>=`, `==`, `!=` with an operand of each class (a filter matches only its
  operand's type class), the unary filters.
- `in`, `not-in`, `array-contains`, `array-contains-any` with null, NaN, duplicates, `1` beside
  `1.0`, arrays and maps as values, 30 and 31 values (10 and 11 for `not-in`).
- Composite filters: OR/AND nesting, OR with inequalities, several inequality fields (their implicit
  order), the 30 disjunctions of the normal form; and the bounds on a query's size: at most 100
  filters + explicit orderings + ancestor (each distinct value of a list operator a filter, a filter
  repeated within one composite once) and at most 10 distinct inequality fields.
- Cursors: partial, past the explicit order, both directions, `before` both ways, values of another
  type, NaN and null; `offset` and `limit` at their edges.
- Aggregations: `count` with `up_to`, `sum` past int64 (a double), NaN and ±Infinity, non-numeric
  values skipped, `avg` of nothing (null), unnamed aggregations (`field_1`, `field_2`, … counting the
  unnamed ones only), with a limit, an offset and a cursor; a sum or average under a key constraint
  (a `__name__` filter or order, a cursor, a descendant query under a document) needs its field
  ordered (faith38).
- Timestamp filter and cursor operands with nanoseconds, compared whole (faith38).
"""
import base64
import os

import pytest

from test_paths_listen_rpcs_differential import coll_id, rest

MAX, MIN = 2**63 - 1, -(2**63)


def db_name():
    return f"projects/{os.environ['HEARTH_PROJECT']}/databases/(default)"


def ref(path):
    return {"referenceValue": f"{db_name()}/documents/{path}"}


def I(i):
    return {"integerValue": str(i)}


def D(x):
    if x != x:
        return {"doubleValue": "NaN"}
    if abs(x) == float("inf"):
        return {"doubleValue": "Infinity" if x > 0 else "-Infinity"}
    return {"doubleValue": x}


def S(s):
    return {"stringValue": s}


def A(*vs):
    return {"arrayValue": {"values": list(vs)}} if vs else {"arrayValue": {}}


def M(**fs):
    return {"mapValue": {"fields": fs}} if fs else {"mapValue": {}}


def V(*xs):
    return {"mapValue": {"fields": {"__type__": S("__vector__"), "value": A(*[D(float(x)) for x in xs])}}}


NULL = {"nullValue": None}
TRUE, FALSE = {"booleanValue": True}, {"booleanValue": False}
NAN = D(float("nan"))

# One document per value, named for it; the field is `v`.
TYPED = {
    "null": NULL, "false": FALSE, "true": TRUE, "nan": NAN, "ninf": D(float("-inf")),
    "imin": I(MIN), "dneg": D(-1.5), "dnz": D(-0.0), "i0": I(0), "dhalf": D(0.5), "d1": D(1.0), "i1": I(1),
    "i2": I(2), "imax": I(MAX), "dbig": D(1e300), "pinf": D(float("inf")),
    "t0": {"timestampValue": "1970-01-01T00:00:00Z"}, "t1": {"timestampValue": "2024-01-01T00:00:00.123456Z"},
    "tneg": {"timestampValue": "1969-12-31T23:59:59.999999Z"},
    "s0": S(""), "sA": S("B"), "sa": S("a"), "sab": S("ab"), "se1": S("e\u0301"), "se2": S("\u00e9"), "sfffd": S("\ufffd"),
    "semoji": S("\U0001F600"), "snul": S("a\u0000"),
    "y0": {"bytesValue": ""}, "y1": {"bytesValue": base64.b64encode(b"\x00\x01").decode()},
    "y2": {"bytesValue": base64.b64encode(b"\xff").decode()},
    "r1": ("ref", "c/a"), "r2": ("ref", "c/a/d/b"), "r3": ("ref", "c/b"), "r4": ("ref", "c/__id5__"),
    "g1": {"geoPointValue": {"latitude": -10, "longitude": 5}}, "g2": {"geoPointValue": {"latitude": 0, "longitude": 0}},
    "g3": {"geoPointValue": {"latitude": 0, "longitude": 1}}, "g4": {"geoPointValue": {"latitude": 10, "longitude": -5}},
    "a0": A(), "a1": A(I(1)), "a12": A(I(1), I(2)), "a2": A(I(2)), "anull": A(NULL), "anan": A(NAN),
    "amix": A(S("x"), I(1)), "aa": A(M(k=I(1))),
    "v1": V(5), "v2": V(1, 2), "v3": V(1, 3),
    "m0": M(), "m1": M(a=I(1)), "m2": M(a=I(2)), "m3": M(b=I(0)), "mab": M(a=I(1), b=I(1)),
}


def typed(name):
    v = TYPED[name]
    return ref(v[1]) if isinstance(v, tuple) else v


# The emulator's order of the documents by `v` (a document without `v` is not in it).
ORDER = ["null", "false", "true", "nan", "ninf", "imin", "dneg", "dnz", "i0", "dhalf", "d1", "i1", "i2", "imax", "dbig",
         "pinf", "tneg", "t0", "t1", "s0", "sA", "sa", "snul", "sab", "se1", "se2", "sfffd", "semoji", "y0", "y1", "y2",
         "r4", "r1", "r2", "r3", "g1", "g2", "g3", "g4", "a0", "anull", "anan", "a1", "a12", "a2", "amix", "aa", "v1", "v2",
         "v3", "m0", "m1", "mab", "m2", "m3"]
# Descending: the reverse, ties (−0.0 and 0, 1.0 and 1) by name descending.
ORDER_DESC = ORDER[::-1]

OPS = ["LESS_THAN", "LESS_THAN_OR_EQUAL", "GREATER_THAN", "GREATER_THAN_OR_EQUAL", "EQUAL"]
# operand → what each of OPS answered: None (nothing), one document, or (first, last) of a run of ORDER.
RANGES = {
    "null": [None, None, None, None, None],
    "nan": [None, None, None, None, None],
    "dnz": [("ninf", "dneg"), ("ninf", "i0"), ("dhalf", "pinf"), ("dnz", "pinf"), ("dnz", "i0")],
    "d1": [("ninf", "dhalf"), ("ninf", "i1"), ("i2", "pinf"), ("d1", "pinf"), ("d1", "i1")],
    "imax": [("ninf", "i2"), ("ninf", "imax"), ("dbig", "pinf"), ("imax", "pinf"), "imax"],
    "pinf": [("ninf", "dbig"), ("ninf", "pinf"), None, "pinf", "pinf"],
    "tneg": [None, "tneg", ("t0", "t1"), ("tneg", "t1"), "tneg"],
    "t0": ["tneg", ("tneg", "t0"), "t1", ("t0", "t1"), "t0"],
    "sa": [("s0", "sA"), ("s0", "sa"), ("snul", "semoji"), ("sa", "semoji"), "sa"],
    "snul": [("s0", "sa"), ("s0", "snul"), ("sab", "semoji"), ("snul", "semoji"), "snul"],
    "semoji": [("s0", "sfffd"), ("s0", "semoji"), None, "semoji", "semoji"],
    "y1": ["y0", ("y0", "y1"), "y2", ("y1", "y2"), "y1"],
    "r2": [("r4", "r1"), ("r4", "r2"), "r3", ("r2", "r3"), "r2"],
    "r4": [None, "r4", ("r1", "r3"), ("r4", "r3"), "r4"],
    "g2": ["g1", ("g1", "g2"), ("g3", "g4"), ("g2", "g4"), "g2"],
    "a1": [("a0", "anan"), ("a0", "a1"), ("a12", "aa"), ("a1", "aa"), "a1"],
    "anull": ["a0", ("a0", "anull"), ("anan", "aa"), ("anull", "aa"), "anull"],
    "v2": ["v1", ("v1", "v2"), "v3", ("v2", "v3"), "v2"],
    "m1": ["m0", ("m0", "m1"), ("mab", "m3"), ("m1", "m3"), "m1"],
    "mab": [("m0", "m1"), ("m0", "mab"), ("m2", "m3"), ("mab", "m3"), "mab"],
    "false": [None, "false", "true", ("false", "true"), "false"],
    "true": ["false", ("false", "true"), None, "true", "true"],
}


def run(host, collection, q=None, parent=""):
    """Document ids of a runQuery, or the error's (status, message)."""
    sq = {"from": [{"collectionId": collection}], **(q or {})}
    status, body = rest(host, "POST", f"{parent}:runQuery", {"structuredQuery": sq})
    if status != 200:
        return status, body["error"].get("message")
    return [item["document"]["name"].rsplit("/", 1)[1] for item in body if "document" in item]


def aggregate(host, collection, aggregations, q=None):
    """The aggregate fields, or the error's (status, message)."""
    sq = {"from": [{"collectionId": collection}], **(q or {})}
    status, body = rest(host, "POST", ":runAggregationQuery",
                        {"structuredAggregationQuery": {"structuredQuery": sq, "aggregations": aggregations}})
    if status != 200:
        return status, body["error"].get("message")
    return [b["result"]["aggregateFields"] for b in body if "result" in b][0]


def seed(host, collection, docs):
    writes = [{"update": {"name": f"{db_name()}/documents/{collection}/{d}", "fields": f}} for d, f in docs.items()]
    for i in range(0, len(writes), 400):
        status, body = rest(host, "POST", ":commit", {"writes": writes[i:i + 400]})
        assert status == 200, body


def ff(field, op, value):
    return {"fieldFilter": {"field": {"fieldPath": field}, "op": op, "value": value}}


def uf(field, op):
    return {"unaryFilter": {"field": {"fieldPath": field}, "op": op}}


def AND(*fs):
    return {"compositeFilter": {"op": "AND", "filters": list(fs)}}


def OR(*fs):
    return {"compositeFilter": {"op": "OR", "filters": list(fs)}}


def order(*pairs):
    return [{"field": {"fieldPath": f}, "direction": d} for f, d in pairs]


def cursor(values, before):
    return {"values": values, "before": before}


def bad(message):
    return 400, message


# ---- every type in one field -------------------------------------------------------------------

@pytest.fixture
def types(emulator_host):
    c = coll_id("types")
    seed(emulator_host, c, {**{k: {"v": typed(k)} for k in TYPED}, "missing": {"w": I(1)}})
    return c


def test_every_type_in_one_field_orders_and_filters(emulator_host, types):
    h = emulator_host
    assert run(h, types, {"orderBy": order(("v", "ASCENDING"))}) == ORDER
    assert run(h, types, {"orderBy": order(("v", "DESCENDING"))}) == ORDER_DESC
    for operand, answers in RANGES.items():
        for op, want in zip(OPS, answers):
            if want is None:
                want = []
            elif isinstance(want, str):
                want = [want]
            else:
                want = ORDER[ORDER.index(want[0]):ORDER.index(want[1]) + 1]
            assert run(h, types, {"where": ff("v", op, typed(operand))}) == want, (op, operand)
    # `!=` leaves out null and a missing field; `!= NaN` leaves out nothing else, `!= null` everything.
    every = ORDER[1:]
    assert run(h, types, {"where": ff("v", "NOT_EQUAL", NULL)}) == []
    assert run(h, types, {"where": ff("v", "NOT_EQUAL", NAN)}) == every
    assert run(h, types, {"where": ff("v", "NOT_EQUAL", D(1.0))}) == [x for x in every if x not in ("d1", "i1")]
    assert run(h, types, {"where": ff("v", "NOT_EQUAL", I(1)), "orderBy": order(("v", "DESCENDING"))}) == \
        [x for x in ORDER_DESC if x not in ("d1", "i1", "null")]
    assert run(h, types, {"where": uf("v", "IS_NULL")}) == ["null"]
    assert run(h, types, {"where": uf("v", "IS_NAN")}) == ["nan"]
    assert run(h, types, {"where": uf("v", "IS_NOT_NULL")}) == every
    assert run(h, types, {"where": uf("v", "IS_NOT_NAN")}) == [x for x in every if x != "nan"]
    # Ranges across a type boundary match nothing; -Infinity to Infinity is every number.
    assert run(h, types, {"where": AND(ff("v", "GREATER_THAN", FALSE), ff("v", "LESS_THAN", I(1)))}) == []
    assert run(h, types, {"where": AND(ff("v", "GREATER_THAN_OR_EQUAL", I(0)), ff("v", "LESS_THAN_OR_EQUAL", S("a")))}) == []
    assert run(h, types, {"where": AND(ff("v", "GREATER_THAN", NAN), ff("v", "LESS_THAN", I(1)))}) == []
    assert run(h, types, {"where": AND(ff("v", "GREATER_THAN_OR_EQUAL", D(float("-inf"))),
                                       ff("v", "LESS_THAN_OR_EQUAL", D(float("inf"))))}) == ORDER[4:16]


LISTS = [
    # (operator, values, answer)
    ("IN", [NULL], []), ("IN", [NAN], []), ("IN", [I(1), D(1.0)], ["d1", "i1"]), ("IN", [NULL, I(1)], ["d1", "i1"]),
    ("IN", [NAN, I(1)], ["d1", "i1"]), ("IN", [A(I(1))], ["a1"]), ("IN", [A()], ["a0"]), ("IN", [M()], ["m0"]),
    ("IN", [I(2), I(2), I(2)], ["i2"]), ("IN", [D(-0.0)], ["dnz", "i0"]), ("IN", [S("a"), TRUE, {"geoPointValue": {}}], ["g2", "sa", "true"]),
    ("IN", [V(1, 2)], ["v2"]), ("IN", [("ref", "c/a")], ["r1"]), ("IN", [I(i) for i in range(30)], ["d1", "dnz", "i0", "i1", "i2"]),
    ("IN", [I(i) for i in range(31)], bad("'IN' supports up to 30 comparison values.")),
    ("IN", [], bad("'IN' requires an non-empty ArrayValue.")),
    ("NOT_IN", [NULL], []), ("NOT_IN", [NULL, I(1)], []),
    ("NOT_IN", [NAN], "every"), ("NOT_IN", [NAN, I(1)], ["d1", "i1"]), ("NOT_IN", [I(1), D(1.0)], ["d1", "i1"]),
    ("NOT_IN", [A()], ["a0"]), ("NOT_IN", [D(-0.0)], ["dnz", "i0"]),
    ("NOT_IN", [I(i) for i in range(10)], ["dnz", "i0", "d1", "i1", "i2"]),
    ("NOT_IN", [I(i) for i in range(11)], bad("'NOT_IN' supports up to 10 comparison values.")),
    ("ARRAY_CONTAINS_ANY", [NULL], []), ("ARRAY_CONTAINS_ANY", [NULL, I(1)], ["a1", "a12", "amix"]),
    ("ARRAY_CONTAINS_ANY", [NAN, I(1)], ["a1", "a12", "amix"]), ("ARRAY_CONTAINS_ANY", [I(2), I(2), I(2)], ["a12", "a2"]),
    ("ARRAY_CONTAINS_ANY", [I(1), D(1.0)], ["a1", "a12", "amix"]), ("ARRAY_CONTAINS_ANY", [A(I(1))], []),
    ("ARRAY_CONTAINS_ANY", [I(i) for i in range(31)], bad("'ARRAY_CONTAINS_ANY' supports up to 30 comparison values.")),
]


def test_list_operators_with_null_nan_and_repeats(emulator_host, types):
    h = emulator_host
    for op, values, want in LISTS:
        operand = A(*[ref(v[1]) if isinstance(v, tuple) else v for v in values])
        if op == "NOT_IN" and isinstance(want, list) and want:  # the values left out of every non-null one
            want = [x for x in ORDER[1:] if x not in want]
        elif want == "every":
            want = ORDER[1:]
        assert run(h, types, {"where": ff("v", op, operand)}) == want, (op, values)
    for operand, want in [(NULL, []), (NAN, []), (D(1.0), ["a1", "a12", "amix"]), (D(-0.0), []), (A(I(1)), [])]:
        assert run(h, types, {"where": ff("v", "ARRAY_CONTAINS", operand)}) == want, operand
    assert run(h, types, {"where": ff("v", "IN", A(I(2), S("a"), I(0))), "orderBy": order(("v", "DESCENDING"))}) == \
        ["sa", "i2", "i0", "dnz"]
    assert run(h, types, {"where": ff("v", "NOT_IN", A(I(1), S("a"))), "orderBy": order(("v", "DESCENDING"))}) == \
        [x for x in ORDER_DESC if x not in ("d1", "i1", "sa", "null")]


# ---- composite filters and several inequalities ------------------------------------------------

@pytest.fixture
def grid(emulator_host):
    c = coll_id("grid")
    docs = {f"a{a}b{b}": {"a": I(a), "b": I(b), "c": S("x" if (a + b) % 2 else "y")} for a in range(4) for b in range(3)}
    docs.update(onlya={"a": I(1)}, onlyb={"b": I(1)}, anull={"a": NULL, "b": I(1)}, astr={"a": S("s"), "b": I(2)})
    seed(emulator_host, c, docs)
    return c


def test_composite_filters_and_several_inequality_fields(emulator_host, grid):
    h, c = emulator_host, grid
    gt_a, lt_b = ff("a", "GREATER_THAN", I(0)), ff("b", "LESS_THAN", I(2))
    # Several inequality fields: ordered by each (field-path order), then by name.
    assert run(h, c, {"where": AND(gt_a, lt_b)}) == ["a1b0", "a1b1", "a2b0", "a2b1", "a3b0", "a3b1"]
    assert run(h, c, {"where": AND(lt_b, gt_a)}) == ["a1b0", "a1b1", "a2b0", "a2b1", "a3b0", "a3b1"]
    assert run(h, c, {"where": AND(gt_a, lt_b), "orderBy": order(("b", "DESCENDING"))}) == \
        ["a3b1", "a2b1", "a1b1", "a3b0", "a2b0", "a1b0"]
    assert run(h, c, {"where": AND(gt_a, lt_b), "orderBy": order(("c", "ASCENDING"))}) == \
        ["a1b0", "a2b1", "a3b0", "a1b1", "a2b0", "a3b1"]
    assert run(h, c, {"where": AND(gt_a, ff("b", "NOT_EQUAL", I(1)))}) == ["a1b0", "a1b2", "a2b0", "a2b2", "a3b0", "a3b2"]
    # An order on another field than the inequality (allowed since multiple-field inequalities).
    assert run(h, c, {"where": gt_a, "orderBy": order(("b", "ASCENDING"))}) == \
        ["a1b0", "a2b0", "a3b0", "a1b1", "a2b1", "a3b1", "a1b2", "a2b2", "a3b2"]
    assert run(h, c, {"where": gt_a, "orderBy": order(("b", "ASCENDING"), ("a", "DESCENDING"))}) == \
        ["a3b0", "a2b0", "a1b0", "a3b1", "a2b1", "a1b1", "a3b2", "a2b2", "a1b2"]
    assert run(h, c, {"where": AND(gt_a, ff("a", "LESS_THAN", I(3))), "orderBy": order(("a", "DESCENDING"))}) == \
        ["a2b2", "a2b1", "a2b0", "onlya", "a1b2", "a1b1", "a1b0"]
    assert run(h, c, {"where": AND(gt_a, ff("b", "GREATER_THAN", I(0))), "limit": 2, "offset": 1}) == ["a1b2", "a2b1"]
    assert run(h, c, {"where": gt_a, "orderBy": order(("__name__", "ASCENDING"))}) == \
        bad("order by clause cannot contain more fields after the key")
    # OR with inequalities on two fields, ordered each way.
    either = OR(ff("a", "GREATER_THAN", I(2)), ff("b", "LESS_THAN", I(1)))
    assert run(h, c, {"where": either}) == ["a0b0", "a1b0", "a2b0", "a3b0", "a3b1", "a3b2"]
    assert run(h, c, {"where": either, "orderBy": order(("b", "DESCENDING"))}) == ["a3b2", "a3b1", "a3b0", "a2b0", "a1b0", "a0b0"]
    assert run(h, c, {"where": OR(ff("a", "EQUAL", I(3)), ff("b", "EQUAL", I(0))), "limit": 3}) == ["a0b0", "a1b0", "a2b0"]
    assert run(h, c, {"where": OR(AND(ff("a", "EQUAL", I(1)), ff("b", "EQUAL", I(1))),
                                  AND(ff("a", "EQUAL", I(2)), ff("c", "EQUAL", S("x"))))}) == ["a1b1", "a2b1"]
    assert run(h, c, {"where": AND(OR(ff("a", "EQUAL", I(1)), ff("a", "EQUAL", I(2))),
                                   OR(ff("b", "EQUAL", I(0)), ff("b", "EQUAL", I(2))))}) == ["a1b0", "a1b2", "a2b0", "a2b2"]
    assert run(h, c, {"where": OR(OR(OR(ff("a", "EQUAL", I(0)))), AND(AND(ff("b", "EQUAL", I(2)))))}) == \
        ["a0b0", "a0b1", "a0b2", "a1b2", "a2b2", "a3b2", "astr"]
    assert run(h, c, {"where": OR(ff("a", "NOT_EQUAL", I(0)), ff("b", "EQUAL", I(2)))}) == \
        ["a0b2", "a1b0", "a1b1", "a1b2", "onlya", "a2b0", "a2b1", "a2b2", "a3b0", "a3b1", "a3b2", "astr"]
    assert run(h, c, {"where": OR(uf("a", "IS_NOT_NULL"), ff("b", "EQUAL", I(2)))}) == \
        ["a0b0", "a0b1", "a0b2", "a1b0", "a1b1", "a1b2", "onlya", "a2b0", "a2b1", "a2b2", "a3b0", "a3b1", "a3b2", "astr"]
    assert run(h, c, {"where": AND()}) == sorted(["a%db%d" % (a, b) for a in range(4) for b in range(3)] + ["anull", "astr", "onlya", "onlyb"])
    assert run(h, c, {"where": OR()}) == bad("Composite filter must have at least one sub-filter.")
    assert run(h, c, {"where": OR(ff("a", "NOT_EQUAL", I(0)), ff("b", "NOT_EQUAL", I(2)))}) == \
        bad("Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")
    # The normal form's 30 disjunctions.
    ten = A(*[I(i) for i in range(10)])
    assert run(h, c, {"where": AND(ff("a", "IN", ten), ff("b", "IN", A(I(0), I(1), I(2))))}) == \
        ["a%db%d" % (a, b) for a in range(4) for b in range(3)]
    assert run(h, c, {"where": AND(OR(ff("a", "IN", ten), ff("c", "EQUAL", S("x"))), ff("b", "IN", A(I(0), I(1), I(2))))}) == \
        bad("Too many disjunctions after normalization. Result had 33 disjunctions which is more than the maximum of 30")
    assert run(h, c, {"where": OR(*[ff("a", "EQUAL", I(i)) for i in range(31)])}) == \
        bad("Too many disjunctions after normalization. Result had 31 disjunctions which is more than the maximum of 30")
    assert run(h, c, {"where": AND(*[OR(ff("a", "EQUAL", I(i)), ff("b", "EQUAL", I(i))) for i in range(5)])}) == \
        bad("Too many disjunctions after normalization. Result had 32 disjunctions which is more than the maximum of 30")


def _too_many(filters, orderings, ancestor=False):
    return bad("The query may not have more than 100 filters + sort orders + ancestor total. Currently there are "
               f"{filters} filters, {orderings} sort orders, and {'one' if ancestor else 'no'} ancestor filter.")


def test_at_most_100_filters_orderings_and_ancestor(emulator_host, grid):
    h, c = emulator_host, grid

    def eqs(n, field="f"):
        return [ff(f"{field}{i}", "EQUAL", I(i)) for i in range(n)]

    by_n = order(("n", "ASCENDING"))
    assert run(h, c, {"where": AND(*eqs(100))}) == []
    assert run(h, c, {"where": AND(*eqs(101))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(*eqs(99)), "orderBy": by_n}) == []
    assert run(h, c, {"where": AND(*eqs(100)), "orderBy": by_n}) == _too_many(100, 1)
    assert run(h, c, {"where": AND(*eqs(100)), "orderBy": order(("__name__", "ASCENDING"))}) == _too_many(100, 1)
    assert run(h, c, {"where": AND(*eqs(99)), "orderBy": order(("n", "ASCENDING"), ("x", "ASCENDING"))}) == _too_many(99, 2)
    assert run(h, c, {"orderBy": order(*[(f"f{i}", "ASCENDING") for i in range(101)])}) == _too_many(0, 101)
    # An inequality's implicit order is not counted; a document parent is the ancestor.
    assert run(h, c, {"where": AND(*eqs(99), ff("n", "GREATER_THAN", I(0)))}) == []
    assert run(h, c, {"where": AND(*eqs(100), ff("n", "GREATER_THAN", I(0)))}) == _too_many(101, 0)
    assert run(h, "x", {"where": AND(*eqs(99))}, parent=f"/{c}/a1b1") == []
    assert run(h, "x", {"where": AND(*eqs(100))}, parent=f"/{c}/a1b1") == _too_many(100, 0, ancestor=True)
    assert run(h, "x", {"where": AND(*eqs(99)), "orderBy": by_n}, parent=f"/{c}/a1b1") == _too_many(99, 1, ancestor=True)
    # Each distinct value of a list operator is a filter; a filter repeated in one composite is one,
    # `== 0` and `== 0.0` are two, and the branches of an OR add up whatever they share.
    assert run(h, c, {"where": AND(*eqs(99), ff("n", "IN", A(I(1), I(2))))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(*eqs(99), ff("n", "IN", A(I(1), I(1))))}) == []
    assert run(h, c, {"where": AND(*eqs(99), ff("n", "IN", A(I(1), D(1.0))))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(*eqs(99), ff("n", "NOT_IN", A(I(1), I(2))))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(*eqs(99), ff("n", "ARRAY_CONTAINS_ANY", A(I(1), I(2))))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(*eqs(99), ff("f0", "IN", A(I(0), I(1))))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(*eqs(100), ff("f0", "EQUAL", I(0)))}) == []
    assert run(h, c, {"where": AND(*eqs(100), ff("f0", "EQUAL", D(0.0)))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(*eqs(99), uf("n", "IS_NULL"), uf("n", "IS_NULL"))}) == []
    assert run(h, c, {"where": AND(*eqs(99), OR(ff("n", "EQUAL", I(1)), ff("n", "EQUAL", I(2))))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(AND(*eqs(50)), AND(*eqs(51, "g")))}) == _too_many(101, 0)
    assert run(h, c, {"where": OR(AND(*eqs(51)), AND(*eqs(50), ff("z", "EQUAL", I(0))))}) == _too_many(102, 0)
    assert run(h, c, {"where": AND(*[ff("n", "EQUAL", I(1)) for _ in range(101)])}) == []
    # Which bound speaks first: the list sizes and the single negation before it, it before the
    # disjunctions and the inequality fields.
    assert run(h, c, {"where": OR(*eqs(101))}) == _too_many(101, 0)
    assert run(h, c, {"where": AND(*eqs(80), ff("n", "IN", A(*[I(i) for i in range(31)])))}) == \
        bad("'IN' supports up to 30 comparison values.")
    assert run(h, c, {"where": AND(*eqs(99), ff("a", "NOT_EQUAL", I(0)), ff("b", "NOT_EQUAL", I(0)))}) == \
        bad("Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")
    assert run(h, c, {"where": AND(*eqs(90), *[ff(f"g{i}", "LESS_THAN", I(0)) for i in range(11)])}) == _too_many(101, 0)


def _inequality_fields(answer):
    """(count, the listed fields as a set): the emulator lists them in a hash set's order, Hearth in the query's."""
    status, message = answer
    assert status == 400, answer
    head, _, rest_ = message.partition(" distinct inequality fields: [")
    listed, _, tail = rest_.partition("]. ")
    assert head.startswith("The query contains ") and tail == "A query may not have more than 10 distinct inequality fields.", message
    return int(head.removeprefix("The query contains ")), set(listed.split(", "))


def test_at_most_10_inequality_fields(emulator_host, grid):
    h, c = emulator_host, grid
    f = [f"f{i}" for i in range(11)]
    assert run(h, c, {"where": AND(*[ff(x, "GREATER_THAN", I(0)) for x in f[:10]])}) == []
    assert _inequality_fields(run(h, c, {"where": AND(*[ff(x, "GREATER_THAN", I(0)) for x in f])})) == (11, set(f))
    # Every inequality counts: `!=`, `not-in`, IS_NOT_NULL, `__name__` (as __key__), a quoted name
    # (listed unquoted), within an OR too; a field under two inequalities once.
    ten = [ff(x, "LESS_THAN", I(0)) for x in f[:10]]
    for extra, name in [(ff("b", "NOT_EQUAL", I(0)), "b"), (ff("b", "NOT_IN", A(I(1))), "b"), (uf("b", "IS_NOT_NULL"), "b"),
                        (ff("__name__", "GREATER_THAN", ref(f"{c}/a1b1")), "__key__"), (ff("`a b`", "LESS_THAN", I(0)), "a b")]:
        assert _inequality_fields(run(h, c, {"where": AND(*ten, extra)})) == (11, set(f[:10]) | {name}), name
    assert _inequality_fields(run(h, c, {"where": OR(*[ff(x, "LESS_THAN", I(0)) for x in f])})) == (11, set(f))
    assert run(h, c, {"where": AND(*ten, *[ff(x, "GREATER_THAN", I(-5)) for x in f[:10]])}) == []
    assert _inequality_fields(run(h, "x", {"where": AND(*[ff(x, "LESS_THAN", I(0)) for x in f])}, parent=f"/{c}/a1b1")) == (11, set(f))
    dotted = ["a.b", "a.c", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    assert _inequality_fields(run(h, c, {"where": AND(*[ff(x, "GREATER_THAN", I(0)) for x in dotted])})) == (11, set(dotted))
    # Two `!=` is the older refusal, said first.
    assert run(h, c, {"where": AND(*ten, ff("a", "NOT_EQUAL", I(0)), ff("b", "NOT_EQUAL", I(0)))}) == \
        bad("Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")


# ---- cursors, offset, limit --------------------------------------------------------------------

@pytest.fixture
def pairs(emulator_host):
    c = coll_id("curs")
    seed(emulator_host, c, {**{f"d{i}": {"n": I(i // 2), "s": S("abc"[i % 3])} for i in range(6)}, "dx": {"s": S("z")}})
    seed(emulator_host, f"{c}/d0/{c}", {"deep": {"n": I(9)}})
    return c


def test_cursors_at_their_edges(emulator_host, pairs):
    h, c = emulator_host, pairs
    asc, desc = order(("n", "ASCENDING")), order(("n", "DESCENDING"))
    name = lambda d: ref(f"{c}/{d}")  # noqa: E731
    cases = [
        # (order, startAt, endAt, answer)
        (asc, ([I(1)], True), None, ["d2", "d3", "d4", "d5"]),
        (asc, ([I(1)], False), None, ["d4", "d5"]),
        (asc, None, ([I(1)], True), ["d0", "d1"]),
        (asc, None, ([I(1)], False), ["d0", "d1", "d2", "d3"]),
        (asc + order(("__name__", "ASCENDING")), ([I(1), name("d3")], True), None, ["d3", "d4", "d5"]),
        (asc + order(("__name__", "ASCENDING")), ([I(1), name("d3")], False), None, ["d4", "d5"]),
        (asc + order(("__name__", "ASCENDING")), None, ([I(1), name("d3")], True), ["d0", "d1", "d2"]),
        (desc, ([I(1)], True), None, ["d3", "d2", "d1", "d0"]),
        (desc, ([I(1)], False), None, ["d1", "d0"]),
        (desc, None, ([I(1)], True), ["d5", "d4"]),
        (desc + order(("__name__", "DESCENDING")), ([I(1), name("d3")], False), None, ["d2", "d1", "d0"]),
        (desc + order(("__name__", "DESCENDING")), None, ([I(1), name("d3")], False), ["d5", "d4", "d3"]),
        (asc, ([I(1)], True), ([I(2)], False), ["d2", "d3", "d4", "d5"]),
        (asc, ([I(1)], False), ([I(1)], True), []),
        (asc, ([I(2)], True), ([I(0)], False), []),
        (desc, ([I(1)], True), ([I(2)], False), []),
        (desc, ([I(2)], True), ([I(0)], False), ["d5", "d4", "d3", "d2", "d1", "d0"]),
        # Values of another type than the field's: a position in the type order.
        (asc, ([S("a")], True), None, []),
        (desc, ([S("a")], True), None, ["d5", "d4", "d3", "d2", "d1", "d0"]),
        (asc, ([D(0.5)], True), None, ["d2", "d3", "d4", "d5"]),
        (desc, ([D(0.5)], True), None, ["d1", "d0"]),
        (asc, ([NULL], False), None, ["d0", "d1", "d2", "d3", "d4", "d5"]),
        (asc, ([NAN], False), None, ["d0", "d1", "d2", "d3", "d4", "d5"]),
        (desc, ([NAN], False), None, []),
        (asc, ([], False), None, []),
        # Two orderings, a partial cursor.
        (order(("s", "ASCENDING"), ("n", "DESCENDING")), ([S("b"), I(1)], False), None, ["d1", "d5", "d2"]),
        (order(("s", "ASCENDING"), ("n", "DESCENDING")), ([S("b")], False), None, ["d5", "d2"]),
        # More values than explicit orderings (the implicit ones do not take values).
        (asc, ([I(1), name("d2")], False), None, bad("Cursor has too many values.")),
        (None, ([name("d3")], False), None, bad("Cursor has too many values.")),
        (order(("__name__", "ASCENDING")), ([I(1)], False), None, bad("Cursor __key__ value is not a document reference.")),
    ]
    for o, start, end, want in cases:
        q = {"orderBy": o} if o else {}
        if start:
            q["startAt"] = cursor(*start)
        if end:
            q["endAt"] = cursor(*end)
        assert run(h, c, q) == want, q
    assert run(h, c, {"where": ff("n", "GREATER_THAN", I(0)), "startAt": cursor([I(1)], False)}) == bad("Cursor has too many values.")
    assert run(h, c, {"orderBy": asc, "startAt": cursor([I(1)], True), "offset": 1, "limit": 2}) == ["d3", "d4"]
    assert run(h, c, {"orderBy": desc, "startAt": cursor([I(1)], True), "offset": 1, "limit": 2}) == ["d2", "d1"]
    assert run(h, c, {"orderBy": desc, "limit": 3}) == ["d5", "d4", "d3"]  # limit_to_last's shape
    assert run(h, c, {"orderBy": asc, "offset": 4}) == ["d4", "d5"]
    assert run(h, c, {"orderBy": asc, "offset": 100}) == []
    assert run(h, c, {"offset": 2147483647}) == []
    assert run(h, c, {"limit": 0}) == []
    assert run(h, c, {"limit": 0, "offset": 2}) == []
    assert run(h, c, {"limit": 2147483647}) == ["d0", "d1", "d2", "d3", "d4", "d5", "dx"]
    assert run(h, c, {"limit": "2"}) == ["d0", "d1"]
    assert run(h, c, {"limit": -1}) == bad("limit is negative")
    assert run(h, c, {"offset": -1}) == bad("offset is negative")
    group = {"from": [{"collectionId": c, "allDescendants": True}]}
    assert run(h, c, {**group, "orderBy": asc}) == ["d0", "d1", "d2", "d3", "d4", "d5", "deep"]
    assert run(h, c, {**group, "orderBy": desc, "startAt": cursor([I(2), name("d4")], False)}) == bad("Cursor has too many values.")


# ---- aggregations ------------------------------------------------------------------------------

def test_aggregations_at_their_edges(emulator_host):
    h, c = emulator_host, coll_id("aggs")
    seed(h, c, {
        "i1": {"v": I(1), "w": I(MAX)}, "i2": {"v": I(2), "w": I(MAX)}, "d": {"v": D(0.5), "w": I(1)},
        "s": {"v": S("x"), "w": I(1)}, "nul": {"v": NULL}, "arr": {"v": A(I(5))}, "map": {"v": M(a=I(1))}, "b": {"v": TRUE},
        "t": {"v": {"timestampValue": "2024-01-01T00:00:00Z"}}, "none": {"x": I(1)},
    })
    count = {"count": {}}
    sum_v, avg_v = {"sum": {"field": {"fieldPath": "v"}}}, {"avg": {"field": {"fieldPath": "v"}}}
    assert aggregate(h, c, [{"alias": "c", **count}]) == {"c": I(10)}
    assert aggregate(h, c, [{"alias": "c", "count": {"upTo": "3"}}]) == {"c": I(3)}
    assert aggregate(h, c, [{"alias": "c", "count": {"upTo": str(MAX)}}]) == {"c": I(10)}
    assert aggregate(h, c, [{"alias": "c", "count": {"upTo": "2"}}], {"limit": 5}) == {"c": I(2)}
    assert aggregate(h, c, [{"alias": "c", "count": {"upTo": "-1"}}]) == \
        bad("The `up_to` value in a COUNT aggregation must be greater than or equal to zero.")
    # Non-numeric values are skipped by sum and avg, but a count beside them counts what has the field.
    assert aggregate(h, c, [{"alias": "s", **sum_v}, {"alias": "a", **avg_v}, {"alias": "c", **count}]) == \
        {"s": D(3.5), "a": D(1.1666666666666667), "c": I(9)}
    assert aggregate(h, c, [{"alias": "s", "sum": {"field": {"fieldPath": "w"}}}, {"alias": "a", "avg": {"field": {"fieldPath": "w"}}}]) == \
        {"s": D(1.8446744073709552e+19), "a": D(4.611686018427388e+18)}
    assert aggregate(h, c, [{"alias": "s", "sum": {"field": {"fieldPath": "nothing"}}}, {"alias": "a", "avg": {"field": {"fieldPath": "nothing"}}},
                            {"alias": "c", **count}]) == {"s": I(0), "a": NULL, "c": I(0)}
    assert aggregate(h, c, [{"alias": "s", **sum_v}, {"alias": "a", **avg_v}], {"where": ff("v", "EQUAL", S("x"))}) == {"s": I(0), "a": NULL}
    assert aggregate(h, c, [{"alias": "s", "sum": {"field": {"fieldPath": "v.a"}}}]) == {"s": I(1)}
    assert aggregate(h, c, [{"alias": "s", **sum_v}, {"alias": "c", **count}], {"limit": 3}) == {"s": D(0.5), "c": I(3)}
    assert aggregate(h, c, [{"alias": "s", "sum": {"field": {"fieldPath": "w"}}}, {"alias": "c", **count}],
                     {"limit": 2, "orderBy": order(("v", "DESCENDING"))}) == {"s": D(9.223372036854776e+18), "c": I(2)}
    assert aggregate(h, c, [{"alias": "c", **count}], {"offset": 7}) == {"c": I(3)}
    assert aggregate(h, c, [{"alias": "c", **count}, {"alias": "s", **sum_v}],
                     {"orderBy": order(("v", "ASCENDING")), "startAt": cursor([I(1)], False)}) == {"c": I(5), "s": I(2)}
    assert aggregate(h, c, [{"alias": "c", **count}], {"orderBy": order(("v", "ASCENDING")), "startAt": cursor([I(0)], False), "limit": 2}) == {"c": I(2)}
    # Unnamed aggregations are field_1, field_2, … counting the unnamed ones only.
    assert aggregate(h, c, [count, sum_v, avg_v]) == {"field_1": I(9), "field_2": D(3.5), "field_3": D(1.1666666666666667)}
    assert aggregate(h, c, [count, {"alias": "field_3", **count}, count]) == {"field_1": I(10), "field_2": I(10), "field_3": I(10)}
    assert aggregate(h, c, [count, {"alias": "x", **count}, count, count]) == \
        {"field_1": I(10), "field_2": I(10), "field_3": I(10), "x": I(10)}
    assert aggregate(h, c, [{"alias": "", **count}]) == {"field_1": I(10)}
    assert aggregate(h, c, [count, {"alias": "field_1", **count}]) == bad("Aggregation aliases contain duplicate alias: field_1.")
    assert aggregate(h, c, [{"alias": "field_2", **count}, count, count]) == bad("Aggregation aliases contain duplicate alias: field_2.")
    assert aggregate(h, c, [{"alias": "c", **count}, {"alias": "c", **sum_v}]) == bad("Aggregation aliases contain duplicate alias: c.")
    assert aggregate(h, c, [{"alias": "a.b", **count}]) == {"a.b": I(10)}
    assert aggregate(h, c, [{"alias": "s", "sum": {}}]) == bad("Invalid empty property path string.")
    # NaN and the infinities.
    n = coll_id("aggnum")
    seed(h, n, {"a": {"v": NAN}, "b": {"v": I(1)}, "c": {"v": D(float("inf"))}, "d": {"v": D(float("-inf"))}, "e": {"v": D(2.5)}})
    both = [{"alias": "s", **sum_v}, {"alias": "a", **avg_v}]
    assert aggregate(h, n, both) == {"s": NAN, "a": NAN}
    assert aggregate(h, n, both, {"where": ff("v", "GREATER_THAN", I(2))}) == {"s": D(float("inf")), "a": D(float("inf"))}
    assert aggregate(h, n, both, {"where": uf("v", "IS_NAN")}) == {"s": NAN, "a": NAN}
    assert aggregate(h, n, [{"alias": "s", **sum_v}], {"where": ff("v", "LESS_THAN", I(2))}) == {"s": D(float("-inf"))}
    assert aggregate(h, n, [{"alias": "c", **count}], {"where": ff("v", "IN", A(I(1), D(2.5), NAN))}) == {"c": I(2)}


def aggregate_query(host, sq, aggregations, parent=""):
    """`aggregate` of a whole structured query under `parent`."""
    status, body = rest(host, "POST", f"{parent}:runAggregationQuery",
                        {"structuredAggregationQuery": {"structuredQuery": sq, "aggregations": aggregations}})
    if status != 200:
        return status, body["error"].get("message")
    return [b["result"]["aggregateFields"] for b in body if "result" in b][0]


def test_sums_under_a_key_constraint_need_their_fields_ordered(emulator_host):
    # faith38: a sum or average reads its field from an index, and no index has fields after
    # __name__, so a query constrained by key (a __name__ filter, an explicit __name__ order, a
    # cursor, a descendant query under a document) must order by each aggregated field; the emulator
    # refuses it otherwise, for collections, collection groups and kind-less queries alike.
    h, c = emulator_host, coll_id("aggkey")
    seed(h, c, {"a": {"n": I(1), "m": I(1)}, "b": {"n": I(2)}, "a/s/q": {"n": I(4)}})
    n, m = {"alias": "s", "sum": {"field": {"fieldPath": "n"}}}, {"alias": "a", "avg": {"field": {"fieldPath": "m"}}}
    count = {"alias": "c", "count": {}}
    gt = ff("__name__", "GREATER_THAN", ref(f"{c}/a"))

    def refused(*fields):
        return bad(f"This query requires an index that has fields [{', '.join(fields)}] after __name__ and Firestore does "
                   "not currently support such an index. Please try the query again with additional ordering on those fields.")
    coll, group, kindless = {"from": [{"collectionId": c}]}, {"from": [{"collectionId": c, "allDescendants": True}]}, \
        {"from": [{"allDescendants": True}]}
    for frm in (coll, group, kindless):
        assert aggregate_query(h, {**frm, "where": gt}, [n]) == refused("n")
        assert aggregate_query(h, {**frm, "where": gt}, [n, m, count]) == refused("m", "n")
        assert aggregate_query(h, {**frm, "where": ff("__name__", "EQUAL", ref(f"{c}/a"))}, [n]) == refused("n")
        assert aggregate_query(h, {**frm, "orderBy": order(("__name__", "ASCENDING"))}, [n]) == refused("n")
        assert aggregate_query(h, {**frm, "orderBy": order(("__name__", "ASCENDING")), "startAt": cursor([ref(f"{c}/a")], False)},
                               [n]) == refused("n")
        assert aggregate_query(h, {**frm, "where": gt, "limit": 1}, [n]) == refused("n")
    assert aggregate_query(h, {**coll, "where": gt}, [count]) == {"c": I(1)}
    assert aggregate_query(h, {**coll, "where": AND(ff("n", "EQUAL", I(2)), gt)}, [n]) == refused("n")
    assert aggregate_query(h, {**coll, "where": gt, "orderBy": order(("m", "ASCENDING"))}, [n]) == refused("n")
    # The aggregated field ordered (explicitly or as an inequality's): answered.
    assert aggregate_query(h, {**coll, "where": gt, "orderBy": order(("n", "ASCENDING"))}, [n]) == {"s": I(2)}
    assert aggregate_query(h, {**coll, "where": AND(ff("n", "GREATER_THAN", I(0)), gt)}, [n]) == {"s": I(2)}
    assert aggregate_query(h, {**coll, "where": AND(ff("n", "GREATER_THAN", I(0)), gt)}, [n, m]) == refused("m")
    assert aggregate_query(h, {**coll, "orderBy": order(("n", "ASCENDING")), "startAt": cursor([I(2)], True)}, [n]) == {"s": I(2)}
    # No key constraint: answered, ordered or not.
    assert aggregate_query(h, coll, [n]) == {"s": I(3)}
    assert aggregate_query(h, {**coll, "orderBy": order(("m", "ASCENDING"))}, [n]) == {"s": I(1)}
    # Under a document: a descendant query is a key range there; a plain collection is not.
    assert aggregate_query(h, {"from": [{"collectionId": "s"}]}, [n], parent=f"/{c}/a") == {"s": I(4)}
    assert aggregate_query(h, {"from": [{"collectionId": "s", "allDescendants": True}]}, [n], parent=f"/{c}/a") == refused("n")
    assert aggregate_query(h, kindless, [n], parent=f"/{c}/a") == refused("n")
    assert aggregate_query(h, {}, [n], parent=f"/{c}/a") == {"s": I(4)}


def test_timestamp_operands_finer_than_a_microsecond_compare_whole(emulator_host):
    # faith38: a stored timestamp keeps microseconds; a filter or cursor operand with nanoseconds is
    # compared whole by the emulator, so it equals nothing stored and sits between stored values.
    h, c = emulator_host, coll_id("tsfine")
    T = lambda frac: {"timestampValue": f"2024-01-01T12:00:00.{frac}Z"}
    seed(h, c, {"a": {"t": T("123455"), "l": A(T("123455"))}, "b": {"t": T("123456"), "l": A(T("123456"))},
                "c": {"t": T("123457"), "l": A(T("123457"))}, "n": {"t": NULL}, "s": {"t": S("x")}})
    fine, whole = T("123456789"), T("123456000")
    expected = {
        "EQUAL": [], "NOT_EQUAL": ["a", "b", "c", "s"], "LESS_THAN": ["a", "b"], "LESS_THAN_OR_EQUAL": ["a", "b"],
        "GREATER_THAN": ["c"], "GREATER_THAN_OR_EQUAL": ["c"],
    }
    for op, ids in expected.items():
        assert sorted(run(h, c, {"where": ff("t", op, fine)})) == ids, op
    # Zeros past the microsecond are the microsecond itself.
    assert run(h, c, {"where": ff("t", "EQUAL", whole)}) == ["b"]
    assert run(h, c, {"where": ff("l", "ARRAY_CONTAINS", fine)}) == []
    # The elements of a list operator, and values nested in an operand, are truncated there too.
    assert run(h, c, {"where": ff("t", "IN", A(fine))}) == ["b"]
    assert sorted(run(h, c, {"where": ff("t", "NOT_IN", A(fine, T("123455")))})) == ["c", "s"]
    assert run(h, c, {"where": ff("l", "ARRAY_CONTAINS_ANY", A(fine, T("123455")))}) == ["a", "b"]
    assert run(h, c, {"where": ff("l", "EQUAL", A(fine))}) == ["b"]
    asc, desc = order(("t", "ASCENDING")), order(("t", "DESCENDING"))
    ts = {"where": ff("t", "GREATER_THAN", T("0"))}
    for before in (True, False):
        assert run(h, c, {**ts, "orderBy": asc, "startAt": cursor([fine], before)}) == ["c"]
        assert run(h, c, {**ts, "orderBy": asc, "endAt": cursor([fine], before)}) == ["a", "b"]
        assert run(h, c, {**ts, "orderBy": desc, "startAt": cursor([fine], before)}) == ["b", "a"]
        assert run(h, c, {**ts, "orderBy": desc, "endAt": cursor([fine], before)}) == ["c"]
    assert run(h, c, {**ts, "orderBy": asc, "startAt": cursor([whole], True)}) == ["b", "c"]


# ---- errors ------------------------------------------------------------------------------------

PATH_REGEX = ("Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match "
              "regex (`(?:[^`\\\\]|(?:\\\\.))+`)")


def test_invalid_queries_in_the_emulators_words(emulator_host, grid):
    h, c = emulator_host, grid
    for path in ["a..b", "a.", "`a", "1a", "a b"]:
        assert run(h, c, {"where": ff(path, "EQUAL", I(1))}) == bad(f'Invalid property path "{path}". {PATH_REGEX}')
        assert run(h, c, {"orderBy": order((path, "ASCENDING"))}) == bad(f'Invalid property path "{path}". {PATH_REGEX}')
    assert run(h, c, {"where": ff("", "EQUAL", I(1))}) == bad("Invalid empty property path string.")
    assert run(h, c, {"where": ff("`1a`", "EQUAL", I(1))}) == []
    assert run(h, c, {"where": ff("__x__", "EQUAL", I(1))}) == bad("Invalid reserved name in field path __x__")
    assert run(h, c, {"orderBy": order(("a", "ASCENDING"), ("a", "DESCENDING"))}) == bad("order by clause cannot contain duplicate fields a")
    assert run(h, c, {"orderBy": order(("__name__", "ASCENDING"), ("a", "DESCENDING"))}) == \
        bad("order by clause cannot contain more fields after the key")
    assert run(h, c, {"where": ff("a", "OPERATOR_UNSPECIFIED", I(1))}) == bad("Unknown FieldFilter operator.")
    assert run(h, c, {"where": {"fieldFilter": {"field": {"fieldPath": "a"}, "op": "EQUAL"}}}) == \
        bad("Cannot convert firestore.v1.Value with type unset.")
    assert run(h, c, {"where": uf("__name__", "IS_NOT_NULL")}) == bad("__key__ filter value must be a Key")
    assert run(h, c, {"where": ff("__name__", "EQUAL", S("a1b1"))}) == bad("__key__ filter value must be a Key")
    assert run(h, c, {"where": AND(ff("a", "ARRAY_CONTAINS", I(1)), ff("b", "ARRAY_CONTAINS_ANY", A(I(1))))}) == \
        bad("A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction.")
    assert run(h, c, {"where": AND(ff("a", "IN", A(I(1))), ff("b", "NOT_IN", A(I(1))))}) == \
        bad("'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")
    assert run(h, c, {"where": ff("a", "IN", I(1))}) == bad("'IN' requires an ArrayValue.")
    assert run(h, c, {"where": ff("a", "NOT_IN", I(1))}) == bad("'NOT_IN' requires an ArrayValue.")
    assert run(h, c, {"from": [{"collectionId": "a/b"}]}) == bad('Collection id "a/b" is invalid because it contains "/".')
    assert run(h, c, {"from": [{"collectionId": "__x__"}]}) == bad('Collection id "__x__" is invalid because it is reserved.')
    assert run(h, c, {"from": [{"collectionId": "a"}, {"collectionId": "b"}]}) == \
        bad("StructuredQuery.from cannot have more than one collection selector.")
    assert run(h, c, {"select": {"fields": [{"fieldPath": "a..b"}]}}) == bad(f'Invalid property path "a..b". {PATH_REGEX}')
