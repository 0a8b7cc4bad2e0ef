// AdapterLayout: the ordered list of LoRA matrices of one adapter. Its order is the canonical order
// of every flat buffer in hilo (parameters, gradients, optimizer moments), of the wire format, of
// the state hash and of snapshots.
#ifndef HILO_CORE_ADAPTER_LAYOUT_H
#define HILO_CORE_ADAPTER_LAYOUT_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hilo
{

struct MatrixSpec
{
    std::string name; // e.g. "layers.0.attn.q.lora_A"; unique within a layout
    int64_t rows{0};  // A factors: r; B factors: d_out
    int64_t cols{0};  // A factors: d_in; B factors: r

    int64_t numel() const { return rows * cols; }
    bool operator==(const MatrixSpec& o) const
    {
        return name == o.name && rows == o.rows && cols == o.cols;
    }
};

class AdapterLayout
{
  public:
    AdapterLayout() = default;

    /// Validates names (non-empty, unique) and shapes (positive) and computes offsets.
    static StatusOr<AdapterLayout> Create(std::vector<MatrixSpec> matrices);

    size_t size() const { return m_matrices.size(); }
    const MatrixSpec& matrix(size_t i) const { return m_matrices[i]; }
    const std::vector<MatrixSpec>& matrices() const { return m_matrices; }
    /// Offset of matrix i in a flat buffer, in elements.
    int64_t offset(size_t i) const { return m_offsets[i]; }
    /// Total number of LoRA parameters.
    int64_t numel() const { return m_numel; }
    /// The denominator of every "% of adapter bytes": numel() x 2 (the adapter in bf16).
    int64_t adapter_bytes() const { return m_numel * 2; }
    /// A 64-bit digest of names and shapes in order; part of every config hash.
    uint64_t Fingerprint() const;

    bool operator==(const AdapterLayout& o) const { return m_matrices == o.m_matrices; }
    bool operator!=(const AdapterLayout& o) const { return !(*this == o); }

  private:
    std::vector<MatrixSpec> m_matrices;
    std::vector<int64_t> m_offsets;
    int64_t m_numel{0};
};

} // namespace hilo

#endif // HILO_CORE_ADAPTER_LAYOUT_H
