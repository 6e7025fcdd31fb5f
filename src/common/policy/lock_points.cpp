#include "policy/lock_points.h"

namespace harmonics {

std::vector<int> lock_points(const std::vector<double>& delay_s, double lead_s) {
    std::vector<int> out;
    if (!(lead_s > 0)) return out;
    const int P = static_cast<int>(delay_s.size());
    for (int x = 0; x < P; ++x)
        if (delay_s[x] >= lead_s && delay_s[(x + 1) % P] < lead_s) out.push_back(x);
    return out;
}

}  // namespace harmonics
