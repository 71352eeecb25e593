#include "server/default_templates.h"

#include <string>

namespace tessera {

using nlohmann::json;

namespace {

json Template(const std::string& name, const std::string& display, const std::string& description,
              const std::string& category, json object, json parameters) {
  return json{{"apiVersion", "tessera.dev/v1"},
              {"kind", "Template"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"displayName", display},
                {"description", description},
                {"category", category},
                {"object", std::move(object)},
                {"parameters", std::move(parameters)}}}};
}

json Param(const std::string& name, const std::string& path, const std::string& type, const std::string& description,
           json default_value = json()) {
  json p{{"name", name}, {"path", path}, {"type", type}, {"description", description}};
  if (!default_value.is_null()) p["default"] = std::move(default_value);
  return p;
}

json Required(json p) {
  p["required"] = true;
  return p;
}

// The parameters of a workload whose pods come from spec.template (one container).
json ContainerParams(const std::string& gpu_default) {
  const std::string c = "spec.template.spec.containers[0].";
  return json::array({
      Required(Param("command", c + "command", "command", "the program and its arguments (after -- on the command line)")),
      Param("image", c + "image", "string", "an OCI image to run it in (else it runs as a process on the node)"),
      Param("gpu", c + "resources.limits.nvidia\\.com/gpu", "quantity",
            "GPUs: a fraction below one (0.25) or whole GPUs", gpu_default),
      Param("cpu", c + "resources.requests.cpu", "quantity", "CPU cores (500m, 4)", "1"),
      Param("memory", c + "resources.requests.memory", "quantity", "memory (4Gi)", "4Gi"),
  });
}

}  // namespace

std::vector<json> DefaultTemplates() {
  std::vector<json> out;
  // A notebook: Jupyter (or a command) at a quarter GPU, a home volume if asked.
  json notebook_params = json::array({
      Param("gpu", "spec.gpu", "quantity", "GPUs: a fraction below one (0.25) or whole GPUs", "0.25"),
      Param("cpu", "spec.cpu", "quantity", "CPU cores (500m, 4)", "1"),
      Param("memory", "spec.memory", "quantity", "memory (4Gi)", "4Gi"),
      Param("home-size", "spec.home.size", "quantity",
            "a home volume kept when it is suspended (with an image: a process pod has no volumes)"),
      Param("idle-timeout", "spec.idle.timeout", "string", "suspended when GPU and kernels are quiet this long (0: never)",
            "1h"),
      Param("image", "spec.image", "string", "an OCI image with Jupyter (else Jupyter Lab installed on the node)"),
      Param("command", "spec.command", "command", "a program serving HTTP on $NOTEBOOK_PORT instead of Jupyter"),
  });
  out.push_back(Template("jupyter", "Jupyter notebook",
                         "Jupyter with a fraction of a GPU (and, in an image, a home volume); suspended when idle by GPU "
                         "and kernel, resumed when opened.",
                         "notebook",
                         {{"apiVersion", "tessera.dev/v1"}, {"kind", "Notebook"}, {"spec", json::object()}},
                         std::move(notebook_params)));
  // Distributed training: a gang of torchrun workers, restarted from their checkpoint.
  json training_params = ContainerParams("1");
  training_params.push_back(Param("workers", "spec.replicas", "integer", "workers (pods), started together", 2));
  training_params.back()["minimum"] = 1;
  training_params.back()["maximum"] = 256;
  training_params.push_back(Param("procs-per-worker", "spec.nprocPerNode", "integer", "processes per worker (torchrun's --nproc-per-node)", 1));
  out.push_back(Template(
      "pytorch-ddp", "PyTorch distributed training",
      "A gang of torchrun workers (PET_* and MASTER_ADDR set), all started together, restarted from their last "
      "checkpoint ($TESSERA_CHECKPOINT_DIR) when preempted.",
      "training",
      {{"apiVersion", "tessera.dev/v1"},
       {"kind", "TrainingJob"},
       {"spec",
        {{"replicas", 2},
         {"backoffLimit", 3},
         {"template",
          {{"spec", {{"priorityClassName", "training"}, {"containers", json::array({{{"name", "worker"}}})}}}}}}}},
      std::move(training_params)));
  // An inference service: replicas of an HTTP server behind a stable endpoint, scaled on its traffic.
  json inference_params = ContainerParams("1");
  inference_params[0]["description"] = "the server and its arguments (after --); it serves HTTP on $PORT";
  inference_params.push_back(Param("port", "spec.port", "integer", "the port it serves on ($PORT)", 8080));
  inference_params.push_back(Param("min-replicas", "spec.minReplicas", "integer", "fewest replicas (0: scale to zero)", 1));
  inference_params.back()["minimum"] = 0;
  inference_params.push_back(Param("max-replicas", "spec.maxReplicas", "integer", "most replicas", 4));
  inference_params.back()["minimum"] = 1;
  inference_params.push_back(Param("target-concurrency", "spec.autoscaling.targetConcurrency", "integer",
                                   "in-flight requests per replica before another is started", 10));
  out.push_back(Template(
      "inference", "Inference service",
      "Replicas of an HTTP server (production priority, spread across nodes) behind a stable endpoint through the "
      "server's proxy, rolled out without downtime and scaled on in-flight requests, to zero if asked.",
      "inference",
      {{"apiVersion", "tessera.dev/v1"},
       {"kind", "InferenceService"},
       {"spec", {{"minReplicas", 1}, {"maxReplicas", 4}, {"template", {{"spec", {{"containers", json::array({{{"name", "server"}}})}}}}}}}},
      std::move(inference_params)));
  // A batch job.
  json batch_params = ContainerParams("1");
  batch_params.push_back(Param("deadline", "spec.activeDeadlineSeconds", "integer", "seconds it may run (backfill plans with it)"));
  out.push_back(Template("batch", "Batch job", "A Kubernetes Job of one pod, retried up to 3 times.", "batch",
                         {{"apiVersion", "batch/v1"},
                          {"kind", "Job"},
                          {"spec",
                           {{"backoffLimit", 3},
                            {"template",
                             {{"spec",
                               {{"restartPolicy", "Never"},
                                {"containers", json::array({{{"name", "main"}}})}}}}}}}},
                         std::move(batch_params)));
  return out;
}

}  // namespace tessera
