// Assumptions: a spec holds at most a few hundred steps and items, so the
// checks below are simple quadratic passes; the first problem found is reported.
// Steps of ParsePipelineSpec:
//   1. parameters: names valid and unique, defaults scalar;
//   2. each step's own fields: name (DNS-1123, room for "-N" suffixes), template,
//      dependsOn, withItems, retries, cache, when (syntax);
//   3. names across steps: unique step names, unique node names;
//   4. dependsOn names known, then no cycle (named in run order, a -> b -> a);
//   5. every {{...}} in templates and conditions known: a parameter, the step's
//      own item (keys present in every item), or an upstream step.
#include "pipeline/pipeline_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "common/json_fields.h"
#include "common/suggest.h"
#include "pipeline/references.h"

namespace tessera::pipeline {
namespace {

using nlohmann::json;

Status Invalid(std::string_view path, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{}: {}", path, what));
}

bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// DNS-1123 label characters: [a-z0-9]([-a-z0-9]*[a-z0-9])? (length checked apart).
bool IsDns1123Label(std::string_view s) {
  if (s.empty() || !IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAlnumLower(c) || c == '-'; });
}

// A parameter is referred to as {{params.NAME}}, so no dots or braces.
bool IsParameterName(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

// `; did you mean "x"?`, or ` (known: a, b)` when nothing is close, or
// ` (there are none)`.
std::string Hint(std::string_view got, const std::vector<std::string_view>& known, std::string_view plural) {
  if (auto s = Suggest(got, known)) return fmt::format("; did you mean \"{}\"?", *s);
  if (known.empty()) return fmt::format(" (the pipeline has no {})", plural);
  return fmt::format(" ({}: {})", plural, fmt::join(known, ", "));
}

Result<std::vector<Parameter>> ParseParameters(const json& spec, std::string_view path) {
  std::vector<Parameter> out;
  ASSIGN_OR_RETURN(const json* list, ReadJsonObjectList(spec, "parameters", path));
  if (list == nullptr) return out;
  const std::string base = JoinJsonPath(path, "parameters");
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    const std::string at = fmt::format("{}[{}]", base, i);
    ASSIGN_OR_RETURN(std::string name, ReadJsonString(item, "name", at, /*required=*/true));
    if (!IsParameterName(name)) {
      return Err(Invalid(at + ".name", fmt::format("\"{}\" is not a parameter name: use letters, digits, '-' and '_' "
                                                   "(it is referred to as {{{{params.NAME}}}})",
                                                   name)));
    }
    if (auto [it, fresh] = seen.emplace(name, i); !fresh) {
      return Err(Invalid(at + ".name",
                         fmt::format("duplicate parameter name \"{}\" (also {}[{}].name)", name, base, it->second)));
    }
    Parameter p{name, std::nullopt};
    if (const json* v = JsonFind(item, "value")) {
      if (!v->is_string() && !v->is_number() && !v->is_boolean())
        return Err(JsonTypeError(at + ".value", "a string", *v));
      p.default_value = BindingText(*v);
    }
    out.push_back(std::move(p));
  }
  return out;
}

// A non-negative integer field of at most `max`; `fallback` when absent.
Result<int64_t> ReadCount(const json& object, const char* key, std::string_view path, int64_t fallback, int64_t max,
                          std::string_view why_max) {
  const std::string at = JoinJsonPath(path, key);
  const json* v = JsonFind(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer()) return Err(JsonTypeError(at, "an integer", *v));
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > static_cast<uint64_t>(max))
      return Err(Invalid(at, fmt::format("must be at most {}{}", max, why_max)));
    return static_cast<int64_t>(v->get<uint64_t>());
  }
  const int64_t n = v->get<int64_t>();
  if (n < 0) return Err(Invalid(at, fmt::format("must not be negative, got {}", n)));
  if (n > max) return Err(Invalid(at, fmt::format("must be at most {}{}", max, why_max)));
  return n;
}

Result<RetryPolicy> ParseRetries(const json& step, std::string_view at) {
  RetryPolicy out;
  const json* r = JsonFind(step, "retries");
  if (r == nullptr) return out;
  const std::string rpath = JoinJsonPath(at, "retries");
  if (!r->is_object()) return Err(JsonTypeError(rpath, "an object", *r));
  ASSIGN_OR_RETURN(int64_t limit, ReadCount(*r, "limit", rpath, 0, std::numeric_limits<int32_t>::max() - 1, ""));
  ASSIGN_OR_RETURN(int64_t backoff, ReadCount(*r, "backoffSeconds", rpath, kDefaultBackoff.seconds(),
                                              kMaxBackoff.seconds(), " (the back-off is capped at 6 minutes)"));
  out.limit = static_cast<int32_t>(limit);
  out.backoff = Duration::Seconds(backoff);
  return out;
}

Result<std::optional<std::vector<json>>> ParseItems(const json& step, std::string_view at) {
  const json* items = JsonFind(step, "withItems");
  if (items == nullptr) return std::optional<std::vector<json>>();
  const std::string ipath = JoinJsonPath(at, "withItems");
  if (!items->is_array()) return Err(JsonTypeError(ipath, "a list", *items));
  if (items->empty()) return Err(Invalid(ipath, "must not be empty (remove it to run the step once)"));
  std::vector<json> out;
  for (size_t k = 0; k < items->size(); ++k) {
    const json& item = (*items)[k];
    if (!item.is_string() && !item.is_number() && !item.is_boolean() && !item.is_object()) {
      return Err(JsonTypeError(fmt::format("{}[{}]", ipath, k), "a string, number, boolean or object", item));
    }
    out.push_back(item);
  }
  return std::optional<std::vector<json>>(std::move(out));
}

// Step 2: one step's own fields.
Result<Step> ParseStep(const json& object, const std::string& at) {
  Step step;
  ASSIGN_OR_RETURN(step.name, ReadJsonString(object, "name", at, /*required=*/true));
  if (!IsDns1123Label(step.name)) {
    return Err(Invalid(at + ".name", fmt::format("\"{}\" is not a DNS-1123 label: use lowercase letters, digits and "
                                                 "'-', starting and ending with a letter or digit",
                                                 step.name)));
  }
  const json* tmpl = JsonFind(object, "template");
  if (tmpl == nullptr) return Err(Invalid(at + ".template", "is required: the pod template the step runs"));
  if (!tmpl->is_object()) return Err(JsonTypeError(at + ".template", "an object", *tmpl));
  step.pod_template = *tmpl;

  ASSIGN_OR_RETURN(step.depends_on, ReadJsonStringList(object, "dependsOn", at));
  for (size_t k = 0; k < step.depends_on.size(); ++k) {
    for (size_t j = 0; j < k; ++j) {
      if (step.depends_on[j] == step.depends_on[k]) {
        return Err(
            Invalid(fmt::format("{}.dependsOn[{}]", at, k), fmt::format("\"{}\" is listed twice", step.depends_on[k])));
      }
    }
  }

  ASSIGN_OR_RETURN(step.with_items, ParseItems(object, at));
  if (step.with_items) {
    const size_t n = step.with_items->size();
    const std::string last = step.NodeName(n - 1);
    if (last.size() > kMaxNodeNameLength) {
      return Err(Invalid(at + ".name", fmt::format("\"{}\" is too long for {} items: node names such as \"{}\" would "
                                                   "be {} characters, over {}; shorten it to at most {} characters",
                                                   step.name, n, last, last.size(), kMaxNodeNameLength,
                                                   kMaxNodeNameLength - (last.size() - step.name.size()))));
    }
  } else if (step.name.size() > kMaxNodeNameLength) {
    return Err(Invalid(at + ".name", fmt::format("\"{}\" is {} characters, over {}", step.name, step.name.size(),
                                                 kMaxNodeNameLength)));
  }

  ASSIGN_OR_RETURN(step.retries, ParseRetries(object, at));
  if (const json* cache = JsonFind(object, "cache")) {
    if (!cache->is_boolean()) return Err(JsonTypeError(at + ".cache", "a boolean", *cache));
    step.cache = cache->get<bool>();
  }
  if (const json* when = JsonFind(object, "when")) {
    if (!when->is_string()) return Err(JsonTypeError(at + ".when", "a string", *when));
    auto parsed = ParseWhen(when->get_ref<const std::string&>());
    if (!parsed) return Err(parsed.error().WithContext(at + ".when"));
    step.when = std::move(*parsed);
  }
  return step;
}

// Step 4: the first cycle a depth-first walk over dependsOn meets, in run
// order (a -> b: b depends on a), starting at its earliest step.
std::optional<std::vector<size_t>> FindCycle(const std::vector<std::vector<size_t>>& deps) {
  enum Color { kWhite, kGrey, kBlack };
  std::vector<Color> color(deps.size(), kWhite);
  std::vector<size_t> stack;
  std::function<std::optional<std::vector<size_t>>(size_t)> visit =
      [&](size_t u) -> std::optional<std::vector<size_t>> {
    color[u] = kGrey;
    stack.push_back(u);
    for (size_t v : deps[u]) {
      if (color[v] == kGrey) {
        // stack: v, ..., u, each depending on the next and u on v; run order is the reverse.
        std::vector<size_t> cycle(std::find(stack.begin(), stack.end(), v), stack.end());
        std::reverse(cycle.begin(), cycle.end());
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        return cycle;
      }
      if (color[v] == kWhite) {
        if (auto c = visit(v)) return c;
      }
    }
    stack.pop_back();
    color[u] = kBlack;
    return std::nullopt;
  };
  for (size_t u = 0; u < deps.size(); ++u) {
    if (color[u] == kWhite) {
      if (auto c = visit(u)) return c;
    }
  }
  return std::nullopt;
}

// What step 5 checks references against.
struct RefContext {
  const std::vector<Parameter>& parameters;
  const std::vector<Step>& steps;
  const std::map<std::string, size_t, std::less<>>& step_index;
  const std::vector<std::vector<bool>>& upstream;  // upstream[s][t]: t is an ancestor of s
};

Status CheckReference(const Reference& ref, std::string_view inner, size_t s, const RefContext& ctx) {
  const Step& step = ctx.steps[s];
  auto fail = [&](std::string what) { return Status::InvalidArgument(fmt::format("{{{{{}}}}}: {}", inner, what)); };
  switch (ref.kind) {
    case ReferenceKind::kParam: {
      std::vector<std::string_view> names;
      for (const Parameter& p : ctx.parameters) {
        if (p.name == ref.name) return Status::Ok();
        names.push_back(p.name);
      }
      return fail(fmt::format("no parameter named \"{}\"{}", ref.name, Hint(ref.name, names, "parameters")));
    }
    case ReferenceKind::kItem:
    case ReferenceKind::kItemKey: {
      if (!step.with_items) return fail(fmt::format("step \"{}\" has no withItems", step.name));
      if (ref.kind == ReferenceKind::kItem) return Status::Ok();
      for (size_t k = 0; k < step.with_items->size(); ++k) {
        const json& item = (*step.with_items)[k];
        if (!item.is_object()) return fail(fmt::format("withItems[{}] is a {}, not an object", k, item.type_name()));
        if (item.contains(ref.name)) continue;
        std::vector<std::string_view> keys;
        for (auto it = item.begin(); it != item.end(); ++it) keys.push_back(it.key());
        std::string hint;
        if (auto sug = Suggest(ref.name, keys)) hint = fmt::format("; did you mean \"{}\"?", *sug);
        return fail(fmt::format("withItems[{}] has no key \"{}\"{}", k, ref.name, hint));
      }
      return Status::Ok();
    }
    case ReferenceKind::kStepStatus:
    case ReferenceKind::kStepResult: {
      auto it = ctx.step_index.find(ref.name);
      if (it == ctx.step_index.end()) {
        std::vector<std::string_view> names;
        for (const Step& other : ctx.steps) names.push_back(other.name);
        return fail(fmt::format("no step named \"{}\"{}", ref.name, Hint(ref.name, names, "steps")));
      }
      if (it->second == s) return fail("a step cannot refer to itself");
      if (!ctx.upstream[s][it->second]) {
        return fail(fmt::format("step \"{}\" is not upstream of \"{}\"; add it to dependsOn", ref.name, step.name));
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
}

// Parses and checks every reference in `text`, recording them in the step.
Status CheckText(std::string_view text, const std::string& path, size_t s, const RefContext& ctx,
                 std::set<std::string>& references) {
  for (const ReferenceSpan& span : FindReferences(text)) {
    auto ref = ParseReference(span.inner);
    if (!ref) return ref.error().WithContext(path);
    Status st = CheckReference(*ref, span.inner, s, ctx);
    if (!st.ok()) return st.WithContext(path);
    references.insert(ref->Key());
  }
  return Status::Ok();
}

}  // namespace

Duration RetryPolicy::DelayAfter(int32_t failed_attempts) const {
  // backoff * 2^(failed_attempts - 1), capped; past 2^30 the cap has long won.
  const int32_t doublings = std::clamp(failed_attempts - 1, 0, 30);
  const int64_t ms = backoff.ms << doublings;
  return Duration::Millis(std::min(ms, kMaxBackoff.ms));
}

std::string Step::NodeName(std::optional<size_t> item) const { return item ? fmt::format("{}-{}", name, *item) : name; }

const Step* PipelineSpec::FindStep(std::string_view name) const {
  for (const Step& s : steps) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Result<PipelineSpec> ParsePipelineSpec(const json& spec, std::string_view path) {
  PipelineSpec out;
  out.source = spec;
  if (!spec.is_object()) return Err(JsonTypeError(path, "an object", spec));

  // 1. Parameters.
  ASSIGN_OR_RETURN(out.parameters, ParseParameters(spec, path));

  // 2. Each step's own fields.
  const std::string base = JoinJsonPath(path, "steps");
  ASSIGN_OR_RETURN(const json* steps, ReadJsonObjectList(spec, "steps", path));
  if (steps == nullptr) return Err(Invalid(base, "is required: a pipeline has at least one step"));
  if (steps->empty()) return Err(Invalid(base, "must have at least one step"));
  std::vector<std::string> at;
  for (size_t i = 0; i < steps->size(); ++i) {
    at.push_back(fmt::format("{}[{}]", base, i));
    ASSIGN_OR_RETURN(Step step, ParseStep((*steps)[i], at[i]));
    out.steps.push_back(std::move(step));
  }

  // 3. Unique step names, then unique node names (a fanned-out step's "train-0"
  // must not be another step's name).
  std::map<std::string, size_t, std::less<>> step_index;
  for (size_t i = 0; i < out.steps.size(); ++i) {
    if (auto [it, fresh] = step_index.emplace(out.steps[i].name, i); !fresh) {
      return Err(Invalid(at[i] + ".name",
                         fmt::format("duplicate step name \"{}\" (also {}.name)", out.steps[i].name, at[it->second])));
    }
  }
  struct NodeOwner {
    size_t step;
    std::optional<size_t> item;
  };
  std::map<std::string, NodeOwner> nodes;
  for (size_t i = 0; i < out.steps.size(); ++i) {
    const Step& step = out.steps[i];
    const size_t count = step.with_items ? step.with_items->size() : 1;
    for (size_t k = 0; k < count; ++k) {
      const std::optional<size_t> item = step.with_items ? std::optional<size_t>(k) : std::nullopt;
      const std::string name = step.NodeName(item);
      auto [it, fresh] = nodes.emplace(name, NodeOwner{i, item});
      if (fresh) continue;
      const NodeOwner& owner = it->second;
      if (item) {
        return Err(Invalid(fmt::format("{}.withItems[{}]", at[i], k),
                           fmt::format("node name \"{}\" is taken by step \"{}\" ({}); rename one of the steps", name,
                                       out.steps[owner.step].name, at[owner.step])));
      }
      return Err(
          Invalid(at[i] + ".name", fmt::format("\"{}\" is also the name of node {} of step \"{}\" ({}.withItems[{}]); "
                                               "rename one of the steps",
                                               name, owner.item.value_or(0), out.steps[owner.step].name, at[owner.step],
                                               owner.item.value_or(0))));
    }
  }

  // 4. Dependencies known, and no cycle.
  std::vector<std::string_view> step_names;
  for (const Step& s : out.steps) step_names.push_back(s.name);
  std::vector<std::vector<size_t>> deps(out.steps.size());
  for (size_t i = 0; i < out.steps.size(); ++i) {
    for (size_t k = 0; k < out.steps[i].depends_on.size(); ++k) {
      const std::string& dep = out.steps[i].depends_on[k];
      auto it = step_index.find(dep);
      if (it == step_index.end()) {
        return Err(Invalid(fmt::format("{}.dependsOn[{}]", at[i], k),
                           fmt::format("no step named \"{}\"{}", dep, Hint(dep, step_names, "steps"))));
      }
      deps[i].push_back(it->second);
    }
  }
  if (auto cycle = FindCycle(deps)) {
    std::vector<std::string_view> names;
    for (size_t s : *cycle) names.push_back(out.steps[s].name);
    names.push_back(out.steps[cycle->front()].name);
    return Err(Invalid(base, fmt::format("dependency cycle {}", fmt::join(names, " -> "))));
  }

  // 5. References. upstream[s][t]: t is an ancestor of s (filled deepest-first).
  const size_t n = out.steps.size();
  std::vector<std::vector<bool>> upstream(n, std::vector<bool>(n, false));
  std::vector<bool> done(n, false);
  std::function<void(size_t)> fill = [&](size_t s) {
    if (done[s]) return;
    done[s] = true;
    for (size_t d : deps[s]) {
      fill(d);
      upstream[s][d] = true;
      for (size_t t = 0; t < n; ++t) {
        if (upstream[d][t]) upstream[s][t] = true;
      }
    }
  };
  for (size_t s = 0; s < n; ++s) fill(s);

  const RefContext ctx{out.parameters, out.steps, step_index, upstream};
  for (size_t s = 0; s < n; ++s) {
    Step& step = out.steps[s];
    RETURN_IF_ERROR(VisitJsonStrings(step.pod_template, at[s] + ".template",
                                     [&](const std::string& field, const std::string& value) {
                                       return CheckText(value, field, s, ctx, step.references);
                                     }));
    if (step.when) {
      for (const std::string& inner : step.when->references()) {
        RETURN_IF_ERROR(CheckText("{{" + inner + "}}", at[s] + ".when", s, ctx, step.references));
      }
    }
  }
  return out;
}

}  // namespace tessera::pipeline
