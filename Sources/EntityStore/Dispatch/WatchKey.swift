/// A watched entity ID, hashable across entity types.
///
/// An `Int` ID, the common case, is kept as it is: hashing and comparing it costs a few
/// instructions, where `AnyHashable` canonicalizes integers through a box on every hash
/// and every comparison (a commit builds a key for each changed ID and looks it up).
/// Other IDs are type-erased behind one reference, so a key stays two words and copying
/// an integer key copies no existential. Keys are only compared within one table, whose
/// IDs share a type, so an `Int` key never needs to equal a key of another integer type.
@usableFromInline
struct WatchKey: Hashable, Sendable {
    /// The ID itself when it is an `Int`; 0 otherwise.
    @usableFromInline
    let integer: Int
    /// The ID when it is not an `Int`.
    @usableFromInline
    let other: Other?

    /// A type-erased ID that is not an `Int`.
    ///
    /// `@unchecked Sendable` is safe: `AnyHashable` is not `Sendable` in general, but the
    /// only initializer takes a `Sendable` value (an entity ID, which the `Entity`
    /// protocol requires to be `Sendable`), and the reference is never mutated.
    @usableFromInline
    final class Other: Hashable, @unchecked Sendable {
        @usableFromInline let value: AnyHashable

        @inlinable
        init<ID: Hashable & Sendable>(_ value: ID) {
            self.value = AnyHashable(value)
        }

        @inlinable
        static func == (lhs: Other, rhs: Other) -> Bool { lhs === rhs || lhs.value == rhs.value }

        @inlinable
        func hash(into hasher: inout Hasher) { hasher.combine(value) }
    }

    @inlinable
    init<ID: Hashable & Sendable>(_ id: ID) {
        if ID.self == Int.self {
            // The types match (checked just above), so the bits are an `Int`.
            integer = unsafeBitCast(id, to: Int.self)
            other = nil
        } else {
            integer = 0
            other = Other(id)
        }
    }

    @inlinable
    static func == (lhs: WatchKey, rhs: WatchKey) -> Bool {
        lhs.integer == rhs.integer && lhs.other == rhs.other
    }

    @inlinable
    func hash(into hasher: inout Hasher) {
        hasher.combine(integer)
        if let other { hasher.combine(other) }
    }
}
