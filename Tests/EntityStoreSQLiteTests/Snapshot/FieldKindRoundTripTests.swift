import EntityStoreTestSupport
import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// An enum with an integer raw value: stored as its raw value.
private enum Priority: Int, Codable, Sendable { case low = 1, high = 9 }

/// A nested value holding arrays and dictionaries: stored as JSON text.
private struct Layout: Codable, Sendable, Equatable {
    var width: Double
    var labels: [String]
    var grid: [String: [Int]]
    var inner: Edition?
}

/// One field of every kind the snapshot format maps.
private struct Everything: Entity {
    var id: Int
    var text: String
    var empty: String
    var big: Int64
    var tiny: Int8
    var unsigned: UInt32
    var ratio: Double
    var flag: Bool
    var when: Date
    var uuid: UUID
    var bytes: Data
    var noBytes: Data
    var maybeText: String?
    var maybeNumber: Double?
    var priority: Priority
    var genre: Genre
    var layout: Layout
    var list: [Int]
    var map: [String: String]
}

private let everything = Table<Everything>("everything")

private let sqlite3Tool = "/usr/bin/sqlite3"

private let tricky = [
    "emoji 👩‍👩‍👧‍👦 🇨🇭 ✨",
    "combining e\u{301} vs \u{e9}, a\u{30A}\u{301}",
    "embedded \u{0}NUL\u{0} inside",
    "",
    "quotes ' \" \\ and newline\n tab\t",
    "\u{0}",
]

/// Rows covering the edges of each kind; `index` picks which edges.
private func everythingRow(_ index: Int) -> Everything {
    let doubles: [Double] = [0.1, 1e300, -0.0, 2.0, .leastNonzeroMagnitude, -.greatestFiniteMagnitude, 1.0 / 3.0]
    let bigs: [Int64] = [.min, .max, 0, -1]
    let tinies: [Int8] = [.min, .max, 0, -1]
    let dates = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_700_000_000), Date(timeIntervalSince1970: -86_400 * 365),
        Date(timeIntervalSince1970: 1_234_567_890.5),
    ]
    return Everything(
        id: index, text: tricky[index % tricky.count], empty: "", big: bigs[index % bigs.count], tiny: tinies[index % tinies.count],
        unsigned: index % 2 == 0 ? .max : 0, ratio: doubles[index % doubles.count], flag: index % 2 == 1,
        when: dates[index % dates.count], uuid: UUID(), bytes: Data([0, 1, 2, 255, 0, UInt8(index % 256)]), noBytes: Data(),
        maybeText: index % 3 == 0 ? nil : tricky[(index + 1) % tricky.count], maybeNumber: index % 2 == 0 ? nil : -0.0,
        priority: index % 2 == 0 ? .low : .high, genre: [.fiction, .poetry, .essay][index % 3],
        layout: Layout(
            width: doubles[(index + 1) % doubles.count], labels: ["", tricky[index % tricky.count]], grid: ["a": [1, -2], "": []],
            inner: index % 2 == 0 ? nil : Edition(format: "hard", pages: index, tags: [])),
        list: index % 2 == 0 ? [] : [Int.min, 0, Int.max], map: index % 2 == 0 ? [:] : ["k": tricky[index % tricky.count]])
}

private func everythingStore(rows count: Int) throws -> EntityStore {
    let store = EntityStore(schema: try Schema { everything })
    try store.write { tx in try tx[everything].insert(contentsOf: (0..<count).map(everythingRow)) }
    return store
}

@Suite("Field kinds survive a round trip", .threadsOfItsOwn)
struct FieldKindRoundTripTests {
    @Test("every field kind comes back exactly, bit for bit and scalar for scalar")
    func everyKindRoundTrips() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("kinds.sqlite").path
            let store = try everythingStore(rows: 28)
            try store.snapshot(to: path)
            let restored = EntityStore(schema: try Schema { everything })
            try restored.restore(from: path)

            let original = rows(everything, in: store.state)
            let back = rows(everything, in: restored.state)
            #expect(back == original)
            try #require(back.count == original.count)
            for (lhs, rhs) in zip(original, back) {
                // String equality is canonical equivalence: compare the exact scalars.
                #expect(Array(lhs.text.utf8) == Array(rhs.text.utf8), "text of \(lhs.id)")
                #expect(lhs.maybeText.map { Array($0.utf8) } == rhs.maybeText.map { Array($0.utf8) }, "maybeText of \(lhs.id)")
                #expect(lhs.layout.labels.map { Array($0.utf8) } == rhs.layout.labels.map { Array($0.utf8) })
                // Double equality ignores the sign of zero: compare the bits.
                #expect(lhs.ratio.bitPattern == rhs.ratio.bitPattern, "ratio of \(lhs.id): \(lhs.ratio) vs \(rhs.ratio)")
                #expect(lhs.maybeNumber?.bitPattern == rhs.maybeNumber?.bitPattern, "maybeNumber of \(lhs.id)")
                #expect(lhs.when.timeIntervalSince1970.bitPattern == rhs.when.timeIntervalSince1970.bitPattern)
                #expect(lhs.uuid == rhs.uuid)
            }
            let negativeZero = try #require(back.first { $0.id == 2 })
            #expect(negativeZero.ratio == 0 && negativeZero.ratio.sign == .minus)
            #expect(back.first { $0.id == 4 }?.ratio == .leastNonzeroMagnitude)
            #expect(back.contains { $0.big == .min } && back.contains { $0.big == .max })
            #expect(back.contains { $0.tiny == .min } && back.contains { $0.tiny == .max })
            #expect(back.allSatisfy { $0.noBytes.isEmpty && $0.empty.isEmpty })
            #expect(back.contains { $0.text.utf8.contains(0) })
        }
    }

    @Test("every finite Date comes back with the same bits")
    func dates() throws {
        let schema = try Schema { everything }
        // Present-day, tiny, subnormal, negative and far instants, and any finite bit pattern.
        let seconds = dateSeconds(1_600, seed: 7) + [
            0, -0.0, 0.1, -0.1, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude,
            -.greatestFiniteMagnitude, 7e8 + 0.123_456_789,
        ]
        let dates = seconds.map { Date(timeIntervalSinceReferenceDate: $0) }
            + [Date.distantPast, Date.distantFuture, Date(timeIntervalSince1970: 0.1), Date(timeIntervalSince1970: 1_700_000_000.123_456)]
        let state = try EntityState.build(schema: schema) { tx in
            try tx[everything].insert(contentsOf: dates.enumerated().map { offset, date in
                var row = everythingRow(offset)
                row.when = date
                return row
            })
        }
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("dates.sqlite").path
            try state.writeSnapshot(to: path)
            let back = try EntityState.readSnapshot(from: path, schema: schema)
            var differing = 0
            for (offset, date) in dates.enumerated() {
                let restored = try #require(back[everything].find(offset)?.when)
                if restored.timeIntervalSinceReferenceDate.bitPattern != date.timeIntervalSinceReferenceDate.bitPattern {
                    differing += 1
                    if differing <= 5 {
                        Issue.record("date \(offset): \(date.timeIntervalSinceReferenceDate) came back as \(restored.timeIntervalSinceReferenceDate)")
                    }
                }
            }
            #expect(differing == 0, "\(differing) of \(dates.count) dates changed")
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }

    @Test(
        "SQLite's date functions read stored dates, and ORDER BY sorts them in time order",
        .enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3Tool), "skipped: \(sqlite3Tool) is not installed"))
    func sqlDateFunctions() throws {
        let schema = try Schema { everything }
        var generator = SplitMix64(seed: 5)
        // Years 0001 ... 9999 in whole milliseconds (SQLite's date functions round to the
        // millisecond), and instants in one second with fractions of several lengths.
        let dates = (0..<300).map { _ in
            Date(timeIntervalSince1970: Double(Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &generator)) / 1_000)
        }
            + [1_700_000_000.25, 1_700_000_000.5, 1_700_000_000.55, 1_700_000_000, 1_700_000_000.000_001].map(Date.init(timeIntervalSince1970:))
        let state = try EntityState.build(schema: schema) { tx in
            try tx[everything].insert(contentsOf: dates.enumerated().map { offset, date in
                var row = everythingRow(offset)
                row.when = date
                return row
            })
        }
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("sql-dates.sqlite").path
            try state.writeSnapshot(to: path)
            let first = dates.count - 5
            #expect(try sqlRows(path, "SELECT \"when\", date(\"when\"), time(\"when\"), strftime('%Y-%m-%d %H:%M:%f', \"when\") FROM everything WHERE id = ?", [.integer(Int64(first))]) == [[
                .text("2023-11-14T22:13:20.25+00:00"), .text("2023-11-14"), .text("22:13:20"), .text("2023-11-14 22:13:20.250"),
            ]])
            #expect(try sqlValue(path, "SELECT unixepoch(\"when\") FROM everything WHERE id = \(first)") == .integer(1_700_000_000))
            // Every date agrees with SQLite's calendar to the second.
            let disagreeing = try sqlRows(path, """
                SELECT count(*) FROM everything WHERE strftime('%Y-%m-%dT%H:%M:%S', "when") != substr("when", 1, 19)
                """)
            #expect(disagreeing == [[.integer(0)]])
            let byText = try sqlRows(path, "SELECT id FROM everything ORDER BY \"when\", id").map { $0.first }
            let byTime = dates.indices.sorted { (dates[$0], $0) < (dates[$1], $1) }.map { Optional(SQLiteValue.integer(Int64($0))) }
            #expect(byText == byTime)

            // The sqlite3 shell reads them the same way.
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sqlite3Tool)
            process.arguments = ["-readonly", path, "SELECT date(\"when\"), time(\"when\") FROM everything WHERE id = \(first);"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = Pipe()
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(String(decoding: data, as: UTF8.self) == "2023-11-14|22:13:20\n")
        }
    }

    @Test("columns have the storage classes sqlite3 users expect")
    func storageClasses() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("types.sqlite").path
            let store = try everythingStore(rows: 6)
            try store.snapshot(to: path)
            func types(_ column: String) throws -> Set<String> {
                Set(try sqlRows(path, "SELECT DISTINCT typeof(\"\(column)\") FROM everything").compactMap {
                    if case let .text(name)? = $0.first { return name }
                    return nil
                })
            }
            #expect(try types("flag") == ["integer"])
            #expect(try sqlRows(path, "SELECT DISTINCT flag FROM everything ORDER BY flag") == [[.integer(0)], [.integer(1)]])
            #expect(try types("ratio") == ["real"])
            #expect(try types("when") == ["text"])
            #expect(try types("big") == ["integer"])
            #expect(try types("tiny") == ["integer"])
            #expect(try types("text") == ["text"])
            #expect(try types("uuid") == ["text"])
            #expect(try types("bytes") == ["blob"])
            #expect(try types("noBytes") == ["blob"])
            #expect(try types("layout") == ["text"])
            #expect(try types("list") == ["text"])
            #expect(try types("map") == ["text"])
            #expect(try types("priority") == ["integer"])
            #expect(try types("genre") == ["text"])
            #expect(try types("maybeText") == ["null", "text"])
            // -0.0 and 2.0 stay REAL values, not integers.
            #expect(try sqlValue(path, "SELECT typeof(ratio) FROM everything WHERE id = 3") == .text("real"))
            let uuid = try #require(store.state[everything].find(1)?.uuid)
            #expect(try sqlValue(path, "SELECT uuid FROM everything WHERE id = 1") == .text(uuid.uuidString))
            #expect(try sqlValue(path, "SELECT json_extract(layout, '$.grid.a[1]') FROM everything WHERE id = 1") == .integer(-2))
            #expect(try sqlValue(path, "SELECT priority FROM everything WHERE id = 1") == .integer(Int64(Priority.high.rawValue)))
            #expect(try sqlValue(path, "SELECT count(*) FROM everything") == .integer(6))
            #expect(try sqlValue(path, "SELECT count(*) FROM everything WHERE flag") == .integer(3))
            let kinds = try Snapshot.metadata(at: path).table(named: "everything")?.columns.reduce(into: [String: ColumnKind]()) {
                $0[$1.name] = $1.kind
            }
            #expect(kinds?["flag"] == .bool)
            #expect(kinds?["ratio"] == .double)
            #expect(kinds?["when"] == .date)
            #expect(kinds?["uuid"] == .uuid)
            #expect(kinds?["bytes"] == .blob)
            #expect(kinds?["layout"] == .json)
            #expect(kinds?["priority"] == .integer)
            #expect(kinds?["genre"] == .string)
        }
    }

    @Test(
        "the sqlite3 command-line tool reads a snapshot",
        .enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3Tool), "skipped: \(sqlite3Tool) is not installed"))
    func sqlite3CommandLine() throws {
        let tool = sqlite3Tool
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("cli.sqlite").path
            let store = try populatedLibraryStore(authorCount: 3, bookCount: 17)
            try store.snapshot(to: path)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = [
                "-readonly", path,
                "SELECT count(*) FROM books; SELECT count(*) FROM authors; SELECT count(*) FROM books WHERE authorID = 2; PRAGMA application_id;",
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = Pipe()
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            let authorTwo = store.state[books].filter(\.authorID, equals: 2).count
            #expect(lines == ["17", "3", "\(authorTwo)", "\(entityStoreApplicationID)"])
        }
    }
}
