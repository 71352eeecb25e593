// Exact parsing and formatting of Kubernetes quantities as fixed-point integers.
//
// Capacity is never floating point: "0.25" GPU is 250 milli-GPU, "500m" CPU is 500
// millicores, "256Gi" memory is 274877906944 bytes. A value that cannot be
// represented exactly at the requested scale ("0.0001" as milli) is an error, not
// a rounding. Every formatter prints a string that parses back to the same value.
//
// Syntax (Kubernetes resource.Quantity): [+-]digits[.digits][suffix], where suffix
// is one of n u m "" k M G T P E (powers of 10), Ki Mi Gi Ti Pi Ei (powers of 2)
// or an exponent e<int>/E<int>.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera {

// Parses `text` and returns its value times 10^scale, exactly. Negative values
// are refused. Errors name the text and say what is wrong.
Result<int64_t> ParseScaledQuantity(std::string_view text, int scale);

// Whole units (bytes, pods): "256Gi" -> 274877906944, "1.5Ti" -> 1649267441664.
inline Result<int64_t> ParseUnits(std::string_view text) { return ParseScaledQuantity(text, 0); }

// Milli-units (CPU): "500m" -> 500, "2" -> 2000, "1.5" -> 1500.
inline Result<int64_t> ParseMilli(std::string_view text) { return ParseScaledQuantity(text, 3); }

// GPUs as milli-GPU: a fraction below one ("0.25", "250m") or a whole number of
// GPUs ("1", "4"). "1.5", "-1" and "0.0001" are errors naming the value.
Result<int64_t> ParseGpuMilli(std::string_view text);

// "2" for 2000, "500m" for 500 (Kubernetes' canonical form).
std::string FormatMilli(int64_t milli);

// "4" for 4000, "0.25" for 250: the form a data scientist types for GPUs.
std::string FormatMilliDecimal(int64_t milli);

// The shortest exact form: "256Gi", "1500M", "1E", or plain bytes; binary
// suffixes win ties.
std::string FormatBytes(int64_t bytes);

}  // namespace tessera
