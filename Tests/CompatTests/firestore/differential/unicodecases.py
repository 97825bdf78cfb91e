"""NFC/NFD cases: Firestore compares strings, field names and document IDs as exact sequences.

"é" precomposed (NFC, U+00E9) and decomposed (NFD, "e" U+0301) are canonically equivalent, so Swift's
String `==` and hashing call them equal; Firestore (and the official emulator) keep them apart as two
field names, two document IDs, two unequal values. Run in order against both servers by
test_unicode_keys.py, with unicode.rules; the emulator's answers are in fixtures/emulator-unicode.json.
"""
import os
import sys
import urllib.parse

from diffcases import N, Script, arr, ff, i, mp, order, s, update

NFC = "\u00e9"
NFD = "e\u0301"
# Two NFD forms of one character whose combining marks differ in order are also canonically equivalent.
ORD1 = "a\u0301\u0323"
ORD2 = "a\u0323\u0301"


def q(text):
    return urllib.parse.quote(text, safe="")


def fp(name):
    """A field path segment for a mask or filter: non-identifier names are back-quoted."""
    return "`" + name + "`"


def cases():
    S = Script()
    # Field names: one document with both forms as top-level keys, and as nested map keys.
    S.add("fields-both", "PATCH", "/open/f1", b={"fields": {NFC: i(1), NFD: i(2)}})
    S.add("fields-both-get", "GET", "/open/f1")
    S.add("fields-order", "PATCH", "/open/f2", b={"fields": {ORD1: i(1), ORD2: i(2)}})
    S.add("nested-both", "PATCH", "/open/f3", b={"fields": {"m": {"mapValue": {"fields": {NFC: i(1), NFD: i(2)}}}}})
    S.add("nested-both-get", "GET", "/open/f3")
    S.commit("commit-fields-both", [update("open/f4", {NFC: s(NFC), NFD: s(NFD)})])
    S.add("commit-fields-both-get", "GET", "/open/f4")
    # Masks: writing the NFC name leaves the NFD field alone; reading the NFC name returns only it.
    S.add("mask-setup", "PATCH", "/open/f5", b={"fields": {NFD: i(1)}})
    S.add("mask-update-nfc", "PATCH", "/open/f5", q="updateMask.fieldPaths=" + q(fp(NFC)), b={"fields": {NFC: i(7)}})
    S.add("mask-update-nfc-get", "GET", "/open/f5")
    S.add("mask-read-nfd", "GET", "/open/f5", q="mask.fieldPaths=" + q(fp(NFD)))
    S.add("mask-delete-nfc", "PATCH", "/open/f5", q="updateMask.fieldPaths=" + q(fp(NFC)), b={"fields": {}})
    S.add("mask-delete-nfc-get", "GET", "/open/f5")
    S.commit("commit-mask-nfd", [update("open/f5", {NFD: i(3), NFC: i(4)}, updateMask={"fieldPaths": [fp(NFD)]})])
    S.add("commit-mask-nfd-get", "GET", "/open/f5")
    # Document IDs: two documents whose IDs differ only in normalisation.
    S.add("id-nfc", "PATCH", "/ids/" + q(NFC), b={"fields": {"form": s("nfc")}})
    S.add("id-nfd", "PATCH", "/ids/" + q(NFD), b={"fields": {"form": s("nfd")}})
    S.add("id-nfc-get", "GET", "/ids/" + q(NFC))
    S.add("id-nfd-get", "GET", "/ids/" + q(NFD))
    S.add("id-list", "GET", "/ids")
    S.query("id-name-eq", {"from": [{"collectionId": "ids"}],
                           "where": ff("__name__", "EQUAL", {"referenceValue": f"{N}/ids/{NFD}"})})
    S.add("id-batch-get", "POST", ":batchGet", b={"documents": [f"{N}/ids/{NFC}", f"{N}/ids/{NFD}"]})
    S.add("id-delete-nfc", "DELETE", "/ids/" + q(NFC))
    S.add("id-nfd-get-after", "GET", "/ids/" + q(NFD))
    S.add("id-list-after", "GET", "/ids")
    # String values in filters and ordering.
    S.add("val-nfc", "PATCH", "/vals/c", b={"fields": {"s": s(NFC), "a": arr(s(NFC))}})
    S.add("val-nfd", "PATCH", "/vals/d", b={"fields": {"s": s(NFD), "a": arr(s(NFD))}})
    S.add("val-e", "PATCH", "/vals/e", b={"fields": {"s": s("f"), "a": arr(s("f"))}})
    frm = [{"collectionId": "vals"}]
    S.query("val-eq-nfc", {"from": frm, "where": ff("s", "EQUAL", s(NFC))})
    S.query("val-eq-nfd", {"from": frm, "where": ff("s", "EQUAL", s(NFD))})
    S.query("val-ne-nfc", {"from": frm, "where": ff("s", "NOT_EQUAL", s(NFC))})
    S.query("val-in-nfc", {"from": frm, "where": ff("s", "IN", arr(s(NFC)))})
    S.query("val-not-in-nfd", {"from": frm, "where": ff("s", "NOT_IN", arr(s(NFD)))})
    S.query("val-array-contains-nfd", {"from": frm, "where": ff("a", "ARRAY_CONTAINS", s(NFD))})
    S.query("val-array-contains-any-nfc", {"from": frm, "where": ff("a", "ARRAY_CONTAINS_ANY", arr(s(NFC)))})
    S.query("val-order", {"from": frm, "orderBy": [order("s")]})
    S.query("val-gt-nfd", {"from": frm, "where": ff("s", "GREATER_THAN", s(NFD))})
    # Field names in filters and ordering.
    S.add("fq-nfc", "PATCH", "/fq/c", b={"fields": {NFC: i(1)}})
    S.add("fq-nfd", "PATCH", "/fq/d", b={"fields": {NFD: i(1)}})
    S.query("fq-where-nfc", {"from": [{"collectionId": "fq"}], "where": ff(fp(NFC), "EQUAL", i(1))})
    S.query("fq-order-nfd", {"from": [{"collectionId": "fq"}], "orderBy": [order(fp(NFD))]})
    S.query("fq-select-nfc", {"from": [{"collectionId": "fq"}], "select": {"fields": [{"fieldPath": fp(NFC)}]}})
    # Array transforms compare values as Firestore does.
    S.add("tr-setup", "PATCH", "/open/tr", b={"fields": {"a": arr(s(NFC))}})
    S.commit("tr-union-nfd", [{"transform": {"document": f"{N}/open/tr", "fieldTransforms": [
        {"fieldPath": "a", "appendMissingElements": {"values": [s(NFD)]}}]}}])
    S.commit("tr-remove-nfc", [{"transform": {"document": f"{N}/open/tr", "fieldTransforms": [
        {"fieldPath": "a", "removeAllFromArray": {"values": [s(NFC)]}}]}}])
    S.add("tr-get", "GET", "/open/tr")
    # Rules (unicode.rules): each create is allowed (200) or denied (403) by one comparison.
    rules = [
        ("eq", {"a": s(NFC), "b": s(NFD)}),
        ("eq-same", {"op": None, "a": s(NFC), "b": s(NFC)}),
        ("ne", {"a": s(NFC), "b": s(NFD)}),
        ("inlist", {"a": s(NFC), "list": arr(s(NFD))}),
        ("inmap", {"a": s(NFC), "m": mp(**{NFD: i(1)})}),
        ("hasall", {"a": s(NFC), "m": mp(**{NFD: i(1)})}),
        ("hasany", {"a": s(NFC), "m": mp(**{NFD: i(1)})}),
        ("hasonly", {"a": s(NFC), "m": mp(**{NFD: i(1)})}),
        ("listhasall", {"a": s(NFC), "list": arr(s(NFD))}),
        ("lookup", {"a": s(NFC), "m": mp(**{NFD: i(1)})}),
        ("getkey", {"a": s(NFC), "m": mp(**{NFD: i(1)})}),
        ("size", {"a": s(NFD), "n": i(2)}),
        ("size-nfc", {"op": None, "a": s(NFC), "n": i(1)}),
        ("lt", {"a": s(NFD), "b": s(NFC)}),
        ("setsize", {"list": arr(s(NFC), s(NFD)), "n": i(2)}),
        ("keyssize", {"m": mp(**{NFC: i(1), NFD: i(2)}), "n": i(2)}),
        ("upper", {"a": s(NFC), "b": s(NFD)}),
        ("matches", {"a": s(NFD), "b": s(NFC)}),
        ("literal", {"a": s(NFD)}),
        ("literal-nfc", {"op": None, "a": s(NFC)}),
        ("diff", {"m": mp(**{NFC: i(1)}), "m2": mp(**{NFD: i(1)}), "n": i(2)}),
    ]
    for n, (name, fields) in enumerate(rules):
        op = name.split("-")[0]
        fields = dict(fields)
        fields["op"] = s(op)
        S.add(f"rules-{name}", "PATCH", f"/r/x{n}", q="currentDocument.exists=false", a="alice",
              b={"fields": fields})
    S.add("rules-id-nfc-vs-nfd", "PATCH", "/rid/" + q(NFC), q="currentDocument.exists=false", a="alice",
          b={"fields": {"a": s(NFD)}})
    S.add("rules-id-nfc-vs-nfc", "PATCH", "/rid/" + q(NFC), q="currentDocument.exists=false", a="alice",
          b={"fields": {"a": s(NFC)}})
    return S.cases


HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "emulator-unicode.json")
RULES = os.path.join(HERE, "unicode.rules")


def main():
    """`python unicodecases.py --record`: runs the cases on the official emulator, rewrites the fixture."""
    import diffrun
    if "--record" not in sys.argv or not diffrun.emulator_command():
        print("usage: python unicodecases.py --record   (needs the official Cloud Firestore emulator)")
        return 2
    return diffrun.record(FIXTURE, cases(), RULES)


if __name__ == "__main__":
    sys.exit(main())
