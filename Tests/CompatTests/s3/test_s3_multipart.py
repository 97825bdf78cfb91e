"""Multipart uploads with boto3: the low-level calls, their validation, and the transfer manager."""
import base64
import hashlib
import os

import pytest
from botocore.exceptions import ClientError

MIB = 1024 * 1024


def code(exc_info):
    return exc_info.value.response["Error"]["Code"]


def test_low_level_flow(s3, bucket):
    up = s3.create_multipart_upload(Bucket=bucket, Key="big.bin", ContentType="video/mp4", Metadata={"origin": "pytest"})
    uid = up["UploadId"]
    parts = [os.urandom(5 * MIB), os.urandom(5 * MIB), os.urandom(1000)]
    etags = []
    for n, body in enumerate(parts, 1):
        r = s3.upload_part(Bucket=bucket, Key="big.bin", UploadId=uid, PartNumber=n, Body=body)
        assert r["ETag"] == '"%s"' % hashlib.md5(body).hexdigest()
        etags.append(r["ETag"])
    listed = s3.list_parts(Bucket=bucket, Key="big.bin", UploadId=uid)
    assert [p["PartNumber"] for p in listed["Parts"]] == [1, 2, 3]
    assert [p["Size"] for p in listed["Parts"]] == [5 * MIB, 5 * MIB, 1000]
    uploads = s3.list_multipart_uploads(Bucket=bucket)["Uploads"]
    assert [u["UploadId"] for u in uploads] == [uid]
    done = s3.complete_multipart_upload(Bucket=bucket, Key="big.bin", UploadId=uid, MultipartUpload={
        "Parts": [{"PartNumber": n, "ETag": e} for n, e in enumerate(etags, 1)]})
    expected = '"%s-3"' % hashlib.md5(b"".join(bytes.fromhex(e.strip('"')) for e in etags)).hexdigest()
    assert done["ETag"] == expected
    assert done["Key"] == "big.bin"
    got = s3.get_object(Bucket=bucket, Key="big.bin")
    assert got["ETag"] == expected
    assert got["ContentType"] == "video/mp4"
    assert got["Metadata"] == {"origin": "pytest"}
    assert got["Body"].read() == b"".join(parts)
    part2 = s3.get_object(Bucket=bucket, Key="big.bin", PartNumber=2)
    assert part2["PartsCount"] == 3
    assert part2["Body"].read() == parts[1]
    assert "Uploads" not in s3.list_multipart_uploads(Bucket=bucket)


def test_part_validation(s3, bucket):
    uid = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    e1 = s3.upload_part(Bucket=bucket, Key="k", UploadId=uid, PartNumber=1, Body=b"small")["ETag"]
    e2 = s3.upload_part(Bucket=bucket, Key="k", UploadId=uid, PartNumber=2, Body=b"last")["ETag"]
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=uid,
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    assert code(e) == "EntityTooSmall"
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=uid,
                                     MultipartUpload={"Parts": [{"PartNumber": 2, "ETag": e2}, {"PartNumber": 1, "ETag": e1}]})
    assert code(e) == "InvalidPartOrder"
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=uid,
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"' + "0" * 32 + '"'}]})
    assert code(e) == "InvalidPart"
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=uid, MultipartUpload={"Parts": [{"PartNumber": 9, "ETag": e1}]})
    assert code(e) == "InvalidPart"
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=uid)
    with pytest.raises(ClientError) as e:
        s3.list_parts(Bucket=bucket, Key="k", UploadId=uid)
    assert code(e) == "NoSuchUpload"
    with pytest.raises(ClientError) as e:
        s3.upload_part(Bucket=bucket, Key="k", UploadId="does-not-exist", PartNumber=1, Body=b"x")
    assert code(e) == "NoSuchUpload"


def test_upload_part_copy(s3, bucket):
    src = os.urandom(6 * MIB)
    s3.put_object(Bucket=bucket, Key="src", Body=src)
    uid = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    p1 = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=uid, PartNumber=1, CopySource={"Bucket": bucket, "Key": "src"})
    p2 = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=uid, PartNumber=2, CopySource={"Bucket": bucket, "Key": "src"},
                             CopySourceRange="bytes=0-99")
    s3.complete_multipart_upload(Bucket=bucket, Key="dst", UploadId=uid, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": p1["CopyPartResult"]["ETag"]}, {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]})
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == src + src[:100]


def test_upload_file_20_mib_uses_multipart(s3, bucket, tmp_path):
    data = os.urandom(20 * MIB)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    s3.upload_file(str(path), bucket, "big.bin")
    head = s3.head_object(Bucket=bucket, Key="big.bin")
    assert head["ContentLength"] == 20 * MIB
    assert head["ETag"].endswith('-3"')  # 8 MiB + 8 MiB + 4 MiB parts
    out = tmp_path / "out.bin"
    s3.download_file(bucket, "big.bin", str(out))
    assert out.read_bytes() == data
    # The SDK's CRC32 part checksums combine into S3's composite form.
    h = s3.head_object(Bucket=bucket, Key="big.bin", ChecksumMode="ENABLED")
    assert h.get("ChecksumCRC32", "").endswith("-3")
    assert h.get("ChecksumType") == "COMPOSITE"


def test_part_copy_range_past_the_source_is_invalid_argument(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"12345")
    uid = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    with pytest.raises(ClientError) as e:
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=uid, PartNumber=1, CopySource={"Bucket": bucket, "Key": "src"},
                            CopySourceRange="bytes=0-21")
    err = e.value.response["Error"]
    assert err["Code"] == "InvalidArgument" and err["Message"] == "Range specified is not valid for source object of size: 5"
    assert err["ArgumentName"] == "x-amz-copy-source-range"


def test_complete_checks_a_composite_whole_object_checksum(s3, bucket):
    uid = s3.create_multipart_upload(Bucket=bucket, Key="k", ChecksumAlgorithm="SHA256")["UploadId"]
    p = s3.upload_part(Bucket=bucket, Key="k", UploadId=uid, PartNumber=1, Body=b"A" * 1024, ChecksumAlgorithm="SHA256")
    parts = {"Parts": [{"PartNumber": 1, "ETag": p["ETag"], "ChecksumSHA256": p["ChecksumSHA256"]}]}
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=uid, ChecksumSHA256="bad", MultipartUpload=parts)
    assert e.value.response["Error"]["Code"] == "BadDigest"
    composite = base64.b64encode(hashlib.sha256(base64.b64decode(p["ChecksumSHA256"])).digest()).decode() + "-1"
    done = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=uid, ChecksumSHA256=composite, MultipartUpload=parts)
    assert done["ChecksumSHA256"] == composite
