import HLSKit

/// Sends requests to the origin. The publisher calls `send` from any thread; `completion` is
/// called exactly once, on any thread.
public protocol PublishTransport: Sendable {
    func send(_ request: PublishRequest, completion: @escaping @Sendable (PublishResponse) -> Void)
}
