import Foundation

/// ISO 8601 UTC timestamps with milliseconds, as records carry them.
public enum Timestamp {
    public static func now() -> String { string(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` from integer milliseconds, so no floating-point rounding can change the digits.
    /// A time before 1970 counts its milliseconds forward from the second before it, as the calendar does.
    public static func string(milliseconds: Int64) -> String {
        let (quotient, remainder) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        var seconds = time_t(remainder < 0 ? quotient - 1 : quotient)
        let millis = Int(remainder < 0 ? remainder + 1000 : remainder)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let year = Int(parts.tm_year) + 1900
        let fields = [Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec)]
        guard (0...9999).contains(year) else {
            return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, fields[0], fields[1], fields[2], fields[3], fields[4], millis)
        }
        // The digits by hand: `String(format:)` went through Foundation's formatter, 2.4 % of a pin write's CPU.
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int, digits: Int, at start: Int) {
                var value = value
                for k in stride(from: start + digits - 1, through: start, by: -1) {
                    buffer[k] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, digits: 4, at: 0)
            for (k, separator) in zip([4, 7, 10, 13, 16, 19], "--T::.".utf8) { buffer[k] = separator }
            for (k, value) in fields.enumerated() { put(value, digits: 2, at: 5 + 3 * k) }
            put(millis, digits: 3, at: 20)
            buffer[23] = UInt8(ascii: "Z")
            return 24
        }
    }
}
