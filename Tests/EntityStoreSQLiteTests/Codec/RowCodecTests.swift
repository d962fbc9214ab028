import EntityStore
import EntityStoreCodec
import Foundation
import Testing

/// The shared codec on its own, over rows of stored values, in both dialects' forms (the
/// back ends' own tests cover it through real files and a real server).
@Suite("One row codec: encoder, decoder and dynamic values over stored rows")
struct RowCodecTests {
    struct Item: Codable, Equatable {
        var id: Int
        var name: String
        var when: Date
        var tag: UUID
        var data: Data
        var flag: Bool
        var note: String?
        var nested: [String: Int]
        var ratio: Double
        var small: Int8
    }

    static let seconds = CodecDialect(dates: .unixSeconds, numbersAsText: true, nanRefusal: nil, integerColumns: "BIGINT")
    static let iso = CodecDialect(dates: .isoText, numbersAsText: false, nanRefusal: "no NaN here", integerColumns: "64-bit integers")

    /// A decoder over the row `encoder` encoded last.
    private func decoder(for encoder: RowEncoder) -> RowDecoder {
        let layout = RowLayout(table: "items", names: encoder.fields.map(\.name), kinds: encoder.fields.map(\.value.kind))
        return RowDecoder(source: StoredRow(encoder.fields.map(\.value.value)), layout: layout, dialect: encoder.dialect)
    }

    @Test("an entity encodes and decodes back exactly, dates to the bit and -0.0 kept", arguments: [seconds, iso])
    func roundTrip(dialect: CodecDialect) throws {
        let item = Item(
            id: 7, name: "e\u{301}", when: Date(timeIntervalSinceReferenceDate: 0.1234567), tag: UUID(), data: Data([0, 1, 255]),
            flag: true, note: nil, nested: ["a": 1], ratio: -0.0, small: -3)
        let encoder = RowEncoder(dialect: dialect)
        try encoder.encode(item)
        let kinds = Dictionary(uniqueKeysWithValues: encoder.fields.map { ($0.name, $0.value.kind) })
        #expect(kinds["when"] == .date && kinds["tag"] == .uuid && kinds["data"] == .blob && kinds["nested"] == .json)
        #expect(kinds["flag"] == .bool && kinds["note"] == nil)
        let decoder = decoder(for: encoder)
        defer { decoder.finish() }
        let decoded = try Item(from: decoder)
        #expect(decoded == item)
        #expect(decoded.ratio.sign == .minus)
        #expect(decoded.when.timeIntervalSinceReferenceDate.bitPattern == item.when.timeIntervalSinceReferenceDate.bitPattern)
    }

    @Test("NaN is refused where the dialect says so, kept otherwise")
    func nan() throws {
        struct Measure: Codable { var id: Int; var value: Double }
        #expect(throws: EncodingError.self) { try RowEncoder(dialect: Self.iso).encode(Measure(id: 1, value: .nan)) }
        let encoder = RowEncoder(dialect: Self.seconds)
        try encoder.encode(Measure(id: 1, value: .nan))
        #expect(try Measure(from: decoder(for: encoder)).value.isNaN)
    }

    @Test("a stored value that does not fit the Swift type is a specific error naming table and column")
    func misfit() throws {
        struct Small: Codable { var id: Int; var small: Int8 }
        let layout = RowLayout(table: "items", names: ["id", "small"], kinds: [.integer, .integer])
        let decoder = RowDecoder(source: StoredRow([.integer(1), .integer(300)]), layout: layout, dialect: Self.iso)
        do {
            _ = try Small(from: decoder)
            Issue.record("300 decoded as an Int8")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("table 'items' column 'small': 300 does not fit Int8"), "\(context.debugDescription)")
        }
    }

    @Test("dynamic values by kind: numbers as text, dates as exact seconds, and what does not fit")
    func dynamicValues() throws {
        let row = StoredRow([.text("12"), .text("1.5"), .text("978307200.5"), .text("NaN"), .integer(2), .null])
        func value(_ column: Int32, _ kind: ColumnKind?) throws(InvalidStoredValue) -> JSONValue? {
            try StoredJSON.value(row, column, kind: kind, dialect: Self.seconds, table: "t", name: "c\(column)")
        }
        #expect(try value(0, .number) == .integer(12))
        #expect(try value(1, .number) == .double(1.5))
        #expect(try value(2, .date) == .string("2001-01-01T00:00:00.5+00:00"))
        #expect(try value(5, .string) == nil)
        #expect(throws: InvalidStoredValue.self) { try value(3, .date) }
        do {
            _ = try value(4, .bool)
            Issue.record("2 read as a boolean")
        } catch {
            #expect(error.detail == "column 'c4' is declared bool but holds integer")
        }
    }
}
