// HF's normal_(0, std) weight init drawn from the sequential Generator's stream (core/rng.h), sixteen Philox
// blocks at a time: value i is what Generator::normal() returns at word offset `word_offset + 4 i`, bit for
// bit, so a model initializes the same whichever path, chunking or thread count draws it.
#pragma once

#include <cstdint>

namespace ct::kernels {

// out[i] = float(Generator(seed) at state {seed, word_offset + 4 i}.normal()) * stdev for i < n. word_offset
// must be a multiple of 4 (each normal takes one whole block). Serial: callers split n into chunks.
void normal_init(float* out, int64_t n, uint64_t seed, uint64_t word_offset, float stdev);

}  // namespace ct::kernels
