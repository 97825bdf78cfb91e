/// proto2 groups (wire types 3 and 4), which current protobuf no longer writes but older formats
/// still hold: the Datastore `EntityProto` of Cloud Firestore emulator exports nests its key paths,
/// geo points and references as groups. Kept apart from `nextField()`, which rejects them, so
/// that nothing reading today's messages accepts a group by accident.
extension ProtoReader {
    /// Start-group and end-group wire types.
    public static let startGroup: UInt8 = 3
    public static let endGroup: UInt8 = 4

    /// The next field's number and raw wire type (0–5, groups included); nil at the end.
    /// - Throws: on a malformed tag, field number 0 or above 2²⁹−1, or wire type 6 or 7.
    public mutating func nextTag() throws(ProtoDecodingError) -> (number: Int, wireType: UInt8)? {
        guard !isAtEnd else { return nil }
        let at = offset
        let key = try readVarint()
        let number = key >> 3, type = UInt8(key & 7)
        guard number >= 1, number <= 0x1FFF_FFFF else { throw ProtoDecodingError("invalid field number \(number)", at: at) }
        guard type <= 5 else { throw ProtoDecodingError("unsupported wire type \(type) for field \(number)", at: at) }
        return (Int(number), type)
    }

    /// After the start-group tag of field `number`: a reader of the group's fields, this reader
    /// moved past its end-group tag.
    /// - Throws: when the group does not end, ends with another field's tag, or nests deeper than `maxDepth`.
    public mutating func readGroup(_ number: Int) throws(ProtoDecodingError) -> ProtoReader {
        let start = offset
        let end = try scanGroup(number, level: depth)
        return ProtoReader(bytes: bytes, range: start..<end, depth: depth + 1)
    }

    /// Moves past the group that starts here and its end tag; returns where the end tag starts.
    /// Groups nested inside are skipped the same way, one level deeper each, so hostile nesting
    /// stops at `maxDepth` instead of exhausting the stack.
    private mutating func scanGroup(_ number: Int, level: Int) throws(ProtoDecodingError) -> Int {
        let at = offset
        guard level < Self.maxDepth else {
            throw ProtoDecodingError("groups nested more than \(Self.maxDepth) levels deep", at: at)
        }
        while true {
            let tagStart = offset
            guard let (n, type) = try nextTag() else { throw ProtoDecodingError("group \(number) does not end", at: at) }
            if type == Self.endGroup {
                guard n == number else { throw ProtoDecodingError("group \(number) ended by the end of group \(n)", at: tagStart) }
                return tagStart
            }
            if type == Self.startGroup {
                _ = try scanGroup(n, level: level + 1)
            } else {
                try skipField(number: n, wireType: type)
            }
        }
    }

    /// Skips the value of a field of any wire type, a whole group included.
    public mutating func skipField(number: Int, wireType: UInt8) throws(ProtoDecodingError) {
        if wireType == Self.startGroup {
            _ = try readGroup(number)
        } else if let type = WireType(rawValue: wireType) {
            try skip(type)
        } else {
            throw ProtoDecodingError("end of group \(number) without its start", at: offset)
        }
    }
}
