#include "sim/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {
namespace {

// Okabe & Ito's colour-blind-safe palette, darkest first so that the first series
// stand out on white; the yellow (weak on white) comes late. Series i gets
// kPalette[i % 8], counted over all series (empty ones too), so a series keeps its
// colour when another one has no data.
constexpr std::array<std::string_view, 8> kPalette = {
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

constexpr int kMinWidth = 300;   // smaller requests are enlarged to this
constexpr int kMinHeight = 200;
constexpr int kMaxTicks = 8;        // per axis; fewer when the axis is short
constexpr double kCharWidth = 7.0;  // rough advance of one 11-12px sans-serif glyph
constexpr size_t kMaxLegendChars = 32;
constexpr double kLegendRow = 18;
// Our own segment clipping (below) keeps coordinates finite and small; it clips to
// the plot area grown by this margin, so what it adds stays outside the clipPath.
constexpr double kClipMargin = 2;
// Pixel coordinates are clamped to this before clipping, so absurd data (1e300 in a
// 0..10 range) cannot overflow. Beyond a million plot widths a segment's direction
// may bend; nothing sane gets near.
constexpr double kMaxPixel = 1e9;
// Data values are clamped to this so that every span is finite.
constexpr double kMaxValue = 1e300;

// ---------------------------------------------------------------------------
// Text

// Length of the valid UTF-8 sequence starting at s[i] that is also an XML 1.0
// character, or 0 when the bytes there are not one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  // U+FFFE and U+FFFF are not XML characters.
  if (c == 0xEF && byte(i + 1) == 0xBF && byte(i + 2) >= 0xBE) return 0;
  return n;
}

// `s` as XML character data (also safe inside a quoted attribute): the five
// special characters become entities, control characters that XML 1.0 forbids are
// dropped and bytes that are not UTF-8 become U+FFFD, so any input gives a
// well-formed document.
std::string EscapeXml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    const char c = s[i++];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') {
          out += c;
        }
    }
  }
  return out;
}

// Characters (code points, roughly glyphs) in `s`, for width estimates.
size_t CharCount(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// `s` cut to at most `max_chars` characters, ending in "…" when cut. Cuts only
// before a character's first byte, so UTF-8 stays whole.
std::string Truncate(std::string_view s, size_t max_chars) {
  if (CharCount(s) <= max_chars || max_chars == 0) return std::string(s);
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars - 1) return std::string(s.substr(0, i)) + "\xE2\x80\xA6";
    ++chars;
  }
  return std::string(s);
}

// ---------------------------------------------------------------------------
// Numbers

// `v` with at most `decimals` decimals and no trailing zeros: 12.50 -> "12.5",
// 3.00 -> "3", -0.001 -> "0".
std::string FormatFixed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

// A pixel coordinate: two decimals are a hundredth of a pixel.
std::string FormatCoord(double v) { return FormatFixed(v, 2); }

// The fewest decimals (at most 12) that write multiples of `step` exactly:
// 20 -> 0, 2.5 -> 1, 0.25 -> 2.
int DecimalsFor(double step) {
  double scaled = std::abs(step);
  if (scaled == 0) return 0;
  for (int d = 0; d < 12; ++d) {
    if (std::abs(scaled - std::round(scaled)) <= 1e-6 * scaled) return d;
    scaled *= 10;
  }
  return 12;
}

// A tick label: `v` written with the decimals that `step` (the spacing of the
// axis' ticks) needs, never "12.000000"; with `suffixes`, thousands and up are
// scaled (1500 -> "1.5k", 2e6 -> "2M").
std::string FormatTick(double v, double step, bool suffixes) {
  if (std::abs(v) < std::abs(step) * 1e-6) v = 0;  // float noise around zero
  const double a = std::abs(v);
  if (a >= 1e15 || (a != 0 && a < 1e-9)) {
    // Beyond the suffixes: 1e+16 -> "1e16", 2.5e-10 -> "2.5e-10".
    std::string s = fmt::format("{:.3g}", v);
    const size_t e = s.find('e');
    if (e != std::string::npos) {
      size_t digits = e + 1;
      if (s[digits] == '+') s.erase(digits, 1);
      if (s[digits] == '-') ++digits;
      while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
    }
    return s;
  }
  struct Unit {
    double scale;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  Unit unit{1, ""};
  for (const Unit& u : kUnits) {
    if (suffixes && a >= u.scale) {
      unit = u;
      break;
    }
  }
  return FormatFixed(v / unit.scale, DecimalsFor(step / unit.scale)) + unit.suffix;
}

// Labels for one axis' ticks; steps[i] is the precision tick i needs. The axis
// uses suffixes ("2.5k") where that makes its labels shorter in all ("0, 500, 1k,
// 1.5k" rather than "0, 500, 1000, 1500"), but not where they would cost
// decimals ("1000.1", not "1.0001k"); on ties, suffixes.
std::vector<std::string> TickLabels(const std::vector<double>& ticks, const std::vector<double>& steps) {
  std::vector<std::string> plain, suffixed;
  size_t plain_length = 0, suffixed_length = 0;
  for (size_t i = 0; i < ticks.size(); ++i) {
    plain.push_back(FormatTick(ticks[i], steps[i], false));
    suffixed.push_back(FormatTick(ticks[i], steps[i], true));
    plain_length += plain.back().size();
    suffixed_length += suffixed.back().size();
  }
  return suffixed_length <= plain_length ? suffixed : plain;
}

// 10^k, exact wherever a double can hold it.
double Pow10(int k) {
  static constexpr double kExact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (k >= 0 && k <= 22) return kExact[k];
  if (k < 0 && k >= -22) return 1.0 / kExact[-k];  // correctly rounded
  return std::pow(10.0, k);
}

// n × 10^e, computed so that 3 × 10^-1 is the double nearest 0.3 (not
// 0.30000000000000004), which keeps tick values and labels clean.
double Scaled(double n, int e) { return e >= 0 ? n * Pow10(e) : n / Pow10(-e); }

// ---------------------------------------------------------------------------
// Axes

struct Axis {
  bool log = false;
  double lo = 0, hi = 1;  // the drawn range (data units)
  std::vector<double> ticks;
  std::vector<std::string> labels;
};

// Round ticks for a linear axis. Assumes lo < hi, both finite, and max_ticks >= 3
// (a data range around 0 needs 3: -1, 0, 1 steps).
// Steps are {1, 2, 2.5, 5} × 10^k; the smallest one that gives at most `max_ticks`
// ticks wins. When `extend` (ranges taken from the data) the range grows outward
// to whole steps, so the axis starts and ends on a tick; otherwise (explicit
// ranges) it stays as given and the ticks are the step multiples inside it.
// A range too narrow for its magnitude to count its steps in a double (1e20 ..
// 1e20 + 1000) gets ticks at its two ends.
Axis LinearAxis(double lo, double hi, bool extend, int max_ticks) {
  static constexpr int kMantissas[] = {10, 20, 25, 50};  // × 10^(e) with e one lower
  constexpr double kFuzz = 1e-9;         // 100 / 20 may come out as 5.000000001
  constexpr double kMaxMultiple = 0x1p52;  // step multiples beyond this are not exact
  const double span = hi - lo;
  // 10^floor(log10(span / max_ticks)) is below the step we want: start there.
  int e = static_cast<int>(std::floor(std::log10(span / max_ticks))) - 1;
  Axis axis;
  std::vector<double> steps;
  bool countable = true;
  for (int round = 0; round < 64 && countable; ++round, ++e) {
    for (const int q : kMantissas) {
      const double step = Scaled(q, e);
      const double first = extend ? std::floor(lo / step + kFuzz) : std::ceil(lo / step - kFuzz);
      const double last = extend ? std::ceil(hi / step - kFuzz) : std::floor(hi / step + kFuzz);
      if (!(step > 0 && std::isfinite(step)) || !(std::abs(first) <= kMaxMultiple && std::abs(last) <= kMaxMultiple)) {
        countable = false;
        break;
      }
      if (last - first + 1 > max_ticks) continue;
      axis.lo = extend ? Scaled(first * q, e) : lo;
      axis.hi = extend ? Scaled(last * q, e) : hi;
      for (double i = first; i <= last; ++i) {
        axis.ticks.push_back(Scaled(i * q, e));
        steps.push_back(step);
      }
      axis.labels = TickLabels(axis.ticks, steps);
      return axis;
    }
  }
  axis.lo = lo;
  axis.hi = hi;
  axis.ticks = {lo, hi};
  axis.labels = TickLabels(axis.ticks, {span, span});
  return axis;
}

// Ticks for a logarithmic axis. Assumes 0 < lo < hi, both finite.
// Ticks sit on decades (1, 10, 100, 1k, ...), every second or third decade when
// there are too many. When `extend` the range grows outward to whole decades. An
// explicit range holding fewer than two decades gets 1-2-5 ticks, then 1..9, and,
// failing those, ticks at its two ends.
Axis LogAxis(double lo, double hi, bool extend, int max_ticks) {
  constexpr double kFuzz = 1e-9;
  Axis axis;
  axis.log = true;
  if (extend) {
    lo = Pow10(static_cast<int>(std::floor(std::log10(lo) + kFuzz)));
    hi = Pow10(static_cast<int>(std::ceil(std::log10(hi) - kFuzz)));
    if (hi <= lo) hi = lo * 10;
  }
  axis.lo = lo;
  axis.hi = hi;
  const int k0 = static_cast<int>(std::ceil(std::log10(lo) - kFuzz));
  const int k1 = static_cast<int>(std::floor(std::log10(hi) + kFuzz));
  std::vector<double> steps;
  static const std::vector<std::vector<int>> kMantissaSets = {
      {1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  for (const std::vector<int>& mantissas : kMantissaSets) {
    std::vector<std::pair<double, double>> candidates;  // value, its decade
    for (int k = k0 - 1; k <= k1; ++k) {
      for (const int m : mantissas) {
        const double v = Scaled(m, k);
        if (v >= lo * (1 - kFuzz) && v <= hi * (1 + kFuzz)) candidates.emplace_back(v, Pow10(k));
      }
    }
    if (candidates.size() < 2) continue;
    const size_t stride = (candidates.size() + max_ticks - 1) / max_ticks;
    for (size_t i = 0; i < candidates.size(); i += stride) {
      axis.ticks.push_back(candidates[i].first);
      steps.push_back(candidates[i].second);
    }
    axis.labels = TickLabels(axis.ticks, steps);
    return axis;
  }
  for (const double v : {lo, hi}) {
    axis.ticks.push_back(v);
    steps.push_back((hi - lo) / 10);
  }
  axis.labels = TickLabels(axis.ticks, steps);
  return axis;
}

struct Range {
  double lo = 0, hi = 1;
  bool from_data = true;
};

// The x range: explicit when x_min != x_max (swapped if reversed; for log_x both
// must be > 0), else the data's, padded when it is a single value.
Range XRange(const Chart& chart, double data_lo, double data_hi, bool has_data) {
  double a = chart.x_min, b = chart.x_max;
  const bool explicit_ok = a != b && std::isfinite(a) && std::isfinite(b) &&
                           (!chart.log_x || (a > 0 && b > 0));
  if (explicit_ok) {
    if (a > b) std::swap(a, b);
    return {std::clamp(a, -kMaxValue, kMaxValue), std::clamp(b, -kMaxValue, kMaxValue), false};
  }
  if (!has_data) return chart.log_x ? Range{1, 10} : Range{0, 1};
  if (chart.log_x) {
    if (data_lo == data_hi) return {data_lo / 10, data_hi * 10};
    return {data_lo, data_hi};
  }
  if (data_lo == data_hi) {
    const double pad = data_lo == 0 ? 1 : std::abs(data_lo) * 0.1;
    return {data_lo - pad, data_hi + pad};
  }
  return {data_lo, data_hi};
}

// The y range: explicit when y_min != y_max, else the data's widened to take in 0
// (from 0 up for positive data, down to 0 for negative data), [0, 1] when all zero.
Range YRange(const Chart& chart, double data_lo, double data_hi, bool has_data) {
  double a = chart.y_min, b = chart.y_max;
  if (a != b && std::isfinite(a) && std::isfinite(b)) {
    if (a > b) std::swap(a, b);
    return {std::clamp(a, -kMaxValue, kMaxValue), std::clamp(b, -kMaxValue, kMaxValue), false};
  }
  if (!has_data) return {0, 1};
  const double lo = std::min(0.0, data_lo), hi = std::max(0.0, data_hi);
  if (lo == hi) return {0, 1};
  return {lo, hi};
}

// ---------------------------------------------------------------------------
// Geometry

struct Pixel {
  double x = 0, y = 0;
  bool operator==(const Pixel&) const = default;
};

struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool Contains(Pixel p) const { return p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1; }
};

// Data -> pixels for one axis.
struct Scale {
  bool log = false;
  double lo = 0, hi = 1;        // data range (log10 of it when log)
  double px_from = 0, px_to = 1;  // pixels of lo and hi (y runs upward: from > to)

  Scale(const Axis& axis, double from, double to)
      : log(axis.log),
        lo(axis.log ? std::log10(axis.lo) : axis.lo),
        hi(axis.log ? std::log10(axis.hi) : axis.hi),
        px_from(from),
        px_to(to) {}

  double operator()(double v) const {
    const double t = ((log ? std::log10(v) : v) - lo) / (hi - lo);
    return std::clamp(px_from + t * (px_to - px_from), -kMaxPixel, kMaxPixel);
  }
};

// Thinning: a series with more points than about two per pixel column is cut to
// at most four points per column: the first, the lowest, the highest and the last
// of each run of consecutive points falling in one column, kept in their original
// order. Drawn at this resolution the line looks the same (every column still
// spans its min..max, and the runs join where they did), the file stays small and
// the work is one pass with memory for the output only. Columns are clamped just
// outside the plot, so points beyond an explicit range collapse into one run on
// each side.
// This assumes x mostly increases along the series (time series, CDFs). Where x
// jumps about, runs stay short; if they still leave more than kMaxRunPoints per
// column, each column is instead reduced as a whole (its first, lowest, highest
// and last point) and the columns are joined in x order: a bounded size at the
// cost of redrawing such a scribble left to right.
class ColumnThinner {
 public:
  // Thins only when `enabled`; otherwise keeps every point.
  ColumnThinner(double left, double width, bool enabled)
      : lo_col_(std::floor(left) - 1),
        hi_col_(std::ceil(left + width) + 1),
        enabled_(enabled),
        columns_(enabled ? static_cast<size_t>(hi_col_ - lo_col_) + 1 : 0) {}

  void Add(Pixel p) {
    if (!enabled_) {
      out_.push_back(p);
      return;
    }
    const double col = std::clamp(std::floor(p.x), lo_col_, hi_col_);
    const Indexed here{index_++, p};
    columns_[static_cast<size_t>(col - lo_col_)].Add(here);
    if (!in_run_ || col != col_) {
      FlushRun();
      in_run_ = true;
      col_ = col;
      run_ = Extremes{};
    }
    run_.Add(here);
  }

  std::vector<Pixel> Finish() && {
    FlushRun();
    if (!enabled_ || out_.size() <= kMaxRunPoints * columns_.size()) return std::move(out_);
    std::vector<Pixel> by_column;
    for (const Extremes& column : columns_) column.AppendTo(by_column);
    return by_column;
  }

 private:
  static constexpr size_t kMaxRunPoints = 8;

  struct Indexed {
    size_t i = 0;
    Pixel p;
  };

  // The first, highest, lowest and last of a set of points.
  struct Extremes {
    bool empty = true;
    Indexed first, top, bottom, last;  // screen y runs down: top is the highest value

    void Add(const Indexed& x) {
      if (empty) {
        first = top = bottom = last = x;
        empty = false;
        return;
      }
      if (x.p.y < top.p.y) top = x;
      if (x.p.y > bottom.p.y) bottom = x;
      last = x;
    }

    // Appends them in their original order, each once.
    void AppendTo(std::vector<Pixel>& out) const {
      if (empty) return;
      std::array<Indexed, 4> keep = {first, top, bottom, last};
      std::sort(keep.begin(), keep.end(), [](const Indexed& a, const Indexed& b) { return a.i < b.i; });
      for (size_t k = 0; k < keep.size(); ++k) {
        if (k == 0 || keep[k].i != keep[k - 1].i) out.push_back(keep[k].p);
      }
    }
  };

  void FlushRun() {
    if (in_run_) run_.AppendTo(out_);
    in_run_ = false;
  }

  double lo_col_, hi_col_;
  bool enabled_;
  std::vector<Extremes> columns_;  // per pixel column, for the fallback
  bool in_run_ = false;
  double col_ = 0;
  size_t index_ = 0;
  Extremes run_;
  std::vector<Pixel> out_;
};

// A step function: each value holds until the next point's x, then jumps, so n
// points become 2n - 1 (horizontal, then vertical).
std::vector<Pixel> ToSteps(const std::vector<Pixel>& pts) {
  std::vector<Pixel> out;
  out.reserve(pts.empty() ? 0 : 2 * pts.size() - 1);
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i > 0) out.push_back({pts[i].x, pts[i - 1].y});
    out.push_back(pts[i]);
  }
  return out;
}

// Liang–Barsky: the part of segment a -> b inside `box`, if any. The ends that
// lie inside come back bit for bit, so joined segments still join exactly.
std::optional<std::pair<Pixel, Pixel>> ClipSegment(Pixel a, Pixel b, const Box& box) {
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.x - box.x0, box.x1 - a.x, a.y - box.y0, box.y1 - a.y};
  double t0 = 0, t1 = 1;
  for (int k = 0; k < 4; ++k) {
    if (p[k] == 0) {
      if (q[k] < 0) return std::nullopt;  // parallel to this edge and outside it
      continue;
    }
    const double r = q[k] / p[k];
    if (p[k] < 0) {
      if (r > t1) return std::nullopt;
      t0 = std::max(t0, r);
    } else {
      if (r < t0) return std::nullopt;
      t1 = std::min(t1, r);
    }
  }
  const Pixel c = t0 == 0 ? a : Pixel{a.x + t0 * dx, a.y + t0 * dy};
  const Pixel d = t1 == 1 ? b : Pixel{a.x + t1 * dx, a.y + t1 * dy};
  return std::pair{c, d};
}

// Position of `p` (on or near the boundary of `box`) along that boundary,
// clockwise on screen from the top-left corner.
double PerimeterPosition(Pixel p, const Box& b) {
  const double w = b.x1 - b.x0, h = b.y1 - b.y0;
  const double x = std::clamp(p.x, b.x0, b.x1), y = std::clamp(p.y, b.y0, b.y1);
  const double top = y - b.y0, right = b.x1 - x, bottom = b.y1 - y, left = x - b.x0;
  const double nearest = std::min({top, right, bottom, left});
  if (nearest == top) return x - b.x0;
  if (nearest == right) return w + (y - b.y0);
  if (nearest == bottom) return w + h + (b.x1 - x);
  return 2 * w + h + (b.y1 - y);
}

// Appends the corners of `box` met walking its boundary from `from` to `to` (both
// on it) the shorter way round.
void WalkBoundary(Pixel from, Pixel to, const Box& b, std::vector<Pixel>& out) {
  const double w = b.x1 - b.x0, h = b.y1 - b.y0, total = 2 * (w + h);
  const double s = PerimeterPosition(from, b), e = PerimeterPosition(to, b);
  const double forward = std::fmod(e - s + total, total);
  if (forward < 1e-6 || forward > total - 1e-6) return;
  const bool clockwise = forward <= total / 2;
  const double length = clockwise ? forward : total - forward;
  const std::array<std::pair<double, Pixel>, 4> corners = {{{w, {b.x1, b.y0}},
                                                            {w + h, {b.x1, b.y1}},
                                                            {2 * w + h, {b.x0, b.y1}},
                                                            {0, {b.x0, b.y0}}}};
  std::vector<std::pair<double, Pixel>> met;  // distance from `from`, corner
  for (const auto& [pos, corner] : corners) {
    const double d = clockwise ? std::fmod(pos - s + total, total) : std::fmod(s - pos + total, total);
    if (d > 0 && d < length) met.emplace_back(d, corner);
  }
  std::sort(met.begin(), met.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  for (const auto& m : met) out.push_back(m.second);
}

// The polyline cut to `box`: its parts inside are kept exactly; between a part
// that leaves and the next that enters, the line follows the box's boundary. With
// the box a little larger than the clipPath, what shows is unchanged while
// coordinates stay near the plot however far out the data lies.
std::vector<Pixel> ClipPolyline(const std::vector<Pixel>& pts, const Box& box) {
  std::vector<Pixel> out;
  if (pts.size() == 1) {
    if (box.Contains(pts[0])) out.push_back(pts[0]);
    return out;
  }
  for (size_t i = 0; i + 1 < pts.size(); ++i) {
    const auto seg = ClipSegment(pts[i], pts[i + 1], box);
    if (!seg) continue;
    const auto [a, b] = *seg;
    if (out.empty()) {
      out.push_back(a);
    } else if (out.back() != a) {
      WalkBoundary(out.back(), a, box, out);
      out.push_back(a);
    }
    if (b != a) out.push_back(b);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Rendering

using Out = std::back_insert_iterator<std::string>;

struct Plot {
  int left = 0, top = 0, width = 0, height = 0;
  int right() const { return left + width; }
  int bottom() const { return top + height; }
};

size_t LongestLabel(const std::vector<std::string>& labels) {
  size_t n = 0;
  for (const auto& l : labels) n = std::max(n, CharCount(l));
  return n;
}

void RenderGridAndAxes(Out out, const Plot& plot, const Axis& x_axis, const Axis& y_axis,
                       const Scale& sx, const Scale& sy) {
  fmt::format_to(out, "<g class=\"grid\" stroke=\"#e5e5e5\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n");
  for (const double t : x_axis.ticks) {
    const std::string x = FormatCoord(sx(t));
    fmt::format_to(out, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", x, plot.top, plot.bottom());
  }
  for (const double t : y_axis.ticks) {
    const std::string y = FormatCoord(sy(t));
    fmt::format_to(out, "<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>\n", y, plot.left, plot.right());
  }
  fmt::format_to(out, "</g>\n");

  // Axis lines along the left and bottom of the plot, with tick marks outside.
  fmt::format_to(out, "<g class=\"axes\" stroke=\"#333333\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n");
  fmt::format_to(out, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", plot.left, plot.top, plot.bottom());
  fmt::format_to(out, "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>\n", plot.left, plot.right(), plot.bottom());
  for (const double t : x_axis.ticks) {
    fmt::format_to(out, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", FormatCoord(sx(t)),
                   plot.bottom(), plot.bottom() + 5);
  }
  for (const double t : y_axis.ticks) {
    fmt::format_to(out, "<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>\n", FormatCoord(sy(t)),
                   plot.left - 5, plot.left);
  }
  fmt::format_to(out, "</g>\n");

  fmt::format_to(out, "<g class=\"x-ticks\" font-size=\"11\" fill=\"#333333\" text-anchor=\"middle\">\n");
  for (size_t i = 0; i < x_axis.ticks.size(); ++i) {
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\">{}</text>\n", FormatCoord(sx(x_axis.ticks[i])),
                   plot.bottom() + 18, EscapeXml(x_axis.labels[i]));
  }
  fmt::format_to(out, "</g>\n");
  fmt::format_to(out, "<g class=\"y-ticks\" font-size=\"11\" fill=\"#333333\" text-anchor=\"end\">\n");
  for (size_t i = 0; i < y_axis.ticks.size(); ++i) {
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\">{}</text>\n", plot.left - 8,
                   FormatCoord(sy(y_axis.ticks[i]) + 4), EscapeXml(y_axis.labels[i]));
  }
  fmt::format_to(out, "</g>\n");
}

// The series' name, or "series N" (from 1) for an unnamed one.
std::string SeriesName(const Chart& chart, size_t i) {
  const std::string& name = chart.series[i].name;
  return name.empty() ? fmt::format("series {}", i + 1) : name;
}

void RenderLegend(Out out, const Chart& chart, const Plot& plot, size_t max_chars) {
  if (chart.series.empty()) return;
  const double x = plot.right() + 16;
  // Rows that fit beside the plot; the last one says how many more there are.
  const size_t rows = std::max<size_t>(1, static_cast<size_t>(plot.height / kLegendRow));
  const size_t shown = chart.series.size() <= rows ? chart.series.size() : rows - 1;
  fmt::format_to(out, "<g class=\"legend\" font-size=\"12\" fill=\"#333333\">\n");
  for (size_t i = 0; i < shown; ++i) {
    const double y = plot.top + 8 + kLegendRow * static_cast<double>(i);
    const std::string label = Truncate(SeriesName(chart, i), max_chars);
    fmt::format_to(out,
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"3\"/>\n"
                   "<text x=\"{4}\" y=\"{5}\">{6}</text>\n",
                   FormatCoord(x), FormatCoord(y), FormatCoord(x + 18), kPalette[i % kPalette.size()],
                   FormatCoord(x + 24), FormatCoord(y + 4), EscapeXml(label));
  }
  if (shown < chart.series.size()) {
    const double y = plot.top + 8 + kLegendRow * static_cast<double>(shown);
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\">+{} more</text>\n", FormatCoord(x), FormatCoord(y + 4),
                   chart.series.size() - shown);
  }
  fmt::format_to(out, "</g>\n");
}

}  // namespace

// Steps:
//  1. Gather each series' drawable points (finite; x > 0 on a log axis) and the
//     data's extent.
//  2. Ranges (explicit or from the data) and the plot's margins, which depend on
//     the title, the y tick labels and the legend's names; then the ticks.
//  3. Background, grid, axes, tick labels, title and axis labels.
//  4. Each series: to pixels, thinned, as steps if asked, clipped to the plot;
//     one polyline (a dot when only one point remains) inside the clipPath.
//  5. The legend, or "no data" when no series had a drawable point.
std::string RenderSvgChart(const Chart& chart) {
  // 1. Drawable points.
  // Points are read in place (a series may hold millions): counted and measured
  // here, mapped and thinned in one pass in step 4.
  const auto drawable = [&](const ChartPoint& p) -> std::optional<ChartPoint> {
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || (chart.log_x && p.x <= 0)) return std::nullopt;
    // Clamped so that spans stay finite (and, on a log axis, x / 10 stays > 0).
    const double x_floor = chart.log_x ? 1 / kMaxValue : -kMaxValue;
    return ChartPoint{std::clamp(p.x, x_floor, kMaxValue), std::clamp(p.y, -kMaxValue, kMaxValue)};
  };
  std::vector<size_t> drawable_count(chart.series.size(), 0);
  double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0;
  bool has_data = false;
  for (size_t s = 0; s < chart.series.size(); ++s) {
    for (const ChartPoint& p : chart.series[s].points) {
      const std::optional<ChartPoint> d = drawable(p);
      if (!d) continue;
      const ChartPoint c = *d;
      ++drawable_count[s];
      x_lo = has_data ? std::min(x_lo, c.x) : c.x;
      x_hi = has_data ? std::max(x_hi, c.x) : c.x;
      y_lo = has_data ? std::min(y_lo, c.y) : c.y;
      y_hi = has_data ? std::max(y_hi, c.y) : c.y;
      has_data = true;
    }
  }

  // 2. Ranges, layout, ticks. Vertical layout first: it fixes the y ticks, whose
  // labels' width fixes the left margin.
  const int width = std::max(chart.width, kMinWidth);
  const int height = std::max(chart.height, kMinHeight);
  const Range xr = XRange(chart, x_lo, x_hi, has_data);
  const Range yr = YRange(chart, y_lo, y_hi, has_data);
  Plot plot;
  plot.top = chart.title.empty() ? 16 : 40;
  plot.height = height - plot.top - (chart.x_label.empty() ? 32 : 52);
  const int y_max_ticks = std::clamp(plot.height / 40, 3, kMaxTicks);
  const Axis y_axis = LinearAxis(yr.lo, yr.hi, yr.from_data, y_max_ticks);
  plot.left = static_cast<int>((chart.y_label.empty() ? 10 : 32) + kCharWidth * LongestLabel(y_axis.labels) + 10);

  size_t legend_chars = 0;
  int right_margin = 20;
  if (!chart.series.empty()) {
    for (size_t i = 0; i < chart.series.size(); ++i) {
      legend_chars = std::max(legend_chars, CharCount(SeriesName(chart, i)));
    }
    // Names are cut rather than let the legend take more than 40% of the width.
    const double room = (width * 0.4 - 50) / kCharWidth;
    legend_chars = std::min({legend_chars, kMaxLegendChars, static_cast<size_t>(std::max(room, 4.0))});
    right_margin = static_cast<int>(16 + 24 + kCharWidth * legend_chars + 10);
  }
  plot.width = std::max(width - plot.left - right_margin, 20);
  const int x_max_ticks = std::clamp(plot.width / 60, 3, kMaxTicks);
  const Axis x_axis = chart.log_x ? LogAxis(xr.lo, xr.hi, xr.from_data, x_max_ticks)
                                  : LinearAxis(xr.lo, xr.hi, xr.from_data, x_max_ticks);
  const Scale sx(x_axis, plot.left, plot.right());
  const Scale sy(y_axis, plot.bottom(), plot.top);

  // 3. Frame. The clipPath's id is derived from its rectangle, so charts inlined
  // in one HTML page cannot pick up each other's different clip.
  std::string svg;
  svg.reserve(16 * 1024);
  Out out(svg);
  fmt::format_to(out,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\">\n",
                 width, height);
  if (!chart.title.empty()) fmt::format_to(out, "<title>{}</title>\n", EscapeXml(chart.title));
  const std::string clip_id =
      fmt::format("tessera-plot-{}-{}-{}-{}", plot.left, plot.top, plot.width, plot.height);
  fmt::format_to(out,
                 "<defs><clipPath id=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath></defs>\n",
                 clip_id, plot.left, plot.top, plot.width, plot.height);
  fmt::format_to(out, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
  RenderGridAndAxes(out, plot, x_axis, y_axis, sx, sy);
  const std::string centre_x = FormatCoord(plot.left + plot.width / 2.0);
  if (!chart.title.empty()) {
    fmt::format_to(out,
                   "<text class=\"title\" x=\"{}\" y=\"26\" text-anchor=\"middle\" font-size=\"16\" "
                   "font-weight=\"bold\" fill=\"#000000\">{}</text>\n",
                   centre_x, EscapeXml(chart.title));
  }
  if (!chart.x_label.empty()) {
    fmt::format_to(out,
                   "<text class=\"x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" "
                   "fill=\"#000000\">{}</text>\n",
                   centre_x, height - 12, EscapeXml(chart.x_label));
  }
  if (!chart.y_label.empty()) {
    fmt::format_to(out,
                   "<text class=\"y-label\" transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\" "
                   "font-size=\"12\" fill=\"#000000\">{}</text>\n",
                   FormatCoord(plot.top + plot.height / 2.0), EscapeXml(chart.y_label));
  }

  // 4. Series.
  const Box clip_box{plot.left - kClipMargin, plot.top - kClipMargin, plot.right() + kClipMargin,
                     plot.bottom() + kClipMargin};
  fmt::format_to(out, "<g class=\"series\" clip-path=\"url(#{})\">\n", clip_id);
  for (size_t s = 0; s < chart.series.size(); ++s) {
    if (drawable_count[s] == 0) continue;
    ColumnThinner thinner(plot.left, plot.width, static_cast<double>(drawable_count[s]) > 2.0 * plot.width);
    for (const ChartPoint& p : chart.series[s].points) {
      if (const std::optional<ChartPoint> d = drawable(p)) thinner.Add({sx(d->x), sy(d->y)});
    }
    std::vector<Pixel> pixels = std::move(thinner).Finish();
    if (chart.step) pixels = ToSteps(pixels);
    pixels = ClipPolyline(pixels, clip_box);
    if (pixels.empty()) continue;
    const std::string_view colour = kPalette[s % kPalette.size()];
    const std::string name = EscapeXml(SeriesName(chart, s));  // the full name, as a tooltip
    if (pixels.size() == 1) {  // a polyline of one point draws nothing
      fmt::format_to(out, "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{}\"><title>{}</title></circle>\n",
                     FormatCoord(pixels[0].x), FormatCoord(pixels[0].y), colour, name);
      continue;
    }
    fmt::format_to(out, "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" stroke-linejoin=\"round\" points=\"",
                   colour);
    for (size_t i = 0; i < pixels.size(); ++i) {
      fmt::format_to(out, "{}{},{}", i == 0 ? "" : " ", FormatCoord(pixels[i].x), FormatCoord(pixels[i].y));
    }
    fmt::format_to(out, "\"><title>{}</title></polyline>\n", name);
  }
  fmt::format_to(out, "</g>\n");

  // 5. Legend, or the empty-chart notice.
  RenderLegend(out, chart, plot, legend_chars);
  if (!has_data) {
    fmt::format_to(out,
                   "<text class=\"no-data\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"14\" "
                   "fill=\"#666666\">no data</text>\n",
                   centre_x, FormatCoord(plot.top + plot.height / 2.0));
  }
  fmt::format_to(out, "</svg>\n");
  return svg;
}

}  // namespace tessera
