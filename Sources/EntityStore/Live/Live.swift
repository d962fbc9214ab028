import Observation
import StoreCore
import Synchronization

/// A live query: a value maintained incrementally from each commit's change set, with
/// the diff of every change. Create one with ``EntityStore/live(_:)->LiveList<E>`` (rows) or
/// ``EntityStore/live(_:groupedBy:aggregating:)`` (group-by aggregates).
///
/// It is created from the last published state and registered atomically with it, so
/// every later commit reaches it, whichever thread commits meanwhile; it ignores a
/// delivery of a commit its value already reflects (by store version, so a raw commit
/// back to an earlier state is followed too). It wakes only for commits whose
/// changed rows enter or leave what it selects (the key of an equality query, its table
/// otherwise), and then costs O(changed rows × log k) for a value of k rows or groups.
///
/// It is `Observable`: reading ``value`` inside `withObservationTracking` tracks it.
public final class Live<Value: Sendable, Diff: Sendable>: Sendable, ChangeWatcher, Observable {
    /// One delivery.
    public typealias Update = LiveUpdate<Value, Diff>

    @usableFromInline
    struct ObserverEntry: Sendable {
        @usableFromInline let key: UInt64
        /// The token's status, held strongly: releasing the token cancels it.
        @usableFromInline let status: ObservationStatus
        @usableFromInline let handler: @Sendable (Update) -> Void
        let onTermination: (@Sendable () -> Void)?

        init(key: UInt64, token: Observation, handler: @escaping @Sendable (Update) -> Void, onTermination: (@Sendable () -> Void)?) {
            self.key = key
            self.status = token.deliveryStatus
            self.handler = handler
            self.onTermination = onTermination
        }
    }

    @usableFromInline
    struct Inner: Sendable {
        @usableFromInline var revision: UInt64
        /// The store version (``StoreCore/Changes/version``) the value reflects: deliveries
        /// at or below it are already in the value. Set when the query is registered.
        @usableFromInline var version: UInt64 = 0
        /// In registration order (keys ascend), so a delivery hands them out as they are.
        @usableFromInline var observers: [ObserverEntry] = []
        @usableFromInline var nextObserver: UInt64 = 0
        @usableFromInline var wakeups = 0

        @inlinable
        init(revision: UInt64) {
            self.revision = revision
        }
    }

    /// A delivery to hand out after the lock is released. (A struct, not a tuple: a
    /// generic tuple's type metadata is looked up at run time wherever it is used.)
    @usableFromInline
    struct Delivery {
        @usableFromInline let update: Update
        @usableFromInline let observers: [ObserverEntry]

        @inlinable
        init(update: Update, observers: [ObserverEntry]) {
            self.update = update
            self.observers = observers
        }
    }

    @usableFromInline let inner: Lock<Inner>
    /// The engine's current value. The engine is the value's only holder between commits
    /// (besides observers that keep a delivered value), so the next commit changes its
    /// persistent structures in place instead of copying the paths it touches.
    @usableFromInline let current: @Sendable () -> Value
    /// Brings the engine up to a commit; returns the new value with its diff (read under
    /// the engine's lock once), or nil if the value did not change. Called under
    /// `inner`'s lock, so one commit at a time.
    @usableFromInline let step: @Sendable (DeliveredCommit) -> Update?
    /// The whole value as a diff, for a stream's first element.
    @usableFromInline let initialDiff: @Sendable (Value) -> Diff
    /// The body of ``refresh(_:)``, made by the (inlinable) initializer, so it is compiled
    /// for the concrete value and diff types where the query is created: the registry
    /// calls `refresh` through the `ChangeWatcher` protocol, where the class's own
    /// methods would run as unspecialized generic code.
    @usableFromInline let refreshBody: @Sendable (Live, DeliveredCommit) -> Void
    private let unregister = Lock<(@Sendable () -> Void)?>(nil)
    @usableFromInline let registrar = ObservationRegistrar()
    /// Whether ``value`` was ever read. Until it is, no `withObservationTracking` (or
    /// SwiftUI view) can be tracking it, so a delivery skips the registrar, a lock and a
    /// lookup of its own. Set before the read takes the lock, and tested after a delivery
    /// released it, so a first read either sees the new value or is told of the change.
    @usableFromInline let valueWasRead = Atomic<Bool>(false)
    /// `\.value`, made once: a key path into a generic class is instantiated at run time,
    /// which costs microseconds, on every use of the literal.
    @usableFromInline let valueKeyPath: any KeyPath<Live, Value> & Sendable = \.value

    @inlinable
    init(
        current: @escaping @Sendable () -> Value, revision: UInt64, initialDiff: @escaping @Sendable (Value) -> Diff,
        step: @escaping @Sendable (DeliveredCommit) -> Update?
    ) {
        self.inner = Lock(Inner(revision: revision))
        self.current = current
        self.step = step
        self.initialDiff = initialDiff
        self.refreshBody = { live, commit in live.refreshValue(commit) }
    }

    @usableFromInline
    func start(atVersion version: UInt64) {
        inner.withLock { $0.version = version }
    }

    @usableFromInline
    func setUnregister(_ action: @escaping @Sendable () -> Void) {
        unregister.withLock { $0 = action }
    }

    deinit {
        unregister.withLock { $0 }?()
        let terminations = inner.withLock { $0.observers.compactMap { $0.onTermination } }
        for terminate in terminations { terminate() }
    }

    /// The current value. Tracked by `withObservationTracking`.
    /// - Complexity: O(1).
    public var value: Value {
        if !valueWasRead.load(ordering: .relaxed) { valueWasRead.store(true, ordering: .sequentiallyConsistent) }
        registrar.access(self, keyPath: valueKeyPath)
        let current = current
        return inner.withLock { _ in current() }
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
        let initialDiff = initialDiff, current = current
        let observation = observe(
            startingWith: { inner in
                let value = current()
                continuation.yield(Update(value: value, diff: initialDiff(value), revision: inner.revision))
            },
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
            self?.inner.withLock { $0.observers.removeAll { $0.key == key } }
        })
        inner.withLock { inner in
            inner.observers.append(ObserverEntry(key: key, token: observation, handler: handler, onTermination: onTermination))
            initial(inner)
        }
        return observation
    }

    @usableFromInline
    func refresh(_ commit: DeliveredCommit) {
        refreshBody(self, commit)
    }

    /// Brings the value up to `commit` and tells the observers if it changed. A commit at
    /// or below the store version the value reflects is already in it, and is ignored.
    @inlinable
    func refreshValue(_ commit: DeliveredCommit) {
        // Unwrapped as it is returned, the delivery is moved out of its optional; kept in
        // a variable first, it would be copied out (a retain of each part) and both copies
        // destroyed, at every wake.
        guard let delivery = inner.withLock({ inner -> Delivery? in
            guard commit.version > inner.version else { return nil }
            inner.version = commit.version
            inner.revision = commit.revision
            inner.wakeups += 1
            guard let update = step(commit) else { return nil }
            return Delivery(update: update, observers: inner.observers)
        }) else { return }
        // Observation's change notification runs outside the lock: an `onChange` may read
        // the value (it then sees the new one).
        if valueWasRead.load(ordering: .sequentiallyConsistent) { registrar.withMutation(of: self, keyPath: valueKeyPath) {} }
        for entry in delivery.observers where entry.status.isActive {
            entry.handler(delivery.update)
        }
    }
}

/// A live query of rows: ``LiveRows`` and their ``LiveDiff`` per commit.
public typealias LiveList<E: Entity> = Live<LiveRows<E>, LiveDiff<E>>
