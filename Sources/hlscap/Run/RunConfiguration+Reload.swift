import HLSConfig
import HLSEngine

extension RunChanges {
    init(from old: RunConfiguration, to new: RunConfiguration) {
        self.init(from: old.streams.map { ($0.name, $0.arguments) }, to: new.streams.map { ($0.name, $0.arguments) },
                  server: (old.serverArguments, new.serverArguments))
    }
}

extension RunConfiguration.Stream {
    /// The stream to start after its earlier run with other settings ended: it continues the folder, as
    /// `live --resume` does, or, `replacing`, starts a new stream in it. A stream that names `resume` or
    /// `overwrite` itself gets what it names.
    func restarted(replacing: Bool) throws -> RunConfiguration.Stream {
        var stream = self
        var words = arguments
        if file.setting("resume") == nil, file.setting("overwrite") == nil {
            words.append(replacing ? "--overwrite" : "--resume")
            stream.resumes = !replacing
        }
        var list = ArgumentList(words)
        stream.options = try LiveOptions(arguments: &list)
        do {
            stream.plan = try stream.options.request.plan()
        } catch {
            throw CommandError(error)
        }
        return stream
    }
}
