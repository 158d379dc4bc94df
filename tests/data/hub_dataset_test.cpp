// --dataset_name resolution against tests/hub/fake_hub.py serving dataset repos: legacy names, README
// configs, default patterns, a script-only repo with its refs/convert/parquet branch, a gated repo, offline
// mode from the cache, and the errors that say what to do. No network: everything is on loopback.
#include <gtest/gtest.h>

#include <filesystem>

#include "../hub/fake_hub.h"
#include "data/hub_dataset.h"
#include "parquet/parquet_file.h"
#include "test_util.h"

namespace ct::data {
namespace {

namespace sfs = std::filesystem;
using testing::expect_error;
using testing::TempDir;

const std::string kFixtures = std::string(CORETRAIN_SOURCE_DIR) + "/tests/parquet/data/";

void put(const std::string& root, const std::string& rel, const std::string& content) {
  sfs::create_directories(sfs::path(root + "/" + rel).parent_path());
  std::ofstream(root + "/" + rel, std::ios::binary) << content;
}

void copy(const std::string& root, const std::string& rel, const std::string& fixture) {
  sfs::create_directories(sfs::path(root + "/" + rel).parent_path());
  sfs::copy_file(kFixtures + fixture, root + "/" + rel, sfs::copy_options::overwrite_existing);
}

class HubDatasets : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string r = hub_root.path();
    const std::string squad = r + "/datasets/rajpurkar/squad";
    put(squad, "README.md",
        "---\nconfigs:\n- config_name: plain_text\n  data_files:\n  - split: train\n    path: "
        "plain_text/train-*\n"
        "  - split: validation\n    path: plain_text/validation-*\n  default: true\n---\n# SQuAD\n");
    copy(squad, "plain_text/train-00000-of-00001.parquet", "squad.parquet");
    copy(squad, "plain_text/validation-00000-of-00001.parquet", "squad.parquet");
    const std::string glue = r + "/datasets/nyu-mll/glue";
    put(glue, "README.md",
        "---\nconfigs:\n- config_name: cola\n  data_files:\n  - split: train\n    path: cola/train-*\n"
        "- config_name: mrpc\n  data_files:\n  - split: train\n    path: mrpc/train-*\n  - split: "
        "validation\n"
        "    path: mrpc/validation-*\n  - split: test\n    path: mrpc/test-*\ndataset_info:\n- config_name: "
        "mrpc\n"
        "  features:\n  - name: label\n    dtype:\n      class_label:\n        names:\n          '0': "
        "not_equivalent\n"
        "          '1': equivalent\n---\n");
    for (const char* f : {"cola/train-00000-of-00001.parquet", "mrpc/train-00000-of-00001.parquet",
                          "mrpc/validation-00000-of-00001.parquet", "mrpc/test-00000-of-00001.parquet"})
      copy(glue, f, "flat_v1_snappy.parquet");
    const std::string conll = r + "/datasets/eriktks/conll2003";
    put(conll, "README.md", "---\nlanguage:\n- en\n---\n");
    put(conll, "conll2003.py", "# a loading script\n");
    copy(conll + "@convert", "conll2003/train/0000.parquet", "conll.parquet");
    copy(conll + "@convert", "conll2003/validation/0000.parquet", "conll.parquet");
    put(r + "/datasets/org/scripted", "scripted.py", "# only a script\n");
    // A script and nothing else on main (no README): an online run caches nothing of main's files.
    put(r + "/datasets/org/scriptonly", "scriptonly.py", "# only a script\n");
    copy(r + "/datasets/org/scriptonly@convert", "default/train/0000.parquet", "conll.parquet");
    copy(r + "/datasets/org/scriptonly@convert", "default/test/0000.parquet", "conll.parquet");
    const std::string plain = r + "/datasets/org/plain";
    copy(plain, "data/train-00000-of-00002.parquet", "flat_v1_zstd.parquet");
    copy(plain, "data/train-00001-of-00002.parquet", "flat_v2_zstd.parquet");
    copy(plain, "data/test-00000-of-00001.parquet", "flat_v1_gzip.parquet");
    copy(r + "/datasets/org/gated", "data/train-00000-of-00001.parquet", "flat_v1_snappy.parquet");
    put(r, "_hub.json", R"({"gated": {"datasets/org/gated": "secret"}})");
    hub = std::make_unique<hub::test::FakeHub>(r);
  }

  DatasetRequest request(const std::string& name, const std::string& config = "") const {
    DatasetRequest q;
    q.name = name;
    q.config = config;
    q.endpoint = hub->url();
    q.cache_dir = cache.path();
    q.offline = false;
    return q;
  }

  TempDir hub_root, cache;
  std::unique_ptr<hub::test::FakeHub> hub;
};

TEST_F(HubDatasets, SquadByLegacyNameFromReadmeConfigs) {
  const DatasetRequest q = request("squad");
  const ResolvedDataset ds = resolve_dataset(q);
  EXPECT_EQ(ds.repo_id, "rajpurkar/squad");
  EXPECT_EQ(ds.config, "plain_text");
  EXPECT_EQ(ds.split_names(), (std::vector<std::string>{"train", "validation"}));
  EXPECT_EQ(ds.commit.size(), 40u);
  const auto files = fetch_split(q, ds, "validation");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], cache.path() + "/datasets--rajpurkar--squad/snapshots/" + ds.commit +
                          "/plain_text/validation-00000-of-00001.parquet");
  auto pf = parquet::ParquetFile::open(files[0]);
  EXPECT_EQ(pf->num_rows(), 40);
  EXPECT_EQ(dataset_features(ds, files[0])->field("answers")->field("text")->children[0].dtype, "string");
  // The revision's ref is recorded, so offline runs find the snapshot.
  EXPECT_EQ(fs::read_file(cache.path() + "/datasets--rajpurkar--squad/refs/main"), ds.commit);
  expect_error([&] { ds.split("test"); },
               {"rajpurkar/squad config 'plain_text' has no split 'test'; its splits: train, validation"});
}

TEST_F(HubDatasets, GlueConfigs) {
  expect_error([&] { resolve_dataset(request("glue")); },
               {"dataset nyu-mll/glue", "config name is missing", "cola, mrpc"});
  expect_error([&] { resolve_dataset(request("glue", "mnli")); },
               {"no config 'mnli'; available configs: cola, mrpc"});
  const ResolvedDataset ds = resolve_dataset(request("nyu-mll/glue", "mrpc"));
  EXPECT_EQ(ds.split_names(), (std::vector<std::string>{"train", "validation", "test"}));
  EXPECT_EQ(ds.split("test"), (std::vector<std::string>{"mrpc/test-00000-of-00001.parquet"}));
  // The files carry no "huggingface" metadata: the card's ClassLabel names stand in.
  const auto feats = dataset_features(ds, fetch_split(request("glue", "mrpc"), ds, "test")[0]);
  ASSERT_TRUE(feats);
  EXPECT_EQ(feats->field("label")->names, (std::vector<std::string>{"not_equivalent", "equivalent"}));
}

TEST_F(HubDatasets, ScriptOnlyRepoReadsItsParquetConversion) {
  DatasetRequest q = request("conll2003");
  const ResolvedDataset ds = resolve_dataset(q);
  EXPECT_EQ(ds.repo_id, "eriktks/conll2003");
  EXPECT_EQ(ds.revision, "refs/convert/parquet");
  EXPECT_EQ(ds.config, "conll2003");
  EXPECT_EQ(ds.split("train"), (std::vector<std::string>{"conll2003/train/0000.parquet"}));
  const auto files = fetch_split(q, ds, "train");
  auto pf = parquet::ParquetFile::open(files[0]);
  EXPECT_EQ(pf->num_rows(), 30);
  EXPECT_TRUE(sfs::exists(cache.path() + "/datasets--eriktks--conll2003/refs/refs/convert/parquet"));
  expect_error([&] { resolve_dataset(request("org/scripted")); },
               {"dataset org/scripted holds only a loading script (scripted.py)", "no Parquet conversion"});
  // Asking for the branch directly works too.
  q.revision = "refs/convert/parquet";
  EXPECT_EQ(resolve_dataset(q).split_names(), (std::vector<std::string>{"train", "validation"}));
}

// Offline, the loading script is not in the cache, so the rerun must find what the online run chose from the
// cache alone: the refs/convert/parquet snapshot, when the cached main holds no data files (a README only, or
// no snapshot of main at all).
TEST_F(HubDatasets, ScriptOnlyRepoRerunsOfflineFromItsCachedConversion) {
  for (const std::string name : {"conll2003", "org/scriptonly"}) {
    DatasetRequest q = request(name);
    const ResolvedDataset online = resolve_dataset(q);
    std::vector<std::vector<std::string>> online_files;
    for (const auto& s : online.split_names()) online_files.push_back(fetch_split(q, online, s));
    const size_t requests = hub->requests().size();
    q.offline = true;
    const ResolvedDataset offline = resolve_dataset(q);
    EXPECT_EQ(offline.revision, "refs/convert/parquet") << name;
    EXPECT_EQ(offline.commit, online.commit) << name;
    EXPECT_EQ(offline.config, online.config) << name;
    ASSERT_EQ(offline.split_names(), online.split_names()) << name;
    for (size_t i = 0; i < online_files.size(); ++i)
      EXPECT_EQ(fetch_split(q, offline, offline.split_names()[i]), online_files[i]) << name;
    EXPECT_EQ(hub->requests().size(), requests) << name << ": no request offline";
  }
  // Without that earlier run there is nothing to fall back on: the cache error, as for any dataset.
  DatasetRequest q = request("org/scriptonly");
  TempDir other;
  q.cache_dir = other.path();
  q.offline = true;
  expect_error([&] { resolve_dataset(q); }, {"org/scriptonly at revision main is not in the cache"});
}

TEST_F(HubDatasets, DefaultSplitPatterns) {
  const ResolvedDataset ds = resolve_dataset(request("org/plain"));
  EXPECT_EQ(ds.config, "default");
  EXPECT_EQ(ds.split_names(), (std::vector<std::string>{"train", "test"}));
  EXPECT_EQ(ds.split("train").size(), 2u);
  expect_error([&] { resolve_dataset(request("org/plain", "other")); }, {"no config 'other'"});
}

TEST_F(HubDatasets, GatedUnknownAndBadRevision) {
  expect_error([&] { resolve_dataset(request("org/gated")); },
               {"dataset repo org/gated is gated", "--token"});
  DatasetRequest q = request("org/gated");
  q.token = "secret";
  EXPECT_EQ(resolve_dataset(q).split_names(), (std::vector<std::string>{"train"}));
  expect_error([&] { resolve_dataset(request("org/missing")); }, {"dataset repo org/missing not found"});
  expect_error([&] { resolve_dataset(request("nosuchshortname")); }, {"without an owner"});
  q.revision = "v9";
  expect_error([&] { resolve_dataset(q); }, {"revision v9 not found in dataset repo org/gated"});
}

TEST_F(HubDatasets, OfflineReadsTheCachedSnapshot) {
  DatasetRequest q = request("squad");
  const ResolvedDataset online = resolve_dataset(q);
  const auto online_files = fetch_split(q, online, "train");
  const int requests = static_cast<int>(hub->requests().size());
  q.offline = true;
  const ResolvedDataset offline = resolve_dataset(q);
  EXPECT_EQ(offline.commit, online.commit);
  EXPECT_EQ(fetch_split(q, offline, "train"), online_files);
  EXPECT_EQ(static_cast<int>(hub->requests().size()), requests) << "no request offline";
  DatasetRequest empty = q;
  TempDir other;
  empty.cache_dir = other.path();
  expect_error([&] { resolve_dataset(empty); },
               {"rajpurkar/squad at revision main is not in the cache", "offline"});
}

TEST_F(HubDatasets, LocalFolderLaidOutAsARepo) {
  TempDir dir;
  copy(dir.path(), "data/train-00000-of-00001.parquet", "squad.parquet");
  copy(dir.path(), "data/validation-00000-of-00001.parquet", "squad.parquet");
  DatasetRequest q;
  q.name = dir.path();
  const ResolvedDataset ds = resolve_dataset(q);
  EXPECT_TRUE(ds.local);
  EXPECT_EQ(ds.split_names(), (std::vector<std::string>{"train", "validation"}));
  EXPECT_EQ(fetch_split(q, ds, "train")[0], dir.path() + "/data/train-00000-of-00001.parquet");
}

}  // namespace
}  // namespace ct::data
