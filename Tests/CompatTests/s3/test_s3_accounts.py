"""Several `s3Credentials` are several AWS accounts (boto3 against a hearth started with a config
file): buckets belong to their creator, others get AccessDenied unless a bucket policy or an ACL
grants them; each account has its own canonical id and display name; SSE-C over HTTP when
allowed."""
import hashlib
import base64
import json
import os
import tempfile
import uuid

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from hearthharness import start_hearth, stop_hearth

MAIN = {"accessKey": "MAINKEY", "secretKey": "main-secret", "displayName": "main-user", "canonicalId": "c" * 64,
        "accountId": "111111111111"}
ALT = {"accessKey": "ALTKEY", "secretKey": "alt-secret", "displayName": "alt-user", "accountId": "222222222222"}


def code(e):
    return e.value.response["Error"]["Code"]


@pytest.fixture(scope="module")
def accounts():
    tmp = tempfile.mkdtemp(prefix="hearth-accounts-")
    config = os.path.join(tmp, "hearth.json")
    with open(config, "w") as f:
        json.dump({"s3Credentials": [MAIN, ALT]}, f)
    proc, ready, _ = start_hearth(["--config", config, "--s3-access-key", MAIN["accessKey"], "--s3-secret-key", MAIN["secretKey"],
                                   "--s3-allow-ssec-http"])
    url = ready["services"]["s3"]["url"]

    def client(user):
        return boto3.client("s3", endpoint_url=url, aws_access_key_id=user["accessKey"], aws_secret_access_key=user["secretKey"],
                            region_name="us-east-1", config=Config(retries={"max_attempts": 1}))

    yield client(MAIN), client(ALT)
    stop_hearth(proc)


def test_buckets_belong_to_their_creator(accounts):
    main, alt = accounts
    name = "acct-" + uuid.uuid4().hex[:16]
    main.create_bucket(Bucket=name)
    main.put_object(Bucket=name, Key="k", Body=b"secret")
    owner = main.list_objects_v2(Bucket=name, FetchOwner=True)["Contents"][0]["Owner"]
    assert owner == {"ID": "c" * 64, "DisplayName": "main-user"}
    assert name in [b["Name"] for b in main.list_buckets()["Buckets"]]
    for call in (lambda: alt.get_object(Bucket=name, Key="k"), lambda: alt.list_objects_v2(Bucket=name),
                 lambda: alt.put_object(Bucket=name, Key="x", Body=b"x"), lambda: alt.delete_bucket(Bucket=name)):
        with pytest.raises(ClientError) as e:
            call()
        assert code(e) == "AccessDenied"
    with pytest.raises(ClientError) as e:
        alt.create_bucket(Bucket=name)
    assert code(e) == "BucketAlreadyExists"
    alt_owner = alt.list_buckets()["Owner"]
    assert alt_owner["DisplayName"] == "alt-user" and alt_owner["ID"] != "c" * 64


def test_bucket_policy_grants_another_account(accounts):
    main, alt = accounts
    name = "pol-" + uuid.uuid4().hex[:16]
    main.create_bucket(Bucket=name)
    main.put_object(Bucket=name, Key="shared/a", Body=b"hello")
    main.put_object(Bucket=name, Key="private/b", Body=b"no")
    main.put_bucket_policy(Bucket=name, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::222222222222:root"}, "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{name}/shared/*"},
        {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": f"arn:aws:s3:::{name}/shared/*"},
    ]}))
    assert alt.get_object(Bucket=name, Key="shared/a")["Body"].read() == b"hello"
    with pytest.raises(ClientError) as e:
        alt.get_object(Bucket=name, Key="private/b")
    assert code(e) == "AccessDenied"
    # An explicit Deny binds the owner's account too.
    with pytest.raises(ClientError) as e:
        main.delete_object(Bucket=name, Key="shared/a")
    assert code(e) == "AccessDenied"
    with pytest.raises(ClientError) as e:
        alt.get_bucket_policy(Bucket=name)
    assert code(e) == "AccessDenied"


def test_acl_grant_to_another_account(accounts):
    main, alt = accounts
    name = "aclg-" + uuid.uuid4().hex[:16]
    main.create_bucket(Bucket=name, ObjectOwnership="BucketOwnerPreferred")
    main.put_object(Bucket=name, Key="k", Body=b"for alt")
    alt_id = alt.list_buckets()["Owner"]["ID"]
    with pytest.raises(ClientError):
        alt.get_object(Bucket=name, Key="k")
    main.put_object_acl(Bucket=name, Key="k", GrantRead=f'id="{alt_id}"')
    assert alt.get_object(Bucket=name, Key="k")["Body"].read() == b"for alt"
    grants = main.get_object_acl(Bucket=name, Key="k")["Grants"]
    assert {"Grantee": {"ID": alt_id, "DisplayName": "alt-user", "Type": "CanonicalUser"}, "Permission": "READ"} in grants
    main.put_bucket_acl(Bucket=name, GrantWrite=f'id="{alt_id}"')
    alt.put_object(Bucket=name, Key="from-alt", Body=b"x", ACL="bucket-owner-full-control")
    # BucketOwnerPreferred: with bucket-owner-full-control the bucket owner owns the object.
    owners = {o["Key"]: o["Owner"]["ID"] for o in main.list_objects_v2(Bucket=name, FetchOwner=True)["Contents"]}
    assert owners["from-alt"] == "c" * 64


def test_sse_c_roundtrip(accounts):
    main, _ = accounts
    name = "ssec-" + uuid.uuid4().hex[:16]
    main.create_bucket(Bucket=name)
    key = os.urandom(32)
    r = main.put_object(Bucket=name, Key="c", Body=b"encrypted", SSECustomerAlgorithm="AES256", SSECustomerKey=key)
    assert r["SSECustomerKeyMD5"] == base64.b64encode(hashlib.md5(key).digest()).decode()
    assert main.get_object(Bucket=name, Key="c", SSECustomerAlgorithm="AES256", SSECustomerKey=key)["Body"].read() == b"encrypted"
    with pytest.raises(ClientError) as e:
        main.get_object(Bucket=name, Key="c")
    assert code(e) == "InvalidRequest"
    with pytest.raises(ClientError) as e:
        main.head_object(Bucket=name, Key="c", SSECustomerAlgorithm="AES256", SSECustomerKey=os.urandom(32))
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
