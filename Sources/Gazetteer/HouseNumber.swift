/// A house number as written on a building ("13", "13a", "13 A", "13-15", "13b-c"), reduced to what matching needs.
public struct HouseNumber: Sendable, Equatable, Hashable {
    /// Lower case without spaces: "13 A" → "13a", "13–15" → "13-15".
    public let key: String
    /// The leading number (13 for "13a" and for "13-15").
    public let number: Int
    /// The last number of a range ("13-15" → 15), else `number`.
    public let last: Int
    /// Letters right after the leading number ("a" for "13a").
    public let letters: String

    /// Parses `text`, or nil when it does not start with a digit (or the number is absurdly long).
    public init?(_ text: String) {
        var key = ""
        for scalar in text.lowercased().unicodeScalars where !scalar.properties.isWhitespace {
            switch scalar {
            case "\u{2013}", "\u{2014}", "\u{2212}": key.unicodeScalars.append("-")
            default: key.unicodeScalars.append(scalar)
            }
        }
        let scalars = Array(key.unicodeScalars)
        var i = 0
        var number = 0
        while i < scalars.count, let digit = Self.digit(scalars[i]) {
            guard i < 7 else { return nil }
            number = number * 10 + digit
            i += 1
        }
        guard i > 0 else { return nil }
        var letters = ""
        while i < scalars.count, scalars[i].properties.isAlphabetic {
            letters.unicodeScalars.append(scalars[i])
            i += 1
        }
        var last = number
        if i < scalars.count, scalars[i] == "-" {
            var j = i + 1
            var second = 0
            var digits = 0
            while j < scalars.count, let digit = Self.digit(scalars[j]), digits < 7 {
                second = second * 10 + digit
                j += 1
                digits += 1
            }
            if digits > 0 && second >= number { last = second }
        }
        self.key = key
        self.number = number
        self.last = last
        self.letters = letters
    }

    private static func digit(_ scalar: Unicode.Scalar) -> Int? {
        ("0"..."9").contains(scalar) ? Int(scalar.value - 48) : nil
    }

    /// Whether this number (a range or a single number) covers `other`'s leading number.
    public func covers(_ other: HouseNumber) -> Bool {
        last > number && other.letters.isEmpty && (number...last).contains(other.number)
    }

    /// Whether `word` reads as a house number: digits first ("13", "13a", "13-15").
    public static func looksLikeNumber(_ word: Substring) -> Bool {
        guard let first = word.unicodeScalars.first else { return false }
        return ("0"..."9").contains(first)
    }
}
