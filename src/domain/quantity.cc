#include "domain/quantity.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>

namespace tessera {
namespace {

using i128 = __int128;
constexpr i128 kMax = std::numeric_limits<int64_t>::max();

Status Invalid(std::string_view text, std::string_view why) {
  return Status::InvalidArgument(fmt::format("quantity \"{}\": {}", text, why));
}

struct Suffix {
  int pow10 = 0;  // decimal exponent
  int pow2 = 0;   // binary exponent (multiples of 10)
};

Result<Suffix> ParseSuffix(std::string_view whole, std::string_view s) {
  if (s.empty()) return Suffix{};
  if (s.size() == 2 && s[1] == 'i') {
    switch (s[0]) {
      case 'K': return Suffix{0, 10};
      case 'M': return Suffix{0, 20};
      case 'G': return Suffix{0, 30};
      case 'T': return Suffix{0, 40};
      case 'P': return Suffix{0, 50};
      case 'E': return Suffix{0, 60};
      default: break;
    }
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n': return Suffix{-9, 0};
      case 'u': return Suffix{-6, 0};
      case 'm': return Suffix{-3, 0};
      case 'k': return Suffix{3, 0};
      case 'M': return Suffix{6, 0};
      case 'G': return Suffix{9, 0};
      case 'T': return Suffix{12, 0};
      case 'P': return Suffix{15, 0};
      case 'E': return Suffix{18, 0};
      default: break;
    }
  }
  if ((s[0] == 'e' || s[0] == 'E') && s.size() > 1) {
    std::string_view exp = s.substr(1);
    bool neg = false;
    if (exp[0] == '+' || exp[0] == '-') {
      neg = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 2) return Err(Invalid(whole, "exponent must have one or two digits"));
    int v = 0;
    for (char c : exp) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return Err(Invalid(whole, "exponent must be an integer"));
      v = v * 10 + (c - '0');
    }
    return Suffix{neg ? -v : v, 0};
  }
  return Err(Invalid(whole, fmt::format("unknown suffix \"{}\" (use m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei)", s)));
}

}  // namespace

Result<int64_t> ParseScaledQuantity(std::string_view text, int scale) {
  std::string_view s = text;
  if (s.empty()) return Err(Invalid(text, "empty value"));
  if (s[0] == '-') return Err(Invalid(text, "must not be negative"));
  if (s[0] == '+') s.remove_prefix(1);

  // Mantissa: digits with at most one decimal point; kept as an integer plus the
  // count of fractional digits (trailing fractional zeros dropped).
  i128 mantissa = 0;
  int frac_digits = 0;
  int digits = 0;
  bool seen_point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_point) return Err(Invalid(text, "more than one decimal point"));
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (mantissa == 0 && c == '0' && !seen_point) continue;  // leading zeros
    if (++digits > 30) return Err(Invalid(text, "too many digits"));
    mantissa = mantissa * 10 + (c - '0');
    if (seen_point) ++frac_digits;
  }
  if (i == 0 || (i == 1 && seen_point)) return Err(Invalid(text, "expected a number such as 2, 0.5, 500m or 64Gi"));
  while (frac_digits > 0 && mantissa % 10 == 0) {
    mantissa /= 10;
    --frac_digits;
  }
  ASSIGN_OR_RETURN(Suffix suffix, ParseSuffix(text, s.substr(i)));

  // value * 10^scale = mantissa * 2^pow2 * 10^(pow10 + scale - frac_digits)
  const char* inexact = scale == 3 ? "finer than the smallest unit, one thousandth (1m)"
                                   : "not a whole number of units";
  i128 v = mantissa;
  int exp10 = suffix.pow10 + scale - frac_digits;
  // Cancel 2 * 10^-1 = 5^-1 first, so that "1.5Ei" = 15 * 2^60 / 10 = 3 * 2^59 does
  // not overflow on the way. 2^pow2 has no factor 5: v must have it, or it is inexact.
  for (; exp10 < 0 && suffix.pow2 > 0; ++exp10, --suffix.pow2) {
    if (v % 5 != 0) return Err(Invalid(text, inexact));
    v /= 5;
  }
  for (int k = 0; k < suffix.pow2; ++k) {
    v *= 2;
    if (v > kMax) return Err(Invalid(text, "too large"));
  }
  for (; exp10 > 0; --exp10) {
    v *= 10;
    if (v > kMax) return Err(Invalid(text, "too large"));
  }
  for (; exp10 < 0; ++exp10) {
    if (v % 10 != 0) return Err(Invalid(text, inexact));
    v /= 10;
  }
  // Without scaling, up to 30 digits can exceed int64 ("9223372036854775808").
  if (v > kMax) return Err(Invalid(text, "too large"));
  return static_cast<int64_t>(v);
}

Result<int64_t> ParseGpuMilli(std::string_view text) {
  auto milli = ParseMilli(text);
  if (!milli) {
    return Err(Status::InvalidArgument(
        fmt::format("nvidia.com/gpu \"{}\": {}", text, milli.error().message())));
  }
  if (*milli > 1000 && *milli % 1000 != 0) {
    return Err(Status::InvalidArgument(fmt::format(
        "nvidia.com/gpu \"{}\": a GPU request is a fraction below one (0.25 or 250m) or a whole "
        "number of GPUs (1, 2, 8); {} GPUs is neither",
        text, FormatMilliDecimal(*milli))));
  }
  return *milli;
}

std::string FormatMilli(int64_t milli) {
  if (milli % 1000 == 0) return fmt::format("{}", milli / 1000);
  return fmt::format("{}m", milli);
}

std::string FormatMilliDecimal(int64_t milli) {
  const char* sign = milli < 0 ? "-" : "";
  uint64_t m = milli < 0 ? -static_cast<uint64_t>(milli) : static_cast<uint64_t>(milli);
  if (m % 1000 == 0) return fmt::format("{}{}", sign, m / 1000);
  std::string frac = fmt::format("{:03}", m % 1000);
  while (frac.back() == '0') frac.pop_back();
  return fmt::format("{}{}.{}", sign, m / 1000, frac);
}

std::string FormatBytes(int64_t bytes) {
  if (bytes == 0) return "0";
  // The shortest exact form; binary suffixes win ties ("256Gi", "1500M", "1E").
  std::string best = fmt::format("{}", bytes);
  static constexpr const char* kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  for (int i = 0; i < 6; ++i) {
    const int64_t unit = int64_t{1} << (10 * (i + 1));
    if (bytes % unit != 0) break;
    std::string s = fmt::format("{}{}", bytes / unit, kBinary[i]);
    if (s.size() <= best.size()) best = std::move(s);
  }
  static constexpr const char* kDecimal[] = {"k", "M", "G", "T", "P", "E"};
  int64_t unit = 1;
  for (int i = 0; i < 6; ++i) {
    unit *= 1000;
    if (bytes % unit != 0) break;
    std::string s = fmt::format("{}{}", bytes / unit, kDecimal[i]);
    if (s.size() < best.size()) best = std::move(s);
  }
  return best;
}

}  // namespace tessera
