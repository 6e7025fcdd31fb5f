#include "model/collective_bytes.h"

namespace harmonics {

double collective_buffer_bytes(Collective c, double count_bytes, int n) {
    const bool per_rank = c == Collective::AllGather || c == Collective::ReduceScatter;
    return per_rank && n > 1 ? count_bytes * n : count_bytes;
}

double ring_edge_bytes(Collective c, double buffer_bytes, int n) {
    if (c == Collective::SendRecv) return buffer_bytes;
    if (n <= 1) return 0.0;
    switch (c) {
        case Collective::AllReduce: return 2.0 * (n - 1) / n * buffer_bytes;
        case Collective::AllGather:
        case Collective::ReduceScatter: return (n - 1.0) / n * buffer_bytes;
        default: return buffer_bytes;
    }
}

}  // namespace harmonics
