extension StateStore {
    /// Registers `handler` for changes of the value at `keyPath`: it runs only when that
    /// value changed (by `==`), with the old and the new value.
    /// - Complexity: one `==` on the value per published commit.
    public func observe<Value: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, Value> & Sendable,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> Observation {
        observe { changes in
            let old = changes.previous[keyPath: keyPath]
            let new = changes.current[keyPath: keyPath]
            if old != new { handler(old, new) }
        }
    }

    /// An `AsyncStream` of every ``Changes`` published after this call. Registration is
    /// synchronous, so nothing committed after the call is missed. The stream ends when the
    /// store is deallocated; cancelling the consumer unregisters it.
    /// - Complexity: O(n) in the number of observers, to register.
    public func changes(
        bufferingPolicy: AsyncStream<Changes<State>>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Changes<State>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Changes<State>.self, bufferingPolicy: bufferingPolicy)
        let observation = observe(startingWith: { _ in }, onTermination: { continuation.finish() }) {
            continuation.yield($0)
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// An `AsyncStream` of the value at `keyPath`: the current value first, then each
    /// distinct new value (by `==`). Registration is synchronous; the stream ends when the
    /// store is deallocated; cancelling the consumer unregisters it.
    /// - Complexity: one `==` on the value per published commit.
    public func values<Value: Equatable & Sendable>(
        of keyPath: any KeyPath<State, Value> & Sendable,
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        let observation = observe(
            startingWith: { continuation.yield($0[keyPath: keyPath]) },
            onTermination: { continuation.finish() }
        ) { changes in
            let new = changes.current[keyPath: keyPath]
            if changes.previous[keyPath: keyPath] != new { continuation.yield(new) }
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}
