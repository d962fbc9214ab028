import EntityStore
import EntityStoreTestSupport
import Foundation
import Testing

/// `query` values read as the field's kind, the spellings people type, names given twice,
/// and names spelt another (canonically equivalent) way: a right answer or one clear line,
/// never a silent zero.
@Suite("Query values and names as people type them", .threadsOfItsOwn)
struct QueryOperandTests {
    /// Zip codes as string ids (some look like integers), a field of codes, numbers,
    /// booleans and a mixed field; flights reference the zips.
    static let dataset = #"""
        {"zips": [{"id": "10001", "code": "10001", "n": 5, "flag": true, "mixed": 1},
                  {"id": "02134", "code": "A1", "n": 7, "flag": false, "mixed": "1"},
                  {"id": "x", "code": "7.50", "n": 9223372036854775807, "flag": null}],
         "flights": [{"id": 1, "zip": "10001"}, {"id": 2, "zip": "02134"}]}
        """#

    private func snapshot(_ scratch: Scratch) throws -> String {
        let input = try scratch.write("zips.json", Self.dataset)
        let path = scratch.path("zips.sqlite")
        let result = run(["import", input, "--output", path, "--relation", "flights.zip=zips"])
        #expect(result.status == 0, "\(result)")
        return path
    }

    private func count(_ path: String, _ table: String, _ conditions: String...) -> RunResult {
        run(["query", path, table, "--count"] + conditions.flatMap { ["--where", $0] })
    }

    /// On a field of strings an unquoted value is its text, and so is `--id` on a table
    /// of string ids: `10001` finds "10001", not the integer 10001 that nothing holds.
    @Test func valuesOnStringFieldsAreText() throws {
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let found = run(["query", path, "zips", "--id", "10001", "--fields", "id,code"])
            #expect(found.status == 0 && found.stdout == "{\"id\":\"10001\",\"code\":\"10001\"}\n", "\(found)")
            #expect(run(["query", path, "zips", "--id", "02134", "--fields", "id"]).stdout == "{\"id\":\"02134\"}\n")
            expectFailure(run(["query", path, "zips", "--id", "99"]), mentioning: ["no record with id \"99\" in 'zips'"])
            for (condition, expected) in [
                ("code=10001", 1), ("code=\"10001\"", 1), ("code=in:10001,A1", 2), ("code!=10001", 2), ("code=7.50", 1),
                ("code>5", 2), ("id=10001", 1), ("id<1", 1),
            ] {
                let result = count(path, "zips", condition)
                #expect(result.status == 0 && result.stdout == "\(expected)\n", "\(condition): \(result)")
            }
            // A mixed field keeps the JSON reading: 1 is the integer, "1" the string.
            #expect(count(path, "zips", "mixed=1").stdout == "1\n")
            #expect(count(path, "zips", "mixed=\"1\"").stdout == "1\n")
            // The shell reads values the same way.
            let shell = run(["shell", path, "--quiet"], stdin: Data("zips --where code=10001 --count\nzips --id 02134 --fields id\n".utf8))
            #expect(shell.outputLines == ["1", "{\"id\":\"02134\"}"], "\(shell)")
        }
    }

    /// On a field of numbers or booleans, a value of another kind could never match: the
    /// query says so instead of answering nothing.
    @Test(arguments: [
        ("n>abc", ["--where n>abc", "field 'n' holds numbers", "\"abc\""]),
        ("n=NaN", ["field 'n' holds numbers", "\"NaN\""]),
        ("n=in:5,x", ["field 'n' holds numbers", "\"x\""]),
        ("n=true", ["field 'n' holds numbers"]),
        ("n<99999999999999999999", ["99999999999999999999 is beyond the range of a 64-bit integer", "99999999999999999999.0"]),
        ("n<1e400", ["1e400 is beyond the range of a double"]),
        ("flag=yes", ["field 'flag' holds true or false", "\"yes\""]),
        ("flag=1", ["field 'flag' holds true or false"]),
    ])
    func valuesOfAnotherKindAreErrors(_ condition: String, _ mentions: [String]) throws {
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let result = count(path, "zips", condition)
            expectFailure(result, mentioning: mentions)
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func aDoubleBeyondTheIntegersComparesByValue() throws {
        try withScratch { scratch in
            let path = try snapshot(scratch)
            #expect(count(path, "zips", "n<99999999999999999999.0").stdout == "3\n")
            #expect(count(path, "zips", "n>9223372036854775806").stdout == "1\n")
        }
    }

    /// `==` and `<>` as `=` and `!=`, and spaces around the operator and list items.
    @Test(arguments: [
        ("n == 5", "n=5"), ("n<>5", "n!=5"), ("n <> 5", "n!=5"), ("n >= 7", "n>=7"), (" n < 7 ", "n<7"),
        ("n = in: 5, 7", "n=in:5,7"), ("code = A1", "code=A1"), ("flag == false", "flag=false"), ("n = null", "n is null"),
    ])
    func operatorSpellings(_ typed: String, _ canonical: String) throws {
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let expected = count(path, "zips", canonical)
            #expect(expected.status == 0, "\(expected)")
            let result = count(path, "zips", typed)
            #expect(result.status == 0 && result.stdout == expected.stdout, "\(typed): \(result)")
        }
    }

    /// A name given twice would print one column twice, or one JSON member twice.
    @Test(arguments: [
        (["--fields", "id,n,id"], "'id' is named twice"),
        (["--count", "--sum", "n", "--sum", "n"], "sum(n) is asked twice"),
        (["--join", "zip", "--join", "zip"], "--join zip: the relation is joined twice"),
    ])
    func namesGivenTwiceAreRefused(_ arguments: [String], _ mention: String) throws {
        try withScratch { scratch in
            let path = try snapshot(scratch)
            let table = arguments.contains("--join") ? "flights" : "zips"
            expectFailure(run(["query", path, table] + arguments), mentioning: [mention])
        }
    }

    /// A table or field named with another spelling of the same characters (a decomposed
    /// `é` for a precomposed one) is found, and SQL reads it by the snapshot's spelling.
    @Test func canonicallyEquivalentNamesFindTheStoredOnes() throws {
        try withScratch { scratch in
            let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
            let input = try scratch.write("cafe.json", JSONValue.object([
                composed: .array([
                    .object(["id": 1, "pr\u{E9}x": 3, "n": 1]),
                    .object(["id": 2, "pr\u{E9}x": 4, "n": 1]),
                ]),
            ]).serialized())
            let path = scratch.path("cafe.sqlite")
            #expect(run(["import", input, "--output", path]).status == 0)
            let field = "pre\u{301}x"
            let records = run(["query", path, decomposed, "--where", "\(field)>3", "--fields", "id,\(field)", "--sort", field])
            #expect(records.status == 0 && records.stdout == "{\"id\":2,\"pr\u{E9}x\":4}\n", "\(records)")
            #expect(count(path, decomposed, "\(field)>=3").stdout == "2\n")
            let grouped = run(["query", path, decomposed, "--group-by", "n", "--sum", field])
            #expect(grouped.status == 0 && grouped.stdout == "{\"n\":1,\"sum(pr\u{E9}x)\":7}\n", "\(grouped)")
            let exported = run(["export", path, "--table", decomposed, "--table", composed])
            #expect(exported.status == 0, "\(exported)")
            #expect(try parseJSON(exported.stdout) == parseJSON(run(["export", path]).stdout), "one table, once")
        }
    }
}
