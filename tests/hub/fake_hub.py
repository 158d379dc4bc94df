#!/usr/bin/python3
"""A stand-in for huggingface.co that the hub tests start on loopback (standard library only).

Serves every folder ROOT/<org>/<name> (or ROOT/<name>, ROOT/datasets/<org>/<name>) as a repo whose only revision
is `main` (or its commit hash, sha1 of the repo id). /<repo>/resolve/<rev>/<file> answers as the Hub does:
git files with 200 + ETag (git blob sha1) + X-Repo-Commit; LFS files (*.safetensors, *.bin) with a 302 to a
"CDN" on a second port, carrying X-Linked-Etag (sha256) and X-Linked-Size; unknown repos 401 RepoNotFound;
unknown revisions 404 RevisionNotFound; missing files 404 EntryNotFound. ROOT/_hub.json adds behaviours:
  {"renames": {"old/name": "org/name"}, "gated": {"org/gated": "token"}, "fail_once": ["org/x/config.json"],
   "drop_once": ["org/x/model.safetensors"], "cdn_delay": {"org/x/model.safetensors": 0.5}}
fail_once: the first request for that file answers 503. drop_once: the first CDN GET of it sends half the bytes
and closes the connection. cdn_delay: seconds the CDN waits before that file's body. GET /_stats returns every request
seen so far as JSON. Usage: fake_hub.py ROOT PORT_FILE (writes "<hub port> <cdn port>" there once listening).
Dataset repos (ROOT/datasets/<org>/<name>) also have the branch refs/convert/parquet, served from the folder
ROOT/datasets/<org>/<name>@convert when it exists, and GET /api/datasets/<repo>/revision/<rev> lists a revision's
files ({"id", "sha", "siblings": [{"rfilename"}]}), as huggingface_hub's dataset_info reads it. Parquet files are LFS.
"""
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
LOG = []
LOG_LOCK = threading.Lock()
DONE_ONCE = set()
CDN_PORT = [0]


def config():
    p = os.path.join(ROOT, "_hub.json")
    return json.load(open(p)) if os.path.exists(p) else {}


def commit_of(repo):
    return hashlib.sha1(("commit:" + repo).encode()).hexdigest()


def once(key):
    with LOG_LOCK:
        if key in DONE_ONCE:
            return False
        DONE_ONCE.add(key)
        return True


def is_lfs(path):
    return path.endswith(".safetensors") or path.endswith(".bin") or path.endswith(".parquet")


CONVERT = "refs/convert/parquet"


def revision_folder(repo, rev):
    """(folder, commit) serving `rev` of `repo`, or None when the revision does not exist."""
    folder = os.path.join(ROOT, repo)
    if rev in ("main", commit_of(repo)):
        return folder, commit_of(repo)
    conv = folder + "@convert"
    if repo.startswith("datasets/") and os.path.isdir(conv) and rev in (CONVERT, commit_of(repo + "@convert")):
        return conv, commit_of(repo + "@convert")
    return None


def record(handler, server):
    with LOG_LOCK:
        LOG.append({"server": server, "method": handler.command, "path": handler.path,
                    "range": handler.headers.get("Range"), "auth": handler.headers.get("Authorization")})


class Hub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, headers=None, body=b""):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def error(self, status, code, msg, extra=None):
        h = {"X-Error-Code": code, "X-Error-Message": msg, "Content-Type": "application/json"}
        h.update(extra or {})
        self.reply(status, h, json.dumps({"error": msg}).encode())

    def do_HEAD(self):
        self.handle_resolve()

    def do_GET(self):
        if self.path == "/_stats":
            with LOG_LOCK:
                body = json.dumps(LOG).encode()
            return self.reply(200, {"Content-Type": "application/json"}, body)
        if self.path.startswith("/api/"):
            return self.handle_api()
        self.handle_resolve()

    def check_repo(self, repo):
        """Answers the error and returns False for unknown or gated repos, as resolve does."""
        cfg = config()
        if not os.path.isdir(os.path.join(ROOT, repo)):
            self.error(401, "RepoNotFound", "Repository not found")
            return False
        if repo in cfg.get("gated", {}):
            auth = self.headers.get("Authorization")
            if auth is None:
                self.error(401, "GatedRepo", "Access to dataset %s is restricted." % repo)
                return False
            if auth != "Bearer " + cfg["gated"][repo]:
                self.error(403, "GatedRepo", "Access to dataset %s is restricted and you are not in the authorized list." % repo)
                return False
        return True

    def handle_api(self):
        record(self, "hub")
        parts = self.path.split("?")[0].split("/")  # ['', 'api', 'datasets', org, name, 'revision', rev]
        if len(parts) < 7 or parts[2] != "datasets" or parts[5] != "revision":
            return self.error(404, "EntryNotFound", "unknown API")
        repo = "datasets/" + parts[3] + "/" + parts[4]
        if not self.check_repo(repo):
            return
        rev = urllib.parse.unquote("/".join(parts[6:]))
        found = revision_folder(repo, rev)
        if found is None:
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
        folder, commit = found
        files = []
        for dirpath, _, names in os.walk(folder):
            for n in names:
                files.append(os.path.relpath(os.path.join(dirpath, n), folder))
        body = {"id": repo[len("datasets/"):], "sha": commit, "siblings": [{"rfilename": f} for f in sorted(files)]}
        self.reply(200, {"Content-Type": "application/json"}, json.dumps(body).encode())

    def handle_resolve(self):
        record(self, "hub")
        cfg = config()
        parts = self.path.split("?")[0].lstrip("/").split("/")
        if "resolve" not in parts:
            return self.error(404, "EntryNotFound", "not a resolve URL")
        i = parts.index("resolve")
        repo = "/".join(parts[:i])
        if len(parts) < i + 3:
            return self.error(404, "EntryNotFound", "no file")
        rev = urllib.parse.unquote(parts[i + 1])
        fname = urllib.parse.unquote("/".join(parts[i + 2:]))
        key = repo + "/" + fname
        if key in cfg.get("fail_once", []) and once("fail:" + key):
            return self.reply(503, {"Content-Type": "text/plain"}, b"try again")
        if repo in cfg.get("renames", {}):
            new = cfg["renames"][repo]
            loc = "/" + new + "/resolve/" + urllib.parse.quote(rev, safe="") + "/" + urllib.parse.quote(fname)
            return self.reply(307, {"Location": loc})
        folder = os.path.join(ROOT, repo)
        if not os.path.isdir(folder):
            return self.error(401, "RepoNotFound", "Repository not found")
        if repo in cfg.get("gated", {}):
            auth = self.headers.get("Authorization")
            if auth is None:
                return self.error(401, "GatedRepo", "Access to model %s is restricted." % repo)
            if auth != "Bearer " + cfg["gated"][repo]:
                return self.error(403, "GatedRepo", "Access to model %s is restricted and you are not in the authorized list." % repo)
        found = revision_folder(repo, rev)
        if found is None:
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
        folder, commit = found
        path = os.path.join(folder, fname)
        if not os.path.isfile(path):
            return self.error(404, "EntryNotFound", "%s does not exist on \"main\"" % fname,
                              {"X-Repo-Commit": commit})
        data = open(path, "rb").read()
        if is_lfs(fname):
            sha = hashlib.sha256(data).hexdigest()
            served = os.path.relpath(path, ROOT)
            loc = "http://127.0.0.1:%d/cdn/%s?name=%s" % (CDN_PORT[0], sha, urllib.parse.quote(served, safe=""))
            return self.reply(302, {"Location": loc, "X-Repo-Commit": commit, "X-Linked-Etag": '"%s"' % sha,
                                    "X-Linked-Size": str(len(data)), "ETag": '"%s"' % commit_of(sha)})
        etag = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        self.reply(200, {"X-Repo-Commit": commit, "ETag": '"%s"' % etag, "Content-Type": "application/octet-stream"},
                   data)


class Cdn(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        record(self, "cdn")
        cfg = config()
        url = urllib.parse.urlparse(self.path)
        key = urllib.parse.parse_qs(url.query)["name"][0]
        sha = url.path.split("/")[-1]
        repo_file = os.path.join(ROOT, key)
        data = open(repo_file, "rb").read()
        assert hashlib.sha256(data).hexdigest() == sha
        time.sleep(cfg.get("cdn_delay", {}).get(key, 0))
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
        if key in cfg.get("drop_once", []) and once("drop:" + key):
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if start > 0:
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    cdn = ThreadingHTTPServer(("127.0.0.1", 0), Cdn)
    hub = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    CDN_PORT[0] = cdn.server_address[1]
    for s in (cdn, hub):
        s.daemon_threads = True
        threading.Thread(target=s.serve_forever, daemon=True).start()
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (hub.server_address[1], cdn.server_address[1]))
    os.rename(tmp, sys.argv[2])
    # Ends with the test: the parent's death closes stdin (when started with a pipe) or SIGTERM ends it.
    deadline = time.time() + float(os.environ.get("FAKE_HUB_LIFETIME", "600"))
    while time.time() < deadline:
        time.sleep(0.2)


if __name__ == "__main__":
    main()
