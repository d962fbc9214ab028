import HashTreeCollections

/// Type-erased access to one table's storage, for code that iterates over every table
/// (change sets, invariant checks, persistence).
@usableFromInline
protocol AnyTableStorage: Sendable {
    /// The table's name.
    var name: String { get }
    /// The number of rows. O(1).
    var count: Int { get }
    /// The store revision that last changed this table.
    var version: UInt64 { get }
    /// Describes every internal inconsistency (debug checks).
    func invariantViolations() -> [String]
    /// The rows, if the table's entities are of type `T`; nil otherwise. A metatype
    /// comparison and a copy of the row map, where a cast of the whole storage copies
    /// every part of it. O(1).
    func rows<T: Entity>(as type: T.Type) -> RowMap<T.ID, Row<T>>?
    /// The box of the index at `position` among the table's indexes, nil past the end. O(1).
    func indexBox(at position: Int) -> IndexBoxBase?
}

extension AnyTableStorage {
    @usableFromInline
    func rows<T: Entity>(as type: T.Type) -> RowMap<T.ID, Row<T>>? { nil }
    @usableFromInline
    func indexBox(at position: Int) -> IndexBoxBase? { nil }
}

/// The rows of one table and its secondary indexes.
///
/// A copy is O(1), and a write to a copy shared with older states touches only O(log n)
/// nodes: rows live in a ``RowMap`` (small flat hash tables, each with a persistent
/// overlay folded back into a new table for that shard alone), orders and indexes in
/// persistent B-trees and hash tries. An observer holding a previous state never makes a
/// commit do work proportional to the table: each commit costs its own changes × log n.
@usableFromInline
struct TableStorage<E: Entity>: AnyTableStorage {
    @usableFromInline
    let descriptor: Table<E>
    @usableFromInline
    var rows = RowMap<E.ID, Row<E>>()
    /// Insertion order: row sequence -> ID.
    @usableFromInline
    var order = SortedMap<UInt64, E.ID>()
    @usableFromInline
    var nextSequence: UInt64 = 0
    @usableFromInline
    var version: UInt64 = 0
    /// One box per declared index, in the order of `descriptor.indexes`, whose closures
    /// know each box's concrete type.
    @usableFromInline
    var indexes: [IndexBoxBase]

    /// Whether an insert must be validated (only unique indexes can refuse one).
    @usableFromInline
    let hasUniqueIndex: Bool

    @usableFromInline
    init(descriptor: Table<E>) {
        self.descriptor = descriptor
        self.hasUniqueIndex = descriptor.indexes.contains { $0.kind == .unique }
        self.indexes = descriptor.indexes.map { $0.makeBox() }
    }

    @usableFromInline
    var name: String { descriptor.name }
    @usableFromInline
    var count: Int { rows.count }

    @usableFromInline
    func rows<T: Entity>(as type: T.Type) -> RowMap<T.ID, Row<T>>? {
        // The metatypes are equal, so the two row map types are one type.
        T.self == E.self ? unsafeBitCast(rows, to: RowMap<T.ID, Row<T>>.self) : nil
    }

    @usableFromInline
    func indexBox(at position: Int) -> IndexBoxBase? { position < indexes.count ? indexes[position] : nil }

    // MARK: Validated single-row mutations (callers validate first)

    @inlinable
    func validateInsert(_ entity: E) throws(EntityStoreError) {
        for i in indexes.indices { try descriptor.indexes[i].validateInsert(indexes[i], entity, name) }
    }

    @inlinable
    func validateUpdate(from old: E, to new: E) throws(EntityStoreError) {
        for i in indexes.indices { try descriptor.indexes[i].validateUpdate(indexes[i], old, new, name) }
    }

    /// The box of index `i`, copied first if another table version shares it. O(1).
    @inlinable
    mutating func uniqueIndex(_ i: Int) -> IndexBoxBase {
        if !isKnownUniquelyReferenced(&indexes[i]) { indexes[i] = descriptor.indexes[i].copyBox(indexes[i]) }
        return indexes[i]
    }

    /// Adds a row for an ID not yet present. O(log n).
    @inlinable
    mutating func appendRow(_ entity: E, revision: UInt64) {
        let sequence = nextSequence
        nextSequence += 1
        rows[entity.id] = Row(value: entity, sequence: sequence, version: revision)
        order.updateValue(entity.id, forKey: sequence)
        for i in indexes.indices { descriptor.indexes[i].insert(uniqueIndex(i), entity, sequence) }
        version = revision
    }

    /// Adds a row for `entity` if its ID is absent; returns false, changing nothing, if it
    /// is present. One map operation instead of a lookup then an insert. O(1) amortized.
    @inlinable
    mutating func insertRowIfAbsent(_ entity: E, revision: UInt64) -> Bool {
        let sequence = nextSequence
        if let existing = rows.updateValue(Row(value: entity, sequence: sequence, version: revision), forKey: entity.id) {
            rows[entity.id] = existing
            return false
        }
        nextSequence += 1
        order.updateValue(entity.id, forKey: sequence)
        for i in indexes.indices { descriptor.indexes[i].insert(uniqueIndex(i), entity, sequence) }
        version = revision
        return true
    }

    /// Fills an empty table with `batch` in one pass (see ``beginLoad(expectedCount:)``).
    /// Returns the IDs in insertion order.
    /// - Throws: `duplicateID` or an index's constraint violation, leaving the table
    ///   unspecified: the caller puts back its copy of the table as it was.
    /// - Complexity: O(k) expected, plus O(k log k) per ordered index.
    @inlinable
    mutating func load(_ batch: [E], revision: UInt64) throws(EntityStoreError) -> [E.ID] {
        let loader = beginLoad(expectedCount: batch.count)
        try loader.stageIndexes(batch, firstSequence: nextSequence, drainedFromEnd: false)
        var ids: [E.ID] = []
        ids.reserveCapacity(batch.count)
        var sequence = nextSequence
        for entity in batch {
            ids.append(entity.id)
            try loadRow(entity, sequence: sequence, revision: revision)
            sequence += 1
        }
        endLoad(ids: ids, revision: revision)
        return ids
    }

    /// Fills an empty table from the chunks `nextChunk` hands over until it returns false,
    /// moving each entity out of its chunk (chunks come reversed, see
    /// `TableWriter.insert(expectedCount:drainingChunks:)`). Returns the IDs in insertion
    /// order.
    /// - Throws: as ``load(_:revision:)``.
    /// - Complexity: as ``load(_:revision:)``.
    @inlinable
    mutating func load(
        expectedCount: Int, drainingChunks nextChunk: (inout [E]) -> Bool, revision: UInt64
    ) throws(EntityStoreError) -> [E.ID] {
        let loader = beginLoad(expectedCount: expectedCount)
        var ids: [E.ID] = []
        ids.reserveCapacity(expectedCount)
        var sequence = nextSequence
        var chunk: [E] = []
        while nextChunk(&chunk) {
            try loader.stageIndexes(chunk, firstSequence: sequence, drainedFromEnd: true)
            while let entity = chunk.popLast() {
                ids.append(entity.id)
                // Moved, never copied: a copy would retain the entity's strings, whose
                // memory another thread wrote, and that costs more than the rest of a row.
                try loadRow(consume entity, sequence: sequence, revision: revision)
                sequence += 1
            }
        }
        endLoad(ids: ids, revision: revision)
        return ids
    }

    /// Starts a bulk load into this empty table: rows go straight into the flat table,
    /// indexes stage their entries, and ``endLoad(ids:revision:)`` packs the
    /// insertion-order B-tree and the indexes once. Each run of entities goes to the
    /// indexes through the returned loader's `stageIndexes`, and row by row through
    /// ``loadRow(_:sequence:revision:)``, with positions from `nextSequence` on.
    @inlinable
    mutating func beginLoad(expectedCount: Int) -> BulkLoader<E> {
        rows.reserveCapacity(adding: expectedCount)
        for i in indexes.indices { descriptor.indexes[i].beginLoad(uniqueIndex(i), expectedCount) }
        return BulkLoader(adders: descriptor.indexes.map { $0.loadAdd }, boxes: indexes, table: name)
    }

    /// Adds the row of one entity during a bulk load, at insertion position `sequence`.
    /// - Throws: `duplicateID`.
    @inlinable
    mutating func loadRow(_ entity: consuming E, sequence: UInt64, revision: UInt64) throws(EntityStoreError) {
        let id = entity.id
        if rows.updateValue(Row(value: consume entity, sequence: sequence, version: revision), forKey: id) != nil {
            throw .duplicateID(table: name, id: describeID(id))
        }
    }

    /// Ends a bulk load whose entities had the IDs `ids`, in insertion order from
    /// `nextSequence` on.
    @inlinable
    mutating func endLoad(ids: [E.ID], revision: UInt64) {
        for i in indexes.indices { descriptor.indexes[i].endLoad(indexes[i]) }
        let first = nextSequence
        let end = first + UInt64(ids.count)
        order = SortedMap(sortedUniqueKeys: Array(first..<end), values: ids)
        nextSequence = end
        version = revision
    }

    /// Replaces the entity of an existing row, keeping its position. O(log n).
    @inlinable
    mutating func replaceRow(_ old: Row<E>, with entity: E, revision: UInt64) {
        rows[entity.id] = Row(value: entity, sequence: old.sequence, version: revision)
        for i in indexes.indices { descriptor.indexes[i].update(uniqueIndex(i), old.value, entity, old.sequence) }
        version = revision
    }

    /// Removes an existing row. O(log n).
    @inlinable
    mutating func deleteRow(_ row: Row<E>, revision: UInt64) {
        rows.removeValue(forKey: row.value.id)
        order.removeValue(forKey: row.sequence)
        for i in indexes.indices { descriptor.indexes[i].remove(uniqueIndex(i), row.value, row.sequence) }
        version = revision
    }

    /// Puts back a row exactly as it was (undo of a replace). O(log n).
    @inlinable
    mutating func restoreRow(_ original: Row<E>, over current: Row<E>) {
        rows[original.value.id] = original
        for i in indexes.indices { descriptor.indexes[i].update(uniqueIndex(i), current.value, original.value, original.sequence) }
    }

    /// The index storage named `name`, if the table declares it.
    @inlinable
    func index(named name: String) -> (any EntityIndex<E>)? {
        descriptor.indexes.firstIndex { $0.name == name }.map { descriptor.indexes[$0].erased(indexes[$0]) }
    }

    @inlinable
    func invariantViolations() -> [String] {
        var problems = rows.invariantViolations().map { "table '\(name)': \($0)" }
        problems += order.invariantViolations().map { "table '\(name)' insertion order: \($0)" }
        if order.count != rows.count { problems.append("table '\(name)': \(order.count) order entries for \(rows.count) rows") }
        for (sequence, id) in order {
            guard let row = rows[id] else { problems.append("table '\(name)': order lists missing id \(id)"); continue }
            if row.sequence != sequence { problems.append("table '\(name)': row \(id) has sequence \(row.sequence), order says \(sequence)") }
            if row.value.id != id { problems.append("table '\(name)': row keyed \(id) holds id \(row.value.id)") }
            if sequence >= nextSequence { problems.append("table '\(name)': sequence \(sequence) not below next \(nextSequence)") }
        }
        for i in indexes.indices { problems += descriptor.indexes[i].erased(indexes[i]).invariantViolations(rows: rows) }
        return problems
    }
}

/// What a bulk load calls for each run of entities, gathered once by `beginLoad`: the
/// indexes' `loadAdd` operations and their boxes (this table's own since `beginLoad`).
/// Each index gets one call per run, so the per-entity work runs inside code specialized
/// for the index, with no closure call or retain per entity.
@usableFromInline
struct BulkLoader<E: Entity> {
    @usableFromInline let adders: [@Sendable (IndexBoxBase, LoadBatch<E>, String) throws(EntityStoreError) -> Void]
    @usableFromInline let boxes: [IndexBoxBase]
    @usableFromInline let table: String

    @inlinable
    init(adders: [@Sendable (IndexBoxBase, LoadBatch<E>, String) throws(EntityStoreError) -> Void], boxes: [IndexBoxBase], table: String) {
        self.adders = adders
        self.boxes = boxes
        self.table = table
    }

    /// Stages `entities` in every index, at the positions a ``LoadBatch`` of them gives.
    /// - Throws: an index's constraint violation.
    /// - Complexity: O(k) per grouped index, plus what each index's entry costs.
    @inlinable
    func stageIndexes(_ entities: [E], firstSequence: UInt64, drainedFromEnd: Bool) throws(EntityStoreError) {
        if adders.isEmpty { return }
        try entities.withUnsafeBufferPointer { buffer throws(EntityStoreError) in
            let batch = LoadBatch(entities: buffer, firstSequence: firstSequence, drainedFromEnd: drainedFromEnd)
            for i in adders.indices { try adders[i](boxes[i], batch, table) }
        }
    }
}
