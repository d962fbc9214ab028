import HashTreeCollections

/// The declaration of one secondary index of a table of `E`.
///
/// Besides its description, a spec carries the index's operations as closures built by
/// `typed(name:kind:field:isImplicit:keyPath:make:)` where the table is declared, so
/// they are compiled for the concrete entity and key types: index maintenance in bulk
/// writes and restores runs specialized code, not generic code through an existential.
public struct IndexSpec<E: Entity>: Sendable {
    /// The index's name, unique within its table (by default the field path it indexes).
    public let name: String
    /// Unique, grouped or ordered.
    public let kind: IndexKind
    /// The field path the index reads, e.g. `"authorID"`; snapshots record it.
    public let field: String
    /// Whether the store created the index itself (the reverse map of a relation).
    public let isImplicit: Bool
    @usableFromInline let keyPath: KeyPathKey?
    @usableFromInline let makeBox: @Sendable () -> IndexBoxBase
    @usableFromInline let copyBox: @Sendable (IndexBoxBase) -> IndexBoxBase
    @usableFromInline let erased: @Sendable (IndexBoxBase) -> any EntityIndex<E>
    @usableFromInline let insert: @Sendable (IndexBoxBase, E, UInt64) -> Void
    @usableFromInline let remove: @Sendable (IndexBoxBase, E, UInt64) -> Void
    @usableFromInline let update: @Sendable (IndexBoxBase, E, E, UInt64) -> Void
    @usableFromInline let beginLoad: @Sendable (IndexBoxBase, Int) -> Void
    @usableFromInline let loadAdd: @Sendable (IndexBoxBase, LoadBatch<E>, String) throws(EntityStoreError) -> Void
    @usableFromInline let endLoad: @Sendable (IndexBoxBase) -> Void
    @usableFromInline let validateInsert: @Sendable (IndexBoxBase, E, String) throws(EntityStoreError) -> Void
    @usableFromInline let validateUpdate: @Sendable (IndexBoxBase, E, E, String) throws(EntityStoreError) -> Void

    @usableFromInline
    init(
        name: String, kind: IndexKind, field: String, isImplicit: Bool, keyPath: KeyPathKey?,
        makeBox: @escaping @Sendable () -> IndexBoxBase,
        copyBox: @escaping @Sendable (IndexBoxBase) -> IndexBoxBase,
        erased: @escaping @Sendable (IndexBoxBase) -> any EntityIndex<E>,
        insert: @escaping @Sendable (IndexBoxBase, E, UInt64) -> Void,
        remove: @escaping @Sendable (IndexBoxBase, E, UInt64) -> Void,
        update: @escaping @Sendable (IndexBoxBase, E, E, UInt64) -> Void,
        beginLoad: @escaping @Sendable (IndexBoxBase, Int) -> Void,
        loadAdd: @escaping @Sendable (IndexBoxBase, LoadBatch<E>, String) throws(EntityStoreError) -> Void,
        endLoad: @escaping @Sendable (IndexBoxBase) -> Void,
        validateInsert: @escaping @Sendable (IndexBoxBase, E, String) throws(EntityStoreError) -> Void,
        validateUpdate: @escaping @Sendable (IndexBoxBase, E, E, String) throws(EntityStoreError) -> Void
    ) {
        self.name = name
        self.kind = kind
        self.field = field
        self.isImplicit = isImplicit
        self.keyPath = keyPath
        self.makeBox = makeBox
        self.copyBox = copyBox
        self.erased = erased
        self.insert = insert
        self.remove = remove
        self.update = update
        self.beginLoad = beginLoad
        self.loadAdd = loadAdd
        self.endLoad = endLoad
        self.validateInsert = validateInsert
        self.validateUpdate = validateUpdate
    }

    /// A spec whose operations are compiled for the index type `Index`.
    ///
    /// The boxes a spec creates all hold an `Index`, and a table passes each spec only the
    /// boxes it created (same position), so the unchecked downcasts below always hold.
    @inlinable
    static func typed<Index: EntityIndex>(
        name: String, kind: IndexKind, field: String, isImplicit: Bool, keyPath: KeyPathKey?,
        make: @escaping @Sendable () -> Index
    ) -> IndexSpec where Index.Element == E {
        IndexSpec(
            name: name, kind: kind, field: field, isImplicit: isImplicit, keyPath: keyPath,
            makeBox: { IndexBox(make()) },
            copyBox: { IndexBox(unsafeDowncast($0, to: IndexBox<Index>.self).index) },
            erased: { unsafeDowncast($0, to: IndexBox<Index>.self).index },
            insert: { box, entity, sequence in
                unsafeDowncast(box, to: IndexBox<Index>.self).index.insert(entity, sequence: sequence)
            },
            remove: { box, entity, sequence in
                unsafeDowncast(box, to: IndexBox<Index>.self).index.remove(entity, sequence: sequence)
            },
            update: { box, old, new, sequence in
                unsafeDowncast(box, to: IndexBox<Index>.self).index.update(from: old, to: new, sequence: sequence)
            },
            beginLoad: { box, count in unsafeDowncast(box, to: IndexBox<Index>.self).index.beginLoad(expectedCount: count) },
            loadAdd: { (box, batch, table) throws(EntityStoreError) in
                try unsafeDowncast(box, to: IndexBox<Index>.self).index.loadAdd(batch, table: table)
            },
            endLoad: { box in unsafeDowncast(box, to: IndexBox<Index>.self).index.endLoad() },
            validateInsert: { (box, entity, table) throws(EntityStoreError) in
                try unsafeDowncast(box, to: IndexBox<Index>.self).index.validateInsert(entity, table: table)
            },
            validateUpdate: { (box, old, new, table) throws(EntityStoreError) in
                try unsafeDowncast(box, to: IndexBox<Index>.self).index.validateUpdate(from: old, to: new, table: table)
            })
    }

    /// The same index declared by the store itself (a relation's reverse map).
    func implicit() -> IndexSpec {
        IndexSpec(
            name: name, kind: kind, field: field, isImplicit: true, keyPath: keyPath, makeBox: makeBox,
            copyBox: copyBox, erased: erased, insert: insert, remove: remove, update: update,
            beginLoad: beginLoad, loadAdd: loadAdd, endLoad: endLoad,
            validateInsert: validateInsert, validateUpdate: validateUpdate)
    }
}
