/// Whole-table loops (bulk insert, iteration) captured as closures where a ``Table`` is
/// declared.
///
/// Code that holds tables only as `any AnyTable` (persistence, tools) runs generic code
/// that Swift cannot specialize for the entity type, paying for runtime type metadata on
/// every row. `Table.init` is inlinable, so these closures are compiled in the module
/// that declares the table, for its concrete entity type, and the per-row work inside
/// them is fully specialized.
@usableFromInline
package struct BulkOperations<E: Entity>: Sendable {
    /// Inserts chunks of entities through a writer until the source has no more, as one
    /// `insert(contentsOf:)`, moving the entities out of the chunks (see
    /// `insert(expectedCount:drainingChunks:)`).
    @usableFromInline
    package let insert: @Sendable (TableWriter<E>, Int, (inout [E]) -> Bool) throws(EntityStoreError) -> Void
    /// Calls `body` on every entity of a view, in insertion order.
    @usableFromInline
    package let forEach: @Sendable (TableView<E>, (E) throws -> Void) throws -> Void

    /// The net changes a transaction made to the table, from its change tracker (see
    /// `ChangeTracker.changes(in:table:)`); nil if none.
    @usableFromInline
    let changes: @Sendable (any AnyChangeTracker, EntityState, String) -> (any AnyTableChanges)?

    @inlinable
    package init() {
        changes = { tracker, state, table in (tracker as? ChangeTracker<E>)?.changes(in: state, table: table) }
        insert = { (writer, expectedCount, nextChunk) throws(EntityStoreError) in
            try writer.insert(expectedCount: expectedCount, drainingChunks: nextChunk)
        }
        forEach = { view, body in
            for entity in view { try body(entity) }
        }
    }
}
