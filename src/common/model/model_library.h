// Profiles of well-known models from public facts: parameter count (hence
// gradient bytes) and a representative per-GPU compute time per iteration on
// a named GPU. Sources are listed per model in doc/models.md.
#pragma once

#include <string>
#include <vector>

namespace harmonics {

struct ModelProfile {
    std::string name;          // "resnet50", "bert-large", ...
    double params = 0;         // parameter count
    double grad_bytes = 0;     // all-reduced per iteration (fp32 or fp16 gradients)
    double compute_s = 0;      // forward+backward per iteration, per GPU
    int batch_per_gpu = 0;
    std::string gpu;           // the GPU the compute time refers to
    double overlap = 0;        // fraction of compute the all-reduce may overlap (bucketing)
};

const std::vector<ModelProfile>& model_library();
// nullptr when unknown.
const ModelProfile* find_model(const std::string& name);

}  // namespace harmonics
