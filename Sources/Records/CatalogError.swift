/// Errors of the record store, phrased for users.
public enum CatalogError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case storage(String)
    /// The store cannot be reached now (a shared store that is down or restarting); worth retrying.
    case unavailable(String)
    /// The change log no longer holds the changes after `after`: it is trimmed through `trimmedThrough`.
    case changesTrimmed(after: UInt64, trimmedThrough: UInt64)
    /// The store is at `storeAt`, before the `applied` changes a follower has already applied: it lost commits (a
    /// failover to a standby that missed them, a restore from a backup), so the follower must reload.
    case storeBehind(applied: UInt64, storeAt: UInt64)

    /// A follower cannot go on from its changes and must load every record again.
    public var requiresReload: Bool {
        switch self {
        case .changesTrimmed, .storeBehind: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): return "cannot open database \(path): \(reason)"
        case .storage(let reason): return "database error: \(reason)"
        case .unavailable(let reason): return "database unavailable: \(reason)"
        case .changesTrimmed(let after, let trimmed):
            return "the change log is trimmed through \(trimmed), so the changes after \(after) are gone"
        case .storeBehind(let applied, let storeAt):
            return "the store is at change \(storeAt), behind the change \(applied) applied here (it lost commits: a failover or a restore)"
        }
    }
}
