/// The rules `hearth start` enforces when neither `--rules` nor `rules/firestore.rules` in the working
/// directory names a file: a copy of the repository's `rules/firestore.rules`, compiled into the binary
/// so that Hearth started from any directory still checks rules instead of allowing everything.
/// `CLITests.shippedRulesAreTheRepositoryFile` fails when the two differ; copy the file here to fix it.
enum ShippedRules {
    /// Shown as the file name in rules diagnostics and coverage.
    static let fileName = "firestore.rules (shipped)"

    static let source = #"""
rules_version = '2';

// Hearth's shipped rules: file metadata that the uploads API and clients keep in Firestore.
// Documents live at users/{uid}/files/{fileId}; the bytes live in S3 under the key s3Key.
// Everything not matched below is denied (rules deny by default).
service cloud.firestore {
  match /databases/{database}/documents {

    match /users/{uid}/files/{fileId} {
      // Only the signed-in owner of the folder reads or writes it.
      function isOwner() {
        return request.auth != null && request.auth.uid == uid;
      }

      // Content types the uploads API accepts by default.
      function allowedContentTypes() {
        return ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/heic',
                'application/pdf', 'video/mp4', 'application/octet-stream'];
      }

      // A presigned URL must never be stored: it is a bearer credential until it expires. True when
      // no line of `text` starts with http (any case) and none carries a SigV4 signature. Callers join
      // every string field with newlines, so one regular expression checks them all.
      function noPresignedURL(text) {
        return !text.lower().matches('(?sm).*(^http|x-amz-signature).*');
      }

      // The key the uploads API issues: users/<uid>/uploads/<uuid>.<ext>, ext 1-16 alphanumerics.
      // The shape check guarantees the segment after 'users/' ends at the next '/', so comparing
      // that slice with uid + '/' pins the owner exactly (no regex built from uid).
      function validKey(key) {
        return key is string
          && key.matches('users/[^/]+/uploads/[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}[.][A-Za-z0-9]{1,16}')
          && key.size() > uid.size() + 6
          && key[6:uid.size() + 7] == uid + '/';
      }

      function validSize(data) {
        return !('size' in data) || (data.size is int && data.size >= 0);
      }

      function validOriginalName(data) {
        return !('originalName' in data) || (data.originalName is string && data.originalName.size() <= 1024);
      }

      // Every string field, one per line (fields that are not strings make this an error: denied).
      function stringFields(data) {
        return data.ownerUid + '\n' + data.storage + '\n' + data.s3Key + '\n' + data.contentType + '\n' + data.status
          + '\n' + data.get('originalName', '');
      }

      function validNewFile(data) {
        return data.keys().hasAll(['ownerUid', 'storage', 's3Key', 'contentType', 'status', 'createdAt'])
          && data.keys().hasOnly(['ownerUid', 'storage', 's3Key', 'contentType', 'status', 'createdAt', 'size', 'originalName'])
          && data.ownerUid == uid
          && data.storage == 's3'
          && validKey(data.s3Key)
          && data.contentType in allowedContentTypes()
          && data.status in ['pending', 'ready']
          && data.createdAt == request.time
          && validSize(data)
          && validOriginalName(data)
          && noPresignedURL(stringFields(data));
      }

      // An update may change only status (to pending or ready) and size.
      function validUpdate(data) {
        return data.diff(resource.data).affectedKeys().hasOnly(['status', 'size'])
          && data.status in ['pending', 'ready']
          && validSize(data)
          && noPresignedURL(stringFields(data));
      }

      allow read: if isOwner();
      allow create: if isOwner() && validNewFile(request.resource.data);
      allow update: if isOwner() && validUpdate(request.resource.data);
      allow delete: if isOwner();
    }
  }
}

"""#
}
