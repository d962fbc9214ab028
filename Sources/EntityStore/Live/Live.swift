import Observation
import StoreCore

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
    struct State: Sendable {
        @usableFromInline var revision: UInt64
        /// The store version (``StoreCore/Changes/version``) the value reflects: deliveries
        /// at or below it are already in the value. Set when the query is registered.
        @usableFromInline var version: UInt64 = 0
        @usableFromInline var wakeups = 0

        @inlinable
        init(revision: UInt64) {
            self.revision = revision
        }
    }

    @usableFromInline let core: ObservableCore<State, Update>
    /// The engine's current value. The engine is the value's only holder between commits
    /// (besides observers that keep a delivered value), so the next commit changes its
    /// persistent structures in place instead of copying the paths it touches.
    @usableFromInline let current: @Sendable () -> Value
    /// Brings the engine up to a commit; returns the new value with its diff (read under
    /// the engine's lock once), or nil if the value did not change. Called under the
    /// core's lock, so one commit at a time.
    @usableFromInline let step: @Sendable (DeliveredCommit) -> Update?
    /// The whole value as a diff, for a stream's first element.
    @usableFromInline let initialDiff: @Sendable (Value) -> Diff
    /// The body of ``refresh(_:)``, made by the (inlinable) initializer, so it is compiled
    /// for the concrete value and diff types where the query is created: the registry
    /// calls `refresh` through the `ChangeWatcher` protocol, where the class's own
    /// methods would run as unspecialized generic code.
    @usableFromInline let refreshBody: @Sendable (Live, DeliveredCommit) -> Void
    private let unregister = Lock<(@Sendable () -> Void)?>(nil)
    /// `\.value`, made once: a key path into a generic class is instantiated at run time,
    /// which costs microseconds, on every use of the literal.
    @usableFromInline let valueKeyPath: any KeyPath<Live, Value> & Sendable = \.value

    @inlinable
    init(
        current: @escaping @Sendable () -> Value, revision: UInt64, initialDiff: @escaping @Sendable (Value) -> Diff,
        step: @escaping @Sendable (DeliveredCommit) -> Update?
    ) {
        self.core = ObservableCore(State(revision: revision))
        self.current = current
        self.step = step
        self.initialDiff = initialDiff
        self.refreshBody = { live, commit in live.refreshValue(commit) }
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
        let current = current
        return core.read(tracking: self, valueKeyPath) { _ in current() }
    }

    /// The store revision the value reflects. O(1).
    public var revision: UInt64 { core.withState { $0.revision } }

    /// How many commits woke this query (whether or not its value changed), for tests and
    /// diagnostics. O(1).
    public var wakeups: Int { core.withState { $0.wakeups } }

    /// Calls `handler` with each new value and its diff, in commit order, until the
    /// returned token is cancelled or released. Registered before this returns.
    /// - Complexity: O(1) to register.
    public func observe(_ handler: @escaping @Sendable (Update) -> Void) -> Observation {
        core.observe(startingWith: { _ in }, onTermination: nil, handler)
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
        let observation = core.observe(
            startingWith: { state in
                let value = current()
                continuation.yield(Update(value: value, diff: initialDiff(value), revision: state.revision))
            },
            onTermination: { continuation.finish() }
        ) { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    @usableFromInline
    func refresh(_ commit: DeliveredCommit) {
        refreshBody(self, commit)
    }

    /// Brings the value up to `commit` and tells the observers if it changed. A commit at
    /// or below the store version the value reflects is already in it, and is ignored.
    @inlinable
    func refreshValue(_ commit: DeliveredCommit) {
        let step = step
        core.update(self, valueKeyPath) { state -> Update? in
            guard commit.version > state.version else { return nil }
            state.version = commit.version
            state.revision = commit.revision
            state.wakeups += 1
            return step(commit)
        }
    }
}

/// A live query of rows: ``LiveRows`` and their ``LiveDiff`` per commit.
public typealias LiveList<E: Entity> = Live<LiveRows<E>, LiveDiff<E>>
