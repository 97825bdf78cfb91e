/// One `<CORSRule>` of a bucket's CORS configuration.
struct CORSRule: Sendable, Equatable {
    var id: String?
    var allowedHeaders: [String] = []
    var allowedMethods: [String] = []
    var allowedOrigins: [String] = []
    var exposeHeaders: [String] = []
    var maxAgeSeconds: Int?
}
