#include "store/store.h"


namespace tessera {

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
  const std::string text = created ? created->object.dump() : std::string();
  done(std::move(created), text);
}

}  // namespace tessera
