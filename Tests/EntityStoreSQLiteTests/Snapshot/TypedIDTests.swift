import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// A typed ID in the style of `Tagged`: a wrapper that encodes as its raw value.
struct UserID: Hashable, Codable, Sendable, CustomStringConvertible {
    let rawValue: Int

    init(_ rawValue: Int) { self.rawValue = rawValue }

    init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    var description: String { "user-\(rawValue)" }
}

struct User: Entity {
    var id: UserID
    var name: String
    var managerID: UserID?
}

@Suite("Typed wrapper IDs")
struct TypedIDTests {
    let users = Table<User>("users")
        .grouped(\.managerID)

    @Test("a wrapper ID keys a table, indexes and a snapshot as its raw integer")
    func wrapperIDsRoundTrip() throws {
        let (directory, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try EntityStore { users }
        try store.write { tx in
            try tx[users].insert(User(id: UserID(1), name: "Ada", managerID: nil))
            try tx[users].insert(User(id: UserID(2), name: "Grace", managerID: UserID(1)))
            try tx[users].insert(User(id: UserID(3), name: "Edsger", managerID: UserID(1)))
        }
        #expect(store.state[users].find(UserID(2))?.name == "Grace")
        #expect(store.state[users].query().where(\.managerID, equals: UserID(1)).ids == [UserID(2), UserID(3)])
        #expect(throws: EntityStoreError.duplicateID(table: "users", id: "user-1")) {
            try store.write { tx in try tx[users].insert(User(id: UserID(1), name: "again", managerID: nil)) }
        }

        try store.snapshot(to: path)
        let metadata = try Snapshot.metadata(at: path)
        #expect(metadata.table(named: "users")?.idKind == .integer)
        #expect(metadata.table(named: "users")?.columns.first { $0.name == "managerID" }?.kind == .integer)

        let restored = try EntityStore { users }
        try restored.restore(from: path)
        for user in store.state[users] { #expect(restored.state[users].find(user.id) == user) }
        #expect(restored.state[users].filter(\.managerID, equals: UserID(1)).count == 2)
    }
}
