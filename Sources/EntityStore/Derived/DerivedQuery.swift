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
/// not leaves it alone. "Changes" is the store's own test (``ValueIdentity``): a field
/// going from `0.0` to `-0.0` is a change, a row rewritten with the NaN it held is not.
public final class DerivedQuery<Value: Sendable & Equatable>: Sendable, ChangeWatcher, Observable {
    @usableFromInline
    struct State: Sendable {
        @usableFromInline var value: Value
        /// The revision of the state `value` reflects.
        @usableFromInline var revision: UInt64
        /// The store version (``StoreCore/Changes/version``) `value` reflects: deliveries at
        /// or below it are already in the value. Set when the query is registered.
        @usableFromInline var version: UInt64 = 0
        @usableFromInline var recomputations = 0

        @inlinable
        init(value: Value, revision: UInt64) {
            self.value = value
            self.revision = revision
        }
    }

    @usableFromInline let core: ObservableCore<State, ValueChange<Value>>
    @usableFromInline let recompute: @Sendable (DeliveredCommit, Value) -> Value?
    /// Whether a recomputed value is the one held after the commit (then nothing is
    /// delivered).
    @usableFromInline let isSame: @Sendable (DeliveredCommit, Value, Value) -> Bool
    /// The body of ``refresh(_:)``, built by the (inlinable) initializer, so it is compiled
    /// for the concrete `Value` where the query is created: called from the registry
    /// through the `ChangeWatcher` protocol, the class's own methods run generic code that
    /// looks up type metadata and compares and copies values through witness tables.
    @usableFromInline let refreshBody: @Sendable (DerivedQuery, DeliveredCommit) -> Void
    private let unregister: Lock<(@Sendable () -> Void)?> = Lock(nil)
    /// `\.value`, made once: a key path into a generic class is instantiated at run time,
    /// which costs microseconds, on every use of the literal.
    @usableFromInline let valueKeyPath: any KeyPath<DerivedQuery, Value> & Sendable = \.value

    /// A query whose value `initial` reflects the state of revision `revision`.
    /// `recompute` returns the new value, or nil if the commit does not concern it;
    /// `isSame` tells a new value that is the held one, given the commit (by default the
    /// store's test of a change, ``ValueIdentity``).
    @inlinable
    init(
        initial: Value, revision: UInt64,
        isSame: @escaping @Sendable (DeliveredCommit, Value, Value) -> Bool = { _, new, old in ValueIdentity.same(new, old) },
        recompute: @escaping @Sendable (DeliveredCommit, Value) -> Value?
    ) {
        self.core = ObservableCore(State(value: initial, revision: revision))
        self.recompute = recompute
        self.isSame = isSame
        self.refreshBody = { query, commit in query.refreshValue(commit) }
    }

    @usableFromInline
    func start(atVersion version: UInt64) {
        core.withState { $0.version = version }
    }

    @usableFromInline
    func setUnregister(_ action: @escaping @Sendable () -> Void) {
        unregister.withLock { $0 = action }
    }

    deinit {
        unregister.withLock { $0 }?()
    }

    /// The current value. Tracked by `withObservationTracking`.
    /// - Complexity: O(1).
    public var value: Value {
        core.read(tracking: self, valueKeyPath) { $0.value }
    }

    /// How many times the value was re-read after a commit; the computation at creation is
    /// not counted (so 0 until a commit concerns the query), as for StoreCore's `Derived`.
    /// - Complexity: O(1).
    public var recomputations: Int { core.withState { $0.recomputations } }

    /// Calls `handler` with the old and new value each time the value changes, in commit
    /// order, until the returned token is cancelled or released.
    /// - Complexity: O(1) to register; O(k) in the observers to cancel.
    @inlinable
    public func observe(_ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void) -> Observation {
        core.observe(startingWith: { _ in }, onTermination: nil) { change in handler(change.old, change.new) }
    }

    /// The current value, then each new value, as an `AsyncStream`. The current value is
    /// read and the stream registered atomically, before this returns: it receives every
    /// later change and no value twice. The stream ends when the query is deallocated;
    /// cancelling the consumer unregisters it.
    /// - Complexity: O(1) to register.
    @inlinable
    public func values(
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        let observation = core.observe(
            startingWith: { continuation.yield($0.value) }, onTermination: { continuation.finish() }
        ) { change in
            continuation.yield(change.new)
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    @usableFromInline
    func refresh(_ commit: DeliveredCommit) {
        refreshBody(self, commit)
    }

    /// Re-reads the value after `commit` and tells the observers if it changed. A commit
    /// at or below the store version the value reflects is already in it, and is ignored.
    @inlinable
    func refreshValue(_ commit: DeliveredCommit) {
        let recompute = recompute, isSame = isSame
        core.update(self, valueKeyPath) { state -> ValueChange<Value>? in
            guard commit.version > state.version else { return nil }
            state.version = commit.version
            state.revision = commit.revision
            let old = state.value
            guard let new = recompute(commit, old) else { return nil }
            state.recomputations += 1
            // The store's test of a change, as its change sets use: `==` calls ±0 equal and
            // a NaN unequal to itself, which would hide a sign flip and report a restore.
            guard !isSame(commit, new, old) else { return nil }
            state.value = new
            return ValueChange(old: old, new: new)
        }
    }
}
