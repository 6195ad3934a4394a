import API
import Access
import BundledData
import Foundation
import Gazetteer
import GeoCore
import HTTPServer
import Hummingbird
import Logging
import SearchEngine
import Synchronization

extension Problem {
    /// The router's answer: the same fields, in the same order, as the byte lane writes (`ResponseHead`).
    func response(requestID: String) -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        headers[RequestID.header] = requestID
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json(requestID: requestID))))
    }
}

extension Problem {
    /// The problem a typed error of the core modules answers (the fast lane and the middleware both ask here);
    /// nil for anything else. A storage failure is a 500 whose cause the caller logs.
    public static func of(_ error: any Error) -> Problem? {
        switch error {
        case let problem as Problem: return problem
        case let error as ParameterError: return Problem(.badRequest, error.description)
        case let error as BodyError: return Problem(.badRequest, error.description)
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
        let requestID = RequestID.of(request.headers[RequestID.header])
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
