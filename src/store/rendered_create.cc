#include "store/rendered_create.h"

#include <fmt/format.h>

#include <random>
#include <string_view>

#include "store/document.h"

namespace tessera {
using nlohmann::json;

const std::string& RenderedCreate::ProcessPlaceholder() {
  static const std::string value = [] {
    std::random_device random;
    std::string bits;
    for (int i = 0; i < 4; ++i) bits += fmt::format("{:08x}", random());
    return "\x01resourceVersion-" + bits;
  }();
  return value;
}

Result<RenderedCreate> RenderedCreate::Render(const ObjectKey& key, json object,
                                              const std::function<std::string()>& new_uid,
                                              const std::string& placeholder) {
  ASSIGN_OR_RETURN(json* metadata, MetadataOf(object, key));
  RenderedCreate rendered;
  ASSIGN_OR_RETURN(rendered.uid_, AssignUid(*metadata, key, new_uid));
  (*metadata)["resourceVersion"] = placeholder;
  ASSIGN_OR_RETURN(rendered.text_, DumpDocument(object, key));
  // As the dump writes it: quoted, the control character escaped.
  const std::string text = json(placeholder).dump();
  rendered.placeholder_at_ = rendered.text_.find(text);
  rendered.placeholder_size_ = text.size();
  if (rendered.placeholder_at_ == std::string::npos ||
      rendered.text_.find(text, rendered.placeholder_at_ + 1) != std::string::npos) {
    rendered.tree_ = std::move(object);
  }
  // Otherwise `object` is freed here, on the caller's thread.
  return rendered;
}

std::string RenderedCreate::WithRevision(int64_t revision) const {
  if (tree_) {
    json object = *tree_;
    object["metadata"]["resourceVersion"] = std::to_string(revision);
    return object.dump();  // rendered once already: valid UTF-8
  }
  const std::string value = fmt::format("\"{}\"", revision);
  std::string text;
  text.reserve(text_.size() - placeholder_size_ + value.size());
  text.append(text_, 0, placeholder_at_);
  text += value;
  text.append(text_, placeholder_at_ + placeholder_size_);
  return text;
}

}  // namespace tessera
