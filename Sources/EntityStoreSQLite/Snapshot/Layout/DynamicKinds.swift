import EntityStore
import EntityStoreCodec

/// The columns of a dynamic table, decided before writing: each field's kind, what SQL
/// `NULL` means in its column, and the column order.
///
/// A field whose non-null values share one scalar kind keeps that kind's column (INTEGER,
/// REAL, TEXT, or 0/1 for booleans; integers and doubles together a `number` column), with
/// `NULL` for `null`, so SQL on the file sees real
/// numbers and strings. Whether `NULL` then means `null`, a missing field, or either
/// (told apart per row by the hidden ``NullMeaning/absentFieldsColumn``) is recorded per
/// column (``NullMeaning``). Fields with values of several kinds, or nested values, are
/// JSON text, which spells `null` itself. Fields named as dates are `date` columns: no
/// JSON kind tells a date's text from a string.
struct DynamicKinds {
    private(set) var kinds: [String: ColumnKind] = [:]
    private(set) var nulls: [String: NullMeaning] = [:]
    /// The fields in column order.
    private(set) var order: [String] = []
    /// Whether some column's `NULL` can mean either, so rows list the fields they lack.
    private var hasEither = false

    /// The columns for `rows`; fields come in `preferredOrder` (each listed field is a
    /// column, even one no record has), then the others by name; `dateFields` are dates.
    /// - Complexity: O(n × fields) for n records.
    init(rows: TableView<DynamicRecord>, preferredOrder: [String] = [], dateFields: Set<String> = []) {
        let scan = DynamicFieldScan(rows)
        for (name, field) in scan.fields {
            // Whatever its values: one that is not a date's text fails the write.
            let shared = field.sharedKind
            let kind = shared != nil && dateFields.contains(name) ? .date : shared ?? .null
            kinds[name] = kind
            // JSON text spells null itself; a scalar column's NULL needs a meaning.
            if kind == .json || !field.hasNull {
                nulls[name] = .absent
            } else {
                nulls[name] = field.count == scan.rowCount ? .null : .either
            }
        }
        // A listed field that no record has is a column of NULLs all the same (a CSV file's
        // header names its columns even when no row follows).
        var listed = Set<String>()
        let preferred = preferredOrder.filter { name in
            name != "id" && name != NullMeaning.absentFieldsColumn && listed.insert(name).inserted
        }
        for name in preferred where kinds[name] == nil {
            kinds[name] = .null
            nulls[name] = .absent
        }
        hasEither = nulls.values.contains(.either)
        order = preferred + kinds.keys.filter { !listed.contains($0) }.sorted()
    }

    /// The columns to declare before the first row, in order, with their kinds (nil for
    /// the id's, which its values set, and for a column of nulls only) and what NULL means
    /// in each: the id, the fields, and the hidden column when some column needs it.
    var columns: [(name: String, kind: ColumnKind?, nulls: NullMeaning)] {
        let fields = order.map { name in (name, kinds[name].flatMap { $0 == .null ? nil : $0 }, nulls[name] ?? .absent) }
        return [("id", nil, .absent)] + fields + (hasEither ? [(NullMeaning.absentFieldsColumn, .json, .absent)] : [])
    }

    /// The columns a snapshot file already has (incremental saves).
    init(columns: [StoreMetadata.Column]) {
        for column in columns where column.name != "id" && column.name != NullMeaning.absentFieldsColumn {
            kinds[column.name] = column.kind
            nulls[column.name] = column.nulls
            order.append(column.name)
        }
        hasEither = nulls.values.contains(.either)
    }

    /// Why a record does not fit columns decided earlier (an incremental save then
    /// writes the whole file again).
    struct Mismatch: Error {
        /// What does not fit, when a full write should say it.
        var detail: String?
    }

    /// The record as named column values in column order: the id first, missing fields
    /// left out (NULL), the hidden column when the record lacks an `either` field.
    /// - Throws: ``Mismatch`` when a value does not fit its column as decided (a value of
    ///   another kind, `null` where NULL means missing, a missing field where NULL means
    ///   `null`, or `null` in a new column); ``SnapshotError`` for a field with the hidden
    ///   column's name.
    func fields(of record: DynamicRecord) throws -> [(name: String, value: EncodedValue)] {
        if record.fields[NullMeaning.absentFieldsColumn] != nil {
            throw SnapshotError.encodingFailed(
                table: "?", detail: "record \(record.id): the field name '\(NullMeaning.absentFieldsColumn)' is reserved by the snapshot format")
        }
        var fields: [(name: String, value: EncodedValue)] = [("id", RowEncoder.encode(record.id))]
        fields.reserveCapacity(record.fields.count + 2)
        var absent: [JSONValue] = []
        for name in order {
            guard let value = record.fields[name] else {
                switch nulls[name] {
                case .either?: absent.append(.string(name))
                case .null?: throw Mismatch()
                default: break
                }
                continue
            }
            fields.append((name, try encode(value, as: name)))
        }
        // Fields the columns do not know yet (an incremental save adds a column for them).
        if record.fields.count > fields.count - 1 {
            for (name, value) in record.fields.sorted(by: { $0.key < $1.key }) where kinds[name] == nil {
                guard let kind = DynamicFieldScan.kind(of: value), kind != .json else { throw Mismatch() }
                fields.append((name, RowEncoder.encode(value)))
            }
        }
        if hasEither, !absent.isEmpty {
            fields.append((NullMeaning.absentFieldsColumn, EncodedValue(value: .text(JSONValue.array(absent).serialized()), kind: .json)))
        }
        return fields
    }

    private func encode(_ value: JSONValue, as name: String) throws -> EncodedValue {
        let kind = kinds[name]
        if kind == .json { return EncodedValue(value: .text(value.serialized()), kind: .json) }
        guard let valueKind = DynamicFieldScan.kind(of: value) else {
            guard nulls[name] != .absent else { throw Mismatch() }
            return .null
        }
        if kind == .date {
            // Written in the format's one text per instant, whichever form was read.
            guard case let .string(text) = value, let date = try? DateText.date(parsing: text),
                  let canonical = try? DateText.string(from: date)
            else {
                throw Mismatch(detail: "field '\(name)' holds \(value.serialized().prefix(80)), not a date")
            }
            return EncodedValue(value: .text(canonical), kind: .date)
        }
        guard kind == valueKind || kind == .number && (valueKind == .integer || valueKind == .double) else { throw Mismatch() }
        let encoded = RowEncoder.encode(value)
        return kind == .number ? EncodedValue(value: encoded.value, kind: .number) : encoded
    }

}
