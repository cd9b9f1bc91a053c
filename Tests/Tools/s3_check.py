#!/usr/bin/env python3
"""Reads back, with boto3, what hlscap published to an S3-compatible store: an independent client.

Usage: s3_check.py ENDPOINT create BUCKET [--cors] [--player]
       s3_check.py ENDPOINT check BUCKET PREFIX [--playlist-cache-control V] [--public]
       s3_check.py ENDPOINT poll BUCKET KEY [--interval S] [--timeout S] [--sliding]
       s3_check.py ENDPOINT get BUCKET KEY [--output FILE]
       s3_check.py ENDPOINT uploads BUCKET
       s3_check.py ENDPOINT versioning BUCKET
       s3_check.py ENDPOINT listed BUCKET KEY

Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; path-style addressing.
- create: makes the bucket (with --cors, one that lets any page GET and HEAD its objects; with
  --player, stores serve.py's player page in it as __player.html, public, for chromium_play.py).
- check: lists every object below PREFIX and checks each key (no leading /, no //), its
  Content-Type and Cache-Control by kind (playlists --playlist-cache-control, default no-cache;
  media `max-age=31536000, immutable`), with --public that anyone may read it, and that every URI
  of every playlist (master, media and I-frame playlists, their maps and segments) is an object.
  Prints one JSON line {"objects", "playlists", "problems": [...]}; exits 1 on any problem.
- poll: origin_poller's rule over boto3: the playlist at KEY, fetched every --interval seconds
  until ENDLIST, never lists an object the store lacks (see origin_poller.py).
- get: writes the object's body to FILE, or prints it.
- uploads: prints {"uploads": [keys of the multipart uploads in progress]}.
- versioning: turns the bucket's versioning on, so that the store keeps every version of an object.
- listed: reads every stored version of the playlist at KEY (a bucket with versioning) and prints
  {"versions": n, "uris": [every URI any version listed, sorted]}: what the store ever listed, which a
  poller may miss when two versions come within one of its polls.
"""
import argparse
import json
import os
import posixpath
import re
import signal
import sys
import urllib.error
import urllib.parse
import urllib.request

import boto3
import botocore.config
import botocore.exceptions

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import origin_poller  # noqa: E402
import serve  # noqa: E402

MEDIA_CACHE_CONTROL = "max-age=31536000, immutable"
CONTENT_TYPES = {".m3u8": "application/vnd.apple.mpegurl", ".mp4": "video/mp4", ".m4s": "video/iso.segment",
                 ".m4a": "audio/mp4"}
URI_ATTRIBUTE = re.compile(r'URI="([^"]+)"')
# A fake host under which a key becomes a URL, so that origin_poller can resolve relative URIs.
KEY_HOST = "http://bucket.invalid/"


def client(endpoint):
    return boto3.client("s3", endpoint_url=endpoint, region_name=os.environ.get("AWS_REGION", "us-east-1"),
                        config=botocore.config.Config(s3={"addressing_style": "path"},
                                                      retries={"max_attempts": 2}))


def get(s3, bucket, key):
    """(status, body) of an object."""
    try:
        reply = s3.get_object(Bucket=bucket, Key=key)
        return 200, reply["Body"].read()
    except botocore.exceptions.ClientError as error:
        return int(error.response["ResponseMetadata"]["HTTPStatusCode"]), b""


def playlist_uris(text):
    uris = []
    for line in text.splitlines():
        if line.startswith("#"):
            uris += URI_ATTRIBUTE.findall(line)
        elif line.strip():
            uris.append(line.strip())
    return uris


def check(s3, endpoint, bucket, prefix, playlist_cache_control, public):
    problems, objects = [], {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            objects[item["Key"]] = item["Size"]
    playlists = 0
    for key in sorted(objects):
        if key.startswith("/") or "//" in key:
            problems.append(f"{key}: a key must not begin with / or hold //")
        head = s3.head_object(Bucket=bucket, Key=key)
        extension = posixpath.splitext(key)[1]
        expected_type = CONTENT_TYPES.get(extension)
        if expected_type and head.get("ContentType") != expected_type:
            problems.append(f"{key}: Content-Type {head.get('ContentType')}, not {expected_type}")
        expected_cache = playlist_cache_control if extension == ".m3u8" else MEDIA_CACHE_CONTROL
        if head.get("CacheControl") != expected_cache:
            problems.append(f"{key}: Cache-Control {head.get('CacheControl')}, not {expected_cache}")
        if public:
            url = endpoint.rstrip("/") + "/" + bucket + "/" + urllib.parse.quote(key)
            try:
                urllib.request.urlopen(url, timeout=10).read()
            except urllib.error.HTTPError as error:
                problems.append(f"{key}: anonymous GET answered {error.code}")
        if extension == ".m3u8":
            playlists += 1
            _, body = get(s3, bucket, key)
            for uri in playlist_uris(body.decode("utf-8", errors="replace")):
                target = posixpath.normpath(posixpath.join(posixpath.dirname(key), uri.split("?")[0]))
                if target not in objects:
                    problems.append(f"{key} names {uri}, which is not in the bucket")
    return {"objects": len(objects), "playlists": playlists, "problems": problems}


def listed_versions(s3, bucket, key):
    versions, uris = 0, set()
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=key):
        for version in page.get("Versions", []):
            if version["Key"] != key:
                continue
            body = s3.get_object(Bucket=bucket, Key=key, VersionId=version["VersionId"])["Body"].read()
            versions += 1
            uris.update(playlist_uris(body.decode("utf-8", errors="replace")))
    return {"versions": versions, "uris": sorted(uris)}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("endpoint")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create")
    create.add_argument("bucket")
    create.add_argument("--cors", action="store_true")
    create.add_argument("--player", action="store_true")
    checking = commands.add_parser("check")
    checking.add_argument("bucket")
    checking.add_argument("prefix")
    checking.add_argument("--playlist-cache-control", default="no-cache")
    checking.add_argument("--public", action="store_true")
    poll = commands.add_parser("poll")
    poll.add_argument("bucket")
    poll.add_argument("key")
    poll.add_argument("--interval", type=float, default=0.05)
    poll.add_argument("--timeout", type=float, default=120)
    poll.add_argument("--sliding", action="store_true")
    getting = commands.add_parser("get")
    getting.add_argument("bucket")
    getting.add_argument("key")
    getting.add_argument("--output")
    uploads = commands.add_parser("uploads")
    uploads.add_argument("bucket")
    versioning = commands.add_parser("versioning")
    versioning.add_argument("bucket")
    listed = commands.add_parser("listed")
    listed.add_argument("bucket")
    listed.add_argument("key")
    args = parser.parse_args(argv)
    s3 = client(args.endpoint)
    if args.command == "uploads":
        listed = s3.list_multipart_uploads(Bucket=args.bucket).get("Uploads", [])
        print(json.dumps({"uploads": [upload["Key"] for upload in listed]}), flush=True)
        return 0
    if args.command == "versioning":
        s3.put_bucket_versioning(Bucket=args.bucket, VersioningConfiguration={"Status": "Enabled"})
        print(json.dumps({"versioning": args.bucket}), flush=True)
        return 0
    if args.command == "listed":
        print(json.dumps(listed_versions(s3, args.bucket, args.key)), flush=True)
        return 0
    if args.command == "create":
        s3.create_bucket(Bucket=args.bucket)
        if args.cors:
            s3.put_bucket_cors(Bucket=args.bucket, CORSConfiguration={"CORSRules": [
                {"AllowedOrigins": ["*"], "AllowedMethods": ["GET", "HEAD"], "AllowedHeaders": ["*"]}]})
        if args.player:
            s3.put_object(Bucket=args.bucket, Key=serve.PLAYER_PATH.lstrip("/"), Body=serve.PLAYER_PAGE,
                          ContentType=serve.MIME_TYPES[".html"], ACL="public-read")
        print(json.dumps({"created": args.bucket}), flush=True)
        return 0
    if args.command == "check":
        report = check(s3, args.endpoint, args.bucket, args.prefix, args.playlist_cache_control, args.public)
        print(json.dumps(report), flush=True)
        return 1 if report["problems"] or report["objects"] == 0 else 0
    if args.command == "get":
        status, body = get(s3, args.bucket, args.key)
        if args.output:
            with open(args.output, "wb") as output:
                output.write(body)
        else:
            sys.stdout.buffer.write(body)
        return 0 if status == 200 else 1
    # poll: origin_poller's rules, each fetch a boto3 GET of the key the URL stands for.
    origin_poller.fetch = lambda url: get(s3, args.bucket, urllib.parse.unquote(urllib.parse.urlsplit(url).path[1:]))
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    poller = origin_poller.Poller(KEY_HOST + urllib.parse.quote(args.key), sliding=args.sliding)
    return origin_poller.watch(poller, args.interval, args.timeout, stopping)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
