// The Hub client against tests/hub/fake_hub.py on loopback: cache layout, offline use, Python-written caches,
// concurrent downloads, resume, retries, redirects, errors.
#include "hub/hub_client.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <random>

#include "core/fs.h"
#include "fake_hub.h"
#include "hub/hub_cache.h"
#include "hub/hub_url.h"

namespace ct::hub {
namespace {
namespace stdfs = std::filesystem;

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(g() & 0xff);
  return s;
}

void put(const std::string& path, const std::string& content) {
  stdfs::create_directories(stdfs::path(path).parent_path());
  fs::write_file_atomic(path, content);
}

class HubTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = stdfs::temp_directory_path() / ("ct_hub_test_" + std::to_string(::getpid()));
    stdfs::remove_all(base_);
    const std::string root = (base_ / "hub").string();
    put(root + "/org/tiny-bert/config.json", R"({"model_type": "bert"})");
    put(root + "/org/tiny-bert/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
    put(root + "/org/tiny-bert/model.safetensors", random_bytes(300000, 1));
    put(root + "/org/tiny-bert/sub/dir/nested.txt", "nested");
    put(root + "/org/flaky/config.json", R"({"flaky": true})");
    put(root + "/org/flaky/model.safetensors", random_bytes(2000000, 2));
    put(root + "/org/slow/model.safetensors", random_bytes(500000, 3));
    put(root + "/org/gated/config.json", R"({"gated": true})");
    put(root + "/bert-legacy/config.json", R"({"legacy": true})");
    put(root + "/datasets/org/squadish/plain/train.json", R"({"data": []})");
    put(root + "/_hub.json", R"({"renames": {"old-org/old-name": "org/tiny-bert"},
      "gated": {"org/gated": "hf_right"}, "fail_once": ["org/flaky/config.json"],
      "drop_once": ["org/flaky/model.safetensors"], "cdn_delay": {"org/slow/model.safetensors": 0.5}})");
    // No token or offline switch from the environment the tests run in.
    for (const char* v :
         {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
          "TRANSFORMERS_CACHE", "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE"})
      ::unsetenv(v);
    ::setenv("HF_HOME", (base_ / "hf_home").c_str(), 1);
    hub_ = new test::FakeHub(root);
  }
  static void TearDownTestSuite() {
    delete hub_;
    hub_ = nullptr;
    stdfs::remove_all(base_);
  }

  // Options of a client with its own fresh cache.
  HubOptions options(const std::string& cache_name) {
    HubOptions o;
    o.endpoint = hub_->url();
    o.cache_dir = (base_ / cache_name).string();
    stdfs::remove_all(o.cache_dir);
    o.offline = false;
    o.retry_wait = 0.05;
    return o;
  }
  static FileRef ref(const std::string& repo, const std::string& file, const std::string& rev = "main") {
    FileRef r;
    r.repo_id = repo;
    r.filename = file;
    r.revision = rev;
    return r;
  }
  static std::string source(const std::string& repo_file) {
    return fs::read_file(hub_->root() + "/" + repo_file);
  }
  static stdfs::path base_;
  static test::FakeHub* hub_;
};
stdfs::path HubTest::base_;
test::FakeHub* HubTest::hub_ = nullptr;

TEST(HubUrl, ResolveUrlAndFolders) {
  EXPECT_EQ(resolve_url("https://huggingface.co", RepoType::model, "google-bert/bert-large-uncased", "main",
                        "config.json"),
            "https://huggingface.co/google-bert/bert-large-uncased/resolve/main/config.json");
  EXPECT_EQ(
      resolve_url("http://h", RepoType::dataset, "rajpurkar/squad", "refs/pr/1", "plain_text/a b.parquet"),
      "http://h/datasets/rajpurkar/squad/resolve/refs%2Fpr%2F1/plain_text/a%20b.parquet");
  EXPECT_EQ(repo_folder_name(RepoType::model, "google-bert/bert-large-uncased"),
            "models--google-bert--bert-large-uncased");
  EXPECT_EQ(repo_folder_name(RepoType::model, "bert-base-uncased"), "models--bert-base-uncased");
  EXPECT_EQ(repo_folder_name(RepoType::dataset, "rajpurkar/squad"), "datasets--rajpurkar--squad");
  ::setenv("HF_ENDPOINT", "http://mirror.local:8080/", 1);
  EXPECT_EQ(hub_endpoint(), "http://mirror.local:8080");
  ::unsetenv("HF_ENDPOINT");
  EXPECT_EQ(hub_endpoint(), "https://huggingface.co");
  EXPECT_EQ(url_origin("http://127.0.0.1:99/a/b"), "http://127.0.0.1:99");
  EXPECT_EQ(url_origin("/a/b"), "");
}

TEST(HubUrl, RepoIds) {
  for (const char* ok : {"bert-base-uncased", "google-bert/bert-large-uncased", "org/tiny_bert.v2", "a/b"})
    EXPECT_TRUE(looks_like_repo_id(ok)) << ok;
  const std::vector<std::string> bad_ids = {
      "",         "a/b/c", "./model", "/abs/path",         "org/-x", "org--x/y", "a..b",
      "my model", "dir/",  "x.",      std::string(97, 'a')};
  for (const std::string& bad : bad_ids) EXPECT_FALSE(looks_like_repo_id(bad)) << bad;
  EXPECT_TRUE(is_commit_hash("0123456789abcdef0123456789abcdef01234567"));
  EXPECT_FALSE(is_commit_hash("main"));
  EXPECT_FALSE(is_commit_hash("0123456789ABCDEF0123456789abcdef01234567"));
}

TEST(HubCacheDir, EnvironmentPrecedence) {
  const char* vars[] = {"HF_HUB_CACHE",
                        "HUGGINGFACE_HUB_CACHE",
                        "HF_HOME",
                        "XDG_CACHE_HOME",
                        "TRANSFORMERS_CACHE",
                        "PYTORCH_TRANSFORMERS_CACHE",
                        "PYTORCH_PRETRAINED_BERT_CACHE",
                        "HOME"};
  std::map<std::string, std::string> saved;
  for (const char* v : vars)
    if (const char* x = std::getenv(v)) saved[v] = x;
  for (const char* v : vars) ::unsetenv(v);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(hub_cache_dir(), "/home/u/.cache/huggingface/hub");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(hub_cache_dir(), "/xdg/huggingface/hub");
  ::setenv("HF_HOME", "~/hf", 1);
  EXPECT_EQ(hub_cache_dir(), "/home/u/hf/hub");
  EXPECT_EQ(hf_home(), "/home/u/hf");
  ::setenv("HUGGINGFACE_HUB_CACHE", "/old", 1);
  EXPECT_EQ(hub_cache_dir(), "/old");
  ::setenv("HF_HUB_CACHE", "/new", 1);
  EXPECT_EQ(hub_cache_dir(), "/new");
  ::setenv("PYTORCH_PRETRAINED_BERT_CACHE", "/pbc", 1);
  EXPECT_EQ(hub_cache_dir(), "/pbc");
  EXPECT_EQ(hub_cache_dir("", /*transformers_env=*/false), "/new");
  ::setenv("TRANSFORMERS_CACHE", "/tc", 1);
  EXPECT_EQ(hub_cache_dir(), "/tc");
  EXPECT_EQ(hub_cache_dir("/flag"), "/flag");
  for (const char* v : vars) ::unsetenv(v);
  for (const auto& [k, v] : saved) ::setenv(k.c_str(), v.c_str(), 1);
}

TEST(HubCacheDir, OfflineSwitches) {
  ::unsetenv("HF_HUB_OFFLINE");
  ::unsetenv("TRANSFORMERS_OFFLINE");
  EXPECT_FALSE(offline_from_env());
  ::setenv("HF_HUB_OFFLINE", "0", 1);
  EXPECT_FALSE(offline_from_env());
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  EXPECT_TRUE(offline_from_env());
  ::unsetenv("HF_HUB_OFFLINE");
  ::setenv("TRANSFORMERS_OFFLINE", "TRUE", 1);
  EXPECT_TRUE(offline_from_env());
  ::unsetenv("TRANSFORMERS_OFFLINE");
}

TEST_F(HubTest, DownloadWritesHuggingfaceHubLayout) {
  HubClient c(options("layout"));
  const std::string cfg = c.resolve(ref("org/tiny-bert", "config.json"));
  const std::string weights = c.resolve(ref("org/tiny-bert", "model.safetensors"));
  const std::string nested = c.resolve(ref("org/tiny-bert", "sub/dir/nested.txt"));
  const stdfs::path repo = stdfs::path(c.cache_root()) / "models--org--tiny-bert";
  const std::string commit = fs::read_file((repo / "refs/main").string());
  ASSERT_TRUE(is_commit_hash(commit)) << "refs/main holds the bare commit, no newline: '" << commit << "'";
  EXPECT_EQ(cfg, (repo / "snapshots" / commit / "config.json").string());
  EXPECT_EQ(fs::read_file(cfg), source("org/tiny-bert/config.json"));
  EXPECT_EQ(fs::read_file(weights), source("org/tiny-bert/model.safetensors"));
  EXPECT_EQ(fs::read_file(nested), "nested");
  // Relative symlinks into blobs/, named by etag (git sha1 for git files, sha256 for LFS files).
  const std::string cfg_link = stdfs::read_symlink(cfg).string();
  ASSERT_EQ(cfg_link.rfind("../../blobs/", 0), 0u) << cfg_link;
  EXPECT_EQ(cfg_link.size(), std::string("../../blobs/").size() + 40);
  const std::string w_link = stdfs::read_symlink(weights).string();
  EXPECT_EQ(w_link.rfind("../../blobs/", 0), 0u) << w_link;
  EXPECT_EQ(w_link.size(), std::string("../../blobs/").size() + 64);
  EXPECT_EQ(stdfs::read_symlink(nested).string().rfind("../../../../blobs/", 0), 0u);
  EXPECT_TRUE(stdfs::is_regular_file(repo / "blobs" / stdfs::path(w_link).filename()));
  EXPECT_FALSE(stdfs::is_symlink(repo / "blobs" / stdfs::path(w_link).filename()));
  EXPECT_TRUE(stdfs::exists(stdfs::path(c.cache_root()) / ".locks/models--org--tiny-bert" /
                            (stdfs::path(w_link).filename().string() + ".lock")));
  int blobs = 0;
  for (const auto& e : stdfs::directory_iterator(repo / "blobs")) {
    EXPECT_EQ(e.path().extension(), "") << "leftover " << e.path();
    ++blobs;
  }
  EXPECT_EQ(blobs, 3);
  // A second resolve online asks the Hub (HEAD) but downloads nothing.
  const int gets = hub_->count("/org/tiny-bert/resolve/main/config.json", "GET");
  EXPECT_EQ(c.resolve(ref("org/tiny-bert", "config.json")), cfg);
  EXPECT_EQ(hub_->count("/org/tiny-bert/resolve/main/config.json", "GET"), gets);
}

TEST_F(HubTest, OfflineReadsTheCacheWithoutAnyRequest) {
  auto o = options("offline");
  HubClient(o).resolve(ref("org/tiny-bert", "config.json"));
  HubClient(o).resolve(ref("org/tiny-bert", "model.safetensors"));
  const size_t before = hub_->requests().size();
  o.offline = true;
  HubClient off(o);
  EXPECT_EQ(fs::read_file(off.resolve(ref("org/tiny-bert", "config.json"))),
            source("org/tiny-bert/config.json"));
  EXPECT_EQ(fs::read_file(off.resolve(ref("org/tiny-bert", "model.safetensors"))),
            source("org/tiny-bert/model.safetensors"));
  EXPECT_FALSE(off.resolve_optional(ref("org/tiny-bert", "tokenizer.json")));
  // The environment switch does the same.
  o.offline.reset();
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  HubClient env_off(o);
  ::unsetenv("HF_HUB_OFFLINE");
  EXPECT_TRUE(env_off.offline());
  EXPECT_EQ(fs::read_file(env_off.resolve(ref("org/tiny-bert", "config.json"))),
            source("org/tiny-bert/config.json"));
  EXPECT_EQ(hub_->requests().size(), before) << "(/_stats itself is not counted)";
}

TEST_F(HubTest, OfflineMissingFileNamesItAndTheSwitch) {
  auto o = options("offline_missing");
  HubClient(o).resolve(ref("org/tiny-bert", "config.json"));
  o.offline = true;
  HubClient off(o);
  try {
    off.resolve(ref("org/tiny-bert", "vocab.txt"));
    FAIL() << "expected an error";
  } catch (const HubError& e) {
    EXPECT_EQ(e.code(), HubErrorCode::not_cached);
    const std::string m = e.what();
    EXPECT_NE(m.find("vocab.txt of org/tiny-bert at revision main"), std::string::npos) << m;
    EXPECT_NE(m.find("HF_HUB_OFFLINE"), std::string::npos) << m;
    EXPECT_NE(m.find("models--org--tiny-bert"), std::string::npos) << m;
  }
  EXPECT_THROW(off.resolve(ref("org/never-seen", "config.json")), HubError);
}

TEST_F(HubTest, CommitHashRevisionInCacheNeedsNoRequest) {
  auto o = options("by_commit");
  HubClient c(o);
  const std::string p = c.resolve(ref("org/tiny-bert", "config.json"));
  const std::string commit = *c.cache_of(ref("org/tiny-bert", "config.json")).commit_of("main");
  const size_t before = hub_->requests().size();
  EXPECT_EQ(c.resolve(ref("org/tiny-bert", "config.json", commit)), p);
  EXPECT_EQ(hub_->requests().size(), before);
  // Not cached at that commit yet: downloaded by commit, and no refs/<hash> is written.
  EXPECT_EQ(fs::read_file(c.resolve(ref("org/tiny-bert", "vocab.txt", commit))),
            source("org/tiny-bert/vocab.txt"));
  EXPECT_FALSE(stdfs::exists(stdfs::path(c.cache_root()) / "models--org--tiny-bert/refs" / commit));
}

TEST_F(HubTest, ReadsACacheWrittenByPython) {
  // The layout huggingface_hub writes, made by hand: refs/main, a blob, a relative snapshot link, a
  // .no_exist marker; read offline and online (commit hash) without downloading.
  auto o = options("python_cache");
  const stdfs::path repo = stdfs::path(o.cache_dir) / "models--google-bert--bert-base-uncased";
  const std::string commit = "86b5e0934494bd15c9632b12f734a8a67f723594";
  const std::string etag = "45a2321a7ecfdaaf60a6c1fd7f5463994cc8907d";
  put((repo / "refs/main").string(), commit);
  put((repo / "blobs" / etag).string(), R"({"model_type": "bert", "hidden_size": 768})");
  stdfs::create_directories(repo / "snapshots" / commit);
  stdfs::create_symlink("../../blobs/" + etag, repo / "snapshots" / commit / "config.json");
  put((repo / ".no_exist" / commit / "tokenizer.json").string(), "");
  o.offline = true;
  HubClient off(o);
  const std::string p = off.resolve(ref("google-bert/bert-base-uncased", "config.json"));
  EXPECT_EQ(p, (repo / "snapshots" / commit / "config.json").string());
  EXPECT_NE(fs::read_file(p).find("768"), std::string::npos);
  EXPECT_FALSE(off.resolve_optional(ref("google-bert/bert-base-uncased", "tokenizer.json")));
  o.offline = false;
  o.endpoint = "http://127.0.0.1:9";  // nothing listens: proves no request is needed by commit
  HubClient on(o);
  EXPECT_EQ(on.resolve(ref("google-bert/bert-base-uncased", "config.json", commit)), p);
}

TEST_F(HubTest, ConcurrentProcessesDownloadEachFileOnce) {
  auto o = options("concurrent");
  const int before = hub_->count("org%2Fslow%2Fmodel.safetensors", "GET", "cdn");
  constexpr int kProcs = 4;
  std::vector<pid_t> kids;
  for (int i = 0; i < kProcs; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int rc = 0;
      try {
        auto oo = o;
        oo.progress = false;
        HubClient c(oo);
        const std::string p = c.resolve(ref("org/slow", "model.safetensors"));
        rc = fs::read_file(p) == source("org/slow/model.safetensors") ? 0 : 2;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        rc = 1;
      }
      ::_exit(rc);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int st = 0;
    ASSERT_EQ(::waitpid(k, &st, 0), k);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  }
  EXPECT_EQ(hub_->count("org%2Fslow%2Fmodel.safetensors", "GET", "cdn") - before, 1);
}

TEST_F(HubTest, ErrorsNameTheRepoFileRevisionAndWhatToDo) {
  HubClient c(options("errors"));
  auto expect = [&](const FileRef& r, HubErrorCode code, std::vector<std::string> parts) {
    try {
      c.resolve(r);
      ADD_FAILURE() << "expected an error for " << r.repo_id << " " << r.filename;
    } catch (const HubError& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      const std::string m = e.what();
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
      for (const auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
    }
  };
  expect(ref("org/nope", "config.json"), HubErrorCode::repo_not_found, {"org/nope", "not found", "--token"});
  expect(ref("org/gated", "config.json"), HubErrorCode::gated_repo,
         {"org/gated", "gated", "--token", "HF_TOKEN", hub_->url() + "/org/gated"});
  expect(ref("org/tiny-bert", "config.json", "v9"), HubErrorCode::revision_not_found,
         {"revision v9", "org/tiny-bert"});
  expect(ref("org/tiny-bert", "missing.json"), HubErrorCode::entry_not_found,
         {"missing.json", "org/tiny-bert", "revision main"});
  // Optional files: absent is an answer, remembered under .no_exist/<commit>/.
  EXPECT_FALSE(c.resolve_optional(ref("org/tiny-bert", "tokenizer.json")));
  const auto commit = c.cache_of(ref("org/tiny-bert", "x")).commit_of("main");
  ASSERT_TRUE(commit);
  EXPECT_TRUE(stdfs::exists(stdfs::path(c.cache_root()) / "models--org--tiny-bert/.no_exist" / *commit /
                            "tokenizer.json"));
  // The wrong token: 403, said so.
  auto o = options("errors_token");
  o.token = "hf_wrong";
  HubClient wrong(o);
  try {
    wrong.resolve(ref("org/gated", "config.json"));
    ADD_FAILURE();
  } catch (const HubError& e) {
    EXPECT_EQ(e.code(), HubErrorCode::gated_repo);
    EXPECT_NE(std::string(e.what()).find("no access"), std::string::npos) << e.what();
  }
  // The right one, from HF_TOKEN.
  ::setenv("HF_TOKEN", "hf_right", 1);
  HubClient right(options("errors_token2"));
  ::unsetenv("HF_TOKEN");
  EXPECT_EQ(fs::read_file(right.resolve(ref("org/gated", "config.json"))), source("org/gated/config.json"));
  // Not a repo id at all.
  expect(ref("../etc", "passwd"), HubErrorCode::repo_not_found, {"not a valid repo id"});
}

TEST_F(HubTest, TokenFileUnderHfHome) {
  put((base_ / "hf_home/token").string(), "hf_right\n");
  HubClient c(options("token_file"));
  stdfs::remove(base_ / "hf_home/token");
  EXPECT_TRUE(c.has_token());
  EXPECT_EQ(fs::read_file(c.resolve(ref("org/gated", "config.json"))), source("org/gated/config.json"));
}

TEST_F(HubTest, ResumesADroppedDownloadWithRange) {
  HubClient c(options("resume"));
  const std::string p = c.resolve(ref("org/flaky", "model.safetensors"));
  EXPECT_EQ(fs::read_file(p), source("org/flaky/model.safetensors"));
  bool resumed = false;
  for (const auto& r : hub_->requests())
    if (r["server"] == "cdn" && r["path"].get<std::string>().find("org%2Fflaky") != std::string::npos &&
        r["range"].is_string())
      resumed = r["range"] == "bytes=1000000-";
  EXPECT_TRUE(resumed) << hub_->requests().dump();
}

TEST_F(HubTest, RetriesA503) {
  HubClient c(options("retry"));
  const int before = hub_->count("/org/flaky/resolve/main/config.json", "HEAD");
  EXPECT_EQ(fs::read_file(c.resolve(ref("org/flaky", "config.json"))), source("org/flaky/config.json"));
  EXPECT_EQ(hub_->count("/org/flaky/resolve/main/config.json", "HEAD") - before, 2);
}

TEST_F(HubTest, RenamedRepoFollowsTheRelativeRedirect) {
  HubClient c(options("renamed"));
  const std::string p = c.resolve(ref("old-org/old-name", "config.json"));
  EXPECT_EQ(fs::read_file(p), source("org/tiny-bert/config.json"));
  // Cached under the name asked for, as huggingface_hub does.
  EXPECT_NE(p.find("models--old-org--old-name/snapshots/"), std::string::npos) << p;
  HubClient legacy(options("legacy"));
  EXPECT_NE(legacy.resolve(ref("bert-legacy", "config.json")).find("models--bert-legacy/snapshots/"),
            std::string::npos);
  FileRef d = ref("org/squadish", "plain/train.json");
  d.type = RepoType::dataset;
  EXPECT_NE(legacy.resolve(d).find("datasets--org--squadish/snapshots/"), std::string::npos);
}

TEST_F(HubTest, TokenGoesToTheHubButNotToTheCdn) {
  auto o = options("cdn_auth");
  o.token = "hf_right";
  HubClient c(o);
  const size_t before = hub_->requests().size();
  c.resolve(ref("org/tiny-bert", "model.safetensors"));
  const auto all = hub_->requests();
  int hub_auth = 0, cdn = 0;
  for (size_t i = before; i < all.size(); ++i) {
    if (all[i]["server"] == "hub" && all[i]["auth"] == "Bearer hf_right") ++hub_auth;
    if (all[i]["server"] == "cdn") {
      ++cdn;
      EXPECT_TRUE(all[i]["auth"].is_null()) << all[i].dump();
    }
  }
  EXPECT_GE(hub_auth, 1);
  EXPECT_EQ(cdn, 1);
}

TEST_F(HubTest, UnreachableHubFallsBackToTheCache) {
  auto o = options("fallback");
  HubClient(o).resolve(ref("org/tiny-bert", "config.json"));
  o.endpoint = "http://127.0.0.1:9";  // discard port: connection refused
  o.max_retries = 1;
  HubClient c(o);
  EXPECT_EQ(fs::read_file(c.resolve(ref("org/tiny-bert", "config.json"))),
            source("org/tiny-bert/config.json"));
  try {
    c.resolve(ref("org/tiny-bert", "vocab.txt"));
    FAIL();
  } catch (const HubError& e) {
    EXPECT_EQ(e.code(), HubErrorCode::not_cached);
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot reach http://127.0.0.1:9"), std::string::npos) << m;
    EXPECT_NE(m.find("vocab.txt"), std::string::npos) << m;
  }
}

TEST_F(HubTest, WaitingForAStuckLockIsBounded) {
  auto o = options("stuck_lock");
  o.lock_stall_timeout = 0.5;
  HubClient c(o);
  c.resolve(ref("org/tiny-bert", "config.json"));  // learns the layout; now hold the weights' lock
  const std::string sha_link = [&] {
    HubClient probe(options("stuck_probe"));
    return stdfs::read_symlink(probe.resolve(ref("org/tiny-bert", "model.safetensors"))).filename().string();
  }();
  const std::string lock = c.cache_root() + "/.locks/models--org--tiny-bert/" + sha_link + ".lock";
  stdfs::create_directories(stdfs::path(lock).parent_path());
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  // flock locks belong to the open file description: a child holds it so this process's own open conflicts.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    ::flock(fd, LOCK_EX);
    char b = 1;
    (void)!::write(ready[1], &b, 1);
    ::sleep(30);
    ::_exit(0);
  }
  char b;
  ASSERT_EQ(::read(ready[0], &b, 1), 1);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    c.resolve(ref("org/tiny-bert", "model.safetensors"));
    ADD_FAILURE() << "expected the wait to end in an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(lock), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  ::close(fd);
  ::close(ready[0]);
  ::close(ready[1]);
  // The holder is gone (its lock with it): the download goes through.
  EXPECT_EQ(fs::read_file(c.resolve(ref("org/tiny-bert", "model.safetensors"))),
            source("org/tiny-bert/model.safetensors"));
}

}  // namespace
}  // namespace ct::hub
