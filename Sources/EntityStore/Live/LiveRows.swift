import HashTreeCollections

/// The rows of a live query at one revision: a persistent, ordered collection.
///
/// Taking and keeping it is O(1) whatever its size: a commit changes the query's rows in
/// O(log k) per changed row and shares everything else with the values handed out before.
/// The rows of an equality on a grouped index are read from the index's group and the
/// table's rows at their revision, so keeping them keeps that revision's changed parts
/// alive, as keeping an ``EntityState`` does.
/// Read it as any `RandomAccessCollection` (`Array(rows)`, `rows.map(\.id)`).
public struct LiveRows<E: Entity>: RandomAccessCollection, Sendable {
    @usableFromInline let storage: any RowSnapshot<E>
    /// The live query these rows came from, and how many changes it had made, so that two
    /// values of one query compare in O(1).
    @usableFromInline let origin: UInt64
    @usableFromInline let generation: UInt64

    @inlinable
    init(storage: any RowSnapshot<E>, origin: UInt64, generation: UInt64) {
        self.storage = storage
        self.origin = origin
        self.generation = generation
    }

    /// Always 0.
    public var startIndex: Int { 0 }
    /// The number of rows. O(1).
    public var endIndex: Int { storage.count }
    /// The number of rows. O(1).
    public var count: Int { storage.count }

    /// The row at `position`. O(log k).
    public subscript(position: Int) -> E {
        // Unreachable out of bounds unless the caller passes an invalid index, which
        // every `Collection` treats as a programming error.
        guard let entity = storage.entity(at: position) else { preconditionFailure("LiveRows index out of range") }
        return entity
    }

    /// Iterates the rows in order: O(log k) to start, O(1) amortized per row.
    public func makeIterator() -> Iterator { Iterator(base: storage.makeEntityIterator()) }

    /// An iterator over the rows.
    public struct Iterator: IteratorProtocol {
        var base: any IteratorProtocol<E>

        /// The next row.
        public mutating func next() -> E? { base.next() }
    }

    /// The row with `id`, if it is in the result. O(log k).
    public func row(id: E.ID) -> E? { storage.entity(id: id) }

    /// The offset of the row with `id`, if it is in the result. O(log k).
    public func offset(of id: E.ID) -> Int? { storage.offset(id: id) }
}

extension LiveRows: Equatable {
    /// Two values of one live query are equal when they come from the same change (each
    /// change a query delivers alters its rows), O(1); otherwise rows compare one by one,
    /// O(k).
    public static func == (lhs: LiveRows, rhs: LiveRows) -> Bool {
        if lhs.origin == rhs.origin { return lhs.generation == rhs.generation }
        return lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    /// Whether the rows equal `array`, in order. O(k).
    public static func == (lhs: LiveRows, rhs: [E]) -> Bool { lhs.count == rhs.count && lhs.elementsEqual(rhs) }
    /// Whether `array` equals the rows, in order. O(k).
    public static func == (lhs: [E], rhs: LiveRows) -> Bool { rhs == lhs }
    /// Whether the rows differ from `array`. O(k).
    public static func != (lhs: LiveRows, rhs: [E]) -> Bool { !(lhs == rhs) }
    /// Whether `array` differs from the rows. O(k).
    public static func != (lhs: [E], rhs: LiveRows) -> Bool { !(rhs == lhs) }
}

/// The storage of ``LiveRows``, erased over the position type rows are sorted by.
@usableFromInline
protocol RowSnapshot<E>: Sendable {
    associatedtype E: Entity
    var count: Int { get }
    func entity(at offset: Int) -> E?
    func entity(id: E.ID) -> E?
    func offset(id: E.ID) -> Int?
    func makeEntityIterator() -> any IteratorProtocol<E>
}

/// Rows sorted by `Position`, with each member's position (persistent, O(1) to copy).
@usableFromInline
struct SortedRows<E: Entity, Position: Comparable & Sendable>: RowSnapshot {
    @usableFromInline var rows = SortedMap<Position, E>()
    @usableFromInline var positions = TreeDictionary<E.ID, Position>()

    @inlinable
    init() {}

    @inlinable
    var count: Int { rows.count }
    @inlinable
    func entity(at offset: Int) -> E? { rows.element(atOffset: offset)?.value }
    @inlinable
    func entity(id: E.ID) -> E? { positions[id].flatMap { rows[$0] } }
    @inlinable
    func offset(id: E.ID) -> Int? { positions[id].flatMap { rows.offset(of: $0) } }
    @inlinable
    func makeEntityIterator() -> any IteratorProtocol<E> { rows.lazy.map { $0.value }.makeIterator() }

    @inlinable
    mutating func insert(_ entity: E, at position: Position) {
        rows.updateValue(entity, forKey: position)
        positions[entity.id] = position
    }

    @inlinable
    @discardableResult
    mutating func remove(_ id: E.ID) -> Position? {
        guard let position = positions.removeValue(forKey: id) else { return nil }
        rows.removeValue(forKey: position)
        return position
    }
}
