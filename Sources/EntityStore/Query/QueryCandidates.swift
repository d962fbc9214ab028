import HashTreeCollections

/// A walk over IDs of a table: calling ``walk`` calls its body with each ID in turn until
/// the body returns false. Built where the index's and entity's types are known (in
/// `@inlinable` code), so walking runs code compiled for them, with no iterator box.
@usableFromInline
struct IDWalk<E: Entity> {
    @usableFromInline
    let walk: (_ body: (E.ID) -> Bool) -> Void

    @inlinable
    init(_ walk: @escaping (_ body: (E.ID) -> Bool) -> Void) {
        self.walk = walk
    }

    /// The IDs of `ids`, in its order.
    @inlinable
    init<S: Sequence>(_ ids: S) where S.Element == E.ID {
        self.walk = { body in
            for id in ids where !body(id) { return }
        }
    }

    /// A grouped index's group (or a unique key's entry), in insertion order.
    @inlinable
    static func group(_ group: SortedMap<UInt64, E.ID>) -> IDWalk {
        IDWalk { body in group.forEachValue(at: 0..<group.count, body) }
    }
}

/// The IDs an index proposes for a condition, read lazily: a unique key's one ID, a
/// grouped key's group, or a range of an ordered index, with their count when the index
/// knows it without walking them.
@usableFromInline
struct QueryCandidates<E: Entity> {
    /// The number of IDs, when known in O(1) (a unique or grouped lookup).
    @usableFromInline let count: Int?
    /// A grouped index's group, walked directly (the common case, kept out of the walk's
    /// closure).
    @usableFromInline let group: SortedMap<UInt64, E.ID>?
    /// Whether the IDs are exactly the condition's matches (else a superset the
    /// condition's test must trim).
    @usableFromInline let isExact: Bool
    /// The IDs, walked afresh at each call.
    @usableFromInline let ids: IDWalk<E>

    @inlinable
    init(count: Int?, group: SortedMap<UInt64, E.ID>? = nil, isExact: Bool = true, ids: IDWalk<E>) {
        self.count = count
        self.group = group
        self.isExact = isExact
        self.ids = ids
    }

    /// One ID or none.
    @inlinable
    static func one(_ id: E.ID?) -> QueryCandidates {
        QueryCandidates(count: id == nil ? 0 : 1, ids: IDWalk { body in if let id { _ = body(id) } })
    }

    /// A grouped index's group, in insertion order. O(1) to make and count.
    @inlinable
    static func group(_ group: SortedMap<UInt64, E.ID>) -> QueryCandidates {
        QueryCandidates(count: group.count, group: group, ids: .group(group))
    }
}

extension TableStorage {
    /// Whether the index at `position` is declared on `keyPath` (see ``KeyPathKey/matches(_:)``).
    @inlinable
    func isIndex(_ position: Int, on keyPath: AnyKeyPath) -> Bool {
        descriptor.indexes[position].keyPath?.matches(keyPath) ?? false
    }

    /// The IDs whose key equals `key` in a unique or grouped index on `keyPath`; nil if
    /// the field has neither. O(1) to find, then lazy.
    @inlinable
    func candidatesEqual<Key: Hashable & Sendable>(_ key: Key, for keyPath: AnyKeyPath) -> QueryCandidates<E>? {
        for position in indexes.indices where isIndex(position, on: keyPath) {
            let box = indexes[position]
            if let unique = box as? IndexBox<UniqueIndex<E, Key>> { return .one(unique.index.lookup(key)) }
            if let grouped = box as? IndexBox<GroupedIndex<E, Key>> { return .group(grouped.index.lookup(key)) }
        }
        return nil
    }

    /// As ``candidatesEqual(_:for:)``, also answered by an ordered index when the key is
    /// comparable (O(log n) to find the run of equal keys).
    @inlinable
    func comparableCandidatesEqual<Key: Hashable & Comparable & Sendable>(_ key: Key, for keyPath: AnyKeyPath) -> QueryCandidates<E>? {
        if let hashed = candidatesEqual(key, for: keyPath) { return hashed }
        guard let ordered = orderedEntries(Key.self, for: keyPath) else { return nil }
        return QueryCandidates(count: nil, ids: ordered.walk(in: SortedMapRange.only(key), descending: false))
    }

    /// The number of entities whose key equals `key` in a unique or grouped index on
    /// `keyPath`; nil if the field has neither. O(1).
    @inlinable
    func hashedCount<Key: Hashable & Sendable>(of key: Key, for keyPath: AnyKeyPath) -> Int? {
        for position in indexes.indices where isIndex(position, on: keyPath) {
            let box = indexes[position]
            if let grouped = box as? IndexBox<GroupedIndex<E, Key>> { return grouped.index.count(of: key) }
            if let unique = box as? IndexBox<UniqueIndex<E, Key>> { return unique.index.lookup(key) == nil ? 0 : 1 }
        }
        return nil
    }

    /// As ``hashedCount(of:for:)``, also answered by an ordered index (O(log n)).
    @inlinable
    func comparableCount<Key: Hashable & Comparable & Sendable>(of key: Key, for keyPath: AnyKeyPath) -> Int? {
        if let counted = hashedCount(of: key, for: keyPath) { return counted }
        return orderedEntries(Key.self, for: keyPath)?.count(in: SortedMapRange.only(key))
    }

    /// The entries of the ordered index of key type `Key` on `keyPath`, if any: all a
    /// query reads of it (taking them alone spares copying the index's other fields).
    /// O(indexes).
    @inlinable
    func orderedEntries<Key: Comparable & Sendable>(_ type: Key.Type, for keyPath: AnyKeyPath) -> OrderedEntries<E, Key>? {
        for position in indexes.indices where isIndex(position, on: keyPath) {
            // A class cast of the box: no copy of the index into an existential first.
            // The two maps alone, read from the box: not a copy of the whole index.
            if let box = indexes[position] as? IndexBox<OrderedIndex<E, Key>> {
                return OrderedEntries(entries: box.index.entries, unordered: box.index.unordered)
            }
        }
        return nil
    }
}

/// The entries of an ordered index, (key, insertion position) -> ID, and its rows whose
/// key is unordered (NaN), insertion position -> ID, as queries read them.
@usableFromInline
struct OrderedEntries<Element: Entity, Key: Comparable & Sendable> {
    @usableFromInline
    let entries: SortedMap<OrderedIndexKey<Key>, Element.ID>
    @usableFromInline
    let unordered: SortedMap<UInt64, Element.ID>

    @inlinable
    init(entries: SortedMap<OrderedIndexKey<Key>, Element.ID>, unordered: SortedMap<UInt64, Element.ID>) {
        self.entries = entries
        self.unordered = unordered
    }

    /// The number of rows the index holds (those whose key is not nil). O(1).
    @inlinable
    var entryCount: Int { entries.count + unordered.count }
}

extension OrderedEntries {
    /// The IDs whose key lies in `range`, in key order (ties in insertion order, in either
    /// direction). O(log n) to start, O(1) per ID.
    @inlinable
    func walk(in range: SortedMapRange<Key>, descending: Bool) -> IDWalk<Element> {
        let entries = self.entries, mapped = entryRange(range)
        if descending {
            return IDWalk { body in
                var ids = DescendingIDs(base: entries.reversedElements(in: mapped).makeIterator())
                while let id = ids.next() {
                    if !body(id) { return }
                }
            }
        }
        return IDWalk { body in entries.forEachValue(at: entries.offsets(in: mapped), body) }
    }

    /// Every indexed ID in key order (ties in insertion order), then those whose key is
    /// unordered (NaN) in insertion order, in either direction. O(log n) to start, O(1)
    /// per ID.
    @inlinable
    func walkAll(descending: Bool) -> IDWalk<Element> {
        let ordered = walk(in: .all, descending: descending)
        let unordered = self.unordered
        if unordered.isEmpty { return ordered }
        return IDWalk { body in
            var stopped = false
            ordered.walk { id in
                stopped = !body(id)
                return !stopped
            }
            if stopped { return }
            for (_, id) in unordered where !body(id) { return }
        }
    }

    /// The number of IDs whose key lies in `range`. O(log n).
    @inlinable
    func count(in range: SortedMapRange<Key>) -> Int {
        entries.offsets(in: entryRange(range)).count
    }

    /// `range` over keys as a range over the index's (key, insertion position) entries.
    @inlinable
    func entryRange(_ range: SortedMapRange<Key>) -> SortedMapRange<OrderedIndexKey<Key>> {
        SortedMapRange<OrderedIndexKey<Key>>(
            lowerBound: range.lowerBound.map {
                switch $0 {
                case let .included(key): .included(OrderedIndexKey(key: key, sequence: 0))
                case let .excluded(key): .excluded(OrderedIndexKey(key: key, sequence: .max))
                }
            },
            upperBound: range.upperBound.map {
                switch $0 {
                case let .included(key): .included(OrderedIndexKey(key: key, sequence: .max))
                case let .excluded(key): .excluded(OrderedIndexKey(key: key, sequence: 0))
                }
            })
    }
}

extension TableStorage {
    /// The grouped index of key type `Key` on `keyPath`, if any. O(indexes).
    @inlinable
    func groupedIndex<Key: Hashable & Sendable>(_ type: Key.Type, for keyPath: AnyKeyPath) -> GroupedIndex<E, Key>? {
        for position in indexes.indices where isIndex(position, on: keyPath) {
            if let box = indexes[position] as? IndexBox<GroupedIndex<E, Key>> { return box.index }
        }
        return nil
    }

    /// The unique index of key type `Key` on `keyPath`, if any. O(indexes).
    @inlinable
    func uniqueKeyIndex<Key: Hashable & Sendable>(_ type: Key.Type, for keyPath: AnyKeyPath) -> UniqueIndex<E, Key>? {
        for position in indexes.indices where isIndex(position, on: keyPath) {
            if let box = indexes[position] as? IndexBox<UniqueIndex<E, Key>> { return box.index }
        }
        return nil
    }
}

extension SortedMap {
    /// Calls `body` with the values at the positions `offsets` in key order, ascending,
    /// until it returns false. Descends from the root once per leaf it reads and copies
    /// each leaf's values once: no iterator path to allocate and no access to a node per
    /// element, which is what a short walk (a top-k, a group) pays most for.
    /// - Complexity: O(log n) per leaf reached, O(1) per value.
    @inlinable
    func forEachValue(at offsets: Range<Int>, _ body: (Value) -> Bool) {
        var offset = offsets.lowerBound
        while offset < offsets.upperBound {
            guard var node = root, offset < node.count else { return }
            var rest = offset
            while !node.isLeaf {
                let counts = node.counts
                var child = 0
                while rest >= counts[child] {
                    rest -= counts[child]
                    child += 1
                }
                node = node.children[child]
            }
            let values = node.values
            let end = Swift.min(values.count, rest + (offsets.upperBound - offset))
            for position in rest..<end where !body(values[position]) { return }
            offset += end - rest
        }
    }
}
