import Foundation

/// Finds the access key as AWS's own tools do: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
/// `AWS_SESSION_TOKEN` first; otherwise the profile `AWS_PROFILE` (or `default`) in
/// `~/.aws/credentials` (`AWS_SHARED_CREDENTIALS_FILE`) and `~/.aws/config` (`AWS_CONFIG_FILE`).
///
/// Keys from files are read again whenever a file changes, so keys rotated during a day-long
/// stream are used from the next request on. A file that cannot be read for a moment (being
/// rewritten) leaves the keys read before in use.
///
/// Unchecked sendable: the cached keys and file stamps are guarded by `lock`.
public final class S3CredentialSource: @unchecked Sendable {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notFound(profile: String, credentialsFile: String, configFile: String)
        case incomplete(profile: String, file: String)

        public var description: String {
            switch self {
            case .notFound(let profile, let credentialsFile, let configFile):
                "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the profile "
                    + "\"\(profile)\" aws_access_key_id and aws_secret_access_key in \(credentialsFile) or \(configFile)"
            case .incomplete(let profile, let file):
                "the profile \"\(profile)\" in \(file) has aws_access_key_id or aws_secret_access_key but not both"
            }
        }
    }

    private struct Stamp: Equatable {
        var modified: Date?
        var size: Int?
        var inode: Int?
    }

    private enum Origin {
        case environment(S3Credentials)
        case profile(name: String, credentialsFile: String, configFile: String)
    }

    private let origin: Origin
    private let lock = NSLock()
    private var cached: S3Credentials?
    private var stamps: [Stamp] = []

    /// Where the keys come from, for messages: never the keys.
    public let sourceDescription: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
           let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            origin = .environment(S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token))
            sourceDescription = "the environment (AWS_ACCESS_KEY_ID)"
            return
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let credentialsFile = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? "\(home)/.aws/credentials"
        let configFile = environment["AWS_CONFIG_FILE"] ?? "\(home)/.aws/config"
        origin = .profile(name: profile, credentialsFile: credentialsFile, configFile: configFile)
        sourceDescription = "the profile \"\(profile)\" (\(credentialsFile))"
    }

    /// The keys to sign the next request with.
    public func credentials() throws(Failure) -> S3Credentials {
        switch origin {
        case .environment(let credentials):
            return credentials
        case .profile(let name, let credentialsFile, let configFile):
            let current = [Self.stamp(credentialsFile), Self.stamp(configFile)]
            lock.lock()
            defer { lock.unlock() }
            if let cached, current == stamps { return cached }
            do {
                let found = try Self.read(profile: name, credentialsFile: credentialsFile, configFile: configFile)
                cached = found
                stamps = current
                return found
            } catch {
                if let cached { return cached }
                throw error
            }
        }
    }

    /// The profile's region in the config file, for when neither `--s3-region` nor `AWS_REGION` says.
    public static func region(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let region = environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"], !region.isEmpty { return region }
        let home = environment["HOME"] ?? NSHomeDirectory()
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let configFile = environment["AWS_CONFIG_FILE"] ?? "\(home)/.aws/config"
        guard let text = try? String(contentsOfFile: configFile, encoding: .utf8) else { return nil }
        return parseINI(text)[configSection(profile)]?["region"]
    }

    private static func read(profile: String, credentialsFile: String, configFile: String) throws(Failure) -> S3Credentials {
        let sources = [(credentialsFile, profile), (configFile, configSection(profile))]
        for (file, section) in sources {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                  let values = parseINI(text)[section] else { continue }
            let key = values["aws_access_key_id"], secret = values["aws_secret_access_key"]
            if let key, let secret {
                return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: values["aws_session_token"])
            }
            if key != nil || secret != nil { throw .incomplete(profile: profile, file: file) }
        }
        throw .notFound(profile: profile, credentialsFile: credentialsFile, configFile: configFile)
    }

    /// The config file names profiles `[profile NAME]`, except `[default]`.
    static func configSection(_ profile: String) -> String {
        profile == "default" ? "default" : "profile \(profile)"
    }

    /// `[section]` headers (a comment may follow) and `key = value` lines; `#` and `;` start comment
    /// lines; a later value wins.
    static func parseINI(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), let close = line.lastIndex(of: "]") {
                let name = line[line.index(after: line.startIndex)..<close].split(separator: " ", omittingEmptySubsequences: true)
                    .joined(separator: " ")
                current = name
                sections[name, default: [:]] = sections[name] ?? [:]
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[current]?[key] = value
        }
        return sections
    }

    private static func stamp(_ path: String) -> Stamp {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return Stamp(modified: attributes?[.modificationDate] as? Date, size: (attributes?[.size] as? NSNumber)?.intValue,
                     inode: (attributes?[.systemFileNumber] as? NSNumber)?.intValue)
    }
}
