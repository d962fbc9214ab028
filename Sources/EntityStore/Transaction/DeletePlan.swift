import HashTreeCollections
/// The full effect of deleting some rows: every row a cascade reaches, and every
/// reference to clear, computed before anything changes.
struct DeletePlan {
    private struct RowKey: Hashable {
        let table: String
        let id: AnyHashable
    }

    private(set) var deletions: [(table: String, id: any Hashable & Sendable)] = []
    private(set) var nullifications: [(rule: any RelationRule, sourceID: any Hashable & Sendable)] = []
    /// How many distinct rows the caller asked to delete: the first entries of `deletions`.
    private(set) var requestedCount = 0

    /// Plans the deletion of `ids` (existing rows of `table`).
    /// - Throws: ``EntityStoreError/restrictViolation(table:id:referencingTable:field:referencingID:)``
    ///   if a row outside the deletion still references a deleted row through `.restrict`.
    /// - Complexity: O((deleted rows + references to them) × log n).
    init(table: String, ids: [any Hashable & Sendable], state: EntityState) throws(EntityStoreError) {
        var planned = Set<RowKey>()
        var queue: [(table: String, id: any Hashable & Sendable)] = []
        for id in ids where planned.insert(RowKey(table: table, id: AnyHashable(id))).inserted {
            queue.append((table, id))
        }
        requestedCount = queue.count
        // Phase 1: the closure over cascade rules.
        var next = 0
        while next < queue.count {
            let (current, id) = queue[next]
            next += 1
            for rule in state.schema.incomingRelations[current] ?? [] where rule.deleteRule == .cascade {
                for source in rule.referencingIDs(of: id, in: state)
                where planned.insert(RowKey(table: rule.sourceTable, id: AnyHashable(source))).inserted {
                    queue.append((rule.sourceTable, source))
                }
            }
        }
        // Phase 2: restrict and nullify rules, against the complete set of deletions.
        for (current, id) in queue {
            for rule in state.schema.incomingRelations[current] ?? [] {
                guard rule.deleteRule == .restrict || rule.deleteRule == .nullify else { continue }
                for source in rule.referencingIDs(of: id, in: state)
                where !planned.contains(RowKey(table: rule.sourceTable, id: AnyHashable(source))) {
                    if rule.deleteRule == .restrict {
                        throw .restrictViolation(
                            table: current, id: describeID(id), referencingTable: rule.sourceTable,
                            field: rule.field, referencingID: describeID(source))
                    }
                    nullifications.append((rule, source))
                }
            }
        }
        deletions = queue
    }
}
