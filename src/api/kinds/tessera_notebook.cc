// tessera.dev/v1 Notebook: an interactive notebook (Jupyter Lab unless an image
// or a command says otherwise) with a fraction of a GPU, a home volume that
// outlives its pod, and an idle policy by GPU and kernel (DESIGN.md section
// 4). Its controller is server/controllers/notebook_controller.h.
#include <fmt/format.h>

#include <string>

#include "api/age.h"
#include "api/common_schemas.h"
#include "api/kinds/groups.h"
#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "api/schema.h"
#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;
using namespace schema;  // NOLINT(google-build-using-namespace): schemas read as tables

// gpu (a fraction or whole GPUs) or gpuMemory, not both; an idle timeout that
// is a duration ("30m", "2h"; "0" turns idle reclaim off); a home size that is
// more than nothing.
void CheckNotebookSpec(const json& spec, const std::string& path, Errors& errors) {
  if (const json* gpu = Get(spec, "gpu")) CheckAmount("nvidia.com/gpu", *gpu, FieldPath(path, "gpu"), errors);
  if (const json* bytes = Get(spec, "gpuMemory")) {
    CheckAmount("tessera.dev/gpu-memory", *bytes, FieldPath(path, "gpuMemory"), errors);
    if (Get(spec, "gpu") != nullptr) {
      errors.Add(FieldPath(path, "gpuMemory"), "set gpu (a fraction such as \"0.25\", or whole GPUs) or gpuMemory, not both");
    }
  }
  if (const json* cpu = Get(spec, "cpu")) CheckAmount("cpu", *cpu, FieldPath(path, "cpu"), errors);
  if (const json* memory = Get(spec, "memory")) CheckAmount("memory", *memory, FieldPath(path, "memory"), errors);
  if (Get(spec, "image") == nullptr && Get(spec, "command") != nullptr && Get(spec, "command")->empty()) {
    errors.Add(FieldPath(path, "command"), "empty: leave it out for Jupyter Lab, or give the program and its arguments");
  }
  if (const json* home = Get(spec, "home")) {
    if (const json* size = Get(*home, "size")) {
      auto bytes = CheckAmount("storage", *size, FieldPath(path, "home.size"), errors);
      if (bytes && *bytes <= 0) errors.Add(FieldPath(path, "home.size"), "must be more than 0 (10Gi, say)");
    }
    const std::string mount = GetString(*home, "mountPath");
    if (Get(*home, "mountPath") != nullptr && (mount.empty() || mount.front() != '/')) {
      errors.Add(FieldPath(path, "home.mountPath"), fmt::format("\"{}\" is not an absolute path (/home/jovyan, say)", mount));
    }
  }
  if (const json* idle = Get(spec, "idle")) {
    const std::string timeout = GetString(*idle, "timeout");
    if (Get(*idle, "timeout") != nullptr && timeout != "0" && !ParseDuration(timeout)) {
      errors.Add(FieldPath(path, "idle.timeout"),
                 fmt::format("\"{}\" is not a duration: write 30m, 2h or 90s (0 turns idle reclaim off)", timeout));
    }
  }
}

SchemaRef NotebookSchema() {
  return Root({Req("spec", Obj(
                               {
                                   Opt("image", Str()),
                                   Opt("command", Arr(Str())),
                                   Opt("port", Int(1, 65535)),
                                   Opt("gpu", Qty()),
                                   Opt("gpuMemory", Qty()),
                                   Opt("cpu", Qty()),
                                   Opt("memory", Qty()),
                                   Opt("home", Obj({Req("size", Qty()), Opt("mountPath", Str())})),
                                   Opt("idle", Obj({Opt("timeout", Str())})),
                                   Opt("queueName", Str()),
                                   Opt("priorityClassName", Str()),
                                   Opt("suspend", Bool()),
                               },
                               {CheckNotebookSpec}))});
}

// GPU as asked: "0.25", "1", or the GPU memory ("20Gi").
std::string Gpu(const json& o, const ColumnOptions&) {
  const std::string gpu = TextAt(o, "spec.gpu");
  if (!gpu.empty()) return gpu;
  const std::string memory = TextAt(o, "spec.gpuMemory");
  return memory.empty() ? "0" : memory;
}

// Since when it has been idle (GPU and kernel quiet), "-" while it is busy or not running.
std::string Idle(const json& o, const ColumnOptions& options) {
  const std::string since = TextAt(o, "status.idleSince");
  return since.empty() ? "-" : AgeSince(json(since), options.now);
}

}  // namespace

std::vector<KindDefinition> TesseraNotebookKinds() {
  return {
      {.info = {.group = "tessera.dev", .version = "v1", .kind = "Notebook", .api_version = "tessera.dev/v1",
                .plural = "notebooks", .singular = "notebook", .short_names = {"nb"}, .categories = {"all", "tessera"}, .namespaced = true,
                .store_key = "tessera.dev/Notebook"},
       .schema = NotebookSchema(),
       .columns = {NameColumn(),
                   {.name = "STATUS",
                    .description = "Pending, Running, Suspended or Resuming",
                    .cell = [](const json& o, const ColumnOptions&) { return TextAt(o, "status.phase", "Pending"); }},
                   {.name = "GPU", .description = "the GPU asked for: a fraction, whole GPUs, or GPU memory", .cell = Gpu},
                   FieldColumn("URL", "status.url", "", 0, ColumnType::kString,
                               "the path the server's proxy serves it on"),
                   {.name = "IDLE",
                    .description = "how long its GPU and kernels have been quiet",
                    .cell = Idle},
                   {.name = "GPU-USE(1H)",
                    .priority = 1,
                    .description = "its GPUs' mean utilisation over the last hour, in percent",
                    .cell =
                        [](const json& o, const ColumnOptions&) {
                          const std::string p = TextAt(o, "status.gpuUtilization.averagePercent");
                          return p.empty() ? std::string("-") : p + "%";
                        }},
                   AgeColumn()},
       .roles = RoleGrants{.grants = {ViewReads(), ViewReads("status"), EditWrites()}},
       .controller = "notebook-controller"},
  };
}

}  // namespace tessera
