#include "server/api/media_types.h"

#include <ranges>

namespace tessera {

std::vector<MediaType> AcceptedMediaTypes(std::string_view accept) {
  std::vector<MediaType> types;
  for (auto entry : std::views::split(accept, ',')) {
    MediaType media;
    bool first = true;
    for (auto part : std::views::split(entry, ';')) {
      std::string text(part.begin(), part.end());
      std::erase(text, ' ');
      if (first) {
        media.type = std::move(text);
        first = false;
        continue;
      }
      const size_t eq = text.find('=');
      if (eq != std::string::npos) media.params[text.substr(0, eq)] = text.substr(eq + 1);
    }
    types.push_back(std::move(media));
  }
  return types;
}

}  // namespace tessera
