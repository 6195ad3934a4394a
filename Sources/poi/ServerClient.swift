import API
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--server URL`: query commands ask a running `poi serve` instead of opening the database, and print the same.
enum ServerClient {
    /// GETs `path` with `query` from the server; a 4xx becomes a usage error carrying the server's detail.
    static func get(_ server: String, _ path: String, _ query: QueryItems) throws -> [UInt8] {
        guard var components = URLComponents(string: server), components.scheme == "http" || components.scheme == "https" else {
            throw CLIError.usage("--server must be an http:// or https:// URL")
        }
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + path
        components.queryItems = query.items.map { URLQueryItem(name: $0.name, value: $0.value) }
        guard let url = components.url else { throw CLIError.usage("--server must be a valid URL") }
        let box = ResultBox()
        let semaphore = DispatchSemaphore(value: 0)
        var request = URLRequest(url: url)
        request.timeoutInterval = 30
        URLSession.shared.dataTask(with: request) { data, response, error in
            box.set(data: data, status: (response as? HTTPURLResponse)?.statusCode, error: error)
            semaphore.signal()
        }.resume()
        semaphore.wait()
        let (data, status, error) = box.get()
        if let error { throw CLIError.failure("cannot reach \(server): \(error.localizedDescription)") }
        let bytes = [UInt8](data ?? Data())
        guard let status else { throw CLIError.failure("no answer from \(server)") }
        if (400..<500).contains(status) {
            let detail = Self.detail(bytes)
            if status == 404 && detail == nil { throw CLIError.failure("\(url.path): not found") }
            throw CLIError(message: detail ?? "the server answered \(status)", status: status == 404 ? 1 : 2)
        }
        guard status == 200 else { throw CLIError.failure("the server answered \(status)") }
        return bytes
    }

    /// Sends a request and waits for its answer: (status, body). Transport failures are CLI failures.
    static func send(_ request: URLRequest, uploading file: URL? = nil, server: String) throws -> (status: Int, body: [UInt8]) {
        let box = ResultBox()
        let semaphore = DispatchSemaphore(value: 0)
        let done: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            box.set(data: data, status: (response as? HTTPURLResponse)?.statusCode, error: error)
            semaphore.signal()
        }
        if let file {
            URLSession.shared.uploadTask(with: request, fromFile: file, completionHandler: done).resume()
        } else {
            URLSession.shared.dataTask(with: request, completionHandler: done).resume()
        }
        semaphore.wait()
        let (data, status, error) = box.get()
        if let error { throw CLIError.failure("cannot reach \(server): \(error.localizedDescription)") }
        guard let status else { throw CLIError.failure("no answer from \(server)") }
        return (status, [UInt8](data ?? Data()))
    }

    /// The URL of `path` on the server named by `--server`.
    static func url(_ server: String, _ path: String, _ query: [(String, String?)] = []) throws -> URL {
        guard var components = URLComponents(string: server), components.scheme == "http" || components.scheme == "https" else {
            throw CLIError.usage("--server must be an http:// or https:// URL")
        }
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + path
        let items = query.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
        components.queryItems = items.isEmpty ? nil : items
        guard let url = components.url else { throw CLIError.usage("--server must be a valid URL") }
        return url
    }

    /// The `detail` of a problem+json answer.
    static func detail(_ body: [UInt8]) -> String? {
        (try? JSONDecoder().decode(Answers.Problem.self, from: Data(body)))?.detail
    }

    private final class ResultBox: @unchecked Sendable {
        // SAFETY: written once by the URLSession callback before the semaphore is signalled, read after the wait.
        private var data: Data?
        private var status: Int?
        private var error: (any Error)?

        func set(data: Data?, status: Int?, error: (any Error)?) {
            self.data = data
            self.status = status
            self.error = error
        }

        func get() -> (Data?, Int?, (any Error)?) { (data, status, error) }
    }
}
