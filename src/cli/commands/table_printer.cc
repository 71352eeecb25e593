#include "cli/commands/table_printer.h"

#include <algorithm>

#include "common/check.h"

namespace tessera {

size_t DisplayWidth(const std::string& text) {
  // Counts every byte that does not continue a multi-byte sequence (10xxxxxx).
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void Table::AddRow(std::vector<std::string> cells) {
  TESSERA_CHECK(cells.size() == headers_.size());
  rows_.push_back(std::move(cells));
}

std::vector<size_t> Table::Widths() const {
  std::vector<size_t> widths(headers_.size(), 0);
  for (size_t i = 0; i < headers_.size(); ++i) widths[i] = DisplayWidth(headers_[i]);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  return widths;
}

void Table::Print(std::ostream& out) const {
  const std::vector<size_t> widths = Widths();
  out << FormatRow(headers_, widths, padding_);
  for (const auto& row : rows_) out << FormatRow(row, widths, padding_);
}

std::string FormatRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths, size_t padding) {
  std::string line;
  size_t column_end = 0;  // where the current column ends, padding included
  for (size_t i = 0; i < cells.size(); ++i) {
    const size_t width = i < widths.size() ? widths[i] : 0;
    line += cells[i];
    column_end += width + padding;
    if (i + 1 == cells.size()) break;
    const size_t used = DisplayWidth(line);
    // A cell wider than its column still gets the padding before the next one.
    const size_t target = std::max(column_end, used + padding);
    line.append(target - used, ' ');
    column_end = target;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  line += '\n';
  return line;
}

}  // namespace tessera
