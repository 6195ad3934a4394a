#if canImport(Glibc)
import Glibc
#endif

/// A read-only mapping of a snapshot file, unmapped when the last array reading from it is gone.
public final class MappedRegion: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because the mapping is read-only (PROT_READ) for its whole life.
    public let base: UnsafeRawPointer
    public let length: Int

    init(base: UnsafeRawPointer, length: Int) {
        self.base = base
        self.length = length
        ResidentMemory.register(self)
    }

    deinit {
        // Out of the registry first: a warming pass holds the registry's lock while it reads, so the unmapping waits.
        ResidentMemory.unregister(self)
        munmap(UnsafeMutableRawPointer(mutating: base), length)
    }
}

/// The heap storage of a `FlatArray` that owns its elements.
public final class FlatBuffer<Element: BitwiseCopyable>: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because a buffer is only written through a `FlatArray` that holds the only
    // reference to it (copy-on-write), as Swift's own arrays do.
    @usableFromInline let elements: UnsafeMutablePointer<Element>
    @usableFromInline let capacity: Int

    @usableFromInline init(capacity: Int) {
        self.capacity = capacity
        elements = .allocate(capacity: Swift.max(capacity, 1))
    }

    deinit { elements.deallocate() }
}

/// An array of plain values that reads either from its own heap buffer or straight from a mapped snapshot file.
///
/// A snapshot's big arrays (packed records, posting lists, R-tree pools) are served from the mapping as they lie in
/// the file: start-up validates and maps instead of copying, and their pages are shared, clean page cache rather than
/// the process's anonymous memory. The first write to a mapped array copies it into a heap buffer (copy-on-write, as
/// `Array` does between copies), so writes after start-up are a per-array delta over the mapped base and a snapshot
/// being written in the background keeps seeing the values it copied.
///
/// Reading is a pointer and an index, as with `Array`'s unsafe buffer; every subscript is bounds-checked.
public struct FlatArray<Element: BitwiseCopyable>: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `base` points into `buffer` or `region`, both immutable while shared (see
    // `FlatBuffer`, `MappedRegion`); a mutation first makes `buffer` unique.
    @usableFromInline var base: UnsafeMutablePointer<Element>?
    @usableFromInline var _count: Int
    @usableFromInline var buffer: FlatBuffer<Element>?
    @usableFromInline var region: MappedRegion?

    @inlinable public init() {
        base = nil
        _count = 0
        buffer = nil
        region = nil
    }

    /// Elements read in place from a mapping (which `region` keeps alive).
    public init(mapped start: UnsafeRawPointer, count: Int, region: MappedRegion) {
        base = count == 0 ? nil : UnsafeMutablePointer(mutating: start.assumingMemoryBound(to: Element.self))
        _count = count
        buffer = nil
        self.region = count == 0 ? nil : region
    }

    @inlinable public init(_ array: [Element]) {
        self.init()
        guard !array.isEmpty else { return }
        let storage = FlatBuffer<Element>(capacity: array.count)
        array.withUnsafeBufferPointer { storage.elements.initialize(from: $0.baseAddress!, count: $0.count) }
        buffer = storage
        base = storage.elements
        _count = array.count
    }

    @inlinable public init(repeating value: Element, count: Int) {
        self.init()
        guard count > 0 else { return }
        let storage = FlatBuffer<Element>(capacity: count)
        storage.elements.initialize(repeating: value, count: count)
        buffer = storage
        base = storage.elements
        _count = count
    }

    /// Whether the elements are read from a mapped file (not yet copied by a write).
    public var isMapped: Bool { region != nil }

    @inlinable public var capacity: Int { buffer?.capacity ?? _count }

    /// Makes the storage a heap buffer held only by this array, with room for `minimum` elements.
    @inlinable mutating func makeUnique(minimumCapacity minimum: Int) {
        if buffer != nil, isKnownUniquelyReferenced(&buffer!), buffer!.capacity >= minimum { return }
        // Growing doubles, as `Array` does; a copy made only to write in place (or to shrink) keeps the size it has.
        let capacity = minimum > _count ? Swift.max(minimum, 2 * _count, 4) : _count
        let storage = FlatBuffer<Element>(capacity: capacity)
        if let base, _count > 0 { storage.elements.initialize(from: base, count: _count) }
        buffer = storage
        region = nil
        base = storage.elements
    }

    @inlinable public mutating func reserveCapacity(_ minimum: Int) {
        if minimum > capacity || (buffer == nil && minimum > 0) || !isKnownUniquelyReferenced(&buffer) {
            makeUnique(minimumCapacity: Swift.max(minimum, _count))
        }
    }

    @inlinable public mutating func append(_ element: Element) {
        makeUnique(minimumCapacity: _count + 1)
        (base! + _count).initialize(to: element)
        _count += 1
    }

    @inlinable @discardableResult public mutating func removeLast() -> Element {
        precondition(_count > 0, "removeLast from an empty FlatArray")
        makeUnique(minimumCapacity: _count)
        _count -= 1
        return base![_count]
    }

    @inlinable public mutating func removeAll(keepingCapacity keep: Bool = false) {
        if keep, buffer != nil, isKnownUniquelyReferenced(&buffer!) {
            _count = 0
        } else {
            self = FlatArray()
        }
    }

    @inlinable public func withUnsafeBufferPointer<R, E: Error>(_ body: (UnsafeBufferPointer<Element>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: base, count: _count))
    }

    @inlinable public mutating func withUnsafeMutableBufferPointer<R, E: Error>(
        _ body: (inout UnsafeMutableBufferPointer<Element>) throws(E) -> R
    ) throws(E) -> R {
        if _count > 0 { makeUnique(minimumCapacity: _count) }
        var buffer = UnsafeMutableBufferPointer(start: base, count: _count)
        return try body(&buffer)
    }

    @inlinable public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(UnsafeBufferPointer(start: base, count: _count)))
    }

    /// The first element's address: valid while this array is alive and not mutated.
    @inlinable public var baseAddress: UnsafePointer<Element>? { base.map { UnsafePointer($0) } }

    /// A copy as a Swift array.
    @inlinable public var array: [Element] { withUnsafeBufferPointer { Array($0) } }
}

extension FlatArray: RandomAccessCollection, MutableCollection {
    public typealias Index = Int
    public typealias Indices = Range<Int>

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { _count }
    @inlinable public var count: Int { _count }
    @inlinable public var isEmpty: Bool { _count == 0 }
    @inlinable public var indices: Range<Int> { 0..<_count }
    @inlinable public func index(after i: Int) -> Int { i + 1 }
    @inlinable public func index(before i: Int) -> Int { i - 1 }

    @inlinable public subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < _count, "FlatArray index out of range")
            return base.unsafelyUnwrapped[position]
        }
        set {
            precondition(position >= 0 && position < _count, "FlatArray index out of range")
            makeUnique(minimumCapacity: _count)
            base.unsafelyUnwrapped[position] = newValue
        }
    }

    @inlinable public var last: Element? { _count == 0 ? nil : base.unsafelyUnwrapped[_count - 1] }
    @inlinable public var first: Element? { _count == 0 ? nil : base.unsafelyUnwrapped[0] }

    @inlinable public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R? {
        try body(UnsafeBufferPointer(start: base, count: _count))
    }
}

extension FlatArray: RangeReplaceableCollection {
    @inlinable public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == Element {
        precondition(subrange.lowerBound >= 0 && subrange.upperBound <= _count, "FlatArray range out of range")
        let inserted = newElements.count
        let newCount = _count - subrange.count + inserted
        makeUnique(minimumCapacity: Swift.max(newCount, 1))
        let tail = _count - subrange.upperBound
        let base = self.base!
        // Trivial elements: moving is a memmove, and the two ranges may overlap.
        if tail > 0 { (base + subrange.lowerBound + inserted).moveInitialize(from: base + subrange.upperBound, count: tail) }
        var i = subrange.lowerBound
        for element in newElements {
            (base + i).initialize(to: element)
            i += 1
        }
        _count = newCount
    }

    @inlinable public mutating func append<S: Sequence>(contentsOf newElements: S) where S.Element == Element {
        let copied: Void? = newElements.withContiguousStorageIfAvailable { source in
            guard let start = source.baseAddress, !source.isEmpty else { return }
            makeUnique(minimumCapacity: _count + source.count)
            (base! + _count).initialize(from: start, count: source.count)
            _count += source.count
        }
        if copied == nil {
            reserveCapacity(_count + newElements.underestimatedCount)
            for element in newElements { append(element) }
        }
    }
}

extension FlatArray: ExpressibleByArrayLiteral {
    @inlinable public init(arrayLiteral elements: Element...) { self.init(elements) }
}

extension FlatArray: Equatable where Element: Equatable {
    @inlinable public static func == (a: FlatArray, b: FlatArray) -> Bool { a.elementsEqual(b) }
}

extension FlatArray: CustomStringConvertible {
    public var description: String { array.description }
}
