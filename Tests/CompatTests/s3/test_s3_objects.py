"""Object operations with boto3: bodies, headers, conditions, ranges, checksums, copies, deletes."""
import base64
import datetime
import hashlib
import zlib

import pytest
from botocore.exceptions import ClientError


def code(exc_info):
    return exc_info.value.response["Error"]["Code"]


def status(exc_info):
    return exc_info.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_put_get_head(s3, bucket):
    r = s3.put_object(Bucket=bucket, Key="hello.txt", Body=b"hello world")
    assert r["ETag"] == '"5eb63bbbe01eeed093cb22bb8f5acdc3"'
    assert r["ServerSideEncryption"] == "AES256"
    got = s3.get_object(Bucket=bucket, Key="hello.txt")
    assert got["Body"].read() == b"hello world"
    assert got["ContentType"] == "binary/octet-stream"
    assert got["ContentLength"] == 11
    assert got["AcceptRanges"] == "bytes"
    assert got["ETag"] == r["ETag"]
    assert isinstance(got["LastModified"], datetime.datetime)
    head = s3.head_object(Bucket=bucket, Key="hello.txt")
    assert head["ContentLength"] == 11
    assert head["ETag"] == r["ETag"]


def test_standard_headers_and_metadata(s3, bucket):
    s3.put_object(Bucket=bucket, Key="doc.pdf", Body=b"%PDF", ContentType="application/pdf",
                  ContentDisposition='attachment; filename="doc.pdf"', ContentEncoding="identity", ContentLanguage="en",
                  CacheControl="max-age=3600", Expires=datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc),
                  Metadata={"Camera": "Nikon", "lens": "50mm"}, StorageClass="STANDARD_IA", Tagging="a=1&b=2")
    h = s3.head_object(Bucket=bucket, Key="doc.pdf")
    assert h["ContentType"] == "application/pdf"
    assert h["ContentDisposition"] == 'attachment; filename="doc.pdf"'
    assert h["ContentEncoding"] == "identity"
    assert h["ContentLanguage"] == "en"
    assert h["CacheControl"] == "max-age=3600"
    assert h["Expires"] == datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
    assert h["Metadata"] == {"camera": "Nikon", "lens": "50mm"}
    assert h["StorageClass"] == "STANDARD_IA"
    got = s3.get_object(Bucket=bucket, Key="doc.pdf")
    assert got["TagCount"] == 2


@pytest.mark.parametrize("key", ["../../etc/passwd", "a//b", "dir/./x", "spaces in name.txt", "ünïcödé/日本語.txt",
                                 "100% sure", "plus+sign", "question?mark", "trailing/", "/leading", "emoji 😀", "#fragment&amp"])
def test_odd_keys_round_trip(s3, bucket, key):
    s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == key.encode()
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == [key]
    v1 = [o["Key"] for o in s3.list_objects(Bucket=bucket)["Contents"]]
    assert v1 == [key]


def test_key_too_long(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="k" * 1025, Body=b"x")
    assert code(e) == "KeyTooLongError"
    s3.put_object(Bucket=bucket, Key="k" * 1024, Body=b"x")


def test_missing_key(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="nope/missing.txt")
    assert code(e) == "NoSuchKey"
    assert status(e) == 404
    assert e.value.response["Error"]["Key"] == "nope/missing.txt"
    assert e.value.response["Error"]["Message"] == "The specified key does not exist."
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key="nope")
    assert code(e) == "404"


def test_ranges(s3, bucket):
    body = bytes(range(256)) * 4
    s3.put_object(Bucket=bucket, Key="r", Body=body)
    r = s3.get_object(Bucket=bucket, Key="r", Range="bytes=10-19")
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert r["ContentRange"] == "bytes 10-19/1024"
    assert r["Body"].read() == body[10:20]
    assert s3.get_object(Bucket=bucket, Key="r", Range="bytes=-5")["Body"].read() == body[-5:]
    assert s3.get_object(Bucket=bucket, Key="r", Range="bytes=1000-")["Body"].read() == body[1000:]
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="r", Range="bytes=2000-")
    assert code(e) == "InvalidRange"
    assert status(e) == 416
    assert e.value.response["Error"]["ActualObjectSize"] == "1024"


def test_conditional_get(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="c", Body=b"abc")["ETag"]
    modified = s3.head_object(Bucket=bucket, Key="c")["LastModified"]
    assert s3.get_object(Bucket=bucket, Key="c", IfMatch=etag)["Body"].read() == b"abc"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfMatch='"0123"')
    assert code(e) == "PreconditionFailed"
    assert status(e) == 412
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfNoneMatch=etag)
    assert status(e) == 304
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfModifiedSince=modified + datetime.timedelta(seconds=1))
    assert status(e) == 304
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfUnmodifiedSince=modified - datetime.timedelta(hours=1))
    assert status(e) == 412
    # If-Match true wins over If-Unmodified-Since false.
    r = s3.get_object(Bucket=bucket, Key="c", IfMatch=etag, IfUnmodifiedSince=modified - datetime.timedelta(hours=1))
    assert r["Body"].read() == b"abc"


def test_response_overrides(s3, bucket):
    s3.put_object(Bucket=bucket, Key="o", Body=b"x", ContentType="image/png")
    r = s3.get_object(Bucket=bucket, Key="o", ResponseContentType="text/plain", ResponseContentDisposition="inline",
                      ResponseCacheControl="no-store", ResponseContentLanguage="fr")
    assert r["ContentType"] == "text/plain"
    assert r["ContentDisposition"] == "inline"
    assert r["CacheControl"] == "no-store"
    assert r["ContentLanguage"] == "fr"


def test_put_if_none_match(s3, bucket):
    s3.put_object(Bucket=bucket, Key="once", Body=b"1", IfNoneMatch="*")
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="once", Body=b"2", IfNoneMatch="*")
    assert code(e) == "PreconditionFailed"
    assert status(e) == 412
    assert s3.get_object(Bucket=bucket, Key="once")["Body"].read() == b"1"


@pytest.mark.parametrize("algorithm", ["CRC32", "SHA1", "SHA256"])  # CRC32C/CRC64NVME need awscrt in boto3
def test_checksums(s3, bucket, algorithm):
    body = b"checksum me" * 1000
    r = s3.put_object(Bucket=bucket, Key="sum", Body=body, ChecksumAlgorithm=algorithm)
    assert r["Checksum" + algorithm]
    got = s3.get_object(Bucket=bucket, Key="sum", ChecksumMode="ENABLED")
    assert got["Checksum" + algorithm] == r["Checksum" + algorithm]
    assert got["Body"].read() == body
    head = s3.head_object(Bucket=bucket, Key="sum", ChecksumMode="ENABLED")
    assert head["Checksum" + algorithm] == r["Checksum" + algorithm]


def test_wrong_checksum_is_bad_digest(s3, bucket):
    wrong = base64.b64encode(zlib.crc32(b"other").to_bytes(4, "big")).decode()
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="bad", Body=b"data", ChecksumCRC32=wrong)
    assert code(e) == "BadDigest"
    assert status(e) == 400


def test_content_md5(s3, bucket):
    body = b"md5 body"
    good = base64.b64encode(hashlib.md5(body).digest()).decode()
    s3.put_object(Bucket=bucket, Key="md5", Body=body, ContentMD5=good)
    bad = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="md5", Body=b"new", ContentMD5=bad)
    assert code(e) == "BadDigest"
    assert s3.get_object(Bucket=bucket, Key="md5")["Body"].read() == body


def test_copy_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src dir/a+b.txt", Body=b"copy me", ContentType="text/plain", Metadata={"k": "v"})
    r = s3.copy_object(Bucket=bucket, Key="copy.txt", CopySource={"Bucket": bucket, "Key": "src dir/a+b.txt"})
    assert r["CopyObjectResult"]["ETag"] == '"%s"' % hashlib.md5(b"copy me").hexdigest()
    h = s3.head_object(Bucket=bucket, Key="copy.txt")
    assert h["ContentType"] == "text/plain"
    assert h["Metadata"] == {"k": "v"}
    s3.copy_object(Bucket=bucket, Key="replaced.txt", CopySource=f"{bucket}/src dir/a+b.txt",
                   MetadataDirective="REPLACE", ContentType="application/json", Metadata={"new": "1"})
    h = s3.head_object(Bucket=bucket, Key="replaced.txt")
    assert h["ContentType"] == "application/json"
    assert h["Metadata"] == {"new": "1"}
    assert s3.get_object(Bucket=bucket, Key="replaced.txt")["Body"].read() == b"copy me"
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="copy.txt", CopySource={"Bucket": bucket, "Key": "copy.txt"})
    assert code(e) == "InvalidRequest"
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="x", CopySource={"Bucket": bucket, "Key": "missing"})
    assert code(e) == "NoSuchKey"
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="x", CopySource={"Bucket": bucket, "Key": "copy.txt"}, CopySourceIfMatch='"nope"')
    assert code(e) == "PreconditionFailed"


def test_delete_object_and_objects(s3, bucket):
    for k in ["a", "b", "c", "d"]:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    r = s3.delete_object(Bucket=bucket, Key="a")
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 204
    s3.delete_object(Bucket=bucket, Key="never-existed")
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "b"}, {"Key": "c"}, {"Key": "zz"}]})
    assert sorted(d["Key"] for d in r["Deleted"]) == ["b", "c", "zz"]
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "d"}], "Quiet": True})
    assert "Deleted" not in r
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_empty_object(s3, bucket):
    r = s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    assert r["ETag"] == '"d41d8cd98f00b204e9800998ecf8427e"'
    got = s3.get_object(Bucket=bucket, Key="empty")
    assert got["ContentLength"] == 0
    assert got["Body"].read() == b""


def test_aws_chunked_content_encoding_on_a_plain_body_is_dropped(s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"plain", ContentEncoding="gzip, aws-chunked")
    assert s3.head_object(Bucket=bucket, Key="a")["ContentEncoding"] == "gzip"
    s3.put_object(Bucket=bucket, Key="b", Body=b"plain", ContentEncoding="aws-chunked")
    got = s3.get_object(Bucket=bucket, Key="b")
    assert "ContentEncoding" not in got and got["Body"].read() == b"plain"


def test_non_ascii_metadata_comes_back_rfc2047_encoded(s3, bucket):
    # S3 stores an RFC 2047 encoded word decoded and answers non-US-ASCII values mail-safe.
    s3.put_object(Bucket=bucket, Key="m", Body=b"x", Metadata={"plain": "ascii value", "word": "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="})
    got = s3.head_object(Bucket=bucket, Key="m")["Metadata"]
    assert got["plain"] == "ascii value"
    assert got["word"] == "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="
    s3.copy_object(Bucket=bucket, Key="m2", CopySource={"Bucket": bucket, "Key": "m"}, MetadataDirective="REPLACE",
                   Metadata={"q": "=?utf-8?Q?caf=C3=A9_au_lait?="})
    assert s3.head_object(Bucket=bucket, Key="m2")["Metadata"]["q"] == "=?UTF-8?B?Y2Fmw6kgYXUgbGFpdA==?="
