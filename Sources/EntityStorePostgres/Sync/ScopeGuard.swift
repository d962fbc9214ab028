#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

/// Keeps a scoped replica's rows inside its selection: a local write that inserts or
/// updates a row of a table the selection leaves out, or a row whose field does not match
/// the table's condition, is refused at its commit (so it never becomes a pending change),
/// and a push checks the same again before sending anything.
struct ScopeGuard: Sendable {
    let selection: PostgresSelection
    let tables: [any AnyTable]

    /// The error for a row outside the selection: one line naming the table, the ID and the selection.
    func refusal(_ table: String, _ id: String, _ more: Int, _ what: String) -> PostgresStoreError {
        .invalidSelection(
            "table '\(table)', id \(id)\(more > 0 ? " (and \(more) more row(s))" : "") lies outside this replica's selection (\(selection)): \(what)")
    }

    /// Throws when the commit from `previous` to `next` wrote a row outside the selection.
    /// A restore (no exact change set) passes: its push is refused as a whole anyway.
    /// - Complexity: O(rows changed) lookups, and one encoding per row whose value changed
    ///   in a conditioned table.
    func check(previous: EntityState, next: EntityState) throws(PostgresStoreError) {
        guard next.revision != previous.revision, !next.changeSet.replacedAll else { return }
        for table in tables where next.changeSet.changed(table: table.name) {
            guard let typed = table as? any TypedTable else { continue }
            if let (id, more) = outside(typed, previous: previous, next: next) {
                throw refusal(table.name, id, more, "the write was refused")
            }
        }
    }

    /// The first row (as ID text) of `table` the commit wrote outside the selection, with
    /// how many more there are.
    private func outside<T: TypedTable>(_ table: T, previous: EntityState, next: EntityState) -> (String, Int)? {
        let changes = next.changeSet[table.typed]
        let written = changes.inserted + Array(changes.updated.keys)
        // Within a batch the change set is merged over its commits: check only the rows
        // this commit changed.
        let view = next[table.typed], before = previous[table.typed]
        var rows: [T.Element] = []
        for id in written {
            guard let entity = view.find(id), !ValueIdentity.same(before.find(id), entity) else { continue }
            rows.append(entity)
        }
        let ids = Self.outsideIDs(rows, table: table.name, selection: selection)
        return ids.first.map { ($0, ids.count - 1) }
    }

    /// The IDs (as the change log writes them) of `rows` of `table` outside `selection`.
    /// - Complexity: O(rows), one encoding per row of a conditioned table.
    static func outsideIDs<E: Entity>(_ rows: [E], table: String, selection: PostgresSelection) -> [String] {
        guard !rows.isEmpty else { return [] }
        if !selection.includes(table) { return rows.map { text(of: $0.id) } }
        guard let condition = selection.conditions[table] else { return [] }
        let encoder = RowEncoder(dialect: .postgres)
        return rows.filter { !condition.matches(condition.value(of: $0, encoder: encoder)) }.map { text(of: $0.id) }
    }

    /// The change-log text of an ID.
    static func text<ID: Encodable>(of id: ID) -> String {
        (try? RowEncoder.encodeID(id, dialect: .postgres)).map(EntityStorePostgres.idText) ?? "\(id)"
    }
}
#endif
