/// A watched entity ID, hashable across entity types.
///
/// `@unchecked Sendable` is safe: `AnyHashable` is not `Sendable` in general, but both
/// initializers below accept only `Sendable` values (entity IDs, which the `Entity`
/// protocol requires to be `Sendable`), so the wrapped value always is.
@usableFromInline
struct WatchKey: Hashable, @unchecked Sendable {
    @usableFromInline
    let base: AnyHashable

    @inlinable
    init(_ id: some Hashable & Sendable) {
        base = AnyHashable(id)
    }

    init(erased id: any Hashable & Sendable) {
        base = AnyHashable(id)
    }
}
