"""ListObjectsV2 / ListObjects with boto3 (which asks for encoding-type=url and decodes it)."""
import pytest
from botocore.exceptions import ClientError

KEYS = ["a.txt", "a b/c d.txt", "a+b", "photos/2025/x.jpg", "photos/2026/feb.jpg", "photos/2026/jan.jpg",
        "photos/top.jpg", "videos/v1.mp4", "z", "ünï/ä.txt"]


@pytest.fixture
def filled(s3, bucket):
    for k in KEYS:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
    return bucket


def sorted_bytes(keys):
    return sorted(keys, key=lambda k: k.encode())


def test_all_keys_in_byte_order(s3, filled):
    r = s3.list_objects_v2(Bucket=filled)
    assert [o["Key"] for o in r["Contents"]] == sorted_bytes(KEYS)
    assert r["KeyCount"] == len(KEYS)
    assert r["IsTruncated"] is False
    assert r["Contents"][0]["StorageClass"] == "STANDARD"
    assert r["Contents"][0]["Size"] == len(r["Contents"][0]["Key"].encode())
    assert "Owner" not in r["Contents"][0]
    assert "Owner" in s3.list_objects_v2(Bucket=filled, FetchOwner=True)["Contents"][0]


def test_prefix_and_delimiter(s3, filled):
    r = s3.list_objects_v2(Bucket=filled, Delimiter="/")
    assert [o["Key"] for o in r["Contents"]] == ["a+b", "a.txt", "z"]
    assert [p["Prefix"] for p in r["CommonPrefixes"]] == ["a b/", "photos/", "videos/", "ünï/"]
    r = s3.list_objects_v2(Bucket=filled, Prefix="photos/", Delimiter="/")
    assert [o["Key"] for o in r["Contents"]] == ["photos/top.jpg"]
    assert [p["Prefix"] for p in r["CommonPrefixes"]] == ["photos/2025/", "photos/2026/"]
    assert s3.list_objects_v2(Bucket=filled, Prefix="none/")["KeyCount"] == 0


def test_paginator_max_keys(s3, filled):
    seen = []
    pages = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=filled, PaginationConfig={"PageSize": 3}):
        pages += 1
        seen += [o["Key"] for o in page.get("Contents", [])]
        assert page["MaxKeys"] == 3
    assert seen == sorted_bytes(KEYS)
    assert pages == 4


def test_paginator_with_delimiter(s3, filled):
    keys, prefixes = [], []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=filled, Delimiter="/", PaginationConfig={"PageSize": 2}):
        keys += [o["Key"] for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    assert keys == ["a+b", "a.txt", "z"]
    assert prefixes == ["a b/", "photos/", "videos/", "ünï/"]


def test_start_after(s3, filled):
    r = s3.list_objects_v2(Bucket=filled, StartAfter="photos/2026/jan.jpg")
    assert [o["Key"] for o in r["Contents"]] == ["photos/top.jpg", "videos/v1.mp4", "z", "ünï/ä.txt"]
    assert r["StartAfter"] == "photos/2026/jan.jpg"


def test_bad_continuation_token(s3, filled):
    with pytest.raises(ClientError) as e:
        s3.list_objects_v2(Bucket=filled, ContinuationToken="not-a-token!")
    assert e.value.response["Error"]["Code"] == "InvalidArgument"


def test_list_objects_v1_marker(s3, filled):
    r = s3.list_objects(Bucket=filled, MaxKeys=2, Delimiter="/")
    assert r["IsTruncated"] is True
    assert r["NextMarker"] == "a+b"
    r2 = s3.list_objects(Bucket=filled, Marker=r["NextMarker"], Delimiter="/")
    assert [o["Key"] for o in r2["Contents"]] == ["a.txt", "z"]
    assert [p["Prefix"] for p in r2["CommonPrefixes"]] == ["photos/", "videos/", "ünï/"]
    keys = []
    for page in s3.get_paginator("list_objects").paginate(Bucket=filled, PaginationConfig={"PageSize": 4}):
        keys += [o["Key"] for o in page.get("Contents", [])]
    assert keys == sorted_bytes(KEYS)


def test_list_object_versions(s3, filled):
    r = s3.list_object_versions(Bucket=filled, Prefix="photos/2026/")
    assert [v["Key"] for v in r["Versions"]] == ["photos/2026/feb.jpg", "photos/2026/jan.jpg"]
    assert all(v["VersionId"] == "null" and v["IsLatest"] for v in r["Versions"])
