#include "hilo/core/status.h"

namespace hilo
{

const char*
StatusCodeName(StatusCode code)
{
    switch (code)
    {
        case StatusCode::kOk:
            return "ok";
        case StatusCode::kInvalidArgument:
            return "invalid_argument";
        case StatusCode::kCorruption:
            return "corruption";
        case StatusCode::kNotSupported:
            return "not_supported";
        case StatusCode::kGap:
            return "gap";
        case StatusCode::kStale:
            return "stale";
        case StatusCode::kConfigMismatch:
            return "config_mismatch";
        case StatusCode::kHashMismatch:
            return "hash_mismatch";
        case StatusCode::kBudgetTooSmall:
            return "budget_too_small";
        case StatusCode::kNotFound:
            return "not_found";
        case StatusCode::kInternal:
            return "internal";
    }
    return "unknown";
}

std::string
Status::ToString() const
{
    if (ok())
    {
        return "ok";
    }
    return std::string(StatusCodeName(m_code)) + ": " + m_message;
}

} // namespace hilo
