#include "core/row_set.h"

#include <algorithm>

#include "core/error.h"

namespace ct {

RowSet::RowSet(int64_t rows, bool all) : flags_(static_cast<size_t>(rows), all ? 1 : 0), all_(all) {}

void RowSet::add(const int32_t* ids, int64_t n) {
  if (all_) return;
  const int64_t rows = this->rows();
  for (int64_t i = 0; i < n; ++i) {
    CT_CHECK(ids[i] >= 0 && ids[i] < rows, "row set: id ", ids[i], " outside [0, ", rows, ")");
    add(ids[i]);
  }
}

void RowSet::add(const std::vector<int64_t>& rows) {
  if (all_) return;
  for (int64_t r : rows) {
    CT_CHECK(r >= 0 && r < this->rows(), "row set: row ", r, " outside [0, ", this->rows(), ")");
    add(r);
  }
}

void RowSet::add(const RowSet& other) {
  CT_CHECK(other.rows() == rows(), "row set: adding a set of ", other.rows(), " rows to one of ", rows());
  if (all_) return;
  if (other.all_) return add_all();
  for (int32_t r : other.list_) add(r);
}

void RowSet::add_all() {
  if (all_) return;
  std::fill(flags_.begin(), flags_.end(), uint8_t{1});
  list_.clear();
  all_ = true;
}

void RowSet::clear() {
  if (all_)
    std::fill(flags_.begin(), flags_.end(), uint8_t{0});
  else
    for (int32_t r : list_) flags_[static_cast<size_t>(r)] = 0;
  list_.clear();
  all_ = false;
}

}  // namespace ct
