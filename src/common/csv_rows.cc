#include "common/csv_rows.h"

#include <csv.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace tessera {
namespace {

// libcsv's callbacks gather a row's fields in buffers reused from row to row.
struct Reader {
  const std::function<Status(CsvFields)>* header;
  const std::function<Status(int64_t, CsvFields)>* row;
  int64_t line = 1;      // the physical line being fed to the parser
  int64_t row_line = 1;  // the line the current row's first field ends on
  bool header_seen = false;
  std::string buffer;
  std::vector<std::pair<size_t, size_t>> spans;
  std::vector<std::string_view> fields;
  Status status;

  static void OnField(void* data, size_t len, void* self_ptr) {
    auto* self = static_cast<Reader*>(self_ptr);
    if (self->spans.empty()) self->row_line = self->line;
    const size_t begin = self->buffer.size();
    if (len > 0) self->buffer.append(static_cast<const char*>(data), len);
    self->spans.emplace_back(begin, len);
  }

  static void OnRow(int /*terminator*/, void* self_ptr) {
    auto* self = static_cast<Reader*>(self_ptr);
    if (self->status.ok()) self->HandleRow();
    self->buffer.clear();
    self->spans.clear();
  }

  void HandleRow() {
    fields.clear();
    for (auto [begin, len] : spans) fields.push_back(TrimCsvField(std::string_view(buffer).substr(begin, len)));
    if (fields.size() == 1 && fields[0].empty()) return;  // a blank line, not a row
    if (!header_seen) {
      header_seen = true;
      status = (*header)(fields);
    } else {
      status = (*row)(row_line, fields);
    }
  }
};

}  // namespace

std::string_view TrimCsvField(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<size_t> FindCsvColumn(CsvFields header, std::string_view name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  return std::nullopt;
}

Status ForEachCsvRow(std::string_view text, const std::function<Status(CsvFields)>& header,
                     const std::function<Status(int64_t, CsvFields)>& row) {
  csv_parser parser;
  if (csv_init(&parser, 0) != 0) return Status::Internal("cannot initialise the CSV parser");
  Reader r{&header, &row};
  // One physical line at a time, so that the reader knows the line being parsed.
  while (!text.empty() && r.status.ok()) {
    const size_t newline = text.find('\n');
    const size_t len = newline == std::string_view::npos ? text.size() : newline + 1;
    if (csv_parse(&parser, text.data(), len, &Reader::OnField, &Reader::OnRow, &r) != len) {
      r.status = Status::InvalidArgument(fmt::format("line {}: CSV parser: {}", r.line, csv_strerror(csv_error(&parser))));
      break;
    }
    if (newline != std::string_view::npos) ++r.line;
    text.remove_prefix(len);
  }
  if (r.status.ok()) csv_fini(&parser, &Reader::OnField, &Reader::OnRow, &r);
  csv_free(&parser);
  return r.status;
}

Status ForEachCsvRow(std::istream& in, const std::function<Status(CsvFields)>& header,
                     const std::function<Status(int64_t, CsvFields)>& row) {
  std::ostringstream text;
  text << in.rdbuf();
  return ForEachCsvRow(std::string_view(text.view()), header, row);
}

}  // namespace tessera
