import API
import Access
import BundledData
import Foundation
import Gazetteer
import GeoCore
import Hummingbird
import Logging
import SearchEngine
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

    static func badRequest(_ detail: String) -> Problem { Problem(.badRequest, detail) }

    /// The problem+json body.
    func json(requestID: String) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("type")
        json.string("about:blank")
        json.key("title")
        json.string(status.reasonPhrase)
        json.key("status")
        json.number(status.code)
        json.key("detail")
        json.string(detail)
        json.key("requestId")
        json.string(requestID)
        json.endObject()
        return json.buffer
    }

    func response(requestID: String) -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        headers[RequestID.header] = requestID
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json(requestID: requestID))))
    }

    /// A whole HTTP/1.1 answer that closes the connection, for the connection guards that answer below the router.
    func rawResponse(extraHeaders: String = "") -> ByteBuffer {
        let requestID = RequestID.next()
        let body = json(requestID: requestID)
        var buffer = ByteBuffer()
        buffer.writeString(
            "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nContent-Type: application/problem+json\r\nContent-Length: \(body.count)\r\n"
                + "Connection: close\r\nX-Request-Id: \(requestID)\r\n\(extraHeaders)\r\n"
        )
        buffer.writeBytes(body)
        return buffer
    }
}

extension Problem {
    /// The problem a typed error of the core modules answers (the fast lane and the middleware both ask here);
    /// nil for anything else. A storage failure is a 500 whose cause the caller logs.
    static func of(_ error: any Error) -> Problem? {
        switch error {
        case let problem as Problem: return problem
        case let error as ParameterError: return Problem(.badRequest, error.description)
        case let error as SearchError:
            switch error {
            case .invalid: return Problem(.badRequest, error.description)
            case .notFound: return Problem(.notFound, error.description)
            case .storage: return Problem(.internalServerError, "the request could not be completed")
            case .unavailable: return Problem(.serviceUnavailable, "the store of record cannot be reached now; nothing was written, retry shortly")
            case .quota: return Problem(.forbidden, error.description)
            }
        case let error as AccessError:
            switch error {
            case .noCredentials(let message), .unauthenticated(let message): return Problem(.unauthorized, message)
            case .forbidden(let message): return Problem(.forbidden, message)
            case .limited(let message, let retryAfter): return Problem(.tooManyRequests, message, retryAfter: retryAfter)
            }
        case let error as GeoError: return Problem(.badRequest, error.description)
        case let error as GazetteerError: return Problem(.badRequest, error.description)
        default: return nil
        }
    }
}

/// Maps every error to problem+json in one place: typed errors of the core modules become 4xx with their own
/// message; anything unexpected is logged at error level with the request id and answered 500. Every response
/// carries an `X-Request-Id`.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let requestID = request.headers[RequestID.header].flatMap { $0.count <= 64 ? $0 : nil } ?? RequestID.next()
        do {
            var response = try await next(request, context)
            response.headers[RequestID.header] = requestID
            return response
        } catch let error where Problem.of(error) != nil {
            let problem = Problem.of(error)!
            if problem.status == .internalServerError {
                context.logger.error("storage failure", metadata: ["request": "\(requestID)", "error": "\(error)"])
            }
            return problem.response(requestID: requestID)
        } catch let error as HTTPError {
            let detail: String
            if error.status == .notFound, let routed = RouteTable.methods(for: request.uri.path),
                !routed.contains(where: { $0.rawValue == request.method.rawValue })
            {
                let allowed = (routed.contains(.get) ? routed.map(\.rawValue) + ["HEAD"] : routed.map(\.rawValue)).joined(separator: ", ")
                var response = Problem(.methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path); use \(allowed)")
                    .response(requestID: requestID)
                response.headers[.allow] = allowed
                return response
            }
            switch error.status {
            case .notFound: detail = "no route for \(request.method) \(request.uri.path); the API is described at /docs and GET /openapi.json"
            case .methodNotAllowed: detail = "\(request.method) is not allowed on \(request.uri.path)"
            case .contentTooLarge: detail = "the request body is larger than 1 MiB"
            default: detail = error.body ?? error.status.reasonPhrase
            }
            return Problem(error.status, detail).response(requestID: requestID)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            return Problem(.contentTooLarge, "the request body is larger than 1 MiB").response(requestID: requestID)
        } catch {
            context.logger.error("unexpected error", metadata: ["request": "\(requestID)", "path": "\(request.uri.path)", "error": "\(error)"])
            return Problem(.internalServerError, "the request could not be completed").response(requestID: requestID)
        }
    }
}

/// Request ids: the client's `X-Request-Id` when it sends one, else a per-process random prefix and a counter —
/// unique, and far cheaper than a UUID per request.
enum RequestID {
    static let header = HTTPFields.Element.Name("X-Request-Id")!
    static let prefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
    static let counter = Atomic<UInt64>(0)

    private static let prefixBytes = Array((prefix + "-").utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `prefix-counter`, the counter in hexadecimal, written into one stack buffer: a String made once per request.
    static func next() -> String {
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
