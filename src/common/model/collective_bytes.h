// How many bytes one collective puts on each edge of its ring: the quantity
// the traffic model, harmonics-schedd and the NCCL hook's reports all mean by
// "bytes per ring edge". A ring edge carries what one rank sends, so this is
// also the bytes each rank sends. No I/O.
#pragma once

#include <cstdint>

namespace harmonics {

enum class Collective : std::uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, SendRecv };

// The collective's whole buffer S from NCCL's count × datatype size. NCCL
// counts AllGather by each rank's send buffer and ReduceScatter by each
// rank's receive buffer: S is n times that. For the others S is the count.
double collective_buffer_bytes(Collective c, double count_bytes, int n);

// Bytes per ring edge for a collective over a whole buffer of S bytes and n
// ranks: all-reduce 2(n−1)/n·S (reduce-scatter then all-gather); all-gather
// and reduce-scatter (n−1)/n·S; broadcast and reduce S (pipelined along the
// ring); send/recv S. With one rank there is no edge: 0 (send/recv still S).
double ring_edge_bytes(Collective c, double buffer_bytes, int n);

}  // namespace harmonics
