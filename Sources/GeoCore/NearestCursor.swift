/// Where a nearest-first walk resumes: strictly after (key, id) in (distance, record number) order. Stable under
/// inserts and deletes elsewhere: a record inserted closer than the cursor was is simply not returned again.
public struct NearestCursor: Sendable, Hashable {
    public let key: Double
    public let id: UInt32

    public init(key: Double, id: UInt32) { (self.key, self.id) = (key, id) }
}
