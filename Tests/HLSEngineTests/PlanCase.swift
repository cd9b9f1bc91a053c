import HLSEngine
import Testing

/// One row of a plan's table: a request edited from a plain one, named for the options it sets.
struct PlanCase<Request: Sendable>: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var edit: @Sendable (inout Request) -> Void

    init(_ name: String, _ edit: @escaping @Sendable (inout Request) -> Void) {
        testDescription = name
        self.edit = edit
    }
}

typealias LiveCase = PlanCase<LiveRequest>
typealias FileCase = PlanCase<FileRequest>
typealias EncryptionCase = PlanCase<EncryptionRequest>

extension PlanCase where Request == LiveRequest {
    /// From the test source into a directory.
    var request: LiveRequest {
        var request = LiveRequest()
        request.video = .test
        request.audio = .test(clockPartsPerMillion: 0)
        request.outputDirectory = "/tmp/stream"
        edit(&request)
        return request
    }
}

extension PlanCase where Request == FileRequest {
    /// From one input into a directory, planned with `folders` as the only paths that are folders.
    func plan(folders: Set<String> = []) throws(PlanError) -> FilePlan {
        var request = FileRequest()
        request.inputs = ["in.mp4"]
        request.outputDirectory = "/tmp/stream"
        edit(&request)
        return try request.plan(isDirectory: { folders.contains($0) })
    }
}
