// A kind, described once (DESIGN.md section 4): what the registry (kinds.h)
// knows of it, its schema and cross-field checks, what an update may not change,
// its printer columns, what the default roles grant on it, and the controller
// that owns its behaviour. Validation (validation.h), the tables of `tessera get`
// (printer_columns.h) and the default ClusterRoles (auth/bootstrap_policy.h) read
// them from here, not from tables of their own.
//
// The definitions live one file per API group under api/kinds/ (core.cc,
// batch.cc, kueue.cc, ...), each exporting the group's definitions
// (api/kinds/groups.h); the registry (kinds.cc) concatenates them in lookup
// priority order (core, then the built-in groups, then the ecosystem's CRD
// groups, then tessera.dev). To add a kind, add its definition to its group's
// file (docs/architecture.md, "Adding a kind").
//
// Invariants: every registered kind has exactly one definition, with a schema;
// definition.info is the same kind as the KindInfo the lookups return (equal
// fields; the lookups' pointers are into AllKinds(), not into the definitions).
//
// Thread-safety: the definitions are built once (thread-safe static
// initialisation) and immutable; every function is safe from any thread, and
// pointers stay valid for the life of the program.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "api/printer_columns.h"
#include "api/role_grants.h"
#include "api/schema.h"
#include "common/status.h"

namespace tessera {

// A rule an update must keep, checked by ValidateUpdate after the new object
// passed ValidateObject: OK, or InvalidArgument naming the field that may not
// change ("roleRef: Invalid value: ...: cannot change roleRef").
using UpdateRule =
    std::function<Status(const KindInfo& kind, const nlohmann::json& stored, const nlohmann::json& next)>;

struct KindDefinition {
  KindInfo info;
  // The whole object (api/common_schemas.h Root): its fields and, as the
  // schema's checks, the cross-field rules.
  schema::SchemaRef schema;
  // What ValidateUpdate enforces, in order; the first refusal is the answer.
  std::vector<UpdateRule> update_rules;
  // The table columns (api/printer_columns.h), in order; at least NAME and AGE
  // (DefaultColumns) unless the kind prints as kubectl prints it otherwise
  // (Events: LAST SEEN TYPE REASON OBJECT MESSAGE).
  std::vector<PrinterColumn> columns;
  // What the default roles grant on it (api/role_grants.h); every kind declares
  // it, NoDefaultRoles() included. nullopt only in a definition that forgot
  // (tests/api/kinds_test.cc refuses it).
  std::optional<RoleGrants> roles;
  // The server's controller that gives the kind its behaviour, for docs and
  // `describe` ("job-controller"); empty when the kind is only stored and read.
  std::string_view controller;
};

// Every definition, in lookup-priority order (the order of AllKinds()).
std::span<const KindDefinition> AllDefinitions();

// The definition of a registered kind: `kind` may be a pointer the lookups
// returned, or any KindInfo with a registered store key. nullptr when unknown.
const KindDefinition* FindDefinition(const KindInfo& kind);

}  // namespace tessera
