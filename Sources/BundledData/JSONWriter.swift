/// A minimal streaming JSON writer (RFC 8259) into a byte buffer: strings escaped, numbers in Swift's shortest
/// round-trip form. Used where JSONEncoder's per-record cost matters (bulk output, every API answer).
///
/// The bytes go into memory the writer owns (hence noncopyable), grown by doubling: an append is a bounds check and
/// a copy, where `Array.append(contentsOf:)` also checks uniqueness and goes through its generic path — a third of
/// a nearby answer's instructions before (issue 17, `poi bench wire`). The small writers are `@inlinable`: each API
/// answer calls them a few hundred times from another module.
public struct JSONWriter: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var count: Int
    @usableFromInline var capacity: Int
    @usableFromInline var needsComma = false

    /// An empty writer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        count = 0
    }

    /// A writer that continues after `bytes`.
    public init(buffer bytes: [UInt8]) {
        self.init(capacity: bytes.count + 256)
        bytes.withUnsafeBufferPointer { append(UnsafeRawBufferPointer($0)) }
    }

    deinit { base.deallocate() }

    /// The bytes written so far.
    public var buffer: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// How many bytes were written.
    public var byteCount: Int { count }

    /// Calls `body` with the bytes written so far.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    @inlinable @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: 1) }
        base[count] = byte
        count &+= 1
    }

    @inlinable @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        if capacity &- count < n { grow(toHold: n) }
        if n > 0 { Self.copy(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), to: base + count, count: n) }
        count &+= n
    }

    /// A copy; short ones (keys, numbers, most names) byte by byte, which costs less than calling `memcpy`.
    @inlinable @inline(__always)
    static func copy(_ source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, count: Int) {
        if count <= 16 {
            var i = 0
            while i < count {
                target[i] = source[i]
                i &+= 1
            }
        } else {
            target.update(from: source, count: count)
        }
    }

    @inlinable @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(UnsafeRawBufferPointer(bytes))
    }

    @inlinable @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Makes room for `extra` more bytes, at least doubling.
    @usableFromInline mutating func grow(toHold extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = newCapacity
    }

    @inlinable
    public mutating func beginObject() {
        separator()
        append(UInt8(ascii: "{"))
        needsComma = false
    }

    @inlinable
    public mutating func endObject() {
        append(UInt8(ascii: "}"))
        needsComma = true
    }

    @inlinable
    public mutating func beginArray() {
        separator()
        append(UInt8(ascii: "["))
        needsComma = false
    }

    @inlinable
    public mutating func endArray() {
        append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `"key":` for a key written in the source: no escaping needed (checked in debug builds), no scan.
    @inlinable @inline(__always)
    public mutating func key(_ key: StaticString) {
        separator()
        assert(!key.withUTF8Buffer { $0.contains(where: Self.needsEscape) }, "key needs escaping")
        let n = key.utf8CodeUnitCount
        if capacity &- count < n &+ 3 { grow(toHold: n &+ 3) }
        base[count] = UInt8(ascii: "\"")
        Self.copy(key.utf8Start, to: base + (count &+ 1), count: n)
        base[count &+ n &+ 1] = UInt8(ascii: "\"")
        base[count &+ n &+ 2] = UInt8(ascii: ":")
        count &+= n &+ 3
        needsComma = false
    }

    /// `"key":` for a key that comes from data, escaped.
    @inlinable
    public mutating func key(text key: String) {
        string(key)
        append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// `"key":"value"`.
    @inlinable
    public mutating func field(_ key: StaticString, _ value: String) {
        self.key(key)
        string(value)
    }

    /// `"key":number`.
    @inlinable
    public mutating func field(_ key: StaticString, _ value: Double) {
        self.key(key)
        number(value)
    }

    /// `"key":number`.
    @inlinable
    public mutating func field(_ key: StaticString, _ value: Int) {
        self.key(key)
        number(value)
    }

    /// `"key":true` or `"key":false`.
    @inlinable
    public mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bool(value)
    }

    /// `"key":"value"`, or `"key":null` without a value.
    @inlinable
    public mutating func field(_ key: StaticString, orNull value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    /// `"key":"value"` for a value written in the source that needs no escaping (checked in debug builds).
    @inlinable
    public mutating func field(_ key: StaticString, literal value: StaticString) {
        self.key(key)
        assert(!value.withUTF8Buffer { $0.contains(where: Self.needsEscape) }, "value needs escaping")
        append(UInt8(ascii: "\""))
        append(value)
        append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// `"key":"value"` with a key that comes from data.
    @inlinable
    public mutating func field(text key: String, _ value: String) {
        self.key(text: key)
        string(value)
    }

    @inlinable
    public mutating func null() {
        separator()
        append("null")
        needsComma = true
    }

    @inlinable
    public mutating func bool(_ value: Bool) {
        separator()
        if value { append("true") } else { append("false") }
        needsComma = true
    }

    /// Finite numbers only; non-finite values are written as null (JSON has no NaN).
    @inlinable
    public mutating func number(_ value: Double) {
        separator()
        if !value.isFinite {
            append("null")
        } else if abs(value) < 1e15, Double(Int64(value)) == value {
            // (An integral value, tested by a conversion rather than `rounded()`, which is a call into libm.)
            appendDigits(Int64(value))
        } else if !appendFixedPoint(value) {
            var text = value.description
            text.withUTF8 { append($0) }
        }
        needsComma = true
    }

    @inlinable
    public mutating func number(_ value: Int) {
        separator()
        appendDigits(Int64(value))
        needsComma = true
    }

    /// Writes `value` as `description` would when it is the double nearest a decimal of at most 7 fractional digits
    /// (coordinates, distances to 0.1 m, scores to 0.001), without formatting through a String; false (and nothing
    /// written) otherwise. Below 1e8 two such decimals are further apart than the rounding interval of any double
    /// there (≤ 1.5e-8), so that decimal, trailing zeros dropped, is the shortest that reads back as `value`: the
    /// digits `description` prints. Below 1e-4 `description` switches to exponent form, so those are left to it.
    @usableFromInline mutating func appendFixedPoint(_ value: Double) -> Bool {
        let magnitude = abs(value)
        guard magnitude >= 1e-4, magnitude < 1e8 else { return false }
        // The nearest integer to value × 1e7 (ties away from zero), by conversion instead of a call to libm's
        // `round`; the check below accepts it only if it reads back as `value`, so how a tie goes cannot matter.
        let product = value * 1e7
        let scaled = Int64(product + (product < 0 ? -0.5 : 0.5))
        guard Double(scaled) / 1e7 == value else { return false }
        let units = scaled.magnitude
        var fraction = units % 10_000_000
        var fractionDigits = 7
        while fraction % 10 == 0 {
            fraction /= 10
            fractionDigits -= 1
        }
        // Built right to left in a stack buffer, then appended at once: sign, integer digits, point, fraction.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var start = digits.count
            for _ in 0..<fractionDigits {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(fraction % 10)
                fraction /= 10
            }
            start -= 1
            digits[start] = UInt8(ascii: ".")
            start = DecimalDigits.write(units / 10_000_000, endingAt: start, in: digits)
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            append(UnsafeBufferPointer(rebasing: digits[start...]))
        }
        return true
    }

    /// Decimal digits without going through a String, appended at once.
    @usableFromInline mutating func appendDigits(_ value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var start = DecimalDigits.write(value.magnitude, endingAt: digits.count, in: digits)
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            append(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    @inlinable
    public mutating func string(_ value: String) {
        // Native strings are contiguous UTF-8: written from their storage, without a copy.
        if value.utf8.withContiguousStorageIfAvailable({ string(utf8: $0) }) != nil { return }
        var value = value
        value.withUTF8 { string(utf8: $0) }
    }

    /// A string given as UTF-8 bytes.
    @inlinable
    public mutating func string(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        separator()
        append(UInt8(ascii: "\""))
        // Runs of bytes that need no escaping are copied at once; the scan looks at eight bytes at a time and at
        // single bytes only in a word that holds one to escape (most names hold none).
        var runStart = 0
        var i = 0
        let count = bytes.count
        if let base = bytes.baseAddress {
            while i &+ 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if !Self.anyNeedsEscape(word) {
                    i &+= 8
                    continue
                }
                let end = i &+ 8
                while i < end {
                    if Self.needsEscape(bytes[i]) {
                        append(UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                        appendEscaped(bytes[i])
                        runStart = i &+ 1
                    }
                    i &+= 1
                }
            }
        }
        while i < count {
            let byte = bytes[i]
            if Self.needsEscape(byte) {
                append(UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                appendEscaped(byte)
                runStart = i &+ 1
            }
            i &+= 1
        }
        append(UnsafeBufferPointer(rebasing: bytes[runStart...]))
        append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Whether any of the eight bytes of `word` needs escaping: a byte below 0x20, a quote or a backslash (the classic
    /// "has a byte less than / equal to" bit tricks; bytes of 0x80 and above never flag, and a borrow can flag a
    /// byte wrongly only above one that truly flags, so the answer is exact for the word).
    @inlinable @inline(__always)
    static func anyNeedsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & high
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        return (control | ((quote &- ones) & ~quote & high) | ((backslash &- ones) & ~backslash & high)) != 0
    }

    /// Ends a line of JSON Lines: a newline, and the next value starts a new document (no comma before it).
    @inlinable
    public mutating func endLine() {
        append(UInt8(ascii: "\n"))
        needsComma = false
    }

    /// A value that is already JSON (the caller vouches for it), written as it is.
    @inlinable
    public mutating func raw(_ json: UnsafeBufferPointer<UInt8>) {
        separator()
        append(json)
        needsComma = true
    }

    /// Control characters, the quote and the backslash (RFC 8259 §7).
    @inlinable @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }

    @usableFromInline mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): append("\\\"")
        case UInt8(ascii: "\\"): append("\\\\")
        case 0x0A: append("\\n")
        case 0x0D: append("\\r")
        case 0x09: append("\\t")
        default:
            let hex: StaticString = "0123456789abcdef"
            append("\\u00")
            append(hex.utf8Start[Int(byte >> 4)])
            append(hex.utf8Start[Int(byte & 0xF)])
        }
    }

    @inlinable
    mutating func separator() {
        if needsComma { append(UInt8(ascii: ",")) }
    }
}

/// Decimal digits written right to left into a caller's buffer, for writers that append a number at once.
public enum DecimalDigits {
    /// Writes `value`'s digits to end just before `end`; answers where they start.
    @inlinable
    public static func write(_ value: UInt64, endingAt end: Int, in buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var rest = value
        var start = end
        repeat {
            start -= 1
            buffer[start] = UInt8(ascii: "0") &+ UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        return start
    }
}
