import Dispatch
import Foundation
import Gazetteer
import Synchronization

/// The address book reads are given, and the background step that brings it up to the records' houses.
///
/// A read takes the book on the shelf as it is and never builds an index (docs/ARCHITECTURE.md, "Geocoding on every
/// surface"). A write that changes a POI's houses marks the shelf (`mark`); one step at a time, off the writer's and
/// the readers' threads, then indexes the layer of houses that moved (`AddressBook(base:records:reusing:)`) and puts
/// the new book on the shelf. Meanwhile a read sees the book before the write: the houses as they were. A caller that
/// must read its own write waits for the step (`settled(through:)`: the HTTP POI writes do, so a client that wrote a
/// house geocodes it in its next request); a process that reads once settles in place (`settleNow`: the CLI).
final class AddressShelf: Sendable {
    /// Where the records' houses stand: the versions of their two layers (`RecordHouses`), which only grow.
    struct Mark: Sendable, Equatable {
        var settled: Int
        var recent: Int

        init(_ records: RecordHouses) { (settled, recent) = (records.settledVersion, records.recentVersion) }

        /// Whether a book built from houses at `self` holds every change up to `other`.
        func covers(_ other: Mark) -> Bool { settled >= other.settled && recent >= other.recent }
    }

    private struct Shelf {
        var book: AddressBook
        var waiting: [(mark: Mark, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let shelf: Mutex<Shelf>
    /// Held by the step that builds a book, so that two never race to put theirs on the shelf.
    private let building = NSLock()
    /// Whether a background step is queued and has not started yet: marks while it is queued are one step.
    private let queued = Atomic<Bool>(false)
    /// The step's queue: one of Dispatch's threads, never Swift's cooperative pool (a build of the settled layer is
    /// linear in every record's houses) nor the writer.
    private let queue = DispatchQueue(label: "poi.addresses", qos: .utility)

    init(_ book: AddressBook) { shelf = Mutex(Shelf(book: book)) }

    /// The book on the shelf now.
    var book: AddressBook { shelf.withLock { $0.book } }

    /// Asks for a step that brings the book up to `houses()` (called after a write, outside the engine's locks).
    func mark(_ houses: @escaping @Sendable () -> RecordHouses) {
        guard !queued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            queued.store(false, ordering: .releasing)
            settleNow(houses())
        }
    }

    /// Builds the book for `records` (if the shelf's is older) and shelves it, on the caller's thread.
    func settleNow(_ records: RecordHouses) {
        building.withLock {
            let current = book
            let wanted = Mark(records)
            if !Mark(current.records).covers(wanted) {
                shelve(AddressBook(osm: current.osm, records: records, reusing: current))
            } else {
                wake()
            }
        }
    }

    /// Replaces the imported addresses under the records' houses (an OpenStreetMap import, or a change file laid over
    /// it), on the caller's thread.
    func replaceImported(_ imported: AddressLayer, records: RecordHouses) {
        building.withLock {
            shelve(AddressBook(osm: imported, records: records, reusing: book))
        }
    }

    /// Returns once the book on the shelf holds every change of houses up to `mark`.
    func settled(through mark: Mark) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = shelf.withLock { shelf -> Bool in
                if Mark(shelf.book.records).covers(mark) { return true }
                shelf.waiting.append((mark, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Puts `book` on the shelf (under `building`), and resumes the callers it satisfies.
    private func shelve(_ book: AddressBook) {
        shelf.withLock { $0.book = book }
        wake()
    }

    private func wake() {
        let ready = shelf.withLock { shelf -> [CheckedContinuation<Void, Never>] in
            let now = Mark(shelf.book.records)
            let (done, rest) = (shelf.waiting.filter { now.covers($0.mark) }, shelf.waiting.filter { !now.covers($0.mark) })
            shelf.waiting = rest
            return done.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }
}
