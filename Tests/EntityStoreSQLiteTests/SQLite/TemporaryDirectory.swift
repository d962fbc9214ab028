import Foundation
import EntityStoreSQLite

/// Runs `body` with a fresh, uniquely named directory that is removed afterwards.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("EntityStoreSQLiteTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// Runs `body` with a connection to a new database file in a temporary directory.
func withTemporaryDatabase<R>(_ body: (SQLiteConnection, URL) throws -> R) throws -> R {
    try withTemporaryDirectory { directory in
        let url = directory.appendingPathComponent("test.sqlite")
        let connection = try SQLiteConnection(path: url.path, mode: .readWriteCreate)
        return try body(connection, url)
    }
}

/// An error thrown by test closures to trigger rollbacks.
struct TestAbort: Error, Equatable {}
