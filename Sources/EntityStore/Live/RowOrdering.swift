import HashTreeCollections

/// How a live query sorts its rows: the position of a row, and a walk of the query's
/// source in position order through an index, to fill or refill a top-k window.
@usableFromInline
protocol RowOrdering<E>: Sendable {
    associatedtype E: Entity
    associatedtype Position: Comparable & Sendable

    /// Where `row` sorts. O(1).
    func position(of row: Row<E>) -> Position

    /// Calls `body` with the IDs of the query's source in `storage` (a superset for the
    /// caller to test), in position order, strictly after `boundary` (from the start when
    /// nil), until it returns false. Returns false, calling nothing, when no index gives
    /// that order for the source. O(log n) to start, O(1) amortized per ID.
    func walk(_ storage: TableStorage<E>, after boundary: Position?, _ body: (E.ID) -> Bool) -> Bool
}

/// Insertion order: the position is the row's sequence number. Walks the table's
/// insertion order when the source is the whole table.
@usableFromInline
struct InsertionOrdering<E: Entity>: RowOrdering {
    /// Whether the source is the whole table (a walk of the insertion order is then a walk
    /// of the source).
    @usableFromInline let walksSource: Bool

    @inlinable
    init(query: LiveQuery<E>) {
        walksSource = query.source.kind == .all
    }

    @inlinable
    func position(of row: Row<E>) -> UInt64 { row.sequence }

    @inlinable
    func walk(_ storage: TableStorage<E>, after boundary: UInt64?, _ body: (E.ID) -> Bool) -> Bool {
        guard walksSource else { return false }
        let range = SortedMapRange<UInt64>(lowerBound: boundary.map { .excluded($0) })
        for (_, id) in storage.order.elements(in: range) where !body(id) { break }
        return true
    }
}

/// A position built from a field's value and the row's insertion sequence.
@usableFromInline
protocol FieldPosition<Key>: Comparable, Sendable {
    associatedtype Key: Comparable & Sendable
    init(key: Key, sequence: UInt64)
    var key: Key { get }
    var sequence: UInt64 { get }
    /// Whether positions descend by key.
    static var isDescending: Bool { get }
}

extension OrderedIndexKey: FieldPosition {
    @inlinable
    static var isDescending: Bool { false }
}

/// Descending by key, ties in ascending insertion order (as queries sort descending).
///
/// The order is total even for floating-point keys that are not equal to themselves (a
/// NaN): those sort after every other key and among themselves by sequence, as in
/// ``OrderedIndexKey``, so a window can always find a NaN row's position again.
@usableFromInline
struct DescendingPosition<Key: Comparable & Sendable>: FieldPosition {
    @usableFromInline let key: Key
    @usableFromInline let sequence: UInt64

    @inlinable
    init(key: Key, sequence: UInt64) {
        self.key = key
        self.sequence = sequence
    }

    @inlinable
    static var isDescending: Bool { true }

    @inlinable
    static func < (lhs: Self, rhs: Self) -> Bool {
        positionPrecedes(lhs.key, lhs.sequence, rhs.key, rhs.sequence, descending: true)
    }

    @inlinable
    static func == (lhs: Self, rhs: Self) -> Bool {
        positionsEqual(lhs.key, lhs.sequence, rhs.key, rhs.sequence)
    }
}

/// Sorted by the field `keyPath`. Walks an ordered index on the field when one is declared
/// and the source is the whole table or a range of the same field (the walk then stays
/// inside the range).
@usableFromInline
struct FieldOrdering<E: Entity, Key: Comparable & Sendable, Position: FieldPosition<Key>>: RowOrdering {
    @usableFromInline let read: @Sendable (E) -> Key
    /// Whether an index walk covers the source, and the source's range of the field when
    /// it is one.
    @usableFromInline let walksSource: Bool
    @usableFromInline let bounds: SortedMapRange<OrderedIndexKey<Key>>
    /// Whether the source holds the rows whose key is unordered (NaN): the whole table
    /// does, a range never does.
    @usableFromInline let sourceHoldsUnordered: Bool
    /// The position of the ordered index on the field among the table's indexes, found
    /// once (a restore keeps the schema, so it stays valid); nil without one.
    @usableFromInline let indexPosition: Int?

    /// The ordering of `query` by `keyPath`; `storage`, the table when the query starts,
    /// locates an ordered index on the field.
    @inlinable
    init(query: LiveQuery<E>, keyPath: any KeyPath<E, Key> & Sendable, read: @escaping @Sendable (E) -> Key, storage: TableStorage<E>?) {
        self.read = read
        self.indexPosition = storage?.orderedIndexPosition(Key.self, for: keyPath)
        switch query.source.kind {
        case .all:
            walksSource = true
            bounds = .all
            sourceHoldsUnordered = OrderedIndexKey<Key>.mayBeUnordered
        case .range:
            let sameField = query.source.field.map { $0 == keyPath as AnyKeyPath } ?? false
            let range = query.source.indexBounds as? SortedMapRange<OrderedIndexKey<Key>>
            walksSource = sameField && range != nil
            bounds = range ?? .all
            sourceHoldsUnordered = false
        case .equals:
            walksSource = false
            bounds = .all
            sourceHoldsUnordered = false
        }
    }

    @inlinable
    func position(of row: Row<E>) -> Position { Position(key: read(row.value), sequence: row.sequence) }

    /// Walks the index in the window's order after `boundary`: the ordered entries, then,
    /// when the source holds them, the rows whose key is unordered (NaN), which sort last
    /// in either direction, in insertion order.
    @inlinable
    func walk(_ storage: TableStorage<E>, after boundary: Position?, _ body: (E.ID) -> Bool) -> Bool {
        guard walksSource, let indexPosition, let index = storage.orderedEntries(Key.self, atPosition: indexPosition) else { return false }
        if let boundary, boundary.key != boundary.key {
            // Past every ordered key: only unordered rows after the boundary's are left.
            guard sourceHoldsUnordered else { return true }
            let after = SortedMapRange<UInt64>(lowerBound: .excluded(boundary.sequence))
            for (_, id) in index.unordered.elements(in: after) where !body(id) { return true }
            return true
        }
        guard walkOrdered(index.entries, after: boundary, body) else { return true }
        if sourceHoldsUnordered { for (_, id) in index.unordered where !body(id) { return true } }
        return true
    }

    /// Walks the ordered entries after `boundary` (an ordered key); false if `body` stopped it.
    @inlinable
    func walkOrdered(_ entries: SortedMap<OrderedIndexKey<Key>, E.ID>, after boundary: Position?, _ body: (E.ID) -> Bool) -> Bool {
        guard Position.isDescending else {
            var range = bounds
            if let boundary { range.lowerBound = .excluded(OrderedIndexKey(key: boundary.key, sequence: boundary.sequence)) }
            for (_, id) in entries.elements(in: range) where !body(id) { return false }
            return true
        }
        // Descending with ties ascending: first the rest of the boundary's run of equal
        // keys (ascending), then smaller keys run by run.
        var below = bounds
        if let boundary {
            let tail = SortedMapRange(
                lowerBound: .excluded(OrderedIndexKey(key: boundary.key, sequence: boundary.sequence)),
                upperBound: .included(OrderedIndexKey(key: boundary.key, sequence: .max)))
            for (_, id) in entries.elements(in: tail) where !body(id) { return false }
            below.upperBound = .excluded(OrderedIndexKey(key: boundary.key, sequence: 0))
        }
        var iterator = entries.reversedElements(in: below).makeIterator()
        var run: [E.ID] = []
        var pending = iterator.next()
        while let first = pending {
            run.removeAll(keepingCapacity: true)
            run.append(first.value)
            pending = nil
            while let element = iterator.next() {
                guard element.key.key == first.key.key else {
                    pending = element
                    break
                }
                run.append(element.value)
            }
            // The reverse walk met the run in descending insertion order.
            for id in run.reversed() where !body(id) { return false }
        }
        return true
    }
}
