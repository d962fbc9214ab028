import Foundation

/// Exact decimal text arithmetic, for the instants of `date` columns and the doubles of
/// `number` columns: a `Double` is written as the shortest digits that read back as it,
/// and read back with a correctly rounded conversion, so nothing is lost.
package struct DecimalText: Equatable, Sendable {
    package var negative: Bool
    /// The magnitude's digits (0...9), most significant first, `scale` of them after the point.
    package var digits: [UInt8]
    package var scale: Int

    /// Seconds between 1970-01-01 and 2001-01-01.
    package static let referenceOffset = DecimalText(negative: false, digits: [9, 7, 8, 3, 0, 7, 2, 0, 0], scale: 0)

    package init(negative: Bool, digits: [UInt8], scale: Int) {
        self.negative = negative
        self.digits = digits
        self.scale = scale
    }

    /// Parses `-12.5`, `1e-05`, `1.2345e+20` (what Swift prints for a `Double`, and what
    /// PostgreSQL prints for a `NUMERIC`). Nil for anything else.
    package init?(_ text: some StringProtocol) {
        var negative = false
        var digits: [UInt8] = []
        var scale = 0
        var exponent = 0
        var seenPoint = false
        var bytes = Substring(text).utf8[...]
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var sawDigit = false
        while let byte = bytes.first {
            if byte >= 48 && byte <= 57 {
                digits.append(byte - 48)
                if seenPoint { scale += 1 }
                sawDigit = true
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                guard let value = Int(String(decoding: bytes.dropFirst(), as: UTF8.self)), abs(value) < 100_000 else { return nil }
                exponent = value
                bytes = bytes[bytes.endIndex...]
                break
            } else {
                return nil
            }
            bytes = bytes.dropFirst()
        }
        guard sawDigit else { return nil }
        scale -= exponent
        if scale < 0 {
            digits.append(contentsOf: repeatElement(0, count: -scale))
            scale = 0
        }
        self.init(negative: negative, digits: digits, scale: scale)
        normalize()
    }

    /// Trailing fractional zeros and leading zeros removed; zero is not negative.
    private mutating func normalize() {
        while scale > 0, digits.last == 0 {
            digits.removeLast()
            scale -= 1
        }
        let leading = digits.prefix(while: { $0 == 0 }).count
        let removable = min(leading, digits.count - scale)
        if removable > 0 { digits.removeFirst(removable) }
        if digits.allSatisfy({ $0 == 0 }) { negative = false }
    }

    /// `self + other`, exact.
    package func adding(_ other: DecimalText) -> DecimalText {
        let scale = max(self.scale, other.scale)
        var a = digits + [UInt8](repeating: 0, count: scale - self.scale)
        var b = other.digits + [UInt8](repeating: 0, count: scale - other.scale)
        let width = max(a.count, b.count) + 1
        a.insert(contentsOf: repeatElement(0, count: width - a.count), at: 0)
        b.insert(contentsOf: repeatElement(0, count: width - b.count), at: 0)
        var result: DecimalText
        if negative == other.negative {
            var carry: UInt8 = 0
            var sum = [UInt8](repeating: 0, count: width)
            for index in stride(from: width - 1, through: 0, by: -1) {
                let total = a[index] + b[index] + carry
                sum[index] = total % 10
                carry = total / 10
            }
            result = DecimalText(negative: negative, digits: sum, scale: scale)
        } else {
            let aIsLarger = a.lexicographicallyPrecedes(b) == false
            let (large, small) = aIsLarger ? (a, b) : (b, a)
            var borrow: Int = 0
            var difference = [UInt8](repeating: 0, count: width)
            for index in stride(from: width - 1, through: 0, by: -1) {
                var value = Int(large[index]) - Int(small[index]) - borrow
                borrow = value < 0 ? 1 : 0
                if value < 0 { value += 10 }
                difference[index] = UInt8(value)
            }
            result = DecimalText(negative: aIsLarger ? negative : other.negative, digits: difference, scale: scale)
        }
        result.normalize()
        return result
    }

    /// `-self`.
    package var negated: DecimalText {
        var copy = self
        copy.negative.toggle()
        copy.normalize()
        return copy
    }

    /// Plain decimal text without exponent: `-12.5`, `0.001`, `42`; with
    /// `alwaysFraction`, `42.0`.
    package func text(alwaysFraction: Bool = false) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count + 4)
        if negative { bytes.append(UInt8(ascii: "-")) }
        let whole = digits.count - scale
        if whole <= 0 {
            bytes.append(UInt8(ascii: "0"))
        } else {
            for digit in digits[..<whole] { bytes.append(48 + digit) }
        }
        if scale > 0 {
            bytes.append(UInt8(ascii: "."))
            if whole < 0 { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -whole)) }
            for digit in digits[max(0, whole)...] { bytes.append(48 + digit) }
        } else if alwaysFraction {
            bytes.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0")])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The exact seconds since 1970 of `date` as text: the shortest digits of its
    /// `timeIntervalSinceReferenceDate` plus 978,307,200, added in decimal.
    /// - Throws: `EncodingError` for an infinite or NaN date.
    package static func unixSeconds(of date: Date, path: [any CodingKey]) throws -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, let decimal = DecimalText("\(seconds)") else {
            throw EncodingError.invalidValue(date, .init(codingPath: path, debugDescription: "the date \(seconds) is not finite and cannot be stored"))
        }
        return decimal.adding(referenceOffset).text()
    }

    /// The date whose exact seconds since 1970 `text` holds. Nil if it is not a decimal.
    package static func date(unixSeconds text: some StringProtocol) -> Date? {
        guard let decimal = DecimalText(text) else { return nil }
        let reference = decimal.adding(referenceOffset.negated).text()
        guard let seconds = Double(reference), seconds.isFinite else { return nil }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// A `date` column's value that is no finite `Date`, for errors: "a non-finite date (NaN)".
    package static func nonFiniteDate(_ text: String) -> String {
        "a non-finite date (\(text.count > 40 ? String(text.prefix(40)) + "…" : text))"
    }

    /// The text of a double in a `number` column: plain decimal with a fractional part.
    /// Nil for infinities and NaN, which `NUMERIC` columns hold as text the other way.
    package static func numberText(_ value: Double) -> String? {
        guard value.isFinite, let decimal = DecimalText("\(value)") else { return nil }
        return decimal.text(alwaysFraction: true)
    }
}
