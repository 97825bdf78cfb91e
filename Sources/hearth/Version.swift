/// The release this binary reports.
enum Version {
    static let string = "0.1.0"
}
