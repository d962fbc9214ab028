@testable import EntityStoreCommands
import EntityStore
import EntityStoreTestSupport
import Foundation
import Testing

/// Parses `text` with the tool's CSV parser into rows of cells.
private func parseCSV(_ text: String) throws -> [[String]] {
    var rows: [[String]] = []
    var bytes = Array(text.utf8)
    try bytes.withUnsafeMutableBufferPointer { buffer in
        try CSVParser.forEachRecord(in: UnsafeBufferPointer(buffer)) { fields, _ in rows.append(fields) }
    }
    return rows
}

@Suite("CSV reading and writing", .threadsOfItsOwn)
struct CSVTests {
    @Test(arguments: [
        ("a,b\n1,2\n", [["a", "b"], ["1", "2"]]),
        ("a,b\r\n1,2\r\n", [["a", "b"], ["1", "2"]]),
        ("a,b\n1,2", [["a", "b"], ["1", "2"]]),
        ("\u{FEFF}a\nx\n", [["a"], ["x"]]),
        ("a,b\n\"x, y\",\"say \"\"hi\"\"\"\n", [["a", "b"], ["x, y", "say \"hi\""]]),
        ("a,b\n\"line\nbreak\",\"\"\n", [["a", "b"], ["line\nbreak", ""]]),
        ("a,b,c\n,,\n", [["a", "b", "c"], ["", "", ""]]),
        ("a,b\n1,\n", [["a", "b"], ["1", ""]]),
        ("a\n\n\nx\n", [["a"], ["x"]]),
        ("ключ,鍵\n😀,é\n", [["ключ", "鍵"], ["😀", "é"]]),
    ] as [(String, [[String]])])
    func parsesRFC4180(_ text: String, _ expected: [[String]]) throws {
        #expect(try parseCSV(text) == expected)
    }

    @Test(arguments: [
        ("a\n\"open\n", "line 2", "not closed"),
        ("a\nx\"y\n", "line 2", "quote inside an unquoted field"),
        ("a\n\"x\"y\n", "line 2", "after the closing quote"),
    ])
    func malformedTextNamesTheLine(_ text: String, _ line: String, _ reason: String) throws {
        do {
            _ = try parseCSV(text)
            Issue.record("parsed malformed CSV: \(text)")
        } catch let failure as CSVParser.Failure {
            #expect(failure.description.contains(line) && failure.description.contains(reason), "\(failure)")
        }
    }

    @Test func invalidUTF8IsAnError() throws {
        var bytes: [UInt8] = Array("a\n".utf8) + [0xC3, 0x28] + [0x0A]
        #expect(throws: CSVParser.Failure.self) {
            try bytes.withUnsafeMutableBufferPointer { try CSVParser.forEachRecord(in: UnsafeBufferPointer($0)) { _, _ in } }
        }
    }

    @Test func columnKindsAreInferredFromEveryValue() throws {
        let text = """
            code,count,ratio,flag,name,zip,empty,big
            a,1,1.5,true,x,02134,,9223372036854775807
            b,,2,FALSE,7,10001,,1
            c,-3,NA,,y,00000,,12345678901234567890
            """
        var options = CSVTable.Options(idColumn: "code")
        options.nullTexts.insert("NA")
        let table = try CSVTable(data: Data(text.utf8), file: "t.csv", options: options)
        let kinds = Dictionary(uniqueKeysWithValues: zip(table.header, table.kinds))
        #expect(kinds["count"] == .integer)
        #expect(kinds["ratio"] == .double)
        #expect(kinds["flag"] == .bool)
        #expect(kinds["name"] == .string)
        #expect(kinds["zip"] == .string, "leading zeros are codes, kept as text")
        #expect(kinds["big"] == .string, "an integer beyond 64 bits is kept exactly, as text")
        let records = Dictionary(uniqueKeysWithValues: table.records.map { ($0.id, $0) })
        #expect(records[.string("a")]?.fields["ratio"] == .double(1.5))
        #expect(records[.string("b")]?.fields["ratio"] == .double(2))
        #expect(records[.string("c")]?.fields["ratio"] == .null)
        #expect(records[.string("b")]?.fields["count"] == .null)
        #expect(records[.string("b")]?.fields["flag"] == .bool(false))
        #expect(records[.string("b")]?.fields["name"] == .string("7"))
        #expect(records[.string("a")]?.fields["zip"] == .string("02134"))
        #expect(records[.string("c")]?.fields["big"] == .string("12345678901234567890"))
        #expect(records[.string("a")]?.fields["empty"] == .null)
        #expect(records[.string("a")]?.fields["code"] == nil, "the id column is the id, not a field")
    }

    @Test func overriddenKindsAndRowNumberIDs() throws {
        let text = "n,label\n1,x\n2,y\n"
        let table = try CSVTable(data: Data(text.utf8), file: "t.csv", options: CSVTable.Options(kinds: ["n": .string]))
        #expect(table.records.map(\.id) == [.integer(1), .integer(2)])
        #expect(table.records[1].fields["n"] == .string("2"))
        #expect(throws: CommandFailure.self) {
            try CSVTable(data: Data(text.utf8), file: "t.csv", options: CSVTable.Options(kinds: ["label": .integer]))
        }
        #expect(throws: CommandFailure.self) {
            try CSVTable(data: Data("a,b\n1\n".utf8), file: "t.csv", options: CSVTable.Options())
        }
        #expect(throws: CommandFailure.self) {
            try CSVTable(data: Data("a,a\n1,2\n".utf8), file: "t.csv", options: CSVTable.Options())
        }
        #expect(throws: CommandFailure.self) {
            try CSVTable(data: Data("a,b\n1,2\n".utf8), file: "t.csv", options: CSVTable.Options(idColumn: "nosuch"))
        }
    }

    /// Ids are integers or strings: an id column of other values is read as text, and
    /// --types cannot make it a double or a boolean.
    @Test func idColumnsOfOtherValuesAreText() throws {
        let doubles = try CSVTable(data: Data("id,x\n1.5,a\n2,b\n".utf8), file: "t.csv", options: CSVTable.Options())
        #expect(doubles.records.map(\.id) == [.string("1.5"), .string("2")])
        let flags = try CSVTable(data: Data("code,x\ntrue,a\n".utf8), file: "t.csv", options: CSVTable.Options(idColumn: "code"))
        #expect(flags.records.map(\.id) == [.string("true")])
        let integers = try CSVTable(data: Data("id,x\n7,a\n".utf8), file: "t.csv", options: CSVTable.Options())
        #expect(integers.records.map(\.id) == [.integer(7)])
        for kind in [CSVColumnKind.double, .bool] {
            #expect(throws: CommandFailure.self) {
                try CSVTable(data: Data("id,x\n1,a\n".utf8), file: "t.csv", options: CSVTable.Options(kinds: ["id": kind]))
            }
        }
    }

    /// Numbers with spaces around them are text, kept as written (an integer column
    /// already refused them; a double column took them).
    @Test func paddedNumbersAreText() throws {
        let table = try CSVTable(data: Data("id,a,b,c\n1, 1,2.5 ,3.5\n2,2,1,4\n".utf8), file: "t.csv", options: CSVTable.Options())
        #expect(table.kinds == [.integer, .string, .string, .double])
        #expect(table.records[0].fields["a"] == .string(" 1") && table.records[0].fields["b"] == .string("2.5 "))
    }

    /// CSV options that name no CSV table or column, or that a JSON input cannot use,
    /// are errors rather than ignored; a --types without a table applies to the files
    /// whose header has the column.
    @Test func csvOptionsThatNameNothingAreErrors() throws {
        try withScratch { scratch in
            try scratch.write("in/p.csv", "id,a\n1,2\n")
            try scratch.write("in/q.csv", "id,b\n1,x\n")
            let json = try scratch.write("one.json", #"{"t": [{"id": 1}]}"#)
            let directory = scratch.path("in"), output = scratch.path("out.sqlite")
            for (arguments, mentions) in [
                ([directory, "--types", "p.a=string", "--types", "nosuch.a=string"], ["--types nosuch.a=string", "no CSV file gives table 'nosuch'", "'p', 'q'"]),
                ([directory, "--types", "nosuch=string"], ["--types nosuch=string", "no CSV file has a column 'nosuch'"]),
                ([directory, "--id", "nosuch=a"], ["--id nosuch=a", "no CSV file gives table 'nosuch'"]),
                ([directory, "--table", "x"], ["--table x", "a directory"]),
                ([json, "--table", "x"], ["--table x", "not a .csv file"]),
                ([json, "--id", "x"], ["one.json", "--id applies to CSV files"]),
                ([json, "--types", "x=string"], ["--types applies to CSV files"]),
                ([json, "--null", "NA"], ["--null applies to CSV files"]),
            ] {
                expectFailure(run(["import"] + arguments + ["--output", output]), mentioning: mentions)
                #expect(!scratch.exists("out.sqlite"))
            }
            let typed = run(["import", directory, "--output", output, "--types", "a=string"])
            #expect(typed.status == 0, "\(typed)")
            #expect(run(["query", output, "p"]).stdout == "{\"id\":1,\"a\":\"2\"}\n")
        }
    }

    /// A CSV file with a header and no rows still names its columns: queries can name
    /// them, and a CSV export writes the same header.
    @Test func aHeaderWithoutRowsKeepsItsColumns() throws {
        try withScratch { scratch in
            let snapshot = scratch.path("s.sqlite")
            let input = try scratch.write("in/empty.csv", "id,a,b\n")
            #expect(run(["import", input, "--output", snapshot]).status == 0)
            #expect(run(["query", snapshot, "empty", "--where", "a=1", "--count"]).stdout == "0\n")
            #expect(run(["query", snapshot, "empty", "--fields", "b,a", "--format", "csv"]).stdout == "b,a\n")
            #expect(run(["export", snapshot, "--format", "csv", "--output", scratch.path("out")]).status == 0)
            let exported = try scratch.read("out/empty.csv")
            #expect(exported == Data("id,a,b\n".utf8))
            // The id column named by --id is the id, not a column of its own.
            let coded = scratch.path("coded.sqlite")
            let codes = try scratch.write("coded.csv", "code,name\n")
            #expect(run(["import", codes, "--output", coded, "--id", "code"]).status == 0)
            #expect(run(["query", coded, "coded", "--fields", "id,name", "--format", "csv"]).stdout == "id,name\n")
            expectFailure(run(["query", coded, "coded", "--fields", "code"]), mentioning: ["no field 'code'"])
        }
    }

    /// With --id naming another column, a column called id would be dropped (a record's
    /// "id" is its id): refused, with the fix.
    @Test func anIDColumnBesideTheIDsIsRefused() throws {
        try withScratch { scratch in
            let input = try scratch.write("t.csv", "id,code,name\n5,c1,x\n")
            expectFailure(run(["import", input, "--output", scratch.path("t.sqlite"), "--id", "code"]),
                          mentioning: ["t.csv", "--id 'code'", "column 'id'", "rename it"])
            #expect(!scratch.exists("t.sqlite"))
        }
    }

    /// Random cells full of separators, quotes, line breaks and Unicode survive a write
    /// and a read.
    @Test func writtenCellsReadBackExactly() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab ,\"\n\r;é😀\t'")
        for _ in 0..<200 {
            let fields = (0..<Int.random(in: 1...5, using: &generator)).map { "f\($0)" }
            let writer = CSVWriter(fields: fields)
            var text = writer.header
            var expected: [[String]] = [["id"] + fields]
            for row in 0..<Int.random(in: 1...5, using: &generator) {
                var values: [String: JSONValue] = [:]
                var cells = [String(row)]
                for field in fields {
                    let cell = String((0..<Int.random(in: 1...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                    values[field] = .string(cell)
                    cells.append(cell)
                }
                text += writer.row(DynamicRecord(id: .integer(Int64(row)), fields: values))
                expected.append(cells)
            }
            #expect(try parseCSV(text) == expected, "\(text.debugDescription)")
        }
    }

    @Test func importThenExportCSVEndToEnd() throws {
        try withScratch { scratch in
            try scratch.write("in/planes.csv", "tailnum,seats,speed,model\nN1,150,NA,\"A320, neo\"\nN2,55,432,\"E \"\"145\"\"\"\n")
            try scratch.write("in/flights.csv", "carrier,tailnum,dep_delay,note\nUA,N1,12,\nAA,N2,-3,late\nUA,N9,NA,\"multi\nline\"\n")
            let snapshot = scratch.path("f.sqlite")
            let imported = run(["import", scratch.path("in"), "--output", snapshot, "--id", "planes=tailnum", "--null", "NA",
                                "--relation", "flights.tailnum=planes", "--allow-dangling"])
            #expect(imported.status == 0, "\(imported)")
            let ua = run(["query", snapshot, "flights", "--where", "carrier=UA", "--count"])
            #expect(ua.stdout == "2\n", "\(ua)")
            let plane = run(["query", snapshot, "planes", "--id", "N2"])
            #expect(try parseJSON(plane.stdout) == .object(["id": "N2", "seats": 55, "speed": 432, "model": "E \"145\""]))
            let flight = run(["query", snapshot, "flights", "--id", "3"])
            #expect(try parseJSON(flight.stdout) == .object(["id": 3, "carrier": "UA", "tailnum": "N9", "dep_delay": nil, "note": "multi\nline"]))

            let exported = run(["export", snapshot, "--format", "csv", "--output", scratch.path("out")])
            #expect(exported.status == 0, "\(exported)")
            #expect(scratch.contents("out") == [".entity-store-export", "flights.csv", "planes.csv"])
            let rows = try parseCSV(String(decoding: try scratch.read("out/planes.csv"), as: UTF8.self))
            let header = try #require(rows.first)
            let byID = rows.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
            #expect(byID == [
                ["id": "N1", "seats": "150", "speed": "", "model": "A320, neo"],
                ["id": "N2", "seats": "55", "speed": "432", "model": "E \"145\""],
            ])
            // A CSV export imports again to the same records.
            let again = run(["import", scratch.path("out"), "--output", scratch.path("again.sqlite")])
            #expect(again.status == 0, "\(again)")
            let first = run(["export", snapshot]), second = run(["export", scratch.path("again.sqlite")])
            #expect(try parseJSON(first.stdout) == parseJSON(second.stdout))
        }
    }

    @Test func aSingleCSVFileNamesItsTable() throws {
        try withScratch { scratch in
            let file = try scratch.write("data.csv", "x\n1\n2\n")
            let snapshot = scratch.path("s.sqlite")
            #expect(run(["import", file, "--output", snapshot, "--table", "numbers"]).status == 0)
            #expect(run(["query", snapshot, "numbers", "--count"]).stdout == "2\n")
            expectFailure(run(["import", try scratch.write("bad.csv", "a,b\n1,2,3\n"), "--output", scratch.path("b.sqlite")]),
                          mentioning: ["bad.csv", "line 2", "3 fields", "header names 2"])
        }
    }
}
