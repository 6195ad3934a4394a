import BundledData
import HTTPTypes
import NIOCore
import Synchronization

/// An RFC 9457 problem: the body every error answers with (`application/problem+json`).
public struct Problem: Error, Sendable {
    public let status: HTTPResponse.Status
    public let detail: String
    /// Seconds, for `Retry-After` (a 429 or 503 that waiting cures).
    public var retryAfter: Int?

    public init(_ status: HTTPResponse.Status, _ detail: String, retryAfter: Int? = nil) {
        self.status = status
        self.detail = detail
        self.retryAfter = retryAfter
    }

    public static func badRequest(_ detail: String) -> Problem { Problem(.badRequest, detail) }

    /// The problem+json body.
    public func json(requestID: String) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("type")
        json.string("about:blank")
        json.key("title")
        json.string(status.reasonPhrase)
        json.field("status", status.code)
        json.key("detail")
        json.string(detail)
        json.key("requestId")
        json.string(requestID)
        json.endObject()
        return json.buffer
    }

    /// A whole HTTP/1.1 answer that closes the connection, for the connection guards that answer below the router:
    /// written by the byte lane's response writer (`ResponseHead`).
    func rawResponse(serverName: String = "poi") -> ByteBuffer {
        let requestID = RequestID.next()
        var buffer = ByteBuffer()
        ResponseHead(problem: self, body: json(requestID: requestID), requestID: requestID, server: serverName)
            .write(to: &buffer, includeBody: true, close: true)
        return buffer
    }
}

/// Request ids: the client's `X-Request-Id` when it sends one, else a per-process random prefix and a counter —
/// unique, and far cheaper than a UUID per request.
public enum RequestID {
    public static let header = HTTPField.Name("X-Request-Id")!
    static let prefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
    static let counter = Atomic<UInt64>(0)

    private static let prefixBytes = Array((prefix + "-").utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The client's id when it is at most 64 characters long, else a new one.
    public static func of(_ requested: String?) -> String {
        requested.flatMap { $0.count <= 64 ? $0 : nil } ?? next()
    }

    /// `prefix-counter`, the counter in hexadecimal, written into one stack buffer: a String made once per request.
    public static func next() -> String {
        var number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { text in
            var end = text.count
            repeat {
                end -= 1
                text[end] = hexDigits[Int(number & 0xF)]
                number >>= 4
            } while number > 0
            let start = end - prefixBytes.count
            for (i, byte) in prefixBytes.enumerated() { text[start + i] = byte }
            return String(decoding: UnsafeBufferPointer(rebasing: text[start...]), as: UTF8.self)
        }
    }
}
