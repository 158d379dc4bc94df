// A set of rows of a [rows, width] table, kept as a flag per row plus the list of the set ones, so adding a
// row, clearing the set and walking it cost the rows in it, not the table's size. The word embeddings'
// gradient uses it for the rows a step's tokens wrote: zeroing, clipping and updating an untouched row of a
// 250k-row vocabulary is a no-op done exactly, so those passes need only visit the set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ct {

class RowSet {
 public:
  // `all`: every row is in the set (what is known of a table nobody tracked).
  explicit RowSet(int64_t rows = 0, bool all = false);

  int64_t rows() const { return static_cast<int64_t>(flags_.size()); }
  bool all() const { return all_; }
  bool contains(int64_t row) const { return flags_[static_cast<size_t>(row)] != 0; }
  // One byte per row, 1 for the rows in the set (all ones when all()).
  const uint8_t* flags() const { return flags_.data(); }
  // The rows in the set in the order they were added; meaningful only while !all().
  const std::vector<int32_t>& list() const { return list_; }

  void add(int64_t row) {
    if (flags_[static_cast<size_t>(row)]) return;
    flags_[static_cast<size_t>(row)] = 1;
    list_.push_back(static_cast<int32_t>(row));
  }
  // Ids outside [0, rows) are an error (ct::Error) naming the id.
  void add(const int32_t* ids, int64_t n);
  void add(const std::vector<int64_t>& rows);
  void add(const RowSet& other);
  void add_all();
  // Empties the set (cost: the rows in it, or the table once after add_all()).
  void clear();

 private:
  std::vector<uint8_t> flags_;
  std::vector<int32_t> list_;
  bool all_ = false;
};

}  // namespace ct
