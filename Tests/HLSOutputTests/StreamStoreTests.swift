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
