import Foundation

/// How long to wait before retrying a request that failed in a way that may pass: exponential from
/// `initialSeconds`, doubling per attempt up to `maximumSeconds`, unless the server said when.
public struct Backoff: Sendable, Equatable {
    public var initialSeconds: Double
    public var maximumSeconds: Double
    /// A server's Retry-After is honoured up to this, so a bad header cannot park a request for hours.
    public var maximumRetryAfterSeconds: Double

    public init(initialSeconds: Double = 0.25, maximumSeconds: Double = 8, maximumRetryAfterSeconds: Double = 60) {
        self.initialSeconds = initialSeconds
        self.maximumSeconds = maximumSeconds
        self.maximumRetryAfterSeconds = maximumRetryAfterSeconds
    }

    /// The wait after the `failedAttempts`-th failure (1 for the first).
    public func delaySeconds(afterFailedAttempts failedAttempts: Int, retryAfterSeconds: Double? = nil) -> Double {
        if let retryAfterSeconds {
            return min(max(0, retryAfterSeconds), maximumRetryAfterSeconds)
        }
        // The exponent is capped so that a long outage cannot overflow the power of two.
        let doublings = min(max(0, failedAttempts - 1), 30)
        return min(initialSeconds * Double(1 << doublings), maximumSeconds)
    }

    /// A Retry-After value (RFC 9110 10.2.3): delay-seconds or an HTTP-date, as seconds from `now`.
    public static func retryAfterSeconds(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 {
            return Double(seconds)
        }
        guard let date = httpDateFormatter.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// IMF-fixdate, the HTTP-date form servers must send.
    private static let httpDateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()
}
