#include "sim/svg_chart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {
namespace {

// ---------------------------------------------------------------------------
// Builders and a little SVG reading (enough for our own output, not general XML).

ChartSeries Series(std::string name, std::vector<ChartPoint> points) {
  return ChartSeries{std::move(name), std::move(points)};
}

Chart LineChart(std::vector<ChartSeries> series) {
  Chart chart;
  chart.title = "Allocation";
  chart.x_label = "time (h)";
  chart.y_label = "GPUs allocated (%)";
  chart.series = std::move(series);
  return chart;
}

size_t Count(std::string_view haystack, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

// The part of `svg` from `<g class="NAME"` to the next `</g>`.
std::string_view Group(std::string_view svg, std::string_view name) {
  const std::string open = "<g class=\"" + std::string(name) + "\"";
  const size_t begin = svg.find(open);
  if (begin == std::string_view::npos) return {};
  const size_t end = svg.find("</g>", begin);
  return svg.substr(begin, end - begin);
}

// The contents of each <text> element in `svg`, in order.
std::vector<std::string> Texts(std::string_view svg) {
  std::vector<std::string> texts;
  for (size_t pos = svg.find("<text"); pos != std::string_view::npos; pos = svg.find("<text", pos + 1)) {
    const size_t open_end = svg.find('>', pos);
    const size_t close = svg.find("</text>", open_end);
    texts.emplace_back(svg.substr(open_end + 1, close - open_end - 1));
  }
  return texts;
}

struct Point {
  double x, y;
};

// The points of each <polyline> in `svg`, in order.
std::vector<std::vector<Point>> Polylines(std::string_view svg) {
  std::vector<std::vector<Point>> lines;
  for (size_t pos = svg.find("<polyline"); pos != std::string_view::npos; pos = svg.find("<polyline", pos + 1)) {
    const size_t begin = svg.find("points=\"", pos) + 8;
    const size_t end = svg.find('"', begin);
    const std::string points(svg.substr(begin, end - begin));
    std::vector<Point> line;
    for (size_t p = 0; p < points.size();) {
      size_t next = points.find(' ', p);
      if (next == std::string::npos) next = points.size();
      const std::string pair = points.substr(p, next - p);
      const size_t comma = pair.find(',');
      line.push_back({std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1))});
      p = next + 1;
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

// The numeric value of attribute `name` in the first element that starts with
// `element` (e.g. "<rect x=").
double Attribute(std::string_view svg, std::string_view element, std::string_view name) {
  const size_t pos = svg.find(element);
  const std::string key = " " + std::string(name) + "=\"";
  const size_t begin = svg.find(key, pos) + key.size();
  return std::stod(std::string(svg.substr(begin, svg.find('"', begin) - begin)));
}

// The plot area, read back from the clipPath's rectangle.
struct Rect {
  double x, y, width, height;
};
Rect PlotArea(std::string_view svg) {
  const std::string_view clip = svg.substr(svg.find("<clipPath"));
  return {Attribute(clip, "<rect", "x"), Attribute(clip, "<rect", "y"), Attribute(clip, "<rect", "width"),
          Attribute(clip, "<rect", "height")};
}

// ---------------------------------------------------------------------------
// Document shape

TEST(SvgChartTest, IsAStandaloneSvgDocument) {
  // A plain two-point chart: the root carries the namespace, size and viewBox.
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{0, 0}, {1, 1}})}));
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""));
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  EXPECT_NE(svg.find("width=\"900\" height=\"500\" viewBox=\"0 0 900 500\""), std::string::npos);
  EXPECT_NE(svg.find("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<svg"), 1u);
  EXPECT_EQ(Count(svg, "</svg>"), 1u);
}

TEST(SvgChartTest, ElementsAreBalanced) {
  // Every element we open with a separate closing tag is closed once.
  const std::string svg =
      RenderSvgChart(LineChart({Series("a", {{0, 1}, {2, 3}}), Series("b", {{1, 1}}), Series("c", {})}));
  EXPECT_EQ(Count(svg, "<polyline"), Count(svg, "</polyline>"));
  EXPECT_EQ(Count(svg, "<text"), Count(svg, "</text>"));
  EXPECT_EQ(Count(svg, "<title>"), Count(svg, "</title>"));
  EXPECT_EQ(Count(svg, "<g ") + Count(svg, "<g>"), Count(svg, "</g>"));
  EXPECT_EQ(Count(svg, "<circle"), Count(svg, "</circle>"));
}

TEST(SvgChartTest, TinySizesAreEnlarged) {
  // A 10x10 request would leave no plot; it is drawn at the 300x200 minimum.
  Chart chart = LineChart({Series("a", {{0, 0}, {1, 1}})});
  chart.width = 10;
  chart.height = 10;
  const std::string svg = RenderSvgChart(chart);
  EXPECT_NE(svg.find("viewBox=\"0 0 300 200\""), std::string::npos);
  EXPECT_GT(PlotArea(svg).width, 0);
  EXPECT_GT(PlotArea(svg).height, 0);
}

// ---------------------------------------------------------------------------
// Text

TEST(SvgChartTest, EscapesTitleLabelsAndNames) {
  // Every piece of user text passes through XML escaping.
  Chart chart = LineChart({Series("q \"1\" & 'b'", {{0, 0}, {1, 1}})});
  chart.title = "A & B <x>";
  chart.x_label = "x < 1";
  chart.y_label = "y > 2";
  const std::string svg = RenderSvgChart(chart);
  EXPECT_EQ(svg.find("A & B <x>"), std::string::npos);
  EXPECT_NE(svg.find(">A &amp; B &lt;x&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">x &lt; 1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">y &gt; 2</text>"), std::string::npos);
  EXPECT_NE(svg.find(">q &quot;1&quot; &amp; &apos;b&apos;</text>"), std::string::npos);
}

TEST(SvgChartTest, InvalidUtf8AndControlCharactersCannotBreakTheDocument) {
  // A stray 0xFF byte becomes U+FFFD, a NUL and a BEL (not XML characters) are
  // dropped, valid multi-byte text ("µs", "→") passes through.
  Chart chart = LineChart({Series("a", {{0, 0}, {1, 1}})});
  chart.title = std::string("bad\xFF byte\x07 nul") + '\0' + "!";
  chart.x_label = "time (\xC2\xB5s) \xE2\x86\x92";
  const std::string svg = RenderSvgChart(chart);
  EXPECT_NE(svg.find(">bad\xEF\xBF\xBD byte nul!</text>"), std::string::npos);
  EXPECT_NE(svg.find(">time (\xC2\xB5s) \xE2\x86\x92</text>"), std::string::npos);
  EXPECT_EQ(svg.find('\0'), std::string::npos);
}

TEST(SvgChartTest, LongLegendNamesAreCutWithAnEllipsis) {
  // 100 characters would take over the chart: the legend shows 31 and "…".
  const std::string name(100, 'n');
  const std::string svg = RenderSvgChart(LineChart({Series(name, {{0, 0}, {1, 1}})}));
  const std::vector<std::string> legend = Texts(Group(svg, "legend"));
  ASSERT_EQ(legend.size(), 1u);
  EXPECT_EQ(legend[0], std::string(31, 'n') + "\xE2\x80\xA6");
  EXPECT_NE(svg.find("<title>" + name + "</title>"), std::string::npos);  // full name as tooltip
}

// ---------------------------------------------------------------------------
// Series and legend

TEST(SvgChartTest, OnePolylinePerNonEmptySeriesAndEveryNameInTheLegend) {
  // Three series, the middle one empty: two lines, three legend entries.
  const std::string svg = RenderSvgChart(LineChart(
      {Series("running", {{0, 1}, {1, 2}}), Series("idle", {}), Series("queued", {{0, 3}, {1, 0}})}));
  EXPECT_EQ(Polylines(svg).size(), 2u);
  EXPECT_EQ(Texts(Group(svg, "legend")), (std::vector<std::string>{"running", "idle", "queued"}));
}

TEST(SvgChartTest, UnnamedSeriesAreNumberedInTheLegend) {
  // The second series has no name: it is listed by its position.
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{0, 0}, {1, 1}}), Series("", {{0, 1}, {1, 0}})}));
  EXPECT_EQ(Texts(Group(svg, "legend")), (std::vector<std::string>{"a", "series 2"}));
}

TEST(SvgChartTest, ColoursFollowTheOkabeItoPaletteAndCycle) {
  // Nine series: the ninth takes the first colour again.
  std::vector<ChartSeries> series;
  for (int i = 0; i < 9; ++i) series.push_back(Series(std::to_string(i), {{0, 0}, {1, 1.0 * i}}));
  const std::string svg = RenderSvgChart(LineChart(series));
  const std::string_view lines = Group(svg, "series");
  EXPECT_EQ(Count(lines, "stroke=\"#0072B2\""), 2u);  // series 0 and 8
  EXPECT_EQ(Count(lines, "stroke=\"#E69F00\""), 1u);
  EXPECT_EQ(Count(lines, "stroke=\"#000000\""), 1u);  // series 7, the last colour
}

TEST(SvgChartTest, PolylinesAreUnfilledStrokes) {
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{0, 0}, {1, 1}})}));
  EXPECT_NE(svg.find("<polyline fill=\"none\" stroke=\"#0072B2\" stroke-width=\"1.5\""), std::string::npos);
}

TEST(SvgChartTest, NonFinitePointsAreSkipped) {
  // NaN and ±inf points are dropped; the other three are joined.
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::string svg = RenderSvgChart(
      LineChart({Series("a", {{0, 1}, {kNan, 2}, {1, kInf}, {-kInf, 3}, {2, 3}, {3, 2}})}));
  const auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].size(), 3u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgChartTest, SinglePointIsDrawnAsADot) {
  // One point: a polyline would draw nothing, so it becomes a circle. The range
  // around a single x is padded (5 ± 0.5) rather than empty.
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{5, 2}})}));
  EXPECT_EQ(Polylines(svg).size(), 0u);
  EXPECT_EQ(Count(svg, "<circle"), 1u);
  EXPECT_EQ(Texts(Group(svg, "x-ticks")), (std::vector<std::string>{"4.4", "4.6", "4.8", "5", "5.2", "5.4", "5.6"}));
}

// ---------------------------------------------------------------------------
// Ticks

TEST(SvgChartTest, LinearTicksAtRoundValues) {
  // y 0..100, x 0..10 from the data: steps 20 and 2 (the smallest of 1, 2, 2.5,
  // 5 × 10^k giving at most 8 ticks; 10 would give 11 ticks on y).
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{0, 0}, {10, 100}})}));
  EXPECT_EQ(Texts(Group(svg, "y-ticks")), (std::vector<std::string>{"0", "20", "40", "60", "80", "100"}));
  EXPECT_EQ(Texts(Group(svg, "x-ticks")), (std::vector<std::string>{"0", "2", "4", "6", "8", "10"}));
}

TEST(SvgChartTest, DataRangeIsExtendedToWholeSteps) {
  // y data 3..87 starts at 0 (positive data) and ends at the next step: 0..100.
  // x data 1.3..9.6 grows to 0..10 (step 2).
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{1.3, 3}, {9.6, 87}})}));
  EXPECT_EQ(Texts(Group(svg, "y-ticks")), (std::vector<std::string>{"0", "20", "40", "60", "80", "100"}));
  EXPECT_EQ(Texts(Group(svg, "x-ticks")), (std::vector<std::string>{"0", "2", "4", "6", "8", "10"}));
}

TEST(SvgChartTest, NegativeDataExtendsYBelowZero) {
  // y -5..10: span 15, step 2.5 (2 would need 9 ticks from -6 to 10).
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{0, -5}, {1, 10}})}));
  EXPECT_EQ(Texts(Group(svg, "y-ticks")),
            (std::vector<std::string>{"-5", "-2.5", "0", "2.5", "5", "7.5", "10"}));
}

TEST(SvgChartTest, AllNegativeDataRunsUpToZero) {
  // y -87..-3: the range takes in 0, as positive data starts from it: -100..0.
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{0, -3}, {1, -87}})}));
  EXPECT_EQ(Texts(Group(svg, "y-ticks")), (std::vector<std::string>{"-100", "-80", "-60", "-40", "-20", "0"}));
}

TEST(SvgChartTest, FractionalTicksHaveNoTrailingZeros) {
  // An explicit y range 0..1: step 0.2, labels without float noise (0.6, not
  // 0.6000000000000001) or padding (1, not 1.0).
  Chart chart = LineChart({Series("a", {{0, 0.5}, {1, 0.7}})});
  chart.y_min = 0;
  chart.y_max = 1;
  const std::string svg = RenderSvgChart(chart);
  EXPECT_EQ(Texts(Group(svg, "y-ticks")), (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
}

TEST(SvgChartTest, ThousandsAndMillionsUseSuffixes) {
  // y 0..15000: step 2500 (2000 would need 9 ticks). x 0..3e6: step 500k.
  const std::string svg = RenderSvgChart(LineChart({Series("a", {{0, 0}, {3e6, 15000}})}));
  EXPECT_EQ(Texts(Group(svg, "y-ticks")),
            (std::vector<std::string>{"0", "2.5k", "5k", "7.5k", "10k", "12.5k", "15k"}));
  EXPECT_EQ(Texts(Group(svg, "x-ticks")),
            (std::vector<std::string>{"0", "500k", "1M", "1.5M", "2M", "2.5M", "3M"}));
}

TEST(SvgChartTest, SuffixesAreNotUsedWhereTheyCostDecimals) {
  // y 1000..1000.5 given: step 0.1; "1000.1" is shorter than "1.0001k", so this
  // axis is written in full.
  Chart chart = LineChart({Series("a", {{0, 1000.2}, {1, 1000.3}})});
  chart.y_min = 1000;
  chart.y_max = 1000.5;
  const std::string svg = RenderSvgChart(chart);
  EXPECT_EQ(Texts(Group(svg, "y-ticks")),
            (std::vector<std::string>{"1000", "1000.1", "1000.2", "1000.3", "1000.4", "1000.5"}));
}

TEST(SvgChartTest, ExplicitRangeKeepsTicksInside) {
  // x 0.3..7.7 given: ticks are the multiples of 1 inside it; the range is not
  // extended to 0..8.
  Chart chart = LineChart({Series("a", {{1, 1}, {2, 2}})});
  chart.x_min = 0.3;
  chart.x_max = 7.7;
  const std::string svg = RenderSvgChart(chart);
  EXPECT_EQ(Texts(Group(svg, "x-ticks")), (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7"}));
}

TEST(SvgChartTest, LogAxisTicksOnDecades) {
  // JCTs 3 s .. 50,000 s on a log axis: the range grows to 1..100k, one tick per
  // decade. Points at x <= 0 cannot be drawn and are skipped.
  Chart chart = LineChart({Series("jct", {{-1, 0}, {0, 0}, {3, 0.1}, {40, 0.5}, {700, 0.9}, {50000, 1}})});
  chart.log_x = true;
  const std::string svg = RenderSvgChart(chart);
  EXPECT_EQ(Texts(Group(svg, "x-ticks")), (std::vector<std::string>{"1", "10", "100", "1k", "10k", "100k"}));
  const auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(lines[0].size(), 4u);
  // Decades are evenly spaced: 10 sits at 1/5 of the way from 1 to 100k; 3 at
  // log10(3)/5 of the plot width.
  const Rect plot = PlotArea(svg);
  EXPECT_NEAR(lines[0][0].x, plot.x + plot.width * std::log10(3.0) / 5, 0.01);
}

TEST(SvgChartTest, LogAxisLabelsReachMillionsAndFractions) {
  // 0.05 .. 2e6: decades 0.01 .. 10M are 10 ticks, more than 8, so every second
  // decade is labelled.
  Chart chart = LineChart({Series("a", {{0.05, 0}, {2e6, 1}})});
  chart.log_x = true;
  const std::string svg = RenderSvgChart(chart);
  EXPECT_EQ(Texts(Group(svg, "x-ticks")), (std::vector<std::string>{"0.01", "1", "100", "10k", "1M"}));
}

TEST(SvgChartTest, LogAxisBeyondTeraUsesExponents) {
  // 1 .. 1e30: 31 decades, every fourth labelled; past the T suffix, 1e16 (not
  // 1e+16 or 10000T).
  Chart chart = LineChart({Series("a", {{1, 0}, {1e30, 1}})});
  chart.log_x = true;
  const std::string svg = RenderSvgChart(chart);
  EXPECT_EQ(Texts(Group(svg, "x-ticks")),
            (std::vector<std::string>{"1", "10k", "100M", "1T", "1e16", "1e20", "1e24", "1e28"}));
}

// ---------------------------------------------------------------------------
// Steps, thinning, clipping

TEST(SvgChartTest, StepDrawsHorizontalThenVertical) {
  // Three points become 5: each value holds until the next x, then jumps.
  Chart chart = LineChart({Series("a", {{0, 10}, {4, 30}, {10, 20}})});
  chart.step = true;
  const std::string svg = RenderSvgChart(chart);
  const auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  const std::vector<Point>& p = lines[0];
  ASSERT_EQ(p.size(), 5u);  // 2 × 3 - 1
  EXPECT_EQ(p[1].x, p[2].x);  // (4, 10): horizontal from (0, 10) ...
  EXPECT_EQ(p[1].y, p[0].y);
  EXPECT_EQ(p[3].x, p[4].x);  // (10, 30)
  EXPECT_EQ(p[3].y, p[2].y);
  EXPECT_LT(p[2].y, p[1].y);  // ... then up to 30
}

TEST(SvgChartTest, ThinningBoundsAMillionPointsAndKeepsThePeak) {
  // 1,000,000 points of a wave between 0 and 50 with one spike to 100 at a single
  // point. The y range comes out 0..100, so the spike touches the plot's top edge.
  std::vector<ChartPoint> points;
  points.reserve(1'000'000);
  for (int i = 0; i < 1'000'000; ++i) {
    points.push_back({i / 1000.0, 25 + 25 * std::sin(i / 5000.0)});
  }
  points[654'321].y = 100;
  const std::string svg = RenderSvgChart(LineChart({Series("wave", std::move(points))}));
  const auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  const Rect plot = PlotArea(svg);
  // At most first, min, max and last of each pixel column (plus the two columns
  // just outside the plot).
  EXPECT_LE(lines[0].size(), 4 * (plot.width + 3));
  EXPECT_GT(lines[0].size(), plot.width);  // still about a point per column
  EXPECT_LT(svg.size(), 200'000u);
  const auto top = std::min_element(lines[0].begin(), lines[0].end(),
                                    [](const Point& a, const Point& b) { return a.y < b.y; });
  EXPECT_DOUBLE_EQ(top->y, plot.y);  // the spike survived
  // Points stay in x order.
  EXPECT_TRUE(std::is_sorted(lines[0].begin(), lines[0].end(),
                             [](const Point& a, const Point& b) { return a.x < b.x; }));
}

TEST(SvgChartTest, ThinningStaysBoundedWhenXJumpsAbout) {
  // 200,000 points with x in a scrambled order: runs within one column are
  // short, so each column is reduced as a whole; the size stays bounded and the
  // highest point (y = 100, the range's top) survives.
  std::vector<ChartPoint> points;
  for (int i = 0; i < 200'000; ++i) {
    points.push_back({static_cast<double>((i * 7919L) % 200'000), static_cast<double>(i % 50)});
  }
  points[123'457].y = 100;
  const std::string svg = RenderSvgChart(LineChart({Series("scribble", std::move(points))}));
  const Rect plot = PlotArea(svg);
  const auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LE(lines[0].size(), 4 * (plot.width + 3));
  const auto top = std::min_element(lines[0].begin(), lines[0].end(),
                                    [](const Point& a, const Point& b) { return a.y < b.y; });
  EXPECT_DOUBLE_EQ(top->y, plot.y);
}

TEST(SvgChartTest, ShortSeriesAreNotThinned) {
  // 1000 points on an ~800-pixel plot: fewer than 2 per column, all kept.
  std::vector<ChartPoint> points;
  for (int i = 0; i < 1000; ++i) points.push_back({1.0 * i, 1.0 * (i % 7)});
  const std::string svg = RenderSvgChart(LineChart({Series("a", std::move(points))}));
  EXPECT_EQ(Polylines(svg)[0].size(), 1000u);
}

TEST(SvgChartTest, ExplicitRangeClipsToThePlotArea) {
  // x range 0..10 given while the data runs to 20 and y far beyond its 0..1
  // range: the series is drawn through the clipPath, and its coordinates stay
  // within 2 px of the plot however far out the data lies.
  Chart chart = LineChart({Series("a", {{0, 0.5}, {5, 0.5}, {20, 1e200}, {8, 0.2}, {30, -1e300}})});
  chart.x_min = 0;
  chart.x_max = 10;
  chart.y_min = 0;
  chart.y_max = 1;
  const std::string svg = RenderSvgChart(chart);
  const size_t clip_at = svg.find("<clipPath id=\"");
  ASSERT_NE(clip_at, std::string::npos);
  const std::string id = svg.substr(clip_at + 14, svg.find('"', clip_at + 14) - clip_at - 14);
  EXPECT_NE(svg.find("<g class=\"series\" clip-path=\"url(#" + id + ")\">"), std::string::npos);
  const Rect plot = PlotArea(svg);
  const auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  for (const Point& p : lines[0]) {
    EXPECT_GE(p.x, plot.x - 2);
    EXPECT_LE(p.x, plot.x + plot.width + 2);
    EXPECT_GE(p.y, plot.y - 2);
    EXPECT_LE(p.y, plot.y + plot.height + 2);
  }
  // The visible start is unchanged: (0, 0.5) at the left edge, mid-height.
  EXPECT_DOUBLE_EQ(lines[0][0].x, plot.x);
  EXPECT_DOUBLE_EQ(lines[0][0].y, plot.y + plot.height / 2);
}

TEST(SvgChartTest, ClippedLineReentersAtTheRightPlace) {
  // Data 0..10 in x, the range ends at 5: the line (0,0)-(10,10) leaves at the
  // right edge at y = 5 (half-way up), and (10,10)-(2,2) comes back along the
  // same diagonal, so the re-entry point equals the exit point.
  Chart chart = LineChart({Series("a", {{0, 0}, {10, 10}, {2, 2}})});
  chart.x_min = 0;
  chart.x_max = 5;
  chart.y_min = 0;
  chart.y_max = 10;
  const std::string svg = RenderSvgChart(chart);
  const Rect plot = PlotArea(svg);
  const auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  const double px_per_x = plot.width / 5, px_per_y = plot.height / 10;
  // In pixels: start (0,0); exit/entry at x = 5 + 2 px; end (2,2).
  ASSERT_GE(lines[0].size(), 3u);
  EXPECT_NEAR(lines[0].front().x, plot.x, 0.01);
  EXPECT_NEAR(lines[0].back().x, plot.x + 2 * px_per_x, 0.01);
  EXPECT_NEAR(lines[0].back().y, plot.y + plot.height - 2 * px_per_y, 0.01);
  for (const Point& p : lines[0]) EXPECT_LE(p.x, plot.x + plot.width + 2.005);
}

// ---------------------------------------------------------------------------
// Empty charts, determinism, validity

TEST(SvgChartTest, EmptyChartDrawsAxesAndSaysNoData) {
  // No series at all: axes with ticks on the default 0..1 ranges, "no data", no
  // lines and no legend.
  const std::string svg = RenderSvgChart(Chart{});
  EXPECT_TRUE(svg.starts_with("<svg"));
  EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 0u);
  EXPECT_EQ(Group(svg, "legend"), "");
  EXPECT_FALSE(Texts(Group(svg, "x-ticks")).empty());
  EXPECT_FALSE(Texts(Group(svg, "y-ticks")).empty());
}

TEST(SvgChartTest, SeriesWithoutDrawablePointsCountAsNoData) {
  // Only NaN points: nothing to draw, so "no data", but the legend still names it.
  const std::string svg = RenderSvgChart(
      LineChart({Series("broken", {{std::numeric_limits<double>::quiet_NaN(), 1}}), Series("none", {})}));
  EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
  EXPECT_EQ(Texts(Group(svg, "legend")), (std::vector<std::string>{"broken", "none"}));
}

TEST(SvgChartTest, DataOutsideAnExplicitRangeIsNotNoData) {
  // Points exist but lie outside the given range: an empty plot, not "no data".
  Chart chart = LineChart({Series("a", {{50, 1}, {60, 2}})});
  chart.x_min = 0;
  chart.x_max = 10;
  const std::string svg = RenderSvgChart(chart);
  EXPECT_EQ(svg.find("no data"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 0u);
}

TEST(SvgChartTest, SameChartSameBytes) {
  // Rendering is deterministic, including thinning.
  std::vector<ChartPoint> points;
  for (int i = 0; i < 20'000; ++i) points.push_back({i * 0.37, std::fmod(i * 7.3, 11.0)});
  Chart chart = LineChart({Series("a", points), Series("b", {{0, 1}, {5000, 2}})});
  chart.step = true;
  EXPECT_EQ(RenderSvgChart(chart), RenderSvgChart(chart));
}

// The sample chart a reader can open: allocation as steps, queue length as a line.
Chart SampleChart() {
  Chart chart;
  chart.title = "Fleet allocation & queue <sample>";
  chart.x_label = "time (h)";
  chart.y_label = "GPUs allocated (%)";
  chart.step = true;
  ChartSeries allocation{"allocated (%)", {}}, queue{"queued jobs", {}};
  for (int i = 0; i <= 48; ++i) {
    const double h = i * 0.5;
    allocation.points.push_back({h, 40 + 35 * std::sin(h / 3.0) * std::sin(h / 3.0) + (i % 5) * 3});
    queue.points.push_back({h, 10.0 + (i * 37 % 23)});
  }
  chart.series = {allocation, queue, ChartSeries{"preempted", {{2, 5}, {9, 12}, {15, 3}, {23, 8}}}};
  return chart;
}

TEST(SvgChartTest, WritesAWellFormedSampleFile) {
  // Writes the sample to $TMPDIR (normally /tmp/svg_sample.svg) and, when xmllint
  // is installed, checks it is well-formed XML.
  const std::string path = ::testing::TempDir() + "svg_sample.svg";
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << RenderSvgChart(SampleChart());
    ASSERT_TRUE(file.good());
  }
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0) GTEST_SKIP() << "xmllint not installed";
  EXPECT_EQ(std::system(("xmllint --noout '" + path + "'").c_str()), 0);
  // The same for hostile input: escaped text, invalid bytes, a clipped x range.
  Chart hostile = SampleChart();
  hostile.title = std::string("<&>\"'\xFF\x01") + '\0';
  hostile.series[0].name = "]]> <!-- &amp;";
  hostile.x_min = 3;
  hostile.x_max = 7;
  const std::string hostile_path = ::testing::TempDir() + "svg_chart_hostile.svg";
  {
    std::ofstream file(hostile_path, std::ios::binary | std::ios::trunc);
    file << RenderSvgChart(hostile);
  }
  EXPECT_EQ(std::system(("xmllint --noout '" + hostile_path + "'").c_str()), 0);
  std::remove(hostile_path.c_str());
}

}  // namespace
}  // namespace tessera
