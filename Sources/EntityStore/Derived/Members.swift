import HashTreeCollections
import StoreCore

/// The members of a membership-based derived query, ordered by `Position`, updated per
/// changed row in O(log k).
final class Members<E: Entity, Position: Comparable & Sendable>: Sendable {
    private struct Inner: Sendable {
        var ordered = SortedMap<Position, E.ID>()
        var positions: [E.ID: Position] = [:]
    }

    private let inner = Lock(Inner())

    func insert(_ id: E.ID, at position: Position) {
        inner.withLock { inner in
            inner.ordered.updateValue(id, forKey: position)
            inner.positions[id] = position
        }
    }

    /// Removes `id`; returns whether it was a member.
    @discardableResult
    func remove(_ id: E.ID) -> Bool {
        inner.withLock { inner in
            guard let position = inner.positions.removeValue(forKey: id) else { return false }
            inner.ordered.removeValue(forKey: position)
            return true
        }
    }

    func removeAll() {
        inner.withLock { $0 = Inner() }
    }

    /// The members' current entities, in order. O(k).
    func values(in view: TableView<E>) -> [E] {
        inner.withLock { $0.ordered.compactMap { view.find($0.value) } }
    }
}
