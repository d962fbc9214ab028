@testable import EntityStoreCommands
import EntityStore
import EntityStoreTestSupport
import Foundation
import Testing

/// `query` conditions, order, paging, projection and formats, end to end on the built
/// tool, against answers computed here from the generated data.
@Suite("The query language, end to end", .threadsOfItsOwn)
struct QueryLanguageTests {
    static let dataset = FlightsLikeDataset(seed: 42)

    /// Imports the dataset once per test into `scratch`.
    private func snapshot(_ scratch: Scratch) throws -> String {
        let input = try scratch.write("flights.json", Self.dataset.json)
        let path = scratch.path("flights.sqlite")
        let result = run(["import", input, "--output", path, "--index", "flights.carrier=grouped",
                          "--index", "flights.dep_delay=ordered", "--relation", "flights.carrier=carriers", "--allow-dangling"])
        #expect(result.status == 0, "\(result)")
        return path
    }

    private func ids(_ result: RunResult) throws -> [Int64] {
        try result.outputLines.map { try #require(parseJSON($0)["id"]?.intValue) }
    }

    /// Each operator, against a filter written here over the generated records.
    @Test func everyOperatorAgreesWithAnIndependentFilter() throws {
        let flights = Self.dataset.flights
        let delay = { (flight: [String: JSONValue]) in FlightsLikeDataset.number(flight["dep_delay"]) }
        let cases: [(String, ([String: JSONValue]) -> Bool)] = [
            ("carrier=UA", { $0["carrier"] == "UA" }),
            ("carrier!=UA", { if case .string(let code)? = $0["carrier"] { code != "UA" } else { false } }),
            ("carrier=in:UA,AA,XX", { $0["carrier"] == "UA" || $0["carrier"] == "AA" }),
            ("dep_delay>60", { delay($0).map { $0 > 60 } ?? false }),
            ("dep_delay>=60", { delay($0).map { $0 >= 60 } ?? false }),
            ("dep_delay<0", { delay($0).map { $0 < 0 } ?? false }),
            ("dep_delay<=0", { delay($0).map { $0 <= 0 } ?? false }),
            ("dep_delay=12", { delay($0) == 12 }),
            ("dep_delay=12.0", { delay($0) == 12 }),
            ("dep_delay!=12", { delay($0).map { $0 != 12 } ?? false }),
            ("dep_delay is null", { $0["dep_delay"] == nil || $0["dep_delay"] == .null }),
            ("dep_delay not null", { delay($0) != nil }),
            ("tailnum is null", { $0["tailnum"] == nil }),
            ("distance>1000.5", { FlightsLikeDataset.number($0["distance"]).map { $0 > 1000.5 } ?? false }),
            ("year=2013.0", { _ in true }),
        ]
        try withScratch { scratch in
            let path = try snapshot(scratch)
            for (condition, keep) in cases {
                let expected = flights.filter(keep).compactMap { $0["id"]?.intValue }.sorted()
                #expect(!expected.isEmpty && expected.count < flights.count || condition == "year=2013.0", "\(condition) tells nothing apart")
                let result = run(["query", path, "flights", "--where", condition, "--quiet"])
                #expect(result.status == 0, "\(condition): \(result)")
                #expect(try ids(result) == expected, "\(condition)")
                let counted = run(["query", path, "flights", "--where", condition, "--count"])
                #expect(counted.stdout == "\(expected.count)\n", "\(condition): \(counted)")
            }
            // Several conditions are AND-ed.
            let both = flights.filter { $0["carrier"] == "UA" && (delay($0).map { $0 > 60 } ?? false) }
            let result = run(["query", path, "flights", "--where", "carrier=UA", "--where", "dep_delay>60"])
            #expect(try ids(result) == both.compactMap { $0["id"]?.intValue }.sorted())
        }
    }

    @Test func sortLimitOffsetAndFields() throws {
        let flights = Self.dataset.flights.filter { FlightsLikeDataset.number($0["dep_delay"]) != nil }
        let byDelay = flights.sorted {
            let left = FlightsLikeDataset.number($0["dep_delay"])!, right = FlightsLikeDataset.number($1["dep_delay"])!
            return left != right ? left > right : $0["id"]!.intValue! < $1["id"]!.intValue!
        }
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let result = run(["query", path, "flights", "--where", "dep_delay not null", "--sort", "dep_delay", "--desc",
                              "--offset", "3", "--limit", "5", "--fields", "dep_delay,id"])
            #expect(result.status == 0, "\(result)")
            let delays = try result.outputLines.map { try #require(FlightsLikeDataset.number(parseJSON($0)["dep_delay"])) }
            #expect(delays == byDelay.dropFirst(3).prefix(5).map { FlightsLikeDataset.number($0["dep_delay"])! })
            // --fields sets the order of the members.
            #expect(result.outputLines.allSatisfy { $0.hasPrefix("{\"dep_delay\":") && $0.contains(",\"id\":") && !$0.contains("carrier") })
        }
    }

    @Test func formats() throws {
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let base = ["query", path, "flights", "--where", "carrier=UA", "--limit", "3", "--fields", "id,carrier,tailnum"]
            let ndjson = run(base)
            let json = run(base + ["--format", "json"])
            #expect(try parseJSON(json.stdout) == .array(ndjson.outputLines.map { try parseJSON($0) }))
            let csv = run(base + ["--format", "csv"])
            let lines = csv.outputLines
            #expect(lines.first == "id,carrier,tailnum" && lines.count == 4, "\(csv)")
            let table = run(base + ["--format", "table"])
            #expect(table.outputLines.first?.hasPrefix("id") == true && table.outputLines.last == "(3 rows)", "\(table)")
            #expect(table.outputLines.dropFirst(2).dropLast().allSatisfy { $0.contains("UA") })
        }
    }

    /// CSV output read back by a CSV parser is the data: every field of every record, a
    /// null or missing field an empty cell, numbers spelt as in the data; the carriers'
    /// names hold a comma-free but non-ASCII text, and a joined column comes along.
    @Test func csvOutputReadsBackAsTheData() throws {
        let names = Dictionary(uniqueKeysWithValues: Self.dataset.carriers.map { ($0["id"]!, $0["name"]!) })
        func cell(_ value: JSONValue?) -> String {
            switch value {
            case nil, .null?: ""
            case .string(let text)?: text
            case let value?: value.serialized()
            }
        }
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let fields = ["id", "carrier", "dep_delay", "distance", "tailnum", "year", "carrier.name"]
            let result = run(["query", path, "flights", "--join", "carrier", "--fields", fields.joined(separator: ","), "--format", "csv"])
            #expect(result.status == 0, "\(result)")
            var rows: [[String]] = []
            var bytes = Array(result.stdout.utf8)
            try bytes.withUnsafeMutableBufferPointer { buffer in
                try CSVParser.forEachRecord(in: UnsafeBufferPointer(buffer)) { cells, _ in rows.append(cells) }
            }
            #expect(rows.first == fields)
            let expected = Self.dataset.flights.map { flight in
                fields.dropLast().map { cell(flight[$0]) } + [cell(flight["carrier"].flatMap { names[$0] })]
            }
            #expect(Array(rows.dropFirst()) == expected)
        }
    }

    /// Without --format, a terminal gets an aligned table and a pipe JSON lines. The
    /// terminal is a pseudo-terminal that script(1) gives the tool.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1)"))
    func aTerminalGetsATableAndAPipeJSONLines() throws {
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let arguments = ["query", path, "carriers", "--limit", "2", "--fields", "id,name"]
            let piped = run(arguments)
            #expect(piped.outputLines.count == 2 && piped.outputLines.allSatisfy { $0.hasPrefix("{\"id\":") }, "\(piped)")
            let command = ([Tool.entityStore.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            let terminal = run(["-qec", command, "/dev/null"], executable: URL(fileURLWithPath: "/usr/bin/script"))
            let lines = terminal.stdout.replacingOccurrences(of: "\r", with: "").split(separator: "\n").map(String.init)
            #expect(terminal.status == 0 && lines.count == 5, "\(terminal)")
            #expect(lines.first?.hasPrefix("id  name") == true && lines.last == "(2 rows)", "\(terminal)")
        }
    }

    /// Table output aligns by columns of screen: a CJK character takes two, and a long
    /// cell is cut at 40 columns.
    @Test func tableColumnsAlignOnScreen() {
        let printer = RowPrinter(format: .table, fields: ["id", "name", "n"])
        let text = printer.text([
            ["id": 1, "name": "日本語", "n": 5],
            ["id": 22, "name": "abcdef", "n": 6],
        ])
        #expect(text == "id  name    n\n--  ------  -\n 1  日本語  5\n22  abcdef  6\n(2 rows)\n")
        let long = RowPrinter(format: .table, fields: ["s"]).text([["s": .string(String(repeating: "語", count: 30))]])
        #expect(long.split(separator: "\n")[2] == String(repeating: "語", count: 19) + "…")
    }

    /// A cell escapes and measures only the head of a long value, and shows exactly what
    /// escaping and cutting the whole value shows: at the lookahead's edge, with escapes
    /// followed by combining marks, wide characters and flags, and for a 100 KB string.
    @Test func longCellsAreCutAsTheirWholeTextWouldBe() {
        func wholeCut(_ text: String) -> String { RowPrinter.cut(Echo.escaped(text)) }
        let pieces = ["a", "語", "\u{1B}", "\u{1B}\u{301}", "e\u{301}", "\r\n", "\t", "🇫🇷", "\u{202E}", "👩‍👩‍👧", "\u{7F}"]
        var generator = SystemRandomNumberGenerator()
        var texts = [String(repeating: "x", count: 100_000), String(repeating: "\u{1B}\u{301}", count: 100)]
        for length in [0, 1, 39, 40, 41, 79, 80, 81, 82, 200] {
            texts.append(String(repeating: "y", count: length))
            for _ in 0..<20 { texts.append((0..<length).map { _ in pieces.randomElement(using: &generator)! }.joined()) }
        }
        for text in texts {
            #expect(RowPrinter.cell(.string(text)) == wholeCut(text), "\(Array(text.unicodeScalars.prefix(90)))")
        }
    }

    /// The snapshot is plain SQL: the sqlite3 shell answers a range query on a column with
    /// nulls correctly. `export --table` reads one table and gives what a full export does.
    @Test func sqliteAnswersAndExportReadsOneTable() throws {
        let late = Self.dataset.flights.filter { FlightsLikeDataset.number($0["dep_delay"]).map { $0 > 60 } ?? false }.count
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let sqlite = run(["-batch", "-readonly", path, "SELECT count(*) FROM flights WHERE dep_delay > 60;"], executable: sqlite3)
            #expect(sqlite.stdout == "\(late)\n", "\(sqlite)")
            let one = run(["export", path, "--table", "carriers"])
            let all = run(["export", path])
            #expect(one.status == 0, "\(one)")
            #expect(try parseJSON(one.stdout) == .object(["carriers": try #require(parseJSON(all.stdout)["carriers"])]))
            expectFailure(run(["export", path, "--table", "nosuch"]), mentioning: ["no table 'nosuch'"])
        }
    }

    /// Fields keep the order of the input (a JSON object's keys as written, an NDJSON file's,
    /// a CSV header's), and the same input imports to the same bytes.
    @Test func fieldOrderFollowsTheInputAndImportsAreDeterministic() throws {
        try withScratch { scratch in
            try scratch.write("in/t.ndjson", "{\"id\":1,\"zeta\":1,\"alpha\":{\"n\":{\"x\":1}},\"mid\":\"a\\\"b\"}\n{\"new\":true,\"id\":2,\"zeta\":null}\n")
            try scratch.write("in/u.json", #"[{"b": 1, "id": "x", "a": 2}, {"id": "y", "c": 3}]"#)
            try scratch.write("in/v.csv", "z,y,x\n1,2,3\n")
            for output in ["a.sqlite", "b.sqlite"] {
                #expect(run(["import", scratch.path("in"), "--output", scratch.path(output)]).status == 0)
            }
            #expect(try scratch.read("a.sqlite") == scratch.read("b.sqlite"), "the same input must write the same bytes")
            let path = scratch.path("a.sqlite")
            #expect(run(["query", path, "t", "--format", "csv"]).outputLines.first == "id,zeta,alpha,mid,new")
            #expect(run(["query", path, "u", "--format", "csv"]).outputLines.first == "id,b,a,c")
            #expect(run(["query", path, "v", "--format", "csv"]).outputLines.first == "id,z,y,x")
        }
    }

    /// Group-by aggregates against a computation over the generated records.
    @Test func groupByAggregates() throws {
        var expected: [String: (count: Int, sum: Double, values: Int, max: Double?)] = [:]
        for flight in Self.dataset.flights {
            let key = flight["carrier"].flatMap { if case .string(let code) = $0 { code } else { nil } } ?? "null"
            var group = expected[key] ?? (0, 0, 0, nil)
            group.count += 1
            if let delay = FlightsLikeDataset.number(flight["dep_delay"]) {
                group.sum += delay
                group.values += 1
                group.max = max(group.max ?? delay, delay)
            }
            expected[key] = group
        }
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let result = run(["query", path, "flights", "--group-by", "carrier", "--count", "--sum", "dep_delay", "--avg", "dep_delay", "--max", "dep_delay"])
            #expect(result.status == 0, "\(result)")
            let rows = try result.outputLines.map { try parseJSON($0) }
            #expect(rows.count == expected.count)
            #expect(rows.first?["carrier"] == .null, "the null group comes first")
            for row in rows {
                let key = row["carrier"]?.stringValue ?? "null"
                let group = try #require(expected[key], "\(row)")
                #expect(row["count"] == .integer(Int64(group.count)), "\(row)")
                #expect(FlightsLikeDataset.number(row["sum(dep_delay)"]) == group.sum, "\(row)")
                #expect(FlightsLikeDataset.number(row["avg(dep_delay)"]).map { abs($0 - group.sum / Double(group.values)) < 1e-9 } ?? false, "\(row)")
                #expect(FlightsLikeDataset.number(row["max(dep_delay)"]) == group.max, "\(row)")
            }
            // Sorted by an aggregate, paged.
            let top = run(["query", path, "flights", "--group-by", "carrier", "--count", "--sort", "count", "--desc", "--limit", "2", "--format", "csv"])
            let counts = expected.values.map(\.count).sorted(by: >)
            #expect(top.outputLines.count == 3 && top.outputLines[0] == "carrier,count", "\(top)")
            #expect(top.outputLines.dropFirst().map { Int($0.split(separator: ",").last ?? "") } == counts.prefix(2).map { Optional($0) })
            let bare = run(["query", path, "flights", "--group-by", "carrier"])
            #expect(bare.status == 64 && bare.stderr.contains("--count"), "\(bare)")
        }
    }

    /// `--join` prints the referenced record's fields; a dangling or null reference prints
    /// none. The one-shot answer equals the shell's, which restores everything.
    @Test func joinFollowsTheDeclaredRelation() throws {
        let names = Dictionary(uniqueKeysWithValues: Self.dataset.carriers.map { ($0["id"]!, $0["name"]!) })
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let arguments = ["flights", "--where", "dep_delay>200", "--join", "carrier", "--fields", "id,carrier,carrier.name"]
            let result = run(["query", path] + arguments)
            #expect(result.status == 0, "\(result)")
            let rows = try result.outputLines.map { try parseJSON($0) }
            #expect(!rows.isEmpty)
            var dangling = 0
            for row in rows {
                let expected = row["carrier"].flatMap { names[$0] }
                #expect(row["carrier.name"] == expected, "\(row)")
                if row["carrier"] != nil, row["carrier"] != .null, expected == nil { dangling += 1 }
            }
            #expect(dangling > 0, "the dataset should reference missing carriers")
            let shell = run(["shell", path, "--quiet"], stdin: Data(arguments.map { "'\($0)'" }.joined(separator: " ").utf8))
            #expect(shell.stdout == result.stdout)
            expectFailure(run(["query", path, "flights", "--join", "tailnum"]), mentioning: ["no relation on 'tailnum'", "'carrier'"])
        }
    }

    @Test(arguments: [
        (["--where", "nosuch>1"], "no field 'nosuch'"),
        (["--sort", "nosuch"], "no field 'nosuch'"),
        (["--fields", "id,nosuch"], "no field 'nosuch'"),
        (["--fields", "carrier.name"], "no field 'carrier.name'"),
        (["--where", "carrier"], "expected FIELD=VALUE"),
        (["--offset", "-2"], "--offset -2"),
        (["--desc"], "--sort"),
        (["--group-by", "nosuch", "--count"], "--group-by nosuch: table 'flights' has no field 'nosuch'"),
        (["--sum", "nosuch"], "--sum nosuch: table 'flights' has no field"),
        (["--avg", "nosuch"], "--avg nosuch: table 'flights' has no field"),
        (["--min", "nosuch"], "--min nosuch: table 'flights' has no field"),
        (["--max", "nosuch"], "--max nosuch: table 'flights' has no field"),
        (["--join", "nosuch"], "--join nosuch: table 'flights' has no field"),
        (["--group-by", "carrier", "--count", "--sort", "dep_delay"], "--sort dep_delay: table 'flights' has no field 'dep_delay' (fields: 'carrier', 'count')"),
        (["--count", "--limit", "5"], "--count prints one number"),
        (["--count", "--offset", "5"], "--count prints one number"),
        (["--count", "--sort", "id"], "--count prints one number"),
        (["--count", "--join", "carrier"], "--count prints one number"),
        (["--count", "--format", "csv"], "--count prints one number"),
        (["--group-by", "carrier", "--count", "--join", "carrier"], "--join prints records"),
    ])
    func mistakesAreNamed(_ arguments: [String], _ mention: String) throws {
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let result = run(["query", path, "flights"] + arguments)
            #expect(result.status != 0)
            #expect(result.stderr.contains(mention), "\(result)")
            #expect(result.stdout.isEmpty)
        }
    }
}
