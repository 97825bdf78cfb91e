/// The fields of a browser form upload that precede its file, as S3 reads them.
///
/// Field names are case-insensitive (`Policy`, `X-Amz-Signature` and `policy` are the same
/// field). A name sent several times has its values joined with commas, which is also the value a
/// policy condition sees ("If you have multiple fields with the same name, the values must be
/// separated by commas", POST Policy).
struct PostForm: Sendable {
    /// The fields in form order, names as sent.
    private(set) var fields: [(name: String, value: String)]

    init(_ fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    /// Every value of `name` (case-insensitive), in form order.
    func values(_ name: String) -> [String] {
        let lower = name.lowercased()
        return fields.filter { $0.name.lowercased() == lower }.map(\.value)
    }

    /// The value of `name`: its values joined with `,`; nil when the form has no such field.
    subscript(name: String) -> String? {
        let all = values(name)
        return all.isEmpty ? nil : all.joined(separator: ",")
    }

    /// Whether the form has a field `name`.
    func contains(_ name: String) -> Bool { !values(name).isEmpty }

    /// The distinct field names, lower-cased, in form order.
    var names: [String] {
        var seen = Set<String>()
        var out: [String] = []
        for field in fields {
            let lower = field.name.lowercased()
            if seen.insert(lower).inserted { out.append(lower) }
        }
        return out
    }

    /// The fields whose values `${filename}` applies to: all but the policy and its signature,
    /// which are compared byte for byte.
    private static let literalFields: Set<String> = ["policy", "x-amz-signature", "signature"]

    /// Replaces `${filename}` in every field value with the uploaded file's name: the text after
    /// the last `/` or `\` of what the client sent, or nothing ("If no file or file name is
    /// provided, the variable is replaced with an empty string", HTML Forms).
    mutating func substituteFilename(_ filename: String?) {
        let name = PostForm.baseName(filename ?? "")
        fields = fields.map { field in
            guard !PostForm.literalFields.contains(field.name.lowercased()), field.value.contains("${filename}") else { return field }
            return (field.name, field.value.replacingOccurrences(of: "${filename}", with: name))
        }
    }

    /// `C:\dir\a.txt` → `a.txt`, `dir/a.txt` → `a.txt`.
    static func baseName(_ path: String) -> String {
        guard let cut = path.lastIndex(where: { $0 == "/" || $0 == "\\" }) else { return path }
        return String(path[path.index(after: cut)...])
    }
}
