/// A watched entity ID, hashable across entity types.
///
/// `AnyHashable` is not `Sendable` in general, but every value wrapped here is an
/// `Entity.ID`, which the `Entity` protocol requires to be `Sendable`; the wrapper is only
/// created by `init(_:)` below, whose parameter enforces that.
struct WatchKey: Hashable, @unchecked Sendable {
    let base: AnyHashable

    init(_ id: some Hashable & Sendable) {
        base = AnyHashable(id)
    }

    init(erased id: any Hashable & Sendable) {
        base = AnyHashable(id)
    }
}
