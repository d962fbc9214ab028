import Testing
@testable import EntityStore

/// `fieldReader` must read exactly what the key-path subscript reads, whether it takes the
/// stored-offset path or falls back.
@Suite struct FieldReaderTests {
    struct Inner: Sendable, Equatable { var code: String; var rank: Int8 }
    struct Record: Sendable {
        var flag: Bool
        var name: String
        var inner: Inner
        var score: Double?
        var tags: [String]
        var shout: String { name.uppercased() }
    }
    final class Box: Sendable { let value: Int; init(_ value: Int) { self.value = value } }

    let records = [
        Record(flag: true, name: "ada", inner: Inner(code: "a long code that is not a small string", rank: -3), score: 2.5, tags: ["x"]),
        Record(flag: false, name: "", inner: Inner(code: "b", rank: 127), score: nil, tags: []),
    ]

    @Test func storedFieldsAreReadAtTheirOffset() {
        #expect(MemoryLayout<Record>.offset(of: \Record.inner.rank) != nil)
        for record in records {
            #expect(fieldReader(\Record.flag)(record) == record.flag)
            #expect(fieldReader(\Record.name)(record) == record.name)
            #expect(fieldReader(\Record.inner)(record) == record.inner)
            #expect(fieldReader(\Record.inner.code)(record) == record.inner.code)
            #expect(fieldReader(\Record.inner.rank)(record) == record.inner.rank)
            #expect(fieldReader(\Record.score)(record) == record.score)
            #expect(fieldReader(\Record.tags)(record) == record.tags)
        }
    }

    @Test func otherKeyPathsUseTheSubscript() {
        #expect(MemoryLayout<Record>.offset(of: \Record.shout) == nil)
        #expect(fieldReader(\Record.shout)(records[0]) == "ADA")
        #expect(fieldReader(\Box.value)(Box(42)) == 42)
    }

    @Test func aReadValueOutlivesItsEntity() {
        var reader: String?
        do {
            let record = Record(flag: true, name: String(repeating: "n", count: 100), inner: Inner(code: "c", rank: 1), score: nil, tags: [])
            reader = fieldReader(\Record.name)(record)
        }
        #expect(reader == String(repeating: "n", count: 100))
    }
}
