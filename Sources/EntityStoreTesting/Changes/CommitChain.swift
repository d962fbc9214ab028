import EntityStore
import StoreCore

/// The commits an operation published, recorded as they are published, and merged into
/// one change set from the state before it to the state after: what one batch would have
/// published. An assertion then compares the rows the commits changed, whatever the size
/// of the store.
final class CommitChain: Sendable {
    private let store: EntityStore
    private let recorded = Lock<Recorded>(Recorded())
    private let hook = Lock<Observation?>(nil)

    private struct Recorded: Sendable {
        var before: EntityState?
        var transitions: [Changes<EntityState>] = []
        /// More commits than it is worth merging (then the comparison reads the tables).
        var overflowed = false
    }

    /// The most commits merged; past it the comparison reads the changed tables instead.
    static let limit = 10_000

    /// Starts recording; ``before`` is the state the recording starts from.
    init(_ store: EntityStore) {
        self.store = store
        let recorded = self.recorded
        let token = store.core.addPublishHook(startingWith: { state in recorded.withLock { $0.before = state } }) { changes in
            recorded.withLock { recorded in
                if recorded.transitions.count < Self.limit { recorded.transitions.append(changes) } else { recorded.overflowed = true }
            }
        }
        hook.withLock { $0 = token }
    }

    /// The state when the recording started (the last published one).
    var before: EntityState { recorded.withLock { $0.before } ?? store.state }

    /// Stops recording; returns the change set leading from ``before`` to `after`, or nil
    /// when the commits do not chain from one to the other (another thread committed in
    /// between, a commit replaced everything, too many commits).
    /// - Complexity: O(changed rows of the commits).
    func finish(at after: EntityState) -> ChangeSet? {
        hook.withLock { $0?.cancel() }
        let (before, transitions, overflowed) = recorded.withLock { ($0.before, $0.transitions, $0.overflowed) }
        guard let before, !overflowed else { return nil }
        if transitions.isEmpty { return after.revision == before.revision ? ChangeSet() : nil }
        var revision = before.revision
        var merged: ChangeSet?
        for transition in transitions {
            let current = transition.current
            guard transition.previous.revision == revision, current.followsByChangeSet(transition.previous),
                  !current.changeSet.replacedAll
            else { return nil }
            merged = merged.map { $0.merged(with: current.changeSet, in: current) } ?? current.changeSet
            revision = current.revision
        }
        guard revision == after.revision else { return nil }
        return merged
    }
}
