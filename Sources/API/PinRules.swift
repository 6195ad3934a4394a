import Foundation
import Records
import SearchEngine

/// The rules of a pin's fields, for every wire format that writes pins (v1 and On the Map): names and keys at most
/// 200 characters, mapString at most 500, none with control characters; mediaURL empty or an absolute http/https
/// URL — or, where the format keeps any text (On the Map, as Parse did), at most 2000 characters. The engine checks
/// only what its indexes need (a valid position).
public enum PinRules {
    public static func check(_ input: PinInput, mediaURLMustBeURL: Bool = true) throws(ParameterError) {
        for (name, value, maximum) in [
            ("uniqueKey", input.uniqueKey, 200), ("firstName", input.firstName, 200), ("lastName", input.lastName, 200),
            ("mapString", input.mapString, 500),
        ] {
            guard value.unicodeScalars.count <= maximum else { throw ParameterError(name, "must be at most \(maximum) characters") }
            guard !value.containsControlCharacter else {
                throw ParameterError(name, "must not contain control characters")
            }
        }
        let url = input.mediaURL
        guard !url.isEmpty else { return }
        if mediaURLMustBeURL {
            guard url.unicodeScalars.count <= 2_000, let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
                ["http", "https"].contains(scheme), parsed.host?.isEmpty == false
            else { throw ParameterError("mediaURL", "must be an absolute http or https URL") }
        } else {
            guard url.unicodeScalars.count <= 2_000, !url.containsControlCharacter else {
                throw ParameterError("mediaURL", "must be at most 2000 characters without control characters")
            }
        }
    }
}
