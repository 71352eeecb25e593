#include "common/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tessera {
namespace {

// --- Helpers: small functions that fail on request. -------------------------

Result<int> Half(int x) {
  if (x % 2 != 0) return Err(Status::InvalidArgument("odd: " + std::to_string(x)));
  return x / 2;
}

Status CheckPositive(int x) {
  if (x <= 0) return Status::InvalidArgument("not positive: " + std::to_string(x));
  return Status::Ok();
}

Result<std::unique_ptr<int>> MakeBox(int x) {
  if (x < 0) return Err(Status::NotFound("no box"));
  return std::make_unique<int>(x);
}

// --- Result<T> itself. ------------------------------------------------------

// A Result built from a value holds that value.
TEST(ResultTest, HoldsValue) {
  Result<int> r = 7;
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 7);
}

// Err(status) makes a Result that holds the status as its error.
TEST(ResultTest, ErrHoldsStatus) {
  Result<int> r = Err(Status::NotFound("gone"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), Status::NotFound("gone"));
}

// A Result works with move-only values.
TEST(ResultTest, HoldsMoveOnlyValue) {
  Result<std::unique_ptr<int>> r = MakeBox(3);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(**r, 3);
}

// --- RETURN_IF_ERROR in functions returning Status. -------------------------

Status BothPositive(int a, int b) {
  RETURN_IF_ERROR(CheckPositive(a));
  RETURN_IF_ERROR(CheckPositive(b));
  return Status::Ok();
}

// RETURN_IF_ERROR on an OK Status falls through.
TEST(ReturnIfErrorTest, OkStatusFallsThroughInStatusFunction) {
  EXPECT_TRUE(BothPositive(1, 2).ok());
}

// RETURN_IF_ERROR on a failed Status returns it from a Status function, stopping there.
TEST(ReturnIfErrorTest, FailedStatusReturnsFromStatusFunction) {
  EXPECT_EQ(BothPositive(-1, -2), Status::InvalidArgument("not positive: -1"));  // first wins
  EXPECT_EQ(BothPositive(1, 0), Status::InvalidArgument("not positive: 0"));
}

Status HalfIsEven(int x) {
  RETURN_IF_ERROR(Half(x));  // a Result<int>: only its error matters
  return Status::Ok();
}

// RETURN_IF_ERROR accepts a Result<T> and returns its error from a Status function.
TEST(ReturnIfErrorTest, FailedResultReturnsFromStatusFunction) {
  EXPECT_TRUE(HalfIsEven(4).ok());
  EXPECT_EQ(HalfIsEven(3), Status::InvalidArgument("odd: 3"));
}

// --- RETURN_IF_ERROR in functions returning Result<T>. ----------------------

Result<int> PositiveTwice(int x) {
  RETURN_IF_ERROR(CheckPositive(x));
  return 2 * x;
}

// RETURN_IF_ERROR on OK lets a Result function reach its value.
TEST(ReturnIfErrorTest, OkStatusFallsThroughInResultFunction) {
  Result<int> r = PositiveTwice(5);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 10);  // 2 * 5
}

// RETURN_IF_ERROR on a failed Status makes a Result function return that error.
TEST(ReturnIfErrorTest, FailedStatusReturnsFromResultFunction) {
  Result<int> r = PositiveTwice(0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), Status::InvalidArgument("not positive: 0"));
}

Result<std::string> HalfThenLabel(int x) {
  RETURN_IF_ERROR(Half(x));
  return std::string("even");
}

// RETURN_IF_ERROR on a failed Result<int> propagates into a Result<std::string>.
TEST(ReturnIfErrorTest, FailedResultReturnsFromResultOfOtherType) {
  EXPECT_EQ(HalfThenLabel(8).value(), "even");
  Result<std::string> r = HalfThenLabel(7);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), Status::InvalidArgument("odd: 7"));
}

int g_calls = 0;
Status CountedOk() {
  ++g_calls;
  return Status::Ok();
}
Status CallCountedOnce() {
  RETURN_IF_ERROR(CountedOk());
  return Status::Ok();
}

// RETURN_IF_ERROR evaluates its argument exactly once.
TEST(ReturnIfErrorTest, EvaluatesExpressionOnce) {
  g_calls = 0;
  EXPECT_TRUE(CallCountedOnce().ok());
  EXPECT_EQ(g_calls, 1);
}

// RETURN_IF_ERROR is a single statement: it composes with an unbraced if/else.
TEST(ReturnIfErrorTest, IsSingleStatement) {
  auto f = [](bool check, int x) -> Status {
    if (check)
      RETURN_IF_ERROR(CheckPositive(x));
    else
      return Status::Conflict("skipped");
    return Status::Ok();
  };
  EXPECT_TRUE(f(true, 1).ok());
  EXPECT_EQ(f(true, -1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f(false, 1).code(), StatusCode::kConflict);
}

// --- ASSIGN_OR_RETURN in functions returning Result<T>. ---------------------

Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(int quarter, Half(half));  // two uses in one function
  return quarter;
}

// ASSIGN_OR_RETURN binds the value when the Result holds one.
TEST(AssignOrReturnTest, BindsValueInResultFunction) {
  Result<int> r = Quarter(12);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 3);  // 12 / 2 / 2
}

// ASSIGN_OR_RETURN returns the first error from a Result function.
TEST(AssignOrReturnTest, ReturnsErrorInResultFunction) {
  EXPECT_EQ(Quarter(7).error(), Status::InvalidArgument("odd: 7"));  // first Half fails
  EXPECT_EQ(Quarter(6).error(), Status::InvalidArgument("odd: 3"));  // 6 / 2 = 3, second fails
}

Result<int> Unbox(int x) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(x));
  return *box + 1;
}

// ASSIGN_OR_RETURN moves a move-only value out of the Result.
TEST(AssignOrReturnTest, MovesMoveOnlyValue) {
  EXPECT_EQ(Unbox(4).value(), 5);  // 4 + 1
  EXPECT_EQ(Unbox(-1).error().code(), StatusCode::kNotFound);
}

Result<int> AssignToExisting(int x) {
  int out = -1;
  ASSIGN_OR_RETURN(out, Half(x));
  return out;
}

// ASSIGN_OR_RETURN can assign to a variable declared earlier.
TEST(AssignOrReturnTest, AssignsToExistingVariable) {
  EXPECT_EQ(AssignToExisting(10).value(), 5);  // 10 / 2
  EXPECT_FALSE(AssignToExisting(9).has_value());
}

// --- ASSIGN_OR_RETURN in functions returning Status. ------------------------

Status StoreHalf(int x, int* out) {
  ASSIGN_OR_RETURN(int half, Half(x));
  *out = half;
  return Status::Ok();
}

// ASSIGN_OR_RETURN binds the value in a Status function.
TEST(AssignOrReturnTest, BindsValueInStatusFunction) {
  int out = 0;
  EXPECT_TRUE(StoreHalf(18, &out).ok());
  EXPECT_EQ(out, 9);  // 18 / 2
}

// ASSIGN_OR_RETURN returns the error from a Status function and skips the rest.
TEST(AssignOrReturnTest, ReturnsErrorInStatusFunction) {
  int out = 0;
  EXPECT_EQ(StoreHalf(5, &out), Status::InvalidArgument("odd: 5"));
  EXPECT_EQ(out, 0);  // untouched
}

}  // namespace
}  // namespace tessera
