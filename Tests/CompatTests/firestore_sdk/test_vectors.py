"""Vector values and vector search (`find_nearest`) with google-cloud-firestore, run against Hearth and
the official Cloud Firestore emulator with the same assertions: a `Vector` written, read, ordered and
filtered; malformed vector maps refused with the emulator's words; the three distance measures, their
distances, thresholds, pre-filters and limits; and the two places the servers differ on purpose
(docs/firestore.md, *Vector values* and *Vector search*)."""
import os
import queue
import uuid

import grpc
import pytest
import requests
from google.api_core import exceptions
from google.cloud import firestore
from google.cloud.firestore_v1 import types
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.base_vector_query import DistanceMeasure
from google.cloud.firestore_v1.vector import Vector

OWNER = {"Authorization": "Bearer owner"}


def coll(db):
    return db.collection("vec" + uuid.uuid4().hex[:10])


def rest(emulator_host, db, suffix):
    return f"http://{emulator_host}/v1/projects/{db.project}/databases/(default)/documents{suffix}"


def vector_map(values):
    return {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"},
                                    "value": {"arrayValue": {"values": values} if values else {}}}}}


def test_a_vector_round_trips_sorts_between_arrays_and_maps_and_is_filtered_as_one_value(db):
    c = coll(db)
    c.document("v12").set({"f": Vector([1.0, 2.0]), "nested": {"inner": Vector([0.5])}})
    c.document("v13").set({"f": Vector([1.0, 3.0])})
    c.document("v5").set({"f": Vector([5.0])})
    c.document("v000").set({"f": Vector([0.0, 0.0, 0.0])})
    c.document("arr").set({"f": [9, 9]})
    c.document("map").set({"f": {"a": 1}})
    got = c.document("v12").get().to_dict()
    assert got == {"f": Vector([1.0, 2.0]), "nested": {"inner": Vector([0.5])}}
    assert isinstance(got["f"], Vector)
    # Arrays < vectors (by dimension, then element by element) < maps.
    assert [s.id for s in c.order_by("f").stream()] == ["arr", "v5", "v12", "v13", "v000", "map"]
    assert [s.id for s in c.where(filter=FieldFilter("f", "==", Vector([1.0, 2.0]))).stream()] == ["v12"]
    assert [s.id for s in c.where(filter=FieldFilter("f", ">", Vector([1.0, 2.0]))).stream()] == ["v13", "v000"]
    assert [s.id for s in c.where(filter=FieldFilter("f", "in", [Vector([5.0]), Vector([1.0, 3.0])])).stream()] == ["v13", "v5"]
    # The wire map's members are not fields of their own.
    assert [s.id for s in c.where(filter=FieldFilter("f.__type__", "==", "__vector__")).stream()] == []


@pytest.mark.parametrize("value, message", [
    (vector_map([{"integerValue": "1"}]), "Vector must only contain values of type 'double'"),
    (vector_map([]), "Cannot have a zero length vector."),
    (vector_map([{"doubleValue": "NaN"}]), "Vector cannot contain NaN values."),
    (vector_map([{"doubleValue": 0.5}] * 2049), "Vectors must be at most 2048 dimensions."),
    ({"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}}}}, "Vector map is missing key 'value'."),
    ({"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"doubleValue": 1}}}}, "Vector Value type must be an array."),
    ({"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {}}, "x": {"nullValue": None}}}},
     "Vector Value map has extraneous entries."),
    ({"mapValue": {"fields": {"__type__": {"integerValue": "1"}}}}, "Field __type__ is not a string."),
    ({"mapValue": {"fields": {"__type__": {"stringValue": "__other__"}}}}, "Property f contains an invalid nested entity."),
    ({"arrayValue": {"values": [vector_map([{"doubleValue": 1}])]}}, "Cannot convert a vector value in an array value."),
])
def test_malformed_vector_maps_are_refused_with_the_emulators_words(db, emulator_host, value, message):
    r = requests.patch(rest(emulator_host, db, f"/{coll(db).id}/bad"), json={"fields": {"f": value}}, headers=OWNER)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["message"] == message


def test_the_largest_vector_is_stored_and_infinity_is_an_element_like_any_other(db):
    c = coll(db)
    c.document("big").set({"v": Vector([0.25] * 2048)})
    c.document("inf").set({"v": Vector([float("inf"), float("-inf")])})
    assert c.document("big").get().get("v") == Vector([0.25] * 2048)
    assert c.document("inf").get().get("v") == Vector([float("inf"), float("-inf")])


@pytest.fixture
def beans(db):
    c = coll(db)
    for name, v, tag, n in [("a", [1.0, 0.0], "x", 1), ("b", [0.0, 1.0], "x", 2), ("c", [1.0, 1.0], "y", 3), ("d", [3.0, 4.0], "x", 4),
                            ("e", [-1.0, 0.0], "y", 5), ("f", [1.0, 0.0], "y", 6), ("g3", [1.0, 0.0, 0.0], "x", 7), ("zero", [0.0, 0.0], "x", 8)]:
        c.document(name).set({"e": Vector(v), "tag": tag, "n": n})
    c.document("arr").set({"e": [1.0, 0.0], "tag": "x", "n": 9})
    c.document("none").set({"tag": "x", "n": 10})
    return c


def ranked(query):
    return [(s.id, s.get("d")) for s in query.get()]


def test_euclidean_cosine_and_dot_product_rank_and_measure_as_the_emulator_does(beans):
    euclid = ranked(beans.find_nearest("e", Vector([1.0, 0.0]), limit=10, distance_measure=DistanceMeasure.EUCLIDEAN, distance_result_field="d"))
    assert euclid == [("a", 0.0), ("f", 0.0), ("c", 1.0), ("zero", 1.0), ("b", 2 ** 0.5), ("e", 2.0), ("d", 20 ** 0.5)]
    cosine = ranked(beans.find_nearest("e", [1.0, 0.0], limit=10, distance_measure=DistanceMeasure.COSINE, distance_result_field="d"))
    assert cosine[:6] == [("a", 0.0), ("f", 0.0), ("c", 0.29289321881345254), ("d", 0.4), ("b", 1.0), ("e", 2.0)]
    # A zero vector has no angle: its cosine distance is NaN, ranked last.
    assert cosine[6][0] == "zero" and cosine[6][1] != cosine[6][1]
    dot = ranked(beans.find_nearest("e", [1.0, 0.0], limit=10, distance_measure=DistanceMeasure.DOT_PRODUCT, distance_result_field="d"))
    assert dot == [("d", 3.0), ("a", 1.0), ("c", 1.0), ("f", 1.0), ("b", 0.0), ("zero", 0.0), ("e", -1.0)]


def test_thresholds_limits_and_pre_filters(beans):
    q = beans.find_nearest("e", [1.0, 0.0], limit=10, distance_measure=DistanceMeasure.EUCLIDEAN, distance_threshold=1.0)
    assert [s.id for s in q.get()] == ["a", "f", "c", "zero"]
    q = beans.find_nearest("e", [1.0, 0.0], limit=10, distance_measure=DistanceMeasure.DOT_PRODUCT, distance_threshold=1)
    assert [s.id for s in q.get()] == ["d", "a", "c", "f"]
    q = beans.find_nearest("e", [1.0, 0.0], limit=2, distance_measure=DistanceMeasure.EUCLIDEAN)
    assert [s.id for s in q.get()] == ["a", "f"]
    # Ties keep the pre-filter's own order: its inequality orders by n before the name.
    q = beans.where(filter=FieldFilter("n", ">", 2)).find_nearest("e", [1.0, 0.0], limit=10, distance_measure=DistanceMeasure.EUCLIDEAN)
    assert [s.id for s in q.get()] == ["f", "c", "zero", "e", "d"]
    q = beans.where(filter=FieldFilter("tag", "==", "x")).find_nearest("e", [1.0, 0.0], limit=10, distance_measure=DistanceMeasure.COSINE,
                                                                      distance_result_field="d")
    assert [s.id for s in q.get()] == ["a", "d", "b", "zero"]
    # Another dimension: only the vectors of the query vector's.
    q = beans.find_nearest("e", [1.0, 0.0, 0.0], limit=10, distance_measure=DistanceMeasure.EUCLIDEAN)
    assert [s.id for s in q.get()] == ["g3"]


def test_the_distance_field_replaces_a_field_and_the_stored_document_is_unchanged(beans):
    beans.document("a").get()  # a read before: the stored version's encoding must not hide the distance
    q = beans.find_nearest("e", [1.0, 0.0], limit=1, distance_measure=DistanceMeasure.EUCLIDEAN, distance_result_field="tag")
    assert [(s.id, s.get("tag")) for s in q.get()] == [("a", 0.0)]
    assert beans.document("a").get().get("tag") == "x"


def test_bad_find_nearest_requests_are_invalid_argument(beans):
    def message(query):
        with pytest.raises(exceptions.InvalidArgument) as info:
            query.get()
        return info.value.message
    base = dict(query_vector=[1.0, 0.0], distance_measure=DistanceMeasure.EUCLIDEAN)
    assert message(beans.find_nearest("e", limit=0, **base)) == "FindNearest.limit must be a positive integer of no more than 1000"
    assert message(beans.find_nearest("e", limit=1001, **base)) == "FindNearest.limit must be a positive integer of no more than 1000"
    assert message(beans.limit(3).find_nearest("e", limit=2, **base)) == "A query limit cannot be used with FindNearest"
    assert message(beans.find_nearest("e", [1.0] * 2049, limit=2, distance_measure=DistanceMeasure.EUCLIDEAN)) == \
        "Vectors must be at most 2048 dimensions."
    assert message(beans.find_nearest("e", limit=2, distance_result_field="__d__", **base)) == \
        'The distanceResultField.property.name "__d__" is reserved.'


def test_a_count_of_a_find_nearest_query_counts_its_neighbours(db, beans, emulator_host):
    """The SDK's VectorQuery has no count(); a raw aggregation over the same query has."""
    query = beans.find_nearest("e", [1.0, 0.0], limit=3, distance_measure=DistanceMeasure.EUCLIDEAN)._to_protobuf()
    structured = type(query).to_dict(query, use_integers_for_enums=False, preserving_proto_field_name=False)
    r = requests.post(rest(emulator_host, db, ":runAggregationQuery"), headers=OWNER, json={"structuredAggregationQuery": {
        "structuredQuery": structured, "aggregations": [{"alias": "n", "count": {}}]}})
    assert r.status_code == 200, r.text
    assert r.json()[0]["result"]["aggregateFields"]["n"] == {"integerValue": "3"}


def test_find_nearest_in_a_transaction_and_over_a_collection_group(db, beans):
    t = db.transaction()

    @firestore.transactional
    def run(t):
        return [s.id for s in beans.find_nearest("e", [3.0, 4.0], limit=1, distance_measure=DistanceMeasure.DOT_PRODUCT).get(transaction=t)]
    assert run(t) == ["d"]
    sub = "sub" + uuid.uuid4().hex[:8]
    beans.document("a").collection(sub).document("s1").set({"e": Vector([1.0, 0.0])})
    db.collection("elsewhere").document("y").collection(sub).document("s2").set({"e": Vector([0.0, 1.0])})
    q = db.collection_group(sub).find_nearest("e", [0.0, 1.0], limit=5, distance_measure=DistanceMeasure.EUCLIDEAN)
    assert [s.id for s in q.get()] == ["s2", "s1"]


def test_array_union_of_a_vector(db, target):
    """A vector cannot be an array's element: the emulator refuses one in a written array but its
    appendMissingElements stores it anyway (as it does nested arrays); Hearth refuses both."""
    ref = coll(db).document("u")
    if target == "official":
        ref.set({"a": firestore.ArrayUnion([Vector([1.0])])})
        assert ref.get().get("a") == [Vector([1.0])]
    else:
        with pytest.raises(exceptions.InvalidArgument) as info:
            ref.set({"a": firestore.ArrayUnion([Vector([1.0])])})
        assert info.value.message == "Cannot convert a vector value in an array value."


def test_a_listen_target_with_find_nearest_fails(db, beans, emulator_host, target):
    """Vector search has no real-time listeners: the emulator ends the stream with UNKNOWN and no
    message; Hearth removes the target with INVALID_ARGUMENT and the reason as its cause."""
    channel = grpc.insecure_channel(emulator_host)
    listen = channel.stream_stream("/google.firestore.v1.Firestore/Listen", request_serializer=types.ListenRequest.serialize,
                                   response_deserializer=types.ListenResponse.deserialize)
    database = f"projects/{db.project}/databases/(default)"
    query = beans.find_nearest("e", [1.0, 0.0], limit=2, distance_measure=DistanceMeasure.EUCLIDEAN)._to_protobuf()
    requests_q = queue.Queue()
    requests_q.put(types.ListenRequest(database=database, add_target=types.Target(
        target_id=1, query=types.Target.QueryTarget(parent=database + "/documents", structured_query=query))))

    def feed():
        while (item := requests_q.get()) is not None:
            yield item
    try:
        if target == "hearth":
            # Refused like every target that cannot be listened to (test_listen_differential.py):
            # ADD, then REMOVE with the cause, and the stream goes on for the client's other targets.
            kinds = []
            for r in listen(feed(), metadata=[("authorization", "Bearer owner")], timeout=30):
                tc = r.target_change
                kinds.append(types.TargetChange.TargetChangeType(tc.target_change_type).name)
                if tc.target_change_type == types.TargetChange.TargetChangeType.REMOVE:
                    assert list(tc.target_ids) == [1]
                    assert tc.cause.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
                    assert "FindNearest cannot be used in a Listen target" in tc.cause.message
                    break
            assert kinds == ["ADD", "REMOVE"]
        else:
            with pytest.raises(grpc.RpcError) as info:
                for _ in listen(feed(), metadata=[("authorization", "Bearer owner")], timeout=30):
                    pass
            assert info.value.code() == grpc.StatusCode.UNKNOWN
    finally:
        requests_q.put(None)
        channel.close()
