/// Where a call's request header fields keep what the call asks of them, found in one pass.
///
/// A call looked for `:path`, the end of the pseudo-headers, a pseudo-header after them, and then
/// `content-type`, `grpc-encoding`, `grpc-timeout` and (twice: the caller, the request log)
/// `authorization` in the metadata — seven walks of the same dozen fields per call, each comparing
/// lengths and names again. Each place is the one its own walk found: the first `:path` of all the
/// fields, the first of each metadata name among the fields that are not pseudo-headers. Places,
/// not strings: nothing is copied (retained) while the fields are walked.
struct RequestFields {
    /// The first `:path`'s index; -1: none.
    private(set) var path = -1
    /// How many pseudo-headers lead the list (the metadata start there).
    private(set) var metadataStart = 0
    /// Whether a pseudo-header follows a regular field (nghttp2 resets such a stream; the metadata
    /// are then a copy without the pseudo-headers).
    private(set) var pseudoAfterMetadata = false
    /// The first metadata field's index of each name; -1: none.
    private(set) var contentType = -1
    private(set) var encoding = -1
    private(set) var timeout = -1
    private(set) var authorization = -1

    init(_ fields: [(name: String, value: String)]) {
        fields.withUnsafeBufferPointer { list in
            var inMetadata = false
            for i in list.indices {
                // The length first: most names differ in it, and comparing two strings of different
                // content is a call into the runtime's general comparison.
                let count = list[i].name.utf8.count
                if list[i].name.utf8.first == UInt8(ascii: ":") {
                    if inMetadata { pseudoAfterMetadata = true } else { metadataStart = i + 1 }
                    if path < 0 && count == 5 && list[i].name == ":path" { path = i }
                    continue
                }
                inMetadata = true
                if count == 12 {
                    if contentType < 0 && list[i].name == "content-type" {
                        contentType = i
                    } else if timeout < 0 && list[i].name == "grpc-timeout" {
                        timeout = i
                    }
                } else if count == 13 {
                    if authorization < 0 && list[i].name == "authorization" {
                        authorization = i
                    } else if encoding < 0 && list[i].name == "grpc-encoding" {
                        encoding = i
                    }
                }
            }
        }
    }
}
