// --dataset_name resolution and the datasets cache without a network: names/configs accepted and refused,
// official file names, the cache path of a URL, the SQuAD-shape check's one-line errors, a cached file used
// with no request (its URL points at a closed port), offline with nothing cached.
#include "tasks/question_answering/squad_dataset.h"

#include "data/datasets_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "../../data/test_util.h"

namespace ct::tasks {
namespace {

using data::testing::expect_error;
using data::testing::TempDir;

TEST(SquadDataset, Names) {
  EXPECT_FALSE(resolve_squad_dataset("squad", "").v2);
  EXPECT_FALSE(resolve_squad_dataset("rajpurkar/squad", "plain_text").v2);
  EXPECT_TRUE(resolve_squad_dataset("squad_v2", "squad_v2").v2);
  EXPECT_EQ(resolve_squad_dataset("rajpurkar/squad_v2", "").name, "squad_v2");
  expect_error([] { resolve_squad_dataset("glue", ""); }, {"--dataset_name: 'glue' is not available"});
  expect_error([] { resolve_squad_dataset("squad", "squad_v2"); },
               {"--dataset_config_name: 'squad_v2' is not a config of squad", "plain_text"});
  expect_error([] { resolve_squad_dataset("squad_v2", "plain_text"); }, {"it has one: squad_v2"});
  const auto v1 = resolve_squad_dataset("squad", "");
  const auto v2 = resolve_squad_dataset("squad_v2", "");
  EXPECT_EQ(squad_file_name(v1, "train"), "train-v1.1.json");
  EXPECT_EQ(squad_file_name(v1, "validation"), "dev-v1.1.json");
  EXPECT_EQ(squad_file_name(v2, "train"), "train-v2.0.json");
  EXPECT_EQ(squad_file_name(v2, "validation"), "dev-v2.0.json");
  expect_error([&] { squad_file_name(v1, "test"); }, {"squad has no 'test' split"});
}

TEST(SquadDataset, UrlAndCachePaths) {
  ::unsetenv("CORETRAIN_SQUAD_URL");
  EXPECT_EQ(squad_base_url(), "https://rajpurkar.github.io/SQuAD-explorer/dataset");
  ::setenv("CORETRAIN_SQUAD_URL", "http://127.0.0.1:8000/x//", 1);
  EXPECT_EQ(squad_base_url(), "http://127.0.0.1:8000/x");
  ::unsetenv("CORETRAIN_SQUAD_URL");
  EXPECT_EQ(squad_cache_path("/c", "https://rajpurkar.github.io/SQuAD-explorer/dataset/train-v1.1.json"),
            "/c/coretrain-squad/rajpurkar.github.io/SQuAD-explorer/dataset/train-v1.1.json");
  EXPECT_EQ(squad_cache_path("/c", "http://127.0.0.1:8000/../a?b=1/dev-v1.1.json"),
            "/c/coretrain-squad/127.0.0.1_8000/_/a_b_1/dev-v1.1.json");
  EXPECT_EQ(data::datasets_cache_dir("/explicit"), "/explicit");
  ::setenv("HF_DATASETS_CACHE", "/dc", 1);
  EXPECT_EQ(data::datasets_cache_dir(""), "/dc");
  ::unsetenv("HF_DATASETS_CACHE");
  ::setenv("HF_HOME", "/hh", 1);
  EXPECT_EQ(data::datasets_cache_dir(""), "/hh/datasets");
  ::unsetenv("HF_HOME");
}

TEST(SquadDataset, Offline) {
  ::unsetenv("HF_DATASETS_OFFLINE");
  ::unsetenv("HF_HUB_OFFLINE");
  EXPECT_FALSE(datasets_offline());
  ::setenv("HF_DATASETS_OFFLINE", "1", 1);
  EXPECT_TRUE(datasets_offline());
  ::unsetenv("HF_DATASETS_OFFLINE");
  ::setenv("HF_HUB_OFFLINE", "TRUE", 1);
  EXPECT_TRUE(datasets_offline());
  ::unsetenv("HF_HUB_OFFLINE");
}

TEST(SquadDataset, ShapeCheck) {
  check_squad_json(R"({"version": "1.1", "data": []})", "f");
  expect_error([] { check_squad_json("<!DOCTYPE html>\n<html>\n<body>", "u"); },
               {"u: not JSON", "it starts with '<!DOCTYPE html> <html> <body>'"});
  expect_error([] { check_squad_json(R"({"data": {}})", "u"); }, {"u: not SQuAD JSON"});
  expect_error([] { check_squad_json(R"([1, 2])", "u"); }, {"u: not SQuAD JSON"});
}

TEST(SquadDataset, CachedFileNeedsNoRequest) {
  TempDir dir;
  const std::string url = "http://127.0.0.1:1/squad/train-v1.1.json";  // nothing listens on port 1
  expect_error([&] { fetch_squad_file(url, dir.path(), /*offline=*/true); },
               {url, "is not in the datasets cache",
                dir.path() + "/coretrain-squad/127.0.0.1_1/squad/train-v1.1.json", "HF_DATASETS_OFFLINE"});
  // Not cached, online: the connection error names the URL and nothing is left in the cache but the lock.
  expect_error([&] { fetch_squad_file(url, dir.path(), /*offline=*/false); }, {url});
  const std::string path = squad_cache_path(dir.path(), url);
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(e.path().extension(), ".lock") << e.path();
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  dir.write("coretrain-squad/127.0.0.1_1/squad/train-v1.1.json", R"({"version": "1.1", "data": []})");
  EXPECT_EQ(fetch_squad_file(url, dir.path(), false), path);
  EXPECT_EQ(fetch_squad_file(url, dir.path(), true), path);
}

}  // namespace
}  // namespace ct::tasks
