@testable import EntityStoreCommands
import EntityStoreTestSupport
import Foundation
import Testing

@Suite("The interactive shell", .threadsOfItsOwn)
struct ShellTests {
    @Test func answersLineByLineWithTimings() throws {
        try withScratch { scratch in
            let input = try scratch.write("data.json", #"{"t": [{"id": 1, "x": 5}, {"id": 2, "x": 7.0}, {"id": 3, "x": null}]}"#)
            let snapshot = scratch.path("s.sqlite")
            #expect(run(["import", input, "--output", snapshot]).status == 0)
            let script = """
                t --where x>=5 --count
                query t --where 'x is null' --fields id
                t --where nosuch=1

                "unclosed
                t --sort x --desc --limit 1 --format csv
                quit
                t --count
                """
            let result = run(["shell", snapshot, "--quiet"], stdin: Data(script.utf8))
            #expect(result.status == 0, "\(result)")
            #expect(result.outputLines == ["2", "{\"id\":3}", "id,x", "2,7.0"], "\(result)")
            let errors = result.errorLines
            #expect(errors.first?.hasPrefix("loaded ") == true, "\(result)")
            #expect(errors.contains { $0.contains("no field 'nosuch'") })
            #expect(errors.contains { $0.contains("double quote is not closed") })
            // A busy machine may take a second: "(1.20 s)".
            #expect(errors.filter { $0.hasPrefix("(") && ($0.hasSuffix(" ms)") || $0.hasSuffix(" s)")) }.count == 3, "\(errors)")
        }
    }

    /// A field both null and missing in some rows gives its table the format's hidden
    /// column of missing fields: `tables` lists fields only, and `inspect` marks it.
    @Test func theHiddenColumnIsNoField() throws {
        try withScratch { scratch in
            let input = try scratch.write("data.json", #"{"t": [{"id": 1, "x": 5}, {"id": 2, "x": null}, {"id": 3}]}"#)
            let snapshot = scratch.path("s.sqlite")
            #expect(run(["import", input, "--output", snapshot]).status == 0)
            let shell = run(["shell", snapshot, "--quiet"], stdin: Data("tables\n".utf8))
            #expect(shell.outputLines == ["t: 3 records; fields id, x"], "\(shell)")
            let inspect = run(["inspect", snapshot])
            #expect(inspect.outputLines.contains("  column entitystore_absent: json, nullable (hidden: the fields each row lacks)"), "\(inspect)")
        }
    }

    @Test(arguments: [
        ("a b  c", ["a", "b", "c"]),
        ("t --where 'x is null'", ["t", "--where", "x is null"]),
        (#"t --where "name=\"A B\"""#, ["t", "--where", #"name="A B""#]),
        (#"a\ b"#, ["a b"]),
        ("", []),
    ])
    func wordsSplitAsAShellWould(_ line: String, _ words: [String]) throws {
        #expect(try ShellWords.split(line) == words)
    }

    @Test func lineEditingAndHistory() {
        var editor = LineEditor(history: ["first", "second"])
        var decoder = KeyDecoder()
        func type(_ bytes: [UInt8]) -> [LineEditor.Outcome] {
            bytes.compactMap { decoder.feed($0) }.map { editor.handle($0) }
        }
        // Typing, moving left, inserting, deleting backwards; UTF-8 characters are one key.
        _ = type(Array("héllo".utf8))
        _ = type([0x1B, UInt8(ascii: "["), UInt8(ascii: "D")])  // left
        _ = type([0x7F])  // backspace removes the second 'l'
        _ = type(Array("L".utf8))
        #expect(editor.line == "hélLo")
        #expect(type([0x01]).last == .editing && editor.cursor == 0)  // Ctrl-A
        _ = type([0x1B, UInt8(ascii: "["), UInt8(ascii: "3"), UInt8(ascii: "~")])  // delete
        #expect(editor.line == "élLo")
        // Up recalls history, down returns to the draft.
        _ = type([0x1B, UInt8(ascii: "["), UInt8(ascii: "A")])
        #expect(editor.line == "second")
        _ = type([0x1B, UInt8(ascii: "["), UInt8(ascii: "A")])
        #expect(editor.line == "first")
        _ = type([0x1B, UInt8(ascii: "["), UInt8(ascii: "B")])
        _ = type([0x1B, UInt8(ascii: "["), UInt8(ascii: "B")])
        #expect(editor.line == "élLo")
        #expect(type([0x0D]) == [.submitted("élLo")])
        #expect(editor.history == ["first", "second", "élLo"])
        _ = type(Array("x".utf8))
        #expect(type([0x03]) == [.cancelled] && editor.line.isEmpty)
        #expect(type([0x04]) == [.finished])
    }
}
