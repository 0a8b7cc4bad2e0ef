// Grouped products of the tiny model's generation: x W^T for consecutive row groups of x, each
// group multiplied as its own matrix, so that a group's result does not depend on its company (a
// BLAS product's rounding can depend on how many rows it multiplies: on this project's OpenBLAS
// one product over all rows differs in the last bits from one product per group).
#ifndef MODELS_GROUPED_PRODUCT_H
#define MODELS_GROUPED_PRODUCT_H

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace models
{

/// x W^T for every row group of `x` ([B, n, d_in], dim 0 split into `groups` row counts that sum
/// to B) with `w` [d_out, d_in]: [B, n, d_out]. Bit for bit GroupedProductBmm: each group is one
/// BLAS sgemm call with the arguments at::bmm passes for that group's batch, made directly, so
/// that no per-group tensor views or dispatch are paid; every case where at::bmm would not make
/// that call (non-float or non-CPU tensors, autograd, a product below at::bmm's size threshold for
/// its own loop, sizes beyond BLAS's int) is handed to GroupedProductBmm.
at::Tensor GroupedProduct(const at::Tensor& x, const at::Tensor& w,
                          const std::vector<int64_t>& groups);

/// The same through at::bmm: one batched product with one matrix per group when the groups are
/// equal, else one batch of one per group.
at::Tensor GroupedProductBmm(const at::Tensor& x, const at::Tensor& w,
                             const std::vector<int64_t>& groups);

} // namespace models

#endif // MODELS_GROUPED_PRODUCT_H
