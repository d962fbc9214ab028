import EntityStore

/// The embedded demo dataset: authors, books and reviews, related by ID.
public enum DemoDataset {
    /// A writer.
    public struct Author: Entity {
        /// The author's ID.
        public var id: Int
        /// The author's name.
        public var name: String
        /// The author's country.
        public var country: String
    }

    /// A book by one author.
    public struct Book: Entity {
        /// The book's ID.
        public var id: Int
        /// The book's title.
        public var title: String
        /// Its ISBN, unique.
        public var isbn: String
        /// The author's ID.
        public var authorID: Int
        /// The publication year.
        public var year: Int
        /// The average rating, 0 to 5.
        public var rating: Double
    }

    /// A review of one book.
    public struct Review: Entity {
        /// The review's ID.
        public var id: Int
        /// The reviewed book's ID.
        public var bookID: Int
        /// Stars, 1 to 5.
        public var stars: Int
        /// The review text.
        public var text: String
    }

    /// The authors table.
    public static let authors = Table<Author>("authors").grouped(\.country)
    /// The books table: unique ISBN, ordered year, cascade from authors.
    public static let books = Table<Book>("books")
        .unique(\.isbn)
        .ordered(\.year)
        .ordered(\.rating)
        .references(\.authorID, to: authors, onDelete: .cascade)
    /// The reviews table, cascading from books.
    public static let reviews = Table<Review>("reviews")
        .references(\.bookID, to: books, onDelete: .cascade)

    /// The schema of the three tables.
    public static func schema() throws(EntityStoreError) -> Schema {
        try Schema {
            authors
            books
            reviews
        }
    }

    /// Deterministic generated rows: `size` entities in all, split 5% authors, 35% books,
    /// 60% reviews.
    public static func generate(size: Int, seed: UInt64 = 42) -> (authors: [Author], books: [Book], reviews: [Review]) {
        var random = DemoRandom(seed: seed)
        let authorCount = max(1, size / 20)
        let bookCount = max(1, size * 7 / 20)
        let reviewCount = max(0, size - authorCount - bookCount)
        let countries = ["NO", "FR", "JP", "BR", "US", "NG", "IN", "DE"]
        let words = ["night", "river", "glass", "winter", "empire", "garden", "signal", "harbor", "machine", "silence"]
        let authors = (0..<authorCount).map { id in
            Author(id: id, name: "Author \(id)", country: countries[Int(random.next() % UInt64(countries.count))])
        }
        let books = (0..<bookCount).map { id in
            let first = words[Int(random.next() % UInt64(words.count))]
            let second = words[Int(random.next() % UInt64(words.count))]
            return Book(
                id: id, title: "The \(first) of \(second)", isbn: "978-\(1_000_000_000 + id)",
                authorID: Int(random.next() % UInt64(authorCount)), year: 1900 + Int(random.next() % 125),
                rating: Double(random.next() % 500) / 100)
        }
        let reviews = (0..<reviewCount).map { id in
            Review(
                id: id, bookID: Int(random.next() % UInt64(bookCount)), stars: 1 + Int(random.next() % 5),
                text: "Review \(id) of a \(words[Int(random.next() % UInt64(words.count))]) book")
        }
        return (authors, books, reviews)
    }
}

/// A small, fast, deterministic random number generator (SplitMix64) for the demo data.
struct DemoRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
