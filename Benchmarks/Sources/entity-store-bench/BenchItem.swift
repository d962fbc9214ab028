import EntityStore

/// The entity every figure is measured on: a realistic row with short and long strings,
/// an optional field and a foreign key with about 100 entities per owner.
struct BenchItem: Entity {
    var id: Int
    var name: String
    var category: String
    var quantity: Int
    var price: Double
    var note: String?
    var ownerID: Int
}

/// The table under test: rows by ID plus a grouped index on the owner.
let items = Table<BenchItem>("items").grouped(\.ownerID)

/// SplitMix64: a tiny, fixed-seed generator, so every run sees the same data.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range`, by modulo (the bias is irrelevant here).
    mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

/// The generated data of one size: the entities (IDs 1...N in order) and the fixed
/// random sequences the read figures replay.
struct Dataset {
    let size: Int
    let entities: [BenchItem]
    /// Distinct owner IDs are 1...ownerCount (about N / 100).
    let ownerCount: Int
    /// IDs to look up, uniformly random over 1...N.
    let lookupIDs: [Int]
    /// Owner keys to query, uniformly random over 1...ownerCount.
    let ownerKeys: [Int]

    static let adjectives = ["Sturdy", "Compact", "Deluxe", "Portable", "Vintage", "Modular", "Quiet", "Rugged"]
    static let nouns = ["Widget", "Bracket", "Lantern", "Kettle", "Backpack", "Monitor", "Trowel", "Speaker"]
    static let categories = [
        "garden", "kitchen", "office", "outdoor", "audio", "lighting", "storage", "tools",
        "travel", "sports", "toys", "books", "bath", "decor", "pets", "auto",
    ]
    static let notes = [
        "restock before the end of the month", "fragile: ship in double boxes",
        "discontinued by the manufacturer", "customer favourite, keep visible",
    ]

    init(size: Int, seed: UInt64 = 0x5EED_0001) {
        precondition(size > 0)
        self.size = size
        var rng = SplitMix64(seed: seed)
        let owners = max(1, size / 100)
        ownerCount = owners
        var entities: [BenchItem] = []
        entities.reserveCapacity(size)
        for id in 1...size {
            let adjective = Self.adjectives[rng.int(in: 0...Self.adjectives.count - 1)]
            let noun = Self.nouns[rng.int(in: 0...Self.nouns.count - 1)]
            let hasNote = rng.int(in: 0...9) < 3
            entities.append(BenchItem(
                id: id,
                name: "\(adjective) \(noun) \(id)",
                category: Self.categories[rng.int(in: 0...Self.categories.count - 1)],
                quantity: rng.int(in: 0...999),
                price: Double(rng.int(in: 1...100_000)) / 100,
                note: hasNote ? Self.notes[rng.int(in: 0...Self.notes.count - 1)] + " (#\(id))" : nil,
                ownerID: rng.int(in: 1...owners)))
        }
        self.entities = entities
        lookupIDs = (0..<min(size, 1_000_000)).map { _ in rng.int(in: 1...size) }
        ownerKeys = (0..<1_000).map { _ in rng.int(in: 1...owners) }
    }
}
