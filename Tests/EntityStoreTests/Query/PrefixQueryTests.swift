import EntityStore
import EntityStoreTestSupport
import Testing

private struct Word: Entity {
    var id: Int
    var text: String
}

private let indexedWords = Table<Word>("indexedWords").ordered(\.text)
private let plainWords = Table<Word>("plainWords")

/// Pieces that make `String` order and `hasPrefix` disagree on contiguity: combining
/// marks (alone and after a base), precomposed and decomposed forms, ZWJ sequences,
/// emoji modifiers and flags, Devanagari with vowel signs and virama, Hangul jamo that
/// compose, line breaks. Not both spellings of one composed character: the standard
/// library's `<` does not order `"e\u{301}"` against `"\u{E9} "` either way although they
/// differ, so no order (the index's or a sort's) is defined on such keys.
private let pieces = [
    "a", "b", "z", "A", "é", "\u{301}", "\u{308}", "\u{327}", "👩", "👩\u{200D}💻", "\u{200D}", "💻", "😀",
    "👨\u{200D}👩\u{200D}👧", "👍🏽", "🏽", "🇫🇷", "🇫", "क", "\u{93F}", "कि", "ॐ", "\u{94D}", "ष", "\u{1100}", "\u{1161}",
    "\u{11A8}", "가", "\n", "\r", "\r\n", " ",
]

@Suite("Prefix queries on an ordered String index")
struct PrefixQueryTests {
    private func store(with texts: [String]) throws -> EntityStore {
        let store = try EntityStore { indexedWords; plainWords }
        let words = texts.enumerated().map { Word(id: $0.offset + 1, text: $0.element) }
        try store.write { tx in
            try tx[indexedWords].insert(contentsOf: words)
            try tx[plainWords].insert(contentsOf: words)
        }
        return store
    }

    @Test func graphemeClustersThatShareAScalarPrefix() throws {
        let store = try store(with: ["👩a", "👩\u{200D}💻", "👩😀", "कमल", "किताब", "कॐ", "b"])
        let view = store.state[indexedWords]
        #expect(view.query().where(\.text, hasPrefix: "👩").results.map(\.text) == ["👩a", "👩😀"])
        #expect(view.query().where(\.text, hasPrefix: "👩").count == 2)
        #expect(Set(view.query().where(\.text, hasPrefix: "क").results.map(\.text)) == ["कमल", "कॐ"])
        #expect(view.query().where(\.text, hasPrefix: "क").sorted(by: \.text).results.map(\.text) == ["कमल", "कॐ"])
        #expect(view.query().where(\.text, hasPrefix: "कि").results.map(\.text) == ["किताब"])
        #expect(view.query().where(\.text, hasPrefix: "👩").plan.hasPrefix("index lookup"))
    }

    /// The index path and a scan agree on random strings for random prefixes: ones made
    /// of pieces, the empty one, and prefixes of stored keys cut at a scalar or at a
    /// character.
    @Test(arguments: Soak.seeds([31, 32], soak: 31...70))
    func indexPathAgreesWithAScan(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        func text(maxPieces: Int) -> String {
            (0..<Int.random(in: 0...maxPieces, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        let texts = (0..<300).map { _ in text(maxPieces: 4) }
        let store = try store(with: texts)
        let view = store.state[indexedWords], scan = store.state[plainWords]
        for round in 0..<150 {
            let prefix: String
            switch round % 4 {
            case 0: prefix = text(maxPieces: 2)
            case 1:
                let key = texts.randomElement(using: &random)!
                prefix = String(String.UnicodeScalarView(key.unicodeScalars.prefix(Int.random(in: 0...3, using: &random))))
            case 2:
                let key = texts.randomElement(using: &random)!
                prefix = String(key.prefix(Int.random(in: 0...2, using: &random)))
            default: prefix = round % 8 == 3 ? "" : pieces.randomElement(using: &random)!
            }
            let expected = texts.enumerated().filter { $0.element.hasPrefix(prefix) }.map { $0.offset + 1 }
            let indexed = view.query().where(\.text, hasPrefix: prefix)
            let scanned = scan.query().where(\.text, hasPrefix: prefix)
            #expect(indexed.plan.hasPrefix("index lookup") && scanned.plan == "table scan")
            #expect(Set(indexed.ids) == Set(expected), "prefix \(Array(prefix.unicodeScalars))")
            #expect(indexed.count == expected.count && scanned.count == expected.count)
            #expect(scanned.ids == expected)
            // In key order from the index, as the sorted scan gives them.
            let limit = Int.random(in: 1...6, using: &random)
            let top = view.query().where(\.text, hasPrefix: prefix).sorted(by: \.text).limit(limit).results.map(\.text)
            #expect(top == scan.query().where(\.text, hasPrefix: prefix).sorted(by: \.text).limit(limit).results.map(\.text))
            let bottom = view.query().where(\.text, hasPrefix: prefix).sorted(by: \.text, descending: true).limit(limit).results.map(\.text)
            #expect(bottom == scan.query().where(\.text, hasPrefix: prefix).sorted(by: \.text, descending: true).limit(limit).results.map(\.text))
        }
    }
}
