import BundledData
import Synchronization
import TextIndex

extension PinyinDictionary {
    /// The bundled table (`data/pinyin.tsv.gz`), read once on first use; nil when the data directory has none (then
    /// queries are not read as pinyin).
    public static let bundled: PinyinDictionary? = try? load(directory: DataDirectory.resolve())

    /// Reads `pinyin.tsv.gz` of a data directory.
    public static func load(directory: String) throws -> PinyinDictionary {
        let bytes = try GzipFile.read(directory + "/pinyin.tsv.gz")
        return try PinyinDictionary(tableBytes: bytes)
    }
}

extension SearchEngine {
    /// Reads the bundled pinyin table now, if it has not been read (the text index derives names' readings from it).
    public static func readBundledPinyin() { _ = PinyinDictionary.bundled }

    /// A keyword query compiled against a state: its words as typed and, with the pinyin table, its readings as pinyin.
    /// `deferTypos`: for ranked search, which asks for a word's typo neighbours later when it needs them.
    func matcher(_ text: String, _ s: EngineState, deferTypos: Bool = false) -> TextMatcher {
        TextMatcher(text, index: s.text, taxonomy: taxonomy, known: (wordCursors, s.generation), pinyin: pinyinContext(s), deferTypos: deferTypos)
    }

    /// The pinyin table and the state's Han terms by reading, brought up to the state's dictionary (a write that
    /// added terms adds their rows; another index is read anew).
    func pinyinContext(_ s: EngineState) -> PinyinContext? {
        guard let pinyin else { return nil }
        let terms = pinyinTerms.withLock { terms in
            terms.update(from: s.text, dictionary: pinyin)
            return terms
        }
        return PinyinContext(dictionary: pinyin, terms: terms)
    }

    /// Reads queries as typed only, never as pinyin (`poi serve --no-pinyin`: no table or readings in memory).
    public func disablePinyin() {
        pinyinOff.store(true, ordering: .relaxed)
        pinyinTerms.withLock { $0 = PinyinTerms() }
        wordCursors.removeAll()
    }

    /// Reads the pinyin table of `directory` (nil: the default data directory's) and the state's Han terms by reading
    /// now, so that the first keyword query does not (a server calls this once it is listening). Without a table there,
    /// the default data directory's is used, if any.
    /// - Returns: the rows of the Han terms by reading (20 bytes each; 0 without a table).
    @discardableResult
    public func preparePinyin(directory: String? = nil) -> Int {
        if let directory {
            // The default directory's table is the one the index reads names with: one copy, read once.
            let table = directory == DataDirectory.resolve() ? PinyinDictionary.bundled : try? PinyinDictionary.load(directory: directory)
            pinyinTable.withLock { $0 = table }
        }
        return read { pinyinContext($0)?.terms.count ?? 0 }
    }
}
