// `tessera demo`: runs the scheduler core on a generated fleet and prints what it
// decided. Stands in for `tessera up` until the server exists.
#pragma once

#include <ostream>

namespace tessera {

struct DemoOptions {
  int nodes = 16;
  int workloads = 300;
  int queues = 3;
  unsigned long seed = 42;
};

int RunDemo(const DemoOptions& options, std::ostream& out);

}  // namespace tessera
