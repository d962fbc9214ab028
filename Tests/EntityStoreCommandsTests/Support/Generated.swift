import Foundation

/// Generated input for the large tests: `count` records across `users` (integer ids),
/// `orders` (integer ids, doubles, nested arrays) and `tags` (string ids), as one JSON object.
func generatedInput(records count: Int) -> (text: String, counts: [String: Int]) {
    let users = count / 4, tags = count / 4, orders = count - users - tags
    var text = ""
    text.reserveCapacity(count * 90)
    text += "{\"users\": [\n"
    for id in 0..<users {
        if id > 0 { text += ",\n" }
        text += "{\"id\": \(id), \"name\": \"user \(id) ✓\", \"score\": \(Double(id) / 4), \"active\": \(id % 3 == 0)"
        text += id % 5 == 0 ? ", \"nickname\": null}" : "}"
    }
    text += "],\n\"orders\": [\n"
    for id in 0..<orders {
        if id > 0 { text += ",\n" }
        text += "{\"id\": \(id * 7 - 1_000), \"user\": \(id % max(users, 1)), \"total\": \(id % 100).0, \"items\": [\(id % 10), \"x\(id % 3)\"], \"meta\": {\"n\": \(id)}}"
    }
    text += "],\n\"tags\": [\n"
    for id in 0..<tags {
        if id > 0 { text += ",\n" }
        text += "{\"id\": \"tag-\(id)\", \"weight\": \(id % 2 == 0 ? "1" : "1.5")}"
    }
    text += "]}\n"
    return (text, ["users": users, "orders": orders, "tags": tags])
}
