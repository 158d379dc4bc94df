// RowSet: flags and list agree through add, add_all and clear; bad ids are named.
#include "core/row_set.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ct {
namespace {

TEST(RowSet, AddsOnceClearsWhatItHoldsAndGoesAll) {
  RowSet s(10);
  const int32_t ids[] = {3, 7, 3, 0};
  s.add(ids, 4);
  EXPECT_EQ(s.list(), (std::vector<int32_t>{3, 7, 0}));
  EXPECT_TRUE(s.contains(7));
  EXPECT_FALSE(s.contains(4));
  RowSet t(10);
  t.add(std::vector<int64_t>{4, 7});
  s.add(t);
  EXPECT_EQ(s.list(), (std::vector<int32_t>{3, 7, 0, 4}));
  s.clear();
  EXPECT_TRUE(s.list().empty());
  for (int64_t r = 0; r < 10; ++r) EXPECT_FALSE(s.contains(r));
  RowSet all(10, /*all=*/true);
  s.add(all);
  EXPECT_TRUE(s.all());
  for (int64_t r = 0; r < 10; ++r) EXPECT_EQ(s.flags()[r], 1);
  s.clear();
  EXPECT_FALSE(s.all());
  for (int64_t r = 0; r < 10; ++r) EXPECT_EQ(s.flags()[r], 0);
}

TEST(RowSet, RefusesIdsOutsideTheTable) {
  RowSet s(5);
  const int32_t bad[] = {1, 5};
  EXPECT_THROW(s.add(bad, 2), Error);
  EXPECT_THROW(s.add(std::vector<int64_t>{-1}), Error);
  EXPECT_THROW(s.add(RowSet(6)), Error);
}

}  // namespace
}  // namespace ct
