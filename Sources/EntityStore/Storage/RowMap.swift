import HashTreeCollections

/// The row map of a table: many small flat hash tables (shards), so that a lookup is one
/// probe of a flat table and no write ever copies more than one shard, whoever holds older
/// versions of the map.
///
/// Why this shape: a plain `Dictionary` looks a key up with one probe, but a commit on a
/// dictionary that an older state still holds copies all of it (O(n) per commit). A
/// persistent hash trie copies only O(log n) nodes per write, but every lookup walks
/// several trie levels. Here the key's hash picks a shard through a three-level directory
/// of arrays (32 shards to a leaf, 32 leaves to a group) small enough to stay in cache,
/// and the same hash finds
/// the key in the shard's ``FlatTable``, so a lookup hashes once, as a `Dictionary` does.
/// A shard's table is written in place while this map holds the only reference to it (a
/// bulk load, a restore, a long transaction), and through the shard's small persistent
/// overlay while an older version shares it (a commit); an overlay that outgrows a
/// quarter of its table is folded into a new table for that shard alone (see
/// ``RowShard``). Shards hold about `shardLoad` keys (1,024 by default) and split one at a
/// time as the map grows (linear hashing: shard `p` splits into `p` and `p + 2^L`, in
/// turn), so growth never rehashes the whole map either.
///
/// A write costs O(1) amortized in place; on a map shared with older versions, it copies
/// the directory's path to the shard (O(s / 1,024 + 64) references for s shards), the
/// shard's box and one O(log k) path of its overlay, plus at most one fold or split,
/// O(shardLoad) each. No write does work proportional to the whole map.
///
/// Keys are spread by `hashValue` (SipHash with a per-process seed), so no choice of keys
/// can pile up in one shard.
@usableFromInline
struct RowMap<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: keys and values are Sendable, and the only reference
    // types inside (the shards' tables, overlay cells and the directory's arrays) are
    // written only after `isKnownUniquelyReferenced` (or the arrays' own copy-on-write)
    // proved that the writing map holds the only reference, so nothing a map version can
    // reach is ever written while another thread can see it.

    /// The shards, by number: shard `i` is `directory[i >> 10][(i >> 5) & 31][i & 31]`.
    /// Each is boxed, so that copying a leaf (as a write to a shared map does) retains 32
    /// boxes rather than every shard's table and overlay, and its slot repeats what a
    /// lookup needs.
    @usableFromInline
    var directory: ContiguousArray<ContiguousArray<ContiguousArray<ShardSlot<Key, Value>>>> = []
    /// The number of shards.
    @usableFromInline
    var shardCount = 0
    /// The number of keys present.
    @usableFromInline
    private(set) var count = 0
    /// The mean number of keys per shard above which the next shard is split.
    @usableFromInline
    let shardLoad: Int
    /// Copies of shared tables made ahead of their folds, shared by every version of
    /// this map.
    @usableFromInline
    let preparations = FoldPreparations<Key, Value>()

    /// Entries per leaf and per group of the directory, as a shift.
    @inlinable
    static var levelShift: Int { 5 }

    /// The group, leaf and entry of shard `index` in the directory.
    @inlinable
    static func path(_ index: Int) -> (group: Int, leaf: Int, entry: Int) {
        let mask = 1 &<< levelShift &- 1
        return (index &>> (2 &* levelShift), (index &>> levelShift) & mask, index & mask)
    }

    /// An empty map whose shards hold about `shardLoad` keys each (at least 4). Small
    /// loads exist for tests that need many shards from few keys.
    @inlinable
    init(shardLoad: Int = 1_024) {
        self.shardLoad = Swift.max(4, shardLoad)
    }

    /// The shard of a key with hash `hash` among `shards` shards (linear hashing: the low
    /// L + 1 bits of the hash, or the low L bits for a shard not split yet in this round,
    /// where 2^L <= shards < 2^(L+1)). Requires `shards > 0`.
    @inlinable
    static func shardIndex(hash: Int, shards: Int) -> Int {
        let high = Int(bitPattern: UInt.max &>> UInt(shards.leadingZeroBitCount))
        let index = hash & high
        return index < shards ? index : index & (high &>> 1)
    }

    /// The shard numbered `index`.
    @inlinable
    func shard(at index: Int) -> RowShard<Key, Value> {
        let path = Self.path(index)
        return directory[path.group][path.leaf][path.entry].box.shard
    }

    /// Where the value stored for `key` is, in place: valid while this map is alive and
    /// unchanged. O(1) expected: one hash, two array reads and one probe, plus a trie
    /// lookup while the key's shard has an overlay.
    ///
    /// Out of line (but specialized for the caller's types), so that the subscript that
    /// reads through it stays small enough to be inlined everywhere.
    @inlinable @inline(never)
    func valuePointer(forKey key: Key) -> UnsafeMutablePointer<Value>? {
        let shards = shardCount
        guard _fastPath(shards > 0) else { return nil }
        let hash = key.hashValue
        let path = Self.path(Self.shardIndex(hash: hash, shards: shards))
        return directory[path.group][path.leaf][path.entry].valuePointer(for: key, hash: hash)
    }

    /// The value stored for `key`. O(1) expected (see `valuePointer(forKey:)`).
    @inlinable
    subscript(key: Key) -> Value? {
        // One read site for both paths: the overlay or the table only yields where the
        // value is, and it is read once, here, in the caller. Merging two values read
        // from different storages would force the optimizer to copy the whole row
        // (retaining every string of the entity), as would a call returning the value;
        // one read of memory this map keeps alive lets the caller read just the fields it
        // uses, as with a plain `Dictionary`.
        @inline(__always) get { valuePointer(forKey: key)?.pointee }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Calls `body` with shard `index`, which it may change in place; the directory's
    /// arrays and the shard's box are copied first where another map version shares them.
    @inlinable
    mutating func withMutableShard<R>(_ index: Int, _ body: (inout RowShard<Key, Value>) -> R) -> R {
        let path = Self.path(index)
        return directory[path.group][path.leaf][path.entry].withMutableShard(body)
    }

    /// Adds `shard` as number `shardCount`.
    @inlinable
    mutating func appendShard(_ shard: RowShard<Key, Value>) {
        let path = Self.path(shardCount)
        let width = 1 &<< Self.levelShift
        if path.group == directory.count {
            var group = ContiguousArray<ContiguousArray<ShardSlot<Key, Value>>>()
            group.reserveCapacity(width)
            directory.append(group)
        }
        if path.leaf == directory[path.group].count {
            var leaf = ContiguousArray<ShardSlot<Key, Value>>()
            leaf.reserveCapacity(width)
            directory[path.group].append(leaf)
        }
        directory[path.group][path.leaf].append(ShardSlot(shard))
        shardCount &+= 1
    }

    /// Stores `value` for `key`; returns the value it replaced. O(1) amortized when this
    /// map holds the only reference to the key's shard; otherwise O(s / 64 + 64) for the
    /// directory and O(log k) in the shard's overlay (see the type's description), plus
    /// at most one fold or split, O(shardLoad) each.
    @inlinable
    @discardableResult
    mutating func updateValue(_ value: consuming Value, forKey key: Key) -> Value? {
        if shardCount == 0 { appendShard(RowShard(table: FlatTable.make(capacity: 8))) }
        let hash = key.hashValue
        var pending: Value? = consume value
        let preparations = self.preparations
        let old = withMutableShard(Self.shardIndex(hash: hash, shards: shardCount)) {
            $0.updateValue(pending.take().unsafelyUnwrapped, forKey: key, hash: hash, preparations: preparations)
        }
        if old == nil {
            count &+= 1
            if count > shardCount &* shardLoad { splitNextShard() }
        }
        return old
    }

    /// Removes `key`; returns the value it held. Costs as `updateValue`, without splits.
    /// Shards are never merged (as a `Dictionary` never shrinks), but a fold leaves a
    /// mostly emptied shard's table compact.
    @inlinable
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard shardCount > 0 else { return nil }
        let hash = key.hashValue
        let index = Self.shardIndex(hash: hash, shards: shardCount)
        // A miss changes nothing, and must not copy the shared directory.
        let path = Self.path(index)
        guard directory[path.group][path.leaf][path.entry].valuePointer(for: key, hash: hash) != nil else { return nil }
        let preparations = self.preparations
        let old = withMutableShard(index) { $0.removeValue(forKey: key, hash: hash, preparations: preparations) }
        if old != nil { count &-= 1 }
        return old
    }

    /// Splits the next shard of the round (linear hashing): shard `p` keeps the keys whose
    /// hash has bit L clear, and a new last shard, `p + 2^L`, takes the others.
    ///
    /// - Complexity: O(size of the shard)
    @inlinable
    mutating func splitNextShard() {
        let shards = shardCount
        let round = 1 &<< (Int.bitWidth &- 1 &- shards.leadingZeroBitCount)
        let index = shards &- round
        let source = shard(at: index)
        let capacity = FlatTable<Key, Value>.capacity(for: source.table.count / 2 &+ source.table.count / 8)
        var stay = FlatTable<Key, Value>.make(capacity: capacity)
        var move = FlatTable<Key, Value>.make(capacity: capacity)
        source.forEach { key, value in
            let hash = key.hashValue
            if hash & round == 0 {
                Self.insert(value, forKey: key, hash: hash, into: &stay)
            } else {
                Self.insert(value, forKey: key, hash: hash, into: &move)
            }
        }
        withMutableShard(index) { $0 = RowShard(table: stay) }
        appendShard(RowShard(table: move))
    }

    /// Inserts into a table this map holds alone, rebuilding it twice as large when full.
    @inlinable
    static func insert(_ value: Value, forKey key: Key, hash: Int, into table: inout FlatTable<Key, Value>) {
        if !table.hasRoom { table = table.resized(capacity: table.slotCount &* 2) }
        _ = table.updateValue(value, forKey: key, hash: hash)
    }

    /// Prepares for `additional` inserts. Into an empty map, lays out the shards the
    /// final count needs (as many as its growth would have split, at `shardLoad` keys
    /// each), each table sized once for the keys its share of the hash space will get, so
    /// a bulk load writes every row in place without a split or a rehash. A non-empty map
    /// is left as it is: its shards split one at a time as the inserts come. O(shards) at
    /// most.
    @inlinable
    mutating func reserveCapacity(adding additional: Int) {
        guard additional > 0, count == 0 else { return }
        let shards = Swift.max(1, (additional + shardLoad - 1) / shardLoad)
        // Linear hashing: shards below `split` and from `round` on see L + 1 bits of the
        // hash (half the keys of the others, which see L).
        let round = 1 &<< (Int.bitWidth &- 1 &- shards.leadingZeroBitCount)
        let split = shards &- round
        let narrow = additional / (2 &* round)
        directory = []
        shardCount = 0
        for index in 0..<shards {
            let expected = index < split || index >= round ? narrow : 2 &* narrow
            // Room for the spread of a hash's shard sizes around their mean.
            let capacity = FlatTable<Key, Value>.capacity(for: expected &+ expected / 8 &+ 8)
            appendShard(RowShard(table: FlatTable.make(capacity: capacity)))
        }
    }
}

extension RowMap: Sequence {
    /// Walks the shards in order: each shard's table (skipping the keys its overlay
    /// changed), then its overlay.
    @usableFromInline
    struct Iterator: IteratorProtocol {
        @usableFromInline
        let map: RowMap
        @usableFromInline
        var nextShard = 0
        /// The table being walked, kept alive while `layout` points into it.
        @usableFromInline
        var table: FlatTable<Key, Value>?
        @usableFromInline
        var layout: FlatTableLayout<Key, Value>?
        @usableFromInline
        var slot = 0
        @usableFromInline
        var overlay = TreeDictionary<Key, RowCell<Value>>()
        @usableFromInline
        var cells = TreeDictionary<Key, RowCell<Value>>().makeIterator()

        @inlinable
        init(map: RowMap) {
            self.map = map
        }

        @inlinable
        mutating func next() -> (key: Key, value: Value)? {
            while true {
                if let layout {
                    while slot < layout.capacity {
                        let current = slot
                        slot &+= 1
                        guard layout.isOccupied(current) else { continue }
                        let key = layout.keys[current]
                        if overlay.isEmpty || overlay[key] == nil { return (key, layout.values[current]) }
                    }
                    self.layout = nil
                    table = nil
                }
                while let (key, cell) = cells.next() {
                    if let value = cell.value { return (key, value) }
                }
                guard nextShard < map.shardCount else { return nil }
                let shard = map.shard(at: nextShard)
                nextShard &+= 1
                table = shard.table
                layout = shard.layout
                slot = 0
                overlay = shard.overlay
                cells = shard.overlay.makeIterator()
            }
        }
    }

    /// Every key and value, in no defined order. O(1) per element, plus O(slots).
    @inlinable
    func makeIterator() -> Iterator {
        Iterator(map: self)
    }

    /// The number of keys. O(1).
    @inlinable
    var underestimatedCount: Int { count }
}

extension RowMap {
    /// Describes every internal inconsistency (debug checks): the directory's shape (full
    /// leaves and groups but the last), each shard's table, each key in the shard its hash
    /// picks, overlay removals only of keys in the table, overlays within their fold
    /// threshold, the count, and no more keys than the shards' load allows.
    ///
    /// - Complexity: O(n)
    @usableFromInline
    func invariantViolations() -> [String] {
        var problems: [String] = []
        let width = 1 << Self.levelShift
        let leaves = (shardCount + width - 1) / width
        if directory.count != (leaves + width - 1) / width {
            problems.append("row map: \(directory.count) groups for \(shardCount) shards")
        }
        for (number, group) in directory.enumerated() {
            if group.count != Swift.min(width, leaves - number * width) {
                problems.append("row map: group \(number) holds \(group.count) leaves")
            }
            for (offset, leaf) in group.enumerated() {
                let first = (number * width + offset) * width
                if leaf.count != Swift.min(width, shardCount - first) {
                    problems.append("row map: the leaf from shard \(first) holds \(leaf.count) shards")
                }
            }
        }
        guard problems.isEmpty else { return problems }
        var total = 0
        for number in 0..<shardCount {
            let shard = shard(at: number)
            problems += shard.table.invariantViolations().map { "row map: shard \(number): \($0)" }
            shard.table.forEach { key, _ in
                if Self.shardIndex(hash: key.hashValue, shards: shardCount) != number {
                    problems.append("row map: shard \(number): key \(key) of the table belongs to another shard")
                }
            }
            for (key, cell) in shard.overlay {
                if Self.shardIndex(hash: key.hashValue, shards: shardCount) != number {
                    problems.append("row map: shard \(number): overlay key \(key) belongs to another shard")
                }
                if cell.value == nil, shard.table.slot(of: key, hash: key.hashValue) < 0 {
                    problems.append("row map: shard \(number): removal of \(key), absent from the table")
                }
            }
            if shard.overlay.count > shard.foldThreshold {
                problems.append("row map: shard \(number): overlay of \(shard.overlay.count) past its fold threshold")
            }
            if shard.count != shard.countedKeys {
                problems.append("row map: shard \(number) counts \(shard.count) keys, holds \(shard.countedKeys)")
            }
            total += shard.count
        }
        if total != count { problems.append("row map: \(total) keys in the shards, count says \(count)") }
        if count > Swift.max(1, shardCount) * shardLoad {
            problems.append("row map: \(count) keys in \(shardCount) shards of load \(shardLoad): a split is missing")
        }
        return problems
    }
}
