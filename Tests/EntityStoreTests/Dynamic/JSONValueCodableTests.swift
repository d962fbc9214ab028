import Foundation
import Testing
@testable import EntityStore

@Suite("JSONValue and RecordID Codable")
struct JSONValueCodableTests {
    private struct Row: Codable, Equatable {
        var id: RecordID
        var payload: JSONValue
        var tags: [JSONValue]
    }

    @Test("a value survives Foundation's JSONEncoder and JSONDecoder")
    func foundationRoundTrip() throws {
        let value: JSONValue = [
            "null": nil, "flag": true, "off": false, "count": 42, "ratio": 0.25, "big": .integer(Int64.max),
            "name": "Zoë 😀", "list": [1, "two", 3.5, [nil]], "nested": ["empty": [:], "none": []],
        ]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(try JSONValue(parsing: Array(data)) == value)
    }

    @Test("decoding tries booleans before numbers and integers before doubles")
    func decodingOrder() throws {
        let decoded = try JSONDecoder().decode([JSONValue].self, from: Data("[true, 1, 1.5, \"1\", null]".utf8))
        #expect(decoded == [true, 1, 1.5, "1", nil])
    }

    @Test("an integral double comes back as an integer through Foundation's text, as documented")
    func integralDoubleCaveat() throws {
        let data = try JSONEncoder().encode(JSONValue.double(2.0))
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == .integer(2))
    }

    @Test("JSONValue and RecordID fields work in ordinary Codable types")
    func codableEntity() throws {
        let rows = [
            Row(id: 7, payload: ["score": 9.5], tags: ["x", 1]),
            Row(id: "user-1", payload: nil, tags: []),
        ]
        let data = try JSONEncoder().encode(rows)
        #expect(try JSONDecoder().decode([Row].self, from: data) == rows)
        let text = try #require(String(bytes: data, encoding: .utf8))
        #expect(text.contains("\"id\":7"))
        #expect(text.contains("\"id\":\"user-1\""))
    }

    @Test("values of the wrong kind fail to decode as a RecordID")
    func recordIDTypeMismatch() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([RecordID].self, from: Data("[true]".utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([RecordID].self, from: Data("[1.5]".utf8))
        }
    }

    @Test("a value no decoder kind matches fails to decode as a JSONValue")
    func jsonValueTypeMismatch() {
        #expect(throws: DecodingError.self) {
            try JSONValue(from: OpaqueDecoder())
        }
    }
}

/// A decoder whose single value is of no kind `JSONValue` knows.
private struct OpaqueDecoder: Decoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "opaque"))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "opaque"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        OpaqueContainer()
    }
}

private struct OpaqueContainer: SingleValueDecodingContainer {
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        throw DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "opaque"))
    }
}
