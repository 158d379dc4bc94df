#include "core/fs.h"

#include <gtest/gtest.h>

#include <filesystem>

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

}  // namespace ct
