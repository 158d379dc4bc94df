// Binary cross-entropy on logits (torch.nn.BCEWithLogitsLoss, mean reduction): the loss of a multi-label
// classification head (problem_type "multi_label_classification", float multi-hot targets).
#pragma once

#include <cstdint>

namespace ct::kernels {

// mean over i < n of max(x, 0) - x y + log(1 + exp(-|x|)), torch's overflow-free form, summed in double.
float bce_with_logits_forward(const float* logits, const float* target, int64_t n);

// dlogits[i] += dloss * (sigmoid(x[i]) - y[i]) / n  (ADDS).
void bce_with_logits_backward(float* dlogits, const float* logits, const float* target, int64_t n,
                              float dloss);

// Scalar reference in double (the textbook -[y log s + (1 - y) log(1 - s)]) for the tests.
double bce_with_logits_reference(const float* logits, const float* target, int64_t n);

}  // namespace ct::kernels
