import Foundation
import GeoCore
import Records
import TestSupport
import Testing

/// Record timestamps (`Timestamp.string(milliseconds:)`) read as Foundation's ISO 8601 formatter writes the same
/// instant, with milliseconds: drawn instants from 1900 to 2200, the epoch and the milliseconds either side of it.
@Suite struct TimestampTests {
    static func expected(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        // Whole seconds through Date, the milliseconds as digits: a Double of milliseconds since 1970 can round.
        let (q, r) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let seconds = r < 0 ? q - 1 : q
        let millis = r < 0 ? r + 1000 : r
        let text = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        return String(text.dropLast(5)) + String(format: ".%03dZ", Int(millis))
    }

    @Test func timestampsReadAsISO8601() {
        var random = testRandom("timestampsReadAsISO8601")
        let low: Int64 = -2_208_988_800_000  // 1900-01-01
        let high: Int64 = 7_258_118_400_000  // 2200-01-01
        var instants: [Int64] = [0, -1, 1, 999, -999, -1000, 1000, 951_782_400_123]  // 2000-02-29T00:00:00.123Z
        for _ in 0..<5_000 { instants.append(low + Int64(random.next() % UInt64(high - low))) }
        for milliseconds in instants {
            #expect(Timestamp.string(milliseconds: milliseconds) == Self.expected(milliseconds), "\(milliseconds)")
        }
        #expect(Timestamp.string(milliseconds: 951_782_400_123) == "2000-02-29T00:00:00.123Z")
    }
}
