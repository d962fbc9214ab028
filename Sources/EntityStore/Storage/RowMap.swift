import HashTreeCollections

/// The row map of a table: a flat hash table for fast lookups, plus a small persistent
/// overlay of the changes made while the flat table is shared with older states.
///
/// Why two parts: a plain `Dictionary` looks a key up with one probe, but a commit on a
/// dictionary that an older state still holds would copy all of it (O(n) per commit). A
/// persistent hash trie copies only O(log n) nodes, but every lookup walks several trie
/// levels. So writes go straight into the flat table while this map owns it alone (a
/// bulk load, a restore, a long transaction), and into the persistent overlay while it is
/// shared (a commit with an observer holding `previous`). When the overlay outgrows a
/// sixteenth of the table it is folded into a new flat table, an O(n) step paid once per
/// n/16 overlay writes. Lookups probe the overlay only when it is not empty.
@usableFromInline
struct RowMap<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The flat table. Stored inline (no box) so a lookup is a direct probe.
    @usableFromInline
    var entries: [Key: Value] = [:]
    /// Shared exactly when `entries` is: both are copied together with the map, so
    /// `isKnownUniquelyReferenced(&owner)` tells whether writing `entries` in place is
    /// safe (a write to a shared `entries` would copy the whole table).
    @usableFromInline
    var owner = Owner()
    /// Changes since `entries` was last written in place: a table holding just the key's
    /// new value, or an empty table for a removed key (a table, so reads have one shape).
    @usableFromInline
    var overlay = TreeDictionary<Key, [Key: Value]>()
    /// The number of keys present.
    @usableFromInline
    private(set) var count = 0

    /// The token whose reference count mirrors the sharing of `entries`.
    @usableFromInline
    final class Owner: Sendable {
        @inlinable
        init() {}
    }

    @inlinable
    init() {}

    /// The overlay cell of `key`, if it has one. Out of line: the trie walk is the rare
    /// path. O(log k) in the overlay's size.
    @usableFromInline @inline(never)
    func overlayCell(for key: Key) -> [Key: Value]? {
        overlay[key]
    }

    /// The value stored for `key`. O(1) expected: one probe, plus a trie lookup while
    /// the overlay is not empty.
    @inlinable
    subscript(key: Key) -> Value? {
        get {
            // One read site for both paths: the table to read from is chosen first, then
            // probed once. Merging two values read from different storages would force
            // the optimizer to copy the whole row (retaining every string of the entity);
            // a single probe of a dictionary it can prove alive lets it read just the
            // fields the caller uses, as with a plain `Dictionary`.
            let table = _fastPath(overlay.isEmpty) ? entries : (overlayCell(for: key) ?? entries)
            return table[key]
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Stores `value` for `key`; returns the value it replaced. O(1) amortized when this
    /// map owns its flat table, O(log k) in the overlay's size otherwise.
    @inlinable
    @discardableResult
    mutating func updateValue(_ value: consuming Value, forKey key: Key) -> Value? {
        if overlay.isEmpty, isKnownUniquelyReferenced(&owner) {
            let old = entries.updateValue(consume value, forKey: key)
            if old == nil { count += 1 }
            return old
        }
        let old = self[key]
        overlay[key] = [key: consume value]
        if old == nil { count += 1 }
        compactIfNeeded()
        return old
    }

    /// Removes `key`; returns the value it held. Costs as `updateValue`.
    @inlinable
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        if overlay.isEmpty, isKnownUniquelyReferenced(&owner) {
            let old = entries.removeValue(forKey: key)
            if old != nil { count -= 1 }
            return old
        }
        guard let old = self[key] else { return nil }
        if entries[key] != nil {
            overlay[key] = [:]
        } else {
            overlay.removeValue(forKey: key)
        }
        count -= 1
        compactIfNeeded()
        return old
    }

    /// Prepares for `additional` inserts: grows the flat table once instead of doubling it
    /// repeatedly, and when the table is shared and the batch is large, folds into a new
    /// flat table now (the overlay would be folded during the batch anyway). O(n) at most.
    @inlinable
    mutating func reserveCapacity(adding additional: Int) {
        guard additional > 0 else { return }
        if overlay.isEmpty, isKnownUniquelyReferenced(&owner) {
            entries.reserveCapacity(count + additional)
            return
        }
        guard additional > Swift.max(64, entries.count / 16) else { return }
        var folded = [Key: Value](minimumCapacity: count + additional)
        for (key, value) in self { folded[key] = value }
        entries = folded
        owner = Owner()
        overlay = TreeDictionary()
    }

    /// Folds the overlay into a new flat table once it is large enough to slow lookups.
    @inlinable
    mutating func compactIfNeeded() {
        guard overlay.count > Swift.max(64, entries.count / 16) else { return }
        // A fresh owner first: the copy-on-write below then copies the shared table once.
        owner = Owner()
        for (key, cell) in overlay {
            if let value = cell[key] { entries[key] = value } else { entries.removeValue(forKey: key) }
        }
        overlay = TreeDictionary()
    }
}

extension RowMap: Sequence {
    /// Every key and value, in no defined order. O(1) per element.
    @inlinable
    func makeIterator() -> AnyIterator<(key: Key, value: Value)> {
        let overlay = self.overlay
        var baseIterator = entries.makeIterator()
        var overlayIterator = overlay.makeIterator()
        return AnyIterator {
            while let (key, value) = baseIterator.next() {
                if overlay.isEmpty { return (key, value) }
                if overlay[key] == nil { return (key, value) }
            }
            while let (key, cell) = overlayIterator.next() {
                if let value = cell[key] { return (key, value) }
            }
            return nil
        }
    }

    /// The number of keys. O(1).
    @inlinable
    var underestimatedCount: Int { count }
}
