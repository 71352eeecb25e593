// Status: the outcome of an operation that can fail for a reason the caller
// (usually a user) can act on. Bugs are not Statuses: they are TESSERA_CHECK
// failures. A Status message says what is wrong and, where possible, what to do.
//
// Thread-safety: a value type; safe to copy across threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kConflict,
  kGone,  // a resourceVersion older than the retained event window
  kUnavailable,
  kCorruption,
  kIoError,
  kUnauthenticated,
  kPermissionDenied,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

// One field's part of an invalid object, as Kubernetes' Status.details.causes
// has it: the field path ("spec.template.spec.containers[0].image") and what is
// wrong there ("Required value").
struct FieldCause {
  std::string field;
  std::string message;
  friend bool operator==(const FieldCause&, const FieldCause&) = default;
};

class Status {
 public:
  Status() = default;  // OK

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  // InvalidArgument that names the fields at fault, each with its own message.
  static Status Invalid(std::string msg, std::vector<FieldCause> causes) {
    Status s(StatusCode::kInvalidArgument, std::move(msg));
    s.causes_ = std::move(causes);
    return s;
  }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) { return {StatusCode::kAlreadyExists, std::move(msg)}; }
  static Status Conflict(std::string msg) { return {StatusCode::kConflict, std::move(msg)}; }
  static Status Gone(std::string msg) { return {StatusCode::kGone, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {StatusCode::kCorruption, std::move(msg)}; }
  static Status IoError(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }
  static Status Unauthenticated(std::string msg) { return {StatusCode::kUnauthenticated, std::move(msg)}; }
  static Status PermissionDenied(std::string msg) { return {StatusCode::kPermissionDenied, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The fields at fault (Invalid); empty for other errors.
  const std::vector<FieldCause>& causes() const { return causes_; }

  // "InvalidArgument: <message>", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context: ` (the causes kept).
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}

  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::vector<FieldCause> causes_;
};

}  // namespace tessera
