import EntityStore

/// What a stored store's metadata tables say, read without any Swift entity type:
/// versions, tables, columns, indexes and relations. Both back ends read it (a snapshot
/// file's with `Snapshot.metadata(at:)`, a PostgreSQL schema's with
/// `PostgresStore.metadata(of:)`); the tables are the same in both (docs/SnapshotFormat.md).
public struct StoreMetadata: Sendable, Equatable {
    /// The snapshot format version the store follows.
    public let formatVersion: Int
    /// The app schema version recorded by the writer (0 if none).
    public let appSchemaVersion: Int
    /// Every fact in `entitystore_meta` by key (`library`, `created_at`, ...).
    public let facts: [String: String]
    /// The tables, in position order.
    public let tables: [Table]

    /// One stored table.
    public struct Table: Sendable, Equatable {
        /// The table's name (also its SQL table's name).
        public let name: String
        /// The Swift type that wrote it (`"DynamicRecord"` for dynamic tables).
        public let entityType: String
        /// The kind of its IDs (`null` while a dynamic table is empty).
        public let idKind: ColumnKind
        /// Rows recorded by the writer.
        public let rowCount: Int
        /// Its columns as the metadata lists them, in position order, `id` first.
        public let columns: [Column]
        /// Declared indexes.
        public let indexes: [IndexDescription]
        /// Declared relations.
        public let relations: [RelationSpec]

        /// The columns that hold record fields, in order: all but `id` and the format's
        /// hidden ``NullMeaning/absentFieldsColumn``. O(columns).
        public var fields: [Column] { columns.filter { $0.name != "id" && $0.name != NullMeaning.absentFieldsColumn } }
    }

    /// One column of a stored table.
    public struct Column: Sendable, Equatable {
        /// The field name.
        public let name: String
        /// How its values are stored.
        public let kind: ColumnKind
        /// Whether some rows have no value.
        public let nullable: Bool
        /// What SQL `NULL` means in the column (format 3; earlier formats: `absent`).
        public let nulls: NullMeaning

        package init(name: String, kind: ColumnKind, nullable: Bool, nulls: NullMeaning = .absent) {
            (self.name, self.kind, self.nullable, self.nulls) = (name, kind, nullable, nulls)
        }
    }

    package init(formatVersion: Int, appSchemaVersion: Int, facts: [String: String], tables: [Table]) {
        (self.formatVersion, self.appSchemaVersion, self.facts, self.tables) = (formatVersion, appSchemaVersion, facts, tables)
    }

    /// The table named `name`, if present. O(tables).
    public func table(named name: String) -> Table? { tables.first { $0.name == name } }

    /// The fields of each table whose column kind is `date`: a dynamic record holds a date
    /// as its text, so a writer told these keeps them dates. O(columns).
    package var dateFields: [String: Set<String>] {
        Dictionary(tables.map { ($0.name, Set($0.fields.filter { $0.kind == .date }.map(\.name))) }, uniquingKeysWith: { $0.union($1) })
    }

    /// The dynamic-record schema mirroring these tables, their indexes and relations: what
    /// a restore without Swift types declares. O(tables + indexes + relations).
    /// - Throws: `EntityStoreError.invalidSchema` when a relation targets a table the
    ///   metadata lacks, or the tables do not make a schema.
    public func dynamicSchema() throws -> Schema {
        try dynamicSchema { relation in
            EntityStoreError.invalidSchema("'\(relation.table).\(relation.field)' references table '\(relation.targetTable)', which the store lacks")
        }
    }

    /// ``dynamicSchema()``, throwing `missingTarget(relation)` for a relation whose target
    /// table the metadata lacks: each back end names that problem in its own error.
    package func dynamicSchema(missingTarget: (RelationSpec) -> any Error) throws -> Schema {
        var declared: [String: DynamicTable] = [:]
        for stored in tables {
            var table = DynamicTable(stored.name)
            // A relation declares its own reverse index (keyed by record ID), below.
            let relationFields = Set(stored.relations.map(\.field))
            for index in stored.indexes where !(index.kind == .grouped && index.name == index.field && relationFields.contains(index.field)) {
                let field = index.field
                table = table.index(index.kind, named: index.name, field: field) { $0[field: field] }
            }
            declared[stored.name] = table
        }
        var result: [any AnyTable] = []
        for stored in tables {
            guard var table = declared[stored.name] else { continue }
            for relation in stored.relations {
                guard let target = declared[relation.targetTable] else { throw missingTarget(relation) }
                table = table.references(field: relation.field, to: target, onDelete: relation.deleteRule)
            }
            result.append(table)
        }
        return try Schema(result)
    }
}

/// The schema's table type (inside ``StoreMetadata``, `Table` names the metadata's own).
private typealias DynamicTable = Table<DynamicRecord>
