import SnapshotFile

extension InvertedIndex {
    /// Bumped whenever tokenizing, normalizing or the posting layout changes: a snapshot of another analyzer's index
    /// is rebuilt, not read.
    /// (4: documents' positions and blocks' boxes. 5: boxes of document number ranges. 6: the pinyin of names' Han
    /// runs, `PinyinDictionary.runTerms`; 7: of the first run only.)
    public static let snapshotVersion: UInt64 = 7

    /// Writes the index as it is (dictionary, postings with their block bounds, sorted keys), for
    /// `init(snapshot:)` to restore without analyzing any text.
    public func write(to snapshot: SnapshotWriter) throws(SnapshotError) {
        snapshot.mark()
        try snapshot.write(InvertedIndex.snapshotVersion)
        try snapshot.write(terms)
        snapshot.mark()
        try snapshot.write(nested: postings)
        try snapshot.write(nested: bounds)
        try snapshot.write(nested: boxes)
        try snapshot.write(positions)
        try snapshot.write(rangeBoxes)
        try snapshot.write(wideRangeBoxes)
        let wholeNameTerms = wholeNames.keys.sorted()
        try snapshot.write(wholeNameTerms)
        try snapshot.write(nested: wholeNameTerms.map { wholeNames[$0]! })
        try snapshot.write(totalLength)
        try snapshot.write(documentCount)
        try snapshot.write(sortedTerms)
        try snapshot.write(sortedKeys.storage)
        try snapshot.write(sortedKeys.offsets)
        try snapshot.write(unsortedTerms)
    }

    public init(snapshot: SnapshotReader) throws(SnapshotError) {
        self.init()
        let version = try snapshot.readUInt64()
        guard version == InvertedIndex.snapshotVersion else {
            throw .wrongFormat(path: snapshot.path, reason: "text index version \(version), this program writes \(InvertedIndex.snapshotVersion)")
        }
        terms = try snapshot.readStrings()
        postings = try snapshot.readNestedFlat()
        bounds = try snapshot.readNestedFlat()
        boxes = try snapshot.readNestedFlat()
        positions = try snapshot.readFlat()
        rangeBoxes = try snapshot.readFlat()
        wideRangeBoxes = try snapshot.readFlat()
        let wholeNameTerms: [Int32] = try snapshot.read()
        let wholeNameLists: [[UInt32]] = try snapshot.readNested()
        totalLength = try snapshot.readInt()
        documentCount = try snapshot.readInt()
        sortedTerms = try snapshot.read()
        let keyStorage: FlatArray<UInt32> = try snapshot.readFlat()
        let keyOffsets: FlatArray<Int32> = try snapshot.readFlat()
        unsortedTerms = try snapshot.read()
        guard postings.count == terms.count, bounds.count == terms.count, boxes.count == terms.count,
            zip(bounds, boxes).allSatisfy({ $0.count == $1.count }), wholeNameTerms.count == wholeNameLists.count,
            sortedTerms.count + unsortedTerms.count == terms.count, keyOffsets.count == sortedTerms.count + 1,
            keyOffsets.last.map({ Int($0) == keyStorage.count }) ?? false,
            (sortedTerms + unsortedTerms + wholeNameTerms).allSatisfy({ $0 >= 0 && Int($0) < terms.count }),
            rangeBoxes.count == (positions.count + InvertedIndex.rangeSize - 1) / InvertedIndex.rangeSize,
            wideRangeBoxes.count == (positions.count + InvertedIndex.wideRangeSize - 1) / InvertedIndex.wideRangeSize
        else { throw .corrupt(path: snapshot.path, reason: "text index arrays of inconsistent sizes") }
        guard zip(keyOffsets, keyOffsets.dropFirst()).allSatisfy({ $0 <= $1 }), keyOffsets.first == 0 else {
            throw .corrupt(path: snapshot.path, reason: "term keys out of order")
        }
        sortedKeys.storage = keyStorage
        sortedKeys.offsets = keyOffsets
        termIDs.reserveCapacity(terms.count)
        for (id, term) in terms.enumerated() { termIDs[term] = Int32(id) }
        wholeNames.reserveCapacity(wholeNameTerms.count)
        for (term, list) in zip(wholeNameTerms, wholeNameLists) { wholeNames[term] = list }
    }
}
