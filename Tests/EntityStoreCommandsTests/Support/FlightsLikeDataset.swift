import EntityStore
import EntityStoreTestSupport
import Foundation

/// A generated dataset with the shape of real flight data: nulls in numeric and string
/// columns, doubles holding integral values, absent fields, string and integer ids, and
/// references to records that do not exist. Deterministic for a seed.
struct FlightsLikeDataset {
    var flights: [[String: JSONValue]] = []
    var carriers: [[String: JSONValue]] = []

    init(seed: UInt64, flightCount: Int = 400) {
        var random = SplitMix64(seed: seed)
        let codes = ["UA", "AA", "B6", "DL", "EV", "MQ", "WN", "9E"]
        // Two carriers are missing from the carriers table: dangling references.
        for code in codes.dropLast(2) {
            carriers.append(["id": .string(code), "name": .string("Carrier \(code) — ✈︎")])
        }
        for id in 1...flightCount {
            var flight: [String: JSONValue] = ["id": .integer(Int64(id))]
            flight["carrier"] = Int.random(in: 0..<20, using: &random) == 0 ? .null : .string(codes.randomElement(using: &random)!)
            switch Int.random(in: 0..<10, using: &random) {
            case 0: flight["dep_delay"] = .null
            case 1: break  // absent
            case 2, 3: flight["dep_delay"] = .double(Double(Int.random(in: -20...300, using: &random)))  // 12.0
            default: flight["dep_delay"] = .integer(Int64.random(in: -20...300, using: &random))
            }
            flight["distance"] = .double(Double(Int.random(in: 100...3000, using: &random)) + [0, 0.5, 0.25].randomElement(using: &random)!)
            if Bool.random(using: &random) { flight["tailnum"] = .string("N\(Int.random(in: 1...50, using: &random))") }
            flight["year"] = .integer(2013)
            flights.append(flight)
        }
    }

    /// `{"flights": [...], "carriers": [...]}` as JSON text.
    var json: String {
        JSONValue.object([
            "flights": .array(flights.map(JSONValue.object)),
            "carriers": .array(carriers.map(JSONValue.object)),
        ]).serialized()
    }

    /// The number of a field's value as a Double, or nil for null, absent and non-numbers.
    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .integer(let number)?: Double(number)
        case .double(let number)?: number
        default: nil
        }
    }
}

