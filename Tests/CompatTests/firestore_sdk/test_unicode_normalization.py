"""Strings are exact sequences, never normalised: google-cloud-firestore (gRPC) against Hearth and the
official emulator with the same assertions.

"é" precomposed (NFC, U+00E9) and decomposed (NFD, "e" U+0301) are canonically equivalent, so Swift's
`String` compares and hashes them as equal; Firestore keeps them apart as two field names, two map
keys, two document IDs and two unequal values (measured on the official emulator, docs/firestore.md
*Strings are byte strings*). iOS apps meet NFD text for real: file names, some keyboards' input.
"""
import uuid

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath

NFC = "\u00e9"
NFD = "e\u0301"


def coll(db):
    return db.collection("un" + uuid.uuid4().hex[:10])


def test_two_field_names_differing_only_in_normalisation_are_two_fields(db):
    ref = coll(db).document("d")
    ref.set({NFC: 1, NFD: 2, "m": {NFC: "c", NFD: "d"}})
    got = ref.get().to_dict()
    assert got == {NFC: 1, NFD: 2, "m": {NFC: "c", NFD: "d"}}
    assert sorted(got, key=lambda k: k.encode()) == [NFD, "m", NFC]


def test_an_update_by_one_form_leaves_the_other_field_alone(db):
    ref = coll(db).document("d")
    ref.set({NFD: 1, "m": {NFD: 1}})
    ref.update({FieldPath(NFC).to_api_repr(): 7,
                FieldPath("m", NFC).to_api_repr(): 8})
    assert ref.get().to_dict() == {NFD: 1, NFC: 7, "m": {NFD: 1, NFC: 8}}
    ref.update({FieldPath(NFD).to_api_repr(): firestore.DELETE_FIELD})
    assert ref.get().to_dict() == {NFC: 7, "m": {NFD: 1, NFC: 8}}
    # A projection names one form only.
    snap = ref.get(field_paths=[FieldPath("m", NFD).to_api_repr()])
    assert snap.to_dict() == {"m": {NFD: 1}}


def test_document_ids_differing_only_in_normalisation_are_two_documents(db):
    c = coll(db)
    c.document(NFC).set({"form": "nfc"})
    c.document(NFD).set({"form": "nfd"})
    assert c.document(NFC).get().to_dict() == {"form": "nfc"}
    assert c.document(NFD).get().to_dict() == {"form": "nfd"}
    # Listed in byte order of their ids: "e" (0x65) before "é" (0xC3 0xA9).
    assert [s.id for s in c.stream()] == [NFD, NFC]
    got = {s.id: s.get("form") for s in db.get_all([c.document(NFD), c.document(NFC)])}
    assert got == {NFC: "nfc", NFD: "nfd"}
    batch = db.batch()
    batch.set(c.document(NFC), {"n": 1})
    batch.set(c.document(NFD), {"n": 2})
    batch.commit()
    assert c.document(NFC).get().to_dict() == {"n": 1}
    assert c.document(NFD).get().to_dict() == {"n": 2}
    c.document(NFC).delete()
    assert not c.document(NFC).get().exists
    assert c.document(NFD).get().to_dict() == {"n": 2}


def test_a_transaction_writing_both_ids_writes_two_documents(db):
    c = coll(db)

    @firestore.transactional
    def write(tx):
        tx.get(c.document(NFC))
        tx.get(c.document(NFD))
        tx.set(c.document(NFC), {"v": "nfc"})
        tx.set(c.document(NFD), {"v": "nfd"})

    write(db.transaction())
    assert {s.id: s.get("v") for s in c.stream()} == {NFC: "nfc", NFD: "nfd"}


def test_string_filters_compare_exact_sequences(db):
    c = coll(db)
    c.document("c").set({"s": NFC, "a": [NFC]})
    c.document("d").set({"s": NFD, "a": [NFD]})
    c.document("f").set({"s": "f", "a": ["f"]})

    def ids(q):
        return [s.id for s in q.stream()]

    assert ids(c.where(filter=FieldFilter("s", "==", NFC))) == ["c"]
    assert ids(c.where(filter=FieldFilter("s", "==", NFD))) == ["d"]
    assert ids(c.where(filter=FieldFilter("s", "in", [NFD]))) == ["d"]
    assert ids(c.where(filter=FieldFilter("s", "not-in", [NFC]))) == ["d", "f"]
    assert ids(c.where(filter=FieldFilter("a", "array_contains", NFC))) == ["c"]
    assert ids(c.where(filter=FieldFilter("a", "array_contains_any", [NFD]))) == ["d"]
    assert ids(c.order_by("s")) == ["d", "f", "c"]
    assert ids(c.where(filter=FieldFilter("s", ">", NFD))) == ["f", "c"]


def test_field_name_filters_name_one_form(db):
    c = coll(db)
    c.document("c").set({NFC: 1})
    c.document("d").set({NFD: 1})
    path = FieldPath(NFC).to_api_repr()
    assert [s.id for s in c.where(filter=FieldFilter(path, "==", 1)).stream()] == ["c"]
    assert [s.id for s in c.order_by(FieldPath(NFD).to_api_repr()).stream()] == ["d"]


def test_array_transforms_compare_exact_sequences(db):
    ref = coll(db).document("d")
    ref.set({"a": [NFC]})
    ref.update({"a": firestore.ArrayUnion([NFD])})
    assert ref.get().get("a") == [NFC, NFD]
    ref.update({"a": firestore.ArrayRemove([NFC])})
    assert ref.get().get("a") == [NFD]


def test_collections_differing_only_in_normalisation_are_two(db):
    parent = coll(db).document("p")
    parent.collection(NFC).document("a").set({"v": 1})
    parent.collection(NFD).document("b").set({"v": 2})
    assert [s.id for s in parent.collection(NFC).stream()] == ["a"]
    assert [s.id for s in parent.collection(NFD).stream()] == ["b"]
    assert sorted((c.id for c in parent.collections()), key=str.encode) == [NFD, NFC]
    group = "g" + uuid.uuid4().hex[:10]
    parent.collection(group + NFC).document("a").set({"v": 1})
    parent.collection(group + NFD).document("b").set({"v": 2})
    assert [s.id for s in db.collection_group(group + NFD).stream()] == ["b"]


def test_a_listener_on_one_spelling_sees_only_its_collection(db):
    import threading
    parent = coll(db).document("p")
    seen, ready = [], threading.Event()

    def on_snapshot(snapshots, changes, read_time):
        seen.append(sorted(s.id for s in snapshots))
        if seen[-1] == ["c2"]:
            ready.set()

    parent.collection(NFC).document("c1").set({"v": 1})
    watch = parent.collection(NFC).on_snapshot(on_snapshot)
    try:
        parent.collection(NFD).document("d1").set({"v": 1})
        parent.collection(NFC).document("c2").set({"v": 1})
        parent.collection(NFC).document("c1").delete()
        assert ready.wait(20), seen
    finally:
        watch.unsubscribe()
    assert all("d1" not in ids for ids in seen), seen
