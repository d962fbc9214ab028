import EntityStore
import EntityStoreTesting
import Testing

let generatedAuthors = EntityGenerator<Author> { random, position in
    Author(id: position, name: random.words(1...2))
}

/// Books whose references resolve among `authorCount` authors.
func generatedBooks(authorCount: Int) -> EntityGenerator<Book> {
    EntityGenerator { random, position in
        Book(
            id: 1_000 + position, title: random.words(), authorID: random.int(in: 0..<authorCount),
            editorID: random.optional(0.3) { $0.int(in: 0..<authorCount) }, year: random.int(in: 1900...2024))
    }
}

@Suite("Seeded generators")
struct GeneratorTests {
    @Test("the same seed makes the same entities; another seed others")
    func deterministic() {
        #expect(generatedAuthors.make(20, seed: 7) == generatedAuthors.make(20, seed: 7))
        #expect(generatedAuthors.make(20, seed: 7) != generatedAuthors.make(20, seed: 8))
        #expect(Set(generatedAuthors.make(50, seed: 1).map(\.id)).count == 50)
        var random = SeededRandomness(seed: 3)
        var again = GeneratedCase(seed: 3).randomness
        #expect(random.next() == again.next())
    }

    @Test("generated stores keep their references, survive a round trip, and a cascade is described", arguments: GeneratedCase.seeds(4))
    func property(_ generated: GeneratedCase) throws {
        var random = generated.randomness
        let store = EntityStore(schema: try librarySchema(), checkReferences: true)
        try store.write { tx in
            try tx[authors].insert(contentsOf: generatedAuthors.make(5, using: &random))
            try tx[books].insert(contentsOf: generatedBooks(authorCount: 5).make(30, using: &random))
        }
        #expect(try store.assertRoundTrip())
        let victim = random.int(in: 0..<5)
        try store.assertWrite { tx in
            _ = try tx[authors].remove(victim)
        } expected: { state in
            state[authors].remove(victim)
            state[books].removeAll { $0.authorID == victim }
            for book in state.base[books] where book.editorID == victim && book.authorID != victim {
                state[books][book.id]?.editorID = nil
            }
        }
    }

    @Test("dynamic records with generated fields")
    func dynamic() throws {
        let records = EntityGenerator.records { random, position in
            ["name": .string(random.word()), "score": .integer(Int64(random.int(in: 0...100))), "rank": .integer(Int64(position))]
        }
        let made = records.make(10, seed: 42)
        #expect(made == records.make(10, seed: 42))
        #expect(made.map(\.id) == (0..<10).map { RecordID.integer(Int64($0)) })
        let store = try EntityStore { Table<DynamicRecord>("scores").index(.ordered, field: "score") }
        try store.write { tx in try tx[Table<DynamicRecord>("scores")].insert(contentsOf: made) }
        #expect(try store.assertRoundTrip())
    }
}
