import EntityStore

/// A seeded, deterministic generator of entities for property-style tests.
///
/// It makes the entity for a position (0, 1, 2 …) from a ``SeededRandomness``; the
/// position gives a unique ID, the randomness the other fields. The same seed makes the
/// same entities, so generated cases work as Swift Testing arguments and a failure can
/// be replayed:
///
/// ```swift
/// let generatedBooks = EntityGenerator<Book> { random, position in
///     Book(id: position, title: random.words(), authorID: random.int(in: 0..<10), year: random.int(in: 1900...2024))
/// }
///
/// @Test(arguments: GeneratedCase.seeds(8))
/// func restoresWhatItSaved(_ generated: GeneratedCase) throws {
///     var random = generated.randomness
///     let store = try EntityStore { authors; books }
///     try store.write { tx in try tx[books].insert(contentsOf: generatedBooks.make(20, using: &random)) }
///     try store.assertRoundTrip()
/// }
/// ```
public struct EntityGenerator<E: Entity>: Sendable {
    private let build: @Sendable (inout SeededRandomness, Int) -> E

    /// A generator from `build`, which makes the entity at a position (use the position
    /// for a unique ID).
    public init(_ build: @escaping @Sendable (inout SeededRandomness, Int) -> E) {
        self.build = build
    }

    /// The entity at `position`. O(1) plus `build`.
    public func make(at position: Int, using random: inout SeededRandomness) -> E { build(&random, position) }

    /// `count` entities at positions `first`, `first + 1` …; their IDs are unique when
    /// `build` derives them from the position. O(count) `build` calls.
    public func make(_ count: Int, from first: Int = 0, using random: inout SeededRandomness) -> [E] {
        (first..<(first + Swift.max(0, count))).map { build(&random, $0) }
    }

    /// `count` entities from a fresh generator seeded with `seed`. O(count) `build` calls.
    public func make(_ count: Int, seed: UInt64) -> [E] {
        var random = SeededRandomness(seed: seed)
        return make(count, using: &random)
    }

    /// A generator whose entities are this one's changed by `transform` (which may read
    /// more randomness).
    public func map(_ transform: @escaping @Sendable (inout SeededRandomness, E) -> E) -> EntityGenerator<E> {
        let build = self.build
        return EntityGenerator { random, position in transform(&random, build(&random, position)) }
    }
}

extension EntityGenerator where E == DynamicRecord {
    /// Dynamic records with integer IDs (the position) and the fields `fields` makes.
    public static func records(
        _ fields: @escaping @Sendable (inout SeededRandomness, Int) -> [String: JSONValue]
    ) -> EntityGenerator<DynamicRecord> {
        EntityGenerator { random, position in DynamicRecord(id: .integer(Int64(position)), fields: fields(&random, position)) }
    }
}

/// One generated case of a parameterized test: a seed, shown in the test's name so a
/// failing case can be run again.
public struct GeneratedCase: Sendable, Hashable, CustomStringConvertible {
    /// The seed of the case's randomness.
    public let seed: UInt64

    /// The case for `seed`.
    public init(seed: UInt64) {
        self.seed = seed
    }

    /// A fresh generator seeded with ``seed``. O(1).
    public var randomness: SeededRandomness { SeededRandomness(seed: seed) }

    /// `"seed N"`.
    public var description: String { "seed \(seed)" }

    /// `count` cases with seeds `first`, `first + 1` …: the arguments of a
    /// parameterized test (`@Test(arguments: GeneratedCase.seeds(8))`). O(count).
    public static func seeds(_ count: Int, from first: UInt64 = 0) -> [GeneratedCase] {
        (0..<UInt64(Swift.max(0, count))).map { GeneratedCase(seed: first + $0) }
    }
}
