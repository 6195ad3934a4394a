/// A small, fast, seedable random number generator (Steele, Lea & Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014). Same seed, same sequence on every platform: used for reproducible synthetic data
/// and for randomized tests that print their seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform Double in 0..<1 from the top 53 bits (identical across platforms, unlike `Double.random(in:)`).
    public mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// A uniform Double in the range.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + nextUnit() * (range.upperBound - range.lowerBound)
    }
}
