// A training step, and an evaluation forward, in steady state map no fresh memory: activations and every
// kernel's scratch are reused from step to step (freed and reallocated blocks of this size would come back
// from the kernel zeroed, a page fault per 4 KiB, thousands per step here). Counted by getrusage's minor
// faults, so the check holds on any machine and load; not under a sanitizer, whose allocator maps freed
// memory anew on purpose.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/resource.h>

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "model/encoder_model.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CT_SANITIZED 1
#endif
#endif

namespace ct::model {
namespace {

int64_t minor_faults() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_minflt);
}

// Each activation at these shapes is 64 KiB to 1 MiB (16 to 256 pages); a step holds dozens of them.
constexpr int64_t kFaultBudget = 64;

ModelConfig config() {
  ModelConfig c;
  c.model_type = "bert";
  c.vocab_size = 500;
  c.hidden_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 512;
  c.max_position_embeddings = 128;
  c.type_vocab_size = 2;
  return c;
}

struct Features {
  int64_t B = 2, T = 128;
  std::vector<int32_t> ids, types, mask, start, end, lens;
  Batch padded() {
    Batch b;
    b.B = B;
    b.T = T;
    b.input_ids = ids.data();
    b.token_type_ids = types.data();
    b.attention_mask = mask.data();
    b.start_positions = start.data();
    b.end_positions = end.data();
    return b;
  }
  // The rows' real tokens end to end (lens[b] each), as --pad_to_max_length False trains.
  Batch packed() {
    Batch b = padded();
    b.attention_mask = nullptr;
    b.seq_lens = lens.data();
    return b;
  }
};

Features features() {
  Features f;
  Generator g(3);
  f.lens = {128, 90};
  for (int64_t b = 0; b < f.B; ++b)
    for (int64_t t = 0; t < f.T; ++t) {
      f.ids.push_back(static_cast<int32_t>(2 + g.below(400)));
      f.types.push_back(t >= 20 ? 1 : 0);
      f.mask.push_back(t < f.lens[b] ? 1 : 0);
    }
  f.start = {30, 40};
  f.end = {35, 41};
  return f;
}

// Minor faults of `steps` calls of fn after two untimed ones.
template <class Fn>
int64_t steady_faults(int steps, Fn&& fn) {
  for (int s = 0; s < 2; ++s) fn(s);
  const int64_t before = minor_faults();
  for (int s = 2; s < 2 + steps; ++s) fn(s);
  return minor_faults() - before;
}

class SteadyStateMemory : public ::testing::TestWithParam<Precision> {
 protected:
  void SetUp() override {
#ifdef CT_SANITIZED
    GTEST_SKIP() << "sanitizer allocators map freed memory anew";
#endif
    omp_set_num_threads(1);
  }
};

TEST_P(SteadyStateMemory, TrainingStepsMapNoFreshMemory) {
  for (const bool packed : {false, true}) {
    EncoderModel m(config(), HeadKind::span, GetParam());
    m.init_weights(1);
    Features f = features();
    const Batch batch = packed ? f.packed() : f.padded();
    const int64_t faults = steady_faults(3, [&](int s) {
      m.forward(batch, StepOptions{true, 42, static_cast<uint64_t>(s), {}});
      m.backward();
    });
    EXPECT_LE(faults, kFaultBudget) << (packed ? "packed" : "padded") << ": 3 steps";
  }
}

TEST_P(SteadyStateMemory, EvaluationForwardsMapNoFreshMemory) {
  EncoderModel m(config(), HeadKind::span, GetParam());
  m.init_weights(1);
  Features f = features();
  const Batch batch = f.padded();
  StepOptions eval;
  eval.keep_activations = false;
  const int64_t faults = steady_faults(3, [&](int) { m.forward(batch, eval); });
  EXPECT_LE(faults, kFaultBudget) << "3 evaluation forwards";
}

INSTANTIATE_TEST_SUITE_P(Precisions, SteadyStateMemory, ::testing::Values(Precision::f32, Precision::bf16),
                         [](const auto& info) { return info.param == Precision::f32 ? "f32" : "bf16"; });

}  // namespace
}  // namespace ct::model
