// Cross-entropy over QA span logits (torch.nn.CrossEntropyLoss(ignore_index=...), mean reduction): logits [B,
// T] (strided, so start/end columns of the [B*T, 2] qa_outputs result are read in place), targets [B]. As in
// torch, when every target is ignored the mean is 0/0 = NaN; the caller gets NaN (and backward adds NaN
// gradients, again like torch). HF's QA loss is (CE(start) + CE(end)) / 2: call this twice, backward with
// 0.5.
#pragma once

#include <cstdint>

namespace ct::kernels {

// Returns the mean loss over rows whose target != ignore_index. Saves lse[B] (log-sum-exp per row) for
// backward. logits[b, t] lives at logits[b * row_stride + t * col_stride]. Throws ct::Error naming the row if
// a non-ignored target is outside [0, T).
float cross_entropy_forward(float* lse, const float* logits, const int64_t* targets, int64_t B, int64_t T,
                            int64_t row_stride, int64_t col_stride, int64_t ignore_index);

// dlogits[b, t] += dloss * (softmax(logits[b])[t] - [t == target[b]]) / count for non-ignored rows (ADDS;
// same strides as forward; count = number of non-ignored rows, 0 -> NaN gradients as torch).
void cross_entropy_backward(float* dlogits, const float* logits, const float* lse, const int64_t* targets,
                            int64_t B, int64_t T, int64_t row_stride, int64_t col_stride,
                            int64_t ignore_index, float dloss);

}  // namespace ct::kernels
