/// A view of part of a store's state (see ``StateStore/scope(_:dependencies:)``).
/// It owns no state: reads, commits, batches, events and keyed tasks go to the parent store.
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

    /// Registers `handler` for every later event of type `type` sent through the store
    /// (by this scope, the store or any other scope of it).
    /// - Complexity: that of the store's ``Store/onEvent(of:_:)``: O(n) in the number of
    ///   event observers.
    public func onEvent<Event: Sendable>(
        of type: Event.Type, _ handler: @escaping @Sendable (Event) -> Void
    ) -> Observation {
        host.onEvent(of: type, handler)
    }

    /// An `AsyncStream` of every event of type `type` sent through the store after this
    /// call (registration is synchronous). It ends when the store is deallocated (a scope
    /// keeps its store alive); cancelling the consumer unregisters it.
    /// - Complexity: O(n) in the number of event observers, to register.
    public func events<Event: Sendable>(
        of type: Event.Type,
        bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Event> {
        host.events(of: type, bufferingPolicy: bufferingPolicy)
    }

    /// Starts `operation` as a keyed task of the store (see ``Store/task(key:mode:operation:)``):
    /// keys are the store's, shared with the store and its other scopes. The context reads
    /// and commits this part, with this scope's dependencies; it holds neither the scope
    /// nor the store, so releasing the scope does not stop the task, and deallocating the
    /// store cancels it.
    /// - Complexity: that of the store's `task`: O(1) on average.
    @discardableResult
    public func task<Key: Hashable & Sendable>(
        key: Key, mode: TaskMode = .dropCurrent,
        operation: @escaping @Sendable (ActionContext<State>) async -> Void
    ) -> Task<Void, Never> {
        host.task(key: key, mode: mode, dependencies: dependencies, operation: operation)
    }

    /// Cancels and unregisters the store's tasks registered under `key`, running or queued.
    /// - Complexity: O(c) for the c tasks of `key`.
    public func cancel<Key: Hashable & Sendable>(key: Key) {
        host.cancel(key: key)
    }

    /// Whether the store has a task registered under `key`.
    /// - Complexity: O(1) on average.
    public func isRunning<Key: Hashable & Sendable>(key: Key) -> Bool {
        host.isRunning(key: key)
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
    func onEvent<Event: Sendable>(of type: Event.Type, _ handler: @escaping @Sendable (Event) -> Void) -> Observation
    func events<Event: Sendable>(
        of type: Event.Type, bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy
    ) -> AsyncStream<Event>
    func task<Key: Hashable & Sendable>(
        key: Key, mode: TaskMode, dependencies: Dependencies,
        operation: @escaping @Sendable (ActionContext<State>) async -> Void
    ) -> Task<Void, Never>
    func cancel<Key: Hashable & Sendable>(key: Key)
    func isRunning<Key: Hashable & Sendable>(key: Key) -> Bool
}

/// Forwards to `parent` through `keyPath`.
struct KeyPathHost<Root: Sendable, State: Sendable>: ScopeHost {
    let parent: any StateStore<Root>
    let keyPath: any WritableKeyPath<Root, State> & Sendable
    let isEqual: (@Sendable (State, State) -> Bool)?

    init(parent: any StateStore<Root>, keyPath: any WritableKeyPath<Root, State> & Sendable) {
        self.init(parent: parent, keyPath: keyPath, isEqual: equalityComparator(for: State.self))
    }

    init(
        parent: any StateStore<Root>, keyPath: any WritableKeyPath<Root, State> & Sendable,
        isEqual: (@Sendable (State, State) -> Bool)?
    ) {
        self.parent = parent
        self.keyPath = keyPath
        self.isEqual = isEqual
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

    func onEvent<Event: Sendable>(of type: Event.Type, _ handler: @escaping @Sendable (Event) -> Void) -> Observation {
        parent.onEvent(of: type, handler)
    }

    func events<Event: Sendable>(
        of type: Event.Type, bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy
    ) -> AsyncStream<Event> {
        parent.events(of: type, bufferingPolicy: bufferingPolicy)
    }

    func task<Key: Hashable & Sendable>(
        key: Key, mode: TaskMode, dependencies: Dependencies,
        operation: @escaping @Sendable (ActionContext<State>) async -> Void
    ) -> Task<Void, Never> {
        let keyPath = keyPath
        let isEqual = isEqual
        return parent.task(key: key, mode: mode) { context in
            await operation(context.scoped(keyPath, isEqual: isEqual, dependencies: dependencies))
        }
    }

    func cancel<Key: Hashable & Sendable>(key: Key) {
        parent.cancel(key: key)
    }

    func isRunning<Key: Hashable & Sendable>(key: Key) -> Bool {
        parent.isRunning(key: key)
    }
}
