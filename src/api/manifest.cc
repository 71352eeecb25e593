#include "api/manifest.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

// yaml-cpp's headers are third-party: included as system headers (CMake) so that
// our warning flags do not apply to them.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

namespace tessera {
namespace {

using nlohmann::json;

// A YAML text expands to at most this many JSON values, of which at most
// kMaxAliasValues come from aliases. Plain input this size is far beyond any
// manifest; the limits are there for alias bombs ("billion laughs"), where a few
// lines of anchors expand exponentially.
constexpr size_t kMaxYamlValues = 2'000'000;
constexpr size_t kMaxAliasValues = 250'000;

// Lists nest at most this deep (a List of Lists of ...).
constexpr int kMaxListDepth = 8;

Status At(int line, int column, std::string_view what, std::string_view msg) {
  return Status::InvalidArgument(fmt::format("invalid {} at line {}, column {}: {}", what, line,
                                             column, msg));
}

// ---------------------------------------------------------------------------
// UTF-8: both formats must be valid UTF-8 (nlohmann refuses to serialise
// anything else later, far from the user's input).

// Offset of the first byte that is not part of a well-formed UTF-8 sequence
// (no overlongs, no surrogates, nothing above U+10FFFF), or nullopt.
std::optional<size_t> FirstInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;   // overlong
      if (c == 0xED) hi = 0x9F;   // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;   // overlong
      if (c == 0xF4) hi = 0x8F;   // above U+10FFFF
    } else {
      return i;
    }
    for (int k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      auto b = static_cast<unsigned char>(s[i + k]);
      unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (b < l || b > h) return i;
    }
    i += n + 1;
  }
  return std::nullopt;
}

std::pair<int, int> LineColumnOf(std::string_view s, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < s.size(); ++i) {
    if (s[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

Status CheckUtf8(std::string_view text, std::string_view what) {
  if (auto bad = FirstInvalidUtf8(text)) {
    auto [line, column] = LineColumnOf(text, *bad);
    return At(line, column, what, "not valid UTF-8 text (save the file as UTF-8)");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).

bool IsDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 8    ? (c >= '0' && c <= '7')
              : base == 10 ? (c >= '0' && c <= '9')
                           : std::isxdigit(static_cast<unsigned char>(c)) != 0;
    if (!ok) return false;
  }
  return true;
}

std::string_view StripSign(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return s;
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool IsCoreFloat(std::string_view s) {
  s = StripSign(s);
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

bool IsCoreInfOrNan(std::string_view s) {
  std::string_view u = StripSign(s);
  return u == ".inf" || u == ".Inf" || u == ".INF" || s == ".nan" || s == ".NaN" || s == ".NAN";
}

std::optional<bool> CoreBool(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

bool IsCoreNull(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// Integers beyond 64 bits in decimal become a JSON float (as a JSON parser would
// read them); beyond 64 bits in hex or octal they are an error.
std::optional<json> CoreInt(std::string_view s, std::string* error) {
  auto parse_unsigned = [&](std::string_view digits, int base) -> std::optional<json> {
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
    if (ec != std::errc() || p != digits.data() + digits.size()) {
      *error = fmt::format("integer {} does not fit in 64 bits", s);
      return std::nullopt;
    }
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return json(static_cast<int64_t>(u));
    }
    return json(u);
  };
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x' && IsDigits(s.substr(2), 16)) {
    return parse_unsigned(s.substr(2), 16);
  }
  if (s.size() > 2 && s[0] == '0' && s[1] == 'o' && IsDigits(s.substr(2), 8)) {
    return parse_unsigned(s.substr(2), 8);
  }
  std::string_view digits = StripSign(s);
  if (!IsDigits(digits, 10)) return std::nullopt;
  bool negative = s[0] == '-';
  if (negative) {
    int64_t v = 0;
    std::string_view signed_text = s;  // from_chars takes '-' but not '+'
    auto [p, ec] = std::from_chars(signed_text.data(), signed_text.data() + signed_text.size(), v);
    if (ec == std::errc() && p == signed_text.data() + signed_text.size()) return json(v);
  } else {
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u);
    if (ec == std::errc() && p == digits.data() + digits.size()) {
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return json(static_cast<int64_t>(u));
      }
      return json(u);
    }
  }
  double d = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), d);
  return json(negative ? -d : d);
}

std::optional<double> CoreFloat(std::string_view s) {
  if (!IsCoreFloat(s)) return std::nullopt;
  std::string_view body = s[0] == '+' ? s.substr(1) : s;
  double d = 0;
  auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), d);
  if (p != body.data() + body.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) return std::nullopt;
  return d;
}

// Thrown inside the event handler to stop the parse; caught in ParseYamlDocuments.
struct YamlStop {
  YAML::Mark mark;
  std::string message;
};

[[noreturn]] void Stop(const YAML::Mark& mark, std::string message) {
  throw YamlStop{mark, std::move(message)};
}

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

json ResolveScalar(const YAML::Mark& mark, const std::string& tag, const std::string& value) {
  if (tag == "!") return json(value);  // quoted or block scalar: always a string
  std::string error;
  if (tag == "?") {
    if (IsCoreNull(value)) return json(nullptr);
    if (auto b = CoreBool(value)) return json(*b);
    if (auto i = CoreInt(value, &error)) return *i;
    if (!error.empty()) Stop(mark, error);
    if (auto d = CoreFloat(value)) return json(*d);
    if (IsCoreInfOrNan(value)) {
      Stop(mark, fmt::format("{} has no JSON form; quote it to make it a string", value));
    }
    return json(value);
  }
  if (tag.starts_with(kTagPrefix)) {
    std::string_view t = std::string_view(tag).substr(kTagPrefix.size());
    if (t == "str" || t == "binary" || t == "timestamp") return json(value);
    if (t == "null") {
      if (IsCoreNull(value)) return json(nullptr);
      Stop(mark, fmt::format("!!null with the value \"{}\"", value));
    }
    if (t == "bool") {
      if (auto b = CoreBool(value)) return json(*b);
      Stop(mark, fmt::format("!!bool \"{}\" is not true or false", value));
    }
    if (t == "int") {
      if (auto i = CoreInt(value, &error)) return *i;
      Stop(mark, error.empty() ? fmt::format("!!int \"{}\" is not an integer", value) : error);
    }
    if (t == "float") {
      if (auto i = CoreInt(value, &error)) return json(i->get<double>());
      if (auto d = CoreFloat(value)) return json(*d);
      Stop(mark, fmt::format("!!float \"{}\" is not a number", value));
    }
  }
  Stop(mark, fmt::format("unsupported tag \"{}\"", tag));
}

// Builds one JSON value per YAML document from yaml-cpp's parse events.
class JsonBuilder : public YAML::EventHandler {
 public:
  struct Document {
    json value;
    int line = 0;                 // 1-based line of the document's root node
    std::vector<int> item_lines;  // for a root mapping: the lines of its "items" entries
  };

  std::vector<Document>& documents() { return documents_; }

  void OnDocumentStart(const YAML::Mark&) override {
    stack_.clear();
    anchors_.clear();
    current_ = Document{};
    has_root_ = false;
  }

  void OnDocumentEnd() override {
    if (has_root_ && !current_.value.is_null()) documents_.push_back(std::move(current_));
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (ExpectingKey()) Stop(mark, "a mapping key must not be empty or null");
    NoteStart(mark);
    Emit(json(nullptr), anchor, 1);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (ExpectingKey()) Stop(mark, "an alias cannot be a mapping key");
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) Stop(mark, "an alias refers to a node that contains it");
    // Checked before copying, so that an alias bomb stops early.
    alias_values_ += it->second.second;
    if (alias_values_ > kMaxAliasValues) {
      Stop(mark, fmt::format("aliases expand to more than {} values (aliases of aliases?)",
                             kMaxAliasValues));
    }
    NoteStart(mark);
    Emit(it->second.first, 0, it->second.second);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (ExpectingKey()) {
      Frame& f = stack_.back();
      if (f.value.contains(value)) Stop(mark, fmt::format("duplicate key \"{}\"", value));
      f.key = value;
      f.expecting_key = false;
      return;
    }
    NoteStart(mark);
    Emit(ResolveScalar(mark, tag, value), anchor, 1);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    CheckCollectionTag(mark, tag, "seq");
    if (ExpectingKey()) Stop(mark, "a list cannot be a mapping key");
    NoteStart(mark);
    Push(json::array(), mark, anchor);
  }
  void OnSequenceEnd() override { Pop(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    CheckCollectionTag(mark, tag, "map");
    if (ExpectingKey()) Stop(mark, "a mapping cannot be a mapping key");
    NoteStart(mark);
    Push(json::object(), mark, anchor);
  }
  void OnMapEnd() override { Pop(); }

 private:
  struct Frame {
    json value;  // object or array under construction
    bool is_map = false;
    bool expecting_key = true;
    std::string key;
    YAML::Mark mark;
    YAML::anchor_t anchor = 0;
    size_t values_at_start = 0;
  };

  static void CheckCollectionTag(const YAML::Mark& mark, const std::string& tag,
                                 std::string_view expected) {
    if (tag == "?" || tag == "!" || tag.empty()) return;
    if (tag.starts_with(kTagPrefix) && std::string_view(tag).substr(kTagPrefix.size()) == expected) {
      return;
    }
    Stop(mark, fmt::format("unsupported tag \"{}\"", tag));
  }

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().is_map && stack_.back().expecting_key;
  }

  // Records where each entry of the root mapping's "items" list starts (List
  // expansion reports item positions with it).
  void NoteStart(const YAML::Mark& mark) {
    if (!has_root_ && stack_.empty()) current_.line = mark.line + 1;
    if (stack_.size() == 2 && stack_[0].is_map && stack_[0].key == "items" && !stack_[1].is_map) {
      current_.item_lines.push_back(mark.line + 1);
    }
  }

  void Push(json value, const YAML::Mark& mark, YAML::anchor_t anchor) {
    Frame f;
    f.is_map = value.is_object();
    f.value = std::move(value);
    f.mark = mark;
    f.anchor = anchor;
    f.values_at_start = values_;
    stack_.push_back(std::move(f));
  }

  void Pop() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    size_t size = values_ - f.values_at_start + 1;
    values_ = f.values_at_start;  // Emit counts the whole collection again
    Emit(std::move(f.value), f.anchor, size, &f.mark);
  }

  // Places a finished value in its parent (or as the root) and remembers it
  // under its anchor. `size` is the number of JSON values it holds.
  void Emit(json value, YAML::anchor_t anchor, size_t size, const YAML::Mark* mark = nullptr) {
    if (values_ + size > kMaxYamlValues) {
      Stop(mark ? *mark : YAML::Mark(),
           fmt::format("the input expands to more than {} values", kMaxYamlValues));
    }
    values_ += size;
    if (anchor != 0) anchors_[anchor] = {value, size};
    if (stack_.empty()) {
      current_.value = std::move(value);
      has_root_ = true;
      return;
    }
    Frame& parent = stack_.back();
    if (parent.is_map) {
      parent.value[parent.key] = std::move(value);
      parent.expecting_key = true;
    } else {
      parent.value.push_back(std::move(value));
    }
  }

  std::vector<Document> documents_;
  Document current_;
  bool has_root_ = false;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::pair<json, size_t>> anchors_;
  size_t values_ = 0;        // JSON values built so far in this parse
  size_t alias_values_ = 0;  // of which copied from aliases
};

Result<std::vector<JsonBuilder::Document>> ParseYamlDocuments(std::string_view text) {
  RETURN_IF_ERROR(CheckUtf8(text, "YAML"));
  JsonBuilder builder;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const YamlStop& e) {
    return Err(At(e.mark.line + 1, e.mark.column + 1, "YAML", e.message));
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return Err(Status::InvalidArgument("invalid YAML: " + e.msg));
    return Err(At(e.mark.line + 1, e.mark.column + 1, "YAML", e.msg));
  } catch (const std::exception& e) {
    return Err(Status::InvalidArgument(std::string("invalid YAML: ") + e.what()));
  }
  return std::move(builder.documents());
}

// ---------------------------------------------------------------------------
// JSON.

// nlohmann's message, "[json.exception.parse_error.101] parse error at line 1,
// column 5: syntax error ...", as "invalid JSON at line 1, column 5: syntax error ...".
Status JsonParseError(const std::string& what) {
  std::string_view msg = what;
  if (size_t close = msg.find("] "); msg.starts_with("[json.exception") && close != msg.npos) {
    msg.remove_prefix(close + 2);
  }
  constexpr std::string_view kAt = "parse error at ";
  if (msg.starts_with(kAt)) {
    return Status::InvalidArgument(fmt::format("invalid JSON at {}", msg.substr(kAt.size())));
  }
  if (msg.starts_with("parse error: ")) msg.remove_prefix(std::string_view("parse error: ").size());
  return Status::InvalidArgument(fmt::format("invalid JSON: {}", msg));
}

// Builds the document from nlohmann's SAX events, refusing a duplicate key
// (as Kubernetes' strict decoding does) where nlohmann's own DOM parser keeps
// the last; a lookup in the object being built finds it, with no per-key copy.
class StrictJsonBuilder {
 public:
  bool null() { return Place(json()); }
  bool boolean(bool v) { return Place(json(v)); }
  bool number_integer(json::number_integer_t v) { return Place(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Place(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return Place(json(v)); }
  bool string(json::string_t& v) { return Place(json(std::move(v))); }
  bool binary(json::binary_t& v) { return Place(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return Open(json::object()); }
  bool start_array(std::size_t) { return Open(json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(json::string_t& k) {
    json& object = *open_.back();
    if (object.contains(k)) {
      duplicate_ = k;
      return false;
    }
    slot_ = &object[std::move(k)];
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = e.what();
    return false;
  }

  json& root() { return root_; }
  const std::optional<std::string>& duplicate() const { return duplicate_; }
  const std::optional<std::string>& error() const { return error_; }

 private:
  // Puts `v` where the parser is (the root, the last key's slot, or the end of
  // the open array) and returns where it went. A pointer into an array stays
  // valid while it is open: nothing is added to the array until it closes.
  json* Put(json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& container = *open_.back();
    if (container.is_array()) {
      container.push_back(std::move(v));
      return &container.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool Place(json&& v) {
    Put(std::move(v));
    return true;
  }
  bool Open(json&& v) {
    open_.push_back(Put(std::move(v)));
    return true;
  }
  bool Close() {
    open_.pop_back();
    return true;
  }

  json root_;
  std::vector<json*> open_;
  json* slot_ = nullptr;
  std::optional<std::string> duplicate_;
  std::optional<std::string> error_;
};

Result<json> ParseJsonText(std::string_view text) {
  StrictJsonBuilder builder;
  try {
    if (json::sax_parse(text.begin(), text.end(), &builder)) return std::move(builder.root());
  } catch (const std::exception& e) {
    return Err(Status::InvalidArgument(std::string("invalid JSON: ") + e.what()));
  }
  if (builder.duplicate()) {
    return Err(Status::InvalidArgument(fmt::format("invalid JSON: duplicate key \"{}\"", *builder.duplicate())));
  }
  return Err(JsonParseError(builder.error().value_or("parse error: the document ended early")));
}

bool LooksLikeJson(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// ---------------------------------------------------------------------------
// Documents and Lists.

std::string_view JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::array: return "a list";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "a number";
    case json::value_t::null: return "null";
    default: return "an object";
  }
}

std::string WhereText(int ordinal, int line) {
  if (line > 0) return fmt::format("document {} (line {})", ordinal, line);
  return fmt::format("document {}", ordinal);
}

bool IsList(const json& v) {
  if (!v.is_object()) return false;
  auto kind = v.find("kind");
  return kind != v.end() && kind->is_string() && *kind == "List";
}

// Appends `value` (an object, or a List of them) to `out`. `ordinal`/`line` name
// the input document in messages; `item_lines` are the lines of a List's items.
Status AddDocument(json value, int ordinal, int line, const std::vector<int>& item_lines,
                   int depth, std::vector<ManifestDocument>& out) {
  if (!value.is_object()) {
    return Status::InvalidArgument(fmt::format(
        "{}: expected an object with apiVersion and kind, got {}", WhereText(ordinal, line),
        JsonTypeName(value)));
  }
  if (!IsList(value)) {
    out.push_back(ManifestDocument{std::move(value), static_cast<int>(out.size()), line});
    return Status::Ok();
  }
  if (depth >= kMaxListDepth) {
    return Status::InvalidArgument(fmt::format("{}: Lists nested more than {} deep",
                                               WhereText(ordinal, line), kMaxListDepth));
  }
  auto items = value.find("items");
  if (items == value.end() || items->is_null()) return Status::Ok();  // an empty List
  if (!items->is_array()) {
    return Status::InvalidArgument(fmt::format("{}: items: expected a list, got {}",
                                               WhereText(ordinal, line), JsonTypeName(*items)));
  }
  for (size_t i = 0; i < items->size(); ++i) {
    json& item = (*items)[i];
    int item_line = i < item_lines.size() ? item_lines[i] : line;
    if (!item.is_object()) {
      return Status::InvalidArgument(fmt::format(
          "{}: items[{}]: expected an object with apiVersion and kind, got {}",
          WhereText(ordinal, line), i, JsonTypeName(item)));
    }
    RETURN_IF_ERROR(AddDocument(std::move(item), ordinal, item_line, {}, depth + 1, out));
  }
  return Status::Ok();
}

}  // namespace

std::string ManifestDocument::Where() const { return WhereText(index + 1, line); }

Result<std::vector<json>> YamlToJson(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<JsonBuilder::Document> docs, ParseYamlDocuments(text));
  std::vector<json> out;
  out.reserve(docs.size());
  for (auto& d : docs) out.push_back(std::move(d.value));
  return out;
}

Result<std::vector<ManifestDocument>> ParseManifests(std::string_view text, ManifestFormat format) {
  if (format == ManifestFormat::kAuto) {
    format = LooksLikeJson(text) ? ManifestFormat::kJson : ManifestFormat::kYaml;
  }
  std::vector<ManifestDocument> out;
  if (format == ManifestFormat::kJson) {
    ASSIGN_OR_RETURN(json value, ParseJsonText(text));
    RETURN_IF_ERROR(AddDocument(std::move(value), 1, 1, {}, 0, out));
    return out;
  }
  ASSIGN_OR_RETURN(std::vector<JsonBuilder::Document> docs, ParseYamlDocuments(text));
  int ordinal = 0;
  for (auto& d : docs) {
    ++ordinal;
    RETURN_IF_ERROR(AddDocument(std::move(d.value), ordinal, d.line, d.item_lines, 0, out));
  }
  return out;
}

Result<json> ParseSingleObject(std::string_view text, ManifestFormat format) {
  if (format == ManifestFormat::kAuto) {
    format = LooksLikeJson(text) ? ManifestFormat::kJson : ManifestFormat::kYaml;
  }
  json value;
  int line = 1;
  if (format == ManifestFormat::kJson) {
    ASSIGN_OR_RETURN(value, ParseJsonText(text));
  } else {
    ASSIGN_OR_RETURN(std::vector<JsonBuilder::Document> docs, ParseYamlDocuments(text));
    if (docs.size() > 1) {
      return Err(Status::InvalidArgument(fmt::format(
          "expected one object, found {} YAML documents (send them one at a time)", docs.size())));
    }
    if (docs.empty()) return Err(Status::InvalidArgument("the body is empty; expected an object"));
    value = std::move(docs[0].value);
    line = docs[0].line;
  }
  if (!value.is_object()) {
    return Err(Status::InvalidArgument(fmt::format(
        "{}: expected an object with apiVersion and kind, got {}", WhereText(1, line),
        JsonTypeName(value))));
  }
  return value;
}

}  // namespace tessera
