import Foundation
import HLSEngine
import HLSKit
import HLSOutput
import Testing

typealias OriginCase = PlanCase<OriginRequest>

/// `--publish` and its companions: an HTTP origin or an S3-compatible store, and what every upload carries.
@Suite struct PlanOriginTests {
    static func plan(_ item: OriginCase, url: String? = "https://origin.example/live/") throws(PlanError) -> OriginPlan? {
        var request = OriginRequest()
        request.url = url
        item.edit(&request)
        return try OriginPlan(request, defaultRegion: nil)
    }

    static let companions: [OriginCase] = [
        OriginCase("--header") { $0.headerLines = ["Authorization: Bearer x"] },
        OriginCase("--publish-backlog") { $0.backlogMilliseconds = 60_000 },
        OriginCase("--publish-drain-timeout") { $0.drainTimeoutMilliseconds = 5000 },
        OriginCase("--publish-timeout") { $0.requestTimeoutMilliseconds = 5000 },
        OriginCase("--playlist-cache-control") { $0.playlistCacheControl = "max-age=1" },
        OriginCase("--s3-endpoint") { $0.s3Endpoint = "http://127.0.0.1:9000" },
        OriginCase("--s3-region") { $0.s3Region = "eu-west-1" },
        OriginCase("--s3-acl") { $0.s3ACL = "public-read" },
        OriginCase("--s3-path-style") { $0.s3PathStyle = true },
        OriginCase("--s3-virtual-hosted") { $0.s3VirtualHosted = true },
        OriginCase("--s3-part-size") { $0.s3PartSizeBytes = 16 << 20 },
    ]

    @Test(arguments: companions)
    func aCompanionNeedsAnOrigin(_ item: OriginCase) throws {
        #expect(throws: PlanError.needsPublishing) { try Self.plan(item, url: nil) }
    }

    @Test func withoutAnythingThereIsNoOrigin() throws {
        #expect(try Self.plan(OriginCase("") { _ in }, url: nil) == nil)
    }

    static let refusals: [(OriginCase, String, PlanError)] = [
        (OriginCase("--publish-timeout 0") { $0.requestTimeoutMilliseconds = 0 }, "https://o.example/", .publishTimeout),
        (OriginCase("both addressings") { $0.s3PathStyle = true; $0.s3VirtualHosted = true }, "s3://bucket/live/",
         .s3AddressingTwice),
        (OriginCase("a bad bucket") { _ in }, "s3://B/live/", .s3Target(.badBucket("B"))),
        (OriginCase("a bad endpoint") { $0.s3Endpoint = "ftp://store" }, "s3://bucket/live/", .s3Target(.badEndpoint("ftp://store"))),
        (OriginCase("an ACL S3 does not have") { $0.s3ACL = "everyone" }, "s3://bucket/live/", .s3ACL("everyone")),
        (OriginCase("parts under 5M") { $0.s3PartSizeBytes = 4 << 20 }, "s3://bucket/live/", .s3PartSize),
        (OriginCase("parts over 5G") { $0.s3PartSizeBytes = (5 << 30) + 1 }, "s3://bucket/live/", .s3PartSize),
        (OriginCase("an S3 option for HTTP") { $0.s3Region = "eu-west-1" }, "https://o.example/", .s3OptionsWithoutS3),
        (OriginCase("ftp") { _ in }, "ftp://o.example/", .publishURL("ftp://o.example/")),
        (OriginCase("no host") { _ in }, "https:///live/", .publishURL("https:///live/")),
        (OriginCase("an empty Cache-Control") { $0.playlistCacheControl = "" }, "https://o.example/", .playlistCacheControl),
        (OriginCase("a Cache-Control on two lines") { $0.playlistCacheControl = "max-age=1\nx: y" }, "https://o.example/",
         .playlistCacheControl),
        (OriginCase("a header without a name") { $0.headerLines = [": value"] }, "https://o.example/", .header(": value")),
        (OriginCase("a header without a colon") { $0.headerLines = ["Authorization"] }, "https://o.example/",
         .header("Authorization")),
    ]

    @Test(arguments: refusals)
    func refusal(_ item: OriginCase, url: String, _ error: PlanError) {
        #expect(throws: error) { try Self.plan(item, url: url) }
    }

    @Test func anHTTPOriginWithItsDefaults() throws {
        let plan = try #require(try Self.plan(OriginCase("") { _ in }))
        #expect(plan.target == .http(URL(string: "https://origin.example/live/")!))
        #expect(plan.requestTimeoutSeconds == 10 && plan.backlogSeconds == 300 && plan.drainTimeoutSeconds == 30)
        #expect(plan.playlistCacheControl == "no-cache" && plan.headers.isEmpty && plan.s3ACL == nil)
        #expect(plan.s3PartSize == 8 << 20)
        let told = try #require(try Self.plan(OriginCase("") {
            $0.requestTimeoutMilliseconds = 2500
            $0.backlogMilliseconds = 60_000
            $0.drainTimeoutMilliseconds = 1500
            $0.playlistCacheControl = "max-age=1"
            $0.headerLines = ["Authorization: Bearer abc", "X-Stream:cam1"]
        }))
        #expect(told.requestTimeoutSeconds == 2.5 && told.backlogSeconds == 60 && told.drainTimeoutSeconds == 1.5)
        #expect(told.playlistCacheControl == "max-age=1")
        #expect(told.headers == [HTTPHeader(name: "Authorization", value: "Bearer abc"), HTTPHeader(name: "X-Stream", value: "cam1")])
    }

    @Test func anS3StoreAddressedAsAsked() throws {
        let aws = try #require(try Self.plan(OriginCase("") { $0.s3ACL = "public-read"; $0.s3PartSizeBytes = 5 << 20 },
                                             url: "s3://bucket/live/cam1"))
        guard case .s3(let target) = aws.target else { throw PlanError.publishURL("not S3") }
        #expect(target.bucket == "bucket" && target.prefix == "live/cam1/" && target.region == S3Target.defaultRegion)
        #expect(!target.pathStyle && aws.s3ACL == "public-read" && aws.s3PartSize == 5 << 20)
        let own = try #require(try Self.plan(OriginCase("") {
            $0.s3Endpoint = "http://127.0.0.1:9000"
            $0.s3Region = "eu-west-1"
            $0.s3VirtualHosted = true
        }, url: "s3://bucket/"))
        guard case .s3(let store) = own.target else { throw PlanError.publishURL("not S3") }
        #expect(store.endpoint == URL(string: "http://127.0.0.1:9000") && store.region == "eu-west-1" && !store.pathStyle)
        var request = OriginRequest()
        request.url = "s3://bucket/"
        let profile = try #require(try OriginPlan(request, defaultRegion: "ap-south-1"))
        #expect(profile.target == .s3(try S3Target(url: "s3://bucket/", endpoint: nil, region: "ap-south-1", pathStyle: nil)))
    }
}
