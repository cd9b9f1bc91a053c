import Foundation
import Glibc
import Testing
@testable import HLSKit
@testable import HLSOutput

/// What every store does the same way, checked on each implementation.
@Suite struct StreamStoreTests {
    enum Kind: String, CaseIterable, Sendable {
        case directory, memory
    }

    /// A fresh store of `kind`, and what removes it afterwards.
    func makeStore(_ kind: Kind) throws -> (store: any StreamStore, cleanUp: () -> Void) {
        switch kind {
        case .memory:
            return (MemoryStore(), {})
        case .directory:
            let parent = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
            return (try DirectoryStore(root: parent + "/out"), { try? FileManager.default.removeItem(atPath: parent) })
        }
    }

    @Test(arguments: Kind.allCases)
    func writesReadsListsAndRemoves(kind: Kind) throws {
        let (store, cleanUp) = try makeStore(kind)
        defer { cleanUp() }
        #expect(try store.list("") == [])
        #expect(try store.list("seg") == [], "a directory nothing was written to holds nothing")
        try store.write(Array("one".utf8), to: "seg/000001.m4s", durability: .deferred)
        try store.write(Array("two".utf8), to: "seg/000002.m4s")
        try store.write(Array("#EXTM3U\n".utf8), to: "playlist.m3u8")
        try store.synchronize()
        #expect(try store.read("seg/000002.m4s") == Array("two".utf8))
        #expect(try store.list("") == ["playlist.m3u8", "seg"])
        #expect(try store.list("seg") == ["000001.m4s", "000002.m4s"])
        #expect(try store.exists("seg/000001.m4s"))
        #expect(try store.exists("seg"))
        try store.write(Array("uno".utf8), to: "seg/000001.m4s")
        #expect(try store.read("seg/000001.m4s") == Array("uno".utf8), "a write replaces the file")
        try store.remove("seg/000001.m4s")
        try store.remove("seg/000001.m4s")
        #expect(try !store.exists("seg/000001.m4s"), "removing twice is removing once")
        #expect(throws: StoreError.self) { try store.read("seg/000001.m4s") }
    }

    /// What a recording's retention reads: every file below a folder at any depth with its size and
    /// time, hidden and temporary files aside; folders left empty go, those that hold something stay.
    @Test(arguments: Kind.allCases)
    func filesBelowAFolderAndEmptyFoldersRemoved(kind: Kind) throws {
        let (store, cleanUp) = try makeStore(kind)
        defer { cleanUp() }
        #expect(try store.files(below: "") == [], "a store nothing was written to holds nothing")
        let before = Date().addingTimeInterval(-5)
        try store.write(Array("abc".utf8), to: "rec/2027-01-15/08-00-00.mp4")
        try store.write(Array("abcdef".utf8), to: "rec/2027-01-15/08-10-00.mp4")
        try store.write(Array("x".utf8), to: "rec/2027-01-16/.hidden")
        try store.write(Array("top".utf8), to: "top.mp4")
        let found = try store.files(below: "rec")
        #expect(found.map(\.path) == ["2027-01-15/08-00-00.mp4", "2027-01-15/08-10-00.mp4"])
        #expect(found.map(\.byteCount) == [3, 6])
        #expect(found.allSatisfy { $0.modified > before && $0.modified < Date().addingTimeInterval(5) }, "\(found)")
        #expect(try store.files(below: "").map(\.path) == ["rec/2027-01-15/08-00-00.mp4", "rec/2027-01-15/08-10-00.mp4", "top.mp4"])
        #expect(try store.files(below: "missing") == [])

        try store.remove("rec/2027-01-15/08-00-00.mp4")
        #expect(try !store.removeDirectoryIfEmpty("rec/2027-01-15"), "it holds a file")
        try store.remove("rec/2027-01-15/08-10-00.mp4")
        #expect(try !store.exists("rec/2027-01-15/08-10-00.mp4"))
        // A directory store removes the folder; in memory a folder is only the paths of its files.
        #expect(try store.removeDirectoryIfEmpty("rec/2027-01-15") == (kind == .directory))
        #expect(try !store.exists("rec/2027-01-15"))
        #expect(try !store.removeDirectoryIfEmpty("rec/2027-01-15"), "already gone")
        #expect(try store.list("rec") == ["2027-01-16"])
    }

    @Test func aMemoryStoreWithACapacityTellsWhatIsFreeAndFillsUp() throws {
        let store = MemoryStore()
        #expect(try store.availableBytes() == nil, "no capacity, nothing to tell")
        store.capacityBytes = 10
        try store.write([1, 2, 3, 4], to: "a.mp4")
        try store.append([5, 6], to: "a.mp4", durability: .deferred)
        #expect(try store.availableBytes() == 4)
        try store.write([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], to: "a.mp4")
        #expect(try store.availableBytes() == 0, "a file replaced frees what it took")
        #expect(throws: StoreError(operation: .write, path: "memory/b.mp4", errno: ENOSPC)) {
            try store.write([1], to: "b.mp4")
        }
        try store.remove("a.mp4")
        #expect(try store.availableBytes() == 10)
    }

    @Test func aDirectoryStoreTellsWhatItsFileSystemHasFree() throws {
        let (store, cleanUp) = try makeStore(.directory)
        defer { cleanUp() }
        let free = try #require(try store.availableBytes())
        var status = statvfs()
        #expect(statvfs(FileManager.default.temporaryDirectory.path, &status) == 0)
        let expected = Int64(status.f_bavail) * Int64(status.f_frsize)
        #expect(abs(free - expected) < 64 << 20, "\(free) bytes free, statvfs says \(expected)")
    }

    @Test(arguments: Kind.allCases)
    func appendsGrowAnExistingFileOnly(kind: Kind) throws {
        let (store, cleanUp) = try makeStore(kind)
        defer { cleanUp() }
        try store.write([1, 2], to: "rec.mp4")
        try store.append([3], to: "rec.mp4", durability: .immediate)
        try store.append([4, 5], to: "rec.mp4", durability: .deferred)
        #expect(try store.read("rec.mp4") == [1, 2, 3, 4, 5])
        #expect(throws: StoreError.self) { try store.append([1], to: "missing.mp4", durability: .immediate) }
    }

    @Test(arguments: Kind.allCases)
    func pathsStayInsideTheStore(kind: Kind) throws {
        let (store, cleanUp) = try makeStore(kind)
        defer { cleanUp() }
        for path in ["../escape", "a/../../b", "/absolute", "a//b", "."] {
            #expect(throws: StoreError.self, "\(path)") { try store.write([0], to: path) }
        }
    }

    @Test(arguments: Kind.allCases)
    func aDirectoryOfTheStoreIsAStoreOfItsOwn(kind: Kind) throws {
        let (store, cleanUp) = try makeStore(kind)
        defer { cleanUp() }
        let rung = store.below("720p")
        try rung.write([7], to: "seg/000001.m4s")
        #expect(try store.read("720p/seg/000001.m4s") == [7])
        #expect(try rung.list("seg") == ["000001.m4s"])
        #expect(rung.location == store.location + "/720p")
        try rung.remove("seg/000001.m4s")
        #expect(try !store.exists("720p/seg/000001.m4s"))
    }

    @Test func aMemoryStoreFailsAsToldAndKeepsOnlyWhatWasMadeDurable() throws {
        let store = MemoryStore()
        try store.write([1], to: "seg/000001.m4s", durability: .deferred)
        try store.write([2], to: "playlist.m3u8")
        #expect(Set(store.durableFiles.keys) == ["playlist.m3u8"])
        store.inject(.init(.write, errno: ENOSPC) { $0.hasPrefix("seg/") })
        #expect(throws: StoreError(operation: .write, path: "memory/seg/000002.m4s", errno: ENOSPC)) {
            try store.write([3], to: "seg/000002.m4s")
        }
        try store.write([4], to: "playlist.m3u8")
        store.clearFaults()
        try store.write([3], to: "seg/000002.m4s")
        #expect(store.writeLog == ["seg/000001.m4s", "playlist.m3u8", "playlist.m3u8", "seg/000002.m4s"])
    }
}
