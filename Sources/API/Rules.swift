import Foundation

/// The rules of the parameters more than one operation shares, each written once: the messages are what the
/// problem+json `detail` (and the CLI's error) says after the parameter's name, and what the OpenAPI document states.
public enum Rules {
    public static let limitRange = 1...100
    /// Street lines per /v1/streets answer.
    public static let streetsLimitRange = 1...5_000
    public static let latitude = "must be a number between -90 and 90"
    public static let longitude = "must be a number between -180 and 180"
    public static let radius = "must be a number of metres greater than 0 and at most 1000000"
    public static let maximumRadius = 1_000_000.0
    public static let precision = "must be an integer between 1 and 12"
    public static let offset = "must be an integer between 0 and 10000"
    public static let maximumOffset = 10_000
    public static let maximumTextLength = 500

    /// A keyword text: at most 500 characters (Unicode scalars, as JSON Schema's maxLength counts), not empty once
    /// trimmed, no control characters. Answers the trimmed text.
    public static func text(_ value: String, parameter: String) throws(ParameterError) -> String {
        guard value.unicodeScalars.count <= maximumTextLength else { throw ParameterError(parameter, "must be at most 500 characters") }
        let trimmed = trimmingWhitespace(value)
        guard !trimmed.isEmpty else { throw ParameterError(parameter, "must not be empty") }
        guard !trimmed.unicodeScalars.contains(where: isControl) else { throw ParameterError(parameter, "must not contain control characters") }
        return trimmed
    }

    /// `value` without the white space at either end, as Foundation's `.whitespacesAndNewlines` trims it — Unicode's
    /// White_Space scalars and the zero-width space U+200B — but without its bridging to NSString, which was 0.8 % of
    /// a search request's CPU; a text with none at its ends is not copied.
    static func trimmingWhitespace(_ value: String) -> String {
        let scalars = value.unicodeScalars
        guard let first = scalars.first, let last = scalars.last, isWhitespace(first) || isWhitespace(last) else { return value }
        guard let start = scalars.firstIndex(where: { !isWhitespace($0) }), let end = scalars.lastIndex(where: { !isWhitespace($0) }) else {
            return ""
        }
        return String(Substring(scalars[start...end]))
    }

    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar == "\u{200B}" }

    /// A control character (general category Cc), ASCII's answered without the property tables.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII ? scalar.value < 0x20 || scalar.value == 0x7F : scalar.properties.generalCategory == .control
    }
}
