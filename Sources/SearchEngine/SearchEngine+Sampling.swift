import GeoCore
import SpatialIndex
import TextIndex

extension SearchEngine {
    /// Positions of random records, for benchmark query origins.
    public func samplePositions(count: Int, seed: UInt64) -> [IndexedPoint] {
        read { s in
            guard !s.records.isEmpty else { return [] }
            var random = SplitMix64(seed: seed)
            return (0..<count).compactMap { i in
                let number = Int(random.next() % UInt64(s.records.count))
                guard let record = s.record(number) else { return nil }
                let p = EngineState.position(record)
                return IndexedPoint(id: UInt32(i), latitude: p.latitude, longitude: p.longitude)
            }
        }
    }

    /// Words of random records' names (at least 3 characters), for benchmark keywords: common and rare alike.
    public func sampleNameWords(count: Int, seed: UInt64) -> [String] {
        read { s in
            var random = SplitMix64(seed: seed)
            var words: [String] = []
            var attempts = 0
            while words.count < count && attempts < count * 20 && !s.records.isEmpty {
                attempts += 1
                guard let record = s.record(Int(random.next() % UInt64(s.records.count))), case .poi(let poi) = record else { continue }
                let candidates = poi.name.split(whereSeparator: { !$0.isLetter }).map(String.init).filter {
                    $0.count >= 3 || $0.unicodeScalars.contains(where: TextNormalizer.isCJK)
                }
                if let word = candidates.randomElement(using: &random) { words.append(word) }
            }
            return words
        }
    }
}
