// Built without nvcc: no gate kernel. cuda_gate_prepare() says so once and
// the plugin measures only (or uses the host gate when asked to).
#include "cuda_gate.h"

namespace hnccl {

const unsigned char harmonics_gate_fatbin[1] = {0};
const unsigned long harmonics_gate_fatbin_size = 0;

}  // namespace hnccl
