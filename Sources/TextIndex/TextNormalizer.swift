import Foundation

/// Turns text into the comparable form shared by the text index and the gazetteer.
///
/// Steps: Unicode compatibility decomposition (NFKD, so full-width "ＡＢＣ１" becomes "ABC1" and ligatures split),
/// combining marks dropped (diacritic folding: "São Paulo" → "sao paulo"), lowercase, a few letters that do not
/// decompose folded by hand (ß → ss, æ → ae, ø → o, ł → l, đ → d, œ → oe, þ → th, ı → i), and every character that
/// is not a letter or digit turned into a single space. CJK ideographs pass through unchanged.
public enum TextNormalizer {
    public static func normalize(_ text: String) -> String {
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
}
