import EntityStore

/// The state a test expects after a write, described by mutating a copy of the state
/// before it (or, for a non-exhaustive assertion, of the state after it).
///
/// ```swift
/// try store.assertChanges {
///     try library.removeAuthor(1)
/// } expected: { state in
///     state[authors].remove(1)
///     state[books].remove(10)      // the cascade
///     state[books][11]?.editorID = nil  // the nullified reference
/// }
/// ```
///
/// Reads fall through to the underlying state; only the rows the description writes are
/// copied, so describing a change costs O(rows written), whatever the size of the store.
public struct ExpectedState {
    /// The state the description starts from.
    public let base: EntityState
    var tables: [String: any ExpectedTableEdits] = [:]

    /// A description starting from `base`. O(1).
    public init(base: EntityState) {
        self.base = base
    }

    /// The expected rows of `table`; mutate it to describe the change. O(1).
    public subscript<E: Entity>(table: Table<E>) -> ExpectedTable<E> {
        get { (tables[table.name] as? ExpectedTable<E>) ?? ExpectedTable(name: table.name, base: base[table]) }
        set { tables[table.name] = newValue }
    }

    /// The expected rows of the table of `E` named `E.tableName`. O(1).
    public subscript<E: Entity>(type: E.Type) -> ExpectedTable<E> {
        get { self[Table<E>()] }
        set { self[Table<E>()] = newValue }
    }

    /// The names of the tables the description wrote to.
    var editedTables: [String] { tables.filter { !$0.value.isEmpty }.keys.sorted() }
}

/// The rows one table is expected to hold: the underlying table plus the description's
/// inserts, updates and removals.
///
/// Writes do not run the schema's rules: removing an author here removes nothing else,
/// so a cascade the store runs must be described row by row, which is what makes an
/// unexpected cascade visible. Unique indexes are not enforced either.
public struct ExpectedTable<E: Entity> {
    /// The table's name.
    public let name: String
    let base: TableView<E>
    /// The rows the description wrote: a value, or nil for a removal.
    var edits: [E.ID: Edit] = [:]

    enum Edit {
        case set(E)
        case removed

        var value: E? {
            if case .set(let value) = self { value } else { nil }
        }
    }

    init(name: String, base: TableView<E>) {
        self.name = name
        self.base = base
    }

    /// The expected entity with `id`, if any; setting it inserts, replaces (keeping its
    /// place) or, with nil, removes it. O(1) expected.
    public subscript(id: E.ID) -> E? {
        get { find(id) }
        set { edits[id] = newValue.map { .set($0) } ?? .removed }
    }

    /// The expected entity with `id`, if any. O(1) expected.
    public func find(_ id: E.ID) -> E? {
        if let edit = edits[id] { return edit.value }
        return base.find(id)
    }

    /// Whether an entity with `id` is expected. O(1) expected.
    public func contains(_ id: E.ID) -> Bool { find(id) != nil }

    /// Expects `entity` to be inserted (or to replace the entity with its ID). O(1) expected.
    public mutating func insert(_ entity: E) { edits[entity.id] = .set(entity) }

    /// Expects each of `entities` to be inserted. O(k) expected.
    public mutating func insert(contentsOf entities: some Sequence<E>) {
        for entity in entities { insert(entity) }
    }

    /// Expects `entity` to be inserted or to replace the entity with its ID. O(1) expected.
    public mutating func upsert(_ entity: E) { insert(entity) }

    /// Expects the entity `id` to be changed as `body` changes it; an absent `id` is left
    /// absent (and `body` is not called). O(1) expected plus `body`.
    public mutating func update(_ id: E.ID, _ body: (inout E) throws -> Void) rethrows {
        guard var entity = find(id) else { return }
        try body(&entity)
        edits[id] = .set(entity)
    }

    /// Expects the entity `id` to be removed (only it: no delete rule runs here). O(1) expected.
    public mutating func remove(_ id: E.ID) { edits[id] = .removed }

    /// Expects the entities `ids` to be removed. O(k) expected.
    public mutating func remove(_ ids: some Sequence<E.ID>) {
        for id in ids { remove(id) }
    }

    /// Expects every entity matching `predicate` to be removed.
    /// - Complexity: O(n) over the table.
    public mutating func removeAll(where predicate: (E) throws -> Bool) rethrows {
        for entity in base where edits[entity.id] == nil {
            if try predicate(entity) { edits[entity.id] = .removed }
        }
        for (id, edit) in edits {
            if let value = edit.value, try predicate(value) { edits[id] = .removed }
        }
    }

    /// The expected number of entities. O(rows written).
    public var count: Int {
        var count = base.count
        for (id, edit) in edits {
            let existed = base.contains(id)
            switch edit {
            case .set: if !existed { count += 1 }
            case .removed: if existed { count -= 1 }
            }
        }
        return count
    }
}

/// What the comparison needs of an ``ExpectedTable`` whatever its entity type.
protocol ExpectedTableEdits {
    var isEmpty: Bool { get }
}

extension ExpectedTable: ExpectedTableEdits {
    var isEmpty: Bool { edits.isEmpty }
}
