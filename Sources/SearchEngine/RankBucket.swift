/// Keyword ranking as a list of rules applied in order (Meilisearch's ranking rules):
/// 1. **words**: records matching every query word first; then, dropping words from the end of the query one at a
///    time (Meilisearch's default "last" matching strategy), records matching the rest;
/// 2. **typo**: fewer typos first;
/// 3. **exactness**: words as typed before prefix completions;
/// 4. **attribute**: words in the name before a category label before the address, city and other fields;
///    a name that is the whole query first;
/// 5. **BM25** (the sum over words of the best match's score) within those buckets; ties by record number.
/// With an origin, rules 4 and 5 become one score — BM25 weighted by field (name 1, label 1, other 0.5) times a
/// distance decay 1 / (1 + d / 2 km) — so near matches rise above far ones of the same bucket.
///
/// A rule bucket is a `UInt64` compared before the score (`TopK.Entry`).
enum RankBucket {
    /// How a query was read, ranked within one number of words dropped (`level`).
    enum Reading: Int {
        /// The words as typed.
        case typed = 0
        /// Full pinyin (or Han and pinyin mixed) from the start of a run of Han in a name: "xingbake" for 星巴克(…店).
        case runStart = 1
        /// Initials from the start of a run: "xbk".
        case runStartInitials = 2
        /// Pinyin of neighbouring characters anywhere in a name: "bake" for 星巴克, "ligong" for 北京理工大学.
        case pairs = 3
    }

    /// The first rule's rank, of words dropped and of how the query was read. Passed as `dropped` to the rank
    /// functions, which hand it to `make`; only 0 (nothing dropped, words as typed) allows a whole-name match.
    static func level(dropped: Int, reading: Reading) -> Int { dropped * 8 + reading.rawValue }

    /// The tier of a match within its number of words dropped, from how the query was read and the match's typos
    /// and prefixes: words as typed exactly (0); full pinyin from a run's start exactly (1); words as typed completed,
    /// and full pinyin from a run's start as typed — tied, so that near an origin the nearer wins, "ant" for 安踏 or
    /// for Antipolo (2); initials from a run's start (3); pinyin elsewhere in a name (4); pinyin read in a way the
    /// phrase table does not give it (5); words as typed with typos (6). So a Latin word keeps its Latin matches first
    /// ("man", "bank", "tea"), and pinyin typed in full beats a Latin word's completions and typos ("dasha" is 大厦
    /// before the city Dashan, "lining" 李宁 before Jining). Non-decreasing in typos and prefixes, as the bounds of
    /// the rank functions require.
    static func tier(level: Int, typos: Int, prefixes: Int) -> Int {
        switch Reading(rawValue: level % 8) ?? .pairs {
        case .typed: return typos > 0 ? 6 : (prefixes > 0 ? 2 : 0)
        case .runStart: return typos > 0 ? 5 : (prefixes > 0 ? 2 : 1)
        case .runStartInitials: return typos > 0 ? 5 : 3
        case .pairs: return typos > 0 ? 5 : 4
        }
    }

    static func make(dropped level: Int, typos: Int, prefixes: Int, attributes: Int, wholeName: Bool) -> UInt64 {
        let first = (level / 8) * 8 + tier(level: level, typos: typos, prefixes: prefixes)
        return UInt64(first) << 48 | UInt64(typos) << 36 | UInt64(prefixes) << 24 | UInt64(attributes) << 8 | (wholeName ? 0 : 1)
    }

    /// Attribute ranks of rule 4.
    static let name = 0
    static let label = 1
    static let other = 2

    /// Field weights with an origin.
    static func weight(attribute: Int) -> Double { attribute == other ? 0.5 : 1 }

    /// Distance decay with an origin.
    static func decay(metres: Double) -> Double { 1 / (1 + metres / 2_000) }
}
