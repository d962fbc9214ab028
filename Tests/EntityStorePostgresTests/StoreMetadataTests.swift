#if PostgreSQL
import EntityStore
import EntityStorePostgres
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

@Suite("One metadata model for both back ends", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct StoreMetadataTests {
    @Test("a store in PostgreSQL and its snapshot file describe the same tables, columns, indexes and relations")
    func sameModel() async throws {
        let target = try await TestServer.target("metadata")
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { everything; customers; orders }
        try store.write { tx in
            try tx[everything].insert(contentsOf: (1...5).map(sampleEverything))
            try tx[customers].insert(Customer(id: "c1", name: "Ann", region: "north"))
            try tx[orders].insert(Order(id: 1, customerID: "c1", total: 9.5, placed: Date(timeIntervalSince1970: 0)))
        }
        try await store.snapshot(to: target)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pg-metadata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("store.sqlite").path
        try store.snapshot(to: file)

        let server = try await PostgresStore.metadata(of: target)
        let local = try Snapshot.metadata(at: file)
        #expect(server.tables == local.tables)
        #expect(server.formatVersion == local.formatVersion && server.appSchemaVersion == local.appSchemaVersion)
        #expect(server.table(named: "orders")?.columns.first?.name == "id")
        #expect(try server.dynamicSchema().tables.map(\.name) == local.dynamicSchema().tables.map(\.name))
    }
}
#endif
