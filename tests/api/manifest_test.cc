#include "api/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The single JSON value of a one-document YAML text.
json Yaml(std::string_view text) {
  auto docs = YamlToJson(text);
  EXPECT_TRUE(docs.has_value()) << docs.error().ToString();
  if (!docs || docs->size() != 1) {
    ADD_FAILURE() << "expected one document";
    return json();
  }
  return (*docs)[0];
}

// The error message of a parse that must fail.
std::string ManifestError(std::string_view text, ManifestFormat format = ManifestFormat::kAuto) {
  auto docs = ParseManifests(text, format);
  EXPECT_FALSE(docs.has_value()) << "parsed: " << text;
  if (docs) return "";
  EXPECT_EQ(docs.error().code(), StatusCode::kInvalidArgument);
  return docs.error().message();
}

// ============================================================================
// YAML 1.2 core schema: how plain and quoted scalars are typed.

// A quoted "8" stays the string "8"; a plain 8 is the integer 8.
TEST(YamlScalarTest, QuotedNumberStaysString) {
  json v = Yaml("quoted: \"8\"\nsingle: '8'\nplain: 8\n");
  EXPECT_EQ(v["quoted"], json("8"));
  EXPECT_EQ(v["single"], json("8"));
  EXPECT_EQ(v["plain"], json(8));
  EXPECT_TRUE(v["plain"].is_number_integer());
}

// true/false in the three spellings of the core schema are booleans; YAML 1.1's
// yes/no/on/off are plain strings in 1.2.
TEST(YamlScalarTest, BooleansAreCoreSchemaOnly) {
  json v = Yaml("a: true\nb: False\nc: TRUE\nd: yes\ne: off\nf: 'true'\n");
  EXPECT_EQ(v["a"], json(true));
  EXPECT_EQ(v["b"], json(false));
  EXPECT_EQ(v["c"], json(true));
  EXPECT_EQ(v["d"], json("yes"));
  EXPECT_EQ(v["e"], json("off"));
  EXPECT_EQ(v["f"], json("true"));
}

// null, Null, NULL, ~ and an empty value are null; quoted "null" is a string.
TEST(YamlScalarTest, NullSpellings) {
  json v = Yaml("a: null\nb: ~\nc:\nd: NULL\ne: \"null\"\n");
  EXPECT_TRUE(v["a"].is_null());
  EXPECT_TRUE(v["b"].is_null());
  EXPECT_TRUE(v["c"].is_null());
  EXPECT_TRUE(v["d"].is_null());
  EXPECT_EQ(v["e"], json("null"));
}

// 0x and 0o prefixes are integers (0x10 = 16, 0o17 = 15); signs and leading
// zeros are decimal (YAML 1.2 has no 010 octal).
TEST(YamlScalarTest, HexOctalAndDecimalIntegers) {
  json v = Yaml("hex: 0x10\noct: 0o17\nneg: -42\nplus: +7\nzero: 010\n");
  EXPECT_EQ(v["hex"], json(16));
  EXPECT_EQ(v["oct"], json(15));
  EXPECT_EQ(v["neg"], json(-42));
  EXPECT_EQ(v["plus"], json(7));
  EXPECT_EQ(v["zero"], json(10));
}

// 1e3, 1.5 and .5 are floats; "1e3" quoted is a string; 0x1G is not a number.
TEST(YamlScalarTest, FloatsAndLookalikes) {
  json v = Yaml("exp: 1e3\ndec: 1.5\nlead: .5\nquoted: \"1e3\"\nnot: 0x1G\nver: 1.2.3\n");
  EXPECT_TRUE(v["exp"].is_number_float());
  EXPECT_EQ(v["exp"].get<double>(), 1000.0);
  EXPECT_EQ(v["dec"].get<double>(), 1.5);
  EXPECT_EQ(v["lead"].get<double>(), 0.5);
  EXPECT_EQ(v["quoted"], json("1e3"));
  EXPECT_EQ(v["not"], json("0x1G"));
  EXPECT_EQ(v["ver"], json("1.2.3"));
}

// Quantities that are not numbers stay strings: 256Gi, 500m.
TEST(YamlScalarTest, QuantitySuffixesAreStrings) {
  json v = Yaml("memory: 256Gi\ncpu: 500m\n");
  EXPECT_EQ(v["memory"], json("256Gi"));
  EXPECT_EQ(v["cpu"], json("500m"));
}

// Block scalars are strings even when their text looks like a number.
TEST(YamlScalarTest, BlockScalarsAreStrings) {
  json v = Yaml("lit: |\n  8\nfold: >\n  true\n");
  EXPECT_EQ(v["lit"], json("8\n"));
  EXPECT_EQ(v["fold"], json("true\n"));
}

// Explicit tags win over the plain-scalar rules.
TEST(YamlScalarTest, ExplicitTags) {
  json v = Yaml("s: !!str 8\ni: !!int \"42\"\nf: !!float 2\nb: !!bool \"true\"\n");
  EXPECT_EQ(v["s"], json("8"));
  EXPECT_EQ(v["i"], json(42));
  EXPECT_TRUE(v["f"].is_number_float());
  EXPECT_EQ(v["b"], json(true));
}

// Mapping keys are always strings, whatever their plain-scalar type.
TEST(YamlScalarTest, KeysAreStrings) {
  json v = Yaml("8: a\ntrue: b\n");
  EXPECT_EQ(v["8"], json("a"));
  EXPECT_EQ(v["true"], json("b"));
}

// .inf and .nan have no JSON form: refused with their position.
TEST(YamlScalarTest, InfinityIsRefused) {
  std::string msg = ManifestError("apiVersion: v1\nkind: Pod\nx: .inf\n");
  EXPECT_THAT(msg, HasSubstr("line 3, column 4"));
  EXPECT_THAT(msg, HasSubstr(".inf"));
}

// Integers beyond 64 bits in hex cannot be represented.
TEST(YamlScalarTest, HugeHexIntegerIsRefused) {
  EXPECT_THAT(ManifestError("x: 0x1ffffffffffffffffff\n"), HasSubstr("does not fit in 64 bits"));
}

// Anchors and aliases expand to copies.
TEST(YamlScalarTest, AliasesExpand) {
  json v = Yaml("base: &res {cpu: \"2\"}\ncopy: *res\n");
  EXPECT_EQ(v["copy"], v["base"]);
  EXPECT_EQ(v["copy"]["cpu"], json("2"));
}

// An alias bomb (each level doubling the last) is stopped by the size budget.
TEST(YamlScalarTest, AliasBombIsRefused) {
  std::string text = "a0: &a0 [x, x]\n";
  for (int i = 1; i <= 30; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) +
            ", *a" + std::to_string(i - 1) + "]\n";
  }
  EXPECT_THAT(ManifestError(text), HasSubstr("aliases expand to more than"));
}

// ============================================================================
// Documents.

// JSON input is one object.
TEST(ManifestTest, ParsesJsonObject) {
  auto docs = ParseManifests(R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})");
  ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
  ASSERT_EQ(docs->size(), 1u);
  EXPECT_EQ((*docs)[0].object["metadata"]["name"], json("a"));
}

// Several YAML documents, with empty ones (comments only, or nothing) skipped.
TEST(ManifestTest, MultiDocumentYamlSkipsEmptyDocuments) {
  auto docs = ParseManifests(
      "---\n# only a comment\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n---\n"
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n---\n");
  ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0].object["metadata"]["name"], json("a"));
  EXPECT_EQ((*docs)[0].line, 4);
  EXPECT_EQ((*docs)[1].object["metadata"]["name"], json("b"));
  EXPECT_EQ((*docs)[1].line, 9);
  EXPECT_EQ((*docs)[1].index, 1);
  EXPECT_EQ((*docs)[1].Where(), "document 2 (line 9)");
}

// An empty input holds no documents (the caller decides whether that is an error).
TEST(ManifestTest, EmptyInputHasNoDocuments) {
  auto docs = ParseManifests("  \n# nothing\n");
  ASSERT_TRUE(docs.has_value());
  EXPECT_TRUE(docs->empty());
}

// kind: List is replaced by its items, each with its own line.
TEST(ManifestTest, ListIsExpanded) {
  auto docs = ParseManifests(
      "apiVersion: v1\nkind: List\nitems:\n"
      "- apiVersion: v1\n  kind: Namespace\n  metadata: {name: a}\n"
      "- apiVersion: v1\n  kind: Namespace\n  metadata: {name: b}\n");
  ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0].object["metadata"]["name"], json("a"));
  EXPECT_EQ((*docs)[0].line, 4);
  EXPECT_EQ((*docs)[1].object["metadata"]["name"], json("b"));
  EXPECT_EQ((*docs)[1].line, 7);
}

// A JSON List expands the same way.
TEST(ManifestTest, JsonListIsExpanded) {
  auto docs = ParseManifests(
      R"({"kind": "List", "apiVersion": "v1", "items": [{"kind": "Namespace"}, {"kind": "Pod"}]})");
  ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[1].object["kind"], json("Pod"));
}

// A List item that is not an object is refused with its index.
TEST(ManifestTest, ListItemMustBeObject) {
  EXPECT_THAT(ManifestError("kind: List\nitems: [3]\n"), HasSubstr("items[0]: expected an object"));
}

// A document that is a list or a scalar is not a manifest.
TEST(ManifestTest, NonObjectDocumentIsRefused) {
  std::string msg = ManifestError("apiVersion: v1\nkind: Namespace\n---\n- a\n- b\n");
  EXPECT_THAT(msg, StartsWith("document 2 (line 4)"));
  EXPECT_THAT(msg, HasSubstr("got a list"));
}

// Malformed YAML is refused with yaml-cpp's line, column and reason.
TEST(ManifestTest, MalformedYamlReportsLineAndColumn) {
  std::string msg = ManifestError("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a, b\n");
  EXPECT_THAT(msg, StartsWith("invalid YAML at line "));
  EXPECT_THAT(msg, HasSubstr("column"));
  EXPECT_THAT(msg, HasSubstr("end of sequence flow not found"));
}

// A tab where indentation is expected: the error names its line.
TEST(ManifestTest, MalformedYamlIndentation) {
  std::string msg = ManifestError("a: 1\n b: 2\n");
  EXPECT_THAT(msg, StartsWith("invalid YAML at line 2, column"));
}

// Malformed JSON is refused with nlohmann's line and column.
TEST(ManifestTest, MalformedJsonReportsLineAndColumn) {
  std::string msg = ManifestError("{\n  \"apiVersion\": \"v1\",\n  \"kind\" \"Pod\"\n}");
  EXPECT_THAT(msg, StartsWith("invalid JSON at line 3, column"));
  EXPECT_THAT(msg, HasSubstr("syntax error"));
}

// A duplicate key is an error in YAML (not "last wins").
TEST(ManifestTest, DuplicateYamlKeyIsRefused) {
  std::string msg = ManifestError("metadata:\n  name: a\n  name: b\n");
  EXPECT_THAT(msg, StartsWith("invalid YAML at line 3, column 3"));
  EXPECT_THAT(msg, HasSubstr("duplicate key \"name\""));
}

// A duplicate key is an error in JSON too.
TEST(ManifestTest, DuplicateJsonKeyIsRefused) {
  EXPECT_THAT(ManifestError(R"({"kind": "Pod", "kind": "Node"})"),
              HasSubstr("duplicate key \"kind\""));
}

// The strict JSON reader builds what nlohmann's own parser builds: every type,
// nested arrays of objects, escapes; a duplicate deep inside is still found,
// and what follows the document is refused.
TEST(ManifestTest, JsonDocumentsAreReadWhole) {
  const std::string text =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"x":"\u00e9\n"}},)"
      R"("spec":{"n":-3,"big":18446744073709551615,"f":0.25,"t":true,"f2":false,"z":null,)"
      R"("list":[[1,2],[],{"a":[{"b":{}}]},"s"],"empty":{}}})";
  auto parsed = ParseSingleObject(text, ManifestFormat::kJson);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, json::parse(text));
  EXPECT_THAT(ManifestError(R"({"kind":"Pod","spec":{"list":[{"a":1},{"b":1,"b":2}]}})"),
              HasSubstr("duplicate key \"b\""));
  EXPECT_THAT(ManifestError(R"({"kind":"Pod"} x)", ManifestFormat::kJson), StartsWith("invalid JSON at line 1"));
  EXPECT_THAT(ManifestError(R"({"kind":"Pod")", ManifestFormat::kJson), StartsWith("invalid JSON"));
}

// Bytes that are not UTF-8 are refused where they occur.
TEST(ManifestTest, InvalidUtf8IsRefused) {
  std::string msg = ManifestError("a: 1\nb: \xff\xfe\n");
  EXPECT_THAT(msg, StartsWith("invalid YAML at line 2, column 4"));
  EXPECT_THAT(msg, HasSubstr("UTF-8"));
}

// An explicit format overrides sniffing: JSON-looking text declared YAML is read as YAML.
TEST(ManifestTest, ExplicitFormatOverridesSniffing) {
  auto docs = ParseManifests("{kind: Pod}", ManifestFormat::kYaml);
  ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
  EXPECT_EQ((*docs)[0].object["kind"], json("Pod"));
  EXPECT_THAT(ManifestError("{kind: Pod}", ManifestFormat::kJson), StartsWith("invalid JSON"));
}

// A request body is one object; several documents are refused.
TEST(ManifestTest, SingleObjectRefusesSeveralDocuments) {
  EXPECT_TRUE(ParseSingleObject("kind: Pod\n").has_value());
  auto r = ParseSingleObject("kind: Pod\n---\nkind: Node\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(), HasSubstr("found 2 YAML documents"));
  auto empty = ParseSingleObject("");
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error().message(), HasSubstr("empty"));
}

}  // namespace
}  // namespace tessera
