import EntityStore
import EntityStoreTestSupport
import Foundation
import StoreCore

/// Random writes to the library tables: inserts, updates and removes (cascading).
func randomWrite(_ store: EntityStore, random: inout SplitMix64, nextID: Int) throws {
    let choice = random.next() % 10
    try store.write { tx in
        switch choice {
        case 0..<4:
            let author = Int(random.next() % 6) + 1
            if tx[authors].view.find(author) == nil { try tx[authors].insert(Author(id: author, name: "A\(author)")) }
            try tx[books].insert(Book(id: "n\(nextID)", title: "T\(nextID)", authorID: author, year: 1900 + nextID % 100, editorID: nil))
        case 4..<8:
            if let id = tx[books].view.ids.randomElement(using: &random) {
                _ = try tx[books].update(id) { $0.year += 1; $0.title += "+" }
            }
        case 8:
            if let id = tx[books].view.ids.randomElement(using: &random) { _ = try tx[books].remove(id) }
        default:
            if let id = tx[authors].view.ids.randomElement(using: &random) { _ = try tx[authors].remove(id) }
        }
    }
}


/// Every published state by revision, recorded by an observer: once every delivery is
/// done (all writers joined), it holds each state a save may report.
final class PublishedStates: Sendable {
    private let states = Lock<[UInt64: EntityState]>([:])

    init(_ store: EntityStore) {
        let initial = store.state
        states.withLock { $0[initial.revision] = initial }
    }

    func record(_ state: EntityState) { states.withLock { $0[state.revision] = state } }
    subscript(revision: UInt64) -> EntityState? { states.withLock { $0[revision] } }
}

extension PublishedStates {
    /// Whether `values` could have been seen in this order by something following the
    /// store: each equals `read` of a published state, at revisions that never go back.
    func isMonotone<V: Equatable>(_ values: [V], from first: UInt64, to last: UInt64, read: (EntityState) -> V) -> Bool {
        var revision = first
        for value in values {
            while revision <= last, self[revision].map(read) != value { revision += 1 }
            if revision > last { return false }
        }
        return true
    }
}
