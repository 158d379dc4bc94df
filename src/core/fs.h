// Files written so that a reader never sees half of one: write to a temporary name beside the target, fsync,
// rename. Directories (checkpoints) the same way: fill "<dir>.tmp-<pid>", fsync, rename.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ct::fs {

// Whole file into memory; throws ct::Error naming the path when it is missing or unreadable.
std::string read_file(const std::string& path);
// Atomic replace of `path` with `content` (temp file + fsync + rename).
void write_file_atomic(const std::string& path, std::string_view content);
// Renames a fully written directory `tmp_dir` to `final_dir` after fsyncing its files; replaces an existing
// `final_dir` only when `replace` is set.
void commit_dir(const std::string& tmp_dir, const std::string& final_dir, bool replace = false);
// fsync a file or directory by path.
void fsync_path(const std::string& path);

}  // namespace ct::fs
