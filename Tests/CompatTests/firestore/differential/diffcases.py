"""The differential script: REST requests sent in order to Hearth and to the official emulator.

Each case is a dict: `name` (unique), `m` method, `p` path after `/v1/projects/demo-diff/databases/(default)/documents`
(or from the host root when it starts with `^`), `q` raw query string, `b` JSON body or `raw` body text,
`a` auth (`"owner"` by default, None for no header, else a uid sent as an unsigned mock token), and
`save` ({var: "json.path"}) to reuse a value later as `${var}`. Later cases see earlier ones' writes.
"""
import base64
import json

PROJECT = "demo-diff"
N = f"projects/{PROJECT}/databases/(default)/documents"


def _b64(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def mock_token(uid):
    """An unsigned ID token like rules-unit-testing's; `uid` may be "name+admin" for an admin claim."""
    uid, _, claim = uid.partition("+")
    payload = {"iss": f"https://securetoken.google.com/{PROJECT}", "aud": PROJECT, "iat": 0, "exp": 3600,
               "auth_time": 0, "sub": uid, "user_id": uid, "firebase": {"sign_in_provider": "custom", "identities": {}}}
    if claim:
        payload[claim] = True
    return _b64({"alg": "none", "type": "JWT"}) + "." + _b64(payload) + "."


def s(v):
    return {"stringValue": v}


def i(v):
    return {"integerValue": str(v)}


def d(v):
    return {"doubleValue": v}


def ts(v):
    return {"timestampValue": v}


def arr(*vs):
    return {"arrayValue": {"values": list(vs)}} if vs else {"arrayValue": {}}


def mp(**fs):
    return {"mapValue": {"fields": fs}} if fs else {"mapValue": {}}


NULL = {"nullValue": None}
TRUE = {"booleanValue": True}
FALSE = {"booleanValue": False}


def ref(path):
    return {"referenceValue": f"{N}/{path}"}


def geo(lat, lng):
    return {"geoPointValue": {"latitude": lat, "longitude": lng}}


def byt(raw):
    return {"bytesValue": base64.b64encode(raw).decode()}


def update(path, fields, **extra):
    w = {"update": {"name": f"{N}/{path}", "fields": fields}}
    w.update(extra)
    return w


def ff(path, op, value):
    return {"fieldFilter": {"field": {"fieldPath": path}, "op": op, "value": value}}


def uf(path, op):
    return {"unaryFilter": {"field": {"fieldPath": path}, "op": op}}


def comp(op, *filters):
    return {"compositeFilter": {"op": op, "filters": list(filters)}}


def order(path, direction="ASCENDING"):
    return {"field": {"fieldPath": path}, "direction": direction}


class Script:
    def __init__(self):
        self.cases = []
        self.names = set()

    def add(self, name, m="GET", p="", **kw):
        assert name not in self.names, name
        self.names.add(name)
        c = {"name": name, "m": m, "p": p}
        c.update(kw)
        self.cases.append(c)

    def commit(self, name, writes, **kw):
        body = {"writes": writes}
        body.update(kw.pop("extra", {}))
        self.add(name, "POST", ":commit", b=body, **kw)

    def query(self, name, sq, parent="", **kw):
        body = {"structuredQuery": sq}
        body.update(kw.pop("extra", {}))
        self.add(name, "POST", parent + ":runQuery", b=body, **kw)

    def agg(self, name, sq, aggregations, parent="", **kw):
        body = {"structuredAggregationQuery": {"structuredQuery": sq, "aggregations": aggregations}}
        body.update(kw.pop("extra", {}))
        self.add(name, "POST", parent + ":runAggregationQuery", b=body, **kw)


# Values of every type, in Firestore's cross-type order, stored one per document in `vals`.
VALUES = [
    ("null", NULL), ("false", FALSE), ("true", TRUE), ("nan", d("NaN")), ("neginf", d("-Infinity")),
    ("intneg", i(-5)), ("dblneg", d(-1.5)), ("intzero", i(0)), ("dblnegzero", d(-0.0)), ("dblhalf", d(0.5)),
    ("intone", i(1)), ("dblone", d(1.0)), ("inttwo", i(2)), ("intbig", i(9007199254740993)), ("posinf", d("Infinity")),
    ("tsold", ts("1970-01-01T00:00:01Z")), ("tsnew", ts("2001-02-03T04:05:06.789Z")),
    ("strempty", s("")), ("strA", s("A")), ("stra", s("a")), ("strab", s("ab")), ("strutf", s("\u00e9t\u00e9")),
    ("bytesa", byt(b"a")), ("bytesb", byt(b"\x00\xff")),
    ("refa", ref("vals/strA")), ("refb", ref("vals/strb/sub/x")),
    ("geo1", geo(-10, 20)), ("geo2", geo(10, -20)),
    ("arrempty", arr()), ("arr12", arr(i(1), i(2))), ("arr1a", arr(i(1), s("a"))), ("arrnull", arr(NULL, d("NaN"))),
    ("mapempty", mp()), ("mapa1", mp(a=i(1))), ("mapb0", mp(b=i(0))),
]

# Operands tried with every operator.
OPERANDS = [
    ("null", NULL), ("nan", d("NaN")), ("true", TRUE), ("int1", i(1)), ("dbl1", d(1.0)), ("dblnegzero", d(-0.0)),
    ("ts", ts("2001-02-03T04:05:06.789Z")), ("str_a", s("a")), ("bytes", byt(b"a")), ("ref", ref("vals/strA")),
    ("geo", geo(-10, 20)), ("arr12", arr(i(1), i(2))), ("map", mp(a=i(1))),
]

LIST_OPERANDS = [
    ("ints", arr(i(1), i(2))), ("mixed", arr(s("a"), d(0.5), TRUE)), ("withnull", arr(NULL, i(1))),
    ("withnan", arr(d("NaN"), i(0))), ("arrays", arr(arr(i(1), i(2)), arr())), ("empty", arr()),
]


def crud(S):
    S.add("root-ok", p="^/")
    S.add("create-with-id", "POST", "/crud", q="documentId=one", b={"fields": {"a": i(1), "s": s("x")}})
    S.add("create-existing", "POST", "/crud", q="documentId=one", b={"fields": {"a": i(2)}})
    S.add("create-auto-id", "POST", "/crud", b={"fields": {"auto": TRUE}})
    S.add("create-empty-body", "POST", "/crud", q="documentId=empty", b={})
    S.add("create-with-name", "POST", "/crud", q="documentId=named", b={"name": f"{N}/crud/other", "fields": {}})
    S.add("create-id-with-slash", "POST", "/crud", q="documentId=a%2Fb", b={"fields": {}})
    S.add("create-reserved-id", "POST", "/crud", q="documentId=__x__", b={"fields": {}})
    S.add("create-dot-id", "POST", "/crud", q="documentId=.", b={"fields": {}})
    S.add("create-dotdot-id", "POST", "/crud", q="documentId=..", b={"fields": {}})
    S.add("create-long-id", "POST", "/crud", q="documentId=" + "x" * 1501, b={"fields": {}})
    S.add("create-1500-id", "POST", "/crud", q="documentId=" + "y" * 1500, b={"fields": {}})
    S.add("create-mask", "POST", "/crud", q="documentId=masked&mask.fieldPaths=a", b={"fields": {"a": i(1), "b": i(2)}})
    S.add("create-on-doc-path", "POST", "/crud/one", b={"fields": {}})
    S.add("get-one", p="/crud/one")
    S.add("get-missing", p="/crud/nope")
    S.add("get-mask", p="/crud/one", q="mask.fieldPaths=s")
    S.add("get-mask-two", p="/crud/one", q="mask.fieldPaths=s&mask.fieldPaths=a")
    S.add("get-mask-missing-field", p="/crud/one", q="mask.fieldPaths=zzz")
    S.add("get-mask-bad-path", p="/crud/one", q="mask.fieldPaths=a..b")
    S.add("get-unknown-param", p="/crud/one", q="bogus=1")
    S.add("get-readtime-bad", p="/crud/one", q="readTime=yesterday")
    S.add("get-tx-bad", p="/crud/one", q="transaction=bm90LWEtdHg")
    S.add("get-tx-not-base64", p="/crud/one", q="transaction=***")
    S.add("get-tx-and-readtime", p="/crud/one", q="transaction=bm90LWEtdHg&readTime=2001-01-01T00:00:00Z")
    S.add("get-reserved-id", p="/crud/__x__")
    S.add("get-reserved-collection", p="/__c__/x")
    S.add("get-deep", p="/a/b/c/d/e/f")
    S.add("get-empty-segment", p="/crud//one")
    S.add("patch-upsert", "PATCH", "/crud/two", b={"fields": {"n": i(1), "m": mp(x=i(1), y=i(2))}})
    S.add("patch-mask-merge", "PATCH", "/crud/two", q="updateMask.fieldPaths=m.x", b={"fields": {"m": mp(x=i(9))}})
    S.add("patch-mask-deletes", "PATCH", "/crud/two", q="updateMask.fieldPaths=n", b={"fields": {}})
    S.add("patch-mask-new-field", "PATCH", "/crud/two", q="updateMask.fieldPaths=z&mask.fieldPaths=z", b={"fields": {"z": TRUE}})
    S.add("get-two", p="/crud/two", save={"t2": "updateTime"})
    S.add("patch-mask-not-in-body", "PATCH", "/crud/two", q="updateMask.fieldPaths=q.r", b={"fields": {"z": FALSE}})
    S.add("patch-mask-bad", "PATCH", "/crud/two", q="updateMask.fieldPaths=`a", b={"fields": {}})
    # A reserved name (__.*__) anywhere in a mask path, quoted or not, would write a field no document may hold.
    S.add("patch-mask-reserved-nested", "PATCH", "/crud/two", q="updateMask.fieldPaths=m.__x__", b={"fields": {"m": mp(x=i(1))}})
    S.add("patch-mask-reserved-quoted", "PATCH", "/crud/two", q="updateMask.fieldPaths=m.%60__x__%60", b={"fields": {}})
    S.add("patch-mask-reserved-read", p="/crud/two")
    S.add("patch-exists-true-missing", "PATCH", "/crud/three", q="currentDocument.exists=true", b={"fields": {}})
    S.add("patch-exists-false-existing", "PATCH", "/crud/two", q="currentDocument.exists=false", b={"fields": {}})
    S.add("patch-exists-false-new", "PATCH", "/crud/four", q="currentDocument.exists=false", b={"fields": {"k": i(4)}})
    S.add("patch-exists-maybe", "PATCH", "/crud/four", q="currentDocument.exists=maybe", b={"fields": {}})
    S.add("patch-updatetime-stale", "PATCH", "/crud/four", q="currentDocument.updateTime=2001-01-01T00:00:00Z", b={"fields": {}})
    S.add("patch-updatetime-bad", "PATCH", "/crud/four", q="currentDocument.updateTime=nope", b={"fields": {}})
    S.add("patch-exists-and-updatetime", "PATCH", "/crud/four",
          q="currentDocument.exists=true&currentDocument.updateTime=2001-01-01T00:00:00Z", b={"fields": {}})
    S.add("patch-name-mismatch", "PATCH", "/crud/four", b={"name": f"{N}/crud/five", "fields": {}})
    S.add("patch-on-collection", "PATCH", "/crud", b={"fields": {}})
    S.add("patch-unknown-body-field", "PATCH", "/crud/four", b={"fields": {}, "bogus": 1})
    S.add("patch-createtime-in-body", "PATCH", "/crud/four", b={"fields": {"k": i(5)}, "createTime": "2001-01-01T00:00:00Z"})
    S.add("patch-invalid-json", "PATCH", "/crud/four", raw="{not json")
    S.add("patch-array-body", "PATCH", "/crud/four", raw="[]")
    S.add("delete-exists-true-missing", "DELETE", "/crud/nope", q="currentDocument.exists=true")
    S.add("delete-missing", "DELETE", "/crud/nope")
    S.add("delete-four", "DELETE", "/crud/four")
    S.add("delete-updatetime-stale", "DELETE", "/crud/two", q="currentDocument.updateTime=2001-01-01T00:00:00.000001Z")
    S.add("delete-on-collection", "DELETE", "/crud")
    S.add("delete-body-ignored-param", "DELETE", "/crud/nope", q="bogus=2")
    S.add("put-document", "PUT", "/crud/one", b={"fields": {}})
    S.add("post-unknown-verb", "POST", ":frobnicate", b={})
    S.add("get-verb-commit", "GET", ":commit")
    S.add("get-other-database", p="^/v1/projects/demo-diff/databases/other/documents/crud/one")
    S.add("get-bad-root", p="^/v1/projects/demo-diff/databases/(default)/docs/crud/one")
    S.add("get-v1beta1", p="^/v1beta1/projects/demo-diff/databases/(default)/documents/crud/one")
    S.add("get-list-root", p="")


def values(S):
    """Every value type written, read back, and its parse errors."""
    fields = {name: v for name, v in VALUES}
    S.commit("values-commit", [update("types/all", fields)])
    S.add("values-get", p="/types/all")
    bad = [
        ("string-number", {"stringValue": 3}), ("string-bool", {"stringValue": True}), ("int-text", {"integerValue": "x"}),
        ("int-number", {"integerValue": 7}), ("int-overflow", {"integerValue": "9223372036854775808"}),
        ("int-min", {"integerValue": "-9223372036854775808"}), ("int-float", {"integerValue": "1.5"}),
        ("int-plus", {"integerValue": "+3"}), ("int-leading-zero", {"integerValue": "007"}),
        ("double-string", {"doubleValue": "1.5"}), ("double-nan-lower", {"doubleValue": "nan"}),
        ("double-negzero", {"doubleValue": -0.0}), ("double-int", {"doubleValue": 3}),
        ("double-exp", {"doubleValue": 1e308}), ("double-huge", {"doubleValue": "1e400"}),
        ("bool-string", {"booleanValue": "true"}), ("bool-number", {"booleanValue": 1}),
        ("null-string", {"nullValue": "NULL_VALUE"}), ("null-zero", {"nullValue": 0}), ("null-bogus", {"nullValue": "X"}),
        ("ts-lower-t", ts("2001-02-03t04:05:06Z")), ("ts-lower-z", ts("2001-02-03T04:05:06z")),
        ("ts-offset", ts("2001-02-03T04:05:06+02:00")), ("ts-nanos", ts("2001-02-03T04:05:06.123456789Z")),
        ("ts-ten-digits", ts("2001-02-03T04:05:06.1234567891Z")), ("ts-no-zone", ts("2001-02-03T04:05:06")),
        ("ts-year-zero", ts("0000-01-01T00:00:00Z")), ("ts-year-one", ts("0001-01-01T00:00:00Z")),
        ("ts-max", ts("9999-12-31T23:59:59.999999999Z")), ("ts-date-only", ts("2001-02-03")),
        ("ts-leap", ts("2001-02-29T00:00:00Z")), ("ts-number", {"timestampValue": 5}),
        ("bytes-bad", {"bytesValue": "***"}), ("bytes-url", {"bytesValue": "-_8"}), ("bytes-unpadded", {"bytesValue": "YQ"}),
        ("geo-lat-range", geo(91, 0)), ("geo-lng-range", geo(0, 181)), ("geo-missing", {"geoPointValue": {}}),
        ("geo-string", {"geoPointValue": {"latitude": "1", "longitude": 2}}),
        ("ref-other-project", {"referenceValue": "projects/other/databases/(default)/documents/a/b"}),
        ("ref-collection", {"referenceValue": f"{N}/a"}), ("ref-garbage", {"referenceValue": "nope"}),
        ("ref-root", {"referenceValue": N}),
        ("array-nested", arr(arr(i(1)))), ("array-of-map-array", arr(mp(x=arr(i(1))))),
        ("array-values-null", {"arrayValue": {"values": None}}), ("array-bad-item", {"arrayValue": {"values": [5]}}),
        ("map-empty-key", mp(**{"": i(1)})), ("map-reserved-key", mp(__k__=i(1))), ("map-dot-key", mp(**{"a.b": i(1)})),
        ("two-kinds", {"stringValue": "a", "integerValue": "1"}), ("no-kind", {}), ("unknown-kind", {"fooValue": 1}),
        ("value-not-object", 5),
    ]
    for name, v in bad:
        S.add(f"value-{name}", "PATCH", f"/types/{name}", b={"fields": {"v": v}})
        S.add(f"value-{name}-read", p=f"/types/{name}")
    S.add("field-empty-name", "PATCH", "/types/f1", b={"fields": {"": i(1)}})
    S.add("field-reserved-name", "PATCH", "/types/f2", b={"fields": {"__x__": i(1)}})
    S.add("field-name-field", "PATCH", "/types/f3", b={"fields": {"__name__": i(1)}})
    S.add("field-dotted-name", "PATCH", "/types/f4", b={"fields": {"a.b": i(1), "c d": i(2), "`e`": i(3)}})
    S.add("field-long-name", "PATCH", "/types/f5", b={"fields": {"n" * 1500: i(1)}})
    S.add("field-too-long-name", "PATCH", "/types/f6", b={"fields": {"n" * 1501: i(1)}})
    S.add("fields-not-map", "PATCH", "/types/f7", b={"fields": []})

    def nest(depth):
        v = i(1)
        for _ in range(depth):
            v = mp(x=v)
        return v
    S.add("nesting-19", "PATCH", "/types/deep19", b={"fields": {"x": nest(19)}})
    S.add("nesting-20", "PATCH", "/types/deep20", b={"fields": {"x": nest(20)}})
    S.add("nesting-21", "PATCH", "/types/deep21", b={"fields": {"x": nest(21)}})
    S.add("nesting-100", "PATCH", "/types/deep100", b={"fields": {"x": nest(100)}})
    # Document size: 1 MiB less the name and field overhead is accepted; past it is refused.
    S.add("size-just-under", "PATCH", "/types/big1", b={"fields": {"s": s("x" * 1_048_000)}})
    S.add("size-over", "PATCH", "/types/big2", b={"fields": {"s": s("x" * 1_048_577)}})
    S.add("size-many-fields", "PATCH", "/types/big3", b={"fields": {f"f{k}": s("y" * 1000) for k in range(1100)}})
    S.add("size-big-read", p="/types/big1", q="mask.fieldPaths=nothing")
    # An indexed string longer than 1500 bytes is accepted (indexes use its first 1500 bytes).
    S.add("index-entry-long", "PATCH", "/types/long1", b={"fields": {"s": s("z" * 1600 + "a")}})
    S.add("index-entry-long2", "PATCH", "/types/long2", b={"fields": {"s": s("z" * 1600 + "b")}})
    S.query("index-entry-query", {"from": [{"collectionId": "types"}], "where": ff("s", "GREATER_THAN", s("z" * 1600)),
                                  "select": {"fields": [{"fieldPath": "__name__"}]}})


def query_values(S):
    """Every operator with every operand over documents of every value type."""
    S.commit("vals-commit", [update(f"vals/{name}", {"v": v, "k": s(name)}) for name, v in VALUES]
             + [update("vals/nov", {"k": s("nov")})])
    sel = {"fields": [{"fieldPath": "k"}]}
    ops = ["LESS_THAN", "LESS_THAN_OR_EQUAL", "EQUAL", "NOT_EQUAL", "GREATER_THAN_OR_EQUAL", "GREATER_THAN",
           "ARRAY_CONTAINS"]
    for op in ops:
        for oname, operand in OPERANDS:
            S.query(f"q-{op.lower()}-{oname}", {"from": [{"collectionId": "vals"}], "where": ff("v", op, operand), "select": sel})
    for op in ["IN", "NOT_IN", "ARRAY_CONTAINS_ANY"]:
        for oname, operand in LIST_OPERANDS:
            S.query(f"q-{op.lower()}-{oname}", {"from": [{"collectionId": "vals"}], "where": ff("v", op, operand), "select": sel})
        S.query(f"q-{op.lower()}-scalar", {"from": [{"collectionId": "vals"}], "where": ff("v", op, i(1)), "select": sel})
    for op in ["IS_NAN", "IS_NULL", "IS_NOT_NAN", "IS_NOT_NULL"]:
        S.query(f"q-{op.lower()}", {"from": [{"collectionId": "vals"}], "where": uf("v", op), "select": sel})
    S.query("q-unary-bogus", {"from": [{"collectionId": "vals"}], "where": uf("v", "IS_EMPTY"), "select": sel})
    S.query("q-op-bogus", {"from": [{"collectionId": "vals"}], "where": ff("v", "LIKE", i(1)), "select": sel})
    S.query("q-op-unspecified", {"from": [{"collectionId": "vals"}], "where": ff("v", "OPERATOR_UNSPECIFIED", i(1))})
    # Ordering across types.
    S.query("order-asc", {"from": [{"collectionId": "vals"}], "orderBy": [order("v")], "select": sel})
    S.query("order-desc", {"from": [{"collectionId": "vals"}], "orderBy": [order("v", "DESCENDING")], "select": sel})
    S.query("order-asc-limit", {"from": [{"collectionId": "vals"}], "orderBy": [order("v")], "limit": 5, "select": sel})
    S.query("order-desc-offset", {"from": [{"collectionId": "vals"}], "orderBy": [order("v", "DESCENDING")], "offset": 30,
                                  "select": sel})
    S.query("order-name-desc", {"from": [{"collectionId": "vals"}], "orderBy": [order("__name__", "DESCENDING")], "select": sel})
    S.query("order-key", {"from": [{"collectionId": "vals"}], "orderBy": [order("k")], "select": sel, "limit": 8})
    S.query("order-direction-bogus", {"from": [{"collectionId": "vals"}], "orderBy": [order("v", "UP")]})
    S.query("order-direction-unspecified", {"from": [{"collectionId": "vals"}], "orderBy": [{"field": {"fieldPath": "k"}}],
                                            "select": sel, "limit": 3})
    # Cursors with mixed types.
    cursors = [("int1", [i(1)]), ("dbl-half", [d(0.5)]), ("str", [s("a")]), ("null", [NULL]), ("nan", [d("NaN")]),
               ("true", [TRUE]), ("ts", [ts("1999-01-01T00:00:00Z")]), ("map", [mp()]), ("arr", [arr(i(1))]),
               ("ref", [ref("vals/m")])]
    for cname, vals in cursors:
        for kind, before in [("startAt", True), ("startAfter", False), ("endAt", False), ("endBefore", True)]:
            key = "startAt" if kind.startswith("start") else "endAt"
            S.query(f"cursor-{kind}-{cname}", {"from": [{"collectionId": "vals"}], "orderBy": [order("v")],
                                                key: {"values": vals, "before": before}, "select": sel})
    S.query("cursor-desc-start", {"from": [{"collectionId": "vals"}], "orderBy": [order("v", "DESCENDING")],
                                  "startAt": {"values": [i(1)], "before": True}, "select": sel})
    S.query("cursor-name", {"from": [{"collectionId": "vals"}], "orderBy": [order("__name__")],
                            "startAt": {"values": [ref("vals/m")]}, "select": sel})
    S.query("cursor-name-string", {"from": [{"collectionId": "vals"}], "orderBy": [order("__name__")],
                                   "startAt": {"values": [s("m")]}, "select": sel})
    S.query("cursor-name-other-collection", {"from": [{"collectionId": "vals"}], "orderBy": [order("__name__")],
                                             "startAt": {"values": [ref("other/m")]}, "select": sel})
    S.query("cursor-too-many", {"from": [{"collectionId": "vals"}], "orderBy": [order("v")],
                                "startAt": {"values": [i(1), ref("vals/intone"), i(3)]}, "select": sel})
    S.query("cursor-two-values", {"from": [{"collectionId": "vals"}], "orderBy": [order("v")],
                                  "startAt": {"values": [i(1), ref("vals/intone")], "before": True}, "select": sel})
    S.query("cursor-implicit-name", {"from": [{"collectionId": "vals"}], "where": ff("v", "GREATER_THAN", i(0)),
                                     "startAt": {"values": [d(1.0)], "before": False}, "select": sel})
    S.query("cursor-empty-values", {"from": [{"collectionId": "vals"}], "orderBy": [order("v")],
                                    "startAt": {"values": []}, "select": sel})
    S.query("cursor-no-order", {"from": [{"collectionId": "vals"}], "startAt": {"values": [ref("vals/m")]}, "select": sel})


def queries(S):
    """Query shapes: composite and OR filters, projections, limits, collection groups, their errors."""
    people = [("ann", 30, "ny", ["a", "b"]), ("bob", 25, "sf", ["b"]), ("cid", 35, "ny", []), ("dee", 25, "la", ["c", "a"]),
              ("eve", 40, "sf", ["a"]), ("fay", 30, "la", ["b", "c"])]
    S.commit("people-commit", [update(f"people/{n}", {"age": i(a), "city": s(c), "tags": arr(*[s(t) for t in tags]),
                                                       "nested": mp(age=i(a))}) for n, a, c, tags in people]
             + [update("people/ann/pets/rex", {"kind": s("dog")}), update("people/bob/pets/tom", {"kind": s("cat")}),
                update("shelter/one/pets/max", {"kind": s("dog")}), update("people/eve/friends/ann", {"age": i(30)})])
    P = {"from": [{"collectionId": "people"}]}

    def q(name, **extra):
        body = dict(P)
        body.update(extra)
        S.query(name, body)
    q("all")
    q("eq-and-range", where=comp("AND", ff("city", "EQUAL", s("ny")), ff("age", "GREATER_THAN", i(29))))
    q("or-simple", where=comp("OR", ff("city", "EQUAL", s("ny")), ff("age", "EQUAL", i(25))))
    q("or-nested-and", where=comp("OR", comp("AND", ff("city", "EQUAL", s("sf")), ff("age", "GREATER_THAN", i(30))),
                                  ff("tags", "ARRAY_CONTAINS", s("c"))))
    q("and-nested-or", where=comp("AND", ff("age", "GREATER_THAN_OR_EQUAL", i(30)),
                                  comp("OR", ff("city", "EQUAL", s("la")), ff("city", "EQUAL", s("ny")))))
    q("or-single", where=comp("OR", ff("age", "EQUAL", i(40))))
    q("and-empty", where=comp("AND"))
    q("or-empty", where=comp("OR"))
    q("composite-bogus-op", where=comp("XOR", ff("age", "EQUAL", i(40))))
    q("two-inequalities", where=comp("AND", ff("age", "GREATER_THAN", i(25)), ff("city", "LESS_THAN", s("sf"))))
    q("inequality-order-other", where=ff("age", "GREATER_THAN", i(25)), orderBy=[order("city")])
    q("inequality-order-same-desc", where=ff("age", "GREATER_THAN", i(25)), orderBy=[order("age", "DESCENDING")])
    q("not-equal-order", where=ff("city", "NOT_EQUAL", s("ny")), orderBy=[order("age")])
    q("in-and-array-contains-any", where=comp("AND", ff("city", "IN", arr(s("ny"), s("sf"))),
                                              ff("tags", "ARRAY_CONTAINS_ANY", arr(s("a")))))
    q("two-array-contains", where=comp("AND", ff("tags", "ARRAY_CONTAINS", s("a")), ff("tags", "ARRAY_CONTAINS", s("b"))))
    q("two-not-in", where=comp("AND", ff("city", "NOT_IN", arr(s("ny"))), ff("age", "NOT_IN", arr(i(25)))))
    q("not-in-and-not-equal", where=comp("AND", ff("city", "NOT_IN", arr(s("ny"))), ff("age", "NOT_EQUAL", i(25))))
    q("in-31", where=ff("age", "IN", arr(*[i(k) for k in range(31)])))
    q("in-30", where=ff("age", "IN", arr(*[i(k) for k in range(30)])))
    q("not-in-11", where=ff("age", "NOT_IN", arr(*[i(k) for k in range(11)])))
    q("not-in-null", where=ff("age", "NOT_IN", arr(NULL)))
    q("in-empty", where=ff("age", "IN", arr()))
    q("array-contains-any-31", where=ff("tags", "ARRAY_CONTAINS_ANY", arr(*[i(k) for k in range(31)])))
    q("in-duplicates", where=ff("age", "IN", arr(i(25), i(25))))
    q("nested-field", where=ff("nested.age", "EQUAL", i(30)))
    q("quoted-field", where=ff("`age`", "EQUAL", i(30)))
    q("bad-field-path", where=ff("age.", "EQUAL", i(30)))
    q("name-equal", where=ff("__name__", "EQUAL", ref("people/bob")))
    q("name-equal-string", where=ff("__name__", "EQUAL", s("bob")))
    q("name-in", where=ff("__name__", "IN", arr(ref("people/bob"), ref("people/eve"))))
    q("name-greater", where=ff("__name__", "GREATER_THAN", ref("people/cid")))
    q("name-other-collection", where=ff("__name__", "EQUAL", ref("other/bob")))
    q("name-array-contains", where=ff("__name__", "ARRAY_CONTAINS", ref("people/bob")))
    q("name-is-null", where=uf("__name__", "IS_NULL"))
    q("select-fields", select={"fields": [{"fieldPath": "age"}, {"fieldPath": "nested.age"}]}, limit=2)
    q("select-empty", select={"fields": []}, limit=2)
    q("select-name", select={"fields": [{"fieldPath": "__name__"}]}, limit=2)
    q("select-bad", select={"fields": [{"fieldPath": "a..b"}]})
    q("limit-zero", limit=0)
    q("limit-negative", limit=-1)
    q("limit-object", limit={"value": 2})
    q("limit-string", limit="2")
    q("offset-negative", offset=-1)
    q("offset-beyond", offset=100)
    q("offset-limit", offset=2, limit=2, orderBy=[order("age"), order("__name__", "DESCENDING")])
    q("order-twice-same", orderBy=[order("age"), order("age")])
    q("order-name-then-field", orderBy=[order("__name__"), order("age")])
    q("order-missing-field", orderBy=[order("missing")])
    q("order-bad-path", orderBy=[order("a..b")])
    # Reserved names (__.*__) in the fields a query names: refused in filters, orders, projections
    # and aggregations; `__type__` below the top level only where the query reads a value there.
    q("where-reserved-nested", where=ff("a.__x__.b", "EQUAL", i(1)))
    q("where-reserved-key", where=uf("a.__key__", "IS_NULL"))
    q("where-reserved-type", where=ff("__type__", "EQUAL", i(1)))
    q("where-name-nested", where=ff("a.__name__", "EQUAL", i(1)))
    q("order-reserved-id", orderBy=[order("`__id5__`")])
    q("order-type-nested", orderBy=[order("a.__type__")])
    q("select-reserved", select={"fields": [{"fieldPath": "name"}, {"fieldPath": "a.__x__"}]})
    q("select-type-nested", select={"fields": [{"fieldPath": "a.__type__"}]})
    S.agg("agg-sum-reserved", {"from": [{"collectionId": "people"}]}, [{"sum": {"field": {"fieldPath": "m.__x__"}}}])
    q("unknown-key", bogus=1)
    q("find-nearest", findNearest={"vectorField": {"fieldPath": "v"}, "queryVector": arr(d(1.0)), "limit": 1,
                                   "distanceMeasure": "EUCLIDEAN"})
    S.query("from-empty", {"from": []})
    S.query("from-none", {})
    S.query("from-two", {"from": [{"collectionId": "people"}, {"collectionId": "vals"}]})
    S.query("from-slash", {"from": [{"collectionId": "a/b"}]})
    S.query("from-reserved", {"from": [{"collectionId": "__x__"}]})
    S.query("from-empty-id-descendants", {"from": [{"allDescendants": True}]})
    S.query("from-empty-id-descendants-filter", {"from": [{"allDescendants": True}], "where": ff("kind", "EQUAL", s("dog"))})
    S.query("from-empty-id-descendants-name", {"from": [{"allDescendants": True}],
                                               "where": ff("__name__", "GREATER_THAN", ref("people/bob"))})
    S.query("group-pets", {"from": [{"collectionId": "pets", "allDescendants": True}]})
    S.query("group-pets-filter", {"from": [{"collectionId": "pets", "allDescendants": True}], "where": ff("kind", "EQUAL", s("dog"))})
    S.query("group-pets-under-people", {"from": [{"collectionId": "pets", "allDescendants": True}]}, parent="/people")
    S.query("group-under-doc", {"from": [{"collectionId": "pets", "allDescendants": True}]}, parent="/people/ann")
    S.query("sub-pets", {"from": [{"collectionId": "pets"}]}, parent="/people/ann")
    S.query("parent-collection", {"from": [{"collectionId": "pets"}]}, parent="/people")
    S.query("parent-missing-doc", {"from": [{"collectionId": "pets"}]}, parent="/people/zed")
    S.query("no-structured-query", None)
    S.add("run-query-unknown-field", "POST", ":runQuery", b={"structuredQuery": P, "bogus": 1})
    S.add("run-query-bad-json", "POST", ":runQuery", raw="{")
    S.add("run-query-readtime", "POST", ":runQuery", b={"structuredQuery": P, "readTime": "2001-01-01T00:00:00Z"})
    S.add("run-query-readtime-bad", "POST", ":runQuery", b={"structuredQuery": P, "readTime": "x"})
    S.add("run-query-explain", "POST", ":runQuery", b={"structuredQuery": P, "explainOptions": {}})
    S.add("run-query-other-project", "POST",
          "^/v1/projects/other/databases/(default)/documents:runQuery", b={"structuredQuery": P})


def aggregations(S):
    S.commit("agg-commit", [update("nums/a", {"n": i(1), "x": d(1.5)}), update("nums/b", {"n": i(2), "x": s("s")}),
                            update("nums/c", {"n": d(2.5), "x": d("NaN")}), update("nums/d", {"x": i(4)}),
                            update("nums/e", {"n": i(9223372036854775807)})])
    Q = {"from": [{"collectionId": "nums"}]}
    S.agg("agg-count", Q, [{"count": {}}])
    S.agg("agg-count-alias", Q, [{"alias": "total", "count": {}}])
    S.agg("agg-count-upto", Q, [{"count": {"upTo": "2"}}])
    S.agg("agg-count-upto-zero", Q, [{"count": {"upTo": "0"}}])
    S.agg("agg-count-upto-negative", Q, [{"count": {"upTo": "-1"}}])
    S.agg("agg-sum-int-overflow", Q, [{"sum": {"field": {"fieldPath": "n"}}}])
    S.agg("agg-sum-mixed", {"from": [{"collectionId": "nums"}], "where": ff("n", "LESS_THAN", i(3))},
          [{"sum": {"field": {"fieldPath": "n"}}}])
    S.agg("agg-sum-ints", {"from": [{"collectionId": "nums"}], "where": ff("n", "IN", arr(i(1), i(2)))},
          [{"sum": {"field": {"fieldPath": "n"}}}])
    S.agg("agg-avg", {"from": [{"collectionId": "nums"}], "where": ff("n", "LESS_THAN", i(3))},
          [{"avg": {"field": {"fieldPath": "n"}}}])
    S.agg("agg-sum-nan", Q, [{"sum": {"field": {"fieldPath": "x"}}}])
    S.agg("agg-avg-nan", Q, [{"avg": {"field": {"fieldPath": "x"}}}])
    S.agg("agg-avg-empty", {"from": [{"collectionId": "nothing"}]}, [{"avg": {"field": {"fieldPath": "x"}}}])
    S.agg("agg-sum-empty", {"from": [{"collectionId": "nothing"}]}, [{"sum": {"field": {"fieldPath": "x"}}}])
    S.agg("agg-count-empty", {"from": [{"collectionId": "nothing"}]}, [{"count": {}}])
    S.agg("agg-three", Q, [{"alias": "c", "count": {}}, {"alias": "s", "sum": {"field": {"fieldPath": "n"}}},
                           {"alias": "a", "avg": {"field": {"fieldPath": "n"}}}])
    S.agg("agg-six", Q, [{"alias": f"a{k}", "count": {}} for k in range(6)])
    S.agg("agg-five", Q, [{"alias": f"a{k}", "count": {}} for k in range(5)])
    S.agg("agg-duplicate-alias", Q, [{"alias": "x", "count": {}}, {"alias": "x", "count": {}}])
    S.agg("agg-none", Q, [])
    S.agg("agg-two-kinds", Q, [{"count": {}, "sum": {"field": {"fieldPath": "n"}}}])
    S.agg("agg-no-kind", Q, [{"alias": "x"}])
    S.agg("agg-sum-no-field", Q, [{"sum": {}}])
    S.agg("agg-bad-alias", Q, [{"alias": "1bad", "count": {}}])
    S.agg("agg-alias-dotted", Q, [{"alias": "a.b", "count": {}}])
    S.agg("agg-with-limit", dict(Q, limit=2), [{"count": {}}])
    S.agg("agg-with-order", dict(Q, orderBy=[order("n")]), [{"count": {}}])
    S.agg("agg-with-select", dict(Q, select={"fields": [{"fieldPath": "n"}]}), [{"count": {}}])
    S.agg("agg-with-cursor", dict(Q, orderBy=[order("n")], startAt={"values": [i(2)]}), [{"count": {}}])
    S.agg("agg-sum-name", Q, [{"sum": {"field": {"fieldPath": "__name__"}}}])
    S.agg("agg-group", {"from": [{"collectionId": "pets", "allDescendants": True}]}, [{"count": {}}])
    S.add("agg-missing-query", "POST", ":runAggregationQuery", b={})
    S.add("agg-missing-structured", "POST", ":runAggregationQuery",
          b={"structuredAggregationQuery": {"aggregations": [{"count": {}}]}})
    S.add("agg-unknown-field", "POST", ":runAggregationQuery",
          b={"structuredAggregationQuery": {"structuredQuery": Q, "aggregations": [{"count": {}}]}, "x": 1})


def writes(S):
    """Commit, transforms, batchWrite."""
    S.commit("commit-empty", [])
    S.commit("commit-no-writes", None)
    S.add("commit-body-empty", "POST", ":commit", b={})
    S.commit("commit-two", [update("w/a", {"n": i(1)}), update("w/b", {"n": i(2)})])
    S.commit("commit-same-doc-twice", [update("w/a", {"n": i(3)}), update("w/a", {"m": i(4)},
                                                                           updateMask={"fieldPaths": ["m"]})])
    S.add("commit-same-doc-read", p="/w/a")
    S.commit("commit-delete-and-update", [{"delete": f"{N}/w/b"}, update("w/b", {"z": TRUE})])
    S.commit("commit-exists-false", [update("w/a", {}, currentDocument={"exists": False})])
    S.commit("commit-exists-true-missing", [update("w/zz", {}, currentDocument={"exists": True})])
    S.commit("commit-delete-exists-true", [{"delete": f"{N}/w/zz", "currentDocument": {"exists": True}}])
    S.commit("commit-update-and-delete-one", [{"update": {"name": f"{N}/w/a", "fields": {}}, "delete": f"{N}/w/a"}])
    S.commit("commit-no-operation", [{"currentDocument": {"exists": True}}])
    S.commit("commit-other-project", [{"update": {"name": "projects/other/databases/(default)/documents/w/a", "fields": {}}}])
    S.commit("commit-other-database", [{"update": {"name": "projects/demo-diff/databases/x/documents/w/a", "fields": {}}}])
    S.commit("commit-bad-name", [{"update": {"name": "w/a", "fields": {}}}])
    S.commit("commit-collection-name", [{"update": {"name": f"{N}/w", "fields": {}}}])
    S.commit("commit-unknown-write-key", [{"update": {"name": f"{N}/w/a", "fields": {}}, "bogus": 1}])
    S.commit("commit-mask-bad", [update("w/a", {}, updateMask={"fieldPaths": ["a..b"]})])
    S.commit("commit-mask-duplicates", [update("w/a", {"n": i(1)}, updateMask={"fieldPaths": ["n", "n"]})])
    S.commit("commit-mask-overlap", [update("w/a", {"n": mp(x=i(1))}, updateMask={"fieldPaths": ["n", "n.x"]})])
    S.commit("commit-mask-reserved-top", [update("w/a", {}, updateMask={"fieldPaths": ["__x__"]})])
    S.commit("commit-mask-reserved-nested", [update("w/a", {"v": i(2)}, updateMask={"fieldPaths": ["v.__type__"]})])
    S.commit("commit-mask-reserved-key", [update("w/a", {}, updateMask={"fieldPaths": ["__key__"]})])
    S.commit("commit-tx-bad", [update("w/a", {})], extra={"transaction": "bm90LWEtdHg"})
    S.commit("commit-tx-not-base64", [update("w/a", {})], extra={"transaction": "*"})
    S.commit("commit-501-writes", [update(f"w/many{k}", {"n": i(k)}) for k in range(501)])
    S.commit("commit-500-writes", [update(f"w/many{k}", {"n": i(k)}) for k in range(500)])
    S.add("commit-500-check", "POST", ":runAggregationQuery",
          b={"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "w"}]}, "aggregations": [{"count": {}}]}})

    def tf(name, doc, transforms, fields=None, **extra):
        w = update(doc, fields or {}, updateTransforms=transforms, **extra)
        if fields is None:
            w["updateMask"] = {"fieldPaths": []}
        S.commit(name, [w])
        S.add(name + "-read", p="/" + doc)
    S.commit("tf-seed", [update("tf/d", {"i": i(5), "f": d(1.5), "s": s("x"), "arr": arr(i(1), i(2), i(2), s("a")),
                                         "big": i(9223372036854775807), "neg": d(-0.0), "m": mp(k=i(1))})])
    tf("tf-inc-int", "tf/d", [{"fieldPath": "i", "increment": i(2)}])
    tf("tf-inc-double", "tf/d", [{"fieldPath": "i", "increment": d(0.5)}])
    tf("tf-inc-on-string", "tf/d", [{"fieldPath": "s", "increment": i(1)}])
    tf("tf-inc-missing", "tf/d", [{"fieldPath": "new", "increment": i(3)}])
    tf("tf-inc-overflow", "tf/d", [{"fieldPath": "big", "increment": i(1)}])
    tf("tf-inc-string-operand", "tf/d", [{"fieldPath": "i", "increment": s("1")}])
    tf("tf-max", "tf/d", [{"fieldPath": "f", "maximum": i(3)}])
    tf("tf-min", "tf/d", [{"fieldPath": "f", "minimum": d(-2.5)}])
    tf("tf-max-on-string", "tf/d", [{"fieldPath": "s", "maximum": i(3)}])
    tf("tf-min-missing", "tf/d", [{"fieldPath": "newmin", "minimum": d(0.25)}])
    tf("tf-max-negzero", "tf/d", [{"fieldPath": "neg", "maximum": i(0)}])
    tf("tf-append", "tf/d", [{"fieldPath": "arr", "appendMissingElements": {"values": [i(2), i(3), i(3)]}}])
    tf("tf-remove", "tf/d", [{"fieldPath": "arr", "removeAllFromArray": {"values": [i(2), s("zz")]}}])
    tf("tf-append-on-map", "tf/d", [{"fieldPath": "m", "appendMissingElements": {"values": [i(1)]}}])
    tf("tf-remove-missing", "tf/d", [{"fieldPath": "gone", "removeAllFromArray": {"values": [i(1)]}}])
    tf("tf-server-time", "tf/d", [{"fieldPath": "at", "setToServerValue": "REQUEST_TIME"}])
    tf("tf-server-bogus", "tf/d", [{"fieldPath": "at", "setToServerValue": "NOW"}])
    tf("tf-two-on-field", "tf/d", [{"fieldPath": "i", "increment": i(1)}, {"fieldPath": "i", "increment": i(1)}])
    tf("tf-field-and-transform", "tf/d", [{"fieldPath": "i", "increment": i(1)}], fields={"i": i(100)})
    tf("tf-nested", "tf/d", [{"fieldPath": "m.k", "increment": i(1)}, {"fieldPath": "m.new", "increment": i(1)}])
    tf("tf-parent-and-child", "tf/d", [{"fieldPath": "m", "increment": i(1)}, {"fieldPath": "m.k", "increment": i(1)}])
    tf("tf-no-kind", "tf/d", [{"fieldPath": "i"}])
    tf("tf-two-kinds", "tf/d", [{"fieldPath": "i", "increment": i(1), "maximum": i(1)}])
    tf("tf-bad-path", "tf/d", [{"fieldPath": "a..b", "increment": i(1)}])
    tf("tf-name-path", "tf/namepath", [{"fieldPath": "__name__", "increment": i(1)}])
    tf("tf-reserved-nested", "tf/reserved", [{"fieldPath": "a.__x__.b", "increment": i(1)}])
    tf("tf-reserved-quoted", "tf/reserved", [{"fieldPath": "`__id5__`", "increment": i(1)}])
    tf("tf-reserved-key", "tf/reserved", [{"fieldPath": "a.__key__", "increment": i(1)}])
    # The emulator writes these two (a field __type__, and x.__key__ for x.__name__); Firestore reserves both.
    tf("tf-reserved-top", "tf/reservedtop", [{"fieldPath": "__type__", "setToServerValue": "REQUEST_TIME"}])
    tf("tf-reserved-under-name", "tf/reservedname", [{"fieldPath": "x.__name__", "maximum": i(1)}])
    tf("tf-new-doc", "tf/new", [{"fieldPath": "c", "increment": i(1)}])
    tf("tf-exists-true-missing", "tf/none", [{"fieldPath": "c", "increment": i(1)}], currentDocument={"exists": True})
    tf("tf-append-value-form", "tf/d", [{"fieldPath": "arr", "appendMissingElements": arr(i(7))}])
    tf("tf-remove-nan-null", "tf/d", [{"fieldPath": "arr", "removeAllFromArray": {"values": [d("NaN"), NULL]}}])
    tf("tf-append-nan-null", "tf/d", [{"fieldPath": "arr", "appendMissingElements": {"values": [d("NaN"), NULL, d("NaN")]}}])
    tf("tf-append-int-double", "tf/d", [{"fieldPath": "arr", "appendMissingElements": {"values": [d(1.0), i(3)]}}])
    tf("tf-inc-nan", "tf/d", [{"fieldPath": "f", "increment": d("NaN")}])
    tf("tf-max-mixed", "tf/d", [{"fieldPath": "i", "maximum": i(1000)}, {"fieldPath": "f", "minimum": i(-3)}])
    tf("tf-append-nested-array", "tf/nested", [{"fieldPath": "arr", "appendMissingElements": {"values": [arr(i(1))]}}])
    S.commit("tf-standalone", [{"transform": {"document": f"{N}/tf/d", "fieldTransforms": [{"fieldPath": "i", "increment": i(1)}]}}])
    S.commit("tf-delete-with-transform", [{"delete": f"{N}/tf/x", "updateTransforms": [{"fieldPath": "i", "increment": i(1)}]}])
    # batchWrite: independent writes.
    S.add("bw-mixed", "POST", ":batchWrite", b={"writes": [update("bw/a", {"n": i(1)}),
                                                           update("bw/b", {}, currentDocument={"exists": True}),
                                                           {"delete": f"{N}/bw/c"},
                                                           update("bw/d", {"x": i(1)}, updateTransforms=[{"fieldPath": "c", "increment": i(1)}])]})
    S.add("bw-duplicate", "POST", ":batchWrite", b={"writes": [update("bw/a", {}), update("bw/a", {})]})
    S.add("bw-empty", "POST", ":batchWrite", b={"writes": []})
    S.add("bw-labels", "POST", ":batchWrite", b={"writes": [update("bw/e", {})], "labels": {"k": "v"}})
    S.add("bw-501", "POST", ":batchWrite", b={"writes": [update(f"bw/m{k}", {}) for k in range(501)]})
    S.add("bw-bad-value", "POST", ":batchWrite", b={"writes": [update("bw/f", {"x": {"integerValue": "z"}})]})
    S.add("bw-other-project", "POST", ":batchWrite",
          b={"writes": [{"update": {"name": "projects/other/databases/(default)/documents/bw/a", "fields": {}}}]})
    S.add("bw-unknown-field", "POST", ":batchWrite", b={"writes": [], "x": 1})


def reads_and_transactions(S):
    S.add("bg-found-missing", "POST", ":batchGet", b={"documents": [f"{N}/people/ann", f"{N}/people/zed"]})
    S.add("bg-mask", "POST", ":batchGet", b={"documents": [f"{N}/people/ann"], "mask": {"fieldPaths": ["city"]}})
    S.add("bg-duplicates", "POST", ":batchGet", b={"documents": [f"{N}/people/ann", f"{N}/people/ann"]})
    S.add("bg-empty", "POST", ":batchGet", b={"documents": []})
    S.add("bg-none", "POST", ":batchGet", b={})
    S.add("bg-other-project", "POST", ":batchGet", b={"documents": ["projects/other/databases/(default)/documents/people/ann"]})
    S.add("bg-collection", "POST", ":batchGet", b={"documents": [f"{N}/people"]})
    S.add("bg-garbage", "POST", ":batchGet", b={"documents": ["nope"]})
    S.add("bg-not-string", "POST", ":batchGet", b={"documents": [5]})
    S.add("bg-readtime-old", "POST", ":batchGet", b={"documents": [f"{N}/people/ann"], "readTime": "2001-01-01T00:00:00Z"})
    S.add("bg-tx-bad", "POST", ":batchGet", b={"documents": [f"{N}/people/ann"], "transaction": "bm90LWEtdHg"})
    S.add("bg-new-tx", "POST", ":batchGet", b={"documents": [f"{N}/people/ann", f"{N}/people/zed"],
                                               "newTransaction": {"readWrite": {}}}, save={"bgtx": "0.transaction"})
    S.add("bg-new-tx-empty", "POST", ":batchGet", b={"documents": [], "newTransaction": {"readOnly": {}}})
    S.commit("bg-new-tx-commit", [update("txd/bg", {"ok": TRUE})], extra={"transaction": "${bgtx}"})
    S.add("bg-tx-and-new", "POST", ":batchGet", b={"documents": [], "transaction": "bm90LWEtdHg",
                                                   "newTransaction": {"readWrite": {}}})
    S.add("bg-unknown-field", "POST", ":batchGet", b={"documents": [], "x": 1})
    S.add("bg-on-doc-path", "POST", "/people/ann:batchGet", b={"documents": []})
    # Transactions.
    S.add("tx-begin", "POST", ":beginTransaction", b={}, save={"tx1": "transaction"})
    S.add("tx-get", p="/people/ann", q="transaction=${tx1}")
    S.add("tx-query", "POST", ":runQuery", b={"structuredQuery": {"from": [{"collectionId": "people"}],
                                                                  "where": ff("age", "EQUAL", i(40))}, "transaction": "${tx1}"})
    S.commit("tx-commit", [update("txd/one", {"n": i(1)})], extra={"transaction": "${tx1}"})
    S.commit("tx-commit-again", [update("txd/one", {"n": i(2)})], extra={"transaction": "${tx1}"})
    S.add("tx-rollback-after-commit", "POST", ":rollback", b={"transaction": "${tx1}"})
    S.add("tx-begin-ro", "POST", ":beginTransaction", b={"options": {"readOnly": {}}}, save={"tx2": "transaction"})
    S.commit("tx-ro-write", [update("txd/two", {})], extra={"transaction": "${tx2}"})
    S.commit("tx-ro-empty-commit", [], extra={"transaction": "${tx2}"})
    S.add("tx-begin-ro-readtime", "POST", ":beginTransaction", b={"options": {"readOnly": {"readTime": "2001-01-01T00:00:00Z"}}})
    S.add("tx-begin-both", "POST", ":beginTransaction", b={"options": {"readOnly": {}, "readWrite": {}}})
    S.add("tx-begin-retry-bad", "POST", ":beginTransaction", b={"options": {"readWrite": {"retryTransaction": "bm90"}}})
    S.add("tx-begin-unknown", "POST", ":beginTransaction", b={"x": 1})
    S.add("tx-begin-3", "POST", ":beginTransaction", b={}, save={"tx3": "transaction"})
    S.add("tx-rollback", "POST", ":rollback", b={"transaction": "${tx3}"})
    S.add("tx-rollback-twice", "POST", ":rollback", b={"transaction": "${tx3}"})
    S.commit("tx-commit-after-rollback", [update("txd/three", {})], extra={"transaction": "${tx3}"})
    S.add("tx-rollback-missing", "POST", ":rollback", b={})
    S.add("tx-rollback-bad", "POST", ":rollback", b={"transaction": "bm90LWEtdHg"})
    S.add("tx-query-new", "POST", ":runQuery", b={"structuredQuery": {"from": [{"collectionId": "people"}],
                                                                      "where": ff("age", "EQUAL", i(40))},
                                                  "newTransaction": {}}, save={"tx4": "0.transaction"})
    S.add("tx-query-new-empty", "POST", ":runQuery", b={"structuredQuery": {"from": [{"collectionId": "nothing"}]},
                                                        "newTransaction": {"readOnly": {}}})
    S.commit("tx-query-new-commit", [update("txd/four", {})], extra={"transaction": "${tx4}"})
    S.add("tx-agg-new", "POST", ":runAggregationQuery",
          b={"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "people"}]}, "aggregations": [{"count": {}}]},
             "newTransaction": {"readOnly": {}}})
    S.add("tx-get-readtime", p="/people/ann", q="readTime=2001-01-01T00:00:00Z")


def listings(S):
    S.add("list-people", p="/people")
    S.add("list-page-2", p="/people", q="pageSize=2", save={"page": "nextPageToken"})
    S.add("list-page-next", p="/people", q="pageSize=2&pageToken=${page}")
    S.add("list-page-zero", p="/people", q="pageSize=0")
    S.add("list-page-negative", p="/people", q="pageSize=-1")
    S.add("list-page-text", p="/people", q="pageSize=x")
    S.add("list-token-bad", p="/people", q="pageToken=garbage")
    S.add("list-order-age", p="/people", q="orderBy=age%20desc")
    S.add("list-order-two", p="/people", q="orderBy=city,age")
    S.add("list-order-bad", p="/people", q="orderBy=age%20sideways")
    S.add("list-order-name", p="/people", q="orderBy=__name__%20desc")
    S.add("list-mask", p="/people", q="mask.fieldPaths=city&pageSize=2")
    S.add("list-show-missing", p="/people/ann/pets", q="showMissing=true")
    S.add("list-show-missing-top", p="/shelter", q="showMissing=true")
    S.add("list-show-missing-order", p="/shelter", q="showMissing=true&orderBy=age")
    S.add("list-missing-collection", p="/nothing")
    S.add("list-unknown-param", p="/people", q="bogus=1")
    S.add("list-readtime-old", p="/people", q="readTime=2001-01-01T00:00:00Z")
    S.add("list-subcollection", p="/people/ann/pets")
    S.add("list-collection-id-param", p="/people/ann", q="collectionId=pets")
    S.add("list-documents-verb", "POST", "/people:listDocuments", b={})
    S.add("lcid-root", "POST", ":listCollectionIds", b={})
    S.add("lcid-doc", "POST", "/people/ann:listCollectionIds", b={})
    S.add("lcid-missing-doc", "POST", "/shelter/one:listCollectionIds", b={})
    S.add("lcid-page", "POST", ":listCollectionIds", b={"pageSize": 2})
    S.add("lcid-on-collection", "POST", "/people:listCollectionIds", b={})
    S.add("lcid-unknown", "POST", ":listCollectionIds", b={"x": 1})
    S.add("lcid-readtime", "POST", ":listCollectionIds", b={"readTime": "2001-01-01T00:00:00Z"})
    S.add("partition", "POST", ":partitionQuery", b={"structuredQuery": {"from": [{"collectionId": "pets", "allDescendants": True}],
                                                                        "orderBy": [order("__name__")]}, "partitionCount": 2})
    S.add("partition-no-count", "POST", ":partitionQuery", b={"structuredQuery": {"from": [{"collectionId": "pets", "allDescendants": True}]}})
    S.add("partition-not-group", "POST", ":partitionQuery", b={"structuredQuery": {"from": [{"collectionId": "pets"}]},
                                                              "partitionCount": 2})


def rules(S):
    """Decisions of diff.rules for end users with unsigned tokens, and for signed-out callers."""
    S.add("r-open-create", "PATCH", "/open/a", a=None, b={"fields": {"x": i(1)}})
    S.add("r-open-read", p="/open/a", a=None)
    S.add("r-open-deep", "PATCH", "/open/a/b/c", a=None, b={"fields": {}})
    S.add("r-locked-read-owner", p="/locked/a")
    S.add("r-locked-read-user", p="/locked/a", a="alice")
    S.add("r-locked-write-user", "PATCH", "/locked/a", a="alice", b={"fields": {}})
    S.add("r-user-own-write", "PATCH", "/users/alice/notes/n1", a="alice", b={"fields": {"t": s("hi")}})
    S.add("r-user-own-read", p="/users/alice/notes/n1", a="alice")
    S.add("r-user-other-read", p="/users/alice/notes/n1", a="bob")
    S.add("r-user-signed-out-read", p="/users/alice/notes/n1", a=None)
    S.add("r-user-own-missing", p="/users/alice/notes/none", a="alice")
    S.add("r-user-other-missing", p="/users/alice/notes/none", a="bob")
    S.add("r-user-own-list", p="/users/alice/notes", a="alice")
    S.add("r-user-other-list", p="/users/alice/notes", a="bob")
    S.add("r-user-query-own", "POST", "/users/alice:runQuery", a="alice", b={"structuredQuery": {"from": [{"collectionId": "notes"}]}})
    S.add("r-user-query-other", "POST", "/users/alice:runQuery", a="bob", b={"structuredQuery": {"from": [{"collectionId": "notes"}]}})
    S.add("r-user-group-query", "POST", ":runQuery", a="alice",
          b={"structuredQuery": {"from": [{"collectionId": "notes", "allDescendants": True}]}})
    S.add("r-user-delete-other", "DELETE", "/users/alice/notes/n1", a="bob")
    S.add("r-user-batchget-mixed", "POST", ":batchGet", a="alice",
          b={"documents": [f"{N}/users/alice/notes/n1", f"{N}/users/bob/notes/n1"]})
    S.add("r-user-batchget-own", "POST", ":batchGet", a="alice", b={"documents": [f"{N}/users/alice/notes/n1"]})
    S.commit("r-user-commit-mixed", [update("users/alice/notes/n2", {}), update("users/bob/notes/n2", {})], a="alice")
    S.add("r-bad-token", p="/open/a", a=None, q="")
    S.add("r-post-create-ok", "PATCH", "/posts/p1", a="alice", q="currentDocument.exists=false",
          b={"fields": {"owner": s("alice"), "title": s("t"), "public": TRUE}})
    S.add("r-post-create-extra-key", "PATCH", "/posts/p2", a="alice", q="currentDocument.exists=false",
          b={"fields": {"owner": s("alice"), "other": TRUE}})
    S.add("r-post-create-wrong-owner", "PATCH", "/posts/p3", a="alice", b={"fields": {"owner": s("bob")}})
    S.add("r-post-create-exists", "PATCH", "/posts/p1", a="bob", q="currentDocument.exists=false",
          b={"fields": {"owner": s("bob")}})
    S.add("r-post-create-exists-owner", "PATCH", "/posts/p1", a="alice", q="currentDocument.exists=false",
          b={"fields": {"owner": s("alice")}})
    S.add("r-post-update-owner", "PATCH", "/posts/p1", a="alice", q="updateMask.fieldPaths=title",
          b={"fields": {"title": s("t2")}})
    S.add("r-post-update-other", "PATCH", "/posts/p1", a="bob", q="updateMask.fieldPaths=title", b={"fields": {"title": s("x")}})
    S.add("r-post-update-steal", "PATCH", "/posts/p1", a="alice", b={"fields": {"owner": s("bob")}})
    S.add("r-post-update-missing-doc", "PATCH", "/posts/p9", a="alice", q="currentDocument.exists=true",
          b={"fields": {"owner": s("alice")}})
    S.add("r-post-get-missing", p="/posts/none", a=None)
    S.add("r-post-delete-user", "DELETE", "/posts/p1", a="alice")
    S.add("r-post-delete-admin", "DELETE", "/posts/p1", a="root+admin")
    S.add("r-post-delete-missing-admin", "DELETE", "/posts/none", a="root+admin")
    S.commit("r-post-seed", [update("posts/pub", {"owner": s("x"), "public": TRUE, "n": i(1)}),
                             update("posts/priv", {"owner": s("x"), "public": FALSE, "n": i(2)})])
    S.query("r-post-list-all", {"from": [{"collectionId": "posts"}]}, a="alice")
    S.query("r-post-list-public", {"from": [{"collectionId": "posts"}], "where": ff("public", "EQUAL", TRUE)}, a="alice")
    S.query("r-post-list-public-signed-out", {"from": [{"collectionId": "posts"}], "where": ff("public", "EQUAL", TRUE)}, a=None)
    S.query("r-post-list-public-in", {"from": [{"collectionId": "posts"}], "where": ff("public", "IN", arr(TRUE))}, a="alice")
    S.query("r-post-list-not-false", {"from": [{"collectionId": "posts"}], "where": ff("public", "NOT_EQUAL", FALSE)}, a="alice")
    S.agg("r-post-count-public", {"from": [{"collectionId": "posts"}], "where": ff("public", "EQUAL", TRUE)}, [{"count": {}}], a="alice")
    S.agg("r-post-count-all", {"from": [{"collectionId": "posts"}]}, [{"count": {}}], a="alice")
    S.add("r-post-list-rest", p="/posts", a="alice")
    S.add("r-typed-ok", "PATCH", "/typed/a", a=None, b={"fields": {"n": i(1), "s": s("ab")}})
    S.add("r-typed-negative", "PATCH", "/typed/b", a=None, b={"fields": {"n": i(-1), "s": s("ab")}})
    S.add("r-typed-double", "PATCH", "/typed/c", a=None, b={"fields": {"n": d(1.0), "s": s("ab")}})
    S.add("r-typed-long-string", "PATCH", "/typed/d", a=None, b={"fields": {"n": i(1), "s": s("abcdef")}})
    S.add("r-typed-missing-field", "PATCH", "/typed/e", a=None, b={"fields": {"n": i(1)}})
    S.add("r-typed-transform", "PATCH", "/typed/a", a=None, q="updateMask.fieldPaths=s", b={"fields": {"s": s("abcde")}})
    S.commit("r-typed-increment", [update("typed/a", {}, updateMask={"fieldPaths": []},
                                          updateTransforms=[{"fieldPath": "n", "increment": i(-5)}])], a=None)
    S.add("r-typed-read-signed-out", p="/typed/a", a=None)
    S.add("r-typed-read-user", p="/typed/a", a="carol")
    S.add("r-unmatched-path", p="/elsewhere/a", a="alice")
    S.add("r-unmatched-write", "PATCH", "/elsewhere/a", a="alice", b={"fields": {}})
    S.add("r-tx-user", "POST", ":beginTransaction", a="alice", b={})
    S.add("r-lcid-user", "POST", ":listCollectionIds", a="alice", b={})
    S.add("r-bad-auth-scheme", p="/open/a", a=None, raw_auth="Basic abc")


def more(S):
    """Nested fields, multi-field orderings and cursors, masks and transforms on nested paths,
    rules that read other documents."""
    S.commit("nest-commit", [update(f"nest/{n}", {"m": mp(a=v, b=i(k)), "k": i(k % 3), "s": s(n)})
                             for k, (n, v) in enumerate([("n1", i(3)), ("n2", s("x")), ("n3", d(2.5)), ("n4", NULL),
                                                         ("n5", arr(i(1))), ("n6", mp(z=i(1))), ("n7", TRUE), ("n8", i(-1))])])
    N2 = {"from": [{"collectionId": "nest"}], "select": {"fields": [{"fieldPath": "s"}]}}

    def q(name, **extra):
        body = dict(N2)
        body.update(extra)
        S.query(name, body)
    q("nest-order-nested", orderBy=[order("m.a")])
    q("nest-order-nested-desc", orderBy=[order("m.a", "DESCENDING")])
    q("nest-order-two-mixed", orderBy=[order("k", "DESCENDING"), order("m.b")])
    q("nest-order-two-cursor", orderBy=[order("k"), order("m.b", "DESCENDING")], startAt={"values": [i(1), i(4)], "before": False})
    q("nest-order-three-cursor", orderBy=[order("k"), order("s"), order("__name__")],
      startAt={"values": [i(0), s("n4"), ref("nest/n4")], "before": True}, limit=3)
    q("nest-endat-two", orderBy=[order("k"), order("s")], endAt={"values": [i(1), s("n5")], "before": False})
    q("nest-eq-nested", where=ff("m.a", "EQUAL", i(3)))
    q("nest-range-nested", where=ff("m.a", "GREATER_THAN_OR_EQUAL", d(2.5)))
    q("nest-range-nested-str", where=ff("m.a", "LESS_THAN", s("y")))
    q("nest-in-nested", where=ff("m.a", "IN", arr(i(3), s("x"), TRUE)))
    q("nest-not-in-nested", where=ff("m.a", "NOT_IN", arr(i(3), s("x"))))
    q("nest-neq-nested", where=ff("m.a", "NOT_EQUAL", d(2.5)))
    q("nest-map-eq", where=ff("m.a", "EQUAL", mp(z=i(1))))
    q("nest-map-gt", where=ff("m.a", "GREATER_THAN", mp()))
    q("nest-array-eq", where=ff("m.a", "EQUAL", arr(i(1))))
    q("nest-array-contains-nested", where=ff("m.a", "ARRAY_CONTAINS", i(1)))
    q("nest-is-null-nested", where=uf("m.a", "IS_NULL"))
    q("nest-is-not-null-nested", where=uf("m.a", "IS_NOT_NULL"))
    q("nest-or-nested", where=comp("OR", ff("m.a", "EQUAL", i(3)), ff("m.b", "EQUAL", i(7))))
    q("nest-and-or-mixed", where=comp("AND", ff("k", "EQUAL", i(1)), comp("OR", ff("m.a", "EQUAL", s("x")), ff("m.a", "EQUAL", i(-1)))))
    q("nest-order-map-field", orderBy=[order("m")], limit=4)
    q("nest-select-nested", select={"fields": [{"fieldPath": "m.b"}]}, limit=2)
    q("nest-select-missing", select={"fields": [{"fieldPath": "zzz"}]}, limit=2)
    S.agg("nest-sum-nested", {"from": [{"collectionId": "nest"}]}, [{"sum": {"field": {"fieldPath": "m.a"}}}])
    S.agg("nest-avg-nested", {"from": [{"collectionId": "nest"}]}, [{"avg": {"field": {"fieldPath": "m.b"}}}])
    S.agg("nest-count-filter", {"from": [{"collectionId": "nest"}], "where": ff("k", "EQUAL", i(0))},
          [{"count": {}}, {"alias": "s", "sum": {"field": {"fieldPath": "k"}}}])
    # Masks and transforms on nested paths.
    S.commit("nest-mask-nested", [update("nest/n1", {"m": mp(a=i(9))}, updateMask={"fieldPaths": ["m.a", "m.c"]})])
    S.add("nest-mask-nested-read", p="/nest/n1")
    S.commit("nest-mask-quoted", [update("nest/n1", {"odd key": mp(**{"x.y": i(1)})}, updateMask={"fieldPaths": ["`odd key`.`x.y`"]})])
    S.add("nest-mask-quoted-read", p="/nest/n1", q="mask.fieldPaths=%60odd%20key%60")
    S.commit("nest-transform-deep", [update("nest/n1", {}, updateMask={"fieldPaths": []},
                                            updateTransforms=[{"fieldPath": "m.deep.er", "increment": i(2)},
                                                              {"fieldPath": "m.b", "maximum": d(10.5)}])])
    S.add("nest-transform-deep-read", p="/nest/n1")
    S.commit("nest-transform-on-array-field", [update("nest/n5", {}, updateMask={"fieldPaths": []},
                                                      updateTransforms=[{"fieldPath": "m.a", "increment": i(1)}])])
    S.add("nest-transform-on-array-read", p="/nest/n5")
    S.commit("nest-mask-and-transform", [update("nest/n2", {"m": mp(b=i(100))}, updateMask={"fieldPaths": ["m.b"]},
                                                updateTransforms=[{"fieldPath": "m.b", "increment": i(1)}])])
    S.add("nest-mask-and-transform-read", p="/nest/n2")
    S.add("nest-patch-mask-parent-and-child", "PATCH", "/nest/n3",
          q="updateMask.fieldPaths=m&updateMask.fieldPaths=m.a", b={"fields": {"m": mp(a=i(1))}})
    S.add("nest-get-mask-nested", p="/nest/n3", q="mask.fieldPaths=m.a&mask.fieldPaths=s")
    S.add("nest-list-mask", p="/nest", q="mask.fieldPaths=k&pageSize=3&orderBy=k%20desc,s")
    S.add("nest-list-order-nested", p="/nest", q="orderBy=m.b%20desc&mask.fieldPaths=s")
    S.add("nest-batchget-mask", "POST", ":batchGet",
          b={"documents": [f"{N}/nest/n1", f"{N}/nest/n9", f"{N}/nest/n2"], "mask": {"fieldPaths": ["m.b", "nothing"]}})
    # Rules reading other documents (get/exists), and request.query.
    S.commit("rules2-seed", [update("open/cfg", {"allowed": arr(s("carol"))})])
    for name, body in [("rq-limit-ok", {"from": [{"collectionId": "users"}], "limit": 5}),
                       ("rq-no-limit", {"from": [{"collectionId": "users"}]})]:
        S.query(name, body, parent="/users/carol", a="carol")
    S.add("r-other-user-doc-exists", p="/users/alice/notes/n1", a="alice", q="mask.fieldPaths=t")
    S.add("r-signed-in-no-uid-match", "PATCH", "/users/dave/x/y", a="erin", b={"fields": {}})
    S.add("r-admin-claim-delete", "DELETE", "/posts/pub", a="root+admin")
    S.add("r-admin-claim-create", "PATCH", "/posts/admincreated", a="root+admin", b={"fields": {"owner": s("root")}})
    S.add("r-typed-update-ok", "PATCH", "/typed/a", a=None, q="updateMask.fieldPaths=n", b={"fields": {"n": i(7)}})
    S.add("r-typed-update-read", p="/typed/a", a="carol")
    S.add("r-batchwrite-user", "POST", ":batchWrite", a="alice",
          b={"writes": [update("users/alice/bw/1", {"n": i(1)}), update("users/bob/bw/1", {"n": i(1)}),
                        update("open/bw1", {"n": i(1)})]})
    S.add("r-tx-user-commit", "POST", ":commit", a="alice",
          b={"writes": [update("users/alice/tx/1", {}), {"delete": f"{N}/open/cfg"}]})
    S.add("r-lcid-user-doc", "POST", "/users/alice:listCollectionIds", a="alice", b={})
    S.add("r-list-open-user", p="/open", a="alice", q="mask.fieldPaths=x")
    S.add("r-query-open-signed-out", "POST", ":runQuery", a=None,
          b={"structuredQuery": {"from": [{"collectionId": "open"}], "select": {"fields": [{"fieldPath": "__name__"}]}}})
    S.add("r-agg-open-signed-out", "POST", ":runAggregationQuery", a=None,
          b={"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "open"}]}, "aggregations": [{"count": {}}]}})
    S.add("r-group-open", "POST", ":runQuery", a="alice",
          b={"structuredQuery": {"from": [{"collectionId": "b", "allDescendants": True}]}})


def walks(S):
    """Equality filters with an order on another field and a limit (Hearth walks the order's index
    and checks the equality in the index): ties, missing fields, mixed types, cursors, offsets."""
    statuses = [s("ready"), s("pending"), s("ready"), i(1), d(1.0), NULL, None, s("ready")]
    ns = [i(3), i(3), d(3.0), s("x"), NULL, d("NaN"), i(-1), d(2.5), TRUE, ts("2001-01-01T00:00:00Z"), mp(a=i(1)),
          arr(i(1)), None, i(10), i(10), d(-0.0), i(0), s("a")]
    writes = []
    for k in range(44):
        fields = {"g": i(k % 3), "tags": arr(s(f"t{k % 4}"), s("all"))}
        if statuses[k % len(statuses)] is not None:
            fields["st"] = statuses[k % len(statuses)]
        if ns[(k * 7) % len(ns)] is not None:
            fields["n"] = ns[(k * 7) % len(ns)]
        writes.append(update(f"walk/w{k:02d}", fields))
    S.commit("walk-commit", writes)
    S.commit("walk-user-commit", [update(f"users/carol/files/f{k:02d}", {"st": s("ready" if k % 2 else "pending"), "n": i(k % 5)})
                                  for k in range(12)])
    sel = {"fields": [{"fieldPath": "n"}]}
    W = {"from": [{"collectionId": "walk"}], "select": sel}
    ready = ff("st", "EQUAL", s("ready"))

    def q(name, **extra):
        body = dict(W)
        body.update(extra)
        S.query(name, body)
    for direction in ("DESCENDING", "ASCENDING"):
        dn = direction[:3].lower()
        q(f"walk-eq-{dn}-limit", where=ready, orderBy=[order("n", direction)], limit=5)
        q(f"walk-eq-{dn}-offset", where=ready, orderBy=[order("n", direction)], limit=4, offset=3)
        q(f"walk-eq-{dn}-limit-all", where=ready, orderBy=[order("n", direction)], limit=100)
        q(f"walk-eq-num-{dn}", where=ff("st", "EQUAL", i(1)), orderBy=[order("n", direction)], limit=3)
        q(f"walk-eq-dbl-{dn}", where=ff("st", "EQUAL", d(1.0)), orderBy=[order("n", direction)], limit=3)
        q(f"walk-null-{dn}", where=uf("st", "IS_NULL"), orderBy=[order("n", direction)], limit=4)
        q(f"walk-contains-{dn}", where=ff("tags", "ARRAY_CONTAINS", s("t1")), orderBy=[order("n", direction)], limit=4)
        q(f"walk-in-one-{dn}", where=ff("st", "IN", arr(s("ready"))), orderBy=[order("n", direction)], limit=3)
        q(f"walk-in-two-{dn}", where=ff("st", "IN", arr(s("ready"), i(1))), orderBy=[order("n", direction)], limit=6)
        q(f"walk-two-eq-{dn}", where=comp("AND", ready, ff("g", "EQUAL", i(1))), orderBy=[order("n", direction)], limit=3)
        q(f"walk-eq-range-{dn}", where=comp("AND", ready, ff("n", "GREATER_THAN", i(0))), orderBy=[order("n", direction)], limit=3)
        q(f"walk-startat-{dn}", where=ready, orderBy=[order("n", direction)], startAt={"values": [i(3)], "before": True}, limit=4)
        # A cursor on the field and then on __name__, both ordered explicitly (a cursor may hold as many
        # values as the query has orders): the walk resumes inside a tie on n.
        q(f"walk-startafter-name-{dn}", where=ready, orderBy=[order("n", direction), order("__name__", direction)],
          startAt={"values": [i(3), ref("walk/w14")], "before": False}, limit=3)
        q(f"walk-endbefore-{dn}", where=ready, orderBy=[order("n", direction)], endAt={"values": [s("x")], "before": True}, limit=10)
        q(f"walk-endat-name-{dn}", where=ready, orderBy=[order("n", direction), order("__name__", direction)],
          endAt={"values": [i(10), ref("walk/w02")], "before": False}, limit=20)
        # The same two values with n the only explicit order: the implicit __name__ order does not count.
        q(f"walk-cursor-too-many-{dn}", where=ready, orderBy=[order("n", direction)],
          startAt={"values": [i(3), ref("walk/w14")], "before": False}, limit=3)
        q(f"walk-none-{dn}", where=ff("st", "EQUAL", s("zzz")), orderBy=[order("n", direction)], limit=3)
        q(f"walk-rare-{dn}", where=ff("g", "EQUAL", i(2)), orderBy=[order("n", direction)], limit=2)
        q(f"walk-name-second-{dn}", where=ready, orderBy=[order("n", direction), order("__name__")], limit=5)
        S.query(f"walk-group-{dn}", {"from": [{"collectionId": "walk", "allDescendants": True}], "where": ready,
                                     "orderBy": [order("n", direction)], "limit": 5, "select": sel})
        S.query(f"walk-user-{dn}", {"from": [{"collectionId": "files"}], "where": ready, "orderBy": [order("n", direction)],
                                    "limit": 3}, parent="/users/carol", a="carol")
        S.agg(f"walk-count-{dn}", {"from": [{"collectionId": "walk"}], "where": ready, "orderBy": [order("n", direction)],
                                   "limit": 4}, [{"count": {}}])


def cases():
    S = Script()
    crud(S)
    values(S)
    query_values(S)
    queries(S)
    aggregations(S)
    writes(S)
    reads_and_transactions(S)
    listings(S)
    rules(S)
    more(S)
    walks(S)
    return S.cases
