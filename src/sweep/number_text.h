// Numbers as the text a sweep's users write and read: Katib writes every bound
// and every parameter value as a string ("0.0001", "8"), and a trial's
// parameter values travel as strings into its template. These helpers parse
// that text strictly and format numbers so that they parse back exactly.
//
// Contract
// - Parsing accepts the whole text or nothing: "8", "-3", "0.0001", "1e-4",
//   "2.5E+3"; not "", " 8", "8 ", "0x10", "+1", "nan", "inf", "1e999".
// - FormatDouble writes the shortest text that parses back to the same double
//   (std::to_chars), so ParseDouble(FormatDouble(x)) == x for every finite x;
//   in fixed notation from 1e-4 to 1e16 and scientific outside, as Python's
//   repr does ("0.0003", "1e-05").
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::sweep {

// A finite double, or none.
std::optional<double> ParseDouble(std::string_view text);

// A decimal integer that fits int64, or none ("1.0" and "1e3" are not integers).
std::optional<int64_t> ParseInt64(std::string_view text);

// The shortest text that parses back to x, as above. REQUIRES: x is finite.
std::string FormatDouble(double x);

// How many digits after the decimal point the number written as `text` has,
// counting the exponent: "0.25" -> 2, "5" -> 0, "1e-4" -> 4, "2.5e1" -> 0,
// "1.25E+1" -> 1. REQUIRES: ParseDouble(text) has a value.
int DecimalPlaces(std::string_view text);

// x rounded to `places` digits after the point, as a double that prints short:
// RoundToDecimalPlaces(0.1 + 0.2, 1) prints "0.3", not "0.30000000000000004".
// Places beyond 17 leave x as it is.
double RoundToDecimalPlaces(double x, int places);

}  // namespace tessera::sweep
