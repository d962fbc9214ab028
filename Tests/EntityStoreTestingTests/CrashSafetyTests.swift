import EntityStore
// For `FileSystem.rename(_:over:)`, the library's rename that the check sees.
@testable import EntityStoreSQLite
import EntityStoreTestSupport
import EntityStoreTesting
import Foundation
import Testing

/// A save routine that removes the old file before writing the new one.
func removeThenWrite(_ store: EntityStore, to path: String) throws {
    if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
    try store.snapshot(to: path)
}

/// A save routine that keeps its snapshot up to date with its own SQL and syncs turned
/// off: fine after a process kill (the OS has the writes), lost after a power loss.
func unsyncedSave(_ store: EntityStore, to path: String) throws {
    guard FileManager.default.fileExists(atPath: path) else {
        try store.snapshot(to: path)
        return
    }
    let connection = try SQLiteConnection(path: path, mode: .readWrite)
    try connection.execute("PRAGMA synchronous = OFF")
    try connection.execute("BEGIN")
    for author in store.state[authors] {
        let name = author.name.replacingOccurrences(of: "'", with: "''")
        try connection.execute("UPDATE authors SET name = '\(name)' WHERE id = \(author.id)")
    }
    try connection.execute("COMMIT")
    try connection.close()
}

/// A save routine that writes a new snapshot beside the file, then renames it over the
/// file itself with Foundation: the rename is no crash point the check can strike at.
func writeThenRenameItself(_ store: EntityStore, to path: String) throws {
    let temporary = path + ".new"
    try? FileManager.default.removeItem(atPath: temporary)
    try store.snapshot(to: temporary)
    guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
}

/// A save routine that copies a new snapshot over the file in place, with plain writes.
func overwriteInPlace(_ store: EntityStore, to path: String) throws {
    let temporary = path + ".new"
    try? FileManager.default.removeItem(atPath: temporary)
    try store.snapshot(to: temporary)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: temporary))
    if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.write(contentsOf: bytes)
    try handle.truncate(atOffset: UInt64(bytes.count))
    try handle.close()
    try FileManager.default.removeItem(atPath: temporary)
}

/// A save routine that copies the file with SQLite's `VACUUM INTO` (which never syncs the
/// copy), updates the copy with syncs off, and moves it over the file through the
/// library's own rename. Every step is one the check sees, but nothing of the new file is
/// synced: after a power loss the renamed file is empty. (The library's snapshot writes
/// sync the new file before this rename; the routine calls it directly to rename a file
/// whose writes are not on disk.)
func unsyncedCopyRenamedOver(_ store: EntityStore, to path: String) throws {
    guard FileManager.default.fileExists(atPath: path) else {
        try store.snapshot(to: path)
        return
    }
    let temporary = path + ".new"
    let original = try SQLiteConnection(path: path, mode: .readWrite)
    try original.execute("VACUUM INTO '\(temporary.replacingOccurrences(of: "'", with: "''"))'")
    try original.close()
    let copy = try SQLiteConnection(path: temporary, mode: .readWrite)
    try copy.execute("PRAGMA synchronous = OFF")
    try copy.execute("BEGIN")
    for author in store.state[authors] {
        let name = author.name.replacingOccurrences(of: "'", with: "''")
        try copy.execute("UPDATE authors SET name = '\(name)' WHERE id = \(author.id)")
    }
    try copy.execute("COMMIT")
    try copy.close()
    try FileSystem.rename(temporary, over: path)
}

/// The writes and saves every scenario runs: two saves of a small library.
func sequence(_ run: CrashRun, save: (EntityStore, String) throws -> Void) throws {
    try run.store.write { tx in
        try tx[authors].insert(contentsOf: [Author(id: 1, name: "Ursula"), Author(id: 2, name: "Jon")])
        try tx[books].insert(Book(id: 10, title: "The Dispossessed", authorID: 1, editorID: 2, year: 1974))
    }
    try run.save("first save") { try save(run.store, run.path) }
    try run.store.write { tx in
        _ = try tx[authors].update(1) { $0.name = "Ursula K. Le Guin" }
        _ = try tx[authors].update(2) { $0.name = "Jon Fosse" }
    }
    try run.save("second save") { try save(run.store, run.path) }
}

@Suite("Crash safety of an app's save routine", .threadsOfItsOwn)
struct CrashSafetyTests {
    @Test("the library's snapshot(to:) passes every kill, power loss and I/O error")
    func snapshotPasses() throws {
        var report: CrashSafetyReport?
        let failures = try withRecordedFailures {
            report = try assertCrashSafe(schema: try librarySchema()) { run in
                try sequence(run) { store, path in try store.snapshot(to: path) }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        let done = try #require(report)
        #expect(done.saves == 2)
        #expect(done.operations > 5)
        #expect(done.runs[.processKill] == done.operations && done.runs[.powerLoss] == done.operations + 1 && done.runs[.ioError] == done.operations)
        #expect(!done.sampled)
    }

    @Test("the library's SnapshotFile.save() passes every kill, power loss and I/O error")
    func snapshotFilePasses() throws {
        let failures = try withRecordedFailures {
            try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(maxRunsPerFault: 60)) { run in
                try run.store.write { tx in try tx[authors].insert(Author(id: 1, name: "Ursula")) }
                let file = try run.save("open") { try SnapshotFile(store: run.store, path: run.path) }
                try run.store.write { tx in try tx[books].insert(Book(id: 10, title: "T", authorID: 1, editorID: nil, year: 1974)) }
                try run.save("save 1") { try file.save() }
                try run.store.write { tx in _ = try tx[books].update(10) { $0.editorID = 1 } }
                try run.save("save 2") { try file.save() }
                try run.save("close") { try file.close() }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("a routine that removes the old file before writing fails, naming the fault, the operation and the step")
    func removeFirstFails() throws {
        var line = 0
        let failures = try withRecordedFailures {
            line = lineAfter()
            try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(faults: [.processKill])) { run in
                try sequence(run, save: removeThenWrite)
            }
        }
        let failure = try #require(failures.single())
        #expect(failure.location.line == line)
        #expect(failure.message.hasPrefix("the save routine is not crash-safe"), "\(failure.message)")
        #expect(failure.message.contains("after a process kill at operation"), "\(failure.message)")
        #expect(failure.message.contains("during step 2 'second save': the file is missing"), "\(failure.message)")
    }

    @Test("a routine that changes the file by calls the check cannot see fails, naming the file and the step", arguments: [0, 1])
    func unseenFileCallsFail(routine: Int) throws {
        let failures = try withRecordedFailures {
            try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(faults: [.powerLoss])) { run in
                try sequence(run, save: routine == 0 ? writeThenRenameItself : overwriteInPlace)
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("without any fault: step 1 'first save' changed 'store.sqlite' by file calls the check cannot see"), "\(message)")
    }

    @Test("a routine with syncs turned off passes kills but fails power losses")
    func unsyncedFails() throws {
        var failures = try withRecordedFailures {
            try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(faults: [.processKill])) { run in
                try sequence(run, save: unsyncedSave)
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        failures = try withRecordedFailures {
            try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(faults: [.powerLoss])) { run in
                try sequence(run, save: unsyncedSave)
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("after a power loss at operation"), "\(message)")
        #expect(message.contains("the file restores to"), "\(message)")
        #expect(message.contains("authors 1: differs"), "\(message)")
    }

    @Test("a routine that renames an unsynced file over the target passes kills but fails the power loss after the rename")
    func unsyncedRenameFails() throws {
        var failures = try withRecordedFailures {
            try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(faults: [.processKill])) { run in
                try sequence(run, save: unsyncedCopyRenamedOver)
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        // The power loss undoes the copy's unsynced writes where the file now is, because
        // the check follows the rename; left under the copy's old name, they would be lost
        // with it, and the file would keep the new state.
        failures = try withRecordedFailures {
            try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(faults: [.powerLoss])) { run in
                try sequence(run, save: unsyncedCopyRenamedOver)
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("after a power loss at operation"), "\(message)")
        #expect(message.contains("(after the last operation) during no save (after the last): the file"), "\(message)")
    }

    @Test("a routine that swallows the error of a failed save fails the I/O-error runs")
    func swallowedErrorFails() throws {
        let failures = try withRecordedFailures {
            try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(faults: [.ioError])) { run in
                try sequence(run) { store, path in _ = try? store.snapshot(to: path) }
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("after an I/O error at operation"), "\(message)")
        #expect(message.contains("the save returned normally but the file"), "\(message)")
        // The operation struck is named with the step it is in, though later steps ran.
        #expect(message.contains("at operation 0 of") && message.contains("during step 1 'first save'"), "\(message)")
        #expect(!message.contains("during no save"), "\(message)")
    }

    @Test("on a dynamic store: the library's snapshot passes, removing the old file first fails")
    func dynamicStore() throws {
        let schema = try EntityStoreTestingTests.dynamicStore().schema
        func sequence(_ run: CrashRun, save: (EntityStore, String) throws -> Void) throws {
            try run.store.write { tx in try tx[dynamicAuthors].insert(DynamicRecord(id: 1, fields: ["name": "Ursula"])) }
            try run.save("first save") { try save(run.store, run.path) }
            try run.store.write { tx in try tx[dynamicBooks].insert(DynamicRecord(id: "a", fields: ["author": 1, "year": 1974])) }
            try run.save("second save") { try save(run.store, run.path) }
        }
        var failures = try withRecordedFailures {
            try assertCrashSafe(schema: schema, options: CrashSafetyOptions(faults: [.processKill, .powerLoss])) { run in
                try sequence(run) { store, path in try store.snapshot(to: path) }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        failures = try withRecordedFailures {
            try assertCrashSafe(schema: schema, options: CrashSafetyOptions(faults: [.processKill])) { run in
                try sequence(run, save: removeThenWrite)
            }
        }
        #expect(try #require(failures.single()).message.contains("the file is missing"))
    }

    @Test("above the cap the points are sampled, and the report says so")
    func sampled() throws {
        let report = try assertCrashSafe(schema: try librarySchema(), options: CrashSafetyOptions(faults: [.processKill], maxRunsPerFault: 4)) { run in
            try sequence(run) { store, path in try store.snapshot(to: path) }
        }
        #expect(report.sampled)
        #expect(report.runs[.processKill] == 4)
        #expect(report.description.contains("(sampled: more operations than the cap)"))
    }

    @Test("a sequence that fails without any fault is an error, not a crash point")
    func failingSequenceThrows() throws {
        #expect(throws: SnapshotError.self) {
            try assertCrashSafe(schema: try librarySchema()) { run in
                _ = try run.save { try run.store.snapshot(to: run.directory + "/missing/dir/file.sqlite") }
            }
        }
    }
}
