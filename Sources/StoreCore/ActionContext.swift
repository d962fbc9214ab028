/// What an asynchronous action or keyed task gets: the dependencies, the current state and
/// a way to commit. It holds its store weakly, so a running task never keeps a store alive.
public struct ActionContext<State: Sendable>: Sendable {
    /// The dependencies of the store (or scope) that started the action.
    public let dependencies: Dependencies
    /// The store (or a scope of it) while the store is alive; never retains the store.
    private let resolve: @Sendable () -> (any StateStore<State>)?

    init(store: any StateStore<State>) {
        let reference = WeakStore(store)
        self.init(dependencies: store.dependencies) { reference.value }
    }

    private init(dependencies: Dependencies, resolve: @escaping @Sendable () -> (any StateStore<State>)?) {
        self.dependencies = dependencies
        self.resolve = resolve
    }

    /// The context of a scope's task, built from the context of its parent's task: it
    /// reaches the part at `keyPath` through the parent's store, and holds no scope object
    /// (a scope a caller released still lets its tasks commit while the store lives).
    func scoped<Sub: Sendable>(
        _ keyPath: any WritableKeyPath<State, Sub> & Sendable,
        isEqual: (@Sendable (Sub, Sub) -> Bool)?, dependencies: Dependencies
    ) -> ActionContext<Sub> {
        let resolve = self.resolve
        return ActionContext<Sub>(dependencies: dependencies) {
            resolve().map { parent in
                ScopedStore(host: KeyPathHost(parent: parent, keyPath: keyPath, isEqual: isEqual), dependencies: dependencies)
            }
        }
    }

    /// The store's current state, or `nil` once the store is deallocated.
    /// - Complexity: O(1).
    public var state: State? { resolve()?.state }

    /// Commits on the store.
    /// - Throws: ``StoreError/storeDeallocated`` once the store is gone, or what the commit throws.
    /// - Complexity: that of ``Store/commit(_:withContext:)``.
    @discardableResult
    public func commit<Result>(_ name: String = "commit", _ body: (inout State) throws -> Result) throws -> Result {
        guard let store = resolve() else { throw StoreError.storeDeallocated }
        return try store.commit(name, withContext: { state, _ in try body(&state) })
    }

    /// Sends an event through the store.
    /// - Throws: ``StoreError/storeDeallocated`` once the store is gone.
    /// - Complexity: that of ``Store/send(_:)``.
    public func send<Event: Sendable>(_ event: Event) throws {
        guard let store = resolve() else { throw StoreError.storeDeallocated }
        store.send(event)
    }
}

/// A weak reference to a store.
final class WeakStore<State: Sendable>: Sendable {
    weak let value: (any StateStore<State>)?

    init(_ value: any StateStore<State>) { self.value = value }
}
