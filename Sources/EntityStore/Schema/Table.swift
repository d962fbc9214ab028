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
    /// Whole-table loops compiled for `E` where the table is declared; see ``BulkOperations``.
    package let bulk: BulkOperations<E>

    /// A table of `E` named `name` (by default `E.tableName`).
    @inlinable
    public init(_ name: String = E.tableName) {
        self.init(name: name, bulk: BulkOperations())
    }

    @usableFromInline
    init(name: String, bulk: BulkOperations<E>) {
        self.name = name
        self.bulk = bulk
    }

    // MARK: Indexes

    /// Adds an index; a declared index replaces an implicit one on the same field.
    @usableFromInline
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
    /// - Parameters:
    ///   - keyPath: the field.
    ///   - name: the index name; by default the field path (`"isbn"`).
    /// - Complexity: the index costs O(1) expected per write and per lookup.
    @inlinable
    public func unique<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, name: String? = nil) -> Table {
        let field = fieldPath(of: keyPath), indexName = name ?? field
        return adding(.typed(name: indexName, kind: .unique, field: field, isImplicit: false, keyPath: KeyPathKey(declaring: keyPath)) {
            UniqueIndex<E, Key>(name: indexName, key: fieldReader(keyPath))
        })
    }

    /// Declares a unique index on an optional field; entities whose key is `nil` are not indexed.
    @inlinable
    public func unique<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key?> & Sendable, name: String? = nil) -> Table {
        let field = fieldPath(of: keyPath), indexName = name ?? field
        return adding(.typed(name: indexName, kind: .unique, field: field, isImplicit: false, keyPath: KeyPathKey(declaring: keyPath)) {
            UniqueIndex<E, Key>(name: indexName, key: fieldReader(keyPath))
        })
    }

    /// Declares a grouped index (one key, many entities), e.g. books by author.
    /// - Complexity: O(log g) per write, where g is the size of the key's group.
    @inlinable
    public func grouped<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, name: String? = nil) -> Table {
        adding(Self.groupedSpec(keyPath, name: name, isImplicit: false))
    }

    /// Declares a grouped index on an optional field; entities whose key is `nil` are not indexed.
    @inlinable
    public func grouped<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key?> & Sendable, name: String? = nil) -> Table {
        adding(Self.groupedSpec(keyPath, name: name, isImplicit: false))
    }

    /// Declares an ordered index on a comparable field: range queries, top-k, sorted iteration.
    /// - Complexity: O(log n) per write (binary search in a B-tree, never a re-sort).
    @inlinable
    public func ordered<Key: Comparable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, name: String? = nil) -> Table {
        let field = fieldPath(of: keyPath), indexName = name ?? field
        return adding(.typed(name: indexName, kind: .ordered, field: field, isImplicit: false, keyPath: KeyPathKey(declaring: keyPath)) {
            OrderedIndex<E, Key>(name: indexName, key: fieldReader(keyPath), keyInPlace: fieldReaderInPlace(keyPath))
        })
    }

    /// Declares an ordered index on an optional field; entities whose key is `nil` are not indexed.
    @inlinable
    public func ordered<Key: Comparable & Sendable>(_ keyPath: any KeyPath<E, Key?> & Sendable, name: String? = nil) -> Table {
        let field = fieldPath(of: keyPath), indexName = name ?? field
        return adding(.typed(name: indexName, kind: .ordered, field: field, isImplicit: false, keyPath: KeyPathKey(declaring: keyPath)) {
            OrderedIndex<E, Key>(name: indexName, key: fieldReader(keyPath), keyInPlace: fieldReaderInPlace(keyPath))
        })
    }

    @inlinable
    static func groupedSpec<Key: Hashable & Sendable>(
        _ keyPath: any KeyPath<E, Key> & Sendable, name: String?, isImplicit: Bool
    ) -> IndexSpec<E> {
        let field = fieldPath(of: keyPath), indexName = name ?? field
        return .typed(name: indexName, kind: .grouped, field: field, isImplicit: isImplicit, keyPath: KeyPathKey(declaring: keyPath)) {
            GroupedIndex<E, Key>(name: indexName, key: fieldReader(keyPath), keyInPlace: fieldReaderInPlace(keyPath))
        }
    }

    @inlinable
    static func groupedSpec<Key: Hashable & Sendable>(
        _ keyPath: any KeyPath<E, Key?> & Sendable, name: String?, isImplicit: Bool
    ) -> IndexSpec<E> {
        let field = fieldPath(of: keyPath), indexName = name ?? field
        return .typed(name: indexName, kind: .grouped, field: field, isImplicit: isImplicit, keyPath: KeyPathKey(declaring: keyPath)) {
            GroupedIndex<E, Key>(name: indexName, key: fieldReader(keyPath), keyInPlace: fieldReaderInPlace(keyPath))
        }
    }

    /// Declares an index whose key is computed from the entity (dynamic-record fields,
    /// derived keys). `field` names what it reads, for snapshots and tools.
    @inlinable
    public func index<Key: Hashable & Comparable & Sendable>(
        _ kind: IndexKind, named name: String, field: String, key: @escaping @Sendable (E) -> Key?
    ) -> Table {
        switch kind {
        case .unique:
            return adding(.typed(name: name, kind: kind, field: field, isImplicit: false, keyPath: nil) { UniqueIndex(name: name, key: key) })
        case .grouped:
            return adding(.typed(name: name, kind: kind, field: field, isImplicit: false, keyPath: nil) { GroupedIndex(name: name, key: key) })
        case .ordered:
            return adding(.typed(name: name, kind: kind, field: field, isImplicit: false, keyPath: nil) { OrderedIndex(name: name, key: key) })
        }
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
                reverseIndexName: field, reference: fieldReader(keyPath), nullify: nil),
            reverseIndex: Self.groupedSpec(keyPath, name: nil, isImplicit: true))
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
                reverseIndexName: field, reference: fieldReader(keyPath),
                nullify: { $0[keyPath: keyPath] = nil }),
            reverseIndex: Self.groupedSpec(keyPath, name: nil, isImplicit: true))
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
            reverseIndex: .typed(name: field, kind: .grouped, field: field, isImplicit: true, keyPath: nil) {
                GroupedIndex(name: field, key: reference)
            })
    }

    private func addingRelation<T: Entity>(_ relation: Relation<E, T>, reverseIndex: IndexSpec<E>) -> Table {
        var copy = self
        let hasGroupedIndex = indexes.contains { $0.kind == .grouped && $0.name == relation.reverseIndexName }
        if !hasGroupedIndex {
            copy.indexes.append(reverseIndex.implicit())
        }
        copy.relations.append(RelationSpec(
            table: name, field: relation.field, targetTable: relation.targetTable, deleteRule: relation.deleteRule))
        copy.relationRules.append(relation)
        return copy
    }
}
