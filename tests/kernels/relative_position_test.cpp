// DeBERTa's log-bucketed relative positions against torch's
// (tests/kernels/tools/make_relative_position_golden.py, every distance of a 4,096-token sequence under four
// bucket/max-position settings), and the gather rows.
#include "kernels/relative_position.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

TEST(RelativePosition, LogBucketsEqualTorchForEveryDistance) {
  std::ifstream f(std::string(CORETRAIN_TEST_DATA) + "/deberta_buckets.json");
  const auto j = nlohmann::json::parse(f);
  for (const auto& c : j["cases"]) {
    const int64_t buckets = c["bucket_size"], max_position = c["max_position"], first = c["first_distance"];
    const auto want = c["buckets"].get<std::vector<int64_t>>();
    const auto table = relative_position_buckets(-first + 1, buckets, max_position);
    ASSERT_EQ(want.size(), table.size());
    for (size_t k = 0; k < want.size(); ++k)
      ASSERT_EQ(want[k], table[k]) << "distance " << first + static_cast<int64_t>(k) << ", buckets "
                                   << buckets << ", max_position " << max_position;
  }
}

TEST(RelativePosition, NoBucketingKeepsDistancesAndRowsClamp) {
  EXPECT_EQ(-700, log_bucket_position(-700, 0, 512));
  EXPECT_EQ(700, log_bucket_position(700, 256, -1));
  EXPECT_EQ(256, c2p_row(0, 256));
  EXPECT_EQ(0, c2p_row(-300, 256));
  EXPECT_EQ(511, c2p_row(300, 256));
  EXPECT_EQ(255, p2c_row(1, 256));
  EXPECT_THROW(log_bucket_position(10, 2, 512), Error);
}

}  // namespace
}  // namespace ct::kernels
