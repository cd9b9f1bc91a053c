import Foundation
import HLSCrypto
import Testing
@testable import HLSKit
@testable import HLSOutput

/// Signature V4 against the examples AWS publishes for S3, the addressing of keys, and the
/// credentials found as AWS's tools find them.
struct PublishS3Tests {
    static let exampleCredentials = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                                                  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 2013-05-24T00:00:00Z, the date of AWS's examples.
    static let exampleDate = Date(timeIntervalSince1970: 1_369_353_600)

    /// docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, "GET Object".
    @Test func getObjectExampleSignsAsAWSDoes() throws {
        let signer = SignatureV4(region: "us-east-1")
        let headers = signer.signingHeaders(
            method: "GET", url: try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")),
            headers: [HTTPHeader(name: "Range", value: "bytes=0-9")], payloadHash: SignatureV4.emptyPayloadHash,
            credentials: Self.exampleCredentials, date: Self.exampleDate)
        #expect(headers.first { $0.name == "x-amz-date" }?.value == "20130524T000000Z")
        #expect(headers.first { $0.name == "Authorization" }?.value == "AWS4-HMAC-SHA256 "
            + "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    /// The same page's "PUT Object": a signed payload and a key with an encoded `$`.
    @Test func putObjectExampleSignsAsAWSDoes() throws {
        let signer = SignatureV4(region: "us-east-1")
        let body = Data("Welcome to Amazon S3.".utf8)
        let payloadHash = Digest.hex(Digest.sha256(body))
        #expect(payloadHash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let url = try #require(URL(string: "https://examplebucket.s3.amazonaws.com/" + PercentEncoding.encode("test$file.text")))
        let headers = signer.signingHeaders(
            method: "PUT", url: url,
            headers: [HTTPHeader(name: "Date", value: "Fri, 24 May 2013 00:00:00 GMT"),
                      HTTPHeader(name: "x-amz-storage-class", value: "REDUCED_REDUNDANCY")],
            payloadHash: payloadHash, credentials: Self.exampleCredentials, date: Self.exampleDate)
        let authorization = try #require(headers.first { $0.name == "Authorization" }?.value)
        #expect(authorization.hasSuffix("SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
            + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"))
    }

    /// The same page's "GET Bucket Lifecycle" and "Get Bucket (List Objects)": queries sorted and
    /// encoded, a name without a value signed as `name=`.
    @Test func queriesAreSignedSortedAndEncoded() throws {
        let signer = SignatureV4(region: "us-east-1")
        let lifecycle = signer.signingHeaders(
            method: "GET", url: try #require(URL(string: "https://examplebucket.s3.amazonaws.com/?lifecycle=")),
            headers: [], payloadHash: SignatureV4.emptyPayloadHash, credentials: Self.exampleCredentials,
            date: Self.exampleDate)
        #expect(lifecycle.last?.value.hasSuffix("Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") == true)
        let list = signer.signingHeaders(
            method: "GET", url: try #require(URL(string: "https://examplebucket.s3.amazonaws.com/?prefix=J&max-keys=2")),
            headers: [], payloadHash: SignatureV4.emptyPayloadHash, credentials: Self.exampleCredentials,
            date: Self.exampleDate)
        #expect(list.last?.value.hasSuffix("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == true)
        #expect(S3Transport.canonicalQuery(of: try #require(URL(string: "http://h/b/k?uploads"))) == "uploads=")
        #expect(S3Transport.canonicalQuery(of: try #require(URL(string: "http://h/b/k?partNumber=2&uploadId=a%2Fb")))
                == "partNumber=2&uploadId=a%2Fb")
    }

    @Test func aSessionTokenIsSentAndSigned() throws {
        var credentials = Self.exampleCredentials
        credentials.sessionToken = "token/with+chars"
        let headers = SignatureV4(region: "eu-west-1").signingHeaders(
            method: "PUT", url: try #require(URL(string: "http://127.0.0.1:7480/bucket/key")), headers: [],
            payloadHash: SignatureV4.unsignedPayload, credentials: credentials, date: Self.exampleDate)
        #expect(headers.contains(HTTPHeader(name: "x-amz-security-token", value: "token/with+chars")))
        let authorization = try #require(headers.last?.value)
        #expect(authorization.contains("/20130524/eu-west-1/s3/aws4_request"))
        #expect(authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
        #expect(!authorization.contains(credentials.secretAccessKey))
        #expect(SignatureV4.hostHeader(try #require(URL(string: "http://127.0.0.1:7480/b"))) == "127.0.0.1:7480")
        #expect(SignatureV4.hostHeader(try #require(URL(string: "https://s3.amazonaws.com:443/b"))) == "s3.amazonaws.com")
    }

    @Test func targetsAddressKeysWithoutEmptyParts() throws {
        let local = try S3Target(url: "s3://live/cams/front/", endpoint: "http://127.0.0.1:7480", region: nil, pathStyle: nil)
        #expect(local.pathStyle)
        #expect(local.prefix == "cams/front/")
        #expect(local.originURL.absoluteString == "http://127.0.0.1:7480/live/cams/front/")
        #expect(local.url(forKey: "cams/front/seg/000001.m4s").absoluteString
                == "http://127.0.0.1:7480/live/cams/front/seg/000001.m4s")
        #expect(local.key(of: local.originURL.appendingPathComponent("720p/playlist.m3u8")) == "cams/front/720p/playlist.m3u8")
        #expect(try S3Target(url: "s3://live/cam", endpoint: "http://h:1", region: nil, pathStyle: nil).prefix == "cam/")
        #expect(try S3Target(url: "s3://live", endpoint: "http://h:1", region: nil, pathStyle: nil).prefix == "")

        let aws = try S3Target(url: "s3://my-bucket/a b/", endpoint: nil, region: "eu-central-1", pathStyle: nil)
        #expect(!aws.pathStyle)
        #expect(aws.originURL.absoluteString == "https://my-bucket.s3.eu-central-1.amazonaws.com/a%20b/")
        #expect(aws.key(of: aws.url(forKey: "a b/x+y.m4s")) == "a b/x+y.m4s")
        #expect(try S3Target(url: "s3://my.bucket/", endpoint: nil, region: nil, pathStyle: nil).pathStyle)

        #expect(throws: S3Target.ParseError.badPrefix("/a/")) {
            try S3Target(url: "s3://live//a/", endpoint: nil, region: nil, pathStyle: nil)
        }
        #expect(throws: S3Target.ParseError.badPrefix("a//b/")) {
            try S3Target(url: "s3://live/a//b", endpoint: nil, region: nil, pathStyle: nil)
        }
        #expect(throws: S3Target.ParseError.badBucket("Live")) {
            try S3Target(url: "s3://Live/a", endpoint: nil, region: nil, pathStyle: nil)
        }
        #expect(throws: S3Target.ParseError.badEndpoint("ftp://h")) {
            try S3Target(url: "s3://live/a", endpoint: "ftp://h", region: nil, pathStyle: nil)
        }
        #expect(S3Target.isSafeKey("a/b.m4s"))
        #expect(!S3Target.isSafeKey("/a/b.m4s"))
        #expect(!S3Target.isSafeKey("a//b.m4s"))
    }

    @Test func errorCodesAreReadFromTheStoresBody() {
        let body = Data("""
            <?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><BucketName>x</BucketName></Error>
            """.utf8)
        #expect(PublishResponse.errorCode(inBody: body) == "NoSuchBucket")
        #expect(PublishResponse.errorCode(inBody: Data("<html>403</html>".utf8)) == nil)
        #expect(PublishResponse.errorCode(inBody: Data("<Code>a b</Code>".utf8)) == nil)
        #expect(RequestOutcome(.status(403, errorCode: "SignatureDoesNotMatch"), method: .put)
                == .failed(reason: "HTTP 403 SignatureDoesNotMatch"))
        #expect(RequestOutcome(.status(503, errorCode: "SlowDown"), method: .put)
                == .retry(reason: "HTTP 503 SlowDown", afterSeconds: nil))
    }

    @Test func credentialsComeFromTheEnvironmentFirst() throws {
        let source = S3CredentialSource(environment: ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK",
                                                      "AWS_SESSION_TOKEN": "T", "AWS_PROFILE": "other",
                                                      "HOME": "/nonexistent"])
        #expect(try source.credentials() == S3Credentials(accessKeyID: "AK", secretAccessKey: "SK", sessionToken: "T"))
        #expect(!source.sourceDescription.contains("SK"))
    }

    @Test func aProfileIsReadFromTheFilesAndReadAgainWhenTheyChange() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("s3-credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let credentialsFile = directory.appendingPathComponent("credentials")
        let configFile = directory.appendingPathComponent("config")
        try "[default]\naws_access_key_id = DEFAULTKEY\naws_secret_access_key = d\n\n[cam] ; a comment\n"
            .appending("aws_access_key_id=CAMKEY1\n  aws_secret_access_key = secret1  \n")
            .write(to: credentialsFile, atomically: true, encoding: .utf8)
        try "[profile cam]\nregion = eu-west-3\n[profile fromconfig]\naws_access_key_id=CFG\naws_secret_access_key=c\n"
            .write(to: configFile, atomically: true, encoding: .utf8)
        let environment = ["HOME": "/nonexistent", "AWS_PROFILE": "cam",
                           "AWS_SHARED_CREDENTIALS_FILE": credentialsFile.path, "AWS_CONFIG_FILE": configFile.path]
        let source = S3CredentialSource(environment: environment)
        #expect(try source.credentials() == S3Credentials(accessKeyID: "CAMKEY1", secretAccessKey: "secret1"))
        #expect(S3CredentialSource.region(environment: environment) == "eu-west-3")
        #expect(S3CredentialSource.region(environment: environment.merging(["AWS_REGION": "ap-south-1"]) { $1 }) == "ap-south-1")

        // Rotated: the next request signs with the new key.
        try "[cam]\naws_access_key_id = CAMKEY2\naws_secret_access_key = secret2\naws_session_token = tok\n"
            .write(to: credentialsFile, atomically: true, encoding: .utf8)
        #expect(try source.credentials() == S3Credentials(accessKeyID: "CAMKEY2", secretAccessKey: "secret2", sessionToken: "tok"))
        // Gone for a moment (being replaced): the keys read before stay in use.
        try FileManager.default.removeItem(at: credentialsFile)
        #expect(try source.credentials().accessKeyID == "CAMKEY2")

        var other = environment
        other["AWS_PROFILE"] = "fromconfig"
        #expect(try S3CredentialSource(environment: other).credentials().accessKeyID == "CFG")
        other["AWS_PROFILE"] = "missing"
        #expect(throws: S3CredentialSource.Failure.self) { try S3CredentialSource(environment: other).credentials() }
        try "[half]\naws_access_key_id = X\n".write(to: credentialsFile, atomically: true, encoding: .utf8)
        other["AWS_PROFILE"] = "half"
        #expect(throws: S3CredentialSource.Failure.incomplete(profile: "half", file: credentialsFile.path)) {
            try S3CredentialSource(environment: other).credentials()
        }
    }
}
