#!/usr/bin/env python3
"""A real S3 server for the tests: Ceph's RADOS Gateway on a throwaway one-node cluster.

Usage: s3_gateway.py DIR [--access-key K] [--secret-key S] [--port P]

Creates a Ceph cluster under DIR (a monitor, an OSD that keeps objects in memory, no manager),
starts radosgw on 127.0.0.1 and creates a user with the given keys. The gateway's DNS name is
`localhost`, so BUCKET.localhost:PORT (which resolves to loopback) is virtual-hosted addressing. Prints
"gateway http://127.0.0.1:PORT/" once S3 requests are answered, then waits; on SIGTERM or SIGINT it
stops the daemons and removes DIR. Every port is a free one, so two gateways never collide.
Needs Debian's ceph-mon, ceph-osd, radosgw, ceph-common and uuid-runtime (make deps installs them).
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

READY_TIMEOUT_SECONDS = 90
# Within the 10 s a test waits for this tool before it kills it (and would orphan the daemons).
STOP_TIMEOUT_SECONDS = 6

CONF = """[global]
fsid = {fsid}
mon initial members = a
mon host = v2:127.0.0.1:{mon_v2},v1:127.0.0.1:{mon_v1}
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
run dir = {c}/run
admin socket = {c}/run/$cluster-$name.asok
pid file = {c}/run/$name.pid
log file = {c}/log/$name.log
crash dir = {c}/crash
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1
mon max pg per osd = 1000

[client.admin]
keyring = {c}/ceph.client.admin.keyring

[mon]
mon data = {c}/mon/$cluster-$id
paxos propose interval = 0.05

[osd]
osd data = {c}/osd/$cluster-$id
osd objectstore = memstore
memstore device bytes = 2147483648

[client.rgw.a]
keyring = {c}/rgw/keyring
rgw data = {c}/rgw
rgw frontends = beast endpoint=127.0.0.1:{port}
rgw thread pool size = 64
rgw dns name = localhost
"""


def running(pid):
    """Whether a process is there and not a zombie (a daemon's parent is init, which may be slow to
    reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    def __init__(self, directory, port):
        self.directory = os.path.abspath(directory)
        self.c = os.path.join(self.directory, "c")
        self.port = port
        self.env = dict(os.environ, CEPH_CONF=os.path.join(self.directory, "ceph.conf"))

    def run(self, *command, stdin=None):
        result = subprocess.run(command, env=self.env, input=stdin, capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout.strip()

    def start(self, access_key, secret_key):
        # A parent may start us with signals blocked (Foundation's Process does); the daemons would
        # inherit that mask and never see SIGTERM.
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        fsid = self.run("uuidgen")
        for sub in ("run", "log", "crash", "mon/ceph-a", "osd", "rgw"):
            os.makedirs(os.path.join(self.c, sub), exist_ok=True)
        with open(self.env["CEPH_CONF"], "w") as conf:
            conf.write(CONF.format(fsid=fsid, c=self.c, port=self.port, mon_v2=free_port(), mon_v1=free_port()))
        mon_keyring = os.path.join(self.c, "mon.keyring")
        admin_keyring = os.path.join(self.c, "ceph.client.admin.keyring")
        self.run("ceph-authtool", "--create-keyring", mon_keyring, "--gen-key", "-n", "mon.", "--cap", "mon", "allow *")
        self.run("ceph-authtool", "--create-keyring", admin_keyring, "--gen-key", "-n", "client.admin",
                 "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mds", "allow *", "--cap", "mgr", "allow *")
        self.run("ceph-authtool", mon_keyring, "--import-keyring", admin_keyring)
        with open(self.env["CEPH_CONF"]) as conf:
            mon_host = next(line for line in conf if line.startswith("mon host")).split("=", 1)[1].strip()
        monmap = os.path.join(self.c, "monmap")
        self.run("monmaptool", "--create", "--fsid", fsid, "--addv", "a", "[" + mon_host.replace(",", ",") + "]", monmap)
        self.run("ceph-mon", "--mkfs", "-i", "a", "--monmap", monmap, "--keyring", mon_keyring)
        self.run("ceph-mon", "-i", "a")
        self.run("ceph", "-s", "--connect-timeout", "30")
        osd_uuid = self.run("uuidgen")
        osd_key = self.run("ceph-authtool", "--gen-print-key")
        osd_id = self.run("ceph", "osd", "new", osd_uuid, "-i", "-", stdin='{"cephx_secret": "%s"}' % osd_key)
        osd_dir = os.path.join(self.c, "osd", "ceph-" + osd_id)
        os.makedirs(osd_dir, exist_ok=True)
        self.run("ceph-authtool", "--create-keyring", os.path.join(osd_dir, "keyring"), "--name", "osd." + osd_id,
                 "--add-key", osd_key)
        self.run("ceph-osd", "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid)
        self.run("ceph-osd", "-i", osd_id)
        self.run("ceph", "auth", "get-or-create", "client.rgw.a", "mon", "allow rw", "osd", "allow rwx",
                 "mgr", "allow rw", "-o", os.path.join(self.c, "rgw", "keyring"))
        self.run("radosgw", "-n", "client.rgw.a")
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2).read()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("radosgw did not answer within %d s (see %s/log)" % (READY_TIMEOUT_SECONDS, self.c))
                time.sleep(0.2)
        self.run("radosgw-admin", "user", "create", "--uid=test", "--display-name=test",
                 "--access-key=" + access_key, "--secret=" + secret_key)

    def stop(self):
        """SIGTERM to every daemon, SIGKILL to those still there after STOP_TIMEOUT_SECONDS; then the
        folder goes. The gateway and the OSD go first, while the monitor can still hear them leave."""
        run_dir = os.path.join(self.c, "run")
        pids = []
        names = sorted(os.listdir(run_dir), key=lambda name: name.startswith("mon.")) if os.path.isdir(run_dir) else []
        for name in names:
            if name.endswith(".pid"):
                try:
                    with open(os.path.join(run_dir, name)) as handle:
                        pids.append(int(handle.read().strip()))
                except (OSError, ValueError):
                    pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for pid in pids:
            while time.monotonic() < deadline:
                if not running(pid):
                    break
                time.sleep(0.1)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        shutil.rmtree(self.directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("--access-key", default="HLSCAPTESTKEY")
    parser.add_argument("--secret-key", default="hlscap-test-secret")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    cluster = Cluster(args.directory, args.port or free_port())
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    started = time.monotonic()
    try:
        cluster.start(args.access_key, args.secret_key)
        print(f"gateway http://127.0.0.1:{cluster.port}/ ready in {time.monotonic() - started:.1f} s", flush=True)
        while not stopping:
            time.sleep(0.2)
    except Exception as error:  # the reason goes to the test's output, then everything is stopped
        print(f"s3_gateway: {error}", file=sys.stderr, flush=True)
        cluster.stop()
        return 1
    cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
