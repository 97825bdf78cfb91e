import HearthCore

/// A source of response bytes read on demand, for bodies too large to hold in memory.
public protocol ResponseBodySource: AnyObject, Sendable {
    /// Fills `buffer` with the next bytes; returns how many were written, 0 at the end.
    /// Throwing aborts the response (the connection is closed).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Called once when the response is done or abandoned.
    func close()
}

/// An HTTP response.
public struct Response: Sendable {
    /// The body.
    public enum Body: Sendable {
        case empty
        case bytes([UInt8])
        /// Streamed from `source`; `length` sets Content-Length (nil: chunked transfer encoding).
        case stream(length: Int64?, source: any ResponseBodySource)
        /// Written as `source` has bytes, chunked, the connection parked in between (server-sent
        /// events); only on listeners with `allowsPush` (elsewhere: 500).
        case push(any PushBodySource)
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body
    /// Free-form facts for the request's log line (never secrets).
    public var logFields: [(String, JSON)] = []

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a byte body and a Content-Type.
    public init(status: Int, contentType: String, body: [UInt8], headers: HTTPHeaders = HTTPHeaders()) {
        var h = headers
        // Room for what wrappers add on the way out (CORS, request ids): growing from one field
        // reallocated the array for each.
        if h.fields.isEmpty { h.reserveCapacity(4) }
        h.set("Content-Type", contentType)
        self.init(status: status, headers: h, body: .bytes(body))
    }

    /// A JSON response (`application/json; charset=utf-8`).
    public static func json(_ value: JSON, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        Response(status: status, contentType: "application/json; charset=utf-8", body: Array(value.serialized().utf8), headers: headers)
    }

    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> Response {
        Response(status: status, contentType: contentType, body: Array(text.utf8))
    }

    /// The body when it is bytes (tests and small handlers); nil for streams.
    public var bodyBytes: [UInt8]? {
        switch body {
        case .empty: []
        case .bytes(let b): b
        case .stream, .push: nil
        }
    }
}
