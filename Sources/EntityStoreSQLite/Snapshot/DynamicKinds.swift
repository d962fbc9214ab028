import EntityStore

/// The column kind of every field of a dynamic table, decided before writing: a field
/// whose values all share one JSON scalar kind gets that kind; a field with mixed kinds,
/// explicit nulls, or nested values is stored as JSON text, so every value (and the
/// difference between `null` and an absent field) survives exactly.
struct DynamicKinds {
    private(set) var kinds: [String: ColumnKind] = [:]

    init(rows: some Sequence<DynamicRecord>) {
        var seen: [String: ColumnKind] = [:]
        var mixed: Set<String> = []
        for record in rows {
            for (name, value) in record.fields where !mixed.contains(name) {
                let kind = Self.kind(of: value)
                if let previous = seen[name] {
                    if previous != kind { mixed.insert(name) }
                } else {
                    seen[name] = kind
                }
            }
        }
        for (name, kind) in seen { kinds[name] = mixed.contains(name) ? .json : kind }
    }

    init(kinds: [String: ColumnKind]) {
        self.kinds = kinds
    }

    /// `null` has no scalar column kind of its own: it forces JSON.
    private static func kind(of value: JSONValue) -> ColumnKind {
        switch value {
        case .null, .array, .object: return .json
        case .bool: return .bool
        case .integer: return .integer
        case .double: return .double
        case .string: return .string
        }
    }

    /// The record as named column values; absent fields are omitted (NULL).
    func fields(of record: DynamicRecord) -> [(name: String, value: EncodedValue)] {
        var fields: [(name: String, value: EncodedValue)] = [("id", Self.encodeID(record.id))]
        fields.reserveCapacity(record.fields.count + 1)
        for (name, value) in record.fields {
            if kinds[name] == .json {
                fields.append((name, EncodedValue(value: .text(value.serialized()), kind: .json)))
            } else {
                fields.append((name, RowEncoder.encode(value)))
            }
        }
        return fields
    }

    static func encodeID(_ id: RecordID) -> EncodedValue {
        switch id {
        case let .integer(value): return EncodedValue(value: .integer(value), kind: .integer)
        case let .string(value): return EncodedValue(value: .text(value), kind: .string)
        }
    }
}
