#include "core/fs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/error.h"

namespace ct {

TEST(Fs, AtomicWriteReplacesAndLeavesNoTemp) {
  auto dir = std::filesystem::temp_directory_path() / ("ct_fs_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "a.json").string();
  fs::write_file_atomic(path, "one");
  fs::write_file_atomic(path, "two");
  EXPECT_EQ(fs::read_file(path), "two");
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1);
  std::filesystem::remove_all(dir);
}

TEST(Fs, MissingFileNamesThePath) {
  try {
    fs::read_file("/nonexistent/ct/file.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ct/file.json"), std::string::npos);
  }
}

TEST(Fs, CommitDirRefusesToClobber) {
  auto base = std::filesystem::temp_directory_path() / ("ct_fs_dir_" + std::to_string(::getpid()));
  std::filesystem::create_directories(base / "tmp");
  fs::write_file_atomic((base / "tmp" / "x").string(), "x");
  fs::commit_dir((base / "tmp").string(), (base / "final").string());
  EXPECT_EQ(fs::read_file((base / "final" / "x").string()), "x");
  std::filesystem::create_directories(base / "tmp2");
  EXPECT_THROW(fs::commit_dir((base / "tmp2").string(), (base / "final").string()), Error);
  std::filesystem::remove_all(base);
}

// Writers that share a pid (threads here; pods in their own pid namespaces on one shared volume) write the
// same file at once: each must succeed, the file must end as one writer's whole content, and no temporary is
// left.
TEST(Fs, ConcurrentWritersOfOneFileWithTheSamePid) {
  namespace stdfs = std::filesystem;
  const stdfs::path dir = stdfs::temp_directory_path() / ("ct_fs_concurrent_" + std::to_string(::getpid()));
  stdfs::remove_all(dir);
  stdfs::create_directories(dir);
  const std::string path = (dir / "cache.bin").string();
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      const std::string content(4096, static_cast<char>('a' + t));
      for (int i = 0; i < 50; ++i) {
        try {
          fs::write_file_atomic(path, content);
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  for (auto& w : writers) w.join();
  EXPECT_EQ(failures.load(), 0);
  const std::string got = fs::read_file(path);
  ASSERT_EQ(got.size(), 4096u);
  EXPECT_EQ(got, std::string(4096, got[0]));
  int files = 0;
  for (const auto& e : stdfs::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);  // no temporary left behind
  stdfs::remove_all(dir);
}

}  // namespace ct
