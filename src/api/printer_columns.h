// The table columns of each kind, as `tessera get` prints them and, later, as
// the server serves kubectl's Table output: modelled on CRDs'
// additionalPrinterColumns (a name, a type, a priority, a description) and on
// kubectl's own printers, plus what a GPU platform needs. Each kind declares its
// columns in its definition (api/kind_definition.h, api/kinds/*.cc); a few:
//
//   nodes            NAME STATUS GPUS GPU MODEL AGE             (wide: CPU MEMORY)
//   workloads        NAME QUEUE RESERVED IN ADMITTED FINISHED POSITION REASON AGE (wide:
//                    PRIORITY, MESSAGE: why it waits); POSITION is its place in its
//                    ClusterQueue, REASON the QuotaReserved condition's; PRIORITY the
//                    class named, else the priority it runs at (api/workload_priority.h)
//   jobs (batch)     NAME QUEUE STATUS COMPLETIONS DURATION AGE (wide: CONTAINERS COMMAND)
//   pods             NAME READY STATUS RESTARTS AGE NODE        (wide: IP before NODE, GPUS,
//                    GPU DEVICES)
//   events           LAST SEEN TYPE REASON OBJECT MESSAGE
//   most others      NAME AGE (DefaultColumns)
// With all namespaces, NAMESPACE comes first; with labels shown, LABELS last. A
// field the object lacks prints as kubectl prints it for that column (empty,
// <none> or a default such as BestEffortFIFO).
//
// Thread-safety: pure functions over the immutable definitions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/kinds.h"

namespace tessera {

struct ColumnOptions {
  bool wide = false;
  bool with_namespace = false;   // -A: a NAMESPACE column first
  int64_t now = 0;               // for AGE and DURATION (seconds since the epoch)
  int64_t default_priority = 0;  // the globalDefault PriorityClass's value (0: none), for workloads' PRIORITY
  bool show_labels = false;      // --show-labels: a LABELS column last
};

// additionalPrinterColumns' types, as far as the cells are: text, a count, or a
// time shown as an age.
enum class ColumnType { kString, kInteger, kDate };

// The text of one cell; never throws, whatever the object holds.
using CellFn = std::function<std::string(const nlohmann::json& object, const ColumnOptions& options)>;

struct PrinterColumn {
  std::string_view name;  // the header: "NAME", "GPU MODEL"
  ColumnType type = ColumnType::kString;
  int priority = 0;  // 0: always shown; 1: only in wide output (-o wide)
  std::string description;  // for people: what the cell shows
  CellFn cell;
};

// Column builders for the definitions.
PrinterColumn NameColumn();  // metadata.name
PrinterColumn AgeColumn();   // since metadata.creationTimestamp
// The field at a dotted `path` as text ("spec.cohort"), `fallback` when absent;
// described by its path (".spec.cohort", as a CRD's jsonPath) unless told.
PrinterColumn FieldColumn(std::string_view name, std::string path, std::string fallback = "", int priority = 0,
                          ColumnType type = ColumnType::kString, std::string description = "");
// NAME and AGE: the columns of a kind that declares nothing more.
std::vector<PrinterColumn> DefaultColumns();

// The status of the condition of `type` in status.conditions ("True"), `fallback` when absent.
std::string ConditionStatus(const nlohmann::json& object, std::string_view type, std::string_view fallback = "");

// The kind's columns: its definition's, or NAME and AGE.
const std::vector<PrinterColumn>& ColumnsFor(const KindInfo& kind);

// The headers and the cells of one object, for `kind`'s columns (its
// definition's; NAME and AGE for a kind without one) under `options`.
std::vector<std::string> TableHeaders(const KindInfo& kind, const ColumnOptions& options);
std::vector<std::string> TableRow(const KindInfo& kind, const nlohmann::json& object, const ColumnOptions& options);

// Why a workload waits, in the scheduler's words: the message of the
// QuotaReserved or Admitted condition when that condition is not True; "" when
// admitted or when the server has said nothing yet.
std::string PendingMessage(const nlohmann::json& workload);

}  // namespace tessera
