import API
import Foundation
import Hummingbird

/// A request's query string as the wire layer's parameter source, decoded as HTML forms and every HTTP client
/// library encode it (application/x-www-form-urlencoded): `+` is a space and `%2B` a plus sign. (Hummingbird's
/// `uri.queryParameters` percent-decodes but keeps `+`, so `q=New+York` would reach the geocoder as "New+York".)
struct FormQuery: ParameterSource, Sequence {
    private let pairs: [(key: Substring, value: Substring)]

    init(_ query: String?) {
        guard let query, !query.isEmpty else {
            pairs = []
            return
        }
        pairs = query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (Self.decoded(parts[0]), parts.count > 1 ? Self.decoded(parts[1]) : "")
        }
    }

    /// `+` as a space, then percent-decoded; text that is not valid percent-encoded UTF-8 is kept as it came.
    private static func decoded(_ text: Substring) -> Substring {
        guard text.contains(where: { $0 == "+" || $0 == "%" }) else { return text }
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return Substring(spaced.removingPercentEncoding ?? spaced)
    }

    func lastValue(of name: String) -> Substring? {
        var found: Substring?
        for pair in pairs where pair.key == name { found = pair.value }
        return found
    }

    func makeIterator() -> IndexingIterator<[(key: Substring, value: Substring)]> { pairs.makeIterator() }
}

typealias QueryParameters = RequestParameters<FormQuery>

extension RequestParameters where Source == FormQuery {
    init(_ request: Request) { self.init(FormQuery(request.uri.query)) }
}
