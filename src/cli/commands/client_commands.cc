#include "cli/commands/client_commands.h"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "api/kinds.h"
#include "client/client_config.h"
#include "common/suggest.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resume_command.h"
#include "cli/commands/rollout_command.h"
#include "cli/commands/sweep_command.h"
#include "cli/commands/top_command.h"

namespace tessera {
namespace {

// Prints a command's own usage line(s) instead of CLI11's generated one.
class UsageFormatter : public CLI::Formatter {
 public:
  explicit UsageFormatter(std::string usage) : usage_(std::move(usage)) {}
  std::string make_usage(const CLI::App*, std::string) const override { return "Usage: " + usage_ + "\n"; }

 private:
  std::string usage_;
};

constexpr const char* kGlobalFlags =
    "Global flags (before or after the command):\n"
    "  --server URL                  the Tessera API server (else TESSERA_SERVER, else ~/.config/tessera/config.yaml)\n"
    "  --token-file FILE             file holding the bearer token (else TESSERA_TOKEN_FILE)\n"
    "  --token TOKEN                 bearer token (else TESSERA_TOKEN, else the config file)\n"
    "  --context NAME                the config file's context to use (tessera config get-contexts)\n"
    "  --certificate-authority FILE  CA certificate(s) to trust for an https:// server (else the config file's)\n"
    "  --insecure-skip-tls-verify    do not check the server's certificate (insecure)\n"
    "  --request-timeout DURATION    give up on a request after this long (30s, 2m; default 0: no limit)\n"
    "  -n, --namespace NS            namespace for namespaced kinds (default: the context's, else \"default\")\n"
    "Exit codes: 0 success, 1 refused or failed, 2 usage error (nothing sent).";

// "namespaces (ns), nodes (no), ..." for help texts.
std::string KnownKinds() {
  std::string out;
  for (const KindInfo& k : AllKinds()) {
    if (!out.empty()) out += ", ";
    out += k.group == "batch.volcano.sh" ? fmt::format("{}.{}", k.plural, k.group) : std::string(k.plural);
    if (!k.short_names.empty()) out += fmt::format(" ({})", k.short_names.front());
  }
  return out;
}

// Wraps `text` at `width` columns, continuation lines indented by `indent`.
std::string Wrap(const std::string& text, size_t width, size_t indent) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = std::string(indent, ' ');
    } else if (!line.empty() && line.find_first_not_of(' ') != std::string::npos) {
      line += ' ';
    }
    line += word;
    start = end + 1;
  }
  return out + line;
}

CLI::App* AddCommand(CLI::App& app, const std::string& name, const std::string& description, const std::string& usage,
                     const std::string& footer) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->formatter(std::make_shared<UsageFormatter>(usage));
  cmd->footer(footer + "\n\n" + kGlobalFlags);
  cmd->fallthrough();  // -n and the other global flags may follow the command
  return cmd;
}

}  // namespace

Result<CommandContext> ClientCommands::Context() const {
  CommandContext ctx;
  ASSIGN_OR_RETURN(ctx.config, ResolveClientConfig(flags_));
  ctx.ns_explicit = ns_option_ != nullptr && ns_option_->count() > 0;
  // -n, else the context's namespace, else "default".
  ctx.ns = ctx.ns_explicit || ctx.config.ns.empty() ? ns_ : ctx.config.ns;
  ctx.out = &out_;
  ctx.err = &err_;
  ctx.in = &in_;
  return ctx;
}

std::function<void()> ClientCommands::Runs(int* rc, std::function<int(const CommandContext&)> command) {
  return [this, rc, command = std::move(command)] {
    auto ctx = Context();
    if (!ctx) {
      err_ << "error: " << ctx.error().message() << "\n";
      *rc = kExitUsage;
      return;
    }
    *rc = command(*ctx);
  };
}

void ClientCommands::AddTo(CLI::App& app, int* rc) {
  app.add_option("--server", flags_.server, "Tessera API server URL (else TESSERA_SERVER, else the config file)");
  app.add_option("--token", flags_.token, "Bearer token (else --token-file, TESSERA_TOKEN, the config file's context)");
  app.add_option("--token-file", flags_.token_file, "File holding the bearer token (else TESSERA_TOKEN_FILE)")
      ->type_name("FILE");
  app.add_option("--context", flags_.context, "The config file's context to use (tessera config get-contexts)")
      ->type_name("NAME");
  app.add_option("--certificate-authority", flags_.certificate_authority,
                 "PEM file of the CA that signed an https:// server's certificate (else the config file's)")
      ->type_name("FILE");
  app.add_flag("--insecure-skip-tls-verify", flags_.insecure_skip_tls_verify,
               "Do not check the server's certificate; its connection is then not secure");
  // The duration is parsed once, by the option's transform, into milliseconds.
  app.add_option("--request-timeout", flags_.request_timeout,
                 "How long to wait for each response (30s, 2m, 1h; 0, the default: no limit)")
      ->type_name("DURATION")
      ->transform(CLI::Validator(
          [](std::string& text) {
            Result<std::chrono::milliseconds> timeout = ParseRequestTimeout(text);
            if (!timeout) return timeout.error().message();
            text = std::to_string(timeout->count());
            return std::string();
          },
          ""));
  ns_option_ = app.add_option("-n,--namespace", ns_, "Namespace for namespaced kinds")->capture_default_str();

  // apply
  CLI::App* apply = AddCommand(
      app, "apply", "Create or update objects from YAML/JSON manifests (kubectl apply)",
      "tessera apply -f FILE|DIR|- [-f ...] [-n NAMESPACE] [--server-side [--force-conflicts]]",
      "Each object is created, or updated when it exists, and printed as created,\n"
      "configured or unchanged. A directory applies its *.yaml, *.yml and *.json files\n"
      "in name order; \"-\" reads standard input. Objects without metadata.namespace go to -n.\n"
      "A failed object is reported with its file and document; the others still apply.\n"
      "With --server-side the server merges each object and records which fields this\n"
      "manager (--field-manager, default tessera) owns; a field another manager set is a\n"
      "conflict, refused unless --force-conflicts.\n"
      "\nExamples:\n"
      "  tessera apply -f examples/seed/\n"
      "  tessera apply -f queues.yaml -f train-job.yaml\n"
      "  tessera apply --server-side -f queues.yaml\n"
      "  cat job.yaml | tessera apply -f -");
  apply->add_option("-f,--filename", apply_.files, "Manifest file, directory, or - for standard input (repeatable)")
      ->required()
      ->type_name("FILE");
  apply->add_flag("--server-side", apply_.server_side, "Let the server merge, and own the fields applied");
  apply->add_flag("--force-conflicts", apply_.force_conflicts, "With --server-side: take over conflicting fields");
  apply->add_option("--field-manager", apply_.field_manager, "With --server-side: the manager's name")
      ->capture_default_str();
  apply->callback(Runs(rc, [this](const CommandContext& c) { return RunApply(c, apply_); }));

  // get
  CLI::App* get = AddCommand(
      app, "get", "List objects, or show some, as a table or as YAML/JSON (kubectl get)",
      "tessera get KIND [NAME...] [-n NAMESPACE | -A] [-o wide|yaml|json|name] [-l SELECTOR] [-w]\n"
      "                   [--field-selector SELECTOR] [--show-labels] [--chunk-size N]\n"
      "       tessera get KIND/NAME...",
      Wrap("Kinds: " + KnownKinds() + ".", 88, 2) +
          "\n\nExamples:\n"
          "  tessera get clusterqueues\n"
          "  tessera get workloads -n team-nlp -o wide     # wide: why each workload waits\n"
          "  tessera get pods -A -l kueue.x-k8s.io/queue-name=team-nlp-queue\n"
          "  tessera get events -n team-nlp --field-selector involvedObject.name=job-train\n"
          "  tessera get cq gpu-cluster-queue -o yaml\n"
          "  tessera get workloads -w");
  get->add_option("KIND", get_.args, "Kind, then names (or KIND/NAME...)")->required()->type_name("");
  get->add_option("-o,--output", get_.output, "Output format: wide, yaml, json or name")
      ->check(CLI::IsMember({"wide", "yaml", "json", "name"}))
      ->type_name("FORMAT");
  get->add_option("-l,--selector", get_.selector, "Label selector: key=value, key!=value, key in (a,b), key, !key")
      ->type_name("SELECTOR");
  get->add_option("--field-selector", get_.field_selector,
                  "Field selector: spec.nodeName=NODE, status.phase!=Succeeded, involvedObject.name=NAME (events)...")
      ->type_name("SELECTOR");
  get->add_flag("--show-labels", get_.show_labels, "Show each object's labels as the last column");
  get->add_flag("-w,--watch", get_.watch, "After listing, print each change as it happens");
  get->add_flag("-A,--all-namespaces", get_.all_namespaces, "List across all namespaces");
  get->add_option("--chunk-size", get_.chunk_size, "Read lists in chunks of this many objects (0: all at once)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->type_name("N");
  get->callback(Runs(rc, [this](const CommandContext& c) {
    return IsGetTrials(get_.args) ? RunGetTrials(c, get_.args[1]) : RunGet(c, get_);  // `get trials SWEEP`
  }));

  // logs
  CLI::App* logs = AddCommand(
      app, "logs", "Print a pod's output, or a workload's or job's pods' (kubectl logs)",
      "tessera logs [-f] [--tail N] POD|WORKLOAD|JOB [-n NAMESPACE]",
      "The output is kept on the pod's node (size-capped, rotated) and read through the server.\n"
      "\nExamples:\n"
      "  tessera logs train-1                 # the pods of job train-1\n"
      "  tessera logs -f job-train-1-main-0   # follow one pod until it ends\n"
      "  tessera logs --tail 20 notebook");
  logs->add_option("NAME", logs_.name, "Pod, workload or job (job/NAME)")->required()->type_name("");
  logs->add_flag("-f,--follow", logs_.follow, "Keep streaming until the pod ends");
  logs->add_flag("-p,--previous", logs_.previous,
                 "The pod's earlier instance (before a preemption or a retry replaced it)");
  logs->add_option("--tail", logs_.tail, "Only the last N lines")->type_name("N");
  logs->callback(Runs(rc, [this](const CommandContext& c) { return RunLogs(c, logs_); }));

  // port-forward
  CLI::App* forward = AddCommand(
      app, "port-forward", "Forward local ports to a pod through the server (kubectl port-forward)",
      "tessera port-forward pod/NAME|svc/NAME [LOCAL:]REMOTE... [-n NAMESPACE]",
      "Listens on 127.0.0.1:LOCAL and relays each connection to the pod's REMOTE port over a\n"
      "WebSocket to the server (pods/portforward: edit and admin may, view may not). LOCAL is\n"
      "REMOTE when omitted; :REMOTE takes any free port. Runs until interrupted.\n"
      "\nExamples:\n"
      "  tessera port-forward pod/nb-0 8888:8888\n"
      "  tessera port-forward svc/notebook-nb1 :8888 -n team-nlp");
  forward->add_option("TARGET", port_forward_.target, "pod/NAME or svc/NAME")->required()->type_name("");
  forward->add_option("PORTS", port_forward_.ports, "[LOCAL:]REMOTE ...")->required()->type_name("");
  forward->callback(Runs(rc, [this](const CommandContext& c) { return RunPortForward(c, port_forward_); }));

  // exec
  CLI::App* exec = AddCommand(
      app, "exec", "Run a command in a running pod, process or container (kubectl exec)",
      "tessera exec pod/NAME [-c CONTAINER] [-i] [-t] [-n NAMESPACE] -- CMD [ARG...]",
      "The command runs in the pod's environment (its user, namespaces, variables, working\n"
      "directory), through the server, which checks that you may create pods/exec there\n"
      "(the edit and admin roles). Its exit code is tessera's.\n"
      "\nExamples:\n"
      "  tessera exec pod/job-train-1-main-0 -- nvidia-smi\n"
      "  echo data | tessera exec -i job-train-1-main-0 -- sh -c 'cat > input.txt'");
  exec->add_option("POD", exec_.pod, "The pod (pod/NAME or NAME)")->required()->type_name("");
  exec->add_option("COMMAND", exec_.command, "The command and its arguments, after --")->required()->type_name("");
  exec->add_option("-c,--container", exec_.container, "The container (default: the pod's first)")->type_name("NAME");
  exec->add_flag("-i,--stdin", exec_.stdin_open, "Pass stdin to the command");
  exec->add_flag("-t,--tty", exec_.tty, "Stdin is a TTY (not supported yet)");
  exec->callback(Runs(rc, [this](const CommandContext& c) { return RunExec(c, exec_); }));

  // describe
  CLI::App* describe = AddCommand(
      app, "describe", "Show objects in detail: spec, status, conditions, events (kubectl describe)",
      "tessera describe KIND [NAME...] [-n NAMESPACE | -A] [-l SELECTOR]\n"
      "       tessera describe KIND/NAME...",
      "A workload says why it is pending (the scheduler's own words) or, once admitted,\n"
      "where each pod runs: node and GPU devices. Without NAME, describes every object of\n"
      "the kind in the namespace.\n"
      "\nExamples:\n"
      "  tessera describe workload job-train-1 -n team-nlp\n"
      "  tessera describe clusterqueue gpu-cluster-queue\n"
      "  tessera describe namespace team-nlp");
  describe->add_option("KIND", describe_.args, "Kind, then names (or KIND/NAME...)")->required()->type_name("");
  describe->add_option("-l,--selector", describe_.selector, "Label selector (without names)")->type_name("SELECTOR");
  describe->add_flag("-A,--all-namespaces", describe_.all_namespaces, "Across all namespaces (without names)");
  describe->callback(Runs(rc, [this](const CommandContext& c) { return RunDescribe(c, describe_); }));

  // delete
  CLI::App* del = AddCommand(
      app, "delete", "Delete objects by name, by label selector or from manifests (kubectl delete)",
      "tessera delete KIND NAME... [-n NAMESPACE] [--ignore-not-found]\n"
      "       tessera delete KIND/NAME... | KIND -l SELECTOR | -f FILE|DIR|-",
      "Prints kind/name deleted for each object. An object that does not exist is an\n"
      "error (exit 1) unless --ignore-not-found.\n"
      "\nExamples:\n"
      "  tessera delete job train-1 -n team-nlp\n"
      "  tessera delete -f examples/seed/07-volcano-job.yaml\n"
      "  tessera delete jobs -l kueue.x-k8s.io/queue-name=team-nlp-queue -n team-nlp");
  del->add_option("KIND", delete_.args, "Kind, then names (or KIND/NAME...)")->type_name("");
  del->add_option("-f,--filename", delete_.files, "Delete the objects of these manifests")->type_name("FILE");
  del->add_option("-l,--selector", delete_.selector, "Delete the objects of KIND matching this label selector")
      ->type_name("SELECTOR");
  del->add_flag("--ignore-not-found", delete_.ignore_not_found, "Treat objects that do not exist as deleted");
  del->callback(Runs(rc, [this](const CommandContext& c) { return RunDelete(c, delete_); }));

  // submit
  CLI::App* submit = AddCommand(
      app, "submit", "Submit a command as a batch/v1 Job to a queue (no YAML needed)",
      "tessera submit NAME [--queue QUEUE] [--gpu N] [--cpu N] [--memory SIZE] [--gpu-memory SIZE]\n"
      "                      [--priority CLASS] [--type job|notebook|training|inference]\n"
      "                      [--workers N] [--retries N] [--max-run SECONDS] [-n NAMESPACE] -- COMMAND [ARGS...]",
      "Creates a Job labelled kueue.x-k8s.io/queue-name=QUEUE, with one container named\n"
      "NAME running COMMAND, requests = limits, and WORKERS pods (indexed when more than\n"
      "one). --gpu takes a fraction below one (0.25, 250m) or whole GPUs (1, 4).\n"
      "training restarts its pods OnFailure, the other types Never.\n"
      "\nExamples:\n"
      "  tessera submit nb1 --queue team-nlp-queue -n team-nlp --gpu 0.25 --type notebook -- jupyter lab\n"
      "  tessera submit train-1 --queue team-nlp-queue -n team-nlp --gpu 4 --workers 2 \\\n"
      "      --type training --priority training --max-run 86400 -- python train.py --epochs 10");
  submit->add_option("NAME", submit_.name, "Job name (also the container's)")->required()->type_name("");
  submit->add_option("COMMAND", submit_.command, "The command and its arguments, after --")->type_name("");
  submit->add_option("--queue", submit_.queue,
                     "LocalQueue to submit to (default: the namespace's LocalQueue named default, else its only one)")
      ->type_name("QUEUE");
  submit->add_option("--gpu", submit_.gpu, "GPUs per pod: 0.25, 0.5, 1, 4 ...")->type_name("N");
  submit->add_option("--cpu", submit_.cpu, "CPUs per pod: 500m, 2 ...")->capture_default_str()->type_name("N");
  submit->add_option("--memory", submit_.memory, "Memory per pod: 512Mi, 16Gi ...")
      ->capture_default_str()
      ->type_name("SIZE");
  submit->add_option("--gpu-memory", submit_.gpu_memory, "GPU memory per pod instead of a fraction: 20Gi")
      ->type_name("SIZE");
  submit->add_option("--priority", submit_.priority, "PriorityClass (`tessera get priorityclasses`)")
      ->type_name("CLASS");
  submit->add_option("--type", submit_.type, "What it is: job, notebook, training or inference")
      ->check(CLI::IsMember({"job", "notebook", "training", "inference"}))
      ->capture_default_str()
      ->type_name("TYPE");
  submit->add_option("--workers", submit_.workers, "Pods that run together")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str()
      ->type_name("N");
  submit->add_option("--retries", submit_.retries, "Pods started again after a failure before the job fails (backoffLimit)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str()
      ->type_name("N");
  submit->add_option("--max-run", submit_max_run_, "Stop it after this many seconds (activeDeadlineSeconds)")
      ->check(CLI::Range(int64_t{1}, int64_t{10} * 365 * 24 * 3600))
      ->type_name("SECONDS");
  submit->callback(Runs(rc, [this](const CommandContext& c) {
    SubmitOptions options = submit_;
    if (submit_max_run_ > 0) options.max_run_seconds = submit_max_run_;
    return RunSubmit(c, options);
  }));

  // train
  CLI::App* train = AddCommand(
      app, "train", "Start a distributed training job (a TrainingJob: one gang, torchrun's variables)",
      "tessera train NAME --workers N [--gpus-per-worker G] [--nproc-per-node P] [--queue QUEUE]\n"
      "                     [--min-workers A --max-workers B] [--cpu N] [--memory SIZE] [--priority CLASS]\n"
      "                     [--retries R] [--max-run SECONDS] [-n NAMESPACE] -- COMMAND [ARGS...]",
      "Creates a tessera.dev/v1 TrainingJob: N workers admitted together, each with MASTER_ADDR,\n"
      "MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK, NODE_RANK and PET_* (as Kubeflow sets them).\n"
      "A failed worker restarts the whole gang from its last checkpoint, up to --retries times.\n"
      "--min-workers/--max-workers: elastic, it starts with what fits at or above the minimum.\n"
      "\nExamples:\n"
      "  tessera train llm --workers 4 --gpus-per-worker 8 -- torchrun train.py\n"
      "  tessera train bert --min-workers 2 --max-workers 8 --gpus-per-worker 1 -- python train.py");
  train->add_option("NAME", train_.pod.name, "TrainingJob name (also the worker container's)")->required()->type_name("");
  train->add_option("COMMAND", train_.pod.command, "The command and its arguments, after --")->type_name("");
  train->add_option("--workers", train_.workers, "Workers (pods) in the gang")->check(CLI::Range(1, 100000))->type_name("N");
  train->add_option("--min-workers", train_.min_workers, "Elastic: the fewest workers it starts with")
      ->check(CLI::Range(1, 100000))
      ->type_name("N");
  train->add_option("--max-workers", train_.max_workers, "Elastic: the most workers")
      ->check(CLI::Range(1, 100000))
      ->type_name("N");
  train->add_option("--gpus-per-worker", train_.pod.gpu, "GPUs per worker: 1, 8, or a fraction below one")
      ->type_name("G");
  train->add_option("--nproc-per-node", train_.nproc_per_node, "Processes per worker (default: its whole GPUs)")
      ->check(CLI::Range(1, 1024))
      ->type_name("P");
  train->add_option("--queue", train_.pod.queue, "LocalQueue (default: the namespace's default queue)")
      ->type_name("QUEUE");
  train->add_option("--cpu", train_.pod.cpu, "CPUs per worker")->capture_default_str()->type_name("N");
  train->add_option("--memory", train_.pod.memory, "Memory per worker")->capture_default_str()->type_name("SIZE");
  train->add_option("--priority", train_.pod.priority, "PriorityClass")->type_name("CLASS");
  train->add_option("--retries", train_.retries, "Gang restarts before it fails (backoffLimit)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str()
      ->type_name("R");
  train->add_option("--max-run", train_max_run_, "Stop it after this many seconds (activeDeadlineSeconds)")
      ->check(CLI::Range(int64_t{1}, int64_t{10} * 365 * 24 * 3600))
      ->type_name("SECONDS");
  train->callback(Runs(rc, [this](const CommandContext& c) {
    TrainOptions options = train_;
    if (train_max_run_ > 0) options.pod.max_run_seconds = train_max_run_;
    return RunTrain(c, options);
  }));

  // queues
  CLI::App* queues = AddCommand(
      app, "queues", "Show each ClusterQueue's quota and usage per flavor and resource",
      "tessera queues [CLUSTERQUEUE...]",
      "Columns: NOMINAL quota, RESERVED (the part never lent to the cohort: nominal minus\n"
      "lendingLimit; lendingLimit 0 reserves it all), USED and BORROWED (from the queue's status), and the\n"
      "queue's PENDING and ADMITTED workloads. GPUs print as they are requested (0.25, 8).\n"
      "\nExamples:\n"
      "  tessera queues\n"
      "  tessera queues gpu-cluster-queue");
  queues->add_option("CLUSTERQUEUE", queues_.names, "Only these ClusterQueues")->type_name("");
  queues->callback(Runs(rc, [this](const CommandContext& c) { return RunQueues(c, queues_); }));

  // top
  CLI::App* top = AddCommand(
      app, "top", "Show GPU allocation and utilisation per node and per namespace",
      "tessera top",
      "From the server's /metrics: per node its GPUs, how much is allocated and how busy\n"
      "they are (the agents' samples); per namespace the GPUs it holds, the GPUs it keeps\n"
      "busy (allocation x utilisation) and its pending workloads.\n"
      "\nExamples:\n"
      "  tessera top");
  top->callback(Runs(rc, [this](const CommandContext& c) { return RunTop(c); }));

  // resume
  CLI::App* resume = AddCommand(
      app, "resume", "Bring back a workload suspended for being idle", "tessera resume WORKLOAD|JOB [-n NS]",
      "Notebooks whose GPUs stay idle past their idle timeout are suspended: their GPUs\n"
      "are freed and their checkpoint directory kept. This queues them again.\n"
      "\nExamples:\n"
      "  tessera resume nb1 -n team-nlp");
  resume->add_option("NAME", resume_name_, "The workload, or the Job it was made from")->required()->type_name("");
  resume->callback(Runs(rc, [this](const CommandContext& c) { return RunResume(c, resume_name_); }));

  // rollout undo
  CLI::App* rollout = AddCommand(app, "rollout", "Manage an InferenceService's rollout: undo",
                                 "tessera rollout undo isvc/NAME [-n NAMESPACE]",
                                 "Examples:\n  tessera rollout undo isvc/llm -n team-nlp");
  rollout->require_subcommand(1);
  CLI::App* undo = AddCommand(
      *rollout, "undo", "Put an InferenceService's template back to its last fully ready revision",
      "tessera rollout undo isvc/NAME [-n NAMESPACE]",
      "As kubectl rollout undo: spec.template goes back to the last revision whose replicas\n"
      "were all ready (or, when the current revision is that one, to the one before it);\n"
      "the rollout then runs as for any template change.\n"
      "\nExamples:\n  tessera rollout undo isvc/llm");
  undo->add_option("TARGET", rollout_target_, "isvc/NAME")->required()->type_name("");
  undo->callback(Runs(rc, [this](const CommandContext& c) { return RunRolloutUndo(c, rollout_target_); }));

  // report usage
  CLI::App* report = AddCommand(app, "report", "Reports: GPU usage and cost", "tessera report usage [flags]",
                                "Examples:\n  tessera report usage --since 7d --by team");
  report->require_subcommand(1);
  CLI::App* usage = AddCommand(
      *report, "usage", "GPU-hours and cost per team, flavor, user or ClusterQueue over a window",
      "tessera report usage [--since WHEN] [--until WHEN] [--by team|flavor|user|queue] [-o table|csv|json]",
      "From the usage records the server keeps for every admission (who held which GPUs,\n"
      "of which flavor, from when to when). WHEN is a duration ago (24h, 7d), a date\n"
      "(2026-11-29) or an RFC 3339 time. Cost is GPU-hours x the flavor's price per\n"
      "GPU-hour, set by an admin as the ResourceFlavor annotation\n"
      "tessera.dev/price-per-gpu-hour (spot and on-demand flavors differ).\n"
      "\nExamples:\n"
      "  tessera report usage\n"
      "  tessera report usage --since 2026-11-01 --until 2026-12-01 --by flavor -o csv");
  usage->add_option("--since", report_usage_.since, "Start of the window (default 24h before --until)");
  usage->add_option("--until", report_usage_.until, "End of the window (default now)");
  usage->add_option("--by", report_usage_.by, "Group by team (namespace), flavor, user or queue");
  usage->add_option("-o,--output", report_usage_.output, "table, csv or json");
  usage->callback(Runs(rc, [this](const CommandContext& c) { return RunReportUsage(c, report_usage_); }));
  CLI::App* trace = AddCommand(
      *report, "trace", "The jobs that ran over a window, as a trace tessera sim replays",
      "tessera report trace [--since WHEN] [--until WHEN] [-o FILE]",
      "One row per workload submitted in the window that held GPUs (from the usage\n"
      "records, which outlive their workloads), in tessera sim's csv format: submitted,\n"
      "run time, GPUs and pods, team (namespace), queue, user, priority class, CPU and\n"
      "memory. Workloads that never ran are left out (their run time is unknown).\n"
      "The portal's What if view replays the same history on the server.\n"
      "\nExamples:\n"
      "  tessera report trace --since 7d -o last-week.csv\n"
      "  tessera sim --trace last-week.csv --format csv --cluster 4x8xH100-80GB --teams\n"
      "  (docs/simulator.md: with --policy, your own queues' manifests from tessera get)");
  trace->add_option("--since", report_trace_.since, "Start of the window (default 7d before --until)");
  trace->add_option("--until", report_trace_.until, "End of the window (default now)");
  trace->add_option("-o,--output", report_trace_.out, "Write the trace to FILE (default: standard output)");
  trace->callback(Runs(rc, [this](const CommandContext& c) { return RunReportTrace(c, report_trace_); }));
  CLI::App* sweep = AddCommand(*report, "sweep", "A Sweep's objective per trial, and the best so far, as SVG",
                               "tessera report sweep NAME [-n NAMESPACE] [-o FILE]",
                               "Examples:\n  tessera report sweep lr-search -o lr-search.svg");
  sweep->add_option("NAME", report_sweep_.name, "The Sweep")->required()->type_name("");
  sweep->add_option("-o,--output", report_sweep_.output, "The SVG file (default: stdout)")->type_name("FILE");
  sweep->callback(Runs(rc, [this](const CommandContext& c) { return RunReportSweep(c, report_sweep_); }));

  AddNotebookCommands(app, rc);
  AddAuthCommands(app, rc);
}

void ClientCommands::AddNotebookCommands(CLI::App& app, int* rc) {
  const std::string create_usage =
      "NAME [--gpu N | --gpu-memory SIZE] [--image IMAGE] [--cpu N] [--memory SIZE]\n"
      "                     [--home-size SIZE [--home-path DIR]] [--idle-timeout DURATION] [--queue QUEUE]\n"
      "                     [--priority CLASS] [-n NAMESPACE] [-- COMMAND [ARGS...]]";
  const std::string create_footer =
      "Creates a tessera.dev/v1 Notebook: Jupyter Lab (or COMMAND, which finds its base URL in\n"
      "NOTEBOOK_BASE_URL and its port in NOTEBOOK_PORT) with a fraction of a GPU, served through\n"
      "the server's proxy to the namespace's members. --home-size: a volume (NAME-home) that\n"
      "outlives the pod. --idle-timeout: suspended when its GPU and kernels stay quiet that long\n"
      "(default 1h; 0: never); `tessera notebook open` resumes it.\n"
      "\nExamples:\n"
      "  tessera notebook create nb1 --gpu 0.25 --home-size 10Gi --idle-timeout 30m\n"
      "  tessera notebook open nb1";
  auto add_create_flags = [this, rc](CLI::App* cmd) {
    cmd->add_option("NAME", notebook_.name, "Notebook name")->required()->type_name("");
    cmd->add_option("COMMAND", notebook_.command, "The command and its arguments, after -- (default: Jupyter Lab)")
        ->type_name("");
    cmd->add_option("--gpu", notebook_.gpu, "GPUs: 0.25, 0.5, 1, 2 ...")->type_name("N");
    cmd->add_option("--gpu-memory", notebook_.gpu_memory, "GPU memory instead of a fraction: 20Gi")->type_name("SIZE");
    cmd->add_option("--image", notebook_.image, "Container image (default: run on the node, no image)")
        ->type_name("IMAGE");
    cmd->add_option("--cpu", notebook_.cpu, "CPUs (default 1)")->type_name("N");
    cmd->add_option("--memory", notebook_.memory, "Memory (default 4Gi)")->type_name("SIZE");
    cmd->add_option("--home-size", notebook_.home_size, "A home volume of this size, kept when suspended or deleted")
        ->type_name("SIZE");
    cmd->add_option("--home-path", notebook_.home_path, "Where the home volume is mounted (default /home/jovyan)")
        ->type_name("DIR");
    cmd->add_option("--idle-timeout", notebook_.idle_timeout, "Suspend after GPU and kernels are quiet this long (0: never)")
        ->type_name("DURATION");
    cmd->add_option("--queue", notebook_.queue, "LocalQueue (default: the namespace's default queue)")->type_name("QUEUE");
    cmd->add_option("--priority", notebook_.priority, "PriorityClass")->type_name("CLASS");
    cmd->callback(Runs(rc, [this](const CommandContext& c) { return RunNotebookCreate(c, notebook_); }));
  };
  CLI::App* notebook = AddCommand(app, "notebook", "Interactive notebooks: create, open, suspend, resume",
                                  "tessera notebook create|open|suspend|resume NAME ...",
                                  "Examples:\n  tessera notebook create nb1 --gpu 0.25\n  tessera notebook open nb1\n"
                                  "  tessera get notebooks");
  notebook->require_subcommand(1);
  add_create_flags(AddCommand(*notebook, "create", "Create a notebook (a tessera.dev/v1 Notebook)",
                              "tessera notebook create " + create_usage, create_footer));
  CLI::App* open = AddCommand(*notebook, "open", "Print the URL a notebook is served on, resuming it when suspended",
                              "tessera notebook open NAME [-n NAMESPACE]",
                              "The URL is the server's proxy path for the notebook's Service; only members of\n"
                              "its namespace reach it. A suspended notebook is resumed first.\n"
                              "\nExamples:\n  tessera notebook open nb1 -n team-nlp");
  open->add_option("NAME", notebook_name_, "The Notebook")->required()->type_name("");
  open->add_flag("--print", open_.print_only, "Print the URL only; do not start a browser");
  open->callback(Runs(rc, [this](const CommandContext& c) {
    return RunNotebookOpen(c, notebook_name_, open_.print_only);
  }));
  CLI::App* open_any = AddCommand(
      app, "open", "Open a notebook, Service or pod through the server's proxy, logged in",
      "tessera open NAME | svc/NAME[:PORT] | pod/NAME[:PORT] [-n NAMESPACE] [--print]",
      "Prints (and, with a desktop and xdg-open, opens) a URL of the server's proxy that logs the\n"
      "browser in once: a single-use code, valid 60 seconds, traded for an HttpOnly cookie on that\n"
      "path. NAME alone is a notebook (resumed when suspended).\n"
      "\nExamples:\n  tessera open nb1 -n team-nlp\n  tessera open svc/web:http\n  tessera open pod/nb1-0:8888 --print");
  open_any->add_option("TARGET", open_.target, "NAME, svc/NAME[:PORT] or pod/NAME[:PORT]")->required()->type_name("");
  open_any->add_flag("--print", open_.print_only, "Print the URL only; do not start a browser");
  open_any->callback(Runs(rc, [this](const CommandContext& c) { return RunOpen(c, open_); }));
  for (const bool suspend : {true, false}) {
    CLI::App* cmd = AddCommand(
        *notebook, suspend ? "suspend" : "resume",
        suspend ? "Stop a notebook: its GPU freed, its home volume kept" : "Start a suspended notebook again",
        fmt::format("tessera notebook {} NAME [-n NAMESPACE]", suspend ? "suspend" : "resume"),
        suspend ? "Examples:\n  tessera notebook suspend nb1" : "Examples:\n  tessera notebook resume nb1");
    cmd->add_option("NAME", notebook_name_, "The Notebook")->required()->type_name("");
    cmd->callback(Runs(rc, [this, suspend](const CommandContext& c) {
      return RunNotebookSuspend(c, notebook_name_, suspend);
    }));
  }
  // run TEMPLATE NAME: from the catalogue; run notebook: the same as notebook create.
  CLI::App* run = AddCommand(
      app, "run", "Start something from a template of the catalogue (tessera get templates)",
      "tessera run TEMPLATE NAME [--set KEY=VALUE]... [--gpu G] [--image IMAGE] [--cpu C] [--memory M]\n"
      "                   [--dry-run] [-n NAMESPACE] [-- COMMAND [ARGS...]]\n"
      "       tessera run notebook " + create_usage,
      "TEMPLATE is a tessera.dev/v1 Template: `tessera get templates` lists them and their knobs\n"
      "(PARAMETERS), `tessera describe template T` says what each means. --gpu, --image, --cpu and\n"
      "--memory set the knobs of those names; the words after -- are the template's command.\n"
      "The server renders the object; it is created with your rights, in your namespace.\n"
      "\nExamples:\n"
      "  tessera run jupyter nb1 --gpu 0.25 --set home-size=20Gi\n"
      "  tessera run pytorch-ddp llm --set workers=8 --image registry.local/train:1 -- torchrun train.py\n"
      "  tessera run batch prep --gpu 0 --dry-run -- python3 prep.py\n"
      "  tessera run notebook nb1 --gpu 0.25");
  run->add_option("TEMPLATE", run_.template_name, "The template (tessera get templates)")->type_name("");
  run->add_option("NAME", run_.name, "The name of what it makes")->type_name("");
  run->add_option("COMMAND", run_.command, "The command and its arguments, after --")->type_name("");
  run->add_option("--set", run_.set, "A knob of the template: KEY=VALUE (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);  // one KEY=VALUE each: what follows is not its
  run->add_option("--gpu", run_.gpu, "GPUs (--set gpu=...): 0.25, 1, 8")->type_name("N");
  run->add_option("--image", run_.image, "Container image (--set image=...)")->type_name("IMAGE");
  run->add_option("--cpu", run_.cpu, "CPUs (--set cpu=...)")->type_name("N");
  run->add_option("--memory", run_.memory, "Memory (--set memory=...)")->type_name("SIZE");
  run->add_flag("--dry-run", run_.dry_run, "Print what it would create (YAML), create nothing");
  run->callback([this, run, rc] {
    if (!run->get_subcommands().empty()) return;  // run notebook: its own callback ran
    Runs(rc, [this](const CommandContext& c) {
      if (run_.template_name.empty() || run_.name.empty()) {
        *c.err << "error: give a TEMPLATE and a NAME (tessera run jupyter nb1 --gpu 0.25); "
                  "`tessera get templates` lists the catalogue\n";
        return kExitUsage;
      }
      return RunTemplate(c, run_);
    })();
  });
  add_create_flags(AddCommand(*run, "notebook", "Create a notebook (as `tessera notebook create`)",
                              "tessera run notebook " + create_usage, create_footer));
}

void ClientCommands::AddAuthCommands(CLI::App& app, int* rc) {
  // approve, deny
  for (const bool approve : {true, false}) {
    CLI::App* cmd = AddCommand(
        app, approve ? "approve" : "deny",
        approve ? "Approve a workload that waits at an approval gate" : "Deny a workload that waits at an approval gate",
        approve ? "tessera approve NAME [-n NAMESPACE] [--reason TEXT]" : "tessera deny NAME --reason TEXT [-n NAMESPACE]",
        "NAME is the ApprovalRequest's (its workload's), or a Job's. Who decided, when and why\n"
        "is kept on the request and in the audit log. A policy may need approvals from\n"
        "several people; the requester's own does not count unless it allows it.\n"
        "\nExamples:\n"
        "  tessera get approvalrequests -n team-nlp\n"
        "  tessera approve train-big -n team-nlp --reason 'quarterly model, budgeted'\n"
        "  tessera deny train-big -n team-nlp --reason 'use the spot flavor'");
    cmd->add_option("NAME", approve_.name, "The ApprovalRequest, or a Job")->required()->type_name("");
    CLI::Option* reason = cmd->add_option("--reason", approve_.reason, "Why (kept with the decision)");
    if (!approve) reason->required();
    cmd->callback(Runs(rc, [this, approve](const CommandContext& c) {
      ApproveOptions options = approve_;
      options.approve = approve;
      return RunApprove(c, options);
    }));
  }

  // auth can-i, auth whoami
  CLI::App* auth = AddCommand(app, "auth", "Inspect authorization: what you may do, and who you are (kubectl auth)",
                              "tessera auth can-i|whoami ...",
                              "Examples:\n  tessera auth can-i create jobs -n team-nlp\n  tessera auth whoami");
  auth->require_subcommand(1);
  CLI::App* can_i = AddCommand(
      *auth, "can-i", "Check whether an action is allowed (kubectl auth can-i)",
      "tessera auth can-i VERB TYPE[/NAME] | VERB /URL [--subresource S] [-n NS | -A] [-q]\n"
      "       tessera auth can-i --list [-n NS]",
      "Prints yes (exit 0) or no (exit 1), as RBAC decides for you in the namespace.\n"
      "\nExamples:\n"
      "  tessera auth can-i create jobs -n team-nlp\n"
      "  tessera auth can-i get pods --subresource log\n"
      "  tessera auth can-i list clusterqueues\n"
      "  tessera auth can-i update approvalrequests --subresource approval -n team-nlp\n"
      "  tessera auth can-i get /metrics\n"
      "  tessera auth can-i --list -n team-nlp");
  can_i->add_option("ARGS", can_i_.args, "VERB, then TYPE, TYPE/NAME or a /URL")->type_name("");
  can_i->add_option("--subresource", can_i_.subresource, "A subresource: log, status, token, approval")
      ->type_name("S");
  can_i->add_flag("-A,--all-namespaces", can_i_.all_namespaces, "Ask for every namespace (cluster-wide)");
  can_i->add_flag("--list", can_i_.list, "List every action you may take in the namespace");
  can_i->add_flag("-q,--quiet", can_i_.quiet, "Print nothing: the exit code says");
  can_i->callback(Runs(rc, [this](const CommandContext& c) { return RunCanI(c, can_i_); }));
  CLI::App* whoami = AddCommand(*auth, "whoami", "Show who the server takes you for (kubectl auth whoami)",
                                "tessera auth whoami [-o yaml|json]",
                                "Your user name, uid, groups and extra attributes, from the server.");
  whoami->add_option("-o,--output", whoami_output_, "yaml or json")->check(CLI::IsMember({"yaml", "json"}));
  whoami->callback(Runs(rc, [this](const CommandContext& c) { return RunWhoAmI(c, whoami_output_); }));

  // create token, create node-token
  CLI::App* create = AddCommand(app, "create", "Create credentials: ServiceAccount tokens and node credentials",
                                "tessera create token|node-token NAME [flags]",
                                "Examples:\n  tessera create token builder -n team-nlp --duration 24h");
  create->require_subcommand(1);
  CLI::App* token = AddCommand(
      *create, "token", "Request a ServiceAccount token (kubectl create token)",
      "tessera create token SERVICEACCOUNT [-n NS] [--duration D] [--audience A]... [--bound-object-kind Pod "
      "--bound-object-name P]",
      "Prints a signed token (a JWT) for the ServiceAccount, valid for --duration (1h by\n"
      "default, 10m at least). It stops working when the ServiceAccount (or the bound pod)\n"
      "is deleted.\n"
      "\nExamples:\n"
      "  tessera create token default -n team-nlp\n"
      "  tessera create token ci -n team-nlp --duration 24h > ci.token");
  token->add_option("SERVICEACCOUNT", create_token_.name, "The ServiceAccount")->required()->type_name("");
  token->add_option("--duration", create_token_.duration, "How long it is valid (10m, 24h); default 1h")
      ->type_name("D");
  token->add_option("--audience", create_token_.audiences, "An audience of the token (repeatable)")->type_name("A");
  token->add_option("--bound-object-kind", create_token_.bound_object_kind, "Bind it to an object of this kind: Pod")
      ->check(CLI::IsMember({"Pod"}));
  token->add_option("--bound-object-name", create_token_.bound_object_name, "The object it is bound to");
  token->add_option("--bound-object-uid", create_token_.bound_object_uid, "Its uid, to be sure it is that one");
  token->callback(Runs(rc, [this](const CommandContext& c) { return RunCreateToken(c, create_token_); }));
  CLI::App* node_token = AddCommand(
      *create, "node-token", "Make the credential of a node's agent (an admin's task)",
      "tessera create node-token NODE [--duration D]",
      "Prints a credential for `tessera agent --node NODE --token-file FILE`: the agent\n"
      "authenticates as system:node:NODE and may touch only its own Node, its Lease and the\n"
      "pods bound to it. Valid a year unless --duration says otherwise. Keep it in a file\n"
      "only root can read (mode 0600).\n"
      "\nExamples:\n"
      "  (umask 077; tessera create node-token gpu-07 > /etc/tessera/node.token)");
  node_token->add_option("NODE", create_token_.name, "The node's name")->required()->type_name("");
  node_token->add_option("--duration", create_token_.duration, "How long it is valid (8760h: a year)")->type_name("D");
  node_token->callback(Runs(rc, [this](const CommandContext& c) { return RunCreateNodeToken(c, create_token_); }));

  // kubeconfig
  CLI::App* kubeconfig = AddCommand(
      app, "kubeconfig", "Print a kubeconfig for kubectl: this context's server, CA, token and namespace",
      "tessera kubeconfig [-n NS] [-o FILE] [--name NAME]",
      "kubectl sends a token only over TLS: the context's server must be its https:// URL, with\n"
      "the server's CA (--certificate-authority, or the context's), which goes into the file.\n"
      "`tessera up` writes the admin's as <data>/kubeconfig.\n"
      "\nExamples:\n"
      "  tessera kubeconfig -n team-nlp -o ~/.kube/team-nlp.yaml\n"
      "  KUBECONFIG=~/.kube/team-nlp.yaml kubectl get workloads");
  kubeconfig->add_option("-o,--output", kubeconfig_.output, "Write it to FILE (mode 0600) instead of printing it")
      ->type_name("FILE");
  kubeconfig->add_option("--name", kubeconfig_.name, "Its cluster, user and context name (default tessera)");
  kubeconfig->callback(Runs(rc, [this](const CommandContext& c) { return RunKubeconfig(c, kubeconfig_); }));

  // config
  CLI::App* config = AddCommand(app, "config", "Manage the CLI's contexts: servers, credentials, namespaces",
                                "tessera config get-contexts|current-context|use-context|set-context|delete-context|view",
                                "The contexts live in " + DefaultConfigPath() + " (mode 0600), as a kubeconfig's do.\n"
                                "\nExamples:\n"
                                "  tessera config set-context team-nlp --server https://127.0.0.1:7070 \\\n"
                                "      --token-file ~/alice.token --namespace team-nlp\n"
                                "  tessera config use-context team-nlp\n"
                                "  tessera config get-contexts");
  config->require_subcommand(1);
  auto path = [] { return DefaultConfigPath(); };
  AddCommand(*config, "get-contexts", "List the contexts", "tessera config get-contexts", "")
      ->callback([this, rc, path] { *rc = RunGetContexts(path(), out_, err_); });
  AddCommand(*config, "current-context", "Print the current context", "tessera config current-context", "")
      ->callback([this, rc, path] { *rc = RunCurrentContext(path(), out_, err_); });
  CLI::App* use = AddCommand(*config, "use-context", "Make a context the current one", "tessera config use-context NAME", "");
  use->add_option("NAME", context_name_, "The context")->required()->type_name("");
  use->callback([this, rc, path] { *rc = RunUseContext(path(), context_name_, out_, err_); });
  CLI::App* set = AddCommand(*config, "set-context", "Create or change a context",
                             "tessera config set-context NAME|--current [--server URL] [--token-file FILE | --token T]\n"
                             "                              [--namespace NS] [--certificate-authority FILE]",
                             "");
  set->add_option("NAME", set_context_.name, "The context")->type_name("");
  set->add_flag("--current", set_context_.current, "Change the current context");
  set->add_option("--server", set_context_.server, "Its server URL");
  set->add_option("--token", set_context_.token, "Its bearer token (kept in the file)");
  set->add_option("--token-file", set_context_.token_file, "A file holding its bearer token")->type_name("FILE");
  set->add_option("--namespace", set_context_.ns, "Its default namespace");
  set->add_option("--certificate-authority", set_context_.certificate_authority, "The CA of its server")
      ->type_name("FILE");
  set->add_flag("--insecure-skip-tls-verify", set_context_.insecure_skip_tls_verify, "Do not check its certificate");
  set->callback([this, rc, path] { *rc = RunSetContext(path(), set_context_, out_, err_); });
  CLI::App* del = AddCommand(*config, "delete-context", "Remove a context", "tessera config delete-context NAME", "");
  del->add_option("NAME", context_name_, "The context")->required()->type_name("");
  del->callback([this, rc, path] { *rc = RunDeleteContext(path(), context_name_, out_, err_); });
  AddCommand(*config, "view", "Show the config file (tokens redacted)", "tessera config view", "")
      ->callback([this, rc, path] { *rc = RunViewConfig(path(), out_, err_); });
}

namespace {

// CLI11 answers an unknown command with "A subcommand is required": say what
// kubectl says instead, with the commands it was close to.
bool RefuseUnknownCommand(CLI::App& app, std::string_view word, std::ostream& err) {
  std::vector<std::string_view> shown;  // the commands --help lists (hidden ones have no group)
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->check_name(std::string(word))) return false;
    if (!sub->get_group().empty()) shown.push_back(sub->get_name());
  }
  err << fmt::format("error: unknown command \"{}\" for \"tessera\"\n", word);
  if (auto close = Suggest(word, shown)) err << fmt::format("\nDid you mean this?\n\t{}\n\n", *close);
  err << "Run 'tessera --help' for usage.\n";
  return true;
}

}  // namespace

int ParseAndRun(CLI::App& app, int argc, const char* const* argv, const int& rc, std::ostream& out,
                std::ostream& err) {
  if (argc < 2) {
    out << app.help();  // as kubectl does, alone
    return kExitOk;
  }
  // The command is the first word that is not a global flag or a flag's value.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with('-')) {
      if (RefuseUnknownCommand(app, arg, err)) return kExitUsage;
      break;
    }
    const CLI::Option* option = arg.find('=') == std::string_view::npos ? app.get_option_no_throw(std::string(arg)) : nullptr;
    if (option == nullptr) continue;  // --flag=value, or not the app's own: CLI11 says what is wrong
    if (option->get_items_expected_min() > 0) ++i;  // its value
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return rc;
}

}  // namespace tessera
