// Result<T>: a value or the Status that explains why there is none.
// Built on std::expected (C++23, as GCC 12 provides it).
#pragma once

#include <expected>
#include <utility>

#include "common/status.h"

namespace tessera {

template <typename T>
using Result = std::expected<T, Status>;

// Wraps a non-OK status as the error alternative of a Result.
inline std::unexpected<Status> Err(Status s) { return std::unexpected<Status>(std::move(s)); }

namespace internal {
inline Status ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const Result<T>& r) { return r.has_value() ? Status::Ok() : r.error(); }

// What the macros below return: converts to the enclosing function's return type,
// Status or Result<T> (std::unexpected alone does not convert to Status).
class ErrorReturn {
 public:
  explicit ErrorReturn(Status s) : status_(std::move(s)) {}
  operator Status() && { return std::move(status_); }
  template <typename T>
  operator Result<T>() && { return Err(std::move(status_)); }

 private:
  Status status_;
};
}  // namespace internal

}  // namespace tessera

#define TESSERA_CONCAT_INNER_(a, b) a##b
#define TESSERA_CONCAT_(a, b) TESSERA_CONCAT_INNER_(a, b)

// Returns the error from the enclosing function when `expr` (a Status) is not OK.
// Works in functions returning Status or Result<T>.
#define RETURN_IF_ERROR(expr)                                        \
  do {                                                               \
    ::tessera::Status status_macro_ = ::tessera::internal::ToStatus(expr); \
    if (!status_macro_.ok()) return ::tessera::internal::ErrorReturn(std::move(status_macro_)); \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, F())`: binds the value, or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(TESSERA_CONCAT_(result_macro_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.has_value()) return ::tessera::internal::ErrorReturn(std::move(tmp).error()); \
  lhs = std::move(tmp).value()
