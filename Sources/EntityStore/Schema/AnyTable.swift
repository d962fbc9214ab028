import HashTreeCollections
/// A table declaration with its entity type erased, so a ``Schema`` can list tables of
/// different types. `Table<E>` is the only conforming type.
public protocol AnyTable: Sendable {
    /// The table's name.
    var name: String { get }
    /// The Swift name of the entity type (`"Book"`).
    var entityTypeName: String { get }
    /// Every declared index: name, kind and field.
    var indexDescriptions: [IndexDescription] { get }
    /// Every declared relation.
    var relations: [RelationSpec] { get }
}

/// An index as tools and snapshots see it.
public struct IndexDescription: Sendable, Hashable, Codable {
    /// The index's name within its table.
    public let name: String
    /// Unique, grouped or ordered.
    public let kind: IndexKind
    /// The field path it reads.
    public let field: String

    /// An index description.
    public init(name: String, kind: IndexKind, field: String) {
        self.name = name
        self.kind = kind
        self.field = field
    }
}

/// The internal, type-erased operations the store needs on every table.
protocol TableOperations: AnyTable {
    var relationRules: [any RelationRule] { get }
    func makeStorage() -> any AnyTableStorage
    /// Deletes the row `id` (an `E.ID`) without running relation rules; reports whether it existed.
    func deleteRow(_ id: any Hashable & Sendable, in transaction: Transaction) throws(EntityStoreError) -> Bool
    /// Whether the row `id` exists.
    func rowExists(_ id: any Hashable & Sendable, in state: EntityState) -> Bool
    /// The net changes `tracker` recorded for this table, read from `state`; nil if none.
    func changes(of tracker: any AnyChangeTracker, in state: EntityState) -> (any AnyTableChanges)?
}

extension Table: TableOperations {
    /// The Swift name of `E`.
    public var entityTypeName: String { String(describing: E.self) }

    /// Every declared index, implicit ones included.
    public var indexDescriptions: [IndexDescription] {
        indexes.map { IndexDescription(name: $0.name, kind: $0.kind, field: $0.field) }
    }

    func makeStorage() -> any AnyTableStorage { TableStorage(descriptor: self) }

    func changes(of tracker: any AnyChangeTracker, in state: EntityState) -> (any AnyTableChanges)? {
        // Through the closure built where the table was declared, specialized for `E`.
        bulk.changes(tracker, state, name)
    }

    func deleteRow(_ id: any Hashable & Sendable, in transaction: Transaction) throws(EntityStoreError) -> Bool {
        guard let id = id as? E.ID else { return false }
        return try TableWriter<E>(transaction: transaction, name: name).deleteWithoutRules(id)
    }

    func rowExists(_ id: any Hashable & Sendable, in state: EntityState) -> Bool {
        guard let id = id as? E.ID else { return false }
        return state.storage(named: name, as: E.self)?.rows[id] != nil
    }
}
