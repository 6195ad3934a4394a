import Foundation

/// Turns text into the comparable form shared by the text index and the gazetteer.
///
/// Steps: Unicode compatibility decomposition (NFKD, so full-width "ＡＢＣ１" becomes "ABC1" and ligatures split),
/// combining marks dropped (diacritic folding: "São Paulo" → "sao paulo"), lowercase, a few letters that do not
/// decompose folded by hand (ß → ss, æ → ae, ø → o, ł → l, đ → d, œ → oe, þ → th, ı → i), and every character that
/// is not a letter or digit turned into a single space. CJK ideographs pass through unchanged. An English
/// possessive or contraction "'s" after a letter is dropped first ("McDonald's" → "mcdonald", "Domino's Pizza" →
/// "domino pizza"): as a word of its own, "s" matched every record with one and, last in a query, was read as the
/// prefix of every word beginning with s.
public enum TextNormalizer {
    public static func normalize(_ text: String) -> String {
        let text = droppingPossessives(text)
        if let ascii = normalizeASCII(text) { return ascii }
        if let latin = normalizeTabled(text) { return latin }
        return normalizeUnicode(text)
    }

    /// `text` without the "'s" (apostrophe U+0027 or U+2019) that follows a letter and ends a word.
    static func droppingPossessives(_ text: String) -> String {
        // Most text has no apostrophe: one byte scan (U+2019 is E2 80 99 in UTF-8).
        guard text.utf8.contains(where: { $0 == 0x27 || $0 == 0x99 }) else { return text }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            let scalar = scalars[i]
            if scalar == "'" || scalar == "\u{2019}", i > 0, scalars[i - 1].properties.isAlphabetic, i + 1 < scalars.count,
                scalars[i + 1] == "s" || scalars[i + 1] == "S",
                i + 2 == scalars.count || !(scalars[i + 2].properties.isAlphabetic || scalars[i + 2].properties.numericType != nil)
            {
                i += 2
                continue
            }
            out.append(scalar)
            i += 1
        }
        return String(out)
    }

    /// The general path through Foundation's compatibility decomposition.
    static func normalizeUnicode(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.decomposedStringWithCompatibilityMapping.unicodeScalars {
            let properties = scalar.properties
            switch properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                continue
            default:
                break
            }
            if properties.isAlphabetic || properties.numericType != nil {
                if pendingSpace && !out.isEmpty { out.append(" ") }
                pendingSpace = false
                if let folded = specialFolds[scalar] {
                    out.append(contentsOf: folded.unicodeScalars)
                } else if properties.changesWhenLowercased {
                    out.append(contentsOf: properties.lowercaseMapping.unicodeScalars)
                } else {
                    out.append(scalar)
                }
            } else {
                pendingSpace = true
            }
        }
        return String(out)
    }

    /// The same result for pure-ASCII text without Foundation's Unicode machinery (most place names and queries).
    private static func normalizeASCII(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for byte in text.utf8 {
            guard byte < 0x80 else { return nil }
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                if pendingSpace && !bytes.isEmpty { bytes.append(0x20) }
                pendingSpace = false
                bytes.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                if pendingSpace && !bytes.isEmpty { bytes.append(0x20) }
                pendingSpace = false
                bytes.append(byte + 32)
            default:
                pendingSpace = true
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Latin letters with diacritics (U+0000–U+024F, U+1E00–U+1EFF) and CJK ideographs without Foundation: each
    /// Latin scalar's folded form is precomputed once by `normalizeUnicode`, ideographs pass through. Strings with
    /// anything else (Cyrillic, combining marks, compatibility ideographs) return nil and take the general path.
    private static func normalizeTabled(_ text: String) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let folded: [UInt8]
            if v < 0x250 {
                folded = latinTable[Int(v)]
            } else if v >= 0x1E00 && v < 0x1F00 {
                folded = latinExtendedTable[Int(v - 0x1E00)]
            } else if (0x4E00...0x9FFF).contains(v) || (0x3400...0x4DBF).contains(v) {
                if pendingSpace && !out.isEmpty { out.append(0x20) }
                pendingSpace = false
                // Three-byte UTF-8 for the Basic Multilingual Plane ideographs.
                out.append(UInt8(0xE0 | (v >> 12)))
                out.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
                out.append(UInt8(0x80 | (v & 0x3F)))
                continue
            } else {
                return nil
            }
            if folded.isEmpty {
                pendingSpace = true
            } else {
                if pendingSpace && !out.isEmpty { out.append(0x20) }
                pendingSpace = false
                out.append(contentsOf: folded)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let latinTable: [[UInt8]] = (0..<0x250).map { Array(fold(UInt32($0)).utf8) }
    private static let latinExtendedTable: [[UInt8]] = (0x1E00..<0x1F00).map { Array(fold(UInt32($0)).utf8) }

    private static func fold(_ value: UInt32) -> String {
        guard let scalar = Unicode.Scalar(value) else { return "" }
        // A lone letter folds to letters only; punctuation and spaces fold to "" (a separator).
        return normalizeUnicode(String(Character(scalar))).replacingOccurrences(of: " ", with: "")
    }

    private static let specialFolds: [Unicode.Scalar: String] = [
        "ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "ø": "o", "Ø": "o", "ł": "l", "Ł": "l", "đ": "d", "Đ": "d",
        "œ": "oe", "Œ": "oe", "þ": "th", "Þ": "th", "ı": "i", "ð": "d", "Ð": "d", "ħ": "h", "Ħ": "h",
    ]

    /// Whether a scalar is a CJK ideograph (or kana/hangul), which is tokenized by characters rather than words.
    @inlinable
    public static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x2FA1F, 0x3040...0x30FF, 0xAC00...0xD7AF:
            return true
        default:
            return false
        }
    }

    public static func containsCJK(_ text: String) -> Bool { text.unicodeScalars.contains(where: isCJK) }

    /// `text` without the white space around it: Foundation's `trimmingCharacters(in: .whitespaces)` on the paths
    /// a keystroke takes, without its bridging (it cost 4 % of an input tips request).
    public static func trimmed<S: StringProtocol>(_ text: S) -> String {
        let scalars = text.unicodeScalars
        // Most text has nothing to trim: one look at each end.
        if let head = scalars.first, let tail = scalars.last, !isWhitespace(head), !isWhitespace(tail) { return String(text) }
        guard let first = scalars.firstIndex(where: { !isWhitespace($0) }), let last = scalars.lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[first...last])
        return String(kept)
    }

    /// Unicode's White_Space, answered without the property tables for ASCII.
    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII ? (scalar == " " || (0x09...0x0D).contains(scalar.value)) : scalar.properties.isWhitespace
    }
}
