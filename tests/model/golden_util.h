// The PyTorch golden fixtures (scripts/make_golden.py) as the model tests read them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/config.h"
#include "model/safetensors.h"
#include "qa_model.h"

namespace ct::model {

inline std::string golden_path(const std::string& name) {
  return std::string(CORETRAIN_TEST_DATA) + "/golden/tiny_" + name + ".safetensors";
}

inline std::vector<int32_t> read_i32(const SafetensorsFile& f, const std::string& name) {
  const SafetensorInfo& t = f.at(name);
  EXPECT_EQ(t.dtype, "I32") << name;
  std::vector<int32_t> v(t.numel());
  auto bytes = f.bytes(t);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

struct Golden {
  ModelConfig config;
  int64_t B = 0, T = 0;
  std::vector<int32_t> ids, types, mask, start, end;
  SafetensorsFile file;
};

inline Golden load_golden(const std::string& name) {
  Golden g{ModelConfig{}, 0, 0, {}, {}, {}, {}, {}, SafetensorsFile::open(golden_path(name))};
  g.config = config_from_json(nlohmann::json::parse(g.file.metadata().at("config")), golden_path(name));
  const SafetensorInfo& ids = g.file.at("input.input_ids");
  g.B = ids.shape.at(0);
  g.T = ids.shape.at(1);
  g.ids = read_i32(g.file, "input.input_ids");
  g.types = read_i32(g.file, "input.token_type_ids");
  g.mask = read_i32(g.file, "input.attention_mask");
  g.start = read_i32(g.file, "input.start_positions");
  g.end = read_i32(g.file, "input.end_positions");
  return g;
}

inline Batch batch_of(const Golden& g, bool with_types = true) {
  Batch b;
  b.B = g.B;
  b.T = g.T;
  b.input_ids = g.ids.data();
  b.token_type_ids = with_types ? g.types.data() : nullptr;
  b.attention_mask = g.mask.data();
  b.start_positions = g.start.data();
  b.end_positions = g.end.data();
  return b;
}

inline void load_params(QaModel& m, const Golden& g) {
  float* slab = m.params_data();
  for (const ParamInfo& p : m.params()) {
    const SafetensorInfo& t = g.file.at("param." + p.name);
    ASSERT_EQ(t.shape, p.shape) << p.name;
    g.file.read_f32(t, slab + p.offset);
  }
}

inline double max_abs(const float* a, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<double>(std::fabs(a[i])));
  return m;
}

inline double rel_err(const float* ours, const std::vector<float>& ref, double floor) {
  double diff = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    diff = std::max(diff, std::fabs(static_cast<double>(ours[i]) - static_cast<double>(ref[i])));
  return diff / std::max(max_abs(ref.data(), static_cast<int64_t>(ref.size())), floor);
}

// m.forward(bad) must throw a one-line ct::Error containing `needle`.
inline void expect_forward_error(QaModel& m, const Batch& bad, const std::string& needle) {
  try {
    m.forward(bad, StepOptions{}, nullptr, nullptr);
    ADD_FAILURE() << "no error for " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

}  // namespace ct::model
