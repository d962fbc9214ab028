import Observation
import StoreCore

/// A live query: a value maintained incrementally from each commit's change set, with
/// the diff of every change. Create one with ``EntityStore/live(_:)`` (rows) or
/// ``EntityStore/live(_:groupedBy:)`` (group-by aggregates).
///
/// It is created from the last published state and registered atomically with it, so
/// every later commit reaches it, whichever thread commits meanwhile; it ignores a
/// delivery at or below the revision its value reflects. It wakes only for commits whose
/// changed rows enter or leave what it selects (the key of an equality query, its table
/// otherwise), and then costs O(changed rows × log k) for a value of k rows or groups.
///
/// It is `Observable`: reading ``value`` inside `withObservationTracking` tracks it.
public final class Live<Value: Sendable, Diff: Sendable>: Sendable, ChangeWatcher, Observable {
    /// One delivery.
    public typealias Update = LiveUpdate<Value, Diff>

    private struct ObserverEntry: Sendable {
        weak var token: Observation?
        let handler: @Sendable (Update) -> Void
        let onTermination: (@Sendable () -> Void)?
    }

    private struct Inner: Sendable {
        var value: Value
        var revision: UInt64
        var observers: [UInt64: ObserverEntry] = [:]
        var nextObserver: UInt64 = 0
        var wakeups = 0
    }

    private let inner: Lock<Inner>
    /// Brings the engine up to a commit; returns the new value and its diff, or nil if the
    /// value did not change. Called under `inner`'s lock, so one commit at a time.
    private let step: @Sendable (Changes<EntityState>) -> (Value, Diff)?
    /// The whole value as a diff, for a stream's first element.
    private let initialDiff: @Sendable (Value) -> Diff
    private let unregister = Lock<(@Sendable () -> Void)?>(nil)
    private let registrar = ObservationRegistrar()
    /// `\.value`, made once: a key path into a generic class is instantiated at run time,
    /// which costs microseconds, on every use of the literal.
    private let valueKeyPath: any KeyPath<Live, Value> & Sendable = \.value

    init(
        value: Value, revision: UInt64, initialDiff: @escaping @Sendable (Value) -> Diff,
        step: @escaping @Sendable (Changes<EntityState>) -> (Value, Diff)?
    ) {
        self.inner = Lock(Inner(value: value, revision: revision))
        self.step = step
        self.initialDiff = initialDiff
    }

    func setUnregister(_ action: @escaping @Sendable () -> Void) {
        unregister.withLock { $0 = action }
    }

    deinit {
        unregister.withLock { $0 }?()
        let terminations = inner.withLock { $0.observers.values.compactMap { $0.onTermination } }
        for terminate in terminations { terminate() }
    }

    /// The current value. Tracked by `withObservationTracking`.
    /// - Complexity: O(1).
    public var value: Value {
        registrar.access(self, keyPath: valueKeyPath)
        return inner.withLock { $0.value }
    }

    /// The store revision the value reflects. O(1).
    public var revision: UInt64 { inner.withLock { $0.revision } }

    /// How many commits woke this query (whether or not its value changed), for tests and
    /// diagnostics. O(1).
    public var wakeups: Int { inner.withLock { $0.wakeups } }

    /// Calls `handler` with each new value and its diff, in commit order, until the
    /// returned token is cancelled or released. Registered before this returns.
    /// - Complexity: O(1) to register.
    public func observe(_ handler: @escaping @Sendable (Update) -> Void) -> Observation {
        observe(startingWith: { _ in }, onTermination: nil, handler)
    }

    /// The current value (its diff adds everything), then each change, as an
    /// `AsyncStream`, registered atomically before this returns: no change is missed or
    /// seen twice. The stream ends when the live query is deallocated; cancelling the
    /// consumer unregisters it.
    /// - Complexity: O(1) to register, plus building the first diff (O(k)).
    public func updates(
        bufferingPolicy: AsyncStream<Update>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Update> {
        let (stream, continuation) = AsyncStream.makeStream(of: Update.self, bufferingPolicy: bufferingPolicy)
        let initialDiff = initialDiff
        let observation = observe(
            startingWith: { continuation.yield(Update(value: $0.value, diff: initialDiff($0.value), revision: $0.revision)) },
            onTermination: { continuation.finish() }
        ) { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    private func observe(
        startingWith initial: (Inner) -> Void, onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (Update) -> Void
    ) -> Observation {
        let key = inner.withLock { inner in
            defer { inner.nextObserver += 1 }
            return inner.nextObserver
        }
        let observation = Observation(onCancel: { [weak self] in
            _ = self?.inner.withLock { $0.observers.removeValue(forKey: key) }
        })
        inner.withLock { inner in
            inner.observers[key] = ObserverEntry(token: observation, handler: handler, onTermination: onTermination)
            initial(inner)
        }
        return observation
    }

    func refresh(_ changes: Changes<EntityState>) {
        let delivery = inner.withLock { inner -> (Update, [ObserverEntry])? in
            let revision = changes.current.revision
            guard revision > inner.revision else { return nil }
            inner.revision = revision
            inner.wakeups += 1
            guard let (value, diff) = step(changes) else { return nil }
            inner.value = value
            let observers = inner.observers.isEmpty ? [] : inner.observers.sorted { $0.key < $1.key }.map { $0.value }
            return (Update(value: value, diff: diff, revision: revision), observers)
        }
        guard let (update, observers) = delivery else { return }
        // Observation's change notification runs outside the lock: an `onChange` may read
        // the value (it then sees the new one).
        registrar.withMutation(of: self, keyPath: valueKeyPath) {}
        for entry in observers {
            guard let token = entry.token, !token.isCancelled, !token.isSuspended else { continue }
            entry.handler(update)
        }
    }
}

/// A live query of rows: ``LiveRows`` and their ``LiveDiff`` per commit.
public typealias LiveList<E: Entity> = Live<LiveRows<E>, LiveDiff<E>>
