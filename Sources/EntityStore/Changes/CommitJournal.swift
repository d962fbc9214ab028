import StoreCore

/// A store's published commits, recorded in publish order by a hook that runs inside
/// each publish: what a reader that applies commits elsewhere (an incremental save, a
/// sync, a test's merged change set) takes and applies, knowing it missed none.
///
/// Each entry carries its commit's exact change set, or nil when the change set does not
/// say row by row what changed (``EntityState/exactChanges(since:)``): the reader must
/// then start over from the whole state.
package final class CommitJournal: Sendable {
    /// One published commit.
    package struct Entry: Sendable {
        /// The commit's name.
        package let name: String
        /// The revision of the state it replaced.
        package let previousRevision: UInt64
        /// The revision of the state it published.
        package let revision: UInt64
        /// What it changed, exactly; nil when its change set does not say (a restore, a
        /// raw core commit to another state).
        package let changeSet: ChangeSet?
        /// The state it published, when the journal keeps them (merging change sets needs
        /// the state after each; a saver must not hold old states alive).
        package let state: EntityState?
    }

    private struct Recorded: Sendable {
        var entries: [Entry] = []
        var overflowed = false
    }

    private let recorded = Lock(Recorded())
    private let hook = Lock<Observation?>(nil)
    /// The committed state when recording began.
    package let start: EntityState

    /// Starts recording the commits of `store` published from now on, except those named
    /// `skipping` (a reader's own). Past `limit` unread entries it stops recording and
    /// reports ``overflowed``. With `keepingStates`, each entry holds the state it published.
    /// - Complexity: O(1) here and per later publish, under the store's lock.
    package init(_ store: EntityStore, skipping: String? = nil, limit: Int = .max, keepingStates: Bool = false) {
        let recorded = self.recorded
        var initial: EntityState?
        let token = store.core.addPublishHook(startingWith: { initial = $0 }) { changes in
            if changes.name == skipping { return }
            let current = changes.current
            let entry = Entry(
                name: changes.name, previousRevision: changes.previous.revision, revision: current.revision,
                changeSet: current.exactChanges(since: changes.previous), state: keepingStates ? current : nil)
            recorded.withLock { recorded in
                if recorded.entries.count < limit { recorded.entries.append(entry) } else { recorded.overflowed = true }
            }
        }
        // `startingWith` ran before the registration returned.
        start = initial ?? store.core.committedState
        hook.withLock { $0 = token }
    }

    deinit {
        stop()
    }

    /// Stops recording (what is recorded stays readable). O(hooks).
    package func stop() {
        hook.withLock { $0?.cancel() }
    }

    /// How many entries wait. O(1).
    package var count: Int { recorded.withLock { $0.entries.count } }

    /// Whether entries were dropped past the limit. O(1).
    package var overflowed: Bool { recorded.withLock { $0.overflowed } }

    /// Removes and returns the waiting entries, up to the one that published `revision`
    /// if given (none when no entry did). O(entries waiting).
    package func take(through revision: UInt64? = nil) -> [Entry] {
        recorded.withLock { recorded in
            let count = revision.map { revision in recorded.entries.lastIndex { $0.revision == revision }.map { $0 + 1 } ?? 0 }
                ?? recorded.entries.count
            defer { recorded.entries.removeFirst(count) }
            return Array(recorded.entries.prefix(count))
        }
    }

    /// Puts entries taken back in front, for the next reader to apply (after a failed save).
    /// O(entries).
    package func putBack(_ entries: [Entry]) {
        recorded.withLock { $0.entries.insert(contentsOf: entries, at: 0) }
    }

    /// The latest waiting entry named `name`, without taking it. O(entries).
    package func latest(named name: String) -> Entry? {
        recorded.withLock { recorded in recorded.entries.last { $0.name == name } }
    }

    /// The change set leading from `start` through `entries` as one commit (what one batch
    /// would have published), or nil when they do not chain from it or one is not exact.
    /// The entries must hold their states (`keepingStates`). O(changed rows).
    package static func merged(_ entries: [Entry], from start: EntityState) -> ChangeSet? {
        guard let changeSets = chain(entries, from: start.revision) else { return nil }
        var merged: ChangeSet?
        for (changeSet, entry) in zip(changeSets, entries) {
            guard let state = entry.state else { return nil }
            merged = merged.map { $0.merged(with: changeSet, in: state) } ?? changeSet
        }
        return merged ?? ChangeSet()
    }

    /// The change sets of `entries` if every one is exact and each follows the one before
    /// from `revision`: one chain a reader can apply; nil otherwise. O(entries).
    package static func chain(_ entries: [Entry], from revision: UInt64) -> [ChangeSet]? {
        var changeSets: [ChangeSet] = []
        changeSets.reserveCapacity(entries.count)
        var revision = revision
        for entry in entries {
            guard entry.previousRevision == revision, let changeSet = entry.changeSet else { return nil }
            changeSets.append(changeSet)
            revision = entry.revision
        }
        return changeSets
    }
}
