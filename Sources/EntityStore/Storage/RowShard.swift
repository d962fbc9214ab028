import HashTreeCollections

/// One overlay entry of a ``RowShard``: the key's new value, or nil for a key removed from
/// the shard's flat table. A buffer, so a lookup can read the value in place.
@usableFromInline
final class RowCell<Value>: ManagedBuffer<Value?, UInt8> {
    /// A cell holding `value`.
    @inlinable
    static func make(_ value: consuming Value?) -> RowCell {
        var pending: Value?? = .some(consume value)
        return unsafeDowncast(RowCell.create(minimumCapacity: 0) { _ in pending.take().unsafelyUnwrapped }, to: RowCell.self)
    }

    /// The value, in place: valid while this cell is alive. Nil for a removal.
    @inlinable
    var valuePointer: UnsafeMutablePointer<Value>? {
        withUnsafeMutablePointerToHeader { header in
            header.pointee == nil ? nil : UnsafeMutableRawPointer(header).assumingMemoryBound(to: Value.self)
        }
    }

    /// The value; nil for a removal.
    @inlinable
    var value: Value? { withUnsafeMutablePointerToHeader { $0.pointee } }
}

/// One shard of a ``RowMap``: a flat hash table, plus a small persistent overlay of the
/// changes made while the table is shared with older map versions.
///
/// The table is written in place while this shard holds the only reference to it (a bulk
/// load, a restore, a long transaction). While an older version shares it (a commit),
/// writes go to the overlay, a persistent hash trie that copies O(log k) nodes per write;
/// once the overlay outgrows a quarter of the table, it is folded into a new table for
/// this shard alone.
@usableFromInline
struct RowShard<Key: Hashable, Value> {
    /// The flat table. Replaced only through `replaceTable(with:)`, which keeps `layout`
    /// in step.
    @usableFromInline
    private(set) var table: FlatTable<Key, Value>
    /// Where `table` keeps its bitmap and slots, so that a lookup goes from the directory
    /// straight to the slot, without first reading the table's header.
    @usableFromInline
    private(set) var layout: FlatTableLayout<Key, Value>
    /// Changes since `table` was last written in place, by key.
    @usableFromInline
    var overlay: TreeDictionary<Key, RowCell<Value>>
    /// The number of keys present, through the overlay.
    @usableFromInline
    private(set) var count: Int

    /// A shard of `table`, with an empty overlay.
    @inlinable
    init(table: FlatTable<Key, Value>) {
        self.table = table
        self.layout = table.layout
        self.overlay = TreeDictionary()
        self.count = table.count
    }

    /// Makes `table` this shard's flat table.
    @inlinable
    mutating func replaceTable(with table: FlatTable<Key, Value>) {
        self.table = table
        layout = table.layout
    }

    /// The number of overlay entries past which the overlay is folded: a quarter of the
    /// table, at least 8. So a fold copies at most about five entries per overlay write it
    /// absorbs.
    @inlinable
    var foldThreshold: Int { Swift.max(8, table.count &>> 2) }

    /// The value stored for `key` (hash `hash`). O(1) expected, plus O(log k) in the
    /// overlay's size while it is not empty.
    @inlinable
    func value(for key: Key, hash: Int) -> Value? {
        if overlay.isEmpty { return FlatTable.valuePointer(for: key, hash: hash, in: layout)?.pointee }
        if let cell = overlay[key] { return cell.value }
        return FlatTable.valuePointer(for: key, hash: hash, in: layout)?.pointee
    }

    /// Stores `value` for `key`; returns the value it replaced. O(1) amortized when this
    /// shard holds the only reference to its table; O(log k) in the overlay's size
    /// otherwise, plus, near a fold, a slice of O(size of the shard / its fold threshold)
    /// of the copy prepared for it, and at the fold O(k) to apply the overlay.
    @inlinable
    mutating func updateValue(
        _ value: consuming Value, forKey key: Key, hash: Int, preparations: FoldPreparations<Key, Value>
    ) -> Value? {
        if overlay.isEmpty, isKnownUniquelyReferenced(&table) {
            if !table.hasRoom, table.slot(of: key, hash: hash) < 0 {
                replaceTable(with: table.resized(capacity: table.slotCount &* 2))
            }
            let old = table.updateValue(consume value, forKey: key, hash: hash)
            if old == nil { count &+= 1 }
            return old
        }
        let old = self.value(for: key, hash: hash)
        overlay[key] = RowCell.make(consume value)
        if old == nil { count &+= 1 }
        foldIfNeeded(preparations)
        return old
    }

    /// Removes `key`; returns the value it held. Costs as `updateValue`.
    @inlinable
    mutating func removeValue(forKey key: Key, hash: Int, preparations: FoldPreparations<Key, Value>) -> Value? {
        if overlay.isEmpty, isKnownUniquelyReferenced(&table) {
            let old = table.removeValue(forKey: key, hash: hash)
            if old != nil { count &-= 1 }
            return old
        }
        guard let old = value(for: key, hash: hash) else { return nil }
        if table.slot(of: key, hash: hash) >= 0 {
            overlay[key] = RowCell.make(nil)
        } else {
            overlay.removeValue(forKey: key)
        }
        count &-= 1
        foldIfNeeded(preparations)
        return old
    }

    /// Folds the overlay into a new table once it outgrows `foldThreshold`. Over the last
    /// quarter of the way there, each write copies a slice of the shared table into
    /// `preparations`, so that the fold finds the copy made and only applies the overlay.
    @inlinable
    mutating func foldIfNeeded(_ preparations: FoldPreparations<Key, Value>) {
        let threshold = foldThreshold
        if overlay.count > threshold {
            fold(preparations)
            return
        }
        let window = Swift.max(1, threshold &>> 2)
        let remaining = threshold &+ 1 &- overlay.count
        if remaining <= window {
            // Enough that the copy is finished by the write that folds: the slots left,
            // spread over the writes left.
            let capacity = table.slotCount
            preparations.advance(table, by: (capacity &+ window &- 1) / window &+ 1)
        }
    }

    /// Moves the overlay's changes into a table this shard holds alone: a copy of the
    /// shared table with the same slots (no key hashed again; made ahead of time in
    /// `preparations` when possible), or a rebuild sized for the shard's count when the
    /// copy would be too full or mostly empty.
    ///
    /// - Complexity: O(size of the overlay) with the copy prepared; O(size of the shard)
    ///   otherwise.
    @inlinable
    mutating func fold(_ preparations: FoldPreparations<Key, Value>) {
        let capacity = table.slotCount
        let fits = table.count &+ overlay.count < FlatTable<Key, Value>.maximumCount(capacity: capacity)
            && capacity <= 4 &* FlatTable<Key, Value>.capacity(for: count)
        let folded: FlatTable<Key, Value>
        if fits {
            folded = preparations.take(table) ?? table.copy()
        } else {
            preparations.discard(table)
            folded = table.resized(capacity: FlatTable<Key, Value>.capacity(for: count))
        }
        if fits {
            // One pass: the copy has room for every key of the overlay.
            for (key, cell) in overlay {
                let hash = key.hashValue
                if let value = cell.value {
                    _ = folded.updateValue(value, forKey: key, hash: hash)
                } else {
                    _ = folded.removeValue(forKey: key, hash: hash)
                }
            }
        } else {
            // Removals first: the rebuilt table has room for the larger of the old and the
            // new count, not for both.
            for (key, cell) in overlay where cell.value == nil { _ = folded.removeValue(forKey: key, hash: key.hashValue) }
            for (key, cell) in overlay {
                if let value = cell.value { _ = folded.updateValue(value, forKey: key, hash: key.hashValue) }
            }
        }
        replaceTable(with: folded)
        overlay = TreeDictionary()
    }

    /// The number of keys present, counted from the table and the overlay (debug checks).
    /// O(k) in the overlay's size.
    @usableFromInline
    var countedKeys: Int {
        var live = table.count
        for (key, cell) in overlay {
            let inTable = table.slot(of: key, hash: key.hashValue) >= 0
            if cell.value == nil { live -= 1 } else if !inTable { live += 1 }
        }
        return live
    }

    /// Every key and value, in no defined order. O(1) per element, plus O(table's slots).
    @inlinable
    func forEach(_ body: (Key, Value) throws -> Void) rethrows {
        if overlay.isEmpty {
            try table.forEach(body)
            return
        }
        let overlay = self.overlay
        try table.forEach { key, value in if overlay[key] == nil { try body(key, value) } }
        for (key, cell) in overlay { if let value = cell.value { try body(key, value) } }
    }
}

/// A ``RowShard`` in a buffer's header, so that the directory's leaves hold one reference
/// per shard, and writes reach the shard through a pointer, without the dynamic
/// exclusivity checks of a class's stored properties. Written only while uniquely
/// referenced (see ``RowMap``, whose Sendable conformance covers its boxes).
@usableFromInline
final class ShardBox<Key: Hashable, Value>: ManagedBuffer<RowShard<Key, Value>, UInt8> {
    /// A box holding `shard`.
    @inlinable
    static func make(_ shard: RowShard<Key, Value>) -> ShardBox {
        unsafeDowncast(ShardBox.create(minimumCapacity: 0) { _ in shard }, to: ShardBox.self)
    }

    /// A copy of the shard (its table and overlay shared). O(1).
    @inlinable
    var shard: RowShard<Key, Value> { withUnsafeMutablePointerToHeader { $0.pointee } }
}

/// One entry of the ``RowMap`` directory: a shard's box, and what a lookup needs of it
/// (where its table keeps its slots, and whether it has an overlay), so that the usual
/// lookup reads this entry and then the table's slots, without visiting the box.
@usableFromInline
struct ShardSlot<Key: Hashable, Value> {
    /// The shard.
    @usableFromInline
    private(set) var box: ShardBox<Key, Value>
    /// The layout of the shard's table.
    @usableFromInline
    private(set) var layout: FlatTableLayout<Key, Value>
    /// Whether the shard's overlay holds anything.
    @usableFromInline
    private(set) var hasOverlay: Bool

    /// A slot of `shard`, in a box of its own.
    @inlinable
    init(_ shard: RowShard<Key, Value>) {
        box = ShardBox.make(shard)
        layout = shard.layout
        hasOverlay = !shard.overlay.isEmpty
    }

    /// The value stored for `key` (hash `hash`), in place: valid while the shard is alive
    /// and unchanged. O(1) expected, plus O(log k) in the overlay's size while it is not
    /// empty.
    @inlinable @inline(__always)
    func valuePointer(for key: Key, hash: Int) -> UnsafeMutablePointer<Value>? {
        if _fastPath(!hasOverlay) { return FlatTable.valuePointer(for: key, hash: hash, in: layout) }
        return Self.overlaidValuePointer(box, key, hash)
    }

    /// `valuePointer` when the overlay is not empty. Out of line: the trie walk is the
    /// rare path.
    @inlinable @inline(never)
    static func overlaidValuePointer(_ box: ShardBox<Key, Value>, _ key: Key, _ hash: Int) -> UnsafeMutablePointer<Value>? {
        box.withUnsafeMutablePointerToHeader { shard in
            // The cell stays alive after this returns: the shard's overlay holds it.
            if let cell = shard.pointee.overlay[key] { return cell.valuePointer }
            return FlatTable.valuePointer(for: key, hash: hash, in: shard.pointee.layout)
        }
    }

    /// Calls `body` with the shard, which it may change in place: the box is copied
    /// first if another map version shares it. O(1) besides `body`.
    @inlinable
    mutating func withMutableShard<R>(_ body: (inout RowShard<Key, Value>) -> R) -> R {
        if !isKnownUniquelyReferenced(&box) { box = ShardBox.make(box.shard) }
        return box.withUnsafeMutablePointerToHeader { shard in
            let result = body(&shard.pointee)
            layout = shard.pointee.layout
            hasOverlay = !shard.pointee.overlay.isEmpty
            return result
        }
    }
}
