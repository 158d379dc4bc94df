#include "train/python_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using ct::train::dump_python_json;
using ct::train::parse_python_json;
using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

// What Python's json.dump(m, f, indent=4) writes for {"eval_loss": 812.5, "perplexity": float("inf")}.
TEST(PythonJson, WritesNonFiniteFloatsAsPythonDoes) {
  const json m = {{"eval_loss", 812.5}, {"perplexity", kInf}};
  EXPECT_EQ(dump_python_json(m, 4), "{\n    \"eval_loss\": 812.5,\n    \"perplexity\": Infinity\n}");
  EXPECT_EQ(dump_python_json(json::array({-kInf, std::nan(""), 1.5})), "[-Infinity,NaN,1.5]");
  // Finite documents are nlohmann's dump, byte for byte.
  const json finite = {{"a", {1, 2.25, "NaN"}}, {"b", nullptr}};
  EXPECT_EQ(dump_python_json(finite, 2), finite.dump(2));
}

TEST(PythonJson, ReadsWhatItWritesAndLeavesStringsAlone) {
  const json j = parse_python_json(
      R"({"perplexity": Infinity, "low": -Infinity, "x": NaN, "s": "NaN Infinity \" Infinity", "n": [1, -2.5]})");
  EXPECT_EQ(j["perplexity"].get<double>(), kInf);
  EXPECT_EQ(j["low"].get<double>(), -kInf);
  EXPECT_TRUE(std::isnan(j["x"].get<double>()));
  EXPECT_EQ(j["s"], "NaN Infinity \" Infinity");
  EXPECT_EQ(j["n"], json({1, -2.5}));
  const json round = parse_python_json(dump_python_json({{"p", kInf}, {"q", {-kInf}}}, 4));
  EXPECT_EQ(round["p"].get<double>(), kInf);
  EXPECT_EQ(round["q"][0].get<double>(), -kInf);
  EXPECT_THROW(parse_python_json("{\"a\": Inf}"), json::parse_error);
}

}  // namespace
