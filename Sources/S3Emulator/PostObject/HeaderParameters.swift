import Foundation

/// `type; name=value; name="quoted value"` header values (Content-Type, Content-Disposition).
enum HeaderParameters {
    /// The leading token and the parameters (names lower-cased, values unquoted, in order), or nil
    /// when a quoted string is not terminated.
    ///
    /// Inside quotes only `\"` and `\\` are escapes: browsers send file names with backslashes
    /// (`C:\dir\a.txt`) unescaped, and S3 keeps those backslashes to cut the path off.
    static func parse(_ text: String) -> (type: String, parameters: [(String, String)])? {
        let b = Array(text.utf8)
        var i = 0
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 } }
        let typeStart = i
        while i < b.count, b[i] != 0x3B { i += 1 }
        let type = String(decoding: b[typeStart..<i], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        var parameters: [(String, String)] = []
        while i < b.count {
            guard b[i] == 0x3B else { return nil }
            i += 1
            skipSpace()
            if i == b.count { break }
            let nameStart = i
            while i < b.count, b[i] != 0x3D, b[i] != 0x3B, b[i] != 0x20, b[i] != 0x09 { i += 1 }
            let name = String(decoding: b[nameStart..<i], as: UTF8.self).lowercased()
            skipSpace()
            guard i < b.count, b[i] == 0x3D else {
                // A parameter without a value carries nothing a form needs.
                while i < b.count, b[i] != 0x3B { i += 1 }
                continue
            }
            i += 1
            skipSpace()
            var value = [UInt8]()
            if i < b.count, b[i] == 0x22 {
                i += 1
                var closed = false
                while i < b.count {
                    let c = b[i]
                    if c == 0x5C, i + 1 < b.count, b[i + 1] == 0x22 || b[i + 1] == 0x5C {
                        value.append(b[i + 1])
                        i += 2
                    } else if c == 0x22 {
                        closed = true
                        i += 1
                        break
                    } else {
                        value.append(c)
                        i += 1
                    }
                }
                guard closed else { return nil }
                skipSpace()
            } else {
                let valueStart = i
                while i < b.count, b[i] != 0x3B { i += 1 }
                value = Array(b[valueStart..<i])
                while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
            }
            if !name.isEmpty, !parameters.contains(where: { $0.0 == name }) {
                parameters.append((name, String(decoding: value, as: UTF8.self)))
            }
        }
        return (type, parameters)
    }

    /// Decodes an RFC 8187 extended value (`UTF-8''na%C3%AFve.txt`); nil for other charsets.
    static func decodeExtendedValue(_ text: String) -> String? {
        let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3, pieces[0].lowercased() == "utf-8" else { return nil }
        var out = [UInt8]()
        var bytes = Array(pieces[2].utf8)[...]
        while let c = bytes.popFirst() {
            if c == 0x25, bytes.count >= 2, let h = SigV4Encoding.hexValue(bytes[bytes.startIndex]),
               let l = SigV4Encoding.hexValue(bytes[bytes.startIndex + 1]) {
                out.append(h << 4 | l)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(c)
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}
