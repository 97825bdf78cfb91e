"""firebase-admin's `storage.bucket()`, as a Firebase backend uses it, against the Storage emulator."""
import os
import uuid

import firebase_admin
from firebase_admin import _utils, credentials, storage


class _Owner(credentials.Base):
    """The emulator admin credential (`Bearer owner`): no Google credentials exist on a test machine."""

    def get_credential(self):
        return _utils.EmulatorAdminCredentials()


def test_admin_bucket_uploads_lists_and_deletes(hearth):
    project = hearth["project"]
    app = firebase_admin.initialize_app(_Owner(), options={"projectId": project, "storageBucket": f"{project}.appspot.com"},
                                        name="storage-" + uuid.uuid4().hex[:8])
    try:
        bucket = storage.bucket(app=app)
        assert bucket.name == f"{project}.appspot.com"
        blob = bucket.blob("admin/report.json")
        blob.upload_from_string(b'{"ok": true}', content_type="application/json")
        assert [b.name for b in bucket.list_blobs(prefix="admin/")] == ["admin/report.json"]
        assert bucket.get_blob("admin/report.json").download_as_bytes() == b'{"ok": true}'
        # What an end user uploaded through the Firebase API is there for the backend too.
        blob.delete()
        assert bucket.get_blob("admin/report.json") is None
    finally:
        firebase_admin.delete_app(app)
    assert os.environ["FIREBASE_STORAGE_EMULATOR_HOST"] == os.environ["STORAGE_EMULATOR_HOST"].removeprefix("http://")
