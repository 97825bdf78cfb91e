/// The percent-encoding S3 applies to keys and prefixes in listings when `encoding-type=url`.
///
/// Letters, digits and `-_./*` stay as they are and every other byte of the UTF-8 form, a space
/// included, becomes `%XX` (upper-case hex): `quux ab/` is `quux%20ab/`, as ceph/s3-tests'
/// `test_bucket_list_encoding_basic` expects of S3 (botocore's `unquote_plus` reverses either).
enum S3URLEncoding {
    private static let hex = Array("0123456789ABCDEF".utf8)

    /// `text` encoded for an `encoding-type=url` listing.
    static func listingEncode(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "*"):
                out.append(c)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(c >> 4)])
                out.append(hex[Int(c & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` encoded as a URI path (RFC 3986 unreserved kept, `/` kept), for `Location` elements.
    static func pathEncode(_ text: String) -> String {
        var out = [UInt8]()
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(c)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(c >> 4)])
                out.append(hex[Int(c & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
