// Built without protobuf-c: no wire protocol, so no schedd link. The plugin
// still measures, traces and never gates.
#include "log.h"
#include "state.h"

namespace hnccl {

void link_main(Plugin*) {
  log_once(Once::Schedd, "built without protobuf-c: no harmonics-schedd link, running ungated");
}

}  // namespace hnccl
