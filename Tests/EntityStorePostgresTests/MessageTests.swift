#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// Messages that say what they found.
@Suite("Messages about PostgreSQL stores", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn, .serialized)
struct PostgresMessageTests {
    @Test("a date column holding no finite date: the error says what it holds", arguments: ["NaN", "Infinity", "-1e400"])
    func nonFiniteDate(_ stored: String) async throws {
        let target = try await TestServer.target("nan")
        defer { Task { await TestServer.drop(target) } }
        try await readingStore().snapshot(to: target)
        _ = try await TestServer.rows(target, "UPDATE \(SQL.qualified(target.schema, "readings")) SET written = $1::numeric WHERE id = 1", [.text(stored)])
        // PostgreSQL prints -1e400 as its 401 digits: the message shows the first 40 characters.
        let shown = stored == "-1e400" ? "-1" + String(repeating: "0", count: 38) + "…" : stored

        let typed = try EntityStore { readings }
        let typedError = await #expect(throws: PostgresStoreError.self) { try await typed.restore(from: target) }
        let typedMessage = typedError?.description ?? ""
        #expect(typedMessage.contains("column 'written': expected a date (exact seconds), found a non-finite date (\(shown))"), "\(typedMessage)")
        #expect(!typedMessage.contains("found date"), "\(typedMessage)")

        let dynamicError = await #expect(throws: PostgresStoreError.self) { try await EntityStore.restoringDynamic(from: target) }
        let dynamicMessage = dynamicError?.description ?? ""
        #expect(dynamicMessage.contains("column 'written' holds a non-finite date (\(shown))"), "\(dynamicMessage)")
    }

    @Test("entity-store inspect: an empty change log says so, not a reversed range")
    func inspectChangeLog() async throws {
        let target = try await TestServer.target("log")
        defer { Task { await TestServer.drop(target) } }
        let store = try readingStore()
        try await store.snapshot(to: target)
        let tool = try product("entity-store")
        let address = try await url(of: target)
        let fresh = try Child(tool, ["inspect", address])
        #expect(try await fresh.finish() == 0, "\(fresh.text)")
        #expect(fresh.text.contains("app schema version 0, change log empty, head 1\n"), "\(fresh.text)")

        // One change pushed: the log holds position 2.
        let sync = PostgresSync(store: store, target: target)
        try await sync.open()
        try store.write { tx in _ = try tx[readings].update(1) { $0.note = "changed" } }
        try await sync.push()
        await sync.close()
        let changed = try Child(tool, ["inspect", address])
        #expect(try await changed.finish() == 0, "\(changed.text)")
        #expect(changed.text.contains("app schema version 0, change log positions 2...2\n"), "\(changed.text)")
    }

    @Test("a certificate that verify-ca or verify-full cannot verify: the error names the mode asked for",
          arguments: [PostgresTarget.TLSMode.verifyCA, .verifyFull])
    func unverifiedCertificate(_ mode: PostgresTarget.TLSMode) async throws {
        var target = try await TestServer.target()
        target.tls = mode
        target.rootCertificate = FileManager.default.temporaryDirectory.appendingPathComponent("no-root-\(UUID().uuidString).crt").path
        let error = await #expect(throws: PostgresStoreError.self) { try await PostgresStore.metadata(of: target) }
        let message = error?.description ?? ""
        #expect(message.contains("sslmode=\(mode.rawValue) "), "\(message)")
    }
}
#endif
