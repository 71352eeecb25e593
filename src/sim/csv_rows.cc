#include "sim/csv_rows.h"

#include <csv.h>

#include <array>

#include <fmt/format.h>

namespace tessera {

std::optional<size_t> CsvHeader::Find(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  return std::nullopt;
}

namespace {

struct ParseState {
  const std::function<Status(const CsvHeader&)>* header;
  const std::function<Status(int64_t, const std::vector<std::string>&)>* row;
  std::vector<std::string> fields;
  bool have_header = false;
  int64_t line = 0;  // lines consumed, counting the one being parsed
  Status status;
};

void OnField(void* data, size_t len, void* state_ptr) {
  auto* st = static_cast<ParseState*>(state_ptr);
  st->fields.emplace_back(static_cast<const char*>(data), len);
}

void OnRow(int, void* state_ptr) {
  auto* st = static_cast<ParseState*>(state_ptr);
  ++st->line;
  std::vector<std::string> fields;
  fields.swap(st->fields);
  if (!st->status.ok()) return;
  if (fields.size() == 1 && fields[0].empty()) return;  // a line with nothing on it
  if (!st->have_header) {
    st->have_header = true;
    st->status = (*st->header)(CsvHeader(std::move(fields)));
  } else {
    st->status = (*st->row)(st->line, fields);
  }
}

}  // namespace

Status ForEachCsvRow(std::istream& in, const std::function<Status(const CsvHeader&)>& header,
                     const std::function<Status(int64_t line, const std::vector<std::string>& fields)>& row) {
  csv_parser parser;
  if (csv_init(&parser, CSV_APPEND_NULL) != 0) return Status::Internal("cannot initialise the CSV parser");
  ParseState st{&header, &row, {}, false, 0, Status::Ok()};
  std::array<char, 1 << 16> buffer;
  while (st.status.ok() && in) {
    in.read(buffer.data(), buffer.size());
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    if (csv_parse(&parser, buffer.data(), n, OnField, OnRow, &st) != n) {
      Status error = Status::InvalidArgument(
          fmt::format("line {}: {}", st.line + 1, csv_strerror(csv_error(&parser))));
      csv_free(&parser);
      return error;
    }
  }
  if (st.status.ok()) csv_fini(&parser, OnField, OnRow, &st);
  csv_free(&parser);
  return st.status;
}

}  // namespace tessera
