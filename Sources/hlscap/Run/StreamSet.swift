import Foundation
import HLSBase
import HLSEngine

/// The streams one process runs, by name: each a `LiveRun` on its own thread with its own engine, so that
/// one stream can start, stop or fail without touching the others. A stream that fails ends alone, its
/// error said on one line that starts with its name.
final class StreamSet: Sendable {
    private struct Member {
        var engine: LiveEngine?
        var exitCode: ExitCode?
        /// Asked to end before its engine existed: it does not run.
        var ending = false
        /// Left when its thread is done.
        let done = DispatchGroup()
    }

    private struct State {
        var members: [String: Member] = [:]
        var stopping = false
    }

    private let state = Locked(State())
    private let running = DispatchGroup()

    /// Starts `run` as the stream `name`, which must not be running.
    func start(_ name: String, _ run: LiveRun) {
        let member = Member()
        state.withLock { state in
            precondition(state.members[name] == nil, "stream \(name) runs already")
            state.members[name] = member
        }
        running.enter()
        member.done.enter()
        let thread = Thread { [self] in
            let exitCode: ExitCode
            do {
                try run.run { engine in watch(name, engine) }
                exitCode = .success
            } catch let error as CommandError {
                if !error.message.isEmpty { run.voice.error(error.message) }
                exitCode = error.exitCode
            } catch {
                run.voice.error("\(error)")
                exitCode = .software
            }
            state.withLock { state in
                state.members[name]?.engine = nil
                state.members[name]?.exitCode = exitCode
            }
            member.done.leave()
            running.leave()
        }
        thread.name = "hlscap.stream.\(name)"
        thread.start()
    }

    /// Registers the engine of `name`; in a set that is stopping already, it does not run.
    private func watch(_ name: String, _ engine: LiveEngine) -> LiveRun.Watch {
        let stopping = state.withLock { state in
            state.members[name]?.engine = engine
            return state.stopping || state.members[name]?.ending == true
        }
        return LiveRun.Watch(runs: !stopping)
    }

    /// Ends every stream as `live` ends one (the last segment, ENDLIST, recordings closed), or, `atOnce`,
    /// as a second interrupt ends it.
    func stopAll(atOnce: Bool = false) {
        let engines = state.withLock { state in
            state.stopping = true
            return state.members.values.compactMap(\.engine)
        }
        for engine in engines {
            if atOnce { engine.endAtOnce() } else { engine.requestStop() }
        }
    }

    /// Ends the stream `name` as a stop ends it (the last segment, ENDLIST, its recording closed), waits
    /// until its thread is done and forgets it, its exit status with it: it ended because it was asked to.
    func end(_ name: String) {
        let member = state.withLock { state -> Member? in
            state.members[name]?.ending = true
            return state.members[name]
        }
        guard let member else { return }
        member.engine?.requestStop()
        member.done.wait()
        state.withLock { state in _ = state.members.removeValue(forKey: name) }
    }

    /// Ends the stream `name`, then starts `next()` in its place unless the set is stopping; the set does
    /// not count as ended in between.
    func replace(_ name: String, with next: () -> LiveRun?) {
        running.enter()
        defer { running.leave() }
        end(name)
        guard !state.withLock({ $0.stopping }), let run = next() else { return }
        start(name, run)
    }

    /// A new segment at the next frame in every stream.
    func markAll() {
        for engine in state.withLock({ $0.members.values.compactMap(\.engine) }) { engine.startSegmentAtNextFrame() }
    }

    /// Waits until every stream has ended; the worst exit status among them.
    func wait() -> ExitCode {
        running.wait()
        let codes = state.withLock { $0.members.values.compactMap(\.exitCode) }
        return codes.max { $0.rawValue < $1.rawValue } ?? .success
    }
}
