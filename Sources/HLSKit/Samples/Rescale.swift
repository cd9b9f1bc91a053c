/// `value · multiplier / divisor`, rounded to the nearest integer (halves away from zero), computed
/// without overflow: the integer rescaling every timestamp conversion goes through.
public func rescale(_ value: Int64, multipliedBy multiplier: Int64, dividedBy divisor: Int64) -> Int64 {
    precondition(divisor > 0, "rescaling needs a positive divisor")
    if multiplier == divisor { return value }
    let product = Int128(value) * Int128(multiplier)
    let half = Int128(divisor) / 2
    let rounded = product >= 0 ? (product + half) / Int128(divisor) : (product - half) / Int128(divisor)
    return Int64(rounded)
}
