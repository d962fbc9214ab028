import HashTreeCollections

/// The IDs an index proposes for a condition, read lazily: a unique key's one ID, a
/// grouped key's group, or a range of an ordered index, with their count when the index
/// knows it without walking them.
struct QueryCandidates<E: Entity>: Sendable {
    /// The number of IDs, when known in O(1) (a unique or grouped lookup).
    let count: Int?
    /// Whether the IDs come in insertion order (a group, one ID), so that a query
    /// without an order can stop at its limit.
    let isInsertionOrder: Bool
    /// A grouped index's group, walked directly (the common case, kept out of the
    /// type-erased sequence).
    let group: SortedMap<UInt64, E.ID>?
    /// Whether the IDs are exactly the condition's matches (else a superset the
    /// condition's test must trim).
    let isExact: Bool
    private let makeIDs: @Sendable () -> AnySequenceOfIDs<E>

    init(
        count: Int?, isInsertionOrder: Bool, group: SortedMap<UInt64, E.ID>? = nil, isExact: Bool = true,
        ids: @escaping @Sendable () -> AnySequenceOfIDs<E>
    ) {
        self.count = count
        self.isInsertionOrder = isInsertionOrder
        self.group = group
        self.isExact = isExact
        self.makeIDs = ids
    }

    /// The IDs, walked afresh.
    var ids: AnySequenceOfIDs<E> { makeIDs() }

    static var none: QueryCandidates { QueryCandidates(count: 0, isInsertionOrder: true) { AnySequenceOfIDs(EmptyCollection()) } }

    /// One ID or none.
    static func one(_ id: E.ID?) -> QueryCandidates {
        QueryCandidates(count: id == nil ? 0 : 1, isInsertionOrder: true) { AnySequenceOfIDs(id.map { [$0] } ?? []) }
    }

    /// A grouped index's group, in insertion order. O(1) to make and count.
    static func group(_ group: SortedMap<UInt64, E.ID>) -> QueryCandidates {
        QueryCandidates(count: group.count, isInsertionOrder: true, group: group) { AnySequenceOfIDs(group.lazy.map { $0.value }) }
    }
}

extension TableStorage {
    /// The IDs whose key equals `key` in a unique, grouped or ordered index among
    /// `positions`; nil if none of them can answer. O(1) (unique, grouped) or O(log n)
    /// (ordered) to find, then lazy.
    func candidatesEqual<Key: Hashable & Sendable>(_ key: Key, usingIndexesAt positions: [Int]) -> QueryCandidates<E>? {
        for position in positions {
            let box = indexes[position]
            if let unique = box as? IndexBox<UniqueIndex<E, Key>> { return .one(unique.index.lookup(key)) }
            if let grouped = box as? IndexBox<GroupedIndex<E, Key>> { return .group(grouped.index.lookup(key)) }
        }
        return nil
    }

    /// As ``candidatesEqual(_:usingIndexesAt:)``, also answered by an ordered index when
    /// the key is comparable.
    func comparableCandidatesEqual<Key: Hashable & Comparable & Sendable>(
        _ key: Key, usingIndexesAt positions: [Int]
    ) -> QueryCandidates<E>? {
        if let hashed = candidatesEqual(key, usingIndexesAt: positions) { return hashed }
        guard let ordered = orderedIndex(Key.self, at: positions) else { return nil }
        let range = SortedMapRange<Key>(key...key)
        return QueryCandidates(count: nil, isInsertionOrder: true) { ordered.lazyIDs(in: range, descending: false) }
    }
}

extension OrderedIndex {
    /// The IDs whose key lies in `range`, in key order (ties in insertion order), lazily:
    /// O(log n) to start, O(1) per ID.
    func lazyIDs(in range: SortedMapRange<Key>, descending: Bool) -> AnySequenceOfIDs<Element> {
        let mapped = entryRange(range)
        return descending
            ? AnySequenceOfIDs(DescendingIDs(base: entries.reversedElements(in: mapped).makeIterator()))
            : AnySequenceOfIDs(entries.elements(in: mapped).lazy.map { $0.value })
    }

    /// The number of IDs whose key lies in `range`. O(log n).
    func count(in range: SortedMapRange<Key>) -> Int {
        entries.offsets(in: entryRange(range)).count
    }

    /// `range` over keys as a range over the index's (key, insertion position) entries.
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
