import EntityStore
import Foundation

/// A genre with a raw value: stored as its raw value.
enum Genre: String, Codable, Sendable { case fiction, poetry, essay }

/// A nested value: stored as JSON text.
struct Edition: Codable, Sendable, Equatable {
    var format: String
    var pages: Int
    var tags: [String]
}

/// An entity with every field kind the snapshot format maps.
struct Sample: Entity {
    var id: Int
    var name: String
    var count: Int64
    var ratio: Double
    var flag: Bool
    var note: String?
    var genre: Genre
    var when: Date
    var uuid: UUID
    var bytes: Data
    var edition: Edition
    var scores: [Double]
    var extra: [String: Int]
    var small: Int8
}

struct Author: Entity {
    var id: Int
    var name: String
}

struct Book: Entity {
    var id: String
    var title: String
    var authorID: Int
    var year: Int
    var editorID: Int?
}

let authors = Table<Author>("authors")
let books = Table<Book>("books")
    .ordered(\.year)
    .references(\.authorID, to: authors, onDelete: .cascade)
    .references(\.editorID, to: authors, onDelete: .nullify)
let samples = Table<Sample>("samples").unique(\.name)

func sample(_ id: Int, name: String? = nil) -> Sample {
    Sample(
        id: id, name: name ?? "sample \(id) ✨", count: Int64(id) * 1_000_000_007, ratio: Double(id) / 10, flag: id % 2 == 0,
        note: id % 3 == 0 ? nil : "note \(id)", genre: [.fiction, .poetry, .essay][id % 3],
        when: Date(timeIntervalSince1970: 1_700_000_000 + Double(id)), uuid: UUID(),
        bytes: Data([UInt8(id % 256), 0, 255]), edition: Edition(format: "paperback", pages: 100 + id, tags: ["a", "b"]),
        scores: [0.1, 2.0, -0.0], extra: ["k": id], small: Int8(id % 100))
}

func librarySchema() throws -> Schema {
    try Schema {
        authors
        books
        samples
    }
}

func temporaryPath(_ name: String = "snapshot.sqlite") -> (directory: URL, path: String) {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("EntityStoreSnapshotTests-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return (directory, directory.appendingPathComponent(name).path)
}
