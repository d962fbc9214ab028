import HashTreeCollections

/// The storage of one secondary index, maintained inside transactions.
///
/// Writes are validated before they are applied (`validate…`), so a refused write leaves
/// the index and its table untouched even when the caller catches the error and goes on.
@usableFromInline
protocol EntityIndex<Element>: Sendable {
    associatedtype Element: Entity

    /// The index's name within its table.
    var name: String { get }

    /// Throws if inserting `entity` would break the index's constraint.
    func validateInsert(_ entity: Element, table: String) throws(EntityStoreError)
    /// Throws if replacing `old` by `new` would break the index's constraint.
    func validateUpdate(from old: Element, to new: Element, table: String) throws(EntityStoreError)

    /// Adds `entity`, whose row has insertion position `sequence`. O(log n).
    mutating func insert(_ entity: Element, sequence: UInt64)
    /// Removes `entity`. O(log n).
    mutating func remove(_ entity: Element, sequence: UInt64)
    /// Moves the entry of one row from `old`'s key to `new`'s; nothing when the key is unchanged.
    mutating func update(from old: Element, to new: Element, sequence: UInt64)
    /// Bulk loading, how a bulk insert into an empty table builds its indexes: `beginLoad`,
    /// then `loadAdd` once per run of entities, then `endLoad`. An index may stage the
    /// entries and build its structure once at the end.
    mutating func beginLoad(expectedCount: Int)
    /// Adds a run of entities during a bulk load, in insertion order.
    /// - Throws: a constraint violation, after which the caller discards the index.
    mutating func loadAdd(_ batch: LoadBatch<Element>, table: String) throws(EntityStoreError)
    /// Ends a bulk load: the index is complete.
    mutating func endLoad()

    /// Describes every disagreement between the index and the table's rows (debug checks).
    func invariantViolations(rows: RowsOf<Element>) -> [String]
}

/// An index over one key computed from each entity (`nil`: not indexed). It gets the
/// key-change logic of `update` and the invariant scan from here, and states only how it
/// stores one entry.
@usableFromInline
protocol KeyedEntityIndex: EntityIndex {
    associatedtype Key: Equatable & Sendable
    /// The index's kind, for messages.
    var kindName: String { get }
    /// The key of an entity, or nil if it is not indexed.
    var key: @Sendable (Element) -> Key? { get }
    /// Whether the index holds the entry of row `id` (insertion position `sequence`) under `key`.
    func holds(_ id: Element.ID, under key: Key, sequence: UInt64) -> Bool
    /// The number of entries stored.
    var entryCount: Int { get }
    /// Problems of the index's own structure, beyond agreement with the rows.
    var structuralProblems: [String] { get }
    /// Whether the index holds keys not equal to themselves (NaN) too; the hashed indexes
    /// leave them out (see ``indexableKey(_:)``).
    var holdsUnorderedKeys: Bool { get }
}

extension EntityIndex {
    /// Nothing to prepare by default: entities are inserted as they come.
    @inlinable
    mutating func beginLoad(expectedCount: Int) {}

    /// Validates and inserts each entity in turn. O(log n) each.
    @inlinable
    mutating func loadAdd(_ batch: LoadBatch<Element>, table: String) throws(EntityStoreError) {
        try batch.forEach { (entity, sequence) throws(EntityStoreError) in
            try validateInsert(entity.pointee, table: table)
            insert(entity.pointee, sequence: sequence)
        }
    }

    /// Nothing to finish by default.
    @inlinable
    mutating func endLoad() {}
}

extension KeyedEntityIndex {
    /// No constraint to check by default; only unique indexes refuse writes.
    @inlinable
    func validateInsert(_ entity: Element, table: String) throws(EntityStoreError) {}

    /// No constraint to check by default; only unique indexes refuse writes.
    @inlinable
    func validateUpdate(from old: Element, to new: Element, table: String) throws(EntityStoreError) {}

    /// None by default.
    @usableFromInline
    var holdsUnorderedKeys: Bool { false }

    /// The key the index holds an entity's entry under, nil when it holds none.
    @inlinable
    func heldKey(_ key: Key?) -> Key? { holdsUnorderedKeys ? key : indexableKey(key) }

    @inlinable
    mutating func update(from old: Element, to new: Element, sequence: UInt64) {
        // Two NaN keys compare unequal, so such a row is removed and inserted again under
        // the same position: the same entry.
        if heldKey(key(old)) == heldKey(key(new)) { return }
        remove(old, sequence: sequence)
        insert(new, sequence: sequence)
    }

    @usableFromInline
    var structuralProblems: [String] { [] }

    @usableFromInline
    func invariantViolations(rows: RowsOf<Element>) -> [String] {
        var problems: [String] = []
        var expected = 0
        for (id, row) in rows {
            guard let key = heldKey(key(row.value)) else { continue }
            expected += 1
            if !holds(id, under: key, sequence: row.sequence) {
                problems.append("\(kindName) index '\(name)': no entry for \(id) under key \(key)")
            }
        }
        if entryCount != expected {
            problems.append("\(kindName) index '\(name)': \(entryCount) entries for \(expected) keyed rows")
        }
        return problems + structuralProblems
    }
}

/// The key an index holds for an entity: `nil` (not indexed) for a missing key and for a
/// value that is not equal to itself, a floating-point NaN, which no lookup could find
/// again and which no range or order comparison places. O(1).
@inlinable
func indexableKey<Key: Equatable>(_ key: Key?) -> Key? {
    guard let key, key == key else { return nil }
    return key
}
