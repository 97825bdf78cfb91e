"""Access control and bucket configuration as google-cloud-storage drives them: legacy ACLs
(`make_public`, `blob.acl`, `bucket.acl`, `bucket.default_object_acl`, predefined ACLs),
uniform bucket-level access and its refusals, bucket PATCH/PUT (labels, CORS, lifecycle,
versioning) and the bucket IAM policy (get, set, testIamPermissions)."""
import pytest
import requests
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage


@pytest.fixture(scope="module")
def client(hearth):
    return storage.Client(project=hearth["project"], credentials=AnonymousCredentials())


@pytest.fixture(scope="module")
def bucket(client):
    return client.create_bucket("gcs-access-control")


def entities(acl):
    acl.reload()
    return {e["entity"]: e["role"] for e in acl}


def test_a_new_object_has_its_owner_and_the_bucket_default(bucket, hearth):
    blob = bucket.blob("private.txt")
    blob.upload_from_string(b"p")
    got = entities(blob.acl)
    assert got[f"user-{hearth['project']}@appspot.gserviceaccount.com"] == "OWNER"
    assert got["project-owners-0"] == "OWNER" and got["project-viewers-0"] == "READER"
    assert "allUsers" not in got


def test_make_public_then_private(bucket):
    blob = bucket.blob("public.txt")
    blob.upload_from_string(b"hello")
    gen = bucket.get_blob("public.txt").metageneration
    blob.make_public()
    assert entities(blob.acl)["allUsers"] == "READER"
    # An ACL change is a metadata change: the metageneration moves.
    assert bucket.get_blob("public.txt").metageneration == gen + 1
    # GET with projection=full shows the ACL and the owner, noAcl (the default) does not.
    full = requests.get(f"{blob.client._connection.API_BASE_URL}/storage/v1/b/{bucket.name}/o/public.txt?projection=full").json()
    assert {"entity": "allUsers", "role": "READER"}.items() <= next(e for e in full["acl"] if e["entity"] == "allUsers").items()
    assert full["owner"]["entity"].startswith("user-")
    plain = requests.get(f"{blob.client._connection.API_BASE_URL}/storage/v1/b/{bucket.name}/o/public.txt").json()
    assert "acl" not in plain and "owner" not in plain
    blob.make_private()
    assert "allUsers" not in entities(blob.acl)


def test_object_acl_entries_grant_revoke_and_save(bucket):
    blob = bucket.blob("shared.txt")
    blob.upload_from_string(b"s")
    blob.acl.reload()
    blob.acl.user("Alice@Example.com").grant_read()
    blob.acl.domain("example.org").grant_owner()
    blob.acl.save()
    got = entities(blob.acl)
    assert got["user-alice@example.com"] == "READER" and got["domain-example.org"] == "OWNER"
    blob.acl.user("alice@example.com").revoke_read()
    blob.acl.save()
    assert "user-alice@example.com" not in entities(blob.acl)


def test_predefined_acls_on_upload_copy_and_compose(bucket):
    bucket.blob("pre.txt").upload_from_string(b"x", predefined_acl="publicRead")
    assert entities(bucket.blob("pre.txt").acl).get("allUsers") == "READER"
    # A copy gets the destination's default unless told otherwise.
    bucket.copy_blob(bucket.blob("pre.txt"), bucket, "copy.txt")
    assert "allUsers" not in entities(bucket.blob("copy.txt").acl)
    bucket.blob("pre.txt").acl.save_predefined("private")
    assert list(entities(bucket.blob("pre.txt").acl).values()) == ["OWNER"]
    with pytest.raises(ValueError):
        bucket.blob("pre.txt").upload_from_string(b"x", predefined_acl="everyone")
    dest = bucket.blob("composed.txt")
    dest.compose([bucket.blob("pre.txt"), bucket.blob("copy.txt")])
    assert "allUsers" not in entities(dest.acl)


def test_an_unknown_predefined_acl_and_a_bad_entity_are_400(bucket, client):
    base = client._connection.API_BASE_URL
    r = requests.post(f"{base}/upload/storage/v1/b/{bucket.name}/o?uploadType=media&name=bad.txt&predefinedAcl=everyone", data=b"x")
    assert r.status_code == 400 and r.json()["error"]["errors"][0]["reason"] == "invalid"
    bucket.blob("e.txt").upload_from_string(b"x")
    r = requests.post(f"{base}/storage/v1/b/{bucket.name}/o/e.txt/acl", json={"entity": "nobody", "role": "READER"})
    assert r.status_code == 400
    r = requests.post(f"{base}/storage/v1/b/{bucket.name}/o/e.txt/acl", json={"entity": "allUsers", "role": "WRITER"})
    assert r.status_code == 400  # objects have no WRITER role
    r = requests.get(f"{base}/storage/v1/b/{bucket.name}/o/e.txt/acl/user-nobody@example.com")
    assert r.status_code == 404


def test_bucket_acl_and_default_object_acl(client):
    b = client.create_bucket("gcs-acl-defaults")
    assert entities(b.acl)["project-owners-0"] == "OWNER"
    b.default_object_acl.reload()
    b.default_object_acl.all().grant_read()
    b.default_object_acl.save()
    assert entities(b.default_object_acl)["allUsers"] == "READER"
    # New objects take the bucket's default object ACL.
    b.blob("new.txt").upload_from_string(b"n")
    assert entities(b.blob("new.txt").acl)["allUsers"] == "READER"
    b.acl.reload()
    b.acl.group("devs@example.com").grant_write()
    b.acl.save()
    assert entities(b.acl)["group-devs@example.com"] == "WRITER"
    b.acl.save_predefined("publicRead")
    assert entities(b.acl) == {"project-owners-0": "OWNER", "allUsers": "READER"}


def test_bucket_patch_labels_cors_lifecycle_versioning(client):
    b = client.create_bucket("gcs-bucket-patch")
    meta = b.metageneration
    b.labels = {"team": "storage", "env": "dev"}
    b.cors = [{"origin": ["*"], "method": ["GET"], "responseHeader": ["Content-Type"], "maxAgeSeconds": 3600}]
    b.add_lifecycle_delete_rule(age=30)
    b.versioning_enabled = True
    b.patch()
    got = client.get_bucket("gcs-bucket-patch")
    assert got.labels == {"team": "storage", "env": "dev"}
    assert got.cors[0]["origin"] == ["*"] and got.cors[0]["maxAgeSeconds"] == 3600
    assert [r["action"]["type"] for r in got.lifecycle_rules] == ["Delete"]
    assert got.versioning_enabled is True and got.metageneration == meta + 1
    # A label set to None is removed by the PATCH; the others stay.
    got.labels = {"team": "storage"}
    got.patch()
    assert client.get_bucket("gcs-bucket-patch").labels == {"team": "storage"}
    got.labels = {"Bad Key": "x"}
    with pytest.raises(exceptions.BadRequest):
        got.patch()
    # A precondition on the metageneration.
    stale = client.get_bucket("gcs-bucket-patch")
    stale.labels = {"team": "other"}
    with pytest.raises(exceptions.PreconditionFailed):
        stale.patch(if_metageneration_match=stale.metageneration - 1)
    # update() (PUT) replaces what the body leaves out.
    stale = client.get_bucket("gcs-bucket-patch")
    stale._properties.pop("cors", None)
    stale.update()
    assert client.get_bucket("gcs-bucket-patch").cors == []


def test_uniform_bucket_level_access_refuses_legacy_acls(client):
    b = client.create_bucket("gcs-uniform")
    b.blob("o.txt").upload_from_string(b"o")
    b.iam_configuration.uniform_bucket_level_access_enabled = True
    b.patch()
    got = client.get_bucket("gcs-uniform")
    assert got.iam_configuration.uniform_bucket_level_access_enabled is True
    assert got.iam_configuration.uniform_bucket_level_access_locked_time is not None
    with pytest.raises(exceptions.BadRequest, match="uniform bucket-level access"):
        b.blob("o.txt").acl.reload()
    with pytest.raises(exceptions.BadRequest, match="Cannot get legacy ACL for a bucket"):
        b.acl.reload()
    with pytest.raises(exceptions.BadRequest, match="Cannot use ACL API"):
        b.default_object_acl.save_predefined("publicRead")
    with pytest.raises(exceptions.BadRequest, match="Cannot insert legacy ACL for an object"):
        b.blob("p.txt").upload_from_string(b"p", predefined_acl="publicRead")
    # A resumable upload naming an ACL is refused at its start.
    with pytest.raises(exceptions.BadRequest):
        b.blob("big.bin", chunk_size=256 * 1024).upload_from_string(b"z" * (300 * 1024), predefined_acl="publicRead")
    # Uploads without an ACL still work, and turning it off again brings the ACLs back.
    b.blob("q.txt").upload_from_string(b"q")
    got.iam_configuration.uniform_bucket_level_access_enabled = False
    got.patch()
    assert "project-owners-0" in entities(b.blob("o.txt").acl)


def test_iam_policy_get_set_and_test_permissions(client, hearth):
    b = client.create_bucket("gcs-iam")
    policy = b.get_iam_policy()
    assert f"projectOwner:{hearth['project']}" in policy["roles/storage.legacyBucketOwner"]
    policy["roles/storage.objectViewer"] = {"allUsers"}
    saved = b.set_iam_policy(policy)
    assert saved["roles/storage.objectViewer"] == {"allUsers"} and saved.etag != policy.etag
    assert b.get_iam_policy()["roles/storage.objectViewer"] == {"allUsers"}
    # A policy read before that change carries a stale etag: 412.
    with pytest.raises(exceptions.PreconditionFailed):
        b.set_iam_policy(policy)
    asked = ["storage.buckets.get", "storage.objects.list", "storage.objects.create"]
    assert b.test_iam_permissions(asked) == asked
    with pytest.raises(exceptions.BadRequest):
        b.test_iam_permissions(["storage.objects.fly"])
    bad = b.get_iam_policy()
    bad["roles/storage.objectViewer"] = {"nobody"}
    with pytest.raises(exceptions.BadRequest):
        b.set_iam_policy(bad)


def test_public_access_prevention_refuses_new_public_grants(client):
    """GCS: with public access prevention enforced, requests that grant allUsers or
    allAuthenticatedUsers through an ACL or the IAM policy fail (412, what google-cloud-storage's own
    system test expects of make_public); grants made before stay and do not block other changes;
    an object given allUsers by the bucket's default object ACL is still created."""
    b = client.create_bucket("gcs-pap")
    old = b.blob("old.txt")
    old.upload_from_string(b"o")
    old.make_public()
    b.default_object_acl.all().grant_read()
    b.default_object_acl.save()
    b.iam_configuration.public_access_prevention = "enforced"
    b.patch()
    with pytest.raises(exceptions.PreconditionFailed, match="public access prevention is enforced"):
        b.make_public()
    fresh = b.blob("fresh.txt")
    # Created with the default object ACL's allUsers: allowed, the grant overridden.
    fresh.upload_from_string(b"f")
    assert entities(fresh.acl).get("allUsers") == "READER"
    private = b.blob("private.txt")
    private.upload_from_string(b"p", predefined_acl="private")
    with pytest.raises(exceptions.PreconditionFailed):
        private.make_public()
    with pytest.raises(exceptions.PreconditionFailed):
        b.blob("pub.txt").upload_from_string(b"x", predefined_acl="publicRead")
    assert b.get_blob("pub.txt") is None
    private.acl.reload()
    private.acl.all_authenticated().grant_read()
    with pytest.raises(exceptions.PreconditionFailed):
        private.acl.save()
    policy = b.get_iam_policy()
    policy["roles/storage.objectViewer"] = {"allUsers"}
    with pytest.raises(exceptions.PreconditionFailed):
        b.set_iam_policy(policy)
    # Grants made before enforcement stay and do not block other changes.
    b.labels = {"team": "a"}
    b.patch()
    old.metadata = {"k": "v"}
    old.patch()
    assert entities(old.acl)["allUsers"] == "READER"
    # Nor is the object readable through them.
    assert requests.get(old.public_url).status_code == 403


def test_public_url_reads_only_what_all_users_may(client):
    b = client.create_bucket("gcs-public-url")
    blob = b.blob("dir/pic.txt")
    blob.upload_from_string(b"picture")
    assert blob.public_url.startswith(client._connection.API_BASE_URL)
    # Private: GCS's XML 403 for an anonymous caller, as for a missing object.
    r = requests.get(blob.public_url)
    assert r.status_code == 403 and "<Code>AccessDenied</Code>" in r.text
    assert requests.get(b.blob("nothing").public_url).status_code == 403
    # A caller with credentials is the privileged one.
    assert requests.get(blob.public_url, headers={"Authorization": "Bearer owner"}).content == b"picture"
    blob.make_public()
    r = requests.get(blob.public_url)
    assert r.status_code == 200 and r.content == b"picture"
    assert requests.get(blob.public_url, headers={"Range": "bytes=0-2"}).content == b"pic"
    blob.make_private()
    assert requests.get(blob.public_url).status_code == 403
    # A bucket IAM binding for allUsers opens every object; a missing one is then 404.
    policy = b.get_iam_policy()
    policy["roles/storage.objectViewer"] = {"allUsers"}
    b.set_iam_policy(policy)
    assert requests.get(blob.public_url).content == b"picture"
    r = requests.get(b.blob("nothing").public_url)
    assert r.status_code == 404 and "<Code>NoSuchKey</Code>" in r.text
    # Public access prevention wins over both.
    b.iam_configuration.public_access_prevention = "enforced"
    b.patch()
    assert requests.get(blob.public_url).status_code == 403
    assert requests.get(client._connection.API_BASE_URL + "/no-such-bucket-here/x").status_code == 404


def test_public_url_head_and_conditions_over_http(client):
    """HEAD and the XML API's conditional headers through the real HTTP server: HEAD announces
    GET's length and sends no body; the ETag is the MD5 in hex (the XML API's, not the JSON API's)."""
    import hashlib
    b = client.create_bucket("gcs-public-head")
    blob = b.blob("page.html")
    blob.upload_from_string(b"<p>hello</p>" * 100, content_type="text/html", predefined_acl="publicRead")
    blob.reload()
    get = requests.get(blob.public_url)
    head = requests.head(blob.public_url)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["Content-Length"] == "1200" == get.headers["Content-Length"]
    for name in ["Content-Type", "ETag", "Last-Modified", "x-goog-generation", "x-goog-hash"]:
        assert head.headers[name] == get.headers[name], name
    assert get.headers["ETag"] == '"%s"' % hashlib.md5(b"<p>hello</p>" * 100).hexdigest()
    assert head.headers["x-goog-generation"] == str(blob.generation)
    ranged = requests.head(blob.public_url, headers={"Range": "bytes=0-9"})
    assert ranged.status_code == 206 and ranged.headers["Content-Length"] == "10" and ranged.content == b""
    assert requests.get(blob.public_url, headers={"If-None-Match": get.headers["ETag"]}).status_code == 304
    assert requests.get(blob.public_url, headers={"If-Modified-Since": get.headers["Last-Modified"]}).status_code == 304
    assert requests.get(blob.public_url, headers={"If-Match": '"nope"'}).status_code == 412
    assert requests.get(blob.public_url, headers={"x-goog-if-generation-match": str(blob.generation)}).status_code == 200
    assert requests.head(b.blob("missing").public_url).status_code == 403


def test_soft_deleted_objects_are_none_as_with_soft_delete_off(client):
    b = client.create_bucket("gcs-soft-delete")
    assert b.soft_delete_policy.retention_duration_seconds == 0
    blob = b.blob("gone.txt")
    blob.upload_from_string(b"g")
    generation = b.get_blob("gone.txt").generation
    blob.delete()
    assert list(b.list_blobs(soft_deleted=True)) == []
    b.blob("live.txt").upload_from_string(b"l")
    assert [x.name for x in b.list_blobs()] == ["live.txt"] and list(b.list_blobs(soft_deleted=True)) == []
    assert b.get_blob("gone.txt", generation=generation, soft_deleted=True) is None
    assert b.get_blob("live.txt", generation=b.get_blob("live.txt").generation, soft_deleted=True) is None
    with pytest.raises(exceptions.NotFound):
        b.restore_blob("gone.txt", generation=generation)
