import HashTreeCollections
import StoreCore

/// A token that tells states of one store apart from those of another, and issues the
/// store's revisions.
final class StoreIdentity: Sendable {
    /// The highest revision issued to any state of this store.
    private let issued = Lock<UInt64>(0)

    /// The revision for the next state built on one at `revision`: above it and above every
    /// revision a published state has taken.
    ///
    /// Revisions are never reused, even when a commit through the raw core sets the state
    /// back to an earlier one: the next write then takes a new revision, not the one the
    /// discarded state had. So a revision names one state of the store, which is what `==`
    /// and anything that tracks saved or seen states by revision rely on. O(1).
    func nextRevision(after revision: UInt64) -> UInt64 {
        issued.withLock { max($0, revision) + 1 }
    }

    /// Records that a state took `revision` (a commit that may be published). O(1).
    func issue(_ revision: UInt64) {
        issued.withLock { $0 = max($0, revision) }
    }
}
