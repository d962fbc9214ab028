import EntityStore

/// What the records of a dynamic table hold, field by field: the one scan both back ends
/// decide a dynamic table's columns from.
///
/// Each back end then applies its own rule for `null`: a snapshot file keeps a scalar
/// column and records what its `NULL` means (``NullMeaning``, with a hidden column where
/// it can mean either), while a PostgreSQL store makes a field that holds `null` a
/// `JSONB` column, which spells `null` itself, so there SQL `NULL` always means a missing
/// field.
package struct DynamicFieldScan {
    /// One field's values across the records.
    package struct Field {
        /// The kinds of its non-null values.
        package var kinds: Set<ColumnKind> = []
        /// Whether some record holds `null` in it.
        package var hasNull = false
        /// How many records have it.
        package var count = 0

        /// The one kind its non-null values share: theirs when they agree, `number` for
        /// integers and doubles together, `json` for any other mix; nil when it only ever
        /// holds `null`.
        package var sharedKind: ColumnKind? {
            if kinds.count == 1 { return kinds.first }
            if kinds.isEmpty { return nil }
            return kinds == [.integer, .double] ? .number : .json
        }
    }

    /// The fields by name.
    package private(set) var fields: [String: Field] = [:]
    /// How many records were read.
    package private(set) var rowCount = 0
    /// The kinds of the records' IDs (`integer`, `string`).
    package private(set) var idKinds: Set<ColumnKind> = []

    /// Reads every record once. O(n × fields) for n records.
    package init(_ records: TableView<DynamicRecord>) {
        for record in records {
            rowCount += 1
            switch record.id {
            case .integer: idKinds.insert(.integer)
            case .string: idKinds.insert(.string)
            }
            for (name, value) in record.fields {
                fields[name, default: Field()].record(Self.kind(of: value))
            }
        }
    }

    /// The kind of a non-null value; nil for `null`.
    package static func kind(of value: JSONValue) -> ColumnKind? {
        switch value {
        case .null: return nil
        case .array, .object: return .json
        case .bool: return .bool
        case .integer: return .integer
        case .double: return .double
        case .string: return .string
        }
    }
}

extension DynamicFieldScan.Field {
    fileprivate mutating func record(_ kind: ColumnKind?) {
        count += 1
        if let kind { kinds.insert(kind) } else { hasNull = true }
    }
}
