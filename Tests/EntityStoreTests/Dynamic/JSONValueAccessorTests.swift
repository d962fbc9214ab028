import Testing
@testable import EntityStore

@Suite("JSONValue accessors and RecordID")
struct JSONValueAccessorTests {
    @Test("accessors return values only for their own kind")
    func accessors() {
        let value: JSONValue = ["n": 3, "d": 2.5, "s": "text", "b": true, "z": nil, "a": [10, 20]]
        #expect(value["n"]?.intValue == 3)
        #expect(value["n"]?.doubleValue == 3)
        #expect(value["d"]?.doubleValue == 2.5)
        #expect(value["d"]?.intValue == nil)
        #expect(value["s"]?.stringValue == "text")
        #expect(value["s"]?.boolValue == nil)
        #expect(value["b"]?.boolValue == true)
        #expect(value["b"]?.intValue == nil)
        #expect(value["z"]?.isNull == true)
        #expect(value["n"]?.isNull == false)
        #expect(value["missing"] == nil)
        #expect(value["a"]?[1] == 20)
        #expect(value["a"]?[2] == nil)
        #expect(value["a"]?[-1] == nil)
        #expect(value[0] == nil)
        #expect(JSONValue.integer(1)["key"] == nil)
        #expect(value["a"]?.arrayValue?.count == 2)
        #expect(value.objectValue?.count == 6)
        #expect(JSONValue.string("x").arrayValue == nil)
        #expect(JSONValue.string("x").objectValue == nil)
        #expect(JSONValue.string("x").doubleValue == nil)
    }

    @Test("literals produce the matching kinds")
    func literals() {
        let float: JSONValue = 2.0
        let integer: JSONValue = 2
        #expect(float == .double(2))
        #expect(integer == .integer(2))
        #expect(JSONValue(nilLiteral: ()) == .null)
        #expect(JSONValue(booleanLiteral: false) == .bool(false))
        #expect(JSONValue(stringLiteral: "s") == .string("s"))
        #expect(JSONValue(arrayLiteral: 1, "a") == .array([.integer(1), .string("a")]))
    }

    @Test("record IDs sort integers first and print as JSON")
    func recordIDs() {
        let ids: [RecordID] = ["b", 10, "a", -3, "10"]
        #expect(ids.sorted() == [-3, 10, "10", "a", "b"])
        #expect(RecordID.integer(42).description == "42")
        #expect(RecordID.string("42").description == "\"42\"")
        #expect(RecordID.string("a\"b").description == "\"a\\\"b\"")
        #expect(RecordID(JSONValue.integer(5)) == .integer(5))
        #expect(RecordID(JSONValue.string("k")) == .string("k"))
        #expect(RecordID(JSONValue.double(5)) == nil)
        #expect(RecordID(JSONValue.null) == nil)
        #expect(RecordID.string("k").jsonValue == "k")
        #expect(RecordID.integer(5).jsonValue == 5)
    }
}
