/// Keeps a large structure a process loaded until it exits: freeing ~800 000 strings one by one would take longer
/// than the work it was loaded for (a CLI command, a benchmark: the process ends right after). A deliberate leak of
/// one reference, not a global.
@discardableResult
public func keepUntilExit<T: AnyObject>(_ object: T) -> T {
    _ = Unmanaged.passRetained(object)
    return object
}
