import HashTreeCollections
import Observation
import StoreCore
import Synchronization

/// A memoized, observable value computed from the store's tables that re-reads only when
/// a commit touches what it watches: one entity, a few entities, an index key or a range.
///
/// Create one with ``EntityStore/derived(_:id:)`` and its siblings. It is kept up to date
/// with the store's published commits while it is alive; `recomputations` counts the
/// re-reads after its creation.
///
/// A query is created from the last published state and registered atomically with it,
/// so every later commit reaches it, whichever thread commits meanwhile. It remembers the
/// store version its value reflects (StoreCore's `Store.version`) and ignores a delivery of a
/// commit at or below it (a delivery trails publication and may come from another thread),
/// so its value never moves backwards. Created inside a batch, it starts from the state
/// before the batch (the batch's writes are not published yet, and may be rolled back) and
/// follows the batch once it is published.
///
/// It is `Observable`: reading ``value`` inside `withObservationTracking` (or a SwiftUI
/// view) tracks it; a commit that changes the value triggers the change, one that does
/// not leaves it alone.
public final class DerivedQuery<Value: Sendable & Equatable>: Sendable, ChangeWatcher, Observable {
    @usableFromInline
    struct ObserverEntry: Sendable {
        /// The token's status, held strongly: releasing the token cancels it.
        @usableFromInline let status: ObservationStatus
        @usableFromInline let handler: @Sendable (Value, Value) -> Void
        /// Called when the query is deallocated (a stream finishes).
        let onTermination: (@Sendable () -> Void)?

        init(token: Observation, handler: @escaping @Sendable (Value, Value) -> Void, onTermination: (@Sendable () -> Void)?) {
            self.status = token.deliveryStatus
            self.handler = handler
            self.onTermination = onTermination
        }
    }

    @usableFromInline
    struct Inner: Sendable {
        @usableFromInline var value: Value
        /// The revision of the state `value` reflects.
        @usableFromInline var revision: UInt64
        /// The store version (``StoreCore/Changes/version``) `value` reflects: deliveries at
        /// or below it are already in the value. Set when the query is registered.
        @usableFromInline var version: UInt64 = 0
        @usableFromInline var recomputations = 0
        @usableFromInline var observers: [UInt64: ObserverEntry] = [:]
        @usableFromInline var nextObserver: UInt64 = 0

        @inlinable
        init(value: Value, revision: UInt64) {
            self.value = value
            self.revision = revision
        }
    }

    @usableFromInline let inner: Lock<Inner>
    @usableFromInline let recompute: @Sendable (DeliveredCommit, Value) -> Value?
    /// The body of ``refresh(_:)``, built by the (inlinable) initializer, so it is compiled
    /// for the concrete `Value` where the query is created: called from the registry
    /// through the `ChangeWatcher` protocol, the class's own methods run generic code that
    /// looks up type metadata and compares and copies values through witness tables.
    @usableFromInline let refreshBody: @Sendable (DerivedQuery, DeliveredCommit) -> Void
    private let unregister: Lock<(@Sendable () -> Void)?> = Lock(nil)
    @usableFromInline let registrar = ObservationRegistrar()
    /// Whether ``value`` was ever read. Until it is, no `withObservationTracking` (or
    /// SwiftUI view) can be tracking it, so a delivery skips the registrar, a lock and a
    /// lookup of its own. Set before the read takes the lock, and tested after a delivery
    /// released it, so a first read either sees the new value or is told of the change.
    @usableFromInline let valueWasRead = Atomic<Bool>(false)
    /// `\.value`, made once: a key path into a generic class is instantiated at run time,
    /// which costs microseconds, on every use of the literal.
    @usableFromInline let valueKeyPath: any KeyPath<DerivedQuery, Value> & Sendable = \.value

    /// A query whose value `initial` reflects the state of revision `revision`.
    /// `recompute` returns the new value, or nil if the commit does not concern it.
    @inlinable
    init(initial: Value, revision: UInt64, recompute: @escaping @Sendable (DeliveredCommit, Value) -> Value?) {
        self.inner = Lock(Inner(value: initial, revision: revision))
        self.recompute = recompute
        self.refreshBody = { query, commit in query.refreshValue(commit) }
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
        let terminations = inner.withLock { $0.observers.values.compactMap { $0.onTermination } }
        for terminate in terminations { terminate() }
    }

    /// The current value. Tracked by `withObservationTracking`.
    /// - Complexity: O(1).
    public var value: Value {
        if !valueWasRead.load(ordering: .relaxed) { valueWasRead.store(true, ordering: .sequentiallyConsistent) }
        registrar.access(self, keyPath: valueKeyPath)
        return inner.withLock { $0.value }
    }

    /// How many times the value was re-read after a commit; the computation at creation is
    /// not counted (so 0 until a commit concerns the query), as for StoreCore's `Derived`.
    /// - Complexity: O(1).
    public var recomputations: Int { inner.withLock { $0.recomputations } }

    /// Calls `handler` with the old and new value each time the value changes, in commit
    /// order, until the returned token is cancelled or released.
    /// - Complexity: O(1) to register; each change sorts the observers, O(k log k).
    public func observe(_ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void) -> Observation {
        observe(startingWith: { _ in }, onTermination: nil, handler)
    }

    /// The current value, then each new value, as an `AsyncStream`. The current value is
    /// read and the stream registered atomically, before this returns: it receives every
    /// later change and no value twice. The stream ends when the query is deallocated;
    /// cancelling the consumer unregisters it.
    /// - Complexity: O(1) to register.
    public func values(
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        let observation = observe(
            startingWith: { continuation.yield($0) }, onTermination: { continuation.finish() }
        ) { _, new in
            continuation.yield(new)
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// Registers `handler` and calls `initial` with the value at registration, atomically:
    /// `handler` then receives exactly the changes after that value. `initial` runs under
    /// the query's lock.
    private func observe(
        startingWith initial: (Value) -> Void, onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
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
            initial(inner.value)
        }
        return observation
    }

    /// A change to hand to observers: the value before and after, and who to tell.
    /// (A struct, not a tuple: where this code runs unspecialized for `Value`, a generic
    /// tuple's type metadata would be looked up at run time on every call.)
    @usableFromInline
    struct Update {
        @usableFromInline let old: Value
        @usableFromInline let new: Value
        @usableFromInline let observers: [ObserverEntry]

        @inlinable
        init(old: Value, new: Value, observers: [ObserverEntry]) {
            self.old = old
            self.new = new
            self.observers = observers
        }
    }

    @usableFromInline
    func refresh(_ commit: DeliveredCommit) {
        refreshBody(self, commit)
    }

    /// Re-reads the value after `commit` and tells the observers if it changed. A commit
    /// at or below the store version the value reflects is already in it, and is ignored.
    @inlinable
    func refreshValue(_ commit: DeliveredCommit) {
        // Unwrapped as it is returned, so the update is moved out of its optional, not copied.
        guard let update = inner.withLock({ inner -> Update? in
            guard commit.version > inner.version else { return nil }
            inner.version = commit.version
            inner.revision = commit.revision
            let old = inner.value
            guard let new = recompute(commit, old) else { return nil }
            inner.recomputations += 1
            guard new != old else { return nil }
            inner.value = new
            let observers = inner.observers.isEmpty ? [] : inner.observers.sorted { $0.key < $1.key }.map { $0.value }
            return Update(old: old, new: new, observers: observers)
        }) else { return }
        // Outside the lock: an observation's `onChange` may read the value (the new one).
        if valueWasRead.load(ordering: .sequentiallyConsistent) { registrar.withMutation(of: self, keyPath: valueKeyPath) {} }
        for entry in update.observers where entry.status.isActive {
            entry.handler(update.old, update.new)
        }
    }
}
