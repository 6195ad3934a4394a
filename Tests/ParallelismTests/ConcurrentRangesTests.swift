import Parallelism
import Testing

struct ConcurrentRangesTests {
    struct Refused: Error, Equatable { let at: Int }

    /// Every index once, in order, however many workers for however many items (more workers than items too).
    @Test(arguments: [0, 1, 2, 7, 1_000])
    func valuesComeInOrder(count: Int) {
        for workers in [1, 2, 3, 16] {
            let values = ConcurrentRanges.map(count, workers: workers) { range in range.map { $0 * 2 } }
            #expect(values == (0..<count).map { $0 * 2 }, "\(count) items on \(workers) workers")
        }
    }

    /// The first range's error is the one thrown, whichever worker ends first.
    @Test func theFirstRangesErrorIsThrown() {
        #expect(throws: Refused(at: 3)) {
            try ConcurrentRanges.map(100, workers: 4) { (range: Range<Int>) throws(Refused) -> [Int] in
                if let bad = range.first(where: { $0 % 25 == 3 }) { throw Refused(at: bad) }
                return Array(range)
            }
        }
    }
}
