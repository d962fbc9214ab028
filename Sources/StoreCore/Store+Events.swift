extension Store {
    /// Sends a one-shot event to the event observers; it is not stored in the state.
    ///
    /// Events share the ordered delivery queue with ``Changes``: an event sent inside a
    /// commit body or a batch is delivered after that commit's (or batch's) ``Changes``,
    /// and is dropped if the commit or batch throws.
    /// - Complexity: O(k) in the number of event observers.
    public func send<Event: Sendable>(_ event: Event) {
        let deferred = storage.withLock { storage -> Bool in
            if storage.writer != nil, storage.writer == ThreadID.current {
                storage.deferredEvents.append(event)
                return true
            }
            storage.pending.append(.event(EventDelivery(event: event, observers: storage.eventObservers)))
            return false
        }
        if !deferred { drain() }
    }

    /// Registers `handler` for every later event of type `type` (including values whose
    /// dynamic type conforms, when `type` is a protocol).
    /// - Complexity: O(n) in the number of event observers.
    public func onEvent<Event: Sendable>(
        of type: Event.Type, _ handler: @escaping @Sendable (Event) -> Void
    ) -> Observation {
        registerEventObserver(onTermination: nil) { event in
            if let event = event as? Event { handler(event) }
        }
    }

    /// An `AsyncStream` of every event of type `type` sent after this call (registration is
    /// synchronous). It ends when the store is deallocated; cancelling the consumer
    /// unregisters it.
    /// - Complexity: O(n) in the number of event observers, to register.
    public func events<Event: Sendable>(
        of type: Event.Type,
        bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: bufferingPolicy)
        let observation = registerEventObserver(onTermination: { continuation.finish() }) { event in
            if let event = event as? Event { continuation.yield(event) }
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    private func registerEventObserver(
        onTermination: (@Sendable () -> Void)?, _ handler: @escaping @Sendable (any Sendable) -> Void
    ) -> Observation {
        let status = ObservationStatus()
        let id = storage.withLock { storage in
            storage.nextObserverID += 1
            let id = storage.nextObserverID
            storage.eventObservers.append(
                EventObserver(id: id, status: status, handler: handler, onTermination: onTermination))
            return id
        }
        return Observation(status: status) { [weak self] in
            self?.storage.withLock { storage in
                storage.eventObservers.removeAll { $0.id == id }
            }
        }
    }
}
