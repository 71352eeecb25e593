// Numbers as text: strict parsing, and formatting that parses back exactly.
#include "sweep/number_text.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sweep/rng.h"

namespace tessera::sweep {
namespace {

TEST(ParseDouble, AcceptsDecimalAndExponentFormsOnly) {
  // What Katib's bounds look like, and what must not pass for a number.
  EXPECT_EQ(ParseDouble("0.0001"), 0.0001);
  EXPECT_EQ(ParseDouble("1e-4"), 0.0001);
  EXPECT_EQ(ParseDouble("-3"), -3.0);
  EXPECT_EQ(ParseDouble("2.5E+3"), 2500.0);
  for (const char* bad : {"", " 1", "1 ", "0x10", "+1", "nan", "inf", "-inf", "1e999", "1,5", "abc"}) {
    EXPECT_FALSE(ParseDouble(bad).has_value()) << bad;
  }
}

TEST(ParseInt64, RefusesFractionsAndExponents) {
  // An int parameter's bounds: "8" is an integer, "8.0" and "1e3" are not.
  EXPECT_EQ(ParseInt64("8"), 8);
  EXPECT_EQ(ParseInt64("-12"), -12);
  for (const char* bad : {"", "8.0", "1e3", "0x8", " 8", "99999999999999999999"}) {
    EXPECT_FALSE(ParseInt64(bad).has_value()) << bad;
  }
}

TEST(FormatDouble, ParsesBackExactlyForSeededRandomDoubles) {
  // 10,000 doubles over many magnitudes (seed 7): text -> double is the identity.
  Rng rng(7);
  for (int i = 0; i < 10000; ++i) {
    double x = (rng.Uniform() - 0.5) * std::pow(10.0, rng.Uniform(-12, 12));
    std::string text = FormatDouble(x);
    ASSERT_EQ(ParseDouble(text), x) << text;
  }
  EXPECT_EQ(FormatDouble(0.001), "0.001");
  EXPECT_EQ(FormatDouble(-0.0), "0");
}

TEST(FormatDouble, WritesWhatPythonsReprWrites) {
  // Fixed from 1e-4 up to 1e16, scientific outside.
  EXPECT_EQ(FormatDouble(0.0001), "0.0001");
  EXPECT_EQ(FormatDouble(0.00001), "1e-05");
  EXPECT_EQ(FormatDouble(12.5), "12.5");
  EXPECT_EQ(FormatDouble(-3), "-3");
  EXPECT_EQ(FormatDouble(1e16), "1e+16");
  EXPECT_EQ(FormatDouble(0.1 + 0.2), "0.30000000000000004");
}

TEST(DecimalPlaces, CountsDigitsAfterThePointIncludingTheExponent) {
  // 1e-4 = 0.0001 -> 4; 1.25e1 = 12.5 -> 1; 2.5e1 = 25 -> 0.
  EXPECT_EQ(DecimalPlaces("0.25"), 2);
  EXPECT_EQ(DecimalPlaces("5"), 0);
  EXPECT_EQ(DecimalPlaces("1e-4"), 4);
  EXPECT_EQ(DecimalPlaces("1.25E+1"), 1);
  EXPECT_EQ(DecimalPlaces("2.5e1"), 0);
}

TEST(RoundToDecimalPlaces, GivesTheShortDoubleOfAGridPoint) {
  // 0.1 + 0.2 is 0.30000000000000004 in binary; rounded to 1 place it prints "0.3".
  EXPECT_EQ(FormatDouble(RoundToDecimalPlaces(0.1 + 0.2, 1)), "0.3");
  EXPECT_EQ(FormatDouble(RoundToDecimalPlaces(0.0001 * 3, 4)), "0.0003");
}

}  // namespace
}  // namespace tessera::sweep
