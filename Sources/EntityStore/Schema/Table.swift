import HashTreeCollections
/// The declaration of one entity table: its name, secondary indexes and relations.
///
/// Tables are values built with chained modifiers and then listed in a ``Schema``:
///
/// ```swift
/// let authors = Table<Author>()
/// let books = Table<Book>()
///     .unique(\.isbn)
///     .ordered(\.published)
///     .references(\.authorID, to: authors, onDelete: .cascade)
/// ```
///
/// A `Table` is also the handle used to read (`state[books]`) and write (`tx[books]`).
public struct Table<E: Entity>: Sendable {
    /// The table's name, unique within a schema; snapshots store the table under it.
    public let name: String
    /// The declared secondary indexes, including those relations create implicitly.
    public private(set) var indexes: [IndexSpec<E>] = []
    /// The declared relations from this table's fields to other tables.
    public private(set) var relations: [RelationSpec] = []
    var relationRules: [any RelationRule] = []

    /// A table of `E` named `name` (by default `E.tableName`).
    public init(_ name: String = E.tableName) {
        self.name = name
    }

    // MARK: Indexes

    /// Adds an index; a declared index replaces an implicit one on the same field.
    func adding(_ spec: IndexSpec<E>) -> Table {
        var copy = self
        if let existing = copy.indexes.firstIndex(where: { $0.name == spec.name }) {
            if copy.indexes[existing].isImplicit, copy.indexes[existing].kind == spec.kind {
                copy.indexes[existing] = spec
            } else {
                copy.indexes.append(spec)  // a true duplicate: the schema reports it
            }
        } else {
            copy.indexes.append(spec)
        }
        return copy
    }

    /// Declares a unique index on a field: no two entities may share a key.
    /// - Parameter name: the index name; by default the field path (`"isbn"`).
    /// - Complexity: the index costs O(1) expected per write and per lookup.
    public func unique<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, name: String? = nil) -> Table {
        adding(Self.spec(.unique, keyPath, name: name) { name, key in UniqueIndex(name: name, key: key) })
    }

    /// Declares a unique index on an optional field; entities whose key is `nil` are not indexed.
    public func unique<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key?> & Sendable, name: String? = nil) -> Table {
        adding(Self.optionalSpec(.unique, keyPath, name: name) { name, key in UniqueIndex(name: name, key: key) })
    }

    /// Declares a grouped index (one key, many entities), e.g. books by author.
    /// - Complexity: O(log g) per write, where g is the size of the key's group.
    public func grouped<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, name: String? = nil) -> Table {
        adding(Self.spec(.grouped, keyPath, name: name) { name, key in GroupedIndex(name: name, key: key) })
    }

    /// Declares a grouped index on an optional field; entities whose key is `nil` are not indexed.
    public func grouped<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key?> & Sendable, name: String? = nil) -> Table {
        adding(Self.optionalSpec(.grouped, keyPath, name: name) { name, key in GroupedIndex(name: name, key: key) })
    }

    /// Declares an ordered index on a comparable field: range queries, top-k, sorted iteration.
    /// - Complexity: O(log n) per write (binary search in a B-tree, never a re-sort).
    public func ordered<Key: Comparable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, name: String? = nil) -> Table {
        adding(Self.spec(.ordered, keyPath, name: name) { name, key in OrderedIndex(name: name, key: key) })
    }

    /// Declares an ordered index on an optional field; entities whose key is `nil` are not indexed.
    public func ordered<Key: Comparable & Sendable>(_ keyPath: any KeyPath<E, Key?> & Sendable, name: String? = nil) -> Table {
        adding(Self.optionalSpec(.ordered, keyPath, name: name) { name, key in OrderedIndex(name: name, key: key) })
    }

    private static func spec<Key: Sendable>(
        _ kind: IndexKind, _ keyPath: any KeyPath<E, Key> & Sendable, name: String?,
        make: @escaping @Sendable (String, @escaping @Sendable (E) -> Key?) -> any EntityIndex<E>
    ) -> IndexSpec<E> {
        let field = fieldPath(of: keyPath)
        let indexName = name ?? field
        return IndexSpec(
            name: indexName, kind: kind, field: field, isImplicit: false, keyPath: KeyPathKey(keyPath: keyPath),
            makeStorage: { make(indexName, { $0[keyPath: keyPath] }) })
    }

    private static func optionalSpec<Key: Sendable>(
        _ kind: IndexKind, _ keyPath: any KeyPath<E, Key?> & Sendable, name: String?,
        make: @escaping @Sendable (String, @escaping @Sendable (E) -> Key?) -> any EntityIndex<E>
    ) -> IndexSpec<E> {
        let field = fieldPath(of: keyPath)
        let indexName = name ?? field
        return IndexSpec(
            name: indexName, kind: kind, field: field, isImplicit: false, keyPath: KeyPathKey(keyPath: keyPath),
            makeStorage: { make(indexName, { $0[keyPath: keyPath] }) })
    }

    /// Declares an index whose key is computed from the entity (dynamic-record fields,
    /// derived keys). `field` names what it reads, for snapshots and tools.
    public func index<Key: Hashable & Comparable & Sendable>(
        _ kind: IndexKind, named name: String, field: String, key: @escaping @Sendable (E) -> Key?
    ) -> Table {
        let storage: @Sendable () -> any EntityIndex<E>
        switch kind {
        case .unique: storage = { UniqueIndex(name: name, key: key) }
        case .grouped: storage = { GroupedIndex(name: name, key: key) }
        case .ordered: storage = { OrderedIndex(name: name, key: key) }
        }
        return adding(IndexSpec(name: name, kind: kind, field: field, isImplicit: false, keyPath: nil, makeStorage: storage))
    }

    // MARK: Relations

    /// Declares that `keyPath` holds the ID of an entity of `target`.
    ///
    /// The store keeps a grouped index on the field (declared or implicit) so that a
    /// delete finds its referencing rows without a scan. `.nullify` needs an optional
    /// field: use the other overload; here it is reported as an invalid schema.
    public func references<T: Entity>(
        _ keyPath: any KeyPath<E, T.ID> & Sendable, to target: Table<T>, onDelete rule: DeleteRule = .none
    ) -> Table {
        let field = fieldPath(of: keyPath)
        return addingRelation(
            Relation<E, T>(
                sourceTable: name, targetTable: target.name, field: field, deleteRule: rule,
                reverseIndexName: field, reference: { $0[keyPath: keyPath] }, nullify: nil),
            reverseIndex: Self.spec(.grouped, keyPath, name: nil) { name, key in GroupedIndex(name: name, key: key) })
    }

    /// Declares that the optional field `keyPath` holds the ID of an entity of `target`;
    /// `nil` references nothing. Supports every delete rule, including `.nullify`.
    public func references<T: Entity>(
        _ keyPath: any WritableKeyPath<E, T.ID?> & Sendable, to target: Table<T>, onDelete rule: DeleteRule = .none
    ) -> Table {
        let field = fieldPath(of: keyPath)
        return addingRelation(
            Relation<E, T>(
                sourceTable: name, targetTable: target.name, field: field, deleteRule: rule,
                reverseIndexName: field, reference: { $0[keyPath: keyPath] },
                nullify: { $0[keyPath: keyPath] = nil }),
            reverseIndex: Self.optionalSpec(.grouped, keyPath, name: nil) { name, key in GroupedIndex(name: name, key: key) })
    }

    /// Declares a relation whose reference is computed from the entity (dynamic-record
    /// fields). `nullify`, if given, clears the reference for `.nullify`.
    public func references<T: Entity>(
        field: String, to target: Table<T>, onDelete rule: DeleteRule = .none,
        reference: @escaping @Sendable (E) -> T.ID?, nullify: (@Sendable (inout E) -> Void)? = nil
    ) -> Table {
        addingRelation(
            Relation<E, T>(
                sourceTable: name, targetTable: target.name, field: field, deleteRule: rule,
                reverseIndexName: field, reference: reference, nullify: nullify),
            reverseIndex: IndexSpec(
                name: field, kind: .grouped, field: field, isImplicit: false, keyPath: nil,
                makeStorage: { GroupedIndex(name: field, key: reference) }))
    }

    private func addingRelation<T: Entity>(_ relation: Relation<E, T>, reverseIndex: IndexSpec<E>) -> Table {
        var copy = self
        let hasGroupedIndex = indexes.contains { $0.kind == .grouped && $0.name == relation.reverseIndexName }
        if !hasGroupedIndex {
            copy.indexes.append(IndexSpec(
                name: reverseIndex.name, kind: .grouped, field: reverseIndex.field, isImplicit: true,
                keyPath: reverseIndex.keyPath, makeStorage: reverseIndex.makeStorage))
        }
        copy.relations.append(RelationSpec(
            table: name, field: relation.field, targetTable: relation.targetTable, deleteRule: relation.deleteRule))
        copy.relationRules.append(relation)
        return copy
    }
}
