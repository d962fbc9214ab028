import HashTreeCollections

/// How a live query sorts its rows: the position of a row, and a walk of the table in
/// position order through an index, to fill or refill a top-k window.
protocol RowOrdering<E>: Sendable {
    associatedtype E: Entity
    associatedtype Position: Comparable & Sendable

    /// Where `row` sorts. O(1).
    func position(of row: Row<E>) -> Position

    /// Calls `body` with the IDs of `storage` in position order, strictly after `boundary`
    /// (from the start when nil), until it returns false. Returns false, calling nothing,
    /// when no index gives that order. O(log n) to start, O(1) amortized per ID.
    func walk(_ storage: TableStorage<E>, after boundary: Position?, _ body: (E.ID) -> Bool) -> Bool
}

/// Insertion order: the position is the row's sequence number.
struct InsertionOrdering<E: Entity>: RowOrdering {
    func position(of row: Row<E>) -> UInt64 { row.sequence }

    func walk(_ storage: TableStorage<E>, after boundary: UInt64?, _ body: (E.ID) -> Bool) -> Bool {
        let range = SortedMapRange<UInt64>(lowerBound: boundary.map { .excluded($0) })
        for (_, id) in storage.order.elements(in: range) where !body(id) { break }
        return true
    }
}

/// A position built from a field's value and the row's insertion sequence.
protocol FieldPosition<Key>: Comparable, Sendable {
    associatedtype Key: Comparable & Sendable
    init(key: Key, sequence: UInt64)
    var key: Key { get }
    var sequence: UInt64 { get }
    /// Whether positions descend by key.
    static var isDescending: Bool { get }
}

extension OrderedIndexKey: FieldPosition {
    static var isDescending: Bool { false }
}

/// Descending by key, ties in ascending insertion order (as queries sort descending).
struct DescendingPosition<Key: Comparable & Sendable>: FieldPosition {
    let key: Key
    let sequence: UInt64

    init(key: Key, sequence: UInt64) {
        self.key = key
        self.sequence = sequence
    }

    static var isDescending: Bool { true }

    static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.key > rhs.key || (lhs.key == rhs.key && lhs.sequence < rhs.sequence)
    }
}

/// Sorted by the field `keyPath`; walks an ordered index on it when declared.
struct FieldOrdering<E: Entity, Key: Comparable & Sendable, Position: FieldPosition<Key>>: RowOrdering {
    let keyPath: any KeyPath<E, Key> & Sendable

    func position(of row: Row<E>) -> Position { Position(key: row.value[keyPath: keyPath], sequence: row.sequence) }

    func walk(_ storage: TableStorage<E>, after boundary: Position?, _ body: (E.ID) -> Bool) -> Bool {
        guard let index = orderedIndex(E.self, Key.self, on: keyPath, in: storage) else { return false }
        let entries = index.entries
        guard Position.isDescending else {
            let range = SortedMapRange(lowerBound: boundary.map { .excluded(OrderedIndexKey(key: $0.key, sequence: $0.sequence)) })
            for (_, id) in entries.elements(in: range) where !body(id) { break }
            return true
        }
        // Descending with ties ascending: first the rest of the boundary's run of equal
        // keys (ascending), then smaller keys run by run.
        var below = SortedMapRange<OrderedIndexKey<Key>>.all
        if let boundary {
            let tail = SortedMapRange(
                lowerBound: .excluded(OrderedIndexKey(key: boundary.key, sequence: boundary.sequence)),
                upperBound: .included(OrderedIndexKey(key: boundary.key, sequence: .max)))
            for (_, id) in entries.elements(in: tail) where !body(id) { return true }
            below = SortedMapRange(upperBound: .excluded(OrderedIndexKey(key: boundary.key, sequence: 0)))
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
            for id in run.reversed() where !body(id) { return true }
        }
        return true
    }
}
