#include "store/store.h"

#include "store/document.h"

namespace tessera {

Result<EventPage> Store::FilteredEventsSince(int64_t revision, size_t limit, const EventFilter& filter) {
  ASSIGN_OR_RETURN(std::vector<StoreEvent> events, EventsSince(revision, limit));
  EventPage page;
  page.revision = events.empty() ? revision : events.back().revision;
  page.looked_at = events.size();
  for (StoreEvent& e : events) {
    const ObjectKey& key = e.object.key;
    if (!filter.WantsKind(key.kind) || !filter.WantsObject(key, e.revision)) continue;
    page.events.push_back(std::move(e));
  }
  return page;
}

std::vector<Store::UnitResult> Store::ApplyUnits(std::vector<std::vector<WriteOp>> units) {
  std::vector<UnitResult> results;
  results.reserve(units.size());
  for (std::vector<WriteOp>& unit : units) results.push_back(Apply(std::move(unit)));
  return results;
}

void Store::CreateAsync(const ObjectKey& key, nlohmann::json object, std::optional<ObjectKey> must_exist,
                        CreateDone done) {
  if (must_exist) {
    Result<StoredObject> parent = Get(*must_exist);
    if (!parent) {
      done(Err(parent.error()), {});
      return;
    }
  }
  Result<StoredObject> created = Create(key, std::move(object));
  if (!created) return done(Err(created.error()), {});
  done(created->revision, created->object.dump());
}

Result<TextListResult> Store::ListTexts(std::string_view kind, std::string_view ns) {
  ASSIGN_OR_RETURN(ListResult list, List(kind, ns));
  TextListResult texts{.revision = list.revision};
  texts.texts.reserve(list.items.size());
  for (const StoredObject& item : list.items) {
    ASSIGN_OR_RETURN(std::string text, DumpDocument(item.object, item.key));
    texts.texts.push_back(std::move(text));
  }
  return texts;
}

}  // namespace tessera
