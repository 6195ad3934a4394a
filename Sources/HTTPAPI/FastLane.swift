import BundledData
import Dispatch
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// What the fast lane needs: the read operations, the request metrics and the `Server` header.
struct FastLane: Sendable {
    let reads: ReadRoutes
    let metrics: EndpointMetrics?
    let serverName: String
    let logger: Logger
}

/// The fast lane for read operations (DESIGN.md §4, issue 17): a GET or HEAD of a read route is answered right here
/// on the connection's event loop — the request parsed, the engine asked synchronously and the answer written in
/// one flush — instead of crossing into a Swift task and Hummingbird's router and middleware and back. The answer
/// is made by the same `ReadHandler` the router calls, with the same headers (Content-Type, Content-Length,
/// X-Request-Id, Date, Server), problem+json for errors and the same metrics; the identity tests compare the two
/// paths byte for byte.
///
/// Everything else — writes, other routes, a read that arrives while an earlier request of the connection is still
/// being answered by Hummingbird (so that pipelined answers keep their order) — is passed on unchanged. The
/// handler sits after Hummingbird's connection-state handler, so keep-alive, `Connection: close` and the idle
/// timeout see the fast answers as they see any other, and the connection guards (timeouts, limits) stay in front.
final class FastLaneHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let lane: FastLane
    /// Requests passed on to Hummingbird whose answers have not ended yet.
    private var passedOn = 0
    /// The request being answered here, from its head to its end.
    private var current: HTTPRequest?
    /// Whether a request part was kept from the next handler since the last read completed.
    private var swallowed = false
    private var forwarded = false

    init(lane: FastLane) { self.lane = lane }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            if passedOn == 0, head.method == .get || head.method == .head, let path = head.path, lane.reads.match(Self.pathOnly(path)) != nil {
                current = head
                swallowed = true
                return
            }
            passedOn += 1
        case .body:
            if current != nil {
                swallowed = true
                return
            }
        case .end:
            if let head = current {
                current = nil
                swallowed = true
                answer(head, context: context)
                return
            }
        }
        forwarded = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // A read whose every part was answered here gave the next handler nothing: ask for more on its behalf.
        if swallowed && !forwarded { context.read() }
        swallowed = false
        forwarded = false
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), passedOn > 0 { passedOn -= 1 }
        context.write(data, promise: promise)
    }

    static func pathOnly(_ path: String) -> Substring {
        path.utf8.firstIndex(of: UInt8(ascii: "?")).map { path[..<$0] } ?? path[...]
    }

    private func answer(_ head: HTTPRequest, context: ChannelHandlerContext) {
        let target = head.path ?? "/"
        guard let route = lane.reads.match(Self.pathOnly(target)) else { return }
        let answer = lane.respond(route, target: target, requestID: head.headerFields[RequestID.header])
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: answer.fields))), promise: nil)
        if head.method != .head {
            context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// A read route's answer as both fast lanes write it: the header fields in the order the router's path writes them
/// (so that the answers are byte-identical), as `HTTPFields` for the response-part lane or as bytes for the lane in
/// front of the HTTP parser.
struct FastAnswer {
    let status: HTTPResponse.Status
    let contentType: String
    let body: [UInt8]
    let requestID: String
    /// A problem+json answer, whose fields the error middleware orders differently.
    let isProblem: Bool
    let date: String
    let server: String

    var fields: HTTPFields {
        var fields = HTTPFields()
        fields[.contentType] = contentType
        if isProblem {
            fields[RequestID.header] = requestID
            if status == .unauthorized { fields[.wwwAuthenticate] = "Bearer" }
            fields[.contentLength] = String(body.count)
        } else {
            fields[.contentLength] = String(body.count)
            fields[RequestID.header] = requestID
        }
        fields[.date] = date
        fields[.server] = server
        return fields
    }

    /// The whole HTTP/1.1 response as NIO's encoder writes `fields` (the body left out for HEAD); a `Connection:
    /// close` answer ends its fields with `connection: close`, as `HTTPGuard` adds it.
    ///
    /// Written in one pass into memory reserved once: NIO's `write*` calls check capacity, uniqueness and exclusive
    /// access each, which for a dozen pieces cost more than the copies (issue 17, `poi bench wire`).
    func write(to buffer: inout ByteBuffer, includeBody: Bool, close: Bool) {
        let reason = status == .ok ? "OK" : status.reasonPhrase
        let bound =
            160 + reason.utf8.count + contentType.utf8.count + requestID.utf8.count + date.utf8.count + server.utf8.count
            + (includeBody ? body.count : 0)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { memory in
            var out = RawOutput(base: memory.baseAddress!.assumingMemoryBound(to: UInt8.self))
            out.put("HTTP/1.1 ")
            out.put(status.code)
            out.put(" ")
            out.put(text: reason)
            out.put("\r\nContent-Type: ")
            out.put(text: contentType)
            if isProblem {
                out.put("\r\nX-Request-Id: ")
                out.put(text: requestID)
                if status == .unauthorized { out.put("\r\nWWW-Authenticate: Bearer") }
                out.put("\r\nContent-Length: ")
                out.put(body.count)
            } else {
                out.put("\r\nContent-Length: ")
                out.put(body.count)
                out.put("\r\nX-Request-Id: ")
                out.put(text: requestID)
            }
            out.put("\r\nDate: ")
            out.put(text: date)
            out.put("\r\nServer: ")
            out.put(text: server)
            if close { out.put("\r\nconnection: close") }
            out.put("\r\n\r\n")
            if includeBody { body.withUnsafeBufferPointer { out.put($0) } }
            assert(out.count <= bound)
            return out.count
        }
    }
}

/// Bytes written one after another from `base`, whose room the caller reserved.
private struct RawOutput {
    let base: UnsafeMutablePointer<UInt8>
    var count = 0

    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
        (base + count).update(from: start, count: bytes.count)
        count += bytes.count
    }

    mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func put(text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ put($0) }) == nil { put(Array(text.utf8)) }
    }

    mutating func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { put($0) }
    }

    /// A non-negative integer's decimal digits.
    mutating func put(_ value: Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            let start = DecimalDigits.write(UInt64(value), endingAt: digits.count, in: digits)
            put(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}

extension FastLane {
    /// The answer to a GET or HEAD of `target` (path and query, as it came), whose path `route` matched.
    /// `requestID` is the request's `X-Request-Id`, used when at most 64 characters long, else one is made.
    func respond(_ route: (entry: ReadRoutes.Entry, parameter: Substring?), target: String, requestID: String?) -> FastAnswer {
        let start = DispatchTime.now().uptimeNanoseconds
        let (entry, parameter) = route
        let path = FastLaneHandler.pathOnly(target)
        let query = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[target.utf8.index(after: $0)...] }
        let requestID = requestID.flatMap { $0.count <= 64 ? $0 : nil } ?? RequestID.next()
        let answer: FastAnswer
        do {
            let read = try entry.handler(ReadInput(query: FormQuery(query), pathParameter: parameter))
            answer = FastAnswer(
                status: read.status,
                contentType: read.contentType,
                body: read.body,
                requestID: requestID,
                isProblem: false,
                date: HTTPDate.now(),
                server: serverName
            )
        } catch {
            let problem: Problem
            if let known = Problem.of(error) {
                problem = known
                if problem.status == .internalServerError {
                    logger.error("storage failure", metadata: ["request": "\(requestID)", "error": "\(error)"])
                }
            } else {
                logger.error("unexpected error", metadata: ["request": "\(requestID)", "path": "\(path)", "error": "\(error)"])
                problem = Problem(.internalServerError, "the request could not be completed")
            }
            answer = FastAnswer(
                status: problem.status,
                contentType: "application/problem+json",
                body: problem.json(requestID: requestID),
                requestID: requestID,
                isProblem: true,
                date: HTTPDate.now(),
                server: serverName
            )
        }
        metrics?.record(route: entry.pattern, method: .get, status: answer.status, since: start)
        return answer
    }
}

/// The `Date` header's value (RFC 9110 §5.6.7), made once a second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((0, ""))
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func now() -> String {
        var now = time(nil)
        let second = Int(now)
        return cache.withLock { cached in
            if cached.second == second { return cached.text }
            var parts = tm()
            gmtime_r(&now, &parts)
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            let text =
                "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            cached = (second, text)
            return text
        }
    }
}
