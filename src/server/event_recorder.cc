#include "server/event_recorder.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/time_format.h"
#include "server/object_json.h"

namespace tessera {
namespace {

constexpr Duration kTtl = Duration::Seconds(3600);
constexpr size_t kMaxRemembered = 50000;
// Dropped events are logged at most this often.
constexpr Duration kDroppedLogPeriod = Duration::Seconds(60);

}  // namespace

bool EventRecorder::TakeFromBudget(const std::string& reason, Timestamp now) {
  auto it = budgets_.try_emplace(reason, kEventsPerSecond, kEventBurst).first;
  if (it->second.TryTake(now)) return true;
  ++dropped_;
  ++dropped_unlogged_;
  LogDropped(now);
  return false;
}

void EventRecorder::LogDropped(Timestamp now) {
  if (dropped_unlogged_ == 0 || (logged_ && now - *logged_ < kDroppedLogPeriod)) return;
  spdlog::warn("{}: dropped {} events over the budget of {} a second ({} at once) for each reason; the objects' "
               "conditions still say why they wait",
               component_, dropped_unlogged_, kEventsPerSecond, kEventBurst);
  dropped_unlogged_ = 0;
  logged_ = now;
}

void EventRecorder::Record(BatchedWriter& writer, const StoredObject& involved, Type type, const std::string& reason,
                           const std::string& message, Timestamp now) {
  if (!TakeFromBudget(reason, now)) return;
  const std::string uid = StringAt(involved.object, {"metadata", "uid"});
  const std::string aggregate = fmt::format("{}/{}/{}", uid, reason, message);
  const std::string now_text = FormatRfc3339(now);
  auto [it, fresh] = by_aggregate_.try_emplace(aggregate);
  Written& w = it->second;
  if (fresh) {
    // Kubernetes names events <object>.<unique hex>; a sequence keeps them unique here.
    w.key = ObjectKey{"/Event", involved.key.ns.empty() ? "default" : involved.key.ns,
                      fmt::format("{}.{:x}{:04x}", involved.key.name, now.ms, ++sequence_ & 0xffff)};
    w.first_timestamp = now_text;
  }
  ++w.count;
  w.last = now;
  by_age_.emplace_back(now, aggregate);
  // Built field by field: a pass records one per new pending workload, and
  // nlohmann's initializer lists copy every value twice.
  const nlohmann::json& obj = involved.object;
  nlohmann::json metadata = nlohmann::json::object();
  metadata["name"] = w.key.name;
  metadata["namespace"] = w.key.ns;
  metadata["creationTimestamp"] = w.first_timestamp;
  nlohmann::json about = nlohmann::json::object();
  about["apiVersion"] = StringField(obj, "apiVersion");
  about["kind"] = StringField(obj, "kind");
  about["name"] = involved.key.name;
  about["namespace"] = involved.key.ns;
  about["uid"] = uid;
  about["resourceVersion"] = std::to_string(involved.revision);
  nlohmann::json source = nlohmann::json::object();
  source["component"] = component_;
  nlohmann::json event = nlohmann::json::object();
  event["apiVersion"] = "v1";
  event["kind"] = "Event";
  event["metadata"] = std::move(metadata);
  event["involvedObject"] = std::move(about);
  event["reason"] = reason;
  event["message"] = message;
  event["type"] = type == Type::kNormal ? "Normal" : "Warning";
  event["source"] = std::move(source);
  event["reportingComponent"] = component_;
  event["firstTimestamp"] = w.first_timestamp;
  event["lastTimestamp"] = now_text;
  event["count"] = w.count;
  writer.Add(WriteOp{.op = w.count == 1 ? WriteOp::Kind::kCreate : WriteOp::Kind::kUpdate,
                     .key = w.key,
                     .object = std::move(event)},
             fmt::format("event {} about {}", reason, involved.key.name));
}

void EventRecorder::Expire(BatchedWriter& writer, Timestamp now) {
  LogDropped(now);  // the last drops of a storm, once their minute is up
  while (!by_age_.empty() && (now - by_age_.front().first > kTtl || by_age_.size() > kMaxRemembered)) {
    auto [written_at, aggregate] = by_age_.front();
    by_age_.pop_front();
    auto it = by_aggregate_.find(aggregate);
    if (it == by_aggregate_.end() || it->second.last != written_at) continue;  // written again since
    writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = it->second.key}, fmt::format("expire event {}", it->second.key.name));
    by_aggregate_.erase(it);
  }
}

}  // namespace tessera
