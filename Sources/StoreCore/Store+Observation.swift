extension Store {
    /// Registers `handler` for every ``Changes`` published after this call, delivered
    /// synchronously and in version order.
    /// - Complexity: O(n) in the number of observers (the registry is copied on write).
    public func observe(_ handler: @escaping @Sendable (Changes<State>) -> Void) -> Observation {
        observe(startingWith: { _ in }, onTermination: nil, handler)
    }

    /// Registers `handler` and calls `initial` with the committed state at registration,
    /// atomically, so `handler` receives exactly the changes published after that state.
    /// `initial` runs under the store's lock: keep it quick and do not call the store.
    /// `onTermination` runs when the store is deallocated.
    /// - Complexity: O(n) in the number of observers.
    public func observe(
        startingWith initial: (State) -> Void,
        onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (Changes<State>) -> Void
    ) -> Observation {
        let status = ObservationStatus()
        let id = storage.withLock { storage in
            storage.nextObserverID += 1
            let id = storage.nextObserverID
            storage.changeObservers.append(
                ChangeObserver(id: id, status: status, handler: handler, onTermination: onTermination))
            initial(storage.state)
            return id
        }
        return Observation(status: status) { [weak self] in
            self?.storage.withLock { storage in
                storage.changeObservers.removeAll { $0.id == id }
            }
        }
    }

    /// Calls `body` with the committed state under the store's lock, so that no commit is
    /// published while it runs. A component that files itself somewhere this store's
    /// observers look (EntityStore's watcher registry) does so here, atomically with the
    /// state it read, as ``observe(startingWith:onTermination:_:)`` registers an observer:
    /// every commit published after that state is delivered after `body` returned.
    ///
    /// Deliveries trail publication, possibly on another thread: some of the commits up to
    /// the state `body` saw may still be delivered after it returned. `body` runs under the
    /// lock: keep it short and never call the store from it.
    /// - Complexity: O(1) plus the cost of `body`.
    package func withCommittedState<Result>(_ body: (State) throws -> Result) rethrows -> Result {
        try storage.withLock { storage in try body(storage.state) }
    }

    /// The number of registered observers of changes and events (for diagnostics and tests).
    /// - Complexity: O(1).
    public var observerCount: Int {
        storage.withLock { $0.changeObservers.count + $0.eventObservers.count }
    }
}
