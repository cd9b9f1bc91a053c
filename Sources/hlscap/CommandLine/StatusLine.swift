import Foundation
import HLSEngine
import HLSMedia

/// Redraws the status line on stderr a few times a second, when stderr is a terminal.
final class StatusLine {
    private let statistics: LiveStatistics
    private var timer: DispatchSourceTimer?
    private let isTerminal = isatty(STDERR_FILENO) != 0

    init(statistics: LiveStatistics) {
        self.statistics = statistics
    }

    func start() {
        guard isTerminal else { return }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
        timer.setEventHandler { [statistics] in
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + statistics.statusLine()).utf8))
        }
        timer.resume()
        self.timer = timer
    }

    func stop() {
        timer?.cancel()
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

/// SIGINT and SIGTERM delivered on a queue instead of killing the process; the handler learns whether
/// this is the second one. With `onMark`, SIGUSR1 calls it (an operator's mark) instead of ending the process;
/// with `onReload`, SIGHUP calls it (`systemctl reload`).
///
/// Unchecked sendable: `count` is touched only on `queue`, the sources only before `cancel`.
final class SignalHandling: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private var count = 0
    private let queue = DispatchQueue(label: "hlscap.signals")

    init(onMark: (@Sendable () -> Void)? = nil, onReload: (@Sendable () -> Void)? = nil,
         _ handler: @escaping @Sendable (_ second: Bool) -> Void) {
        for (number, action) in [(SIGUSR1, onMark), (SIGHUP, onReload)] {
            guard let action else { continue }
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: action)
            source.resume()
            sources.append(source)
        }
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in
                guard let self else { return }
                count += 1
                handler(count > 1)
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
