import EntityStore

/// Compares the rows a write left with the rows a description expects, table by table and
/// ID by ID, and words each difference for a failure message.
struct ChangeComparison {
    let before: EntityState
    let after: EntityState
    let expected: ExpectedState
    let exhaustivity: Exhaustivity
    /// What changed from `before` to `after`, when the commits between them say it (one
    /// commit's change set, or the merge of several); nil to compare the tables' rows.
    var changeSet: ChangeSet?

    /// Every difference, one line each (with indented field lines), in schema order.
    func problems() -> [String] {
        var problems: [String] = []
        let changeSet = changeSet ?? after.exactChanges(since: before)
        for table in after.schema.tables {
            guard let typed = table as? any TypedTable else { continue }
            problems += compare(typed, changeSet: changeSet)
        }
        return problems
    }

    private func compare<T: TypedTable>(_ table: T, changeSet: ChangeSet?) -> [String] {
        let declaration = table.typed
        let old = before[declaration], new = after[declaration]
        let edits = (expected.tables[table.name] as? ExpectedTable<T.Element>)?.edits ?? [:]
        let tableChanged = old.version != new.version || old.count != new.count
        var candidates: [T.Element.ID] = []
        var seen = Set<T.Element.ID>()
        func consider(_ id: T.Element.ID) {
            if seen.insert(id).inserted { candidates.append(id) }
        }
        if exhaustivity == .exhaustive && tableChanged {
            if let changeSet {
                let changes = changeSet[declaration]
                for id in changes.inserted { consider(id) }
                for id in changes.updated.keys.sorted(by: Self.order) { consider(id) }
                for id in changes.removed.keys.sorted(by: Self.order) { consider(id) }
            } else {
                // Rows whose version moved were written; rows only in `old` were removed.
                for entity in new where old.version(of: entity.id) != new.version(of: entity.id) { consider(entity.id) }
                for entity in old where !new.contains(entity.id) { consider(entity.id) }
            }
        }
        for id in edits.keys.sorted(by: Self.order) { consider(id) }

        let notes = FieldNotes(table: declaration)
        var problems: [String] = []
        for id in candidates {
            let actual = new.find(id)
            let wanted: T.Element? = edits[id].map { $0.value } ?? (exhaustivity == .exhaustive ? old.find(id) : actual)
            guard !ValueIdentity.same(wanted, actual) else { continue }
            let previous = old.find(id)
            let described = edits[id] != nil
            let label = "\(table.name) \(ValueDiff.describe(id))"
            switch (wanted, actual) {
            case (nil, let actual?):
                if exhaustivity == .exhaustive && previous == nil && !described {
                    problems.append("\(label): inserted, but the description does not insert it: \(ValueDiff.describe(actual))")
                } else if previous == nil && !described {
                    problems.append("\(label): inserted: \(ValueDiff.describe(actual))")
                } else {
                    problems.append("\(label): the description removes it, but the store still has it: \(ValueDiff.describe(actual))")
                }
            case (let wanted?, nil):
                if described {
                    let verb = previous == nil ? "inserts" : "keeps"
                    problems.append("\(label): the description \(verb) it, but the store does not have it: \(ValueDiff.describe(wanted))")
                } else {
                    problems.append("\(label): removed, but the description keeps it\(cascadeHint(declaration))")
                }
            case (let wanted?, let actual?):
                if described {
                    var lines = ["\(label): differs from the description"]
                    for difference in ValueDiff.differences(wanted, actual) {
                        var line = "    \(difference.path.isEmpty ? "value" : difference.path): expected \(difference.old), store has \(difference.new)"
                        if let previous {
                            let was = ValueDiff.differences(previous, actual).first { $0.path == difference.path }?.old
                            if let was, was != difference.old { line += " (was \(was))" }
                        }
                        lines.append(line + notes.note(for: difference))
                    }
                    problems.append(lines.joined(separator: "\n"))
                } else {
                    var lines = ["\(label): updated, but the description does not change it"]
                    for difference in ValueDiff.differences(wanted, actual) {
                        lines.append("    \(difference.path.isEmpty ? "value" : difference.path): \(difference.old) → \(difference.new)" + notes.note(for: difference))
                    }
                    problems.append(lines.joined(separator: "\n"))
                }
            case (nil, nil):
                break
            }
        }
        return problems
    }

    /// Why a row nobody removed may be gone: the table's cascading relations.
    private func cascadeHint<E: Entity>(_ table: Table<E>) -> String {
        let cascades = table.relations.filter { $0.deleteRule == .cascade }
        guard !cascades.isEmpty else { return "" }
        let names = cascades.map { "'\($0.table).\($0.field)' cascades deletes from \($0.targetTable)" }
        return " (a delete rule? \(names.joined(separator: "; ")))"
    }

    /// A stable order for IDs in messages: by their description.
    static func order<ID>(_ left: ID, _ right: ID) -> Bool {
        ValueDiff.describe(left) < ValueDiff.describe(right)
    }
}

/// What a failure message says about a field beyond its values: the relation it holds
/// and the indexes that read it, so a reader sees an index-visible or reference change.
struct FieldNotes {
    private var notes: [String: [String]] = [:]
    private var relationFields: Set<String> = []

    init<E: Entity>(table: Table<E>) {
        for relation in table.relations {
            notes[relation.field, default: []].append("reference to \(relation.targetTable), on delete \(relation.deleteRule)")
            relationFields.insert(relation.field)
        }
        for index in table.indexDescriptions where !relationFields.contains(index.field) || index.name != index.field {
            notes[index.field, default: []].append("\(index.kind) index '\(index.name)'")
        }
    }

    func note(for difference: FieldDifference) -> String {
        guard let found = notes[difference.path], !found.isEmpty else { return "" }
        var parts = found
        if relationFields.contains(difference.path), difference.new == "nil" || difference.new == "null" {
            parts.append("nullified")
        }
        return "  [\(parts.joined(separator: "; "))]"
    }
}
