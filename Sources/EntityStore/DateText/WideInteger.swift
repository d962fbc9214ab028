/// A signed integer of any size, with just the operations the date text needs for instants
/// beyond `Int64` seconds (years past about ±2.9 × 10¹¹, up to `Double`'s ±1.8 × 10³⁰⁸
/// seconds): build from decimal digits, add, multiply and floor-divide by a small factor,
/// print in decimal.
///
/// Digits are kept in base 10⁹ limbs, least significant first, so decimal input and output
/// need no division. Only dates that far away take this path; it allocates freely.
struct WideInteger: Equatable {
    /// The limb base, 10⁹.
    static let base: UInt64 = 1_000_000_000
    /// The largest factor or divisor ``multiply(by:)`` and ``floorDivided(by:)`` accept:
    /// with it, `limb × factor + carry` and `remainder × base + limb` fit in `UInt64`.
    static let maximumFactor: UInt64 = 16_000_000_000

    /// Whether the value is below zero (never for zero).
    private(set) var isNegative: Bool
    /// The magnitude in base 10⁹, least significant first, without zero limbs at the end
    /// (zero has none).
    private(set) var limbs: [UInt32]

    /// The value `value`.
    init(_ value: Int64) {
        self.init(magnitude: value.magnitude, negative: value < 0)
    }

    /// The value `magnitude`, negated if `negative`.
    init(magnitude: UInt64, negative: Bool) {
        var limbs: [UInt32] = []
        var rest = magnitude
        while rest > 0 {
            limbs.append(UInt32(rest % Self.base))
            rest /= Self.base
        }
        self.init(limbs: limbs, negative: negative)
    }

    /// The value of the ASCII decimal `digits` followed by `trailingZeros` zeros, negated
    /// if `negative`.
    /// - Complexity: O(*n* + `trailingZeros`) in the number of digits.
    init(digits: some Collection<UInt8>, trailingZeros: Int, negative: Bool) {
        // Split the digits with the trailing zeros into limbs from the end: the zeros fill
        // whole limbs first, then shift the digits by what remains.
        let zeroLimbs = trailingZeros / 9
        let shift = trailingZeros % 9
        var limbs = [UInt32](repeating: 0, count: zeroLimbs)
        var limb: UInt64 = 0
        var scale: UInt64 = 1
        for _ in 0..<shift { scale *= 10 }
        for digit in digits.reversed() {
            limb += UInt64(digit &- UInt8(ascii: "0")) * scale
            scale *= 10
            if scale == Self.base {
                limbs.append(UInt32(truncatingIfNeeded: limb))
                limb = 0
                scale = 1
            }
        }
        if scale != 1 || limb != 0 { limbs.append(UInt32(truncatingIfNeeded: limb)) }
        while limbs.last == 0 { limbs.removeLast() }
        self.limbs = limbs
        self.isNegative = negative && !limbs.isEmpty
    }

    /// The value with the opposite sign.
    var negated: WideInteger { WideInteger(limbs: limbs, negative: !isNegative) }

    /// The value as an `Int64`, if it fits.
    var int64Value: Int64? {
        guard limbs.count <= 3 else { return nil }
        var magnitude: UInt64 = 0
        for limb in limbs.reversed() {
            let (scaled, overflow) = magnitude.multipliedReportingOverflow(by: Self.base)
            let (sum, carry) = scaled.addingReportingOverflow(UInt64(limb))
            guard !overflow, !carry else { return nil }
            magnitude = sum
        }
        if isNegative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
        }
        return Int64(exactly: magnitude)
    }

    /// Multiplies by `factor`, at most ``maximumFactor``.
    mutating func multiply(by factor: UInt64) {
        precondition(factor <= Self.maximumFactor, "factor out of range")
        guard factor != 0 else {
            self = WideInteger(0)
            return
        }
        var carry: UInt64 = 0
        for index in limbs.indices {
            let product = UInt64(limbs[index]) * factor + carry
            limbs[index] = UInt32(product % Self.base)
            carry = product / Self.base
        }
        while carry > 0 {
            limbs.append(UInt32(carry % Self.base))
            carry /= Self.base
        }
    }

    /// The quotient rounded toward minus infinity and the remainder, in `0..<divisor`, of
    /// a division by `divisor` (1 up to ``maximumFactor``).
    func floorDivided(by divisor: UInt64) -> (quotient: WideInteger, remainder: UInt64) {
        precondition(divisor > 0 && divisor <= Self.maximumFactor, "divisor out of range")
        var quotient = self
        var remainder: UInt64 = 0
        for index in quotient.limbs.indices.reversed() {
            let current = remainder * Self.base + UInt64(quotient.limbs[index])
            quotient.limbs[index] = UInt32(current / divisor)
            remainder = current % divisor
        }
        while quotient.limbs.last == 0 { quotient.limbs.removeLast() }
        if quotient.limbs.isEmpty { quotient.isNegative = false }
        if isNegative, remainder != 0 {
            // -7 / 2: the magnitude gives -3 rest 1; the floor is -4 rest 1.
            quotient = quotient + WideInteger(-1)
            remainder = divisor - remainder
        }
        return (quotient, remainder)
    }

    static func + (lhs: WideInteger, rhs: WideInteger) -> WideInteger {
        if lhs.isNegative == rhs.isNegative {
            return WideInteger(limbs: addMagnitudes(lhs.limbs, rhs.limbs), negative: lhs.isNegative)
        }
        // Opposite signs: the larger magnitude keeps its sign.
        if compareMagnitudes(lhs.limbs, rhs.limbs) >= 0 {
            return WideInteger(limbs: subtractMagnitudes(lhs.limbs, rhs.limbs), negative: lhs.isNegative)
        }
        return WideInteger(limbs: subtractMagnitudes(rhs.limbs, lhs.limbs), negative: rhs.isNegative)
    }

    /// The number of decimal digits of the magnitude (1 for zero).
    var decimalDigitCount: Int {
        guard let top = limbs.last else { return 1 }
        var digits = 1
        var rest = top / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return digits + 9 * (limbs.count - 1)
    }

    /// Writes the decimal digits of the magnitude (no sign) from `start`, returning the
    /// position after the last one. `buffer` needs ``decimalDigitCount`` bytes from `start`.
    func writeDecimalDigits(into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var end = start + decimalDigitCount
        var position = end
        for (offset, limb) in limbs.enumerated() {
            var value = limb
            // Every limb but the most significant one is written with all its nine digits.
            let width = offset == limbs.count - 1 ? 0 : 9
            var written = 0
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
                written += 1
            } while value > 0 || written < width
        }
        if limbs.isEmpty {
            buffer[start] = UInt8(ascii: "0")
            end = start + 1
        }
        return end
    }

    private init(limbs: [UInt32], negative: Bool) {
        var limbs = limbs
        while limbs.last == 0 { limbs.removeLast() }
        self.limbs = limbs
        self.isNegative = negative && !limbs.isEmpty
    }

    private static func compareMagnitudes(_ lhs: [UInt32], _ rhs: [UInt32]) -> Int {
        if lhs.count != rhs.count { return lhs.count < rhs.count ? -1 : 1 }
        for index in lhs.indices.reversed() where lhs[index] != rhs[index] {
            return lhs[index] < rhs[index] ? -1 : 1
        }
        return 0
    }

    private static func addMagnitudes(_ lhs: [UInt32], _ rhs: [UInt32]) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(max(lhs.count, rhs.count) + 1)
        var carry: UInt64 = 0
        for index in 0..<max(lhs.count, rhs.count) {
            let sum = (index < lhs.count ? UInt64(lhs[index]) : 0) + (index < rhs.count ? UInt64(rhs[index]) : 0) + carry
            result.append(UInt32(sum % base))
            carry = sum / base
        }
        if carry > 0 { result.append(UInt32(carry)) }
        return result
    }

    /// `lhs - rhs` for `lhs` ≥ `rhs`.
    private static func subtractMagnitudes(_ lhs: [UInt32], _ rhs: [UInt32]) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(lhs.count)
        var borrow: UInt64 = 0
        for index in lhs.indices {
            let subtrahend = (index < rhs.count ? UInt64(rhs[index]) : 0) + borrow
            let minuend = UInt64(lhs[index])
            if minuend >= subtrahend {
                result.append(UInt32(minuend - subtrahend))
                borrow = 0
            } else {
                result.append(UInt32(minuend + base - subtrahend))
                borrow = 1
            }
        }
        return result
    }
}
