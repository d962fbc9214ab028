import HashTreeCollections

/// A row whose fields are JSON-like values, for datasets with no Swift type: what a tool
/// that imports arbitrary JSON or reads any snapshot stores.
///
/// It encodes as one flat object: `"id"` plus every field. Declare its tables by name,
/// with indexes and relations on fields:
///
/// ```swift
/// let books = Table<DynamicRecord>("books")
///     .index(.grouped, field: "authorId")
///     .references(field: "authorId", to: authors, onDelete: .cascade)
/// ```
public struct DynamicRecord: Entity {
    /// The record's ID, an integer or a string.
    public var id: RecordID
    /// The fields other than `id`.
    public var fields: [String: JSONValue]

    /// A record with `id` and `fields` (an `"id"` entry in `fields` is ignored).
    public init(id: RecordID, fields: [String: JSONValue] = [:]) {
        self.id = id
        var fields = fields
        fields.removeValue(forKey: "id")
        self.fields = fields
    }

    /// Reads a record from a JSON object with an integer or string `"id"`.
    /// - Throws: ``DynamicRecordError`` if `value` is not an object or its `id` is missing
    ///   or not an integer or string.
    public init(_ value: JSONValue) throws(DynamicRecordError) {
        guard case let .object(object) = value else { throw .notAnObject }
        guard let idValue = object["id"] else { throw .missingID }
        guard let id = RecordID(idValue) else { throw .invalidID(idValue) }
        self.init(id: id, fields: object)
    }

    /// The record as one JSON object, `"id"` included.
    public var jsonValue: JSONValue {
        var object = fields
        object["id"] = id.jsonValue
        return .object(object)
    }

    /// The field `name`, or nil if absent. `"id"` reads the ID.
    public subscript(field name: String) -> JSONValue? {
        name == "id" ? id.jsonValue : fields[name]
    }

    /// `"records"`; dynamic tables are normally named explicitly.
    public static var tableName: String { "records" }

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes a flat object with an `"id"`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        id = try container.decode(RecordID.self, forKey: Key("id"))
        var fields: [String: JSONValue] = [:]
        for key in container.allKeys where key.stringValue != "id" {
            fields[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
        }
        self.fields = fields
    }

    /// Encodes a flat object: `"id"` then the fields in key order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: Key("id"))
        for name in fields.keys.sorted() {
            try container.encode(fields[name], forKey: Key(name))
        }
    }
}

/// Why a JSON value is not a dynamic record.
public enum DynamicRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value is not a JSON object.
    case notAnObject
    /// The object has no `"id"`.
    case missingID
    /// The `"id"` is neither an integer nor a string.
    case invalidID(JSONValue)

    public var description: String {
        switch self {
        case .notAnObject: return "a record must be a JSON object"
        case .missingID: return "the record has no \"id\""
        case let .invalidID(value): return "the record's \"id\" must be an integer or a string, not \(value.serialized())"
        }
    }
}

extension Table where E == DynamicRecord {
    /// Declares an index on the field `field` of dynamic records; records without the
    /// field are not indexed. The index is named after the field.
    public func index(_ kind: IndexKind, field: String) -> Table {
        index(kind, named: field, field: field) { $0.fields[field] }
    }

    /// Declares that the field `field` holds the ID of a record of `target`; `.nullify`
    /// sets the field to `null`.
    public func references(field: String, to target: Table<DynamicRecord>, onDelete rule: DeleteRule = .none) -> Table {
        references(
            field: field, to: target, onDelete: rule,
            reference: { record in record.fields[field].flatMap(RecordID.init) },
            nullify: { record in record.fields[field] = .null })
    }
}

extension Query where E == DynamicRecord {
    /// Keeps records whose field `field` equals `value` (`"id"` compares the ID), using
    /// an index on the field when one is declared.
    public func `where`(field: String, equals value: JSONValue) -> Query {
        adding(Condition(
            description: "\(field) = \(value.serialized())",
            matches: { $0[field: field] == value },
            candidates: { storage in
                if field == "id" {
                    guard let id = RecordID(value) else { return [] }
                    return storage.rows[id] == nil ? [] : [id]
                }
                let positions = storage.indexPositions(forField: field)
                // Relation fields are indexed by record ID rather than by JSON value.
                return storage.idsEqual(value, usingIndexesAt: positions)
                    ?? RecordID(value).flatMap { storage.idsEqual($0, usingIndexesAt: positions) }
            }))
    }
}
