@testable import EntityStoreCommands
import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

@Suite("ndjson export directories")
struct ExportDirectoryTests {
    /// Where the file system cannot exchange two directories, the previous export is
    /// renamed aside, the new one renamed in, and the previous one deleted.
    @Test func withoutAnAtomicExchangeAPreviousExportIsStillReplaced() throws {
        try withScratch { scratch in
            let output = try OutputPath(scratch.path("out") + "/", isDirectory: true)
            let first = [ExportDirectory.TableExport(name: "a", fields: [], records: [DynamicRecord(id: .integer(1))])]
            let second = [ExportDirectory.TableExport(name: "b", fields: ["n"], records: [DynamicRecord(id: .string("x"), fields: ["n": .integer(2)])])]
            try ExportDirectory.write(first, to: output, force: false)
            #expect(scratch.contents("out") == [".entity-store-export", "a.ndjson"])
            var exchanges = 0
            try ExportDirectory.write(second, to: output, force: true) { _, _ throws(SystemError) in
                exchanges += 1
                return false
            }
            #expect(exchanges == 1)
            #expect(scratch.contents("out") == [".entity-store-export", "b.ndjson"])
            #expect(String(decoding: try scratch.read("out/b.ndjson"), as: UTF8.self) == "{\"id\":\"x\",\"n\":2}\n")
            expectNoLeftovers(scratch, expected: ["out"])
        }
    }

    @Test func theMarkerIsRecognizedByItsFirstLine() throws {
        try withScratch { scratch in
            try scratch.write("fake/.entity-store-export", "something else\n")
            try scratch.write("fake/a.ndjson", "{}\n")
            let output = try OutputPath(scratch.path("fake"), isDirectory: true)
            #expect(throws: CommandFailure.self) { try ExportDirectory.check(output, force: true) }
            try scratch.write("fake/.entity-store-export", ExportDirectory.markerText)
            #expect(try ExportDirectory.check(output, force: true) != nil)
        }
    }
}
