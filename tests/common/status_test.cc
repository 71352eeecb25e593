#include "common/status.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

// A default-constructed Status is the OK status.
TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
}

// Status::Ok() equals a default-constructed Status.
TEST(StatusTest, OkFactoryEqualsDefault) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok(), Status());
}

// Every named factory sets its own code, keeps the message verbatim, and is not OK.
TEST(StatusTest, FactoriesSetCodeAndMessage) {
  struct Case {
    Status status;
    StatusCode code;
    std::string_view name;
  };
  const Case cases[] = {
      {Status::InvalidArgument("m"), StatusCode::kInvalidArgument, "InvalidArgument"},
      {Status::NotFound("m"), StatusCode::kNotFound, "NotFound"},
      {Status::AlreadyExists("m"), StatusCode::kAlreadyExists, "AlreadyExists"},
      {Status::Conflict("m"), StatusCode::kConflict, "Conflict"},
      {Status::Unavailable("m"), StatusCode::kUnavailable, "Unavailable"},
      {Status::Corruption("m"), StatusCode::kCorruption, "Corruption"},
      {Status::IoError("m"), StatusCode::kIoError, "IoError"},
      {Status::Unauthenticated("m"), StatusCode::kUnauthenticated, "Unauthenticated"},
      {Status::PermissionDenied("m"), StatusCode::kPermissionDenied, "PermissionDenied"},
      {Status::Internal("m"), StatusCode::kInternal, "Internal"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name));
    EXPECT_FALSE(c.status.ok());
    EXPECT_EQ(c.status.code(), c.code);
    EXPECT_EQ(c.status.message(), "m");
    EXPECT_EQ(StatusCodeName(c.code), c.name);
  }
}

// The OK code is named "OK".
TEST(StatusTest, OkCodeName) { EXPECT_EQ(StatusCodeName(StatusCode::kOk), "OK"); }

// ToString of the OK status is just "OK", with no separator.
TEST(StatusTest, ToStringOfOk) { EXPECT_EQ(Status::Ok().ToString(), "OK"); }

// ToString of an error is "<CodeName>: <message>".
TEST(StatusTest, ToStringOfErrorIsCodeColonMessage) {
  EXPECT_EQ(Status::NotFound("queue \"a\" does not exist").ToString(),
            "NotFound: queue \"a\" does not exist");
  EXPECT_EQ(Status::IoError("disk full").ToString(), "IoError: disk full");
}

// ToString of an error with an empty message still names the code.
TEST(StatusTest, ToStringOfErrorWithEmptyMessage) {
  EXPECT_EQ(Status::Internal("").ToString(), "Internal: ");
}

// WithContext prefixes the message with "context: " and keeps the code.
TEST(StatusTest, WithContextPrefixesMessage) {
  Status s = Status::InvalidArgument("must not be negative").WithContext("spec.gpu");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "spec.gpu: must not be negative");
  EXPECT_EQ(s.ToString(), "InvalidArgument: spec.gpu: must not be negative");
}

// Nested WithContext calls put the outermost context first.
TEST(StatusTest, WithContextNestsOutermostFirst) {
  Status s = Status::NotFound("x").WithContext("inner").WithContext("outer");
  EXPECT_EQ(s.message(), "outer: inner: x");
}

// WithContext leaves the original untouched (it returns a copy).
TEST(StatusTest, WithContextDoesNotModifyOriginal) {
  const Status original = Status::Conflict("busy");
  Status annotated = original.WithContext("node n1");
  EXPECT_EQ(original.message(), "busy");
  EXPECT_EQ(annotated.message(), "node n1: busy");
}

// WithContext on OK stays OK with an empty message: success carries no context.
TEST(StatusTest, WithContextOnOkStaysOk) {
  Status s = Status::Ok().WithContext("reading config");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s, Status::Ok());
  EXPECT_EQ(s.message(), "");
}

// Two statuses are equal when both code and message match.
TEST(StatusTest, EqualWhenCodeAndMessageMatch) {
  EXPECT_EQ(Status::NotFound("a"), Status::NotFound("a"));
}

// Same code with a different message is not equal.
TEST(StatusTest, NotEqualWhenMessagesDiffer) {
  EXPECT_NE(Status::NotFound("a"), Status::NotFound("b"));
}

// Same message with a different code is not equal.
TEST(StatusTest, NotEqualWhenCodesDiffer) {
  EXPECT_NE(Status::NotFound("a"), Status::Conflict("a"));
}

// An error never equals OK, even with an empty message.
TEST(StatusTest, ErrorWithEmptyMessageIsNotOk) {
  EXPECT_NE(Status::Internal(""), Status::Ok());
}

// Copies compare equal to their source.
TEST(StatusTest, CopyEqualsSource) {
  Status a = Status::Unavailable("store down");
  Status b = a;
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace tessera
