/// The storage rules `hearth start` enforces when neither `--storage-rules` nor `rules/storage.rules`
/// in the working directory names a file: a copy of the repository's `rules/storage.rules`, compiled
/// into the binary so that the Storage emulator never runs without rules.
/// `CLITests.shippedStorageRulesAreTheRepositoryFile` fails when the two differ; copy the file here to fix it.
enum ShippedStorageRules {
    /// Shown as the file name in rules diagnostics and coverage.
    static let fileName = "storage.rules (shipped)"

    static let source = #"""
rules_version = '2';

// Cloud Storage rules shipped with Hearth: each signed-in user owns users/{uid}/…, and what they
// upload there must be an image under 5 MB. Everything else is denied (no rule, no access).
service firebase.storage {
  match /b/{bucket}/o {
    function isOwner(uid) {
      return request.auth != null && request.auth.uid == uid;
    }

    function isSmallImage() {
      return request.resource.size < 5 * 1024 * 1024
        && request.resource.contentType.matches('image/.*');
    }

    match /users/{uid}/{fileName} {
      allow get, list: if isOwner(uid);
      allow create, update: if isOwner(uid) && isSmallImage();
      allow delete: if isOwner(uid);
    }
  }
}

"""#
}
