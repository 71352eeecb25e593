// Aligned text tables as kubectl prints them: upper-case headers, each column as
// wide as its widest cell plus 3 spaces, the last column unpadded, no trailing
// blanks. Widths count UTF-8 characters, not bytes.
//
//   NAME                COHORT   PENDING WORKLOADS   AGE
//   gpu-cluster-queue            0                   5m
//
// For `get -w`, rows printed later reuse the widths of the first table
// (FormatRow), so that columns stay put while events arrive.
//
// Thread-safety: a value type; not synchronised.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tessera {

class Table {
 public:
  // `padding`: spaces between columns (kubectl: 3 for get, 2 inside describe).
  explicit Table(std::vector<std::string> headers, size_t padding = 3)
      : headers_(std::move(headers)), padding_(padding) {}

  // REQUIRES: cells.size() == headers().size().
  void AddRow(std::vector<std::string> cells);

  // The header line, then every row.
  void Print(std::ostream& out) const;
  // Column widths (without padding) over the header and every row.
  std::vector<size_t> Widths() const;

  const std::vector<std::string>& headers() const { return headers_; }
  size_t rows() const { return rows_.size(); }
  size_t padding() const { return padding_; }

 private:
  std::vector<std::string> headers_;
  size_t padding_ = 3;
  std::vector<std::vector<std::string>> rows_;
};

// One line (with '\n'): each cell padded to `widths[i]` + `padding`, the last
// unpadded. Cells wider than their column push the rest right, as kubectl's
// watch does.
std::string FormatRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths, size_t padding = 3);

// Characters in a UTF-8 string.
size_t DisplayWidth(const std::string& text);

}  // namespace tessera
