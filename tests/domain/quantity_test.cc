#include "domain/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tessera {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();  // 9223372036854775807

// Expects `r` to be an InvalidArgument error whose message quotes `text`.
void ExpectErrorNaming(const Result<int64_t>& r, std::string_view text) {
  ASSERT_FALSE(r.has_value()) << "parsed \"" << text << "\" as " << *r;
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("\"" + std::string(text) + "\""), std::string::npos)
      << r.error().message();
}

// ============================================================================
// Parsing: valid values.
// ============================================================================

// The Kubernetes forms from DESIGN.md parse to exact integers at each scale.
TEST(ParseQuantityTest, ValidKubernetesForms) {
  EXPECT_EQ(ParseMilli("500m").value(), 500);
  EXPECT_EQ(ParseMilli("64").value(), 64000);                    // 64 * 1000
  EXPECT_EQ(ParseUnits("64").value(), 64);
  EXPECT_EQ(ParseUnits("256Gi").value(), 274877906944);          // 256 * 2^30
  EXPECT_EQ(ParseUnits("1.5Ti").value(), 1649267441664);         // 1.5 * 2^40
  EXPECT_EQ(ParseUnits("1e3").value(), 1000);                    // 1 * 10^3
  EXPECT_EQ(ParseMilli("1e3").value(), 1000000);                 // 10^3 * 10^3
  EXPECT_EQ(ParseUnits("2k").value(), 2000);                     // 2 * 10^3
  EXPECT_EQ(ParseMilli("0.25").value(), 250);                    // 0.25 * 1000
  EXPECT_EQ(ParseMilli("250m").value(), 250);
  EXPECT_EQ(ParseMilli("1").value(), 1000);                      // 1 * 1000
  EXPECT_EQ(ParseUnits("1").value(), 1);
}

// Every decimal suffix scales by its power of ten.
TEST(ParseQuantityTest, DecimalSuffixes) {
  EXPECT_EQ(ParseMilli("1000000n").value(), 1);                  // 10^6 * 10^-9 * 10^3
  EXPECT_EQ(ParseMilli("1000u").value(), 1);                     // 10^3 * 10^-6 * 10^3
  EXPECT_EQ(ParseMilli("1m").value(), 1);
  EXPECT_EQ(ParseUnits("3k").value(), 3000);                     // 3 * 10^3
  EXPECT_EQ(ParseUnits("3M").value(), 3000000);                  // 3 * 10^6
  EXPECT_EQ(ParseUnits("3G").value(), 3000000000);               // 3 * 10^9
  EXPECT_EQ(ParseUnits("3T").value(), 3000000000000);            // 3 * 10^12
  EXPECT_EQ(ParseUnits("3P").value(), 3000000000000000);         // 3 * 10^15
  EXPECT_EQ(ParseUnits("3E").value(), 3000000000000000000);      // 3 * 10^18
}

// Every binary suffix scales by its power of two.
TEST(ParseQuantityTest, BinarySuffixes) {
  EXPECT_EQ(ParseUnits("1Ki").value(), 1024);                    // 2^10
  EXPECT_EQ(ParseUnits("1Mi").value(), 1048576);                 // 2^20
  EXPECT_EQ(ParseUnits("1Gi").value(), 1073741824);              // 2^30
  EXPECT_EQ(ParseUnits("1Ti").value(), 1099511627776);           // 2^40
  EXPECT_EQ(ParseUnits("1Pi").value(), 1125899906842624);        // 2^50
  EXPECT_EQ(ParseUnits("1Ei").value(), 1152921504606846976);     // 2^60
  EXPECT_EQ(ParseUnits("7Ei").value(), 8070450532247928832);     // 7 * 2^60, below 2^63
}

// Exponents may be upper or lower case, signed or unsigned.
TEST(ParseQuantityTest, Exponents) {
  EXPECT_EQ(ParseUnits("1E3").value(), 1000);                    // 10^3
  EXPECT_EQ(ParseUnits("1e+2").value(), 100);                    // 10^2
  EXPECT_EQ(ParseMilli("1e-3").value(), 1);                      // 10^-3 * 10^3
  EXPECT_EQ(ParseMilli("25e-2").value(), 250);                   // 25 * 10^-2 * 10^3
  EXPECT_EQ(ParseUnits("9e18").value(), 9000000000000000000);    // 9 * 10^18, below 2^63
}

// A fraction times a binary suffix is fine when the product is whole.
TEST(ParseQuantityTest, FractionWithBinarySuffix) {
  EXPECT_EQ(ParseUnits("1.5Gi").value(), 1610612736);            // 1.5 * 2^30
  EXPECT_EQ(ParseUnits("0.5Ki").value(), 512);                   // 0.5 * 2^10
  EXPECT_EQ(ParseMilli("0.1Ki").value(), 102400);                // 0.1 * 1024 * 1000
}

// A fraction times Ei whose product fits int64 parses, although fraction digits * 2^60 do not.
TEST(ParseQuantityTest, FractionOfExbibyteFits) {
  EXPECT_EQ(ParseUnits("1.5Ei").value(), 1729382256910270464);   // 1.5 * 2^60 = 3 * 2^59
  EXPECT_EQ(ParseUnits("7.5Ei").value(), 8646911284551352320);   // 7.5 * 2^60 = 15 * 2^59
}

// Leading zeros, a leading '+', a bare leading or trailing point and trailing zeros are accepted.
TEST(ParseQuantityTest, LenientNumberForms) {
  EXPECT_EQ(ParseMilli("007").value(), 7000);                    // 7 * 1000
  EXPECT_EQ(ParseMilli("+2").value(), 2000);                     // 2 * 1000
  EXPECT_EQ(ParseMilli(".5").value(), 500);                      // 0.5 * 1000
  EXPECT_EQ(ParseMilli("5.").value(), 5000);                     // 5 * 1000
  EXPECT_EQ(ParseMilli("2.000").value(), 2000);                  // trailing zeros ignored
  EXPECT_EQ(ParseMilli("0.0010").value(), 1);                    // 0.001 * 1000
}

// Zero parses as zero in every spelling, even with a huge exponent.
TEST(ParseQuantityTest, Zero) {
  EXPECT_EQ(ParseMilli("0").value(), 0);
  EXPECT_EQ(ParseMilli("0.000").value(), 0);
  EXPECT_EQ(ParseUnits("0Gi").value(), 0);
  EXPECT_EQ(ParseUnits("0e99").value(), 0);
  EXPECT_EQ(ParseUnits("0e-99").value(), 0);
}

// The int64 maximum is representable exactly at either scale.
TEST(ParseQuantityTest, Int64MaximumParses) {
  EXPECT_EQ(ParseUnits("9223372036854775807").value(), kMax);
  EXPECT_EQ(ParseMilli("9223372036854775807m").value(), kMax);
  EXPECT_EQ(ParseMilli("9223372036854775.807").value(), kMax);   // kMax / 1000, exactly
}

// ============================================================================
// Parsing: errors.
// ============================================================================

// Malformed text is an InvalidArgument error that quotes the text.
TEST(ParseQuantityTest, MalformedTextIsError) {
  for (std::string_view text : {"", "abc", "1.2.3", "5x", ".", "+", "m", "Gi", "1 Gi", "1ki",
                                "1KI", "1e", "1e1.5", "1e123", "1Ki2", "--1", "0x10"}) {
    SCOPED_TRACE(std::string(text));
    ExpectErrorNaming(ParseMilli(text), text);
    ExpectErrorNaming(ParseUnits(text), text);
  }
}

// A negative quantity is refused, at either scale.
TEST(ParseQuantityTest, NegativeIsError) {
  ExpectErrorNaming(ParseMilli("-1"), "-1");
  ExpectErrorNaming(ParseUnits("-1Gi"), "-1Gi");
  ExpectErrorNaming(ParseMilli("-0.5"), "-0.5");
}

// A value finer than one thousandth is an error at milli scale, never rounded to 0.
TEST(ParseQuantityTest, FinerThanMilliIsError) {
  ExpectErrorNaming(ParseMilli("0.0001"), "0.0001");             // 0.1m
  ExpectErrorNaming(ParseMilli("1.0005"), "1.0005");             // 1000.5m
  ExpectErrorNaming(ParseMilli("100n"), "100n");                 // 0.0001m
  ExpectErrorNaming(ParseMilli("1500u"), "1500u");               // 1.5m
  ExpectErrorNaming(ParseMilli("0.5m"), "0.5m");
  ExpectErrorNaming(ParseMilli("1e-4"), "1e-4");
}

// ParseUnits refuses a value that is not a whole number, such as "1.5".
TEST(ParseQuantityTest, ParseUnitsRefusesFraction) {
  ExpectErrorNaming(ParseUnits("1.5"), "1.5");
  ExpectErrorNaming(ParseUnits("500m"), "500m");                 // 0.5 units
  ExpectErrorNaming(ParseUnits("0.1Ki"), "0.1Ki");               // 102.4 bytes
  ExpectErrorNaming(ParseUnits("1.3Ei"), "1.3Ei");               // 13 * 2^60 / 10 is not whole
}

// Values above int64 are errors, whether reached by a suffix, an exponent or plain digits.
TEST(ParseQuantityTest, OverflowIsError) {
  ExpectErrorNaming(ParseUnits("8Ei"), "8Ei");                   // 8 * 2^60 = 2^63
  ExpectErrorNaming(ParseUnits("10E"), "10E");                   // 10^19
  ExpectErrorNaming(ParseUnits("1e19"), "1e19");                 // 10^19
  ExpectErrorNaming(ParseUnits("1e99"), "1e99");
  ExpectErrorNaming(ParseMilli("9223372036854776"), "9223372036854776");  // * 1000 > kMax
  ExpectErrorNaming(ParseMilli("8Ei"), "8Ei");
}

// One past int64 in plain digits (no suffix scaling) is an error, not a wrapped negative.
TEST(ParseQuantityTest, OnePastInt64MaximumIsError) {
  ExpectErrorNaming(ParseUnits("9223372036854775808"), "9223372036854775808");   // 2^63
  ExpectErrorNaming(ParseMilli("9223372036854775808m"), "9223372036854775808m"); // 2^63 milli
  ExpectErrorNaming(ParseMilli("9223372036854775.808"), "9223372036854775.808"); // 2^63 milli
  ExpectErrorNaming(ParseUnits("99999999999999999999"), "99999999999999999999"); // ~10^20
}

// More than 30 significant digits is refused before any arithmetic.
TEST(ParseQuantityTest, TooManyDigitsIsError) {
  std::string digits(31, '1');
  ExpectErrorNaming(ParseUnits(digits + "n"), digits + "n");
}

// ============================================================================
// ParseGpuMilli.
// ============================================================================

// A fraction below one or a whole number of GPUs parses to milli-GPU.
TEST(ParseGpuMilliTest, FractionsAndWholeGpus) {
  EXPECT_EQ(ParseGpuMilli("0.25").value(), 250);                 // 0.25 * 1000
  EXPECT_EQ(ParseGpuMilli("250m").value(), 250);
  EXPECT_EQ(ParseGpuMilli("0.5").value(), 500);                  // 0.5 * 1000
  EXPECT_EQ(ParseGpuMilli("1").value(), 1000);                   // 1 * 1000
  EXPECT_EQ(ParseGpuMilli("4").value(), 4000);                   // 4 * 1000
  EXPECT_EQ(ParseGpuMilli("8").value(), 8000);                   // 8 * 1000
  EXPECT_EQ(ParseGpuMilli("1000m").value(), 1000);               // exactly one GPU
  EXPECT_EQ(ParseGpuMilli("2.0").value(), 2000);                 // 2 GPUs written with a point
  EXPECT_EQ(ParseGpuMilli("0").value(), 0);                      // no GPU
}

// More than one GPU that is not whole ("1.5") is an error naming the value.
TEST(ParseGpuMilliTest, FractionAboveOneIsError) {
  ExpectErrorNaming(ParseGpuMilli("1.5"), "1.5");
  ExpectErrorNaming(ParseGpuMilli("1500m"), "1500m");
  ExpectErrorNaming(ParseGpuMilli("2.25"), "2.25");
}

// The message for a fraction above one explains the rule and names the GPU resource.
TEST(ParseGpuMilliTest, FractionAboveOneMessageExplains) {
  auto r = ParseGpuMilli("1.5");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("nvidia.com/gpu"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("fraction below one"), std::string::npos)
      << r.error().message();
}

// Negative, too fine, empty and malformed GPU values are errors naming the value.
TEST(ParseGpuMilliTest, InvalidValuesAreErrorsNamingValue) {
  for (std::string_view text : {"-1", "0.0001", "", "abc", "1.2.3", "5x", "0.0005", "1Gi1"}) {
    SCOPED_TRACE(std::string(text));
    auto r = ParseGpuMilli(text);
    ExpectErrorNaming(r, text);
    if (!r.has_value()) {
      EXPECT_NE(r.error().message().find("nvidia.com/gpu"), std::string::npos);
    }
  }
}

// A GPU count beyond int64 milli-GPU is an error naming the value.
TEST(ParseGpuMilliTest, OverflowIsError) {
  ExpectErrorNaming(ParseGpuMilli("99999999999999999999"), "99999999999999999999");
  ExpectErrorNaming(ParseGpuMilli("9223372036854776"), "9223372036854776");  // * 1000 > kMax
}

// ============================================================================
// Formatting.
// ============================================================================

// FormatMilli prints whole units plainly and anything else with the "m" suffix.
TEST(FormatQuantityTest, FormatMilli) {
  EXPECT_EQ(FormatMilli(0), "0");
  EXPECT_EQ(FormatMilli(2000), "2");        // 2000 / 1000
  EXPECT_EQ(FormatMilli(500), "500m");
  EXPECT_EQ(FormatMilli(1500), "1500m");    // not whole: stays in milli
  EXPECT_EQ(FormatMilli(1), "1m");
}

// FormatMilliDecimal prints a decimal with no trailing zeros.
TEST(FormatQuantityTest, FormatMilliDecimal) {
  EXPECT_EQ(FormatMilliDecimal(0), "0");
  EXPECT_EQ(FormatMilliDecimal(4000), "4");      // 4000 / 1000
  EXPECT_EQ(FormatMilliDecimal(250), "0.25");    // 250 / 1000
  EXPECT_EQ(FormatMilliDecimal(1500), "1.5");
  EXPECT_EQ(FormatMilliDecimal(1050), "1.05");
  EXPECT_EQ(FormatMilliDecimal(5), "0.005");
  EXPECT_EQ(FormatMilliDecimal(-250), "-0.25");
  EXPECT_EQ(FormatMilliDecimal(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
}

// FormatBytes picks the shortest exact form; binary suffixes win ties.
TEST(FormatQuantityTest, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0");
  EXPECT_EQ(FormatBytes(1024), "1Ki");                      // 2^10
  EXPECT_EQ(FormatBytes(274877906944), "256Gi");            // 256 * 2^30
  EXPECT_EQ(FormatBytes(1649267441664), "1536Gi");          // 1.5 * 2^40 = 1536 * 2^30
  EXPECT_EQ(FormatBytes(1152921504606846976), "1Ei");       // 2^60
  EXPECT_EQ(FormatBytes(1500000000), "1500M");              // 1.5 * 10^9, not a multiple of 2^10
  EXPECT_EQ(FormatBytes(1000), "1k");
  EXPECT_EQ(FormatBytes(5000000000), "5G");                 // 5 * 10^9 = 2^9 * 5^10: no 2^10
  EXPECT_EQ(FormatBytes(1000000000000000000), "1E");       // 10^18: shorter than 976562500000000Ki
  EXPECT_EQ(FormatBytes(1000000000000), "1T");              // 10^12: shorter than 976562500Ki
  EXPECT_EQ(FormatBytes(999), "999");
  EXPECT_EQ(FormatBytes(1536), "1536");                     // 1.5Ki: neither suffix is exact
  EXPECT_EQ(FormatBytes(kMax), "9223372036854775807");
}

// ============================================================================
// Round trips: Parse(Format(v)) == v.
// ============================================================================

// Representative values at the edges of each unit.
const std::vector<int64_t> kRoundTripValues = {
    0, 1, 5, 10, 100, 250, 500, 999, 1000, 1001, 1024, 1050, 1500, 1536, 2000, 4000,
    999999, 1000000, 1048576, 1500000000, 274877906944, 1649267441664,
    1000000000000000000,   // 10^18
    1152921504606846976,   // 2^60
    3458764513820540928,   // 3 * 2^60
    8070450532247928832,   // 7 * 2^60
    9000000000000000000,   // 9 * 10^18
    kMax - 1, kMax,
};

// FormatMilli then ParseMilli gives back the value, for the table.
TEST(QuantityRoundTripTest, FormatMilliTable) {
  for (int64_t v : kRoundTripValues) {
    EXPECT_EQ(ParseMilli(FormatMilli(v)).value(), v) << FormatMilli(v);
  }
}

// FormatMilliDecimal then ParseMilli gives back the value, for the table.
TEST(QuantityRoundTripTest, FormatMilliDecimalTable) {
  for (int64_t v : kRoundTripValues) {
    EXPECT_EQ(ParseMilli(FormatMilliDecimal(v)).value(), v) << FormatMilliDecimal(v);
  }
}

// FormatBytes then ParseUnits gives back the value, for the table.
TEST(QuantityRoundTripTest, FormatBytesTable) {
  for (int64_t v : kRoundTripValues) {
    EXPECT_EQ(ParseUnits(FormatBytes(v)).value(), v) << FormatBytes(v);
  }
}

// A GPU amount (fraction below one or whole GPUs) formatted as a decimal parses back as a GPU.
TEST(QuantityRoundTripTest, GpuDecimalTable) {
  for (int64_t v : {0, 1, 125, 250, 500, 999, 1000, 2000, 8000, 64000}) {
    EXPECT_EQ(ParseGpuMilli(FormatMilliDecimal(v)).value(), v) << FormatMilliDecimal(v);
  }
}

// Random non-negative values of every magnitude, plus random multiples of each suffix unit.
std::vector<int64_t> GeneratedValues() {
  std::mt19937_64 rng(20240611);
  std::vector<int64_t> out;
  for (int i = 0; i < 20000; ++i) {
    // Uniform bits shifted right by 1..63: magnitudes from 0 up to kMax.
    out.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 63)));
  }
  for (int i = 0; i < 5000; ++i) {
    // k * 2^(10j) and k * 10^(3j) for j in 1..6, with k small enough to stay in range.
    int j = 1 + static_cast<int>(rng() % 6);
    int64_t binary_unit = int64_t{1} << (10 * j);
    out.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(kMax / binary_unit + 1)) *
                  binary_unit);
    int64_t decimal_unit = 1;
    for (int k = 0; k < j; ++k) decimal_unit *= 1000;
    out.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(kMax / decimal_unit + 1)) *
                  decimal_unit);
  }
  return out;
}

// FormatMilli round-trips through ParseMilli for generated values.
TEST(QuantityRoundTripTest, FormatMilliGenerated) {
  for (int64_t v : GeneratedValues()) {
    auto r = ParseMilli(FormatMilli(v));
    ASSERT_TRUE(r.has_value()) << v << " -> " << FormatMilli(v) << ": " << r.error().ToString();
    ASSERT_EQ(*r, v) << FormatMilli(v);
  }
}

// FormatMilliDecimal round-trips through ParseMilli for generated values.
TEST(QuantityRoundTripTest, FormatMilliDecimalGenerated) {
  for (int64_t v : GeneratedValues()) {
    auto r = ParseMilli(FormatMilliDecimal(v));
    ASSERT_TRUE(r.has_value()) << v << " -> " << FormatMilliDecimal(v) << ": "
                               << r.error().ToString();
    ASSERT_EQ(*r, v) << FormatMilliDecimal(v);
  }
}

// FormatBytes round-trips through ParseUnits for generated values.
TEST(QuantityRoundTripTest, FormatBytesGenerated) {
  for (int64_t v : GeneratedValues()) {
    auto r = ParseUnits(FormatBytes(v));
    ASSERT_TRUE(r.has_value()) << v << " -> " << FormatBytes(v) << ": " << r.error().ToString();
    ASSERT_EQ(*r, v) << FormatBytes(v);
  }
}

}  // namespace
}  // namespace tessera
