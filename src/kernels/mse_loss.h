// Mean squared error (torch.nn.MSELoss, mean reduction): the loss of a regression head (problem_type
// "regression", e.g. STS-B's one label).
#pragma once

#include <cstdint>

namespace ct::kernels {

// mean over i < n of (pred[i] - target[i])^2, summed in double.
float mse_loss_forward(const float* pred, const float* target, int64_t n);

// dpred[i] += dloss * 2 (pred[i] - target[i]) / n  (ADDS).
void mse_loss_backward(float* dpred, const float* pred, const float* target, int64_t n, float dloss);

// Scalar reference in double for the tests.
double mse_loss_reference(const float* pred, const float* target, int64_t n);

}  // namespace ct::kernels
