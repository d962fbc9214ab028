extension DateText {
    /// Powers of ten that fit in `UInt64`: 10⁰ ... 10¹⁹.
    static let powersOfTen: [UInt64] = {
        var powers: [UInt64] = [1]
        for _ in 1...19 { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()

    /// The text of the instant `seconds` after 2001-01-01T00:00:00Z (a `Date`'s
    /// `timeIntervalSinceReferenceDate`).
    /// - Throws: ``DateTextError/notFinite(_:)`` for an infinite or NaN value.
    /// - Complexity: see ``string(from:)``.
    package static func string(fromReferenceSeconds seconds: Double) throws(DateTextError) -> String {
        guard seconds.isFinite else { throw .notFinite(seconds) }
        let decimal = ShortestDecimal(seconds)

        // |seconds| = integer part + fraction / 10^fractionWidth, the fraction without
        // trailing zeros (the significand has none).
        var integer: UInt64 = 0
        var wideInteger: WideInteger?
        var fraction: UInt64 = 0
        var fractionWidth = 0
        if decimal.exponent >= 0 {
            let (scaled, overflow) = decimal.exponent < powersOfTen.count
                ? decimal.significand.multipliedReportingOverflow(by: powersOfTen[decimal.exponent])
                : (0, true)
            if overflow {
                wideInteger = WideInteger(
                    digits: Array(String(decimal.significand).utf8), trailingZeros: decimal.exponent, negative: false)
            } else {
                integer = scaled
            }
        } else {
            fractionWidth = -decimal.exponent
            if fractionWidth < powersOfTen.count {
                integer = decimal.significand / powersOfTen[fractionWidth]
                fraction = decimal.significand % powersOfTen[fractionWidth]
            } else {
                fraction = decimal.significand
            }
            if fraction == 0 { fractionWidth = 0 }
        }

        // The Unix time is 978,307,200 + seconds; its floor and the fraction above it. For a
        // negative value with a fraction, the floor is one lower and the fraction is
        // 1 - fraction (its ten's complement).
        let complement = decimal.isNegative && fractionWidth > 0
        var year = Year.small(0)
        var month: Int64 = 0
        var day: Int64 = 0
        var secondOfDay: Int64 = 0
        if wideInteger == nil, integer < 1 << 62 {
            let magnitude = Int64(integer)
            let floor = decimal.isNegative ? unixOffset - magnitude - (complement ? 1 : 0) : unixOffset + magnitude
            let (days, second) = CivilDate.floorDivided(floor, by: 86_400)
            let date = CivilDate.date(days: days)
            (year, month, day, secondOfDay) = (.small(date.year), date.month, date.day, second)
        } else {
            let magnitude = wideInteger ?? WideInteger(magnitude: integer, negative: false)
            var floor = decimal.isNegative ? magnitude.negated : magnitude
            floor = floor + WideInteger(decimal.isNegative ? unixOffset - (complement ? 1 : 0) : unixOffset)
            // The calendar repeats every 400 years: date the remainder, then add the cycles.
            let (eras, remainder) = floor.floorDivided(by: UInt64(CivilDate.secondsPerEra))
            let (days, second) = CivilDate.floorDivided(Int64(remainder), by: 86_400)
            let date = CivilDate.date(days: days)
            var wideYear = eras
            wideYear.multiply(by: 400)
            wideYear = wideYear + WideInteger(date.year)
            year = wideYear.int64Value.map(Year.small) ?? .wide(wideYear)
            (month, day, secondOfDay) = (date.month, date.day, second)
        }

        let fractionDigits = fraction == 0 ? 0 : digitCount(fraction)
        let isNegativeZero = seconds == 0 && seconds.sign == .minus
        let length = year.textLength + 15 + (fractionWidth > 0 ? 1 + fractionWidth : 0) + 6
        return String(unsafeUninitializedCapacity: length) { buffer in
            var position = year.write(into: buffer)
            func put(_ byte: UInt8) {
                buffer[position] = byte
                position += 1
            }
            func putTwoDigits(_ value: Int64) {
                put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / 10))
                put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10))
            }
            put(UInt8(ascii: "-"))
            putTwoDigits(month)
            put(UInt8(ascii: "-"))
            putTwoDigits(day)
            put(UInt8(ascii: "T"))
            putTwoDigits(secondOfDay / 3_600)
            put(UInt8(ascii: ":"))
            putTwoDigits(secondOfDay / 60 % 60)
            put(UInt8(ascii: ":"))
            putTwoDigits(secondOfDay % 60)
            if fractionWidth > 0 {
                put(UInt8(ascii: "."))
                // Leading zeros of the fraction (nines in the complement), then its digits.
                for _ in 0..<(fractionWidth - fractionDigits) { put(UInt8(ascii: complement ? "9" : "0")) }
                var digits = complement ? powersOfTen[fractionDigits] - fraction : fraction
                var end = position + fractionDigits
                while end > position {
                    end -= 1
                    buffer[end] = UInt8(ascii: "0") + UInt8(digits % 10)
                    digits /= 10
                }
                position += fractionDigits
            }
            put(UInt8(ascii: isNegativeZero ? "-" : "+"))
            for byte in "00:00".utf8 { put(byte) }
            return position
        }
    }

    /// The number of decimal digits of a positive value.
    static func digitCount(_ value: UInt64) -> Int {
        var count = 1
        while count < powersOfTen.count, value >= powersOfTen[count] { count += 1 }
        return count
    }

    /// A year as written: four digits for 0...9999, otherwise a sign and at least four.
    enum Year {
        case small(Int64)
        case wide(WideInteger)

        var textLength: Int {
            switch self {
            case .small(let year):
                if (0...9_999).contains(year) { return 4 }
                return 1 + max(4, DateText.digitCount(year.magnitude))
            case .wide(let year):
                return 1 + year.decimalDigitCount
            }
        }

        /// Writes the year from the start of `buffer`; returns the position after it.
        func write(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
            switch self {
            case .small(let year):
                var position = 0
                if !(0...9_999).contains(year) {
                    buffer[0] = UInt8(ascii: year < 0 ? "-" : "+")
                    position = 1
                }
                let width = max(4, DateText.digitCount(year.magnitude))
                var rest = year.magnitude
                for index in stride(from: position + width - 1, through: position, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                return position + width
            case .wide(let year):
                buffer[0] = UInt8(ascii: year.isNegative ? "-" : "+")
                return year.writeDecimalDigits(into: buffer, at: 1)
            }
        }
    }
}

/// A finite `Double`'s shortest round-trip decimal, as Swift's `description` prints it:
/// ± `significand` × 10^`exponent`, the significand without trailing zeros (17 digits at
/// most).
struct ShortestDecimal {
    let isNegative: Bool
    let significand: UInt64
    let exponent: Int

    init(_ value: Double) {
        isNegative = value.sign == .minus
        // `description` is "123.45", "1e-05", "1.2345e+20" or "-0.0" for finite values.
        var text = value.description
        var (significand, exponent) = text.withUTF8(Self.digits)
        if significand == 0 {
            exponent = 0
        } else {
            while significand % 10 == 0 {
                significand /= 10
                exponent += 1
            }
        }
        self.significand = significand
        self.exponent = exponent
    }

    /// The significant digits of a printed number as an integer, and the power of ten that
    /// scales them.
    private static func digits(_ text: UnsafeBufferPointer<UInt8>) -> (significand: UInt64, exponent: Int) {
        var significand: UInt64 = 0
        var exponent = 0
        var afterPoint = false
        var inExponent = false
        var exponentIsNegative = false
        var explicitExponent = 0
        for byte in text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = Int(byte &- UInt8(ascii: "0"))
                if inExponent {
                    explicitExponent = explicitExponent &* 10 &+ digit
                } else if significand != 0 || digit != 0 {
                    significand = significand &* 10 &+ UInt64(digit)
                    if afterPoint { exponent -= 1 }
                } else if afterPoint {
                    // A leading zero after the point ("0.001").
                    exponent -= 1
                }
            case UInt8(ascii: "."):
                afterPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                inExponent = true
            case UInt8(ascii: "-"):
                if inExponent { exponentIsNegative = true }
            default:
                break
            }
        }
        return (significand, exponent + (exponentIsNegative ? -explicitExponent : explicitExponent))
    }
}
