/// Splits normalized text into index terms.
///
/// Latin and other alphabetic scripts: words separated by spaces (normalization already turned punctuation into
/// spaces). CJK runs, which have no spaces: every character (unigram) and every pair of neighbours (bigram), so
/// "咖啡" and "理工大学" match inside "星巴克咖啡(中关村店)" and "北京理工大学" without a dictionary.
public enum Tokenizer {
    public struct Token: Hashable, Sendable {
        public let text: String
        /// Whether this is a CJK unigram or bigram rather than a word.
        public let isCJK: Bool
    }

    /// Terms of already-normalized text, in order; duplicates kept (they count for term frequency).
    public static func tokens(normalized text: String) -> [Token] {
        var tokens: [Token] = []
        // Split on the space byte (it never occurs inside a multi-byte UTF-8 sequence): much cheaper than
        // splitting on Characters, which walks grapheme boundaries.
        for bytes in text.utf8.split(separator: UInt8(ascii: " ")) {
            let word = Substring(bytes)
            if bytes.allSatisfy({ $0 < 0x80 }) || !word.unicodeScalars.contains(where: TextNormalizer.isCJK) {
                tokens.append(Token(text: String(word), isCJK: false))
                continue
            }
            var latin = String.UnicodeScalarView()
            var cjkRun: [Unicode.Scalar] = []
            func flushLatin() {
                if !latin.isEmpty { tokens.append(Token(text: String(latin), isCJK: false)) }
                latin = String.UnicodeScalarView()
            }
            func flushCJK() {
                for (i, scalar) in cjkRun.enumerated() {
                    tokens.append(Token(text: String(Character(scalar)), isCJK: true))
                    if i + 1 < cjkRun.count {
                        var pair = String.UnicodeScalarView()
                        pair.append(scalar)
                        pair.append(cjkRun[i + 1])
                        tokens.append(Token(text: String(pair), isCJK: true))
                    }
                }
                cjkRun.removeAll()
            }
            for scalar in word.unicodeScalars {
                if TextNormalizer.isCJK(scalar) {
                    flushLatin()
                    cjkRun.append(scalar)
                } else {
                    flushCJK()
                    latin.append(scalar)
                }
            }
            flushLatin()
            flushCJK()
        }
        return tokens
    }

    /// Normalizes then tokenizes.
    public static func tokens(_ text: String) -> [Token] { tokens(normalized: TextNormalizer.normalize(text)) }
}
