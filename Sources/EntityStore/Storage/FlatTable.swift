/// The bookkeeping of a ``FlatTable``.
@usableFromInline
struct FlatTableHeader {
    /// The number of entries stored.
    @usableFromInline
    var count: Int
    /// The number of slots.
    @usableFromInline
    let capacity: Int

    @inlinable
    init(count: Int, capacity: Int) {
        self.count = count
        self.capacity = capacity
    }
}

/// Where a ``FlatTable`` keeps its slots: stable for the table's lifetime, so a holder of
/// the table may keep it and look keys up without reading the table's header (see
/// ``RowShard``). Two words: the keys and the values follow the bitmap at offsets that
/// depend only on the capacity.
@usableFromInline
struct FlatTableLayout<Key, Value> {
    /// One bit per slot, set when the slot holds an entry.
    @usableFromInline
    let bitmap: UnsafeMutablePointer<UInt64>
    /// The number of slots.
    @usableFromInline
    let capacity: Int

    @inlinable
    init(bitmap: UnsafeMutablePointer<UInt64>, capacity: Int) {
        self.bitmap = bitmap
        self.capacity = capacity
    }

    /// The slots' keys, after the bitmap's words.
    @inlinable
    var keys: UnsafeMutablePointer<Key> {
        UnsafeMutableRawPointer(bitmap + (capacity &+ 63) &>> 6).alignedUp(for: Key.self).assumingMemoryBound(to: Key.self)
    }

    /// The slots' values, after the keys.
    @inlinable
    var values: UnsafeMutablePointer<Value> {
        UnsafeMutableRawPointer(keys + capacity).alignedUp(for: Value.self).assumingMemoryBound(to: Value.self)
    }

    /// Whether `slot` holds an entry.
    @inlinable
    func isOccupied(_ slot: Int) -> Bool {
        bitmap[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0
    }

    /// Marks `slot` as holding an entry, or not.
    @inlinable
    func setOccupied(_ slot: Int, _ occupied: Bool) {
        if occupied {
            bitmap[slot &>> 6] |= 1 &<< UInt64(slot & 63)
        } else {
            bitmap[slot &>> 6] &= ~(1 &<< UInt64(slot & 63))
        }
    }

    /// The slot after `slot`, wrapping around.
    @inlinable
    func next(_ slot: Int) -> Int {
        slot &+ 1 == capacity ? 0 : slot &+ 1
    }
}

/// A flat open-addressing hash table in one allocation, laid out as a `Dictionary` is:
/// an occupancy bitmap, then the keys, then the values, with linear probing; removal
/// shifts the following entries back, so there are no tombstones. A lookup reads a
/// bitmap word, a key and a value, whose addresses all follow from the hash, so the
/// processor fetches them at once.
///
/// Callers pass each key's hash (`key.hashValue`), computed once per operation: the same
/// hash also picks the table's shard in ``RowMap``, so a lookup hashes its key once, as a
/// `Dictionary` does. The slot comes from bits 32 and up of the hash (the shard from the
/// low bits).
///
/// A table is mutated only while uniquely referenced (see ``RowShard``); shared tables are
/// read-only.
@usableFromInline
final class FlatTable<Key: Hashable, Value>: ManagedBuffer<FlatTableHeader, UInt64> {
    @usableFromInline
    typealias Layout = FlatTableLayout<Key, Value>

    /// The largest load before a table that grows in place is rebuilt larger: three
    /// quarters of its slots, as for a `Dictionary`.
    @inlinable
    static func maximumCount(capacity: Int) -> Int { capacity &- capacity &>> 2 }

    /// The slot count for `count` entries: five eighths full, at least 8.
    @inlinable
    static func capacity(for count: Int) -> Int { Swift.max(8, count &+ (count &* 3) / 5 &+ 1) }

    /// An empty table of `capacity` slots (at least 8).
    ///
    /// - Complexity: O(capacity)
    @inlinable
    static func make(capacity: Int) -> FlatTable {
        let slots = Swift.max(8, capacity)
        let words = (slots &+ 63) &>> 6
        // In words: the bitmap, then the keys and the values, each rounded up to whole
        // words and padded for alignments above a word's (see `FlatTableLayout`).
        let keyWords = (slots &* MemoryLayout<Key>.stride &+ MemoryLayout<Key>.alignment &+ 7) &>> 3
        let valueWords = (slots &* MemoryLayout<Value>.stride &+ MemoryLayout<Value>.alignment &+ 7) &>> 3
        let buffer = FlatTable.create(minimumCapacity: words &+ keyWords &+ valueWords) { _ in
            FlatTableHeader(count: 0, capacity: slots)
        }
        let table = unsafeDowncast(buffer, to: FlatTable.self)
        table.withUnsafeMutablePointerToElements { $0.initialize(repeating: 0, count: words) }
        return table
    }

    /// The slot a hash starts probing at, among `capacity` slots.
    @inlinable
    static func home(_ hash: Int, capacity: Int) -> Int {
        Int(truncatingIfNeeded: ((UInt(bitPattern: hash) &>> 32) &* UInt(capacity)) &>> 32)
    }

    /// The number of entries. O(1).
    @inlinable
    var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }

    /// The number of slots. O(1).
    @inlinable
    var slotCount: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    /// Where this table keeps its slots.
    @inlinable
    var layout: Layout {
        withUnsafeMutablePointers { header, bitmap in Layout(bitmap: bitmap, capacity: header.pointee.capacity) }
    }

    /// Calls `body` with the header and the layout.
    @inlinable
    func withStorage<R>(_ body: (UnsafeMutablePointer<FlatTableHeader>, Layout) throws -> R) rethrows -> R {
        let layout = self.layout
        return try withUnsafeMutablePointerToHeader { try body($0, layout) }
    }

    /// Whether one more entry fits under the maximum load.
    @inlinable
    var hasRoom: Bool {
        withUnsafeMutablePointerToHeader { $0.pointee.count < Self.maximumCount(capacity: $0.pointee.capacity) }
    }

    /// The slot holding `key` (whose hash is `hash`) in the table of `layout`, or -1.
    ///
    /// - Complexity: O(1) expected.
    @inlinable @inline(__always)
    static func slot(of key: Key, hash: Int, in layout: Layout) -> Int {
        var slot = home(hash, capacity: layout.capacity)
        while layout.isOccupied(slot) {
            if layout.keys[slot] == key { return slot }
            slot = layout.next(slot)
        }
        return -1
    }

    /// The value stored for `key` in the table of `layout`, in place: valid while the
    /// table is alive and unchanged. Nil when absent.
    ///
    /// - Complexity: O(1) expected.
    @inlinable @inline(__always)
    static func valuePointer(for key: Key, hash: Int, in layout: Layout) -> UnsafeMutablePointer<Value>? {
        let slot = slot(of: key, hash: hash, in: layout)
        return slot < 0 ? nil : layout.values + slot
    }

    /// The slot holding `key`, or -1.
    ///
    /// - Complexity: O(1) expected.
    @inlinable
    func slot(of key: Key, hash: Int) -> Int {
        Self.slot(of: key, hash: hash, in: layout)
    }

    /// The value stored for `key`, in place: valid while this table is alive and
    /// unchanged. Nil when absent.
    ///
    /// - Complexity: O(1) expected.
    @inlinable
    func valuePointer(for key: Key, hash: Int) -> UnsafeMutablePointer<Value>? {
        Self.valuePointer(for: key, hash: hash, in: layout)
    }

    /// Stores `value` for `key`, inserting or replacing; returns the value replaced.
    /// Requires a uniquely referenced table with a free slot left after the insert when
    /// `key` is new (see `hasRoom`).
    ///
    /// - Complexity: O(1) expected.
    @inlinable
    func updateValue(_ value: consuming Value, forKey key: Key, hash: Int) -> Value? {
        var incoming: Value? = consume value
        return withStorage { header, layout in
            var slot = Self.home(hash, capacity: layout.capacity)
            while layout.isOccupied(slot) {
                if layout.keys[slot] == key {
                    let old = (layout.values + slot).move()
                    (layout.values + slot).initialize(to: incoming.take().unsafelyUnwrapped)
                    return old
                }
                slot = layout.next(slot)
            }
            precondition(header.pointee.count &+ 1 < layout.capacity, "a flat table needs an empty slot")
            (layout.keys + slot).initialize(to: key)
            (layout.values + slot).initialize(to: incoming.take().unsafelyUnwrapped)
            layout.setOccupied(slot, true)
            header.pointee.count &+= 1
            return nil
        }
    }

    /// Removes `key`; returns its value. Requires a uniquely referenced table.
    ///
    /// - Complexity: O(1) expected (the entries after it in its run move back a slot).
    @inlinable
    func removeValue(forKey key: Key, hash: Int) -> Value? {
        withStorage { header, layout in
            let found = Self.slot(of: key, hash: hash, in: layout)
            guard found >= 0 else { return nil }
            let capacity = layout.capacity
            (layout.keys + found).deinitialize(count: 1)
            let removed = (layout.values + found).move()
            header.pointee.count &-= 1
            // Backward shift: an entry may move into the hole when the hole lies between
            // its home slot and its slot (cyclically), so every probe still finds it.
            var hole = found
            var next = layout.next(found)
            while layout.isOccupied(next) {
                let home = Self.home(layout.keys[next].hashValue, capacity: capacity)
                let fromHome = (next &- home &+ capacity) % capacity
                let fromHole = (next &- hole &+ capacity) % capacity
                if fromHome >= fromHole {
                    (layout.keys + hole).moveInitialize(from: layout.keys + next, count: 1)
                    (layout.values + hole).moveInitialize(from: layout.values + next, count: 1)
                    hole = next
                }
                next = layout.next(next)
            }
            layout.setOccupied(hole, false)
            return removed
        }
    }

    /// Calls `body` with every key and value, in slot order.
    ///
    /// - Complexity: O(capacity)
    @inlinable
    func forEach(_ body: (Key, Value) throws -> Void) rethrows {
        let layout = self.layout
        for slot in 0..<layout.capacity where layout.isOccupied(slot) {
            try body(layout.keys[slot], layout.values[slot])
        }
    }

    /// The entry in `slot`, or nil if the slot is empty or out of range.
    @inlinable
    func entry(atSlot slot: Int) -> (key: Key, value: Value)? {
        let layout = self.layout
        return slot < layout.capacity && layout.isOccupied(slot) ? (layout.keys[slot], layout.values[slot]) : nil
    }

    /// A table with the same entries in the same slots (so no key is hashed again).
    ///
    /// - Complexity: O(capacity)
    @inlinable
    func copy() -> FlatTable {
        let layout = self.layout
        let copy = FlatTable.make(capacity: layout.capacity)
        copy.withStorage { header, copyLayout in
            for slot in 0..<layout.capacity where layout.isOccupied(slot) {
                (copyLayout.keys + slot).initialize(to: layout.keys[slot])
                (copyLayout.values + slot).initialize(to: layout.values[slot])
            }
            copyLayout.bitmap.update(from: layout.bitmap, count: (layout.capacity &+ 63) &>> 6)
            header.pointee.count = count
        }
        return copy
    }

    /// A table of at least `capacity` slots holding the same entries (each key hashed
    /// again).
    ///
    /// - Complexity: O(capacity of both tables)
    @inlinable
    func resized(capacity: Int) -> FlatTable {
        let resized = FlatTable.make(capacity: Swift.max(capacity, Self.capacity(for: count)))
        forEach { key, value in _ = resized.updateValue(value, forKey: key, hash: key.hashValue) }
        return resized
    }

    @inlinable
    deinit {
        let layout = self.layout
        for slot in 0..<layout.capacity where layout.isOccupied(slot) {
            (layout.keys + slot).deinitialize(count: 1)
            (layout.values + slot).deinitialize(count: 1)
        }
    }

    /// Describes every internal inconsistency (debug checks): the count, that every key
    /// is reachable from its home slot without crossing an empty slot, and at least one
    /// empty slot.
    ///
    /// - Complexity: O(capacity × longest run)
    @usableFromInline
    func invariantViolations() -> [String] {
        withStorage { header, layout in
            var problems: [String] = []
            let capacity = layout.capacity
            var seen = 0
            for slot in 0..<capacity where layout.isOccupied(slot) {
                seen += 1
                var probe = Self.home(layout.keys[slot].hashValue, capacity: capacity)
                while probe != slot {
                    if !layout.isOccupied(probe) {
                        problems.append("flat table: slot \(slot) is cut off from its home slot")
                        break
                    }
                    probe = layout.next(probe)
                }
            }
            if seen != header.pointee.count { problems.append("flat table: \(seen) entries, count says \(header.pointee.count)") }
            if seen == capacity { problems.append("flat table: no empty slot") }
            return problems
        }
    }
}
