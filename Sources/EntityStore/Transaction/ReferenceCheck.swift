import HashTreeCollections
/// Integrity checking at commit: every reference written by the commit resolves, and no
/// removal left a reference dangling.
struct ReferenceCheck {
    let state: EntityState
    let changeSet: ChangeSet

    /// - Complexity: O(changed rows × relations of their tables).
    func run() throws(EntityStoreError) {
        let schema = state.schema
        for (table, changes) in changeSet.tables {
            guard let position = schema.positions[table] else { continue }
            for rule in schema.operations[position].relationRules {
                for id in changes.upsertedIDs {
                    guard let target = rule.reference(from: id, in: state) else { continue }
                    if !rule.targetExists(target, in: state) {
                        throw .danglingReference(
                            table: table, id: describeID(id), field: rule.field,
                            targetTable: rule.targetTable, targetID: describeID(target))
                    }
                }
            }
            for rule in schema.incomingRelations[table] ?? [] {
                for id in changes.removedIDs {
                    if let source = rule.referencingIDs(of: id, in: state).first {
                        throw .danglingReference(
                            table: rule.sourceTable, id: describeID(source), field: rule.field,
                            targetTable: table, targetID: describeID(id))
                    }
                }
            }
        }
    }
}
