import StoreCore

/// Copies of shared shard tables made a few rows at a time ahead of their folds, so that
/// a fold (see ``RowShard``) finds its copy ready and only applies the overlay: no single
/// write copies a whole shard.
///
/// A fold replaces a table that older map versions still share by a copy with the
/// overlay's changes applied. The copy depends only on the shared table, which never
/// changes, so it can be made in advance, outside the persistent state: the writes that
/// bring a shard's overlay close to its fold threshold each copy a slice of the table
/// here, and the fold takes the finished copy. Every version of a map shares this object
/// (it is a reference, copied with the map); a version whose fold finds no copy ready
/// (another version took it, or the preparation was dropped) copies the table itself, as
/// the fold would without preparation.
///
/// Each entry keeps its source table alive, so a table is never mistaken for another
/// allocated at the same address; an entry whose source only it still holds is dropped.
@usableFromInline
final class FoldPreparations<Key: Hashable, Value>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: the entries are only read and written inside
    // `entries.withLock`. A source table is shared with map versions that other threads
    // may read, and is only read here; a copy is only written under the lock and, once
    // taken, belongs to the fold that took it alone.

    /// One copy in progress: `target` holds the entries of `source`'s first `progress`
    /// slots, in the same slots.
    @usableFromInline
    struct Entry {
        @usableFromInline var source: FlatTable<Key, Value>
        @usableFromInline let target: FlatTable<Key, Value>
        @usableFromInline var progress: Int

        @inlinable
        init(source: FlatTable<Key, Value>) {
            self.source = source
            self.target = FlatTable.make(capacity: source.slotCount)
            self.progress = 0
        }

        /// Copies the next `slots` slots of `source` (all the rest for `Int.max`).
        @inlinable
        mutating func advance(by slots: Int) {
            let layout = source.layout
            let end = slots >= layout.capacity &- progress ? layout.capacity : progress &+ slots
            target.withStorage { header, copy in
                for slot in progress..<end where layout.isOccupied(slot) {
                    (copy.keys + slot).initialize(to: layout.keys[slot])
                    (copy.values + slot).initialize(to: layout.values[slot])
                    copy.setOccupied(slot, true)
                    header.pointee.count &+= 1
                }
            }
            progress = end
        }
    }

    /// The entries, by the identity of their source table.
    @usableFromInline
    struct Entries: @unchecked Sendable {
        // `@unchecked Sendable` is safe: see the enclosing class; entries live only in its
        // lock.
        @usableFromInline var bySource: [ObjectIdentifier: Entry] = [:]
        /// The sources of the entries, in no particular order, for the sweep (an identity
        /// may stay here a while after its entry is gone).
        @usableFromInline var sources: [ObjectIdentifier] = []
        /// Where the next sweep looks in `sources`.
        @usableFromInline var sweep = 0

        @inlinable
        init() {}
    }

    @usableFromInline
    let entries = Lock(Entries())

    @inlinable
    init() {}

    /// Copies the next `slots` slots of `source` towards its fold, starting a copy if none
    /// is under way; also drops a few entries whose source table no map version holds
    /// any more.
    ///
    /// - Complexity: O(`slots`), plus O(1) amortized for the sweep.
    @inlinable
    func advance(_ source: FlatTable<Key, Value>, by slots: Int) {
        entries.withLock { entries in
            let id = ObjectIdentifier(source)
            if entries.bySource[id] == nil {
                entries.bySource[id] = Entry(source: source)
                entries.sources.append(id)
            }
            entries.bySource[id]?.advance(by: slots)
            Self.sweep(&entries)
        }
    }

    /// The finished copy of `source`, if one was started: the rest of it is copied now.
    /// The caller holds the only reference to it.
    ///
    /// - Complexity: O(slots not copied yet).
    @inlinable
    func take(_ source: FlatTable<Key, Value>) -> FlatTable<Key, Value>? {
        entries.withLock { entries in
            guard var entry = entries.bySource.removeValue(forKey: ObjectIdentifier(source)) else { return nil }
            entry.advance(by: Int.max)
            return entry.target
        }
    }

    /// Drops the copy of `source`, if any.
    @inlinable
    func discard(_ source: FlatTable<Key, Value>) {
        _ = entries.withLock { $0.bySource.removeValue(forKey: ObjectIdentifier(source)) }
    }

    /// The number of copies under way (tests).
    @usableFromInline
    var pending: Int { entries.withLock { $0.bySource.count } }

    /// Looks at two entries, in turn, and drops those whose source table only the entry
    /// still holds: no map version can fold it any more. O(1).
    @inlinable
    static func sweep(_ entries: inout Entries) {
        for _ in 0..<2 {
            guard !entries.sources.isEmpty else { return }
            if entries.sweep >= entries.sources.count { entries.sweep = 0 }
            let id = entries.sources[entries.sweep]
            var keep = false
            if let index = entries.bySource.index(forKey: id) {
                keep = !isKnownUniquelyReferenced(&entries.bySource.values[index].source)
                if !keep { entries.bySource.remove(at: index) }
            }
            if keep {
                entries.sweep &+= 1
            } else {
                entries.sources.swapAt(entries.sweep, entries.sources.count &- 1)
                entries.sources.removeLast()
            }
        }
    }
}
