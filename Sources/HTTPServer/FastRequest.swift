import HTTPTypes

/// A request the byte lane takes: origin-form target, HTTP/1.1; a `GET` or `HEAD` without a body, or a write
/// (`POST`, `PUT`, `DELETE`) with a `Content-Length` body (none for a `DELETE` without one) for the write screen.
public struct FastRequest: Equatable, Sendable {
    enum Method: Equatable, Sendable {
        case get, head, post, put, delete

        var isWrite: Bool { self != .get && self != .head }

        var http: HTTPRequest.Method {
            switch self {
            case .get: .get
            case .head: .head
            case .post: .post
            case .put: .put
            case .delete: .delete
            }
        }
    }

    var method: Method
    /// The request target, path and query as they came.
    var target: String
    var requestID: String?
    /// `Connection: close`.
    var close: Bool
    /// A write's `Authorization` header (nil for reads, which never need it in the lane).
    var authorization: Substring? = nil
    /// A read's `Accept-Encoding` and `If-None-Match` (a tile's coding and revalidation).
    var acceptEncoding: String? = nil
    var ifNoneMatch: String? = nil

    var isHead: Bool { method == .head }

    /// The largest write body the lane waits for: a write whose body is larger goes to the parser behind.
    static let largestWriteBody = 16_384

    enum Parsed: Equatable {
        /// A whole request of `length` bytes, its body included.
        case request(FastRequest, length: Int)
        /// The bytes so far start a request the lane could take.
        case incomplete
        /// For the HTTP parser behind.
        case other
    }

    /// Parses the request at the start of `bytes`. Anything short of the plain forms above is `.other`, as is a
    /// head longer than half of `maximumHeadSize` or with more than 64 fields (the parser behind applies the
    /// limits); so is an incomplete head already that long. `writes`: whether writes are parsed at all (the lane
    /// screens some); a write body over `maximumBodySize` or `largestWriteBody` is `.other` (the parser behind
    /// answers 413 for the first).
    static func parse(_ bytes: UnsafeRawBufferPointer, maximumHeadSize: Int, writes: Bool = false, maximumBodySize: Int = 0) -> Parsed {
        let limit = maximumHeadSize / 2
        let count = bytes.count
        // Method.
        let method: Method
        var i: Int
        if startsWith(bytes, "GET ") {
            (method, i) = (.get, 4)
        } else if startsWith(bytes, "HEAD ") {
            (method, i) = (.head, 5)
        } else if writes, startsWith(bytes, "POST ") {
            (method, i) = (.post, 5)
        } else if writes, startsWith(bytes, "PUT ") {
            (method, i) = (.put, 4)
        } else if writes, startsWith(bytes, "DELETE ") {
            (method, i) = (.delete, 7)
        } else {
            let couldBeWrite = writes && (couldStart(bytes, "POST ") || couldStart(bytes, "PUT ") || couldStart(bytes, "DELETE "))
            return couldStart(bytes, "GET ") || couldStart(bytes, "HEAD ") || couldBeWrite ? .incomplete : .other
        }
        // Target: origin form, characters a URI may hold (RFC 3986), no fragment.
        let targetStart = i
        while i < count, bytes[i] != UInt8(ascii: " ") {
            guard isTargetByte(bytes[i]) else { return .other }
            i += 1
        }
        guard i < count else { return i > limit ? .other : .incomplete }
        guard i > targetStart, bytes[targetStart] == UInt8(ascii: "/") else { return .other }
        let targetEnd = i
        i += 1
        // Version.
        let version = "HTTP/1.1\r\n"
        let available = min(count - i, version.utf8.count)
        guard zip(version.utf8.prefix(available), UnsafeRawBufferPointer(rebasing: bytes[i..<(i + available)])).allSatisfy({ $0 == $1 }) else {
            return .other
        }
        guard available == version.utf8.count else { return .incomplete }
        i += available
        // Fields.
        var requestID: String?
        var close = false
        var sawConnection = false
        var fields = 0
        var authorization: Substring?
        var acceptEncoding: String?
        var ifNoneMatch: String?
        var bodyLength: Int?
        while true {
            guard i < count else { return i > limit ? .other : .incomplete }
            if bytes[i] == UInt8(ascii: "\r") {
                guard i + 1 < count else { return .incomplete }
                guard bytes[i + 1] == UInt8(ascii: "\n") else { return .other }
                i += 2
                break
            }
            fields += 1
            guard fields <= 64 else { return .other }
            let nameStart = i
            while i < count, bytes[i] != UInt8(ascii: ":") {
                guard isTokenByte(bytes[i]) else { return .other }
                i += 1
            }
            guard i < count else { return i > limit ? .other : .incomplete }
            guard i > nameStart else { return .other }
            let name = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<i])
            i += 1
            var valueStart = i
            while i < count, bytes[i] != UInt8(ascii: "\r") {
                let byte = bytes[i]
                guard byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte < 0x7F) else { return .other }
                i += 1
            }
            guard i + 1 < count else { return i > limit ? .other : .incomplete }
            guard bytes[i + 1] == UInt8(ascii: "\n") else { return .other }
            var valueEnd = i
            i += 2
            while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueEnd])
            if equalsLowercased(name, "x-request-id") {
                guard requestID == nil else { return .other }
                requestID = String(decoding: value, as: UTF8.self)
            } else if equalsLowercased(name, "connection") {
                guard !sawConnection else { return .other }
                sawConnection = true
                if equalsLowercased(value, "close") { close = true } else if !equalsLowercased(value, "keep-alive") { return .other }
            } else if method.isWrite && equalsLowercased(name, "content-length") {
                // One length of decimal digits (a list or a sign is the parser's to judge), within the bounds.
                guard bodyLength == nil, !value.isEmpty, value.count <= 9, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return .other }
                let length = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                guard length <= maximumBodySize, length <= largestWriteBody else { return .other }
                bodyLength = length
            } else if method.isWrite && equalsLowercased(name, "authorization") {
                guard authorization == nil else { return .other }
                authorization = String(decoding: value, as: UTF8.self)[...]
            } else if !method.isWrite && equalsLowercased(name, "accept-encoding") {
                // One line: several would be joined by the router, which is left to do so.
                guard acceptEncoding == nil else { return .other }
                acceptEncoding = String(decoding: value, as: UTF8.self)
            } else if !method.isWrite && equalsLowercased(name, "if-none-match") {
                guard ifNoneMatch == nil else { return .other }
                ifNoneMatch = String(decoding: value, as: UTF8.self)
            } else if equalsLowercased(name, "content-length") || equalsLowercased(name, "transfer-encoding")
                || equalsLowercased(name, "expect") || equalsLowercased(name, "upgrade")
            {
                return .other
            }
        }
        guard i <= limit else { return .other }
        // A write is taken whole, its body included.
        let length = i + (bodyLength ?? 0)
        guard length <= count else { return .incomplete }
        let target = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[targetStart..<targetEnd]), as: UTF8.self)
        let request = FastRequest(
            method: method,
            target: target,
            requestID: requestID,
            close: close,
            authorization: authorization,
            acceptEncoding: acceptEncoding,
            ifNoneMatch: ifNoneMatch
        )
        return .request(request, length: length)
    }

    private static func startsWith(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return prefix.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[$0] == expected[$0] } }
    }

    /// `bytes` is shorter than `prefix` and begins it.
    private static func couldStart(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        guard bytes.count < prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { expected in bytes.indices.allSatisfy { bytes[$0] == expected[$0] } }
    }

    /// ASCII case-insensitive comparison with a lowercase name of letters and `-`.
    private static func equalsLowercased(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in (0..<bytes.count).allSatisfy { bytes[$0] | 0x20 == expected[$0] } }
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// RFC 3986 unreserved, reserved but `#`, and `%`.
    private static func isTargetByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"),
            UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "%"):
            true
        default: false
        }
    }
}
