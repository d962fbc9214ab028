import EntityStore
import StoreCore

/// The commits an operation published, recorded as they are published, and merged into
/// one change set from the state before it to the state after: what one batch would have
/// published. An assertion then compares the rows the commits changed, whatever the size
/// of the store.
final class CommitChain: Sendable {
    private let store: EntityStore
    private let journal: CommitJournal

    /// The most commits merged; past it the comparison reads the changed tables instead.
    static let limit = 10_000

    /// Starts recording; ``before`` is the state the recording starts from.
    init(_ store: EntityStore) {
        self.store = store
        journal = CommitJournal(store, limit: Self.limit, keepingStates: true)
    }

    /// The state when the recording started (the last published one).
    var before: EntityState { journal.start }

    /// Stops recording; returns the change set leading from ``before`` to `after`, or nil
    /// when the commits do not chain from one to the other (another thread committed in
    /// between, a commit replaced everything, too many commits).
    /// - Complexity: O(changed rows of the commits).
    func finish(at after: EntityState) -> ChangeSet? {
        journal.stop()
        let entries = journal.take()
        guard !journal.overflowed, (entries.last?.revision ?? before.revision) == after.revision else { return nil }
        return CommitJournal.merged(entries, from: before)
    }
}
