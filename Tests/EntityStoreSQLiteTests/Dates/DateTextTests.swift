import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

/// The text of `seconds` after the reference date.
private func text(_ seconds: Double) throws -> String {
    try DateText.string(fromReferenceSeconds: seconds)
}

/// The reference seconds of `text`.
private func seconds(_ text: String) throws -> Double {
    try DateText.date(parsing: text).timeIntervalSinceReferenceDate
}

/// Doubles of every shape a `Date` can hold: present-day instants with fractions, tiny and
/// subnormal values, negative ones, far past and future, and any finite bit pattern.
func dateSeconds(_ count: Int, seed: UInt64) -> [Double] {
    var generator = SplitMix64(seed: seed)
    var values: [Double] = []
    values.reserveCapacity(count)
    while values.count < count {
        let value: Double
        switch values.count % 8 {
        case 0:
            // Present day, sub-microsecond fractions: 1990 ... 2060.
            value = Double.random(in: -3.5e8...1.9e9, using: &generator)
        case 1:
            // Whole milliseconds and microseconds, as clocks produce them.
            value = Double(Int64.random(in: -4_000_000_000_000...4_000_000_000_000, using: &generator)) / 1_000
        case 2:
            // Tiny magnitudes, down to subnormals.
            value = Double.random(in: -1...1, using: &generator) * pow(10, -Double(Int.random(in: 0...320, using: &generator)))
        case 3:
            // Subnormal bit patterns.
            value = Double(bitPattern: UInt64.random(in: 1..<(1 << 52), using: &generator) | (Bool.random(using: &generator) ? 1 << 63 : 0))
        case 4:
            // Years 0001 ... 9999.
            value = Double.random(in: -63_114_076_800...252_423_993_600, using: &generator)
        case 5:
            // Far away: up to Double's largest magnitudes.
            value = (Bool.random(using: &generator) ? 1 : -1) * pow(10, Double.random(in: 10...308, using: &generator))
        default:
            // Any finite bit pattern.
            value = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator))
        }
        if value.isFinite { values.append(value) }
    }
    return values
}

@Suite("Date text: exact ISO 8601 in UTC")
struct DateTextTests {
    @Test("known instants have the expected text")
    func knownTexts() throws {
        #expect(try text(0) == "2001-01-01T00:00:00+00:00")
        #expect(try text(-0.0) == "2001-01-01T00:00:00-00:00")
        #expect(try text(0.1) == "2001-01-01T00:00:00.1+00:00")
        #expect(try text(-0.1) == "2000-12-31T23:59:59.9+00:00")
        #expect(try text(-978_307_200) == "1970-01-01T00:00:00+00:00")
        #expect(try DateText.string(from: Date(timeIntervalSince1970: 0.1)) == "1970-01-01T00:00:00.1+00:00")
        // Proleptic Gregorian: distantPast is 0001-01-01 in the Julian calendar Foundation uses then.
        #expect(try text(Date.distantPast.timeIntervalSinceReferenceDate) == "0000-12-30T00:00:00+00:00")
        #expect(try text(Date.distantFuture.timeIntervalSinceReferenceDate) == "4001-01-01T00:00:00+00:00")
        #expect(try text(1e-5) == "2001-01-01T00:00:00.00001+00:00")
        #expect(try text(7e8 + 0.123_456_789) == "2023-03-08T20:26:40.1234568+00:00")
        // Year 0 is 1 BC; years outside 0000...9999 carry a sign.
        #expect(try text(-63_113_904_000) == "0001-01-01T00:00:00+00:00")
        #expect(try text(-63_145_526_400) == "0000-01-01T00:00:00+00:00")
        #expect(try text(-63_145_526_401) == "-0001-12-31T23:59:59+00:00")
        #expect(try text(252_423_993_599) == "9999-12-31T23:59:59+00:00")
        #expect(try text(252_423_993_600) == "+10000-01-01T00:00:00+00:00")
        let tiny = try text(.leastNonzeroMagnitude)
        #expect(tiny == "2001-01-01T00:00:00." + String(repeating: "0", count: 323) + "5+00:00")
        let belowTiny = try text(-.leastNonzeroMagnitude)
        #expect(belowTiny == "2000-12-31T23:59:59." + String(repeating: "9", count: 323) + "5+00:00")
        // Far away, checked against an independent big-integer implementation of the same rules.
        let maximumYear = "5696662766614201840532634457218808711310268494878719592437191018955189335142380037210184304238254695827404370358708914599863763775411516295997154604791996387990830039605852935353198876748299392159293457745855810155556214681316497233319618447307585346011870854954559616530772680454056526118238542"
        #expect(try text(.greatestFiniteMagnitude) == "+\(maximumYear)178064-02-20T17:46:40+00:00")
        #expect(try text(-.greatestFiniteMagnitude) == "-\(maximumYear)174063-11-12T06:13:20+00:00")
        #expect(try text(9.223_372_036_854_776e18) == "+292277026627-12-06T15:33:20+00:00")
        #expect(try text(-9.223_372_036_854_776e18) == "-292277022626-01-27T08:26:40+00:00")
        #expect(try text(1e20) == "+3168873852682-02-22T09:46:40+00:00")
        #expect(try text(-1e20) == "-3168873848681-11-10T14:13:20+00:00")
        #expect(try text(123_456_789_012_345.6) == "+3914190-11-26T23:25:45.6+00:00")
        #expect(try text(-1_000_000_000_000_000.5) == "-31686738-06-29T22:13:19.5+00:00")
    }

    @Test("every finite double comes back with the same bits", arguments: 0..<4)
    func roundTrip(seed: Int) throws {
        let values = dateSeconds(5_000, seed: UInt64(seed))
            + [0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
               -.greatestFiniteMagnitude, 9.223_372_036_854_776e18, -9.223_372_036_854_776e18, 4.611_686_018_427_388e18,
               Date.distantPast.timeIntervalSinceReferenceDate, Date.distantFuture.timeIntervalSinceReferenceDate]
        for value in values {
            let written = try text(value)
            let back = try seconds(written)
            #expect(back.bitPattern == value.bitPattern, "\(value) wrote \(written) and came back as \(back)")
        }
    }

    @Test("for years 0001 to 9999 the text sorts in time order")
    func sortOrder() throws {
        var generator = SplitMix64(seed: 11)
        var values = (0..<4_000).map { _ in Double.random(in: -63_114_076_800...252_423_993_600, using: &generator) }
        // Instants in one second, with fractions of different lengths.
        values += [7e8, 7e8 + 0.5, 7e8 + 0.55, 7e8 + 0.05, 7e8 + 0.999, 7e8 - 1e-7, 7e8 + 1e-7, 0, -0.0, 1e-300, -1e-300]
        let texts = try values.map(text)
        let byTime = zip(values, texts).sorted { $0.0 < $1.0 }.map(\.1)
        #expect(texts.sorted() == byTime)
    }

    @Test("whole seconds agree with SQLite's own calendar")
    func agreesWithSQLite() throws {
        var generator = SplitMix64(seed: 3)
        let unixSeconds = (0..<500).map { _ in Int64.random(in: -62_135_596_800...253_402_300_799, using: &generator) }
            + [-62_135_596_800, 253_402_300_799, 951_782_400, 951_868_800, -2_203_891_200]
        let connection = try SQLiteConnection(path: ":memory:", mode: .readWriteCreate)
        let statement = try connection.prepare("SELECT strftime('%Y-%m-%dT%H:%M:%S+00:00', ?, 'unixepoch')")
        for unix in unixSeconds {
            let expected = try statement.rows([.integer(unix)]).first?.first
            #expect(try .text(text(Double(unix - 978_307_200))) == expected, "unix time \(unix)")
        }
    }

    @Test("hand-written forms are read too")
    func lenientForms() throws {
        let exact = try seconds("2026-11-24T10:00:00.5+00:00")
        #expect(try seconds("2026-11-24T10:00:00.500Z") == exact)
        #expect(try seconds("2026-11-24 10:00:00.5") == exact)
        #expect(try seconds("2026-11-24T10:00:00.5-00:00") == exact)
        #expect(try seconds("2026-11-24") == seconds("2026-11-24T00:00:00+00:00"))
        #expect(try seconds("2026-11-24T10:00") == seconds("2026-11-24T10:00:00+00:00"))
        #expect(try seconds("+2026-11-24T10:00:00Z") == seconds("2026-11-24T10:00:00Z"))
        #expect(try seconds("2024-02-29T00:00:00Z") == seconds("2024-03-01T00:00:00Z") - 86_400)
        #expect(try seconds("2000-02-29T00:00:00Z") == seconds("2000-03-01T00:00:00Z") - 86_400)
    }

    @Test("malformed texts are refused with a reason", arguments: [
        "", "2026", "26-01-01T00:00:00Z", "+123-01-01T00:00:00Z", "2026-1-01T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z", "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-01-00T00:00:00Z",
        "2026-01-01T24:00:00Z", "2026-01-01T10:60:00Z", "2026-01-01T10:00:60Z", "2026-01-01T10:00:00.Z",
        "2026-01-01T10:00:00+01:00", "2026-01-01T10:00:00+0000", "2026-01-01T10:00:00Zjunk", "2026-01-01T10Z",
        "2026-01-01T10:00:00 +00:00", "１２３４-01-01", "2026-01-01T10:00:00.5e3Z",
    ])
    func malformed(text: String) {
        let error = #expect(throws: DateTextError.self) { try seconds(text) }
        guard case .malformed(_, let reason)? = error else {
            Issue.record("expected malformed, got \(String(describing: error))")
            return
        }
        #expect(!reason.isEmpty)
        #expect(error?.description.contains("YYYY-MM-DD") == true)
    }

    @Test("dates beyond Date's range are refused")
    func outOfRange() {
        let huge = "+" + String(repeating: "9", count: 305) + "-01-01T00:00:00Z"
        #expect(throws: DateTextError.outOfRange(text: String(huge.prefix(64)) + "…")) { try seconds(huge) }
        let enormous = "-" + String(repeating: "1", count: 1_000) + "-01-01T00:00:00Z"
        #expect(throws: DateTextError.self) { try seconds(enormous) }
    }

    @Test("infinite and NaN dates cannot be written")
    func nonFinite() {
        for value in [Double.infinity, -.infinity, .nan] {
            let error = #expect(throws: DateTextError.self) { try text(value) }
            #expect(error?.description.contains("not finite") == true)
        }
    }
}
