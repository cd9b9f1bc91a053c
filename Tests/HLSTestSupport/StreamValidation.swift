import Foundation

extension ExternalTools {
    /// Runs the built `hlscap validate` on a stream directory, playlist or URL and throws with its
    /// report when it finds an error, so every end-to-end test that makes a stream also checks it
    /// against RFC 8216bis. Warnings (Apple's authoring specification) do not fail. Returns the report.
    @discardableResult
    public static func validateStream(_ target: URL, _ extraArguments: [String] = []) throws -> ProcessResult {
        try validateStream(target.isFileURL ? target.path : target.absoluteString, extraArguments)
    }

    @discardableResult
    public static func validateStream(_ target: String, _ extraArguments: [String] = []) throws -> ProcessResult {
        let arguments = ["validate", target] + extraArguments
        let result = try runHlscap(arguments, timeoutSeconds: defaultTimeoutSeconds)
        guard result.succeeded else {
            throw ExternalToolError.failed(command: "hlscap " + arguments.joined(separator: " "), result: result)
        }
        return result
    }
}
