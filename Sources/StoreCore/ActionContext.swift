/// What an asynchronous action or keyed task gets: the dependencies, the current state and
/// a way to commit. It holds its store weakly, so a running task never keeps a store alive.
public struct ActionContext<State: Sendable>: Sendable {
    /// The dependencies of the store (or scope) that started the action.
    public let dependencies: Dependencies
    private let store: WeakStore<State>

    init(store: any StateStore<State>) {
        self.dependencies = store.dependencies
        self.store = WeakStore(store)
    }

    /// The store's current state, or `nil` once the store is deallocated.
    /// - Complexity: O(1).
    public var state: State? { store.value?.state }

    /// Commits on the store.
    /// - Throws: ``StoreError/storeDeallocated`` once the store is gone, or what the commit throws.
    /// - Complexity: that of ``Store/commit(_:withContext:)``.
    @discardableResult
    public func commit<Result>(_ name: String = "commit", _ body: (inout State) throws -> Result) throws -> Result {
        guard let store = store.value else { throw StoreError.storeDeallocated }
        return try store.commit(name, withContext: { state, _ in try body(&state) })
    }

    /// Sends an event through the store.
    /// - Throws: ``StoreError/storeDeallocated`` once the store is gone.
    /// - Complexity: that of ``Store/send(_:)``.
    public func send<Event: Sendable>(_ event: Event) throws {
        guard let store = store.value else { throw StoreError.storeDeallocated }
        store.send(event)
    }
}

/// A weak reference to a store.
final class WeakStore<State: Sendable>: Sendable {
    weak let value: (any StateStore<State>)?

    init(_ value: any StateStore<State>) { self.value = value }
}
