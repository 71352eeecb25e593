// `tessera run TEMPLATE NAME [--set KEY=VALUE]... [--gpu G] [--image I]
//  [--cpu C] [--memory M] [--dry-run] [-n NS] [-- COMMAND ARGS...]`:
// one object from the catalogue (tessera.dev/v1 Template, api/templates.h).
// The server renders it (templates/TEMPLATE/render) from the knobs given
// (--gpu, --image, --cpu and --memory are --set gpu=..., and so on; the words
// after -- are the template's "command"), then the CLI creates it with the
// caller's own rights and prints `KIND/NAME created from template TEMPLATE`;
// --dry-run prints the object (YAML) instead. `tessera get templates` lists
// the catalogue and each template's knobs.
#pragma once

#include <string>
#include <vector>

#include "cli/commands/command_context.h"

namespace tessera {

struct RunTemplateOptions {
  std::string template_name;
  std::string name;
  std::vector<std::string> set;  // KEY=VALUE
  std::string gpu, image, cpu, memory;
  std::vector<std::string> command;  // after --
  bool dry_run = false;
};

int RunTemplate(const CommandContext& ctx, const RunTemplateOptions& options);

}  // namespace tessera
