import EntityStore

extension StoreMetadata {
    /// The rows of the metadata tables as a back end's reader finds them, with kinds,
    /// meanings of NULL and delete rules as text: checked here, once for both back ends,
    /// and gathered into tables. The reader keeps its SQL and its own checks.
    package struct Rows {
        private var columns: [String: [Column]] = [:]
        private var indexes: [String: [IndexDescription]] = [:]
        private var relations: [String: [RelationSpec]] = [:]

        package init() {}

        /// Adds an `entitystore_columns` row (a table's rows come in position order).
        package mutating func column(table: String, name: String, kind: String, nullable: Bool, nulls: String) throws(InvalidStoredValue) {
            guard let parsed = ColumnKind(rawValue: kind) else { throw invalid(table, "column '\(name)' has the unknown kind '\(kind)'") }
            guard let meaning = NullMeaning(rawValue: nulls) else { throw invalid(table, "column '\(name)' has the unknown meaning of NULL '\(nulls)'") }
            columns[table, default: []].append(Column(name: name, kind: parsed, nullable: nullable, nulls: meaning))
        }

        /// Adds an `entitystore_indexes` row.
        package mutating func index(table: String, name: String, kind: String, field: String) throws(InvalidStoredValue) {
            guard let parsed = IndexKind(rawValue: kind) else { throw invalid(table, "index '\(name)' has the unknown kind '\(kind)'") }
            indexes[table, default: []].append(IndexDescription(name: name, kind: parsed, field: field))
        }

        /// Adds an `entitystore_relations` row.
        package mutating func relation(table: String, field: String, target: String, rule: String) throws(InvalidStoredValue) {
            guard let parsed = DeleteRule(rawValue: rule) else { throw invalid(table, "relation '\(field)' has the unknown delete rule '\(rule)'") }
            relations[table, default: []].append(RelationSpec(table: table, field: field, targetTable: target, deleteRule: parsed))
        }

        /// The table of an `entitystore_tables` row, with the rows added for it.
        package func table(name: String, entityType: String, idKind: String, rowCount: Int) throws(InvalidStoredValue) -> Table {
            guard let kind = ColumnKind(rawValue: idKind) else { throw invalid(name, "unknown id kind '\(idKind)'") }
            return Table(
                name: name, entityType: entityType, idKind: kind, rowCount: rowCount, columns: columns[name] ?? [],
                indexes: indexes[name] ?? [], relations: relations[name] ?? [])
        }
    }
}

private func invalid(_ table: String, _ detail: String) -> InvalidStoredValue { InvalidStoredValue(table: table, detail: detail) }
