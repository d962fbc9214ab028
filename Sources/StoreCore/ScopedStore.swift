/// A view of part of a store's state (see ``StateStore/scope(_:dependencies:)``).
/// It owns no state: reads, commits, batches and events go to the parent store.
public final class ScopedStore<State: Sendable>: StateStore {
    private let host: any ScopeHost<State>
    /// The dependencies handed to actions started on this scope.
    public let dependencies: Dependencies

    init(host: any ScopeHost<State>, dependencies: Dependencies) {
        self.host = host
        self.dependencies = dependencies
    }

    /// The part of the parent's current state.
    /// - Complexity: O(1).
    public var state: State { host.state }

    /// The parent store's version.
    /// - Complexity: O(1).
    public var version: UInt64 { host.version }

    /// Commits on the parent store, mutating only this part.
    /// - Complexity: that of the parent's commit.
    @discardableResult
    public func commit<Result>(
        _ name: String = "commit", withContext body: (inout State, CommitContext) throws -> Result
    ) throws -> Result {
        try host.commit(name, withContext: body)
    }

    /// A batch on the parent store.
    /// - Complexity: that of the parent's batch.
    @discardableResult
    public func batch<Result>(_ name: String = "batch", _ body: () throws -> Result) throws -> Result {
        try host.batch(name, body)
    }

    /// Registers `handler` for published changes of this part (only those that changed it,
    /// when `State` is `Equatable`; all of the parent's otherwise).
    /// - Complexity: one `==` on the part per published commit.
    public func observe(_ handler: @escaping @Sendable (Changes<State>) -> Void) -> Observation {
        host.observe(startingWith: { _ in }, onTermination: nil, handler)
    }

    /// Registers `handler` and reports the part at registration atomically (see
    /// ``StateStore/observe(startingWith:onTermination:_:)``).
    /// - Complexity: one `==` on the part per published commit.
    public func observe(
        startingWith initial: (State) -> Void,
        onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (Changes<State>) -> Void
    ) -> Observation {
        host.observe(startingWith: initial, onTermination: onTermination, handler)
    }

    /// Sends an event through the parent store.
    /// - Complexity: that of the parent's `send`.
    public func send<Event: Sendable>(_ event: Event) {
        host.send(event)
    }
}

/// What a scope forwards to, with the parent's state type erased.
protocol ScopeHost<State>: Sendable {
    associatedtype State: Sendable
    var state: State { get }
    var version: UInt64 { get }
    func commit<Result>(_ name: String, withContext body: (inout State, CommitContext) throws -> Result) throws -> Result
    func batch<Result>(_ name: String, _ body: () throws -> Result) throws -> Result
    func observe(
        startingWith initial: (State) -> Void,
        onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (Changes<State>) -> Void
    ) -> Observation
    func send<Event: Sendable>(_ event: Event)
}

/// Forwards to `parent` through `keyPath`.
struct KeyPathHost<Root: Sendable, State: Sendable>: ScopeHost {
    let parent: any StateStore<Root>
    let keyPath: any WritableKeyPath<Root, State> & Sendable
    let isEqual: (@Sendable (State, State) -> Bool)?

    init(parent: any StateStore<Root>, keyPath: any WritableKeyPath<Root, State> & Sendable) {
        self.parent = parent
        self.keyPath = keyPath
        self.isEqual = equalityComparator(for: State.self)
    }

    var state: State { parent.state[keyPath: keyPath] }
    var version: UInt64 { parent.version }

    func commit<Result>(_ name: String, withContext body: (inout State, CommitContext) throws -> Result) throws -> Result {
        try parent.commit(name, withContext: { root, context in try body(&root[keyPath: keyPath], context) })
    }

    func batch<Result>(_ name: String, _ body: () throws -> Result) throws -> Result {
        try parent.batch(name, body)
    }

    func observe(
        startingWith initial: (State) -> Void,
        onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (Changes<State>) -> Void
    ) -> Observation {
        let keyPath = keyPath
        let isEqual = isEqual
        return parent.observe(
            startingWith: { initial($0[keyPath: keyPath]) }, onTermination: onTermination
        ) { changes in
            let scoped = changes.scoped(keyPath)
            if let isEqual, isEqual(scoped.previous, scoped.current) { return }
            handler(scoped)
        }
    }

    func send<Event: Sendable>(_ event: Event) {
        parent.send(event)
    }
}
