import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import EntityStoreTesting
import Foundation
import SnapshotFixtures
import Testing

/// The book of version 1 of an app: the year was called `published`.
struct BookV1: Entity {
    var id: Int
    var title: String
    var published: Int
}

/// Today's book, version 2.
struct BookV2: Entity {
    var id: Int
    var title: String
    var year: Int
}

let booksV1 = Table<BookV1>("books")
let booksV2 = Table<BookV2>("books").ordered(\.year)
let renameYear = AppMigration(version: 2, name: "published is year") { database in
    try database.renameColumn("published", in: "books", to: "year")
}
let today = SnapshotOptions(appSchemaVersion: 2, migrations: [renameYear])

/// A fixture recorded by version `version` of the app, in `directory`.
func recordFixture(version: Int, in directory: String) throws -> String {
    let path = directory + "/books-v\(version).sqlite"
    if version == 1 {
        let store = try EntityStore { booksV1 }
        try store.write { tx in try tx[booksV1].insert(contentsOf: [BookV1(id: 1, title: "A", published: 1974), BookV1(id: 2, title: "B", published: 2019)]) }
        try MigrationFixture.record(store, to: path, appSchemaVersion: 1)
    } else {
        let store = try EntityStore { booksV2 }
        try store.write { tx in try tx[booksV2].insert(BookV2(id: 1, title: "A", year: 1974)) }
        try MigrationFixture.record(store, to: path, appSchemaVersion: version)
    }
    return path
}

func withDirectory<R>(_ body: (String) throws -> R) throws -> R {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("MigrationFixtureTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url.path)
}

@Suite("Migration fixtures")
struct MigrationFixtureTests {
    @Test("a fixture records the same bytes for the same state")
    func deterministic() throws {
        try withDirectory { directory in
            let first = try recordFixture(version: 1, in: directory)
            let bytes = try #require(FileManager.default.contents(atPath: first))
            try FileManager.default.removeItem(atPath: first)
            let second = try recordFixture(version: 1, in: directory)
            #expect(FileManager.default.contents(atPath: second) == bytes)
        }
    }

    @Test("an older app's fixture migrates, verifies and restores into today's types; the fixture is untouched")
    func olderMigrates() throws {
        try withDirectory { directory in
            let fixture = try recordFixture(version: 1, in: directory)
            let bytes = FileManager.default.contents(atPath: fixture)
            var restored: EntityStore?
            let failures = try withRecordedFailures {
                restored = try MigrationFixture.assertMigrates(fixture, schema: try Schema { booksV2 }, options: today)
            }
            #expect(failures.isEmpty, "\(failures)")
            #expect(restored?.state[booksV2].find(2)?.year == 2019)
            #expect(FileManager.default.contents(atPath: fixture) == bytes)
        }
    }

    @Test("without the app's migration the fixture fails, at the caller's line, with the restore's reason")
    func missingMigrationFails() throws {
        try withDirectory { directory in
            let fixture = try recordFixture(version: 1, in: directory)
            var line = 0
            let failures = try withRecordedFailures {
                line = lineAfter()
                let restored = try MigrationFixture.assertMigrates(fixture, schema: try Schema { booksV2 }, options: SnapshotOptions(appSchemaVersion: 2))
                #expect(restored == nil)
            }
            let failure = try #require(failures.single())
            #expect(failure.location.line == line)
            #expect(failure.message.hasPrefix("the fixture books-v1.sqlite does not migrate: it does not restore into today's types:"), "\(failure.message)")
            #expect(failure.message.contains("year"), "\(failure.message)")
        }
    }

    @Test("a newer app's fixture is refused with the expected error, or the assertion fails")
    func newerRefused() throws {
        try withDirectory { directory in
            let fixture = try recordFixture(version: 3, in: directory)
            var failures = try withRecordedFailures {
                let refused = try MigrationFixture.assertRefused(
                    fixture, schema: try Schema { booksV2 }, options: today, with: .newerAppSchema(found: 3, supported: 2))
                #expect(refused)
            }
            #expect(failures.isEmpty, "\(failures)")
            var lines: [Int] = []
            failures = try withRecordedFailures {
                lines.append(lineAfter())
                try MigrationFixture.assertRefused(fixture, schema: try Schema { booksV2 }, options: today, with: .newerAppSchema(found: 4, supported: 2))
                lines.append(lineAfter())
                try MigrationFixture.assertRefused(
                    fixture, schema: try Schema { booksV2 }, options: SnapshotOptions(appSchemaVersion: 3, migrations: [renameYear]),
                    with: .newerAppSchema(found: 3, supported: 2))
                try MigrationFixture.assertMigrates(fixture, schema: try Schema { booksV2 }, options: today)
            }
            #expect(failures.count == 3)
            #expect(failures.first?.message.contains("it was refused with") == true, "\(failures)")
            #expect(failures.dropFirst().first?.message.contains("it was accepted") == true, "\(failures)")
            #expect(failures.last?.message.contains("written by a newer app") == true, "\(failures)")
            // Each refusal that went wrong is reported at its own call.
            #expect(failures.prefix(2).map(\.location.line) == lines, "\(failures)")
            #expect(failures.prefix(2).allSatisfy { $0.location.fileID.hasSuffix("/MigrationFixtureTests.swift") }, "\(failures)")
        }
    }

    struct Event: Entity {
        var id: Int
        var name: String
        var when: Date?
    }

    @Test("the package's own format 1 and 2 snapshots migrate, verify and restore", arguments: [1, 2])
    func olderFormats(format: Int) throws {
        try withDirectory { directory in
            let fixture = directory + "/format-\(format).sqlite"
            if format == 1 { try OldFormatSnapshots.formatOne(at: fixture) } else { try OldFormatSnapshots.formatTwo(at: fixture) }
            let failures = try withRecordedFailures {
                let dynamic = try MigrationFixture.assertMigrates(fixture, schema: nil)
                #expect(dynamic?.state.count(ofTable: format == 1 ? "events" : "flights") == (format == 1 ? 4 : 7))
                if format == 1 {
                    let typed = try MigrationFixture.assertMigrates(fixture, schema: try Schema { Table<Event>("events").ordered(\.when) })
                    #expect(typed?.state[Table<Event>("events")].find(1)?.when == Date(timeIntervalSince1970: 1_700_000_000.25))
                }
            }
            #expect(failures.isEmpty, "\(failures)")
        }
    }
}
