import Dispatch
import Synchronization

/// A thread-safe state container: one value, atomic commits, ordered synchronous delivery.
///
/// - Change detection: when `State` is `Equatable` (found once, at init), a commit whose
///   result equals the previous state publishes nothing. Otherwise every completed commit
///   counts as a change.
/// - Delivery: observers run synchronously on the committing thread, in version order.
///   A commit made while a delivery is in progress (from an observer, or from another
///   thread) is queued and delivered by the thread already delivering, right after the
///   current item; so `commit` returning guarantees delivery only when no other delivery
///   was in progress.
public final class Store<State: Sendable>: Sendable {
    /// The dependencies handed to actions and tasks started on this store.
    public let dependencies: Dependencies

    @usableFromInline let storage: Lock<Storage>
    @usableFromInline let currentVersion = Atomic<UInt64>(0)
    /// Held by one thread for a commit or a whole batch; re-entrant for that thread.
    @usableFromInline let writerGate = DispatchSemaphore(value: 1)
    @usableFromInline let middleware: [Middleware<State>]
    @usableFromInline let isEqual: (@Sendable (State, State) -> Bool)?
    let tasks = TaskRegistry()

    /// Creates a store.
    /// - Parameters:
    ///   - initialState: the state at version 0.
    ///   - dependencies: handed to actions and tasks.
    ///   - middleware: hooks run on every commit, in order.
    public init(
        _ initialState: State, dependencies: Dependencies = Dependencies(),
        middleware: [Middleware<State>] = []
    ) {
        self.storage = Lock(Storage(state: initialState))
        self.dependencies = dependencies
        self.middleware = middleware
        self.isEqual = equalityComparator(for: State.self)
    }

    /// The current committed state. Inside a batch, the batch's own thread sees the batch's
    /// working state; other threads see the state before the batch.
    /// - Complexity: O(1).
    public var state: State {
        storage.withLock { storage in
            if let batch = storage.batch, storage.writer == ThreadID.current {
                return batch.working
            }
            return storage.state
        }
    }

    /// The version of the last published ``Changes`` (0 initially). Lock-free, so it can be
    /// read from anywhere, including inside a commit body.
    /// - Complexity: O(1).
    public var version: UInt64 { currentVersion.load(ordering: .acquiring) }

    deinit {
        tasks.cancelAll()
        let terminations = storage.withLock { storage in
            storage.changeObservers.compactMap { $0.onTermination }
                + storage.eventObservers.compactMap { $0.onTermination }
        }
        for terminate in terminations { terminate() }
    }
}

extension Store {
    /// Everything guarded by the store's lock.
    @usableFromInline
    struct Storage: Sendable {
        @usableFromInline var state: State
        @usableFromInline var changeObservers: [ChangeObserver<State>] = []
        @usableFromInline var eventObservers: [EventObserver] = []
        @usableFromInline var publishHooks: [PublishHook<State>] = []
        @usableFromInline var commitChecks: [CommitCheck<State>] = []
        @usableFromInline var nextObserverID: UInt64 = 0
        @usableFromInline var pending: [Delivery<State>] = []
        @usableFromInline var isDraining = false
        /// The thread holding the writer gate, and how many times it entered.
        @usableFromInline var writer: UInt?
        @usableFromInline var writerDepth = 0
        /// Set while a commit body or `willCommit` hook runs, to refuse nested commits.
        @usableFromInline var inCommitBody = false
        @usableFromInline var batch: BatchState?
        /// Events sent by the writer thread, published after its commit or batch.
        @usableFromInline var deferredEvents: [any Sendable] = []

        init(state: State) { self.state = state }
    }

    /// The open batch: its base state and the working copy its commits write to.
    @usableFromInline
    struct BatchState: Sendable {
        @usableFromInline let base: State
        @usableFromInline var working: State
        @usableFromInline var changed = false
        @usableFromInline let name: String
        @usableFromInline let start: ContinuousClock.Instant
    }

    /// How the writer gate was entered.
    @usableFromInline
    enum WriterEntry {
        case first
        case reentered
    }

    /// Enters the writer gate, re-entrantly for its owner thread.
    /// - Throws: ``StoreError/nestedCommit(name:)`` from inside a commit body.
    @inlinable
    func acquireWriter(for name: String) throws -> WriterEntry {
        let me = ThreadID.current
        let owned = try storage.withLock { storage -> Bool in
            guard storage.writer == me else { return false }
            if storage.inCommitBody { throw StoreError.nestedCommit(name: name) }
            storage.writerDepth += 1
            return true
        }
        if owned { return .reentered }
        writerGate.wait()
        storage.withLock { storage in
            storage.writer = me
            storage.writerDepth = 1
        }
        return .first
    }

    /// Leaves the writer gate; the last exit opens it for other threads.
    @inlinable
    func releaseWriter() {
        let opened = storage.withLock { storage -> Bool in
            storage.writerDepth -= 1
            guard storage.writerDepth == 0 else { return false }
            storage.writer = nil
            return true
        }
        if opened { writerGate.signal() }
    }

    /// Whether `next` differs from `previous`; without `==` every commit is a change.
    @inlinable
    func differs(_ previous: State, _ next: State) -> Bool {
        guard let isEqual else { return true }
        return !isEqual(previous, next)
    }
}
