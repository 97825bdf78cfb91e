"""Where the official emulator contradicts Firestore's documentation, and Hearth follows the docs.

Each class names the documentation it rests on; CASES assigns script cases to classes. The
answers Hearth gives there are kept in fixtures/deviations.json (`python diffrun.py --deviations URL`
rewrites them from a running Hearth), and docs/firestore.md lists the classes.
"""

REST = "https://cloud.google.com/firestore/docs/reference/rest/v1"

CLASSES = {
    "generic-payload-message": (
        "https://cloud.google.com/apis/design/errors#error_messages",
        "The emulator answers every malformed or mistyped JSON body with \"Payload isn't valid for request.\"; "
        "Google's frontends name the field and the fault (\"Invalid JSON payload received. Unknown name …\", "
        "\"Invalid value at '…' (TYPE_…)\"), which Hearth says."),
    "internal-message": (
        f"{REST}/Precondition",
        "The emulator leaks its storage layer's text (\"entity already exists: EntityRef{…}\", \"no entity to "
        "update: app: …\", \"maximum entity size is …\"); the status is the documented one and Hearth words it "
        "as Firestore does (\"Document already exists: projects/…\", \"No document to update: projects/…\")."),
    "emulator-hangs": (
        f"{REST}/projects.databases.documents/get",
        "The emulator never answers these REST requests (a `transaction` or `readTime` query parameter on get, "
        "a text pageSize, a body name differing from the URL); Hearth answers them as documented."),
    "query-parameter-timestamps": (
        f"{REST}/projects.databases.documents/patch",
        "The emulator misreads timestamps given as query parameters (currentDocument.updateTime is taken as "
        "version 0, readTime as before the epoch); Hearth compares the given time."),
    "delete-write-result": (
        f"{REST}/WriteResult",
        "WriteResult.updateTime is \"Not set after a delete\"; the emulator sets it for a delete followed by "
        "a write of the same document."),
    "skipped-results": (
        f"{REST}/projects.databases.documents/runQuery#response-body",
        "skippedResults counts \"results that have been skipped due to an offset between the last response "
        "and the current response\": once, on the first answer; the emulator repeats the total on every "
        "answer, or drops it when the offset skipped everything."),
    "descending-name": (
        f"{REST}/projects.databases.documents/list",
        "Ordering by __name__ descending is documented (\"priority desc, __name__ desc\"); the emulator "
        "refuses descending key scans."),
    "partition-query": (
        f"{REST}/projects.databases.documents/partitionQuery",
        "The emulator does not implement partitionQuery (UNIMPLEMENTED); Hearth does."),
    "count-up-to": (
        f"{REST}/StructuredAggregationQuery#Count",
        "Count.upTo \"Must be greater than zero when present\"; the emulator accepts 0."),
    "aggregation-limit": (
        f"{REST}/StructuredAggregationQuery",
        "\"A minimum of one and maximum of five aggregations per query\": six are INVALID_ARGUMENT; the "
        "emulator fails with an internal error."),
    "bad-authorization": (
        "https://cloud.google.com/apis/design/errors#handling_errors",
        "A non-Bearer Authorization header is UNAUTHENTICATED (401); the emulator fails with an internal "
        "error."),
    "unknown-query-parameter": (
        "https://cloud.google.com/apis/docs/system-parameters",
        "Google's frontends bind query parameters to request fields and refuse one that is neither a field "
        "nor a system parameter (\"Unknown name … Cannot bind query parameter\"); the emulator ignores it."),
    "oneof-precondition": (
        f"{REST}/Precondition",
        "Precondition is a union (\"condition_type can be only one of\" exists, updateTime); the emulator "
        "accepts both."),
    "bool-parameter": (
        "https://protobuf.dev/programming-guides/json/",
        "A bool field takes true or false; the emulator reads currentDocument.exists=maybe as false."),
    "empty-projection": (
        f"{REST}/StructuredQuery#Projection",
        "Projection.fields: \"If empty, all fields are returned\"; the emulator returns none."),
    "nested-arrays": (
        "https://firebase.google.com/docs/firestore/manage-data/data-types",
        "An array cannot contain another array; the emulator's appendMissingElements stores one."),
    "list-without-collection": (
        f"{REST}/projects.databases.documents/list",
        "collectionId is optional: \"when not provided, Firestore will list documents from all collections "
        "under the provided parent\"; the emulator has no such route (404)."),
    "reserved-field-names": (
        "https://firebase.google.com/docs/firestore/quotas#limits_for_field_names",
        "Field names matching __.*__ are reserved; the emulator lets a transform of __name__ (or x.__name__) "
        "write a field named __key__, and a transform of __type__ a field named __type__."),
}

CASES = {
    "generic-payload-message": [
        "agg-two-kinds", "agg-unknown-field", "bg-tx-and-new", "bg-unknown-field", "bw-bad-value", "bw-unknown-field",
        "commit-tx-not-base64", "commit-unknown-write-key", "commit-update-and-delete-one", "composite-bogus-op",
        "fields-not-map", "lcid-unknown", "limit-object", "nesting-100", "order-direction-bogus", "patch-array-body",
        "patch-invalid-json", "patch-unknown-body-field", "q-op-bogus", "q-unary-bogus", "run-query-bad-json",
        "run-query-readtime-bad", "run-query-unknown-field", "tf-append-value-form", "tf-server-bogus", "tf-two-kinds",
        "tx-begin-both", "tx-begin-unknown", "unknown-key", "value-array-bad-item", "value-bool-number", "value-bytes-bad",
        "value-double-huge", "value-double-nan-lower", "value-int-float", "value-int-overflow", "value-int-text",
        "value-null-bogus", "value-ts-date-only", "value-ts-lower-t", "value-ts-lower-z", "value-ts-no-zone",
        "value-ts-number", "value-ts-year-zero", "value-two-kinds", "value-unknown-kind", "value-value-not-object",
    ],
    "internal-message": [
        "bw-mixed", "commit-delete-exists-true", "commit-exists-false", "commit-exists-true-missing", "create-existing",
        "delete-exists-true-missing", "patch-exists-false-existing", "patch-exists-true-missing", "r-post-create-exists",
        "r-post-create-exists-owner", "tf-exists-true-missing", "size-many-fields",
    ],
    "emulator-hangs": ["get-tx-and-readtime", "get-tx-bad", "get-tx-not-base64", "list-page-text", "patch-name-mismatch",
                       "tx-get"],
    "query-parameter-timestamps": ["delete-updatetime-stale", "get-readtime-bad", "list-readtime-old", "patch-updatetime-bad",
                                   "patch-updatetime-stale", "tx-get-readtime"],
    "delete-write-result": ["commit-delete-and-update"],
    "skipped-results": ["offset-beyond", "order-desc-offset", "walk-eq-asc-offset", "walk-eq-des-offset"],
    "descending-name": ["list-order-name", "order-name-desc"],
    "partition-query": ["partition", "partition-no-count", "partition-not-group"],
    "count-up-to": ["agg-count-upto-zero"],
    "aggregation-limit": ["agg-six"],
    "bad-authorization": ["r-bad-auth-scheme"],
    "unknown-query-parameter": ["delete-body-ignored-param", "get-unknown-param", "list-collection-id-param",
                                "list-unknown-param"],
    "oneof-precondition": ["patch-exists-and-updatetime"],
    "bool-parameter": ["patch-exists-maybe"],
    "empty-projection": ["select-empty"],
    "nested-arrays": ["tf-append-nested-array", "tf-append-nested-array-read"],
    "reserved-field-names": ["tf-name-path", "tf-name-path-read", "tf-reserved-top", "tf-reserved-top-read",
                             "tf-reserved-under-name", "tf-reserved-under-name-read"],
    "list-without-collection": ["get-list-root"],
}


def by_case():
    """{case name: class name}."""
    out = {}
    for cls, names in CASES.items():
        for n in names:
            assert n not in out, n
            out[n] = cls
    return out
