/// A plain (latitude, longitude) pair, cheap to store in bulk.
public struct Coordinate2: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double

    public init(_ latitude: Double, _ longitude: Double) { (self.latitude, self.longitude) = (latitude, longitude) }
}
