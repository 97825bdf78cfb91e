/// One element of a parsed request document (namespace prefixes removed, attributes dropped).
struct XMLElement: Sendable, Equatable {
    /// Local name (`Key` for `<s3:Key>`).
    var name: String
    /// Child elements in document order.
    var children: [XMLElement] = []
    /// Character data directly inside this element (entities and CDATA resolved).
    var text: String = ""

    /// The first child named `name`.
    func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }

    /// Every child named `name`, in order.
    func children(named name: String) -> [XMLElement] { children.filter { $0.name == name } }

    /// The text of the first child named `name`.
    func childText(_ name: String) -> String? { child(name)?.text }
}
