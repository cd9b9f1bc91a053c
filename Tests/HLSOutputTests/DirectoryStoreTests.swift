import Foundation
import Glibc
import Testing
@testable import HLSKit
@testable import HLSOutput

@Suite("DirectoryStore")
struct OutputDirectoryStoreTests {
    /// Runs `body` with a fresh directory path (not yet created) that is deleted afterwards.
    private func withScratchDirectory(_ body: (String) throws -> Void) throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: parent) }
        try body(parent + "/out")
    }

    /// Everything in a directory, hidden files included, as the file system has it.
    private func rawEntries(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    @Test func createsAMissingRootWithParentsOnlyOnTheFirstWrite() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root + "/live/")

            #expect(store.root == root + "/live")
            #expect(!FileManager.default.fileExists(atPath: root), "nothing to store yet, so no directory")
            #expect(try store.list("") == [])
            #expect(try store.removeStaleTemporaryFiles() == [])
            try store.write(Array("x".utf8), to: "seg/000001.m4s")
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: root + "/live/seg", isDirectory: &isDirectory))
            #expect(isDirectory.boolValue)
            #expect(try rawEntries(root + "/live") == ["seg"])
        }
    }

    /// A stream whose directory is deleted under it must not go on in a new, empty one.
    @Test(arguments: [false, true])
    func aRootRemovedAfterItExistedIsNotMadeAgain(existedAtStart: Bool) throws {
        try withScratchDirectory { root in
            if existedAtStart {
                try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            }
            let store = try DirectoryStore(root: root)
            try store.write(Array("x".utf8), to: "seg/000001.m4s")
            try FileManager.default.removeItem(atPath: root)

            let error = #expect(throws: StoreError.self) { try store.write(Array("y".utf8), to: "seg/000002.m4s") }

            #expect(error == StoreError(operation: .writeInDirectory, path: root, errno: ENOENT))
            #expect(!FileManager.default.fileExists(atPath: root))
        }
    }

    @Test func aRootReplacedByAnotherDirectoryIsNotWrittenTo() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)
            try store.write(Array("x".utf8), to: "playlist.m3u8")
            try FileManager.default.removeItem(atPath: root)
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)

            #expect(throws: StoreError.self) { try store.write(Array("y".utf8), to: "playlist.m3u8") }
            #expect(try rawEntries(root) == [])
        }
    }

    @Test func emptyDirectoriesGoOnlyWhereTheStoreCreatedThem() throws {
        try withScratchDirectory { root in
            let parent = (root as NSString).deletingLastPathComponent
            let created = try DirectoryStore(root: root + "/live")
            try created.write(Array("x".utf8), to: "seg/000001.m4s")
            try created.remove("seg/000001.m4s")
            created.removeEmptyDirectories()
            #expect(!FileManager.default.fileExists(atPath: parent), "every directory it made is gone")
            try created.write(Array("x".utf8), to: "seg/000001.m4s")
            #expect(FileManager.default.fileExists(atPath: root + "/live/seg/000001.m4s"),
                    "a root it removed itself is made again: a file run retried as a transcode writes there")
            try FileManager.default.removeItem(atPath: parent)

            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let existing = try DirectoryStore(root: root)
            try existing.write(Array("x".utf8), to: "seg/000001.m4s")
            try existing.remove("seg/000001.m4s")
            existing.removeEmptyDirectories()
            #expect(try rawEntries(root) == [], "its own seg/ goes, the directory it was given stays")
        }
    }

    @Test func writesReadsAndReplaces() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)

            try store.write(Array("first".utf8), to: "playlist.m3u8")
            #expect(try store.read("playlist.m3u8") == Array("first".utf8))
            try store.write(Array("second, longer".utf8), to: "playlist.m3u8")
            try store.write([], to: "empty")

            #expect(try store.read("playlist.m3u8") == Array("second, longer".utf8))
            #expect(try store.read("empty") == [])
            #expect(try rawEntries(root) == ["empty", "playlist.m3u8"])
        }
    }

    @Test func deferredWritesArePublishedAtOnceAndMadeDurableBySynchronize() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)
            try store.write(Array("segment".utf8), to: "seg/000001.m4s", durability: .deferred)
            #expect(try store.read("seg/000001.m4s") == Array("segment".utf8))
            #expect(try rawEntries(root + "/seg") == ["000001.m4s"], "no temporary file is left behind")
            try store.synchronize()

            try FileManager.default.removeItem(atPath: root)
            #expect(throws: StoreError.self) { try store.synchronize() }
        }
    }

    @Test func writesLargeFilesCompletely() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)
            let bytes = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }

            try store.write(bytes, to: "seg/000001.m4s")

            #expect(try store.read("seg/000001.m4s") == bytes)
        }
    }

    @Test func publishesFilesReadableByOthers() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)
            try store.write([1], to: "init.mp4")

            var status = stat()
            #expect(stat(root + "/init.mp4", &status) == 0)
            #expect(status.st_mode & S_IROTH != 0)
        }
    }

    @Test func createsSubdirectoriesAndListsThemSorted() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)

            try store.write([2], to: "seg/000002.m4s")
            try store.write([1], to: "seg/000001.m4s")
            try store.write([0], to: "init.mp4")

            #expect(try store.list("") == ["init.mp4", "seg"])
            #expect(try store.list("seg") == ["000001.m4s", "000002.m4s"])
        }
    }

    @Test func removesAndToleratesMissingFiles() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)
            try store.write([1], to: "seg/000001.m4s")
            #expect(try store.exists("seg/000001.m4s"))

            try store.remove("seg/000001.m4s")
            try store.remove("seg/000001.m4s")

            #expect(try !store.exists("seg/000001.m4s"))
            #expect(try store.list("seg").isEmpty)
        }
    }

    @Test func listHidesTemporaryFilesAndCleanupRemovesThem() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)
            try store.write([1], to: "seg/000001.m4s")
            try store.write([1], to: "playlist.m3u8")
            for stale in [".playlist.m3u8.tmp.4242", "seg/.000002.m4s.tmp.17", ".well-known"] {
                #expect(FileManager.default.createFile(atPath: "\(root)/\(stale)", contents: Data([9])))
            }

            #expect(try store.list("") == [".well-known", "playlist.m3u8", "seg"])
            #expect(try store.list("seg") == ["000001.m4s"])
            #expect(try store.removeStaleTemporaryFiles() == [".playlist.m3u8.tmp.4242", "seg/.000002.m4s.tmp.17"])
            #expect(try rawEntries(root) == [".well-known", "playlist.m3u8", "seg"])
            #expect(try rawEntries(root + "/seg") == ["000001.m4s"])
        }
    }

    @Test(arguments: [
        (".playlist.m3u8.tmp.4242", true), (".a.tmp.1", true), (".tmp.1", false), ("a.tmp.1", false),
        (".a.tmp.", false), (".a.tmp.x1", false), (".a.tmp", false), (".well-known", false),
    ])
    func recognisesTemporaryNames(name: String, isTemporary: Bool) {
        #expect(DirectoryStore.isTemporaryName(name) == isTemporary)
    }

    @Test func failedWriteLeavesNoTemporaryFile() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)
            try store.write([1], to: "seg/000001.m4s")

            // rename cannot replace a non-empty directory with a file.
            #expect(throws: StoreError(operation: .write, path: root + "/seg", errno: EISDIR)) {
                try store.write([1, 2, 3], to: "seg")
            }
            #expect(try rawEntries(root) == ["seg"])
        }
    }

    @Test(arguments: ["../escape", "/etc/passwd", "seg//a", "./a", ""])
    func rejectsPathsOutsideTheRoot(relativePath: String) throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)

            #expect(throws: StoreError(operation: .write, path: "\(root)/\(relativePath)", errno: EINVAL)) {
                try store.write([1], to: relativePath)
            }
        }
    }

    @Test func readingAMissingFileNamesIt() throws {
        try withScratchDirectory { root in
            let store = try DirectoryStore(root: root)

            let error = #expect(throws: StoreError.self) { try store.read("nope.m4s") }

            #expect(error == StoreError(operation: .read, path: root + "/nope.m4s", errno: ENOENT))
            #expect(error?.description == "cannot read \(root)/nope.m4s: No such file or directory")
            #expect(error?.kind == .ioError)
        }
    }

    @Test func rootUnderARegularFileCannotBeCreated() throws {
        try withScratchDirectory { root in
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: root + "/file", contents: Data()))

            let error = #expect(throws: StoreError.self) { try DirectoryStore(root: root + "/file/sub") }

            #expect(error == StoreError(operation: .createDirectory, path: root + "/file", errno: EEXIST))
            #expect(error?.kind == .cannotCreate)
        }
    }

    @Test func rootInsideProcCannotBeCreated() {
        let error = #expect(throws: StoreError.self) { try DirectoryStore(root: "/proc/hlscap-store") }

        #expect(error?.operation == .createDirectory)
        #expect(error?.path == "/proc/hlscap-store")
        #expect(error?.kind == .cannotCreate)
    }

    /// procfs refuses new files even to root, whose `access` checks always pass.
    @Test func existingUnwritableRootIsRejected() {
        let error = #expect(throws: StoreError.self) { try DirectoryStore(root: "/proc") }

        #expect(error?.operation == .writeInDirectory)
        #expect(error?.kind == .cannotCreate)
        #expect(error?.description.hasPrefix("cannot write files in /proc: ") == true)
    }

    @Test(arguments: [
        (StoreError.Operation.write, ENOSPC, StoreError.Kind.ioError),
        (.write, EIO, .ioError),
        (.write, EDQUOT, .ioError),
        (.write, EACCES, .cannotCreate),
        (.write, EROFS, .cannotCreate),
        (.createDirectory, ENOSPC, .cannotCreate),
        (.read, ENOENT, .ioError),
        (.remove, EACCES, .ioError),
    ])
    func classifiesErrorsForExitStatus(operation: StoreError.Operation, errno: Int32, kind: StoreError.Kind) {
        #expect(StoreError(operation: operation, path: "/x", errno: errno).kind == kind)
    }

    @Test func describesWriteFailures() {
        let error = StoreError(operation: .write, path: "/x/seg/000001.m4s", errno: EACCES)
        #expect(error.description == "cannot write /x/seg/000001.m4s: Permission denied")
    }
}
