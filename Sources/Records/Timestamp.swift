import Foundation

/// ISO 8601 UTC timestamps with milliseconds, as records carry them.
public enum Timestamp {
    public static func now() -> String { string(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` from integer milliseconds, so no floating-point rounding can change the digits.
    public static func string(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour),
            Int(parts.tm_min),
            Int(parts.tm_sec),
            Int(milliseconds % 1000)
        )
    }
}
