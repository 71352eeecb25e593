// SvgChart: line and step charts as standalone SVG files, readable in any browser
// with no other tool (the simulator's plots: allocation over time, queue length,
// JCT CDF). Plot coordinates are doubles: this is drawing, not capacity.
#pragma once

#include <string>
#include <vector>

namespace tessera {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct ChartSeries {
  std::string name;                // legend entry
  std::vector<ChartPoint> points;  // drawn in order; need not be evenly spaced
                                   // (NaN/inf points are skipped)
};

struct Chart {
  std::string title;
  std::string x_label;  // "time (h)"
  std::string y_label;  // "GPUs allocated (%)"
  std::vector<ChartSeries> series;
  bool step = false;    // draw as a step function (value holds until the next point)
  bool log_x = false;   // logarithmic x axis (JCT CDFs); points with x <= 0 are skipped
  // Axis ranges; when min == max they are taken from the data (y starts at 0
  // unless the data is negative).
  // Data ranges always include 0 on y (all-negative data runs up to 0) and are
  // widened to whole tick steps (whole decades on a log axis); a single x value
  // is padded. An explicit range is used as given (swapped if min > max; on a
  // log axis it must be > 0, else it is ignored) and lines leaving it are clipped.
  double x_min = 0, x_max = 0;
  double y_min = 0, y_max = 0;
  int width = 900, height = 500;  // pixels; at least 300 x 200 is drawn
};

// A complete SVG document: axes with tick labels at round values, the title, axis
// labels, one coloured polyline per series and a legend. Text is XML-escaped.
// Series with thousands of points are thinned to about one point per pixel
// column (keeping each column's min and max), so files stay small.
// An empty chart (no series or no points) still renders axes and says "no data".
// The legend lists every series (empty ones too), coloured by its index in a
// fixed colour-blind-safe palette. Deterministic: the same chart gives the same
// bytes. The document has no XML declaration and ends with "</svg>\n".
std::string RenderSvgChart(const Chart& chart);

}  // namespace tessera
