#include "models/tensor-memory.h"

#include <malloc.h>

#include <climits>
#include <string>

namespace models
{
namespace
{

hilo::Status
Set(int option, const char* name, size_t bytes)
{
    if (bytes > static_cast<size_t>(INT_MAX) || mallopt(option, static_cast<int>(bytes)) != 1)
    {
        return hilo::Status::InvalidArgument(std::string("mallopt(") + name + ", " +
                                             std::to_string(bytes) + ") refused");
    }
    return hilo::Status::Ok();
}

} // namespace

hilo::Status
KeepFreedMemoryForReuse(const TensorMemoryOptions& options)
{
    hilo::Status s = Set(M_MMAP_THRESHOLD, "M_MMAP_THRESHOLD", options.mmap_threshold_bytes);
    if (s.ok())
    {
        s = Set(M_TRIM_THRESHOLD, "M_TRIM_THRESHOLD", options.trim_threshold_bytes);
    }
    if (s.ok())
    {
        s = Set(M_TOP_PAD, "M_TOP_PAD", options.top_pad_bytes);
    }
    return s;
}

} // namespace models
