/// One published state transition: the state before and after a commit (or a whole batch).
///
/// Observers receive `Changes` in version order; each `previous` equals the `current` of
/// the Changes delivered before it to the same observer.
public struct Changes<State: Sendable>: Sendable {
    /// The state before the commit.
    public let previous: State
    /// The state after the commit.
    public let current: State
    /// The store version this transition produced (1 for the first published commit).
    public let version: UInt64
    /// The name of the commit or batch.
    public let name: String

    /// Creates a transition.
    public init(previous: State, current: State, version: UInt64, name: String) {
        self.previous = previous
        self.current = current
        self.version = version
        self.name = name
    }

    /// Whether the value at `keyPath` differs between `previous` and `current`.
    /// - Complexity: one `==` on the selected value.
    public func hasChanges<V: Equatable>(_ keyPath: KeyPath<State, V>) -> Bool {
        previous[keyPath: keyPath] != current[keyPath: keyPath]
    }

    /// Runs `body` with the new value when the value at `keyPath` changed.
    /// - Complexity: one `==` on the selected value.
    public func ifChanged<V: Equatable>(_ keyPath: KeyPath<State, V>, _ body: (V) throws -> Void) rethrows {
        let new = current[keyPath: keyPath]
        if previous[keyPath: keyPath] != new { try body(new) }
    }

    /// Runs `body` with both new values when either value changed.
    /// - Complexity: at most two `==` on the selected values.
    public func ifChanged<V1: Equatable, V2: Equatable>(
        _ k1: KeyPath<State, V1>, _ k2: KeyPath<State, V2>, _ body: (V1, V2) throws -> Void
    ) rethrows {
        if hasChanges(k1) || hasChanges(k2) {
            try body(current[keyPath: k1], current[keyPath: k2])
        }
    }

    /// Runs `body` with the three new values when any of them changed.
    /// - Complexity: at most three `==` on the selected values.
    public func ifChanged<V1: Equatable, V2: Equatable, V3: Equatable>(
        _ k1: KeyPath<State, V1>, _ k2: KeyPath<State, V2>, _ k3: KeyPath<State, V3>,
        _ body: (V1, V2, V3) throws -> Void
    ) rethrows {
        if hasChanges(k1) || hasChanges(k2) || hasChanges(k3) {
            try body(current[keyPath: k1], current[keyPath: k2], current[keyPath: k3])
        }
    }

    /// The same transition seen through `keyPath`.
    /// - Complexity: two key-path reads.
    public func scoped<Sub: Sendable>(_ keyPath: KeyPath<State, Sub>) -> Changes<Sub> {
        Changes<Sub>(
            previous: previous[keyPath: keyPath], current: current[keyPath: keyPath],
            version: version, name: name)
    }
}
