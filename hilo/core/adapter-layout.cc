#include "hilo/core/adapter-layout.h"

#include "hilo/core/hash.h"

#include <unordered_set>

namespace hilo
{

StatusOr<AdapterLayout>
AdapterLayout::Create(std::vector<MatrixSpec> matrices)
{
    AdapterLayout layout;
    std::unordered_set<std::string> names;
    int64_t offset = 0;
    for (size_t i = 0; i < matrices.size(); ++i)
    {
        const MatrixSpec& m = matrices[i];
        if (m.name.empty())
        {
            return Status::InvalidArgument("matrix " + std::to_string(i) + " has an empty name");
        }
        if (!names.insert(m.name).second)
        {
            return Status::InvalidArgument("duplicate matrix name '" + m.name + "'");
        }
        if (m.rows <= 0 || m.cols <= 0)
        {
            return Status::InvalidArgument("matrix '" + m.name + "' has shape " +
                                           std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                                           "; both dimensions must be positive");
        }
        layout.m_offsets.push_back(offset);
        offset += m.numel();
    }
    layout.m_matrices = std::move(matrices);
    layout.m_numel = offset;
    return layout;
}

uint64_t
AdapterLayout::Fingerprint() const
{
    Hasher h;
    h.AddU64(m_matrices.size());
    for (const MatrixSpec& m : m_matrices)
    {
        h.AddString(m.name);
        h.AddU64(static_cast<uint64_t>(m.rows));
        h.AddU64(static_cast<uint64_t>(m.cols));
    }
    return h.Digest();
}

} // namespace hilo
