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

    /// The number of registered observers of changes and events (for diagnostics and tests).
    /// - Complexity: O(1).
    public var observerCount: Int {
        storage.withLock { $0.changeObservers.count + $0.eventObservers.count }
    }
}
