import HashTreeCollections

/// The sort key of an ordered index: the indexed value, then insertion order to keep
/// equal values stable and every entry distinct.
///
/// The order is total even for floating-point values that are not equal to themselves (a
/// NaN, which indexes leave out but live sorted windows and group extremes may hold):
/// those sort after every other value and among themselves by sequence, so a B-tree of
/// these keys stays well formed whatever it holds.
@usableFromInline
struct OrderedIndexKey<Key: Comparable & Sendable>: Comparable, Sendable {
    @usableFromInline
    let key: Key
    @usableFromInline
    let sequence: UInt64

    @inlinable
    init(key: Key, sequence: UInt64) {
        self.key = key
        self.sequence = sequence
    }

    /// Whether keys may be unordered (NaN). A run-time conformance lookup: for choices
    /// made once (a bulk load, a window's set-up), never per comparison.
    @inlinable
    static var mayBeUnordered: Bool { Key.self is any FloatingPoint.Type }

    @inlinable
    static func < (lhs: Self, rhs: Self) -> Bool {
        positionPrecedes(lhs.key, lhs.sequence, rhs.key, rhs.sequence, descending: false)
    }

    @inlinable
    static func == (lhs: Self, rhs: Self) -> Bool {
        positionsEqual(lhs.key, lhs.sequence, rhs.key, rhs.sequence)
    }
}

/// Whether the position (`lhsKey`, `lhsSequence`) sorts before (`rhsKey`, `rhsSequence`):
/// by key (descending when asked), equal keys by ascending sequence, and keys not equal
/// to themselves (NaN) after every other key, among themselves by sequence. A total
/// order, so a B-tree of positions stays well formed whatever it holds. O(1).
@inlinable
func positionPrecedes<Key: Comparable & Sendable>(_ lhsKey: Key, _ lhsSequence: UInt64, _ rhsKey: Key, _ rhsSequence: UInt64, descending: Bool) -> Bool {
    // Comparisons only, no test of the key's type: `Key.self is any FloatingPoint.Type`
    // is a run-time conformance lookup the optimizer does not fold, and this runs at
    // every step of every B-tree search. Before and after first: most steps meet
    // unequal keys.
    if descending ? lhsKey > rhsKey : lhsKey < rhsKey { return true }
    if descending ? lhsKey < rhsKey : lhsKey > rhsKey { return false }
    if lhsKey == rhsKey { return lhsSequence < rhsSequence }
    // Neither before, after nor equal: unordered. A key not equal to itself sorts last.
    let lhsOrdered = lhsKey == lhsKey, rhsOrdered = rhsKey == rhsKey
    if lhsOrdered && rhsOrdered { return false }
    if lhsOrdered != rhsOrdered { return lhsOrdered }
    return lhsSequence < rhsSequence
}

/// Whether two positions are the same: one sequence, and equal keys or two keys not
/// equal to themselves. O(1).
@inlinable
func positionsEqual<Key: Comparable & Sendable>(_ lhsKey: Key, _ lhsSequence: UInt64, _ rhsKey: Key, _ rhsSequence: UInt64) -> Bool {
    guard lhsSequence == rhsSequence else { return false }
    return lhsKey == rhsKey || (lhsKey != lhsKey && rhsKey != rhsKey)
}

/// An ordered index: entities sorted by a comparable key, for range queries, top-k and
/// sorted iteration. Inserts and removes are O(log n) in a persistent B-tree; nothing is
/// ever re-sorted. Entities whose key is `nil` are not indexed.
///
/// A key not equal to itself (a floating-point NaN) lies in no range and equals no key,
/// but a sort by the field still places its row: after every other key, in either
/// direction, among themselves in insertion order. Such rows are kept apart, by
/// insertion position, so that ranges and lookups never meet them and sorted walks read
/// them after the ordered entries.
@usableFromInline
struct OrderedIndex<Element: Entity, Key: Comparable & Sendable>: KeyedEntityIndex {
    @usableFromInline
    let name: String
    @usableFromInline
    let key: @Sendable (Element) -> Key?
    /// The same key, read from an entity in place (bulk loads).
    @usableFromInline
    let keyInPlace: @Sendable (UnsafePointer<Element>) -> Key?
    @usableFromInline
    var entries = SortedMap<OrderedIndexKey<Key>, Element.ID>()
    /// The rows whose key is not equal to itself (NaN), by insertion position. Always
    /// empty for keys that cannot be unordered.
    @usableFromInline
    var unordered = SortedMap<UInt64, Element.ID>()
    /// The entries being staged by a bulk load; nil otherwise.
    @usableFromInline
    var staged: [(key: OrderedIndexKey<Key>, id: Element.ID)]?

    /// An index named `name` over `key`; `keyInPlace` reads the same key from an entity in
    /// place, by default through `key`.
    @inlinable
    init(
        name: String, key: @escaping @Sendable (Element) -> Key?,
        keyInPlace: (@Sendable (UnsafePointer<Element>) -> Key?)? = nil
    ) {
        self.name = name
        self.key = key
        self.keyInPlace = keyInPlace ?? { key($0.pointee) }
    }

    @inlinable
    mutating func insert(_ entity: Element, sequence: UInt64) {
        guard let value = key(entity) else { return }
        if value != value {
            unordered.updateValue(entity.id, forKey: sequence)
            return
        }
        entries.updateValue(entity.id, forKey: OrderedIndexKey(key: value, sequence: sequence))
    }

    /// Starts staging: while loading into an empty index, entries are collected, sorted
    /// once and packed into the B-tree at the end (O(k log k) comparisons, no node splits).
    @inlinable
    mutating func beginLoad(expectedCount: Int) {
        staged = entries.isEmpty ? [] : nil
        staged?.reserveCapacity(expectedCount)
    }

    /// Stages the batch's entries; reads each key and ID in place. O(k).
    @inlinable
    mutating func loadAdd(_ batch: LoadBatch<Element>, table: String) throws(EntityStoreError) {
        guard var keyed = staged.take() else {
            return batch.forEach { entity, sequence in insert(entity.pointee, sequence: sequence) }
        }
        // Passed from a local: called through the stored property, the closure's context
        // would be retained and released for every entity.
        let keyInPlace = self.keyInPlace
        if OrderedIndexKey<Key>.mayBeUnordered {
            batch.forEach { entity, sequence in
                guard let key = keyInPlace(entity) else { return }
                if key != key {
                    unordered.updateValue(entity.pointee.id, forKey: sequence)
                } else {
                    keyed.append((OrderedIndexKey(key: key, sequence: sequence), entity.pointee.id))
                }
            }
        } else {
            batch.forEachKey(keyInPlace) { key, id, sequence in keyed.append((OrderedIndexKey(key: key, sequence: sequence), id)) }
        }
        staged = keyed
    }

    @inlinable
    mutating func endLoad() {
        guard var keyed = staged.take() else { return }
        keyed.sort { $0.key < $1.key }
        entries = SortedMap(sortedUniqueKeys: keyed.map { $0.key }, values: keyed.map { $0.id })
    }

    @inlinable
    mutating func remove(_ entity: Element, sequence: UInt64) {
        guard let value = key(entity) else { return }
        if value != value {
            unordered.removeValue(forKey: sequence)
            return
        }
        entries.removeValue(forKey: OrderedIndexKey(key: value, sequence: sequence))
    }

}

extension OrderedIndex {
    /// The IDs whose key lies in `range`, ascending by key (or descending). O(log n + k).
    @inlinable
    func ids(in range: SortedMapRange<Key>, descending: Bool = false) -> [Element.ID] {
        let mapped = SortedMapRange<OrderedIndexKey<Key>>(
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
        let elements = descending ? entries.reversedElements(in: mapped) : entries.elements(in: mapped)
        return elements.map { $0.value }
    }

    /// Every indexed ID in key order, lazily: O(log n) to start, O(1) per element (plus
    /// the size of each run of equal keys when descending). Equal keys keep insertion
    /// order in both directions; unordered keys (NaN) come last, in insertion order.
    func allIDs(descending: Bool) -> AnySequenceOfIDs<Element> {
        let unorderedIDs = unordered.lazy.map { $0.value }
        return descending
            ? AnySequenceOfIDs(Swift.sequence(state: (DescendingIDs(base: entries.reversedElements().makeIterator()), unorderedIDs.makeIterator())) { state in
                state.0.next() ?? state.1.next()
            })
            : AnySequenceOfIDs(Swift.sequence(state: (entries.elements(in: .all).lazy.map { $0.value }.makeIterator(), unorderedIDs.makeIterator())) { state in
                state.0.next() ?? state.1.next()
            })
    }
}

/// Walks an ordered index from the greatest key down, yielding each run of equal keys in
/// ascending insertion order (a plain reverse walk would reverse the ties too).
@usableFromInline
struct DescendingIDs<Key: Comparable & Sendable, ID>: Sequence, IteratorProtocol {
    @usableFromInline
    var base: SortedMap<OrderedIndexKey<Key>, ID>.Iterator
    @usableFromInline
    var run: [ID] = []
    @usableFromInline
    var pending: (key: OrderedIndexKey<Key>, value: ID)?

    @inlinable
    init(base: SortedMap<OrderedIndexKey<Key>, ID>.Iterator) {
        self.base = base
    }

    @inlinable
    mutating func next() -> ID? {
        if let id = run.popLast() { return id }
        guard let first = pending ?? base.next() else { return nil }
        pending = nil
        // The reverse walk meets a run's entries in descending insertion order; popping
        // from the end of the collected run yields them ascending.
        run.append(first.value)
        while let element = base.next() {
            guard element.key.key == first.key.key else {
                pending = (element.key, element.value)
                break
            }
            run.append(element.value)
        }
        return run.popLast()
    }
}

extension OrderedIndex {
    @usableFromInline var kindName: String { "ordered" }
    @usableFromInline var entryCount: Int { entries.count + unordered.count }
    @usableFromInline var holdsUnorderedKeys: Bool { true }
    @usableFromInline var structuralProblems: [String] {
        var problems = entries.invariantViolations().map { "ordered index '\(name)': \($0)" }
        problems += unordered.invariantViolations().map { "ordered index '\(name)' (unordered keys): \($0)" }
        // Unordered keys sort last: the last entry is one if any is.
        if let last = entries.last?.key, last.key != last.key {
            problems.append("ordered index '\(name)': an unordered key among the ordered entries")
        }
        return problems
    }

    @usableFromInline
    func holds(_ id: Element.ID, under key: Key, sequence: UInt64) -> Bool {
        if key != key { return unordered[sequence] == id }
        return entries[OrderedIndexKey(key: key, sequence: sequence)] == id
    }
}
