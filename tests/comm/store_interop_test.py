#!/usr/bin/python3
"""store_interop_test.py PEER: our TCP store against PyTorch's c10d TCPStore (Debian's python3-torch, 1.13).

A. Our server (`PEER serve`) with torch.distributed.TCPStore(is_master=False) clients (one built with a world
   size, which opens with ADD "init/" and a second idle connection, like torchrun's workers) and our client
   (`PEER client`): set/get/add/compare_set/wait/check/delete/num_keys written on one side, read on the other.
B. torch.distributed.TCPStore(is_master=True) started here, with our client: the same round trip; the probe must
   find the 1.13 protocol.
Every wait is bounded; the peers are killed on exit. Exit 77 (skip) when torch cannot be imported.
"""
import datetime
import subprocess
import sys
import threading

try:
    import torch.distributed as dist
except Exception as e:  # noqa: BLE001 - any import failure means: no torch here
    print(f"SKIP: torch.distributed does not import ({e!r}); this test needs Debian's python3-torch")
    sys.exit(77)

PEER = sys.argv[1]
TIMEOUT = datetime.timedelta(seconds=10)
procs = []


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


class Peer:
    """A ct_store_peer process; every reply line is awaited with a deadline."""

    def __init__(self, *args):
        self.p = subprocess.Popen([PEER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(self.p)
        self.first = self.line()

    def line(self, timeout=15):
        out = []
        t = threading.Thread(target=lambda: out.append(self.p.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        if not out or not out[0]:
            fail(f"no reply from {PEER} within {timeout} s")
        return out[0].strip()

    def send(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()

    def do(self, cmd):
        self.send(cmd)
        return self.line()

    def ok(self, cmd):
        r = self.do(cmd)
        check(r.startswith("ok"), f"'{cmd}' -> '{r}'")
        return r[3:]


def round_trip(py, cpp, tag):
    """Python client `py` and our client `cpp` on one store."""
    py.set(f"{tag}a", "from-python")
    check(cpp.ok(f"get {tag}a 5000") == "from-python", "C++ reads what Python set")
    cpp.ok(f"set {tag}b from-cpp")
    check(py.get(f"{tag}b") == b"from-cpp", "Python reads what C++ set")

    check(py.add(f"{tag}n", 5) == 5, "Python add")
    check(cpp.ok(f"add {tag}n 2") == "7", "C++ add continues Python's counter")
    check(py.add(f"{tag}n", 0) == 7, "Python add sees C++'s increment")
    check(py.get(f"{tag}n") == b"7", "counters are decimal ASCII")

    check(py.compare_set(f"{tag}c", "", "x") == b"x", "Python compare_set creates")
    check(cpp.ok(f"cs {tag}c x y") == "y", "C++ compare_set swaps Python's value")
    check(py.compare_set(f"{tag}c", "zz", "w") == b"y", "Python compare_set mismatch returns the current value")
    check(cpp.ok(f"cs {tag}missing zz w") == "zz", "compare_set of a missing key with an expected value")
    check(cpp.ok(f"check {tag}missing") == "0", "... and does not create it")

    check(cpp.ok(f"check {tag}a {tag}b {tag}c {tag}n") == "1", "C++ check sees Python's keys")
    check(cpp.ok(f"check {tag}a {tag}nope") == "0", "C++ check of a missing key")

    # Python waits for a key C++ sets later; C++ waits for a key Python sets later.
    cpp.ok(f"later 300 set {tag}w1 v")
    py.wait([f"{tag}w1"], datetime.timedelta(seconds=5))
    cpp.send(f"wait 5000 {tag}w2")
    py.set(f"{tag}w2", "v")
    r = cpp.line()
    check(r == "ok", f"C++ wait for a key Python set: {r}")
    try:
        py.wait([f"{tag}never"], datetime.timedelta(milliseconds=300))
        fail("Python wait for a missing key returned")
    except RuntimeError:
        pass
    r = cpp.do(f"get {tag}never 200")
    check(r.startswith("err") and "timed out" in r and f"{tag}never" in r, f"C++ get timeout: {r}")

    check(py.delete_key(f"{tag}a") is True, "Python delete")
    check(cpp.ok(f"check {tag}a") == "0", "C++ sees Python's delete")
    check(cpp.ok(f"del {tag}b") == "1", "C++ delete")
    check(py.delete_key(f"{tag}b") is False, "Python sees C++'s delete")
    check(cpp.ok(f"del {tag}b") == "0", "C++ delete of a missing key")

    n = py.num_keys()
    check(int(cpp.ok("numkeys")) == n, f"num_keys agree ({n})")
    py.set(f"{tag}extra", "1")
    check(int(cpp.ok("numkeys")) == n + 1, "num_keys counts a new key")


def main():
    # ---- A: our server, torch's clients and ours
    srv = Peer("serve")
    check(srv.first.startswith("port "), f"server: {srv.first}")
    port = int(srv.first.split()[1])
    py = dist.TCPStore("127.0.0.1", port, is_master=False, timeout=TIMEOUT)
    # Built with a world size, as torchrun's workers are: ADD "init/" first, plus the idle callback connection.
    py2 = dist.TCPStore("127.0.0.1", port, world_size=2, is_master=False, timeout=TIMEOUT)
    cpp = Peer("client", "127.0.0.1", str(port))
    check(cpp.first.startswith("ok tcp store 127.0.0.1:") and "c10d 2.x" in cpp.first, f"client: {cpp.first}")
    round_trip(py, cpp, "A/")
    py2.set("A/two", "2")
    check(cpp.ok("get A/two 1000") == "2", "a second Python client")
    print("A: our server + torch 1.13 clients + our client: ok")
    cpp.send("quit")
    srv.send("quit")

    # ---- B: torch's server, our client
    master = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=TIMEOUT)
    cpp = Peer("client", "127.0.0.1", str(master.port))
    check(cpp.first.startswith("ok") and "c10d 1.13" in cpp.first, f"probe against torch's server: {cpp.first}")
    round_trip(master, cpp, "B/")
    print("B: torch 1.13 server + our client: ok")
    cpp.send("quit")
    for p in procs:
        p.wait(timeout=10)
        check(p.returncode == 0, f"{p.args} exited {p.returncode}")
    print("PASS")


try:
    main()
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
