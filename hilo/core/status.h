// Status and StatusOr: how hilo reports expected failures (corrupt input, version gaps, bad
// options). Corrupt input is an outcome, never an abort (leveldb's shape).
#ifndef HILO_CORE_STATUS_H
#define HILO_CORE_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace hilo
{

enum class StatusCode
{
    kOk = 0,
    kInvalidArgument, // a caller passed something outside the contract
    kCorruption,      // bytes that fail framing, CRC, parsing or a consistency check
    kNotSupported,    // a format version, compressor or strategy this build does not know
    kGap,             // update's base version is ahead of the replica: versions were missed
    kStale,           // update's version is at or behind the replica: duplicate or old
    kConfigMismatch,  // update was made under another configuration (config hash differs)
    kHashMismatch,    // state after replay differs from the learner's
    kBudgetTooSmall,  // the byte budget cannot hold even the smallest payload
    kNotFound,        // a requested version is no longer retained
    kInternal,        // a broken invariant of our own
};

/// Returns a stable lower-case name for a code ("corruption", "gap", ...).
const char* StatusCodeName(StatusCode code);

class Status
{
  public:
    Status() = default;
    Status(StatusCode code, std::string message)
      : m_code(code)
      , m_message(std::move(message))
    {
    }

    static Status Ok() { return Status(); }
    static Status InvalidArgument(std::string m)
    {
        return {StatusCode::kInvalidArgument, std::move(m)};
    }
    static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
    static Status NotSupported(std::string m) { return {StatusCode::kNotSupported, std::move(m)}; }
    static Status Gap(std::string m) { return {StatusCode::kGap, std::move(m)}; }
    static Status Stale(std::string m) { return {StatusCode::kStale, std::move(m)}; }
    static Status ConfigMismatch(std::string m)
    {
        return {StatusCode::kConfigMismatch, std::move(m)};
    }
    static Status HashMismatch(std::string m) { return {StatusCode::kHashMismatch, std::move(m)}; }
    static Status BudgetTooSmall(std::string m)
    {
        return {StatusCode::kBudgetTooSmall, std::move(m)};
    }
    static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
    static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

    bool ok() const { return m_code == StatusCode::kOk; }
    StatusCode code() const { return m_code; }
    const std::string& message() const { return m_message; }
    /// "corruption: frame CRC mismatch" (or "ok").
    std::string ToString() const;

  private:
    StatusCode m_code{StatusCode::kOk};
    std::string m_message;
};

/// A value or the Status that explains why there is none.
template<typename T>
class StatusOr
{
  public:
    StatusOr(Status status) // NOLINT: implicit by design, as in absl
      : m_status(std::move(status))
    {
        assert(!m_status.ok() && "StatusOr built from an ok Status without a value");
        if (m_status.ok())
        {
            m_status = Status::Internal("StatusOr built from an ok Status without a value");
        }
    }
    StatusOr(T value) // NOLINT: implicit by design
      : m_value(std::move(value))
    {
    }

    bool ok() const { return m_status.ok(); }
    const Status& status() const { return m_status; }
    // REQUIRES: ok().
    T& value() & { return *m_value; }
    const T& value() const& { return *m_value; }
    T&& value() && { return std::move(*m_value); }
    T* operator->() { return &*m_value; }
    const T* operator->() const { return &*m_value; }
    T& operator*() & { return *m_value; }
    const T& operator*() const& { return *m_value; }

  private:
    Status m_status;
    std::optional<T> m_value;
};

} // namespace hilo

/// Returns early from the enclosing function when `expr` yields a non-ok Status.
#define HILO_RETURN_IF_ERROR(expr)            \
    do                                        \
    {                                         \
        ::hilo::Status _hilo_status = (expr); \
        if (!_hilo_status.ok())               \
            return _hilo_status;              \
    } while (0)

#endif // HILO_CORE_STATUS_H
