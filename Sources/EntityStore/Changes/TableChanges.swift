import HashTreeCollections
/// What one commit changed in one table of `E`.
///
/// An ID appears in at most one of `inserted`, `updated` and `removed`. Within a commit
/// the net effect counts: an entity inserted and then removed by the same transaction
/// does not appear; one removed and inserted again appears as updated, even with the
/// same value (it took a new insertion position); one updated and set back to its value
/// before the commit does not appear. The same holds for the merged changes a batch of
/// writes publishes.
public struct TableChanges<E: Entity>: Sendable {
    /// IDs of entities that did not exist before the commit, in insertion order.
    public internal(set) var inserted: [E.ID] = []
    /// Entities that existed before and after the commit with a different value, with
    /// their previous value.
    public internal(set) var updated: [E.ID: E] = [:]
    /// Entities that existed before the commit and no longer do, with their last value.
    public internal(set) var removed: [E.ID: E] = [:]
    /// Updated entities that were removed and inserted again (a new insertion position),
    /// so that setting their value back does not make them unchanged.
    @usableFromInline var reordered: Set<E.ID> = []

    /// An empty change list.
    public init() {}

    /// Changes with these parts.
    @usableFromInline
    init(inserted: [E.ID], updated: [E.ID: E], removed: [E.ID: E]) {
        self.inserted = inserted
        self.updated = updated
        self.removed = removed
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && removed.isEmpty }

    /// The number of changed entities.
    public var count: Int { inserted.count + updated.count + removed.count }

    /// Every changed ID: inserted, then updated, then removed.
    public var changedIDs: [E.ID] { inserted + Array(updated.keys) + Array(removed.keys) }

    /// Whether `id` changed in any way. O(inserted count); O(1) for updates and removals.
    public func contains(_ id: E.ID) -> Bool {
        updated[id] != nil || removed[id] != nil || inserted.contains(id)
    }

    /// Combines this commit's changes with the next commit's, as one commit would have
    /// produced them. `current` reads the table after `next`.
    /// - Complexity: O(size of `next`), plus O(inserted IDs of this) once when `next`
    ///   updates or removes any entity.
    func merged(with next: TableChanges<E>, current: (E.ID) -> E?) -> TableChanges<E> {
        var result = self
        var insertedSet: Set<E.ID>?
        func wasInserted(_ id: E.ID) -> Bool {
            if insertedSet == nil { insertedSet = Set(result.inserted) }
            return insertedSet?.contains(id) ?? false
        }
        var droppedInserts = Set<E.ID>()
        result.reordered.formUnion(next.reordered)
        for id in next.inserted {
            if let old = result.removed.removeValue(forKey: id) {
                // Inserted again: a new insertion position, whatever its value.
                result.updated[id] = old
                result.reordered.insert(id)
            } else {
                result.inserted.append(id)
            }
        }
        for (id, old) in next.updated where !wasInserted(id) {
            if let original = result.updated[id] {
                // Updated by both: set back to its value before them, it did not change
                // (as when one transaction writes a value and then the original again).
                if let now = current(id), ValueIdentity.same(now, original), !result.reordered.contains(id) {
                    result.updated.removeValue(forKey: id)
                }
            } else {
                result.updated[id] = old
            }
        }
        for (id, old) in next.removed {
            result.reordered.remove(id)
            if let original = result.updated.removeValue(forKey: id) {
                result.removed[id] = original
            } else if wasInserted(id) {
                droppedInserts.insert(id)
            } else {
                result.removed[id] = old
            }
        }
        if !droppedInserts.isEmpty { result.inserted.removeAll { droppedInserts.contains($0) } }
        return result
    }
}

/// `TableChanges` with the entity type erased.
@usableFromInline
protocol AnyTableChanges: Sendable {
    var count: Int { get }
    var insertedCount: Int { get }
    var updatedCount: Int { get }
    var removedCount: Int { get }
    /// IDs written (inserted or updated), erased.
    var upsertedIDs: [any Hashable & Sendable] { get }
    /// IDs removed, erased.
    var removedIDs: [any Hashable & Sendable] { get }
    /// Calls `body` with the watch key of every changed ID (inserted, updated, removed),
    /// without building arrays of them.
    func forEachChangedKey(_ body: (WatchKey) -> Void)
    func merged(with next: any AnyTableChanges, in state: EntityState, table: String) -> any AnyTableChanges
    /// These changes as `TableChanges<T>`, nil unless `T` is their entity type: a
    /// comparison of metatypes where a cast (`as? TableChanges<T>`) asks the runtime.
    func typed<T: Entity>(as type: T.Type) -> TableChanges<T>?
}

extension TableChanges: AnyTableChanges {
    @usableFromInline var insertedCount: Int { inserted.count }
    @usableFromInline var updatedCount: Int { updated.count }
    @usableFromInline var removedCount: Int { removed.count }
    @usableFromInline var upsertedIDs: [any Hashable & Sendable] { inserted.map { $0 } + updated.keys.map { $0 } }
    @usableFromInline var removedIDs: [any Hashable & Sendable] { removed.keys.map { $0 } }

    @usableFromInline
    func typed<T: Entity>(as type: T.Type) -> TableChanges<T>? {
        // The metatypes are equal, so the two types are one type.
        T.self == E.self ? unsafeBitCast(self, to: TableChanges<T>.self) : nil
    }

    @usableFromInline
    func forEachChangedKey(_ body: (WatchKey) -> Void) {
        for id in inserted { body(WatchKey(id)) }
        for id in updated.keys { body(WatchKey(id)) }
        for id in removed.keys { body(WatchKey(id)) }
    }

    @usableFromInline
    func merged(with next: any AnyTableChanges, in state: EntityState, table: String) -> any AnyTableChanges {
        guard let next = next as? TableChanges<E> else { return self }
        let rows = state.storage(named: table, as: E.self)?.rows
        return merged(with: next) { rows?[$0]?.value }
    }
}
